#!/usr/bin/env python3
"""`import_claude_code` against bare SQLite inserts of the same message texts, in one run (issue 15).

    python bench/agent_import_bench.py [--sessions 200] [--lines 500] [--seed 15] [--rounds 5] [--compare DIR]
                                       [--dir DIR] [--keep] [--quiet-below LOAD] [--writer]

It generates a Claude Code projects folder (fixed seed): `--sessions` session files of
`--lines` records each, shaped like the real ones (tests/data/agents/claude-code): a user
prompt, then an assistant message written as 2-3 records sharing `message.id` (thinking,
text, a tool_use), a tool_result record, and so on; a file-history-snapshot now and then.
Then it times, each into a fresh database:

  import  store.adapters.import_claude_code(Store.open(db), folder): reading and parsing the
          lines, merging split messages, one transaction per session, a page per session and
          per prompt and assistant message, `contains` and `responds_to`, the full-text index
  bare    the same lines parsed with json.loads, the text of each user/assistant record into one
          table + an external-content FTS5 table, executemany, one transaction per session,
          same SQLite library and speed pragmas (WAL, synchronous=NORMAL, 32 MB cache)

and prints lines/s for both and the ratio; the target is import >= 25 % of bare (issue 31: 40 %).
The import runs in a child process that imports the `store` of this checkout (with --compare DIR,
also of another checkout, e.g. main's, timed beside it). The sides run --rounds times, taking
turns at going first, each into a fresh database; the medians are compared (each round's ratio
and the CPU-time ratio are printed beside them, and the 1-minute load average: the machine is noisy).
--writer then imports once more while another process writes one page every 10 ms (bench/bulk_write_bench.py's
Watch, as bench/bulk_delete_bench.py does): the longest wait of its writes and the WAL's largest size.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from quiet import settle  # noqa: E402  (bench/, the script's own folder)
sys.path.insert(0, str(Path(__file__).resolve().parent))

from import_bench import run_importer  # noqa: E402  (the child process both benches run the importer in)

TARGET = 0.40  # issue 31 (issue 15's was 25 %)
_WORDS = ("the of and to a in is that for it as was with be by on not this are or from at which but have they one you "
          "all we can has there been if more when will would who so no other its time only new some could these two may "
          "file test function error build module import return value class change line branch commit").split()


def _text(rng: random.Random, lo: int, hi: int) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(rng.randint(lo, hi)))


def generate(folder: Path, sessions: int, lines: int, seed: int) -> int:
    rng = random.Random(seed)
    project = folder / "-home-user-work-project"
    project.mkdir(parents=True)
    total = 0
    for s in range(sessions):
        sid = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        base = {"sessionId": sid, "cwd": "/home/user/work/project", "gitBranch": "main", "version": "2.1.12",
                "userType": "external", "isSidechain": False}
        out: list[str] = []
        parent = None
        t = 1_760_000_000 + s * 3600
        n = 0
        while len(out) < lines:
            n += 1
            t += rng.randint(1, 30)
            stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + f".{n % 1000:03d}Z"
            kind = len(out) % 6
            u = str(uuid.UUID(int=rng.getrandbits(128), version=4))
            if kind == 0:
                rec = {**base, "type": "user", "uuid": u, "parentUuid": parent, "timestamp": stamp,
                       "message": {"role": "user", "content": _text(rng, 8, 60)}}
            elif kind in (1, 2, 3):
                mid = f"msg_{s:04d}_{len(out) // 6:04d}"
                block = ({"type": "thinking", "thinking": _text(rng, 10, 40), "signature": "x"} if kind == 1 else
                         {"type": "text", "text": _text(rng, 20, 120)} if kind == 2 else
                         {"type": "tool_use", "id": f"toolu_{s}_{n}", "name": "Bash",
                          "input": {"command": "ls -la\ngit status", "description": _text(rng, 3, 8)}})
                rec = {**base, "type": "assistant", "uuid": u, "parentUuid": parent, "timestamp": stamp,
                       "requestId": f"req_{s}_{n}", "message": {
                           "id": mid, "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
                           "content": [block], "usage": {"input_tokens": n, "output_tokens": 10 * n}}}
            elif kind == 4:
                rec = {**base, "type": "user", "uuid": u, "parentUuid": parent, "timestamp": stamp,
                       "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"toolu_{s}_{n - 1}",
                                                                "content": _text(rng, 20, 200)}]}}
            else:
                rec = {"type": "file-history-snapshot", "messageId": u, "snapshot": {"trackedFileBackups": {}},
                       "isSnapshotUpdate": False}
            if "uuid" in rec:
                parent = u
            out.append(json.dumps(rec))
        (project / f"{sid}.jsonl").write_text("\n".join(out) + "\n")
        total += len(out)
    return total


def run_import(checkout: Path, folder: Path, db: Path) -> tuple[float, float, dict[str, object]]:
    """`import_claude_code` of `checkout`'s store, in a child process: (wall s, CPU s, report)."""
    return run_importer(checkout, folder, db, "store.adapters.claude_code", "import_claude_code")


def load() -> str:
    return f"load {os.getloadavg()[0]:.2f}"


def run_bare(folder: Path, db: Path) -> tuple[float, float, int]:
    import peewee

    conn = peewee.sqlite3.connect(str(db), isolation_level=None)
    for pragma in ("journal_mode=wal", "synchronous=normal", "cache_size=-32000"):
        conn.execute(f"PRAGMA {pragma}")
    conn.execute("CREATE TABLE messages (id INTEGER PRIMARY KEY, session_id TEXT NOT NULL, uuid TEXT NOT NULL UNIQUE, "
                 "created_at TEXT, content TEXT NOT NULL)")
    conn.execute("CREATE VIRTUAL TABLE messages_fts USING fts5(content, content='messages', content_rowid='id')")
    gc.collect()
    started, cpu = time.perf_counter(), time.process_time()
    pk = count = 0
    for path in sorted(folder.rglob("*.jsonl")):
        rows, fts = [], []
        for line in path.read_bytes().split(b"\n"):
            if not line.strip():
                continue
            rec = json.loads(line)
            if rec.get("type") not in ("user", "assistant"):
                continue
            content = rec["message"]["content"]
            text = content if isinstance(content, str) else "\n\n".join(
                b.get("text") or b.get("thinking") or "" for b in content if isinstance(b, dict))
            pk += 1
            rows.append((pk, rec["sessionId"], rec["uuid"], rec["timestamp"], text))
            fts.append((pk, text))
        conn.execute("BEGIN IMMEDIATE")
        conn.executemany("INSERT INTO messages VALUES (?,?,?,?,?)", rows)
        conn.executemany("INSERT INTO messages_fts(rowid, content) VALUES (?,?)", fts)
        conn.execute("COMMIT")
        count += len(rows)
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    conn.close()
    return elapsed, cpu, count


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sessions", type=int, default=200)
    ap.add_argument("--lines", type=int, default=500)
    ap.add_argument("--seed", type=int, default=15)
    ap.add_argument("--dir", type=Path)
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--rounds", type=int, default=5, help="alternating rounds of both; medians reported (default 5)")
    ap.add_argument("--quiet-below", type=float, default=None, metavar="LOAD",
                    help="before each timed run, wait until the 1-minute load is under LOAD (e.g. 1)")
    ap.add_argument("--compare", type=Path, default=None, metavar="DIR",
                    help="another checkout (e.g. main's) whose import is timed beside this one's")
    ap.add_argument("--writer", action="store_true",
                    help="then one more import while another process writes one page at a time: its longest wait")
    args = ap.parse_args(argv)
    work = args.dir or Path(tempfile.mkdtemp(prefix="pcp-agent-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        lines = generate(work / "projects", args.sessions, args.lines, args.seed)
        sides: dict[str, Path | None] = {"bare": None, "import": ROOT}
        if args.compare:
            sides["compared"] = args.compare.resolve()
        walls: dict[str, list[float]] = {name: [] for name in sides}
        cpus: dict[str, list[float]] = {name: [] for name in sides}
        reports: dict[str, dict[str, object]] = {}
        bare_rows = 0
        names = list(sides)
        for r in range(args.rounds):  # taking turns at going first, so that all see the same load
            for which in names[r % len(names):] + names[:r % len(names)]:
                db = work / f"{which}-{r}.db"
                started_at = settle(args.quiet_below)
                if which == "bare":
                    wall, cpu, bare_rows = run_bare(work / "projects", db)
                else:
                    checkout = sides[which]
                    assert checkout is not None
                    wall, cpu, reports[which] = run_import(checkout, work / "projects", db)
                walls[which].append(wall)
                cpus[which].append(cpu)
                print(f"  round {r + 1} {which:8} {wall:7.2f} s, CPU {cpu:6.2f} s ({started_at}, end {load()})", flush=True)
                for f in db.parent.glob(db.name + "*"):
                    f.unlink()
        med = {name: statistics.median(walls[name]) for name in sides}
        cpu_med = {name: statistics.median(cpus[name]) for name in sides}
        report = reports["import"]
        bare_s, imp_s = med["bare"], med["import"]
        ratio = bare_s / imp_s
        per_round = ", ".join(f"{b / i:.0%}" for b, i in zip(walls["bare"], walls["import"], strict=True))
        print(f"{args.sessions} sessions x {args.lines} lines = {lines:,} lines ({bare_rows:,} user/assistant records); "
              f"{args.rounds} round(s), medians ({load()})")
        print(f"  bare    {bare_s:8.2f} s  {lines / bare_s:10,.0f} lines/s   (CPU {cpu_med['bare']:.2f} s)")
        print(f"  import  {imp_s:8.2f} s  {lines / imp_s:10,.0f} lines/s   (CPU {cpu_med['import']:.2f} s; "
              f"{report['messages']:,} message pages, {report['created']:,} pages created)")
        if args.compare:
            print(f"  compared {med['compared']:7.2f} s  {lines / med['compared']:10,.0f} lines/s   "
                  f"(CPU {cpu_med['compared']:.2f} s; {args.compare}): {bare_s / med['compared']:.0%} of bare "
                  f"(CPU {cpu_med['bare'] / cpu_med['compared']:.0%})")
        print(f"  import / bare = {ratio:.0%} (rounds: {per_round}; CPU time "
              f"{cpu_med['bare'] / cpu_med['import']:.0%}) "
              f"(target >= {TARGET:.0%}): {'met' if ratio >= TARGET else 'NOT met'}")
        if args.writer:
            from bulk_write_bench import watched_import

            from store.adapters.claude_code import import_claude_code

            print(watched_import(import_claude_code, work / "projects", work / "watched.db", args.quiet_below))
        return 0
    finally:
        if not args.keep and not args.dir:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
