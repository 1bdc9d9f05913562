"""A Claude Code import whose sessions are planned in a helper process (store/import_helper.py, issue 31): the store
comes out as the one-process import writes it (export lines, index postings, statistics, the report) on every
vendored real transcript plus awkward generated sessions; a helper killed or stopped part way leaves the importer to
plan the rest, losing nothing; a re-import and an overlapping re-import through the helper write what one process
writes; an importer killed mid-import leaves whole sessions, and no helper outlives it."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from pcpstore_helpers import sqlite3
from store import Store, import_helper
from store.adapters.claude_code import import_claude_code
from test_bulk_equivalence import _mapped
from test_bulk_index_equivalence import _same_index
from test_import_helper import _stores

REPO = Path(__file__).resolve().parents[2]
REAL = REPO / "tests" / "data" / "agents" / "claude-code"  # real transcripts (tests/data/agents/SOURCES.md)
CWD = "/home/user/work/awkward"


def _rec(kind: str, uid: str, parent: str | None, sid: str, at: int, message: dict, **extra) -> dict:
    return {"type": kind, "uuid": uid, "parentUuid": parent, "sessionId": sid, "cwd": CWD, "gitBranch": "main",
            "version": "2.1.12", "isSidechain": False, "timestamp": f"2026-01-01T10:{at // 60:02d}:{at % 60:02d}.000Z",
            "message": message, **extra}


def _user(uid, parent, sid, at, content, **extra) -> dict:
    return _rec("user", uid, parent, sid, at, {"role": "user", "content": content}, **extra)


def _assistant(uid, parent, sid, at, mid, block, **extra) -> dict:
    return _rec("assistant", uid, parent, sid, at, {"id": mid, "type": "message", "role": "assistant",
                                                     "model": "claude-sonnet-4-5", "content": [block],
                                                     "usage": {"input_tokens": at, "output_tokens": 2 * at}}, **extra)


def _lines(records: list) -> str:
    return "\n".join(r if isinstance(r, str) else json.dumps(r) for r in records) + "\n"


def awkward_sessions(folder: Path) -> None:
    """What a projects folder may hold that the plan must treat as the one-process import does: assistant messages
    split over records sharing `message.id`, tool calls and results, scaffolding (isMeta, an interrupt marker, a
    local command's output), sidechain records and a subagent log, a resumed session copying another's records
    (its replies link into the other session), a lone surrogate, a line that is not JSON and a cut-off last line,
    a message over the payload limit (refused, its reply linked past it), a session with nothing but scaffolding,
    a snapshot-only file, a summary in another file and a custom title."""
    project = folder / "-home-user-work-awkward"
    project.mkdir(parents=True)
    a = "aaaaaaaa-0000-4000-8000-000000000001"
    first = [
        _user("a-u1", None, a, 1, "Please look at the build script"),
        _assistant("a-a1", "a-u1", a, 2, "msg_a1", {"type": "thinking", "thinking": "Reading it", "signature": "s"}),
        _assistant("a-a2", "a-a1", a, 3, "msg_a1", {"type": "text", "text": "Let me run it."}),
        _assistant("a-a3", "a-a2", a, 4, "msg_a1", {"type": "tool_use", "id": "toolu_1", "name": "Bash",
                                                     "input": {"command": "make\nmake test", "description": "build"}}),
        _user("a-t1", "a-a3", a, 5, [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "ok: 3 passed"}]),
        _assistant("a-a4", "a-t1", a, 6, "msg_a2", {"type": "text", "text": "The build passes."}),
        _user("a-m1", "a-a4", a, 7, "<command-name>/cost</command-name>", isMeta=True),
        _user("a-o1", "a-m1", a, 8, "<local-command-stdout>Total cost: $0.01</local-command-stdout>"),
        _user("a-i1", "a-o1", a, 9, "[Request interrupted by user]"),
        _user("a-u2", "a-i1", a, 10, "And the tests?"),
        {"type": "file-history-snapshot", "messageId": "a-u2", "snapshot": {}, "isSnapshotUpdate": False},
        {"type": "custom-title", "sessionId": a, "customTitle": "Build script review"},
    ]
    (project / f"{a}.jsonl").write_text(_lines(first))
    b = "bbbbbbbb-0000-4000-8000-000000000002"  # resumes a: its first records copied, then its own
    resumed = [*first[:6],
               _user("b-u1", "a-a4", b, 20, "Resuming: what about the docs?"),
               _assistant("b-a1", "b-u1", b, 21, "msg_b1", {"type": "text", "text": "The docs build too."}),
               _user("b-s1", "b-a1", b, 22, "a side question", isSidechain=True),
               _assistant("b-s2", "b-s1", b, 23, "msg_b2", {"type": "text", "text": "a side answer"}, isSidechain=True),
               _user("b-u2", "b-a1", b, 24, "w " * 600_000),  # over the payload limit: refused
               _assistant("b-a2", "b-u2", b, 25, "msg_b3", {"type": "text", "text": "An answer to the refused one."})]
    (project / f"{b}.jsonl").write_text(_lines(resumed))
    (project / "agent-sub1.jsonl").write_text(_lines([
        _user("s-u1", None, b, 30, "Find the docs config", isSidechain=True),
        _assistant("s-a1", "s-u1", b, 31, "msg_s1", {"type": "text", "text": "It is docs/conf.py."},
                   isSidechain=True)]))
    c = "cccccccc-0000-4000-8000-000000000003"  # broken lines, a lone surrogate
    broken = [_user("c-u1", None, c, 40, "first prompt"), "{not json at all",
              _assistant("c-a1", "c-u1", c, 41, "msg_c1", {"type": "text", "text": "an answer"})]
    text = _lines(broken) + json.dumps(_user("c-u2", "c-a1", c, 42, "cut \ud800 in two")) + "\n"
    text += json.dumps(_assistant("c-a2", "c-u2", c, 43, "msg_c2", {"type": "text", "text": "fine"})) + "\n"
    text += '{"type": "user", "uuid": "c-u3", "message": {"role": "user", "content": "cut o'
    (project / f"{c}.jsonl").write_text(text)
    d = "dddddddd-0000-4000-8000-000000000004"  # nothing but scaffolding
    (project / f"{d}.jsonl").write_text(_lines([_user("d-m1", None, d, 50, "<command-name>/clear</command-name>",
                                                      isMeta=True)]))
    (project / "eeeeeeee-0000-4000-8000-000000000005.jsonl").write_text(_lines([
        {"type": "file-history-snapshot", "messageId": "x", "snapshot": {}, "isSnapshotUpdate": False},
        {"type": "summary", "summary": "The build script reviewed", "leafUuid": "a-a4"}]))


def projects(tmp_path: Path) -> Path:
    """Every vendored real Claude Code transcript and the awkward sessions, in one projects folder."""
    root = tmp_path / "projects"
    shutil.copytree(REAL, root, ignore=shutil.ignore_patterns("LICENSE", "*.md"))
    awkward_sessions(root / "generated")
    return root


def _import(tmp_path, name, folder, **kwargs):
    with Store.open(tmp_path / f"{name}.db") as st:
        report = import_claude_code(st, folder, **kwargs).to_dict()
        st.export(tmp_path / f"{name}.jsonl")
    return {k: v for k, v in report.items() if k not in ("import_id", "path")}


def one_process_first(tmp_path, monkeypatch, wait=False, folder=None):
    """The projects folder (or `folder`) imported in one process into one.db; then the helpers on, and (unless
    `wait`) not waited for, so the importer meets them as the timing falls: (the folder, that import's report)."""
    folder = projects(tmp_path) if folder is None else folder
    _stores(tmp_path)
    monkeypatch.setenv(import_helper.ENV, "0")
    one = _import(tmp_path, "one", folder)
    monkeypatch.setenv(import_helper.ENV, "1")
    if not wait:
        monkeypatch.setattr(import_helper, "WAIT", False)
    return folder, one


def _sessions(folder: Path) -> int:
    """How many session groups the import has (the helper answers one per group)."""
    return len({(p.parent.name, p.stem) for p in folder.rglob("*.jsonl") if not p.stem.startswith("agent-")})


def _same(tmp_path):
    assert _mapped(tmp_path / "helped.jsonl") == _mapped(tmp_path / "one.jsonl")
    _same_index(tmp_path / "one.db", tmp_path / "helped.db", by_id=False)


@pytest.mark.parametrize("with_tools", [False, True])
def test_sessions_planned_in_the_helper_land_as_the_one_process_import_writes_them(tmp_path, helpers, monkeypatch,
                                                                                  with_tools):
    folder = projects(tmp_path)
    _stores(tmp_path)
    monkeypatch.setenv(import_helper.ENV, "0")
    one = _import(tmp_path, "one", folder, with_tools=with_tools)
    monkeypatch.setenv(import_helper.ENV, "1")
    helped = _import(tmp_path, "helped", folder, with_tools=with_tools)
    assert len(helpers) == 1 and helpers[0].exited()
    assert helpers[0].planned_here == 0 and helpers[0].helped >= _sessions(folder) - 2  # (subagent-only groups too)
    assert helped == one and one["created"] > 100
    skipped = json.dumps(one["skipped"])
    for said in ("no messages", "not JSON", "incomplete last line", "lone surrogates", "payload", "duplicate"):
        assert said in skipped  # the awkward sessions reached the import as meant
    _same(tmp_path)


def test_a_helper_killed_part_way_leaves_the_rest_to_the_importer(tmp_path, helpers, monkeypatch):
    folder, one = one_process_first(tmp_path, monkeypatch, wait=True)
    monkeypatch.setenv("PCP_TEST_STOP", "import-helper:4")  # read by the helper only (this process read it before)
    helped = _import(tmp_path, "helped", folder)
    assert helpers[0].helped == 3 and helpers[0].planned_here > 3  # it answered three, died at its fourth
    assert helpers[0].exited()
    assert helped == one
    _same(tmp_path)


def test_a_helper_stopped_part_way_costs_the_importer_nothing_but_its_answers(tmp_path, helpers, monkeypatch):
    """A helper that stops (SIGSTOP) is not waited for: the importer plans the rest itself (each session it makes
    after ones the helper planned, it makes in order), and ends the helper when it is done."""
    folder, one = one_process_first(tmp_path, monkeypatch)
    monkeypatch.setenv("PCP_TEST_STOP", "import-helper:2!STOP")  # it answers one session at most
    helped = _import(tmp_path, "helped", folder)
    assert helpers[0].helped <= 1 and helpers[0].planned_here >= _sessions(folder) - 3
    assert helpers[0].exited()
    assert helped == one
    _same(tmp_path)


def _cut(folder: Path, into: Path) -> Path:
    """A copy of `folder` with every session file cut to its first half (an earlier import of growing sessions)."""
    shutil.copytree(folder, into)
    for path in into.rglob("*.jsonl"):
        lines = path.read_text(encoding="utf-8").splitlines()
        path.write_text("\n".join(lines[:max(1, len(lines) // 2)]) + "\n", encoding="utf-8")
    return into


def reimports(tmp_path, name, folder, half):
    """Three imports into <name>.db: every file's first half, then the whole files, then the same again."""
    return [_import(tmp_path, name, half), _import(tmp_path, name, folder), _import(tmp_path, name, folder)]


def half_then_whole_in_one_process(tmp_path, monkeypatch):
    """The projects folder and a copy cut to each file's first half, `reimports` of them into one.db in one
    process, then the helpers on: (folder, half, the three reports)."""
    folder = projects(tmp_path)
    half = _cut(folder, tmp_path / "half")
    _stores(tmp_path)
    monkeypatch.setenv(import_helper.ENV, "0")
    one = reimports(tmp_path, "one", folder, half)
    monkeypatch.setenv(import_helper.ENV, "1")
    return folder, half, one


def test_a_reimport_and_an_overlapping_reimport_through_the_helper_write_what_one_process_writes(tmp_path, helpers,
                                                                                                 monkeypatch):
    folder, half, one = half_then_whole_in_one_process(tmp_path, monkeypatch)
    helped = reimports(tmp_path, "helped", folder, half)
    assert len(helpers) == 3 and all(h.exited() for h in helpers)
    assert helpers[1].helped > 0  # the grown sessions were planned again here, whole; the new ones landed as planned
    assert helped == one
    assert one[1]["created"] > 0 and one[1]["unchanged"] > 0  # it did overlap
    assert one[2]["created"] == 0 and one[2]["revised"] == 0 and one[2]["unchanged"] == one[0]["created"] + \
        one[1]["created"]
    _same(tmp_path)


CHILD = textwrap.dedent("""
    import sys
    sys.path.insert(0, {repo!r})
    import store.importing as importing
    from store import Store, import_helper
    from store.adapters.claude_code import import_claude_code
    importing.BATCH_SECONDS = 0.0  # every session its own group
    import_helper.HELPER_FROM_CHARS = 0
    import_helper.WAIT = True  # every session's plan is the helper's
    start = import_helper.start
    def started(*args):
        helper = start(*args)
        print("helper", helper._proc.pid if helper is not None else None, flush=True)
        return helper
    import_helper.start = started
    st = Store.open({db!r})
    import_claude_code(st, {folder!r})
    print("done", flush=True)
""")


def _generated(folder: Path, sessions: int, turns: int) -> None:
    project = folder / "-home-user-work-gen"
    project.mkdir(parents=True)
    for s in range(sessions):
        sid = f"{s:08d}-0000-4000-8000-000000000000"
        records, parent = [], None
        for t in range(turns):
            uid = f"g{s}-{t}"
            records.append(_user(uid, parent, sid, s * 10 + t, f"prompt {t} of session {s}") if t % 2 == 0 else
                           _assistant(uid, parent, sid, s * 10 + t, f"msg_{s}_{t}",
                                      {"type": "text", "text": f"reply {t}"}))
            parent = uid
        (project / f"{sid}.jsonl").write_text(_lines(records))


def test_an_importer_killed_mid_import_with_a_helper_leaves_whole_sessions_and_no_helper(tmp_path):
    n, turns = 30, 4
    folder = tmp_path / "projects"
    _generated(folder, n, turns)
    db = tmp_path / "db" / "kill.db"
    Store.open(db).close()
    # The child's helper inherits its stderr: `run` reads that pipe to its end, so it returns only once the helper
    # has exited too (its stdin closed with the importer, it ends): no helper outlives a killed import.
    proc = subprocess.run([sys.executable, "-c", CHILD.format(repo=str(REPO), db=str(db), folder=str(folder))],
                          capture_output=True, timeout=600,
                          env={**os.environ, "PCP_TEST_STOP": "import-unit:12", import_helper.ENV: "1"})
    assert proc.returncode == -signal.SIGKILL, proc.stderr.decode()
    said = proc.stdout.decode().split()
    assert said[0] == "helper" and said[1].isdigit(), said  # the sessions were planned in a helper
    cmdline = Path(f"/proc/{said[1]}/cmdline")
    if cmdline.exists():  # (its pid not reaped yet: a live process has its command line, an exiting one none)
        assert cmdline.read_bytes() == b""
    con = sqlite3.connect(db)
    try:  # a session is all or nothing: every session page in has all its messages (units: the agent scope, the
        # project's scope, then a session each; the 10th session's is not committed)
        assert con.execute("SELECT COUNT(*) FROM page").fetchone()[0] == 9 * (turns + 1)
        contains = con.execute("SELECT COUNT(*) FROM relation WHERE relation_type = 'contains' GROUP BY from_page_id")
        assert [row[0] for row in contains] == [turns] * 9
    finally:
        con.close()
    with Store.open(db) as st:
        assert st.doctor()["integrity"] == "ok"
        report = import_claude_code(st, folder)
        assert report.unchanged == 9 * (turns + 1) and report.created == (n - 9) * (turns + 1)


def test_a_session_made_after_stepping_past_the_ones_before_it_is_the_session_made_in_order(tmp_path):
    """The importer makes a session the helper did not plan after stepping past the ones the helper made (only the
    uuids they own and the split messages they merge are noted): it is the very session made in order, on every
    vendored transcript, the awkward sessions and a resume whose split message began in the session it resumes."""
    folder = projects(tmp_path)
    resume = folder / "generated" / "-home-user-work-awkward" / "ffffffff-0000-4000-8000-000000000006.jsonl"
    a = "aaaaaaaa-0000-4000-8000-000000000001"
    resume.write_text(_lines([  # (its first record is the copy of one that `a` merged into msg_a1)
        _assistant("a-a2", "a-a1", a, 3, "msg_a1", {"type": "text", "text": "Let me run it."}),
        _user("f-u1", "a-a2", "ffffffff-0000-4000-8000-000000000006", 60, "after the split message"),
        _assistant("f-a1", "f-u1", "ffffffff-0000-4000-8000-000000000006", 61, "msg_f1",
                   {"type": "text", "text": "ok"})]))
    from store.adapters import claude_code
    from store.adapters.base import ImportReport

    def read():
        paths = claude_code._session_files(folder, ImportReport(source="claude-code", path=str(folder)))
        return claude_code._read(folder, paths, ImportReport(source="claude-code", path=str(folder)))

    in_order = read()
    made = [in_order.at(i) for i in range(len(in_order))]
    assert sum(s is not None for s in made) > 10
    for i in range(len(made)):
        stepped = read()
        if i > 1:
            stepped.at(i // 2)  # made, then stepped past up to i
        assert stepped.at(i) == made[i]
    resumed = next(s for s in made if s is not None and s.session_id.startswith("ffffffff"))
    assert [m.parent for m in resumed.threads[0].messages][:1] == ["a-a1"]  # (the merged message's key)
