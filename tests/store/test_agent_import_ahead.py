"""A Claude Code import shares its sessions with its helper without planning one twice (issue 31): while the helper
plans the session the importer wants next, the importer plans sessions further on itself (the helper skips them),
and the store still comes out as the one-process import writes it; a session made again after later ones were made
is the session made in order; what speeds the reading (json.loads's scanner called directly, a wider pipe, the
records kept apart from the collector) changes nothing that is read, and leaves nothing behind."""

from __future__ import annotations

import gc
import json
import pickle
import sys

import pytest
from hypothesis import given, settings, strategies as st

from store import cores, import_helper
from store.adapters import agent_plans, agents, claude_code
from store.adapters.base import ImportReport
from test_agent_import_helper import _import, _same, _sessions, _stores, one_process_first, projects


def _once_planning(monkeypatch):
    """Each import's first question to its helper waits until the helper plans (it has read the files): the
    importer then meets a helper at work, whatever the machine's speed."""
    ask = agent_plans.SharedPlans.__call__

    def call(self, index):
        with self.helper._cond:
            self.helper._cond.wait_for(lambda: self.helper._planning or self.helper._done)
        return ask(self, index)

    monkeypatch.setattr(agent_plans.SharedPlans, "__call__", call)


def test_sessions_planned_ahead_while_the_helper_plans_land_as_the_one_process_import_writes_them(
        tmp_path, helpers, monkeypatch):
    """The helper stops (SIGSTOP) before its second plan, so the importer meets it planning the session it wants:
    it plans sessions ahead (as many as it may hold), then, the helper silent, the ones between in order (made
    again from the start: it made later ones already), then takes the ones it planned ahead."""
    folder, one = one_process_first(tmp_path, monkeypatch)
    monkeypatch.setenv("PCP_TEST_STOP", "import-helper:2!STOP")  # it plans one session, then stops
    _once_planning(monkeypatch)
    helped = _import(tmp_path, "helped", folder)
    helper = helpers[0]
    assert helper.exited()
    assert helper.planned_ahead >= 1 and helper.helped <= 1
    assert helper.helped + helper.planned_here + helper.planned_ahead >= _sessions(folder) - 2
    assert helped == one
    _same(tmp_path)


def test_a_helper_at_work_and_an_importer_planning_ahead_write_what_one_process_writes(tmp_path, helpers, monkeypatch):
    """A live helper and an importer planning ahead as the timing falls: the importer takes every session once
    (the helper's plan, its own ahead, or its own in order), and the store is the one-process import's."""
    folder, one = one_process_first(tmp_path, monkeypatch)
    _once_planning(monkeypatch)
    answered: list[int] = []
    read = import_helper.ImportHelper._read_answers

    def noted(self):  # every index the helper answers, as it comes (before the importer looks)
        put = self._answers.__class__.__setitem__

        class Noting(dict):
            def __setitem__(inner, key, value):
                answered.append(key)
                put(inner, key, value)

        self._answers = Noting()
        return read(self)

    monkeypatch.setattr(import_helper.ImportHelper, "_read_answers", noted)
    helped = _import(tmp_path, "helped", folder)
    assert helped == one
    _same(tmp_path)
    assert len(answered) == len(set(answered))  # (each session at most once; which ones: timing)


def _message(data: bytes) -> bytes:
    return len(data).to_bytes(8, "big") + data


def test_the_helper_skips_every_session_it_is_told_the_importer_plans(tmp_path):
    """The helper's side of it, in order: told (before it plans any) that the importer plans sessions 1 and 3
    itself, it answers every other session and neither of those."""
    folder = projects(tmp_path)
    n = len(claude_code._read(folder, claude_code._session_files(folder, ImportReport(source="claude-code", path=str(folder))),
                              ImportReport(source="claude-code", path=str(folder))))
    assert n > 5
    proc = cores.start_helper("import_helper", "serve")
    try:
        request = pickle.dumps((claude_code.__name__, b"0" * 16, "sessions", (str(folder), [
            str(p) for p in claude_code._session_files(folder, ImportReport(source="claude-code", path=str(folder)))], False)))
        proc.stdin.write(_message(pickle.dumps(claude_code.__name__)) + _message(request) + b"".join(
            (i | import_helper.RESERVED).to_bytes(8, "big") for i in (1, 3)))  # (one write: in its pipe before it plans)
        proc.stdin.flush()
        answered = []
        while len(answered) < n - 2:
            head = proc.stdout.read(12)
            size, index = int.from_bytes(head[:8], "big"), int.from_bytes(head[8:], "big")
            proc.stdout.read(size)
            if index != import_helper.PLANNING:
                answered.append(index)
        assert answered == [i for i in range(n) if i not in (1, 3)]
    finally:
        proc.kill()
        proc.wait()
        proc.stdin.close()
        proc.stdout.close()


def test_a_session_made_again_after_later_ones_is_the_session_made_in_order(tmp_path):
    folder = projects(tmp_path)

    def read():
        paths = claude_code._session_files(folder, ImportReport(source="claude-code", path=str(folder)))
        return claude_code._read(folder, paths, ImportReport(source="claude-code", path=str(folder)))

    in_order = read()
    made = [in_order.at(i) for i in range(len(in_order))]
    jumping = read()
    last = len(made) - 1
    assert jumping.at(last) == made[last]  # (every session before it stepped past)
    for i in (0, 3, 2, last - 1, 1, last):  # backwards and forwards again
        assert jumping.at(i) == made[i]


_JSONISH = st.text(alphabet=st.sampled_from(list('{}[]",:0123456789.eE+-truefalsnNaIiy \t\r\x0b\x0c\ufeff\\u0041ab')),
                   max_size=40)


def _outcome(parse, text):
    try:
        return ("value", parse(text))
    except RecursionError:
        return ("deep",)
    except ValueError:
        return ("refused",)


@settings(max_examples=3000, deadline=None)
@given(st.one_of(_JSONISH, st.builds(json.dumps, st.recursive(
    st.none() | st.booleans() | st.floats() | st.text(), lambda inner: st.lists(inner) | st.dictionaries(st.text(), inner),
    max_leaves=20)).map(lambda s: s + " "), st.text(max_size=30)))
def test_a_line_is_read_as_json_loads_reads_it(text):
    """The importers' line reader (json.loads's own scanner, without its per-call checks) gives the same value for
    every line json.loads takes (NaN compared as NaN), and refuses every line it refuses."""
    ours, theirs = _outcome(agents._line_value, text), _outcome(json.loads, text)
    assert ours[0] == theirs[0]
    if ours[0] == "value":
        assert json.dumps(ours[1]) == json.dumps(theirs[1])


def test_lines_nested_too_deeply_are_refused_as_json_loads_refuses_them():
    deep = "[" * 200_000 + "]" * 200_000
    assert _outcome(agents._line_value, deep) == _outcome(json.loads, deep) == ("deep",)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="pipe sizes are Linux's")
def test_a_helpers_pipes_hold_a_whole_plan():
    import fcntl

    proc = cores.start_helper("import_helper", "serve")
    try:
        for pipe in (proc.stdin, proc.stdout):
            assert fcntl.fcntl(pipe.fileno(), fcntl.F_GETPIPE_SZ) == cores.PIPE_BYTES
    finally:
        proc.kill()
        proc.wait()
        proc.stdin.close()
        proc.stdout.close()


def test_an_import_hands_what_it_kept_back_to_the_collector_when_it_ends(tmp_path, helpers, monkeypatch):
    """The records are kept apart from the collector while the sessions are written (gc.freeze), and handed back
    when the import ends, also when it fails."""
    folder = projects(tmp_path)
    _stores(tmp_path)
    assert gc.get_freeze_count() == 0
    seen: list[int] = []
    write = claude_code.write_sessions

    def noting(*args, **kwargs):
        seen.append(gc.get_freeze_count())
        return write(*args, **kwargs)

    monkeypatch.setattr(claude_code, "write_sessions", noting)
    _import(tmp_path, "helped", folder)
    assert seen[0] > 0 and gc.get_freeze_count() == 0

    def failing(*args, **kwargs):
        raise OSError("disk gone")

    monkeypatch.setattr(claude_code, "write_sessions", failing)
    with pytest.raises(OSError):
        _import(tmp_path, "one", folder)
    assert gc.get_freeze_count() == 0
