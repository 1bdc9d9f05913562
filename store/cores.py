"""Whether a long write may start a helper process: only with a core to spare (PCP_*=1: always, =0: never).

A helper (the restore's, store/restore_file.py; the bulk write's analysis, store/analyst.py; a chat import's
planning, store/import_helper.py) pays only while a second core is free: on a busy machine it takes turns with
the writer for the same cores and adds its start and its copying (bench/README.md, issue 31). "Free" is a 1-minute load average under the cores less half a
core, the writer itself counting about one.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

try:
    import fcntl
except ImportError:  # (Windows)
    fcntl = None  # type: ignore[assignment]


def cores() -> int:
    """The cores this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def helper_wanted(env: str) -> bool:
    """Start a helper? `env` set to 1: yes, to 0: no; unset: when two or more cores and one is free. Never for a
    frozen build or without an interpreter to run (the helper is `python -c`)."""
    choice = os.environ.get(env, "")
    if choice == "0" or not sys.executable or getattr(sys, "frozen", False):
        return False
    if choice == "1":
        return True
    n = cores()
    try:
        return n >= 2 and os.getloadavg()[0] < n - 0.5
    except (AttributeError, OSError):  # no load average here (Windows): no helper unless asked for
        return False


def start_helper(module: str, function: str) -> subprocess.Popen[bytes]:
    """A helper process running `store.<module>.<function>()` of this very `store` package, fed through its stdin
    and answering on its stdout. A plain `python -c` child, not a multiprocessing worker: those import the caller's
    `__main__` again, and a script without a main guard would run its bulk write a second time inside the helper."""
    root = str(Path(__file__).resolve().parents[1])
    code = f"import sys; sys.path.insert(0, {root!r}); from store.{module} import {function}; {function}()"
    proc = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    for pipe in (proc.stdin, proc.stdout):
        widen(pipe)
    return proc


PIPE_BYTES = 1 << 20  # Linux's largest pipe an unprivileged process may ask for (/proc/sys/fs/pipe-max-size)


def widen(pipe: Any) -> None:
    """Let a pipe hold PIPE_BYTES (Linux), not 64 KiB: a helper's answer (a few hundred KB) is then written at once,
    instead of in pieces that each wait for the importer's reading thread to be given the interpreter lock (up to
    5 ms a time while its main thread runs Python). Elsewhere, or when refused, the pipe stays as it is."""
    setsize = getattr(fcntl, "F_SETPIPE_SZ", None) if fcntl is not None else None
    if pipe is None or setsize is None:
        return
    try:
        fcntl.fcntl(pipe.fileno(), setsize, PIPE_BYTES)
    except OSError:
        pass  # (over the user's pipe allowance: the pipe keeps its size)
