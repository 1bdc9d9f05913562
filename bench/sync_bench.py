#!/usr/bin/env python3
"""Sync throughput (issue 17): a full sync into an empty paired store, against `pcp import export`.

    python bench/sync_bench.py [--pages 100000] [--changes 100] [--dir DIR] [--skip-reference] [--keep]

1. Builds store A with N ~80-word pages (`write_pages_bulk`, 20 scopes).
2. Exports A and times `import_export` of that file into an empty store (the reference rate).
3. Pairs an empty store B with A through a folder; A writes its change file (timed on its own), then
   `B.sync_folder` reads and applies it (the rate compared: target >= 50 % of the import's).
4. Incremental: 100 changes on A (50 revisions, 50 new pages), A syncs, then B (now a large store) syncs;
   B's sync must take under 2 s.
Both sides of each comparison run in this process, in the same run, on the same machine.

--skip-reference leaves out step 2 (the export and the import into a third store, hours at 1,000,000
pages), for the incremental figure on a large store: it builds A, syncs B fully once (its rate is printed,
with nothing to compare it to), then times the incremental sync. The databases are removed at the end
unless --keep is given.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def build(db: Path, pages: int) -> list[str]:
    from store import Store

    rnd = random.Random(7)
    vocab = [f"{a}{b}" for a in ("ka", "lo", "mi", "ne", "su", "ta", "vo", "ri") for b in range(400)]
    with Store.open(db) as st:
        per_scope = pages // 20
        for s in range(20):
            items = ({"content": " ".join(rnd.choice(vocab) for _ in range(80))} for _ in range(per_scope))
            st.write_pages_bulk(items, f"project:p{s:02d}")
        return [r[0] for r in st._db.execute_sql("SELECT page_id FROM page ORDER BY id LIMIT 50").fetchall()]


def timed(fn, *args, **kw):
    started = time.perf_counter()
    result = fn(*args, **kw)
    return result, time.perf_counter() - started


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pages", type=int, default=100_000)
    ap.add_argument("--changes", type=int, default=100)
    ap.add_argument("--dir", type=Path)
    ap.add_argument("--skip-reference", action="store_true",
                    help="do not time export + import export (the reference rate); only the sync")
    ap.add_argument("--keep", action="store_true", help="keep the databases (removed by default)")
    ap.add_argument("--a-db", type=Path, help="use this store (built by `--build-only`) as A instead of building one; "
                    "it is changed by the run (paired, synced, 100 changes)")
    ap.add_argument("--build-only", type=Path, metavar="DB", help="only build A's --pages pages into DB, then stop")
    args = ap.parse_args()
    if args.build_only:
        args.build_only.parent.mkdir(parents=True, exist_ok=True)
        _, secs = timed(build, args.build_only, args.pages)
        print(f"built {args.pages:,} pages in {args.build_only} in {secs:.1f} s")
        return
    if args.dir:
        args.dir.mkdir(parents=True, exist_ok=True)
    base = Path(tempfile.mkdtemp(prefix="pcp-sync-bench-", dir=args.dir))
    try:
        run(args, base)
    finally:
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)


def run(args: argparse.Namespace, base: Path) -> None:
    from store import Store

    a_db, x_db, b_db, folder = base / "a" / "a.db", base / "x" / "x.db", base / "b" / "b.db", base / "folder"
    for p in (a_db, x_db, b_db):
        p.parent.mkdir()
    if args.a_db:
        a_db = args.a_db
        with Store.open(a_db) as a:
            args.pages = a._db.execute_sql("SELECT COUNT(*) FROM page").fetchone()[0]
        print(f"using {a_db} ({args.pages:,} pages) as A")
    else:
        print(f"building {args.pages:,} pages in {base}")
        _, secs = timed(build, a_db, args.pages)
        print(f"  built in {secs:.1f} s")
    print(f"1-minute load average: {os.getloadavg()[0]:.2f}")
    with Store.open(a_db) as a:
        sample = [r[0] for r in a._db.execute_sql("SELECT page_id FROM page ORDER BY id LIMIT ?",
                                                  (args.changes // 2,)).fetchall()]
        if not args.skip_reference:
            exported, secs = timed(a.export, base / "all.jsonl")
            print(f"export: {exported['lines']:,} lines in {secs:.1f} s")
        code = a.sync_pair(folder)["code"]
    import_rate = None
    if not args.skip_reference:
        with Store.open(x_db) as x:
            _, import_secs = timed(x.import_export, base / "all.jsonl")
        import_rate = args.pages / import_secs
        print(f"import export into an empty store: {import_secs:.1f} s ({import_rate:,.0f} pages/s)")
    with Store.open(b_db) as b:
        b.sync_join(folder, code)
    with Store.open(a_db) as a:
        wrote, write_secs = timed(a.sync_folder, folder)
    size = Path(wrote["wrote"]).stat().st_size
    print(f"A writes its change file: {write_secs:.1f} s, {size / 1e6:,.1f} MB sealed")
    with Store.open(b_db) as b:
        got, sync_secs = timed(b.sync_folder, folder)
    sync_rate = args.pages / sync_secs
    if import_rate is None:
        print(f"sync into the empty paired store: {sync_secs:.1f} s ({sync_rate:,.0f} pages/s) "
              "(no reference: --skip-reference)")
    else:
        share = sync_rate / import_rate
        print(f"sync into the empty paired store: {sync_secs:.1f} s ({sync_rate:,.0f} pages/s), "
              f"{share:.0%} of the import rate (target >= 50%) -> {'MET' if share >= 0.5 else 'NOT MET'}")
    assert got["read"][0]["added"]["page"] == args.pages, got["read"]
    # Incremental: a few changes on A, then B (a large store now) syncs them.
    with Store.open(a_db) as a:
        for pid in sample:
            head = a.read_pages([pid], projections=["manifest"])["results"][0]["current_revision_id"]
            a.revise_page(pid, head, content=f"a changed page {pid}")
        for i in range(args.changes - len(sample)):
            a.write_page("project:p00", content=f"a new page {i} after the first sync")
        _, a_secs = timed(a.sync_folder, folder)
    with Store.open(b_db) as b:
        got, inc_secs = timed(b.sync_folder, folder)
    added = got["read"][0]["added"]
    print(f"1-minute load average: {os.getloadavg()[0]:.2f}")
    print(f"incremental: {args.changes} changes on a {args.pages:,}-page store: A writes in {a_secs:.2f} s, "
          f"B takes them in {inc_secs:.2f} s ({added}) (target < 2 s) -> {'MET' if inc_secs < 2 else 'NOT MET'}")


if __name__ == "__main__":
    main()
