#!/usr/bin/env python3
"""How fast each SQLite build runs the same SQL with no file and no cipher involved (issue 38).

    python bench/cipher_build.py [--rounds 20]

An encrypted store runs every statement on the SQLite inside the cipher package (`sqlcipher3-binary`), a plain
store on pysqlite3's. This times three pure-CPU statements (a recursive count, a sort, an FTS5 query over an
in-memory table) on each build available in this environment, in turns, and prints the median per build beside
pysqlite3's: what an encrypted store pays on every query before any page is decrypted. It also counts, in each
build's shared library, the instructions that spill a function's first argument to the stack (`mov %rdi,-N(%rbp)`),
a sign of code compiled without optimisation (needs `objdump`; skipped without it).
"""

from __future__ import annotations

import argparse
import importlib
import os
import shutil
import statistics
import subprocess
import time
from typing import Any

STATEMENTS = {
    "recursive count": "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 200000) SELECT sum(x) FROM c",
    "sort": "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 50000) "
            "SELECT count(*) FROM (SELECT (x * 7919) % 50021 AS k FROM c ORDER BY k)",
    "fts5 query": "SELECT count(*) FROM t WHERE t MATCH 'w7 OR w13 OR w101'",
}


def builds() -> dict[str, Any]:
    out: dict[str, Any] = {}
    for label, name in (("pysqlite3 (plain stores)", "pysqlite3.dbapi2"), ("sqlcipher3 (encrypted stores)", "sqlcipher3.dbapi2")):
        try:
            out[label] = importlib.import_module(name)
        except ImportError:
            pass
    return out


def prepare(conn: Any) -> None:
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(body)")
    conn.executemany("INSERT INTO t (body) VALUES (?)",
                     ((" ".join(f"w{(i * j) % 997}" for j in range(1, 30)),) for i in range(20000)))


def spills(module: Any) -> int | None:
    objdump = shutil.which("objdump")
    path = getattr(getattr(module, "_sqlite3", None), "__file__", None) or getattr(module, "__file__", None)
    if not objdump or not path:
        return None
    lib = path if path.endswith(".so") else None
    if lib is None:
        folder = os.path.dirname(path)
        libs = [f for f in os.listdir(folder) if f.endswith(".so")]
        lib = os.path.join(folder, libs[0]) if libs else None
    if lib is None:
        return None
    text = subprocess.run([objdump, "-d", "--no-show-raw-insn", lib], capture_output=True, text=True).stdout
    return sum(1 for line in text.splitlines() if "mov    %rdi,-0x" in line)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=20)
    args = ap.parse_args()
    found = builds()
    conns = {}
    for label, module in found.items():
        conn = module.connect(":memory:")
        prepare(conn)
        conns[label] = conn
        version = conn.execute("SELECT sqlite_version()").fetchone()[0]
        print(f"{label}: SQLite {version}, unoptimised-code marker count {spills(module)}")
    print(f"load {os.getloadavg()[0]:.2f}, {args.rounds} rounds, CPU time of this thread, median")
    base = next(iter(conns))
    for what, sql in STATEMENTS.items():
        times: dict[str, list[float]] = {label: [] for label in conns}
        for conn in conns.values():
            conn.execute(sql).fetchall()
        for i in range(args.rounds):
            order = list(conns) if i % 2 == 0 else list(reversed(conns))
            for label in order:
                t0 = time.thread_time()
                conns[label].execute(sql).fetchall()
                times[label].append(time.thread_time() - t0)
        ref = statistics.median(times[base])
        print(f"  {what:16} " + "  ".join(
            f"{label.split()[0]} {statistics.median(t) * 1000:7.2f} ms ({statistics.median(t) / ref:4.2f}x)"
            for label, t in times.items()))


if __name__ == "__main__":
    main()
