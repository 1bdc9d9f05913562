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
import subprocess
import sys
import textwrap
import threading

import pytest

from store import Store, cores, import_helper, importing
from store.adapters import agent_plans, agents, claude_code
from test_agent_import_ahead import _once_planning
from test_agent_import_helper_attacks import A, _late_helper, _resumed
from test_agent_import_helper import (
    _assistant, _generated, _import, _lines, _same, _stores, _user, half_then_whole_in_one_process, one_process_first,
    projects, reimports,
)


def _in_time(tmp_path, helpers, name, folder, seconds=120.0):
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
        tmp_path, helpers, monkeypatch):
    """The helper stops (SIGSTOP) before its first plan; the importer plans every session itself and tells the
    helper each time to skip past it (8 bytes a session): more sessions than the helper's stdin holds (its pipe
    as small as Linux makes one, which 1 MiB pipes only put off to 131,072 sessions, or 8,192 when the pipe
    allowance is spent) must not block the importer on a pipe nobody reads."""
    _generated(tmp_path / "projects", 900, 2)
    folder, one = one_process_first(tmp_path, monkeypatch, folder=tmp_path / "projects")
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


def _export(tmp_path, name):
    with Store.open(tmp_path / f"{name}.db") as st:
        st.export(tmp_path / f"{name}.jsonl")


def _ahead(monkeypatch, hit=None):
    """The helper stops (SIGSTOP) before its second plan and the importer first asks once it plans: the importer
    meets it planning the session it wants, and plans sessions ahead. `hit(shared, index, planned)` is told of
    every session it plans ahead (the plans it holds by then in `shared.ahead`)."""
    monkeypatch.setattr(import_helper, "WAIT", False)
    monkeypatch.setenv("PCP_TEST_STOP", "import-helper:2!STOP")
    _once_planning(monkeypatch)
    plan = agent_plans.SharedPlans._plan_ahead

    def planning(self, index, reserve):
        planned = plan(self, index, reserve)
        if hit is not None:
            hit(self, index, planned)
        return planned

    monkeypatch.setattr(agent_plans.SharedPlans, "_plan_ahead", planning)


def test_a_session_whose_making_raises_while_planned_ahead_fails_the_import_where_one_process_fails_it(
        tmp_path, helpers, monkeypatch):
    """The fifth session raises while it is made (here: the helper, stopped, makes none of it). Planned ahead, its
    failure is not the import's yet: the sessions before it are written first, in order, and then it fails in its
    turn, as in one process."""
    folder = tmp_path / "projects"
    _generated(folder, 14, 4)
    _stores(tmp_path)
    doomed = "00000004-0000-4000-8000-000000000000"
    make = claude_code._Sessions._make
    tries: list[int] = []

    def raising(self, group):
        if group[1] == doomed:
            tries.append(1)
            raise RuntimeError("a session that cannot be made")
        return make(self, group)

    monkeypatch.setattr(claude_code._Sessions, "_make", raising)
    monkeypatch.setattr(importing, "BATCH_SECONDS", 0.0)  # every session its own group: those before it stay
    monkeypatch.setenv(import_helper.ENV, "0")
    with pytest.raises(RuntimeError):
        _import(tmp_path, "one", folder)
    monkeypatch.setenv(import_helper.ENV, "1")
    failed: list[int] = []
    _ahead(monkeypatch, lambda shared, index, planned: failed.append(index) if shared.failed and not failed else None)
    tries.clear()
    with pytest.raises(RuntimeError):
        _import(tmp_path, "helped", folder)
    assert failed == [4] and len(tries) == 2  # (tried ahead, then again in its turn)
    assert helpers[0].exited() and gc.get_freeze_count() == 0
    for name in ("one", "helped"):
        _export(tmp_path, name)
    written = (tmp_path / "one.jsonl").read_text()
    assert "prompt 0 of session 3" in written and "of session 4" not in written  # (the four before it)
    _same(tmp_path)


def test_a_helper_killed_while_the_importer_holds_plans_ahead_loses_none_of_them(tmp_path, helpers, monkeypatch):
    folder, one = one_process_first(tmp_path, monkeypatch, wait=True)
    held: list[int] = []

    def kill(shared, index, planned):
        if planned and not held:
            held.extend(shared.ahead)
            os.kill(shared.helper._proc.pid, signal.SIGKILL)

    _ahead(monkeypatch, kill)
    helped = _import(tmp_path, "helped", folder)
    assert held and helpers[0].exited() and helpers[0].planned_ahead >= 1
    assert helped == one
    _same(tmp_path)


def test_reimports_whose_plans_ahead_meet_pages_in_the_store_write_what_one_process_writes(
        tmp_path, helpers, monkeypatch):
    """A first import of every file's first half, then the whole files twice, each with plans made ahead: a plan
    ahead that meets pages already in the store is made again here, in order (through the copy made from the
    start, the importer having made later sessions already)."""
    folder, half, one = half_then_whole_in_one_process(tmp_path, monkeypatch)
    again: list[int] = []
    plan_again = agents._plan_again

    def noted(*args):
        again.append(1)
        return plan_again(*args)

    monkeypatch.setattr(agents, "_plan_again", noted)
    _ahead(monkeypatch)
    helped = reimports(tmp_path, "helped", folder, half)
    assert all(h.planned_ahead >= 1 for h in helpers) and len(again) > 5
    assert helped == one
    _same(tmp_path)


def _resumes(folder, sessions: int) -> None:
    """A chain of resumed sessions: each one's file copies all of the one before it, then adds two turns (each
    record is imported once, by the earliest session that has it)."""
    project = folder / "-home-user-work-resumed"
    project.mkdir(parents=True)
    history: list[dict] = []
    parent = None
    for s in range(sessions):
        sid = f"{s:08d}-0000-4000-8000-0000000000aa"
        own = [_user(f"r{s}-u", parent, sid, 10 * s + 1, f"prompt of session {s}"),
               _assistant(f"r{s}-a", f"r{s}-u", sid, 10 * s + 2, f"msg_r{s}", {"type": "text", "text": f"reply {s}"})]
        history = [{**r, "sessionId": sid} for r in history] + own
        (project / f"{sid}.jsonl").write_text(_lines(history))
        parent = f"r{s}-a"


def test_resumed_sessions_planned_ahead_claim_no_record_an_earlier_session_owns(tmp_path, helpers, monkeypatch):
    folder = tmp_path / "projects"
    _resumes(folder, 16)
    _stores(tmp_path)
    monkeypatch.setenv(import_helper.ENV, "0")
    one = _import(tmp_path, "one", folder)
    monkeypatch.setenv(import_helper.ENV, "1")
    _ahead(monkeypatch)
    helped = _import(tmp_path, "helped", folder)
    assert helpers[0].planned_ahead >= 1
    assert helped == one and one["created"] == 16 * 3
    _same(tmp_path)


def test_an_import_leaves_a_freeze_it_did_not_make_as_it_was(tmp_path, helpers):
    """A program that froze its own objects before it imports (gc.freeze, as pre-forking servers do) keeps them
    frozen: the import hands back to the collector only what it kept apart itself."""
    folder = projects(tmp_path)
    _stores(tmp_path)
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        _import(tmp_path, "helped", folder)
        assert gc.get_freeze_count() > frozen // 2  # (less the frozen objects freed meanwhile)
    finally:
        gc.unfreeze()


def test_a_file_grown_between_the_reads_while_sessions_are_planned_ahead_writes_what_this_process_read(
        tmp_path, helpers, monkeypatch):
    """The helper reads an earlier session's file grown (it then owns a record a later session owns here), and the
    importer plans ahead meanwhile: the helper's answers are dropped (it read other files), the plans made ahead
    here are kept, and the store is what one process writes of what this process read."""
    folder = tmp_path / "projects"
    a_file = _resumed(folder)
    _generated(folder, 12, 2)
    _stores(tmp_path)
    monkeypatch.setenv(import_helper.ENV, "0")
    one = _import(tmp_path, "one", folder)

    def append():
        with a_file.open("a") as fh:
            fh.write(json.dumps(_user("a-u3", "a-a2", A, 5, "Then the docs, please: the words nobody else wrote"))
                     + "\n")

    monkeypatch.setenv(import_helper.ENV, "1")
    late = _late_helper(monkeypatch, append)
    monkeypatch.setattr(import_helper, "WAIT", False)
    monkeypatch.setenv("PCP_TEST_STOP", "import-helper:1!STOP")  # stopped before its first plan...
    ask, plan = agent_plans.SharedPlans.__call__, agent_plans.SharedPlans._plan_ahead

    def call(self, index):  # (the first question once the helper plans: it is met at work)
        real = self.helper.helper
        with real._cond:  # (polled: the PLANNING answer wakes no one)
            while not real._cond.wait_for(lambda: real._planning or real._done, 0.05):
                pass
        return ask(self, index)

    def planning(self, index, reserve):  # ...and let go once the importer plans ahead: its answers then come
        planned = plan(self, index, reserve)
        os.kill(self.helper.helper._proc.pid, signal.SIGCONT)
        return planned

    monkeypatch.setattr(agent_plans.SharedPlans, "__call__", call)
    monkeypatch.setattr(agent_plans.SharedPlans, "_plan_ahead", planning)
    closed: list[int] = []
    close = import_helper.ImportHelper.close
    monkeypatch.setattr(import_helper.ImportHelper, "close", lambda self: (closed.append(self.helped), close(self)))
    helped = _import(tmp_path, "helped", folder)
    assert late.helper is not None and late.helper.exited() and late.helper.planned_ahead >= 1
    assert closed[0] == 1  # (ended on its first answer: it read other files)
    assert "the words nobody else wrote" in (tmp_path / "helped.jsonl").read_text()
    assert helped == one
    _same(tmp_path)


def test_very_many_small_sessions_with_a_helper_at_work_write_what_one_process_writes(tmp_path, helpers, monkeypatch):
    """A live helper, the importer planning ahead as the timing falls (every session is taken once: the helper's
    plan, one made ahead, or one made in order)."""
    _generated(tmp_path / "projects", 600, 2)
    folder, one = one_process_first(tmp_path, monkeypatch, folder=tmp_path / "projects")
    _once_planning(monkeypatch)
    helped = _in_time(tmp_path, helpers, "helped", folder)
    helper = helpers[0]
    assert helper.exited() and helper.helped + helper.planned_here + helper.planned_ahead == 600
    assert helped == one
    _same(tmp_path)


@pytest.mark.parametrize("line", [
    '\ufeff{"a": 1}', ' \ufeff{}', '{"a": 1}\x0c', '\x0b{}', '{}\x1c', '\xa0{}', '{"a": "\x00"}', '{"a": "tab\tin"}',
    '{"a": "\\ud800"}', '{"a": "\\udc00\\ud800"}', '{"a": "\\ud83d\\ude00"}', '{"n": ' + "9" * 5000 + '}',
    '{"n": ' + "9" * 4300 + '}', '{"n": 1e999}', '{"n": -0}', '{"n": NaN}', '{"n": -Infinity}', '{"n": 01}',
    '{"n": 1.}', '{"a": 1,}', '{"a": 1} {}', '{"a" : 1 }\r', '"text"', '[]', 'null', '{"a": 1}//', '\t{"a": [' +
    "[" * 300 + "]" * 300 + ']}', '{"a": {"b": {}}, "a": 2}', '{"\\u0000": "\\u001f"}', "{'a': 1}", '{"a": tru}',
])
def test_an_odd_line_is_read_as_json_loads_reads_it(line):
    def outcome(parse):
        try:
            return ("value", json.dumps(parse(line)))
        except RecursionError:
            return ("deep",)
        except ValueError:
            return ("refused",)

    assert outcome(agents._line_value) == outcome(json.loads)


_GARBAGE = textwrap.dedent("""
    import pickle, sys
    out = sys.stdout.buffer
    out.write((0).to_bytes(8, "big") + (2**32 - 2).to_bytes(4, "big"))
    junk = {junk!r}
    for i in range(200):
        data = pickle.dumps(junk[i % len(junk)])
        out.write(len(data).to_bytes(8, "big") + i.to_bytes(4, "big") + data)
    out.flush()
    sys.stdin.buffer.read()
""")


@pytest.mark.parametrize("junk", [[42], [("x",)], ["text"], [(("a", "b"), ("plan", "junk"))], [((), ())],
                                  [None, (None, None)]])
def test_a_helper_answering_garbage_costs_the_import_nothing(tmp_path, helpers, monkeypatch, junk):
    """Whatever well-formed answers a broken helper sends (not plans of what this process read), every session is
    planned here and the store is the one-process import's."""
    folder = projects(tmp_path)
    _stores(tmp_path)
    monkeypatch.setenv(import_helper.ENV, "0")
    one = _import(tmp_path, "one", folder)
    monkeypatch.setenv(import_helper.ENV, "1")
    monkeypatch.setattr(import_helper, "start_helper", lambda module, function: subprocess.Popen(
        [sys.executable, "-c", _GARBAGE.format(junk=junk)], stdin=subprocess.PIPE, stdout=subprocess.PIPE))
    helped = _import(tmp_path, "helped", folder)
    assert helpers[0].exited()
    assert helped == one
    _same(tmp_path)
