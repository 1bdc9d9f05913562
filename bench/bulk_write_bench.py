#!/usr/bin/env python3
"""The bulk write paths beside bare SQLite (issue 31): restore, bulk ingest and sync, with another writer.

    python bench/bulk_write_bench.py [--pages 100000] [--rounds 3] [--only restore,bulk,sync] [--dir DIR]

1. Builds a source store of N ~80-word pages (`write_pages_bulk`, 20 scopes; fixed seed) and exports it.
2. restore: `import_export` of that file into an empty store, against the bare insert of the same rows
   (every line parsed with json.loads; page and revision rows into two plain tables, the text into an
   FTS5 table, a commit every 1,000 lines; same SQLite, same pragmas).
3. bulk: `write_pages_bulk` of N generated pages, against the bare insert of the same texts (one table +
   FTS5, one transaction per 1,000, as bench/store_bench.py's bare side).
4. sync: `sync_with` (`pcp sync --with`) and a folder sync (`pcp sync DIR`) of the source into an empty
   store (pages/s; no bare side).
The rounds alternate pcp and bare, each into a fresh database, and the medians are reported. Then one more
pcp run while another process writes one page at a time (`write_page`, 10 ms apart, as
bench/bulk_delete_bench.py does) and times each write, and a thread samples the size of the target's WAL
every 20 ms (the rates are taken without that writer: it would take CPU from pcp's side only). The 1-minute
load average is printed beside every figure (ratios within one run are what count on a shared machine).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import random
import shutil
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Callable, Iterator

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

TARGET_WAIT_S = 1.0
WAL_LIMIT = 256 * 1024 * 1024


def load() -> str:
    return f"load {os.getloadavg()[0]:.2f}"


def texts(seed: int, count: int) -> Iterator[str]:
    rnd = random.Random(seed)
    vocab = [f"{a}{b}" for a in ("ka", "lo", "mi", "ne", "su", "ta", "vo", "ri") for b in range(400)]
    for _ in range(count):
        yield " ".join(rnd.choice(vocab) for _ in range(80))


def build(path: Path, pages: int) -> None:
    from store import Store

    gen = texts(7, pages)
    with Store.open(path) as st:
        per = pages // 20
        for s in range(20):
            n = per + (pages - per * 20 if s == 19 else 0)
            st.write_pages_bulk(({"content": next(gen)} for _ in range(n)), f"project:p{s:02d}")


# --- the other writer and the WAL ---

def writer(path: str, go: Any, stop: Any, out: Any) -> None:
    from store import Store

    waits: list[float] = []
    errors = 0
    with Store.open(path) as st:
        go.set()
        i = 0
        while not stop.is_set():
            started = time.perf_counter()
            try:
                st.write_page("bench:writer", content=f"written meanwhile, number {i}")
            except Exception:  # noqa: BLE001 - counted and reported
                errors += 1
            waits.append(time.perf_counter() - started)
            i += 1
            time.sleep(0.01)
    out.put((waits, errors))


class Watch:
    """Another process writing one page at a time, and the WAL's size, while `fn` runs."""

    def __init__(self, db: Path) -> None:
        self.db = db
        self.wal_max = 0
        self.waits: list[float] = []
        self.errors = 0

    def start_writer(self, *_: Any) -> None:
        """Start the other writer (at once, or from a progress callback once the work is under way: a
        restore into an empty store must find it empty)."""
        if self.proc is not None:
            return
        ctx = mp.get_context("spawn")
        self.go, self.stop, self.out = ctx.Event(), ctx.Event(), ctx.Queue()
        self.proc = ctx.Process(target=writer, args=(str(self.db), self.go, self.stop, self.out))
        self.proc.start()
        self.go.wait(60)

    def run(self, fn: Callable[[], Any], lazy: bool = False) -> float:
        from store import Store

        Store.open(self.db).close()  # the store exists before the writer opens it
        self.proc: Any = None
        if not lazy:
            self.start_writer()
        done = threading.Event()
        wal = Path(str(self.db) + "-wal")

        def sample() -> None:
            while not done.is_set():
                try:
                    self.wal_max = max(self.wal_max, wal.stat().st_size)
                except OSError:
                    pass
                time.sleep(0.02)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        started = time.perf_counter()
        try:
            fn()
        finally:
            secs = time.perf_counter() - started
            done.set()
            if self.proc is not None:
                self.stop.set()
                self.waits, self.errors = self.out.get(timeout=120)
                self.proc.join(60)
            sampler.join()
        return secs

    def report(self) -> str:
        longest = max(self.waits) if self.waits else 0.0
        ok = longest <= TARGET_WAIT_S and self.errors == 0 and self.wal_max < WAL_LIMIT
        return (f"writer {len(self.waits)} writes, longest {longest * 1000:.0f} ms, median "
                f"{statistics.median(self.waits) * 1000 if self.waits else 0:.0f} ms, {self.errors} errors; "
                f"WAL max {self.wal_max / 1e6:.0f} MB -> {'ok' if ok else 'NOT MET'}")


# --- bare sides ---

PRAGMAS = ("PRAGMA journal_mode=wal", "PRAGMA synchronous=normal", "PRAGMA cache_size=-32000",
           "PRAGMA temp_store=memory", "PRAGMA foreign_keys=1")


def bare_connect(path: Path) -> Any:
    import peewee

    conn = peewee.sqlite3.connect(str(path), isolation_level=None)  # type: ignore[attr-defined]
    for p in PRAGMAS:
        conn.execute(p)
    return conn


def bare_restore(export: Path, db: Path) -> None:
    """The same rows as plain inserts: pages, revisions, and the text in FTS5, a commit every 1,000 lines."""
    conn = bare_connect(db)
    conn.execute("CREATE TABLE page (id INTEGER PRIMARY KEY, page_id TEXT UNIQUE, namespace TEXT, created_at TEXT, "
                 "status TEXT, head_revision_id TEXT)")
    conn.execute("CREATE TABLE revision (id INTEGER PRIMARY KEY, revision_id TEXT UNIQUE, page_id TEXT, "
                 "created_at TEXT, content TEXT, facets TEXT, provenance TEXT)")
    conn.execute("CREATE VIRTUAL TABLE revision_fts USING fts5(content, content='', contentless_delete=1)")
    pages, revs, n = [], [], 0

    def flush() -> None:
        conn.execute("BEGIN IMMEDIATE")
        conn.executemany("INSERT INTO page (page_id, namespace, created_at, status, head_revision_id) VALUES (?,?,?,?,?)",
                         pages)
        for r in revs:
            cur = conn.execute("INSERT INTO revision (revision_id, page_id, created_at, content, facets, provenance) "
                               "VALUES (?,?,?,?,?,?)", r)
            conn.execute("INSERT INTO revision_fts (rowid, content) VALUES (?, ?)", (cur.lastrowid, r[3]))
        conn.execute("COMMIT")
        pages.clear()
        revs.clear()

    with open(export, "rb") as fh:
        for data in fh:
            obj = json.loads(data)
            kind = obj.get("kind")
            if kind == "page":
                pages.append((obj["page_id"], obj["namespace"], obj["created_at"], obj["status"], obj["head_revision_id"]))
            elif kind == "revision":
                payload = obj["payload"] or {}
                revs.append((obj["revision_id"], obj["page_id"], obj["created_at"], payload.get("content"),
                             json.dumps(obj["facets"]), json.dumps(obj["provenance"])))
            n += 1
            if n % 1000 == 0:
                flush()
    flush()
    conn.execute("PRAGMA wal_checkpoint(PASSIVE)")
    conn.close()


def bare_bulk(pages: int, db: Path) -> None:
    conn = bare_connect(db)
    conn.execute("CREATE TABLE revisions (id INTEGER PRIMARY KEY, page_id TEXT, namespace TEXT, created_at TEXT, "
                 "content TEXT)")
    conn.execute("CREATE VIRTUAL TABLE revisions_fts USING fts5(content, content='', contentless_delete=1)")
    pk = 0
    gen = texts(11, pages)
    while pk < pages:
        batch = [next(gen) for _ in range(min(1000, pages - pk))]
        conn.execute("BEGIN IMMEDIATE")
        rows = [(pk + i + 1, f"pg_{pk + i + 1:026d}", "project:p00", "2026-01-01T00:00:00.000Z", t)
                for i, t in enumerate(batch)]
        conn.executemany("INSERT INTO revisions VALUES (?,?,?,?,?)", rows)
        conn.executemany("INSERT INTO revisions_fts (rowid, content) VALUES (?,?)", [(r[0], r[4]) for r in rows])
        conn.execute("COMMIT")
        pk += len(batch)
    conn.execute("PRAGMA wal_checkpoint(PASSIVE)")
    conn.close()


# --- the runs ---

def rounds(name: str, args: argparse.Namespace, base: Path, pcp: Callable[[Path, Watch | None], None],
           bare: Callable[[Path], None] | None, lazy: bool = False,
           setup: Callable[[Path], None] | None = None) -> None:
    """Rounds of pcp and bare taking turns (no other writer: the rates), then one pcp run with the other
    writer and the WAL watched (the waits)."""
    pcp_s, bare_s = [], []
    for r in range(args.rounds):
        for who in (("pcp", "bare") if r % 2 == 0 else ("bare", "pcp")):
            if who == "bare" and bare is None:
                continue
            work = base / f"{name}-{who}-{r}"
            work.mkdir()
            if who == "pcp" and setup is not None:
                setup(work / "s.db")
            started = time.perf_counter()
            if who == "bare":
                assert bare is not None
                bare(work / "bare.db")
            else:
                pcp(work / "s.db", None)
            (bare_s if who == "bare" else pcp_s).append(time.perf_counter() - started)
            print(f"  {name} round {r + 1} {who:4} {(bare_s if who == 'bare' else pcp_s)[-1]:7.2f} s ({load()})", flush=True)
            shutil.rmtree(work, ignore_errors=True)
    p = statistics.median(pcp_s)
    line = f"{name}: pcp {p:.2f} s = {args.pages / p:,.0f} pages/s"
    if bare_s:
        b = statistics.median(bare_s)
        line += f"; bare {b:.2f} s = {args.pages / b:,.0f} pages/s; pcp / bare rate = {b / p:.0%}"
    print(f"{line} (medians of {args.rounds}; {load()})", flush=True)
    if args.writer:
        work = base / f"{name}-watched"
        work.mkdir()
        if setup is not None:
            setup(work / "s.db")
        watch = Watch(work / "s.db")
        secs = watch.run(lambda: pcp(work / "s.db", watch), lazy)
        print(f"{name} with another writer: {secs:.2f} s; {watch.report()} ({load()})", flush=True)
        shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pages", type=int, default=100_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--only", default="restore,bulk,sync")
    ap.add_argument("--dir", type=Path)
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--no-writer", dest="writer", action="store_false", help="leave out the run with another writer")
    args = ap.parse_args()
    only = set(args.only.split(","))
    if args.dir:
        args.dir.mkdir(parents=True, exist_ok=True)
    base = Path(tempfile.mkdtemp(prefix="pcp-bulk-write-", dir=args.dir))
    try:
        run(args, base, only)
    finally:
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)


def run(args: argparse.Namespace, base: Path, only: set[str]) -> None:
    from store import Store

    source = base / "source" / "s.db"
    source.parent.mkdir()
    print(f"bulk write benchmark, {args.pages:,} pages, {os.cpu_count()} CPUs, {time.strftime('%Y-%m-%d %H:%M')} "
          f"({load()})", flush=True)
    started = time.perf_counter()
    build(source, args.pages)
    print(f"  source built in {time.perf_counter() - started:.1f} s ({load()})", flush=True)
    export = base / "all.jsonl"
    if "restore" in only:
        with Store.open(source) as st:
            st.export(export)

        def restore(db: Path, watch: Watch | None) -> None:
            with Store.open(db) as st:
                st.import_export(export, progress=watch.start_writer if watch else None)

        rounds("restore", args, base, restore, lambda db: bare_restore(export, db), lazy=True)
    if "bulk" in only:
        def bulk(db: Path, watch: Watch | None) -> None:
            with Store.open(db) as st:
                st.write_pages_bulk(({"content": t} for t in texts(11, args.pages)), "project:p00")

        rounds("write_pages_bulk", args, base, bulk, lambda db: bare_bulk(args.pages, db))
    if "sync" in only:
        with Store.open(source) as st:
            owner = st.owner_id

        def same_owner(db: Path) -> None:
            """The target starts empty with the source's owner (the other writer's pages then do not make it
            a store of another owner)."""
            with Store.open(db) as st:
                st._db.execute_sql("UPDATE meta SET value = ? WHERE key = 'owner_id'", (owner,))

        def sync_with(db: Path, watch: Watch | None) -> None:
            with Store.open(db) as st:
                st.sync_with(source)

        rounds("sync --with", args, base, sync_with, None, setup=same_owner)
        folder = base / "folder"
        codes: list[str] = []
        with Store.open(source) as st:
            for _ in range(args.rounds + 1):
                codes.append(st.sync_pair(folder)["code"])
            st.sync_folder(folder)

        def join(db: Path) -> None:
            """A copy of the folder as the source left it (no earlier round's files in it), joined with a code."""
            shutil.copytree(folder, db.parent / "folder")
            with Store.open(db) as st:
                st.sync_join(db.parent / "folder", codes.pop())

        def sync_folder(db: Path, watch: Watch | None) -> None:
            with Store.open(db) as st:
                st.sync_folder(db.parent / "folder")

        rounds("sync folder", args, base, sync_folder, None, setup=join)


if __name__ == "__main__":
    main()
