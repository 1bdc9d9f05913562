#!/usr/bin/env python3
"""Forgetting many pages at once (issue 14): erase 10,000 of N pages by filter while another process writes.

    python bench/bulk_delete_bench.py [--pages 1000000] [--erase 10000] [--batch-size 200] [--deletes 20]
                                      [--optimize] [--dir DIR] [--keep] [--build-only | --store PATH]

It writes N pages of English-like text (fixed seed, ~60 words each) with Store.write_pages_bulk:
`--erase` pages observed in 2024 and as many observed in 2026 in scope `project:old`, the rest
spread over 20 scopes `project:p00`.. . The selection is the filter
{"scopes": ["project:old"], "observed_before": "2025-01-01"}: exactly `--erase` pages.

Then a second process (the concurrent writer) opens the same store and writes one page at a time
(`write_page`, one transaction each, a pause of --writer-pause seconds between writes) for the whole
of the deletion, timing every write from call to return. Meanwhile this process runs
plan_bulk_delete (timed), then bulk_delete(filter, reason, digest, batch_size) with a progress
callback that times every batch. It reports:

  plan          seconds for the plan of every selected page (counts, first pages, digest)
  erase         seconds and pages/s for bulk_delete (recording the set, every batch, the WAL checkpoint)
  batches       time from one batch's progress step to the next (a batch, and the pause that lets writers in)
  writer        writes started during the plan and the deletion: median / p99 / longest (the wait it imposes)
  after         the longest write in the --after seconds after it
  target        no writer waits more than 1 s

and checks the end state (the selected pages are gone, every other page and every write is there).
Before the writer starts, it times --deletes single deletions (`delete_page`, pages drawn at random
from the 20 other scopes): p50 / p95 / max. With --optimize it times, at the very end, FTS5's
'optimize' (every segment merged into one): the least a merge-based erasure would have to redo when the
segments holding an erased page's terms are the large ones. Every figure is printed with the 1-minute
load average of the machine when it was taken (the machine is shared). --build-only builds and keeps the
store and stops; --store PATH then measures on it (built with the same --pages, --erase and --seed), so
that two stores (say main's code and a branch's) can be built side by side and measured one after the other.
The store lives in a temporary directory (under --dir if given), removed at the end unless --keep.
"""

from __future__ import annotations

import argparse
import itertools
import math
import multiprocessing as mp
import os
import platform
import random
import shutil
import statistics
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterator

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

SCOPES = 20
WORDS = 60
TARGET_WAIT_S = 1.0
SELECTION = {"scopes": ["project:old"], "observed_before": "2025-01-01T00:00:00Z"}


def _vocabulary(rng: random.Random, n: int = 4000) -> list[str]:
    letters = "etaoinshrdlucmfwypvbgkjqxz"
    out = set()
    while len(out) < n:
        size = rng.randint(3, 10)
        out.add("".join(rng.choice(letters[: rng.randint(8, 26)]) for _ in range(size)))
    return sorted(out)


def _pages(rng: random.Random, vocab: list[str], count: int, observed: str, tag: str) -> Iterator[dict[str, Any]]:
    cum = list(itertools.accumulate(1.0 / (i + 1) for i in range(len(vocab))))  # Zipf-like
    for i in range(count):
        words = rng.choices(vocab, cum_weights=cum, k=WORDS)
        yield {"content": f"{tag} {i}: " + " ".join(words), "observed_at": observed,
               "facets": {"title": f"{tag} {i}"}}


def build(path: Path, pages: int, erase: int, seed: int) -> float:
    from store import Store

    rng = random.Random(seed)
    vocab = _vocabulary(rng)
    rest = pages - 2 * erase
    if rest < 0:
        raise SystemExit("--pages must be at least twice --erase")
    started = time.perf_counter()
    with Store.open(path) as st:
        st.write_pages_bulk(_pages(rng, vocab, erase, "2024-05-01T00:00:00Z", "old"), "project:old")
        st.write_pages_bulk(_pages(rng, vocab, erase, "2026-05-01T00:00:00Z", "kept"), "project:old")
        per = rest // SCOPES
        for s in range(SCOPES):
            n = per + (rest - per * SCOPES if s == SCOPES - 1 else 0)
            st.write_pages_bulk(_pages(rng, vocab, n, "2025-06-01T00:00:00Z", f"p{s:02d}"), f"project:p{s:02d}")
            print(f"  built project:p{s:02d} ({n:,} pages)", file=sys.stderr, flush=True)
    return time.perf_counter() - started


def load() -> str:
    return f"(load {os.getloadavg()[0]:.2f})"


def single_deletes(st: Any, n: int, seed: int) -> list[float]:
    """Seconds of `n` delete_page calls on random pages of the project:pNN scopes."""
    rng = random.Random(seed)
    top = st._db.execute_sql("SELECT MAX(id) FROM page").fetchone()[0]
    out: list[float] = []
    while len(out) < n:
        row = st._db.execute_sql(
            "SELECT p.page_id FROM page p JOIN scope s ON s.id = p.scope_id WHERE p.id = ? AND s.namespace LIKE "
            "'project:p%'", (rng.randint(1, top),)).fetchone()
        if row is None:
            continue
        t0 = time.perf_counter()
        st.delete_page(row[0], "benchmark delete")
        out.append(time.perf_counter() - t0)
    return out


def nearest_rank(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


def writer(path: str, go: Any, stop: Any, pause: float, out: Any) -> None:
    """The concurrent writer: one page per transaction until told to stop; every write timed."""
    from store import Store

    waits: list[tuple[float, float]] = []  # (wall-clock start, seconds)
    errors: list[str] = []
    with Store.open(path) as st:
        go.wait()
        i = 0
        while not stop.is_set():
            wall, started = time.time(), time.perf_counter()
            try:
                st.write_page("project:writer", content=f"written during the deletion, number {i}")
            except Exception as exc:  # noqa: BLE001 - reported, never hidden
                errors.append(f"{type(exc).__name__}: {exc}")
            waits.append((wall, time.perf_counter() - started))
            i += 1
            time.sleep(pause)
    out.put((waits, errors[:5], len(errors)))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pages", type=int, default=1_000_000)
    ap.add_argument("--erase", type=int, default=10_000)
    ap.add_argument("--batch-size", type=int, default=200)
    ap.add_argument("--writer-pause", type=float, default=0.01, help="seconds between the writer's writes")
    ap.add_argument("--after", type=float, default=3.0, help="seconds the writer goes on after the deletion")
    ap.add_argument("--deletes", type=int, default=20, help="single delete_page calls timed before the bulk one")
    ap.add_argument("--optimize", action="store_true", help="time FTS5 'optimize' at the end")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--dir", help="where the temporary store goes")
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--build-only", action="store_true", help="build the store, keep it and stop")
    ap.add_argument("--store", help="measure on this store (from --build-only; it is used up)")
    args = ap.parse_args()

    from store import Store

    tmp = Path(args.store).parent if args.store else Path(tempfile.mkdtemp(prefix="pcp-bulk-delete-", dir=args.dir))
    path = Path(args.store) if args.store else tmp / "s.db"
    keep = args.keep or args.build_only or bool(args.store)
    try:
        if args.store:
            built, built_load = float("nan"), "(built before)"
        else:
            print(f"building {args.pages:,} pages in {path} ...", file=sys.stderr, flush=True)
            built = build(path, args.pages, args.erase, args.seed)
            built_load = load()
            print(f"built in {built:.1f} s {built_load}: {path}", flush=True)
            if args.build_only:
                return 0
        with Store.open(path) as st:
            singles = single_deletes(st, args.deletes, args.seed) if args.deletes else []
        singles_load = load()
        ctx = mp.get_context("spawn")
        go, stop, out = ctx.Event(), ctx.Event(), ctx.Queue()
        proc = ctx.Process(target=writer, args=(str(path), go, stop, args.writer_pause, out))
        proc.start()
        with Store.open(path) as st:
            time.sleep(1.0)  # the writer has opened the store
            go.set()
            time.sleep(0.5)  # and writes before the deletion starts
            began = time.time()
            t0 = time.perf_counter()
            plan = st.plan_bulk_delete(SELECTION)
            plan_s = time.perf_counter() - t0
            assert plan["pages"] == args.erase, plan["pages"]
            marks: list[float] = []
            t0 = time.perf_counter()
            receipt = st.bulk_delete(SELECTION, "benchmark", plan["digest"], batch_size=args.batch_size,
                                     progress=lambda done, total, what="": marks.append(time.perf_counter()))
            erase_s = time.perf_counter() - t0
            erase_load = load()
            ended = time.time()
            time.sleep(args.after)  # the writer writes after the deletion too (FTS5 merges what it held back)
            stop.set()
            timed, errors, n_errors = out.get(timeout=120)
            proc.join(timeout=60)
            batches = [b - a for a, b in zip(marks, marks[1:], strict=False)]
            left = st._db.execute_sql("SELECT COUNT(*) FROM page").fetchone()[0]
            old_left = st.plan_bulk_delete({"scopes": ["project:old"]})["pages"]
            optimize_s = None
            if args.optimize:
                t0 = time.perf_counter()
                with st._db.atomic("IMMEDIATE"):
                    st._db.execute_sql("INSERT INTO revision_terms(revision_terms) VALUES('optimize')")
                optimize_s = time.perf_counter() - t0
                optimize_load = load()
        waits = [w for t, w in timed if began <= t <= ended]
        after = [w for t, w in timed if t > ended]
        expected = args.pages - args.erase - len(singles) + len(timed) - n_errors
        ok_state = receipt["completed"] == f"{args.erase}/{args.erase}" and left == expected and old_left == args.erase
        ordered = sorted(waits)
        p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] if ordered else 0.0
        longest = max(waits) if waits else 0.0
        size = sum(f.stat().st_size for f in tmp.iterdir() if f.is_file())
        print()
        print(f"bulk delete benchmark: Python {platform.python_version()} on {platform.machine()}, "
              f"{os.cpu_count()} CPUs, {datetime.now(timezone.utc):%Y-%m-%d}")
        from store import index

        tombstoned = "contentless_delete" in index.FTS_DDL
        print(f"index     {'contentless_delete=1 (erased rows tombstoned)' if tombstoned else 'erased rows deleted with their values'}"
              f", store code in {ROOT}")
        print(f"store     {args.pages:,} pages built in {built:.1f} s {built_load}; {size / 1e6:,.0f} MB on disk after the deletion")
        if singles:
            print(f"delete    {len(singles)} delete_page: p50 {nearest_rank(singles, 0.5) * 1000:.1f} ms, "
                  f"p95 {nearest_rank(singles, 0.95) * 1000:.1f} ms, max {max(singles) * 1000:.1f} ms {singles_load}")
        print(f"plan      {plan['pages']:,} pages, {plan['revisions']:,} revisions, {plan['bytes'] / 1e6:.1f} MB "
              f"in {plan_s:.2f} s")
        print(f"erase     {args.erase:,} pages in {erase_s:.2f} s = {args.erase / erase_s:,.0f} pages/s "
              f"(batches of {args.batch_size}, {len(batches)} batches, wal_erasure {receipt.get('wal_erasure')}) {erase_load}")
        print(f"batches   median {statistics.median(batches) * 1000:.0f} ms, longest {max(batches) * 1000:.0f} ms "
              "(from one progress step to the next: a batch, and the pause after it when there is one)")
        print(f"writer    {len(waits):,} writes during plan + deletion ({n_errors} errors"
              f"{': ' + errors[0] if errors else ''}); median {statistics.median(waits) * 1000:.1f} ms, "
              f"p99 {p99 * 1000:.0f} ms, longest {longest * 1000:.0f} ms {erase_load}")
        print(f"after     {len(after):,} writes in the {args.after:.0f} s after it: longest "
              f"{max(after, default=0.0) * 1000:.0f} ms")
        print(f"target    no writer waits more than {TARGET_WAIT_S:.0f} s: "
              f"{'met' if longest <= TARGET_WAIT_S and not n_errors else 'MISSED'}")
        if optimize_s is not None:
            print(f"optimize  FTS5 'optimize' of the whole index: {optimize_s:.1f} s {optimize_load}")
        print(f"end state {'as expected' if ok_state else 'WRONG'}: {left:,} pages left "
              f"(expected {expected:,}), project:old keeps {old_left:,}")
        return 0 if ok_state else 1
    finally:
        if keep:
            print(f"kept {tmp}", file=sys.stderr)
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
