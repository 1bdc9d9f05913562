#!/usr/bin/env python3
"""The bulk write paths beside bare SQLite (issue 31): restore, bulk ingest and sync, with another writer.

    python bench/bulk_write_bench.py [--pages 100000] [--rounds 3] [--only restore,bulk,sync] [--dir DIR]
                                     [--quiet-below LOAD]  (each timed run waits for a 1-minute load under LOAD)

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

from quiet import settle  # noqa: E402  (bench/, the script's own folder)

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


def watched_import(importer: Callable[[Any, Path], Any], source: Path, db: Path, quiet_below: float | None) -> str:
    """`importer(store, source)` of this checkout once more into `db` while another process writes one page every
    10 ms (the import benches' --writer): the import's seconds and the writer's waits and the WAL's size, as text."""
    from store import Store

    def run() -> None:
        with Store.open(db) as st:
            importer(st, source)

    started_at = settle(quiet_below)
    watch = Watch(db)
    secs = watch.run(run)
    return f"with another writer: import {secs:.2f} s; {watch.report()} ({started_at}, end {load()})"


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


# --- pcp runs, each in a child process importing `store` from one checkout ---

def child(args: argparse.Namespace) -> None:
    """`--child TASK`: one pcp run with the `store` of `--root` (its own checkout first on sys.path); prints the
    seconds of the timed part as JSON on the last line. "started" is printed once the work is under way (the
    parent then starts the other writer: a restore into an empty store must find it empty)."""
    sys.path.insert(0, str(args.root))
    from store import Store

    db, told = args.db, [False]

    def progress(*_: Any) -> None:
        if not told[0]:
            told[0] = True
            print("started", flush=True)

    task = args.child
    if task == "sync-with" or task == "sync-folder":
        with Store.open(args.source) as st:
            owner = st.owner_id
        with Store.open(db) as st:  # an empty store of the source's owner (the other writer's pages then do not
            st._db.execute_sql("UPDATE meta SET value = ? WHERE key = 'owner_id'", (owner,))  # make it another's)
        if task == "sync-folder":
            with Store.open(db) as st:
                st.sync_join(args.folder, args.code)
    started = time.perf_counter()
    cpu = time.process_time() + children_cpu()
    with Store.open(db) as st:
        if task == "restore":
            st.import_export(args.source, progress=progress)
        elif task == "bulk":
            progress()
            st.write_pages_bulk(({"content": t} for t in texts(11, args.pages)), "project:p00")
        elif task == "sync-with":
            progress()
            st.sync_with(args.source)
        elif task == "sync-folder":
            progress()
            st.sync_folder(args.folder)
        else:
            raise SystemExit(f"unknown task {task}")
    print(json.dumps({"seconds": time.perf_counter() - started, "cpu": time.process_time() + children_cpu() - cpu}),
          flush=True)


def children_cpu() -> float:
    """CPU seconds of the child processes that have exited (a bulk write's analysis helper, store/analyst.py)."""
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_child(root: Path, task: str, db: Path, args: argparse.Namespace, watch: Watch | None = None,
              source: Path | None = None, folder: Path | None = None, code: str | None = None) -> tuple[float, float]:
    """(seconds, CPU seconds) of one pcp run in a child process with `root`'s store."""
    import subprocess

    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", task, "--root", str(root), "--db", str(db),
           "--pages", str(args.pages)]
    if source is not None:
        cmd += ["--source", str(source)]
    if folder is not None:
        cmd += ["--folder", str(folder), "--code", str(code)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    last = ""
    for line in proc.stdout:
        if line.strip() == "started" and watch is not None:
            watch.start_writer()
        last = line
    if proc.wait() != 0:
        raise SystemExit(f"{task} with {root} failed (exit {proc.returncode})")
    out = json.loads(last)
    return out["seconds"], out["cpu"]


def readable(source: Path, root: Path) -> Path:
    """The source store as the checkout at `root` can open it: schema 9 added only the two rank indexes
    (store/db.py RANK_INDEXES), so for a checkout of schema 8 (main before them) a copy without them, at schema 8,
    is the store that checkout would have written."""
    import re

    found = re.search(r"^SCHEMA_VERSION = (\d+)", (root / "store" / "db.py").read_text(), re.M)
    if found is None or int(found.group(1)) != 8:
        return source
    older = source.with_name(source.stem + "-schema8.db")
    if not older.exists():
        shutil.copy(source, older)
        con = bare_connect(older)
        con.execute("DROP INDEX IF EXISTS revision_rank")
        con.execute("DROP INDEX IF EXISTS page_rank")
        con.execute("UPDATE meta SET value = '8' WHERE key = 'schema_version'")
        con.commit()
        con.close()
    return older


# --- the runs ---

def rounds(name: str, args: argparse.Namespace, base: Path, pcp: Callable[[Path, Path, Watch | None], tuple[float, float]],
           bare: Callable[[Path], None] | None, compare: bool) -> None:
    """Rounds of this checkout's pcp, the compared checkout's (`--compare`) and bare taking turns (no other writer:
    the rates), then one run of each pcp with another writer and the WAL watched (the waits)."""
    roots = [("pcp", ROOT)] + ([("main", args.compare)] if compare and args.compare else [])
    sides = [who for who, _ in roots] + (["bare"] if bare is not None else [])
    secs: dict[str, list[float]] = {who: [] for who in sides}
    cpus: dict[str, list[float]] = {who: [] for who in sides}
    for r in range(args.rounds):
        order = sides[r % len(sides):] + sides[:r % len(sides)]  # each side goes first in turn
        for who in order:
            work = base / f"{name}-{who}-{r}"
            shutil.rmtree(work, ignore_errors=True)  # (left by a stopped run in a --reuse directory)
            work.mkdir()
            started_at = settle(args.quiet_below)
            if who == "bare":
                assert bare is not None
                started, cpu = time.perf_counter(), time.process_time()
                bare(work / "bare.db")
                took, used = time.perf_counter() - started, time.process_time() - cpu
            else:
                took, used = pcp(dict(roots)[who], work / "s.db", None)
            secs[who].append(took)
            cpus[who].append(used)
            print(f"  {name} round {r + 1} {who:4} {took:7.2f} s, CPU {used:6.2f} s ({started_at}, end {load()})", flush=True)
            shutil.rmtree(work, ignore_errors=True)
    parts = []
    for who in sides:
        t, c = statistics.median(secs[who]), statistics.median(cpus[who])
        parts.append(f"{who} {t:.2f} s = {args.pages / t:,.0f} pages/s (CPU {c:.2f} s)")
    line = f"{name}: " + "; ".join(parts)
    p = statistics.median(secs["pcp"])
    for who in sides[1:]:
        o = statistics.median(secs[who])
        line += f"; pcp / {who} rate = {o / p:.0%} (CPU {statistics.median(cpus[who]) / statistics.median(cpus['pcp']):.0%})"
    print(f"{line} (medians of {args.rounds}; {load()})", flush=True)
    if args.writer:  # this checkout only: the other writer runs this checkout's store (it would upgrade an older one's)
        for who, root in roots[:1]:
            work = base / f"{name}-{who}-watched"
            shutil.rmtree(work, ignore_errors=True)  # (left by a stopped run in a --reuse directory)
            work.mkdir()
            watch = Watch(work / "s.db")
            took = watch.run(lambda root=root, work=work, watch=watch: pcp(root, work / "s.db", watch), lazy=True)
            print(f"{name} {who} with another writer: {took:.2f} s; {watch.report()} ({load()})", flush=True)
            shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pages", type=int, default=100_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--quiet-below", type=float, default=None, metavar="LOAD",
                    help="before each timed run, wait until the 1-minute load is under LOAD (e.g. 1)")
    ap.add_argument("--only", default="restore,bulk,sync")
    ap.add_argument("--compare", type=Path, help="another checkout (e.g. main: git archive main | tar -x -C DIR) run "
                    "beside this one, round by round")
    ap.add_argument("--compare-only", default="bulk,sync", help="the parts the other checkout runs too (its restore "
                    "at 100,000 pages takes many minutes)")
    ap.add_argument("--dir", type=Path, help="parent of the temporary directory")
    ap.add_argument("--keep", action="store_true", help="keep the temporary directory (source store, export, folder)")
    ap.add_argument("--reuse", type=Path, help="a directory a --keep run left: its source store and export are "
                    "used again (built there if missing; kept), so the parts can be run one by one at 1M pages")
    ap.add_argument("--no-writer", dest="writer", action="store_false", help="leave out the runs with another writer")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--root", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--db", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--source", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--folder", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--code", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args)
        return
    only = set(args.only.split(","))
    if args.dir:
        args.dir.mkdir(parents=True, exist_ok=True)
    if args.reuse:
        args.reuse.mkdir(parents=True, exist_ok=True)
        run(args, args.reuse, only)
        return
    base = Path(tempfile.mkdtemp(prefix="pcp-bulk-write-", dir=args.dir))
    try:
        run(args, base, only)
    finally:
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)


def helpers(env: str) -> str:
    """How a helper process is chosen in this run (store/cores.py)."""
    return {"1": "on", "0": "off"}.get(os.environ.get(env, ""), "while a core is free")


def run(args: argparse.Namespace, base: Path, only: set[str]) -> None:
    import subprocess

    from store import Store

    source = base / "source" / "s.db"
    source.parent.mkdir(exist_ok=True)
    compared = set(args.compare_only.split(","))
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    print(f"bulk write benchmark, {args.pages:,} pages, {os.cpu_count()} CPUs, {time.strftime('%Y-%m-%d %H:%M')}, "
          f"this checkout {head or ROOT}, compared: {args.compare or 'none'}, analysis helper (PCP_ANALYSIS_HELPER) "
          f"{helpers('PCP_ANALYSIS_HELPER')}, restore helpers (PCP_RESTORE_HELPERS) {helpers('PCP_RESTORE_HELPERS')} ({load()})",
          flush=True)
    started = time.perf_counter()
    if source.exists():
        print(f"  source store {source} used again", flush=True)
    else:
        build(source, args.pages)
        print(f"  source built in {time.perf_counter() - started:.1f} s ({load()})", flush=True)
    export = base / "all.jsonl"
    if "restore" in only and not export.exists():
        with Store.open(source) as st:
            st.export(export)
        rounds("restore", args, base, lambda root, db, watch: run_child(root, "restore", db, args, watch, source=export),
               lambda db: bare_restore(export, db), "restore" in compared)
    if "bulk" in only:
        rounds("write_pages_bulk", args, base, lambda root, db, watch: run_child(root, "bulk", db, args, watch),
               lambda db: bare_bulk(args.pages, db), "bulk" in compared)
    if "sync" in only:
        rounds("sync --with", args, base,
               lambda root, db, watch: run_child(root, "sync-with", db, args, watch, source=readable(source, root)),
               None, "sync" in compared)
        folder = base / "folder"
        shutil.rmtree(folder, ignore_errors=True)
        paired = base / "folder-source" / "s.db"  # a copy of the source pairs with the folder (a --reuse source
        shutil.rmtree(paired.parent, ignore_errors=True)  # stays as it was built)
        paired.parent.mkdir()
        shutil.copy(source, paired)
        codes: list[str] = []
        with Store.open(paired) as st:
            for _ in range(4 * args.rounds + 4):  # a code for every store that joins
                codes.append(st.sync_pair(folder)["code"])
            st.sync_folder(folder)

        def sync_folder(root: Path, db: Path, watch: Watch | None) -> tuple[float, float]:
            """A copy of the folder as the source left it (no earlier round's files in it), joined with a code."""
            mine = db.parent / "folder"
            shutil.copytree(folder, mine)
            return run_child(root, "sync-folder", db, args, watch, source=readable(paired, root), folder=mine,
                             code=codes.pop())

        rounds("sync folder", args, base, sync_folder, None, "sync" in compared)


if __name__ == "__main__":
    main()
