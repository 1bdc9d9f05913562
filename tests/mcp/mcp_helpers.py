"""What the MCP tests share: `pcp mcp --http` started as a child, its printed address, and its stop."""

from __future__ import annotations

import re
import signal
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


@contextmanager
def http_server(command: list[str]) -> Iterator[str]:
    """Run `command` (a `pcp mcp ... --http --port 0`), yield the URL it printed; stopped with Ctrl-C after."""
    proc = subprocess.Popen(command, cwd=str(REPO), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stderr.readline()  # type: ignore[union-attr]
        match = re.search(r"http://127\.0\.0\.1:\d+/mcp", line)
        assert match, f"no address printed: {line!r} {proc.poll()}"
        yield match.group(0)
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            raise AssertionError("pcp mcp --http did not stop within 30 s of a Ctrl-C") from None
