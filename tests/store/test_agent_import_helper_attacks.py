"""Attacks on a Claude Code import whose sessions are planned in a helper process (issue 31, branch i31k): files
that change between the importer's read and the helper's, so that a session's own files read the same in both
yet the sessions before it do not. Whatever the helper read, the import writes what the importer read, as one
process writes it (export lines, index postings, statistics, the report)."""

from __future__ import annotations

import json
from pathlib import Path

from store import import_helper
from store.adapters import claude_code
from test_agent_import_helper import _assistant, _import, _lines, _same, _stores, _user

A = "aaaaaaaa-0000-4000-8000-00000000000a"
B = "bbbbbbbb-0000-4000-8000-00000000000b"


def _resumed(folder: Path) -> Path:
    """Session A, and session B that resumed it: B's file copies A's records, then has its own. B's copy holds one
    record (a-u3) that A's file does not hold yet: B owns it, unless A's file has it too."""
    project = folder / "-home-user-work-awkward"
    project.mkdir(parents=True)
    history = [_user("a-u1", None, A, 1, "Please look at the build script"),
               _assistant("a-a1", "a-u1", A, 2, "msg_a1", {"type": "text", "text": "It builds."}),
               _user("a-u2", "a-a1", A, 3, "And the tests?"),
               _assistant("a-a2", "a-u2", A, 4, "msg_a2", {"type": "text", "text": "They pass."}),
               _user("a-u3", "a-a2", A, 5, "Then the docs, please: the words nobody else wrote")]
    (project / f"{A}.jsonl").write_text(_lines(history[:4]))
    (project / f"{B}.jsonl").write_text(_lines([  # (a resume writes the copies under its own session id)
        *({**r, "sessionId": B} for r in history), _assistant("b-a1", "a-u3", B, 20, "msg_b1", {"type": "text", "text": "The docs build too."})]))
    return project / f"{A}.jsonl"


def _late_helper(monkeypatch, change):
    """The helper started once the importer has read the files and `change` has changed them: the helper reads
    what the importer did not (as when Claude Code writes between the two reads)."""
    start, read = claude_code.agent_helper, claude_code._read

    class Late:
        helper = None

        def __call__(self, index, *ahead):
            return self.helper(index, *ahead) if self.helper is not None else None

        @property
        def salt(self):
            return self.helper.salt

        def close(self):
            if self.helper is not None:
                self.helper.close()

    late = Late()
    asked = {}

    def agent_helper(*args):
        asked["args"] = args
        return late

    def read_then_change(*args):
        sessions = read(*args)
        change()
        late.helper = start(*asked["args"])
        return sessions

    monkeypatch.setattr(claude_code, "agent_helper", agent_helper)
    monkeypatch.setattr(claude_code, "_read", read_then_change)
    return late


def test_a_record_appended_to_an_earlier_session_between_the_reads_loses_no_later_session_message(
        tmp_path, helpers, monkeypatch):
    folder = tmp_path / "projects"
    a_file = _resumed(folder)
    _stores(tmp_path)
    monkeypatch.setenv(import_helper.ENV, "0")
    one = _import(tmp_path, "one", folder)  # what the importer reads: B owns a-u3
    assert "the words nobody else wrote" in (tmp_path / "one.jsonl").read_text()

    def append():  # A's file gets a-u3 (B's file, whose stamp is all the helper's answer for B is checked by, not)
        with a_file.open("a") as fh:
            fh.write(json.dumps(_user("a-u3", "a-a2", A, 5, "Then the docs, please: the words nobody else wrote"))
                     + "\n")

    monkeypatch.setenv(import_helper.ENV, "1")
    late = _late_helper(monkeypatch, append)
    helped = _import(tmp_path, "helped", folder)
    assert late.helper is not None and late.helper.exited() and helpers
    assert "the words nobody else wrote" in (tmp_path / "helped.jsonl").read_text()
    assert helped == one
    _same(tmp_path)


def test_a_line_nested_too_deeply_to_walk_is_refused_in_one_line_and_the_rest_lands(
        tmp_path, helpers, monkeypatch):
    """A line the parser takes (700 levels) but that holds a lone surrogate's escape, walked to make it storable
    (two frames a level), and one the parser cannot take: each is refused by name, the session's other lines
    land, with the helper as without it."""
    project = tmp_path / "projects" / "-home-user-work-deep"
    project.mkdir(parents=True)
    sid = "dddddddd-0000-4000-8000-00000000000d"
    deep = json.dumps(_user("d-u2", "d-a1", sid, 3, "@")).replace('"@"', "[" * 700 + '"cut \\ud800"' + "]" * 700)
    deeper = json.dumps(_user("d-u3", "d-a1", sid, 4, "@")).replace('"@"', "[" * 100_000 + "]" * 100_000)
    (project / f"{sid}.jsonl").write_text(_lines([
        _user("d-u1", None, sid, 1, "a prompt before the deep lines"), _assistant(
            "d-a1", "d-u1", sid, 2, "msg_d1", {"type": "text", "text": "an answer"}), deep, deeper,
        _user("d-u4", "d-a1", sid, 5, "a prompt after the deep lines")]))
    _stores(tmp_path)
    reports = []
    for name, env in (("one", "0"), ("helped", "1")):
        monkeypatch.setenv(import_helper.ENV, env)
        reports.append(_import(tmp_path, name, tmp_path / "projects"))
    assert reports[0] == reports[1] and reports[0]["created"] == 4  # the conversation and three messages
    assert [s["reason"] for s in reports[0]["skipped"]] == [
        "2 line(s) nested too deeply to read (arrays or objects inside one another about a thousand levels down); "
        "nothing was read from them"]
    assert "a prompt after the deep lines" in (tmp_path / "helped.jsonl").read_text()
    assert helpers and helpers[0].helped == 1 and helpers[0].exited()
    _same(tmp_path)
