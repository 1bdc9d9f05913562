#!/usr/bin/env python3
"""`import_chatgpt` against bare SQLite inserts of the same message texts, in one run.

    python bench/import_bench.py [--conversations 10000] [--messages-per 20] [--seed 11] [--rounds 1]
                                 [--compare DIR] [--dir DIR] [--keep] [--profile [N]] [--writer]
                                 [--quiet-below LOAD]  (each timed run waits for a 1-minute load under LOAD)

It generates a ChatGPT-shaped export (fixed seed): a list of conversations, each with a
`mapping` tree (a message-less root, then user/assistant turns; one conversation in ten
has a regenerated answer, i.e. a branch), every message 20-120 words of English-like
text. Then it times, each into a fresh database:

  import  store.adapters.import_chatgpt(Store.open(db), export.json): JSON parsing,
          one transaction per conversation, a page per conversation and per message,
          `contains` and `responds_to` relations, source refs, the full-text index
  bare    the same message texts into one table (id, conversation_id, message_id,
          created_at, content) + an external-content FTS5 table, executemany, one
          transaction per conversation (the import's durability unit), same SQLite
          library (peewee.sqlite3, i.e. pysqlite3) and speed pragmas (WAL,
          synchronous=NORMAL, 32 MB cache); JSON parsing included there too

and prints messages/s for both, the ratio, and whether the import reaches the target
(2,000 messages/s). The import runs in a child process that imports the `store` of this
checkout, or with --compare DIR also of another checkout (e.g. main:
`git -C /work/main archive main | tar -x -C DIR`); the sides take turns over --rounds rounds
(each going first in turn), and the medians of wall and CPU seconds are compared; the 1-minute
load average is printed beside every round. --profile runs the import again under cProfile (on
a fresh store, in this process) and prints the N most expensive functions by own time and by
cumulative time.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import json
import os
import platform
import pstats
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from quiet import settle  # noqa: E402  (bench/, the script's own folder)

TARGET = 2000.0  # messages per second

_WORDS = (
    "the of and to a in is that for it as was with be by on not this are or from at which but have they one you "
    "all we can has there been if more when will would who so no other its time only new some could these two may "
    "first then do any like now over such our even most made after also did many before must through back years "
    "where much your way well down should because each just those people how too little state good very make world "
    "still own see work long get here between both life being under never day same another know while last might "
    "great old year off come since against go came right used take meeting release budget customer review migration "
    "backlog latency deadline contract onboarding cluster dashboard roadmap incident rollback schedule proposal design "
    "sprint ticket feature query index schema deploy staging production server client request response cache memory "
    "thread process module package config build test coverage branch merge commit patch issue error warning metric "
    "alert report summary draft decision owner team partner vendor invoice payment account profile session token "
    "permission scope archive export import storage backup restore network throughput benchmark quarter estimate risk "
    "python function class method variable loop string list dictionary tuple exception async await generator "
    "recipe garden travel museum history poem story chapter character plot scene sourdough starter flour oven"
).split()


def make_text(rng: random.Random, lo: int = 20, hi: int = 120) -> str:
    n = rng.randint(lo, hi)
    words = rng.choices(_WORDS, k=n)
    out, i = [], 0
    while i < n:
        step = rng.randint(6, 16)
        s = " ".join(words[i:i + step])
        out.append(s[0].upper() + s[1:] + ".")
        i += step
    return " ".join(out)


def make_export(conversations: int, messages_per: int, seed: int) -> list[dict]:
    """A ChatGPT `conversations.json`: exactly conversations x messages_per messages."""
    rng = random.Random(seed)
    base = 1_700_000_000.0
    out = []
    for c in range(conversations):
        conv_id = f"bench-{seed}-{c:06d}"
        t0 = base + c * 3600.0
        mapping: dict = {"root": {"id": "root", "message": None, "parent": None, "children": []}}
        parent = "root"
        branch = c % 10 == 0 and messages_per >= 3
        linear = messages_per - 1 if branch else messages_per
        last_user = None
        for m in range(linear):
            node = f"{conv_id}-m{m:03d}"
            role = "user" if m % 2 == 0 else "assistant"
            if role == "user":
                last_user = node
            mapping[node] = {
                "id": node, "parent": parent, "children": [],
                "message": {
                    "id": node, "author": {"role": role, "name": None, "metadata": {}},
                    "create_time": t0 + m * 30.0, "update_time": None,
                    "content": {"content_type": "text", "parts": [make_text(rng)]},
                    "status": "finished_successfully", "end_turn": role == "assistant", "weight": 1.0,
                    "metadata": {"model_slug": "gpt-4o"} if role == "assistant" else {}, "recipient": "all",
                },
            }
            mapping[parent]["children"].append(node)
            parent = node
        current = parent
        if branch and last_user is not None:  # a regenerated answer to the last user turn
            node = f"{conv_id}-regen"
            mapping[node] = {
                "id": node, "parent": last_user, "children": [],
                "message": {
                    "id": node, "author": {"role": "assistant", "name": None, "metadata": {}},
                    "create_time": t0 + linear * 30.0, "update_time": None,
                    "content": {"content_type": "text", "parts": [make_text(rng)]},
                    "status": "finished_successfully", "end_turn": True, "weight": 1.0,
                    "metadata": {"model_slug": "gpt-4o"}, "recipient": "all",
                },
            }
            mapping[last_user]["children"].append(node)
        out.append({
            "id": conv_id, "conversation_id": conv_id, "title": make_text(rng, 3, 7).rstrip("."),
            "create_time": t0, "update_time": t0 + messages_per * 30.0, "current_node": current,
            "default_model_slug": "gpt-4o", "mapping": mapping,
        })
    return out


# --------------------------------------------------------------------------- the two runs

CHILD = """
import gc, importlib, json, resource, sys, time
sys.path.insert(0, sys.argv[1])
from store import Store
importer = getattr(importlib.import_module(sys.argv[4]), sys.argv[5])
helpers = []
try:  # a checkout with an import helper (store/import_helper.py): note the helpers started
    from store import import_helper
    start = import_helper.start
    def noted(*args):
        helper = start(*args)
        if helper is not None:
            helpers.append(helper)
        return helper
    import_helper.start = noted
except ImportError:
    pass
st = Store.open(sys.argv[3])
gc.collect()
def children():
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime
started, cpu, helper_cpu = time.perf_counter(), time.process_time(), children()
report = importer(st, sys.argv[2])
elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
helper_cpu = children() - helper_cpu  # the helper's CPU (it has exited and been waited for)
st.close()
print(json.dumps({"wall": elapsed, "cpu": cpu + helper_cpu, "helper_cpu": helper_cpu,
                  "helped": [(h.helped, h.planned_here) for h in helpers], "report": report.to_dict()}))
"""


def run_importer(checkout: Path, source: Path, db: Path, module: str, name: str) -> tuple[float, float, dict]:
    """The importer `module.name` of `checkout`'s store on `source`, in a child process: (wall s, CPU s, report);
    the CPU counts an import helper's (store/import_helper.py), and the report says under "helpers" how many
    conversations it planned and how many the importer planned itself. Shared with bench/agent_import_bench.py."""
    proc = subprocess.run([sys.executable, "-c", CHILD, str(checkout), str(source), str(db), module, name],
                          capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"the import of {checkout} failed:\n{proc.stderr}")
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    out["report"]["helpers"] = {"helped_here": out.get("helped", []), "helper_cpu": out.get("helper_cpu", 0.0)}
    return out["wall"], out["cpu"], out["report"]


def run_import(checkout: Path, export: Path, db: Path) -> tuple[float, float, dict]:
    """`import_chatgpt` of `checkout`'s store, in a child process: (wall s, CPU s, report)."""
    return run_importer(checkout, export, db, "store.adapters", "import_chatgpt")


def load() -> str:
    return f"load {os.getloadavg()[0]:.2f}"


BARE_DDL = (
    "CREATE TABLE messages (id INTEGER PRIMARY KEY, conversation_id TEXT NOT NULL, message_id TEXT NOT NULL UNIQUE, "
    "created_at REAL, content TEXT NOT NULL)",
    "CREATE VIRTUAL TABLE messages_fts USING fts5(content, content='messages', content_rowid='id')",
)


def run_bare(export: Path, db: Path) -> tuple[float, float, int]:
    import peewee

    conn = peewee.sqlite3.connect(str(db), isolation_level=None)
    for pragma in ("journal_mode=wal", "synchronous=normal", "cache_size=-32000"):
        conn.execute(f"PRAGMA {pragma}")
    for ddl in BARE_DDL:
        conn.execute(ddl)
    gc.collect()
    started, cpu = time.perf_counter(), time.process_time()
    data = json.loads(export.read_text(encoding="utf-8"))
    pk = 0
    count = 0
    for conv in data:
        rows, fts = [], []
        for node in conv["mapping"].values():
            msg = node.get("message")
            if not msg:
                continue
            text = "\n\n".join(p for p in msg["content"]["parts"] if isinstance(p, str))
            pk += 1
            rows.append((pk, conv["id"], msg["id"], msg.get("create_time"), text))
            fts.append((pk, text))
        conn.execute("BEGIN IMMEDIATE")
        conn.executemany("INSERT INTO messages VALUES (?,?,?,?,?)", rows)
        conn.executemany("INSERT INTO messages_fts(rowid, content) VALUES (?,?)", fts)
        conn.execute("COMMIT")
        count += len(rows)
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    conn.close()
    return elapsed, cpu, count


def profile_import(export: Path, db: Path, top: int) -> None:
    from store import Store
    from store.adapters import import_chatgpt

    st = Store.open(db)
    prof = cProfile.Profile()
    prof.enable()
    import_chatgpt(st, export)
    prof.disable()
    st.close()
    for order in ("tottime", "cumulative"):
        print(f"\n--- cProfile of import_chatgpt, top {top} by {order} ---")
        stats = pstats.Stats(prof, stream=sys.stdout)
        stats.strip_dirs().sort_stats(order).print_stats(top)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--conversations", type=int, default=10_000)
    ap.add_argument("--messages-per", type=int, default=20)
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--dir", type=Path, default=None, help="where the temporary files go")
    ap.add_argument("--keep", action="store_true", help="keep the export and the databases")
    ap.add_argument("--rounds", type=int, default=1, help="rounds of every side, taking turns; medians reported")
    ap.add_argument("--compare", type=Path, default=None, metavar="DIR",
                    help="another checkout (e.g. main's) whose import is timed beside this one's")
    ap.add_argument("--profile", type=int, nargs="?", const=25, default=0, metavar="N",
                    help="also profile the import (cProfile) and print the top N functions")
    ap.add_argument("--quiet-below", type=float, default=None, metavar="LOAD",
                    help="before each timed run, wait until the 1-minute load is under LOAD (e.g. 1)")
    ap.add_argument("--writer", action="store_true",
                    help="then one more import while another process writes one page at a time: its longest wait")
    args = ap.parse_args(argv)

    work = Path(tempfile.mkdtemp(prefix="pcp-import-bench-", dir=args.dir))
    try:
        t = time.perf_counter()
        data = make_export(args.conversations, args.messages_per, args.seed)
        export = work / "conversations.json"
        export.write_text(json.dumps(data), encoding="utf-8")
        n_msgs = sum(1 for c in data for n in c["mapping"].values() if n.get("message"))
        words = sum(len(p.split()) for c in data for n in c["mapping"].values() if n.get("message")
                    for p in n["message"]["content"]["parts"])
        del data
        gen = time.perf_counter() - t
        print(f"pcp import bench: Python {platform.python_version()}, {platform.machine()}, {os.cpu_count()} CPUs, "
              f"SQLite {__import__('peewee').sqlite3.sqlite_version}")
        print(f"export: {args.conversations:,} conversations, {n_msgs:,} messages, {words / n_msgs:.0f} words/message, "
              f"{export.stat().st_size / 1e6:.1f} MB (generated in {gen:.1f} s, seed {args.seed})")

        sides: dict[str, Path | None] = {"bare": None, "import": ROOT}
        if args.compare:
            sides["compared"] = args.compare.resolve()
        walls: dict[str, list[float]] = {name: [] for name in sides}
        cpus: dict[str, list[float]] = {name: [] for name in sides}
        reports: dict[str, dict] = {}
        bare_n = 0
        names = list(sides)
        for r in range(args.rounds):  # each side goes first in turn, so that all see the same load
            for name in names[r % len(names):] + names[:r % len(names)]:
                db = work / f"{name}-{r}.db"
                started_at = settle(args.quiet_below)
                if name == "bare":
                    wall, cpu, bare_n = run_bare(export, db)
                else:
                    checkout = sides[name]
                    assert checkout is not None
                    wall, cpu, reports[name] = run_import(checkout, export, db)
                walls[name].append(wall)
                cpus[name].append(cpu)
                size = sum(p.stat().st_size for p in work.glob(db.name + "*"))
                helped = reports[name]["helpers"] if name != "bare" else None
                said = (f"; helper: {helped['helped_here']} (conversations planned there, here), CPU "
                        f"{helped['helper_cpu']:.2f} s of it" if helped and helped["helped_here"] else "")
                print(f"  round {r + 1} {name:8} {wall:7.2f} s, CPU {cpu:6.2f} s, {size / 1e6:5.0f} MB ({started_at}, end {load()}){said}",
                      flush=True)
                for f in work.glob(db.name + "*"):
                    f.unlink()
        for name, report in reports.items():
            assert report["messages"] == n_msgs == bare_n, (name, report["messages"], n_msgs, bare_n)
        med = {name: statistics.median(walls[name]) for name in sides}
        cpu_med = {name: statistics.median(cpus[name]) for name in sides}
        report = reports["import"]
        print(f"medians of {args.rounds} round(s) ({load()}):")
        print(f"  import   {med['import']:8.2f} s  {n_msgs / med['import']:10,.0f} messages/s  (CPU {cpu_med['import']:.2f} s; "
              f"{report['created']:,} pages, {report['relations']:,} relations)")
        if args.compare:
            print(f"  compared {med['compared']:8.2f} s  {n_msgs / med['compared']:10,.0f} messages/s  "
                  f"(CPU {cpu_med['compared']:.2f} s; {args.compare})")
        print(f"  bare     {med['bare']:8.2f} s  {n_msgs / med['bare']:10,.0f} messages/s  (CPU {cpu_med['bare']:.2f} s; "
              "1 table + FTS5)")
        print(f"  ratio    import takes x{med['import'] / med['bare']:.1f} the bare time ({med['bare'] / med['import']:.1%} of "
              f"its rate; CPU {cpu_med['bare'] / cpu_med['import']:.1%})")
        if args.compare:
            print(f"  compared {med['bare'] / med['compared']:.1%} of bare (CPU {cpu_med['bare'] / cpu_med['compared']:.1%}); "
                  f"import / compared: x{med['compared'] / med['import']:.2f} the rate (CPU x{cpu_med['compared'] / cpu_med['import']:.2f})")
        imp_rate = n_msgs / med["import"]
        verdict = "PASS" if imp_rate >= TARGET else "FAIL"
        print(f"{verdict}: import {imp_rate:,.0f} messages/s (target >= {TARGET:,.0f})")
        if args.writer:
            from bulk_write_bench import watched_import

            from store.adapters import import_chatgpt

            print(watched_import(import_chatgpt, export, work / "watched.db", args.quiet_below))
        if args.profile:
            profile_import(export, work / "profiled.db", args.profile)
        return 0
    finally:
        if args.keep:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
