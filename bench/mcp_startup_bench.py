#!/usr/bin/env python3
"""How fast `pcp mcp` answers `initialize`, against a bare MCP SDK server with one tool, in the same run.

    python bench/mcp_startup_bench.py [--runs 9] [--pages 200]

Each run starts a fresh process and times, with time.perf_counter, from spawning it to reading the
answer to `initialize` (a raw JSON-RPC line on stdin, the answer's line on stdout): once for

  bare   python -c "<an MCPServer with one tool>" (the SDK's own stdio runner)
  pcp    python -m pcp_tui.cli --db STORE mcp --client-id bench --grant '*=search,read,list_scopes'

alternating the two so that both see the same load. The store (--pages pages, built once in a
temporary directory) exists, so `pcp mcp` serves; it opens it only when a call needs it. Medians and
the ratio pcp / bare are printed; the target is a ratio of at most 1.15. Exits 1 when it is over.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

BARE = """
from mcp.server.mcpserver import MCPServer
server = MCPServer("bare")
@server.tool()
def echo(text: str) -> str:
    return text
server.run()
"""
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}}
TARGET = 1.15


def time_initialize(command: list[str]) -> float:
    start = time.perf_counter()
    proc = subprocess.Popen(command, cwd=str(REPO), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)
    try:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write((json.dumps(INIT) + "\n").encode())
        proc.stdin.flush()
        answer = json.loads(proc.stdout.readline())
        elapsed = time.perf_counter() - start
        if answer.get("id") != 1 or "result" not in answer:
            raise SystemExit(f"no initialize result from {command[:3]}: {answer}")
        return elapsed
    finally:
        proc.stdin.close()  # type: ignore[union-attr]
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--pages", type=int, default=200)
    args = parser.parse_args(argv)
    import store

    with tempfile.TemporaryDirectory(prefix="pcp-mcp-bench-") as tmp:
        db = Path(tmp) / "bench.db"
        with store.Store.open(db) as st:
            st.write_pages_bulk(({"content": f"bench page {i} about topic {i % 17}"} for i in range(args.pages)),
                                "project:bench")
        bare = [sys.executable, "-c", BARE]
        pcp = [sys.executable, "-m", "pcp_tui.cli", "--db", str(db), "mcp", "--client-id", "bench",
               "--grant", "*=search,read,list_scopes"]
        time_initialize(bare), time_initialize(pcp)  # warm the file cache
        times: dict[str, list[float]] = {"bare": [], "pcp": []}
        for _ in range(args.runs):
            times["bare"].append(time_initialize(bare))
            times["pcp"].append(time_initialize(pcp))
    medians = {k: statistics.median(v) for k, v in times.items()}
    ratio = medians["pcp"] / medians["bare"]
    print(f"initialize answered, median of {args.runs} runs (min..max):")
    for k, v in times.items():
        print(f"  {k:5} {medians[k] * 1000:7.0f} ms  ({min(v) * 1000:.0f}..{max(v) * 1000:.0f})")
    print(f"  ratio pcp/bare {ratio:.2f}x (target <= {TARGET:.2f}x): {'met' if ratio <= TARGET else 'OVER'}")
    return 0 if ratio <= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
