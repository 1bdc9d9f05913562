"""Re-time the natural-language search rows of store_bench.py on the databases a `--keep` run left.

    python bench/store_bench.py --pages 1000000 --keep --dir /tmp/b      # once (about 12-20 min)
    python bench/store_requery.py /tmp/b/store_bench_XXXX [--pages 1000000] [--nl-queries 100]

Building a million-page pair takes far longer than querying it, so this replays the corpus
generator (same seed, nothing written) to recover the document frequencies the questions are drawn
from, keeps them beside the databases for the next run, then runs the same questions as the benchmark in alternating order: `auto` for the owner, a
model session granted one scope and one granted `project:*`, beside bare bm25-OR on the bare table,
and `text` beside bare AND. Both databases are read into the OS page cache first (`--cold` does not):
on a pair left idle the OS reclaims their pages, and the slowest questions then time disk reads. `--pages` and `--seed` must be the ones the kept run used. The store
opens read-write (a search writes its audit event), so the kept pair stays usable for later runs.
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import store_bench as sb  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dir", help="the directory a store_bench.py --keep run left (store.db and bare.db)")
    parser.add_argument("--pages", type=int, default=1_000_000, help="pages of the kept run (default 1,000,000)")
    parser.add_argument("--scopes", type=int, default=20, help="scopes of the kept run (default 20)")
    parser.add_argument("--seed", type=int, default=7, help="seed of the kept run (default 7)")
    parser.add_argument("--nl-queries", type=int, default=100, help="timed questions (default 100)")
    parser.add_argument("--cold", action="store_true",
                        help="do not read the two databases into the OS page cache first (the default reads them)")
    parser.add_argument("--semantic", action="store_true",
                        help="time the store rows with the semantic channel on (pcp[semantic]; turned off again after)")
    args = parser.parse_args(argv)
    from store import Store

    work = Path(args.dir)
    store_path, bare_path = work / "store.db", work / "bare.db"
    for p in (store_path, bare_path):
        if not p.is_file():
            parser.error(f"{p} does not exist: give the directory a store_bench.py --keep run printed")
    sb.log(f"store requery: {work}, {args.pages:,} pages, seed {args.seed}; store code {sb.store_fingerprint()}")
    t0 = time.perf_counter()
    saved = work / "requery_questions.json"
    key = {"pages": args.pages, "seed": args.seed, "count": args.nl_queries + sb.NL_WARMUP}
    cached = json.loads(saved.read_text()) if saved.is_file() else {}
    known = cached.get("key", {})
    if known.get("pages") == key["pages"] and known.get("seed") == key["seed"] and known.get("count", 0) >= key["count"]:
        nl_qs = cached["questions"][:key["count"]]  # the generator draws them in order: a prefix is the same questions
    else:
        corpus = sb.Corpus(args.seed)
        df: Counter = Counter()
        for _ in corpus.batches(args.pages, df):
            pass
        nl_qs, _tiers = sb.nl_questions(corpus, df, args.pages, key["count"], args.seed + 11)
        del df
        saved.write_text(json.dumps({"key": key, "questions": nl_qs}))
    sb.log(f"  {len(nl_qs)} questions recovered in {time.perf_counter() - t0:.0f} s (kept in {saved.name}); "
           f"e.g. {nl_qs[0]!r}")

    scopes = [f"project:p{i:02d}" for i in range(args.scopes)]
    n_batches = -(-args.pages // sb.BATCH)
    runs = [(s * n_batches // args.scopes, (s + 1) * n_batches // args.scopes) for s in range(args.scopes)]
    used = [scopes[s] for s, (a, b) in enumerate(runs) if b > a]
    one = used[len(used) // 2]
    if not args.cold:
        # A kept pair left idle gets its pages reclaimed by the OS (this machine runs proactive reclaim,
        # kdamond), and then the slowest questions time disk reads, not search. Both files are read once
        # first, so both sides start warm; --cold times them as they are.
        t1, size = time.perf_counter(), 0
        for p in sorted(work.glob("*.db*")):
            with p.open("rb") as f:
                while chunk := f.read(1 << 22):
                    size += len(chunk)
        sb.log(f"  read {size / 1e9:.2f} GB into the page cache in {time.perf_counter() - t1:.0f} s (--cold skips this)")
    st = Store.open(store_path)
    if args.semantic:
        st.set_semantic(True)
        sb.log("  semantic channel on: auto re-orders its first 50 candidates (each process embeds each page once)")
    bare = sb.bare_connect(bare_path)
    sessions = sb.nl_sessions(st, one)
    rows = sb.NL_ROWS
    times: dict[str, list[float]] = {r: [] for r in rows}
    gc.collect()
    for i, q in enumerate(nl_qs):
        for name in (rows if i % 2 == 0 else tuple(reversed(rows))):
            t = time.perf_counter()
            sb.nl_query(name, q, sessions, bare, one)
            if i >= sb.NL_WARMUP:
                times[name].append(time.perf_counter() - t)
    if args.semantic:
        st.set_semantic(False)
    st.close()
    bare.close()
    ms = 1000.0
    sb.log(f"\n  {'':<22} {'store p50':>10} {'store p95':>10} {'bare p50':>10} {'bare p95':>10}  p95 ratio  (one scope: {one})")
    for label, s_row, b_row in (("auto owner / bare OR", "auto owner", "bare or"),
                                ("auto 1 scope / bare OR", "auto one", "bare or one"),
                                ("auto project:* / bare OR", "auto star", "bare or"),
                                ("text / bare AND", "text owner", "bare and")):
        s, b = times[s_row], times[b_row]
        sb.log(f"  {label:<22} {sb.pct(s, .5) * ms:>10.2f} {sb.pct(s, .95) * ms:>10.2f} "
               f"{sb.pct(b, .5) * ms:>10.2f} {sb.pct(b, .95) * ms:>10.2f}  {sb.pct(s, .95) / sb.pct(b, .95):>8.3f}x")
    sb.log(f"  {len(times['auto owner'])} timed questions each (+{sb.NL_WARMUP} warm-up); median of all store rows "
           f"{statistics.median(times['auto owner'] + times['auto one'] + times['auto star']) * ms:.1f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
