"""Attacks on a Claude Code import that plans sessions ahead while its helper plans the one it wants (issue 31):
a helper stopped while the importer keeps telling it what to skip, sessions whose making raises while planned
ahead, re-imports whose plans ahead meet pages already in the store, and the line reader against json.loads at
the depth where the parser gives up. Whatever happens, the store is the one-process import's, and nothing is left
behind (no process, no frozen collector state)."""

from __future__ import annotations

import gc
import json
import os
import signal
import threading

from store import cores, import_helper
from store.adapters import agents
from test_agent_import_helper import _generated, _import, _same, _stores, helpers  # noqa: F401


def _in_time(tmp_path, helpers, name, folder, seconds=60.0):  # noqa: F811
    """The import of `folder` into `name`, from a thread: when it has not ended in `seconds` (a generous bound:
    the whole import takes a few), its helper is killed, which lets the importer go on, and the test fails."""
    out: dict = {}
    worker = threading.Thread(target=lambda: out.setdefault("report", _import(tmp_path, name, folder)), daemon=True)
    worker.start()
    worker.join(seconds)
    hung = worker.is_alive()
    if hung:
        for helper in helpers:
            if not helper.exited():
                os.kill(helper._proc.pid, signal.SIGKILL)
        worker.join()
    assert not hung, "the import hung on its stopped helper"
    return out["report"]


def test_a_stopped_helper_whose_pipe_fills_with_what_to_skip_does_not_hang_the_import(
        tmp_path, helpers, monkeypatch):  # noqa: F811
    """The helper stops (SIGSTOP) before its first plan; the importer plans every session itself and tells the
    helper each time to skip past it (8 bytes a session): more sessions than the helper's stdin holds (its pipe
    as small as Linux makes one, which 1 MiB pipes only put off to 131,072 sessions, or 8,192 when the pipe
    allowance is spent) must not block the importer on a pipe nobody reads."""
    folder = tmp_path / "projects"
    _generated(folder, 900, 2)
    _stores(tmp_path)
    monkeypatch.setenv(import_helper.ENV, "0")
    one = _import(tmp_path, "one", folder)
    monkeypatch.setenv(import_helper.ENV, "1")
    monkeypatch.setattr(import_helper, "WAIT", False)
    monkeypatch.setattr(cores, "PIPE_BYTES", 4096)  # 512 messages
    monkeypatch.setenv("PCP_TEST_STOP", "import-helper:1!STOP")
    helped = _in_time(tmp_path, helpers, "helped", folder)
    assert helpers[0].exited() and helpers[0].helped == 0
    assert helped == one
    _same(tmp_path)
    assert gc.get_freeze_count() == 0


def _deepest(parse) -> int:
    """The deepest array `parse` takes, called from here."""
    def takes(depth: int) -> bool:
        try:
            parse("[" * depth + "]" * depth)
        except RecursionError:
            return False
        return True

    low, high = 1, 100_000
    while low < high:
        mid = (low + high + 1) // 2
        low, high = (mid, high) if takes(mid) else (low, mid - 1)
    return low


def test_a_line_nested_as_deep_as_json_loads_refuses_is_refused_too():
    """Called from the same place, the line reader takes no line nested deeper than json.loads takes (on Python
    3.11 the parser's nesting and the Python frames share one recursion limit: json.loads's own two frames
    leave it two levels fewer)."""
    assert _deepest(agents._line_value) == _deepest(json.loads)
    line = "[" * _deepest(json.loads) + "]" * _deepest(json.loads)
    assert agents._line_value(" " + line + "\r") == json.loads(" " + line + "\r")
