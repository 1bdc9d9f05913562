"""The hook as each agent runs it: real session files that grow, the real `pcp` program, the store checked after.

No timed assertion: a hook run's import is waited for through the capture log (tests/waits.py), and the
2-second bound is shown by a store that cannot be written until the hook has returned.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from capture_helpers import AGENT_DATA, Home

CLAUDE_FILE = AGENT_DATA / "claude-code/kfischer-okarin/-Users-user-project/b3edadab-bca0-4054-9b41-f7ffa6941260.jsonl"
CODEX_FILE = AGENT_DATA / ("codex/codemie-code/sessions/2026/05/11/"
                           "rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl")
GEMINI_FILE = AGENT_DATA / ("gemini/derived/tmp/907f20644716c92a8309a8b7c1ceec79d422233ff220b7fdb8772b360bd8273f/"
                            "chats/session-2026-01-16T11-01-37b7abef.jsonl")


def _session(h: Home, agent: str) -> tuple[Path, Path, str]:
    """(the real session file, where the agent keeps it in the fake home, its session id)."""
    if agent == "claude-code":
        return CLAUDE_FILE, h.home / ".claude/projects/-work-project" / CLAUDE_FILE.name, CLAUDE_FILE.stem
    if agent == "codex":
        return CODEX_FILE, h.home / ".codex/sessions/2026/05/11" / CODEX_FILE.name, CODEX_FILE.stem[-36:]
    target = h.home / ".gemini/tmp" / GEMINI_FILE.parent.parent.name / "chats" / GEMINI_FILE.name
    return GEMINI_FILE, target, json.loads(GEMINI_FILE.read_text().splitlines()[0])["sessionId"]


def _event(h: Home, agent: str, target: Path, sid: str) -> dict[str, Any]:
    if agent == "codex":
        return {"type": "agent-turn-complete", "thread-id": sid, "turn-id": "7", "cwd": str(h.project),
                "input-messages": ["a prompt"], "last-assistant-message": "an answer"}
    return {"session_id": sid, "transcript_path": str(target), "cwd": str(h.project),
            "hook_event_name": "Stop" if agent == "claude-code" else "AfterAgent"}


def _grow(source: Path, target: Path, lines: int | None) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    kept = source.read_bytes().splitlines(keepends=True)
    target.write_bytes(b"".join(kept[:lines] if lines is not None else kept))


def _heads(db: Path) -> dict[str, str]:
    """source key -> the head revision's content."""
    conn = sqlite3.connect(db)
    try:
        return dict(conn.execute("SELECT sp.source_key, r.content FROM source_page sp JOIN page p ON p.id = sp.page_id "
                                 "JOIN revision r ON r.id = p.head").fetchall())
    finally:
        conn.close()


def _reference(tmp: Path, agent: str, source: Path) -> dict[str, str]:
    """The store a single capture of the whole file gives."""
    from store import Store
    from store.capture import capture_session

    folder = tmp / "reference" / source.parent.name
    folder.mkdir(parents=True)
    shutil.copyfile(source, folder / source.name)
    st = Store.open(tmp / "reference.db")
    try:
        capture_session(st, agent, folder / source.name)
    finally:
        st.close()
    return _heads(tmp / "reference.db")


@pytest.mark.parametrize("agent,first", [("claude-code", 20), ("codex", 150), ("gemini", 15)])
def test_a_hook_run_on_a_grown_session_imports_only_the_new_messages(fake_home: Home, tmp_path, agent, first):
    assert fake_home.pcp("capture", "install", agent).returncode == 0  # this project
    source, target, sid = _session(fake_home, agent)
    _grow(source, target, first)
    run = fake_home.hook(agent, _event(fake_home, agent, target, sid))
    assert (run.returncode, run.stdout, run.stderr) == (0, "", "")
    one = fake_home.wait_done(1)
    pages_one = fake_home.message_pages()
    assert one["created"] == len(pages_one) > 1

    _grow(source, target, None)
    run = fake_home.hook(agent, _event(fake_home, agent, target, sid))
    assert (run.returncode, run.stdout, run.stderr) == (0, "", "")
    two = fake_home.wait_done(2)
    pages_two = fake_home.message_pages()
    assert two["created"] == len(pages_two) - len(pages_one) > 0  # only what is new is created
    assert all(pages_two[key][0] == page for key, (page, _) in pages_one.items())  # the same pages, none twice
    assert _heads(fake_home.db) == _reference(tmp_path, agent, source)  # as one capture of the whole file

    fake_home.hook(agent, _event(fake_home, agent, target, sid))  # nothing new: nothing read
    assert fake_home.runs("unchanged") and fake_home.message_pages() == pages_two


def test_the_hook_exits_0_and_says_nothing_with_a_missing_or_broken_store(fake_home: Home):
    assert fake_home.pcp("capture", "install", "claude-code").returncode == 0
    source, target, sid = _session(fake_home, "claude-code")
    _grow(source, target, None)
    event = _event(fake_home, "claude-code", target, sid)

    fake_home.db.parent.mkdir()
    fake_home.db.write_bytes(b"this is not a SQLite database\n" * 200)
    broken = fake_home.db.read_bytes()
    run = fake_home.hook("claude-code", event)
    assert (run.returncode, run.stdout, run.stderr) == (0, "", "")
    error = fake_home.runs("error")
    assert error and error[-1]["error"]
    assert fake_home.db.read_bytes() == broken
    status = fake_home.pcp("capture", "status")
    assert "Last errors:" in status.stdout and "hook error" in status.stdout

    fake_home.db.unlink()
    shutil.rmtree(fake_home.db.parent)  # missing, folder and all: capture writes, so it creates the store
    run = fake_home.hook("claude-code", event)
    assert (run.returncode, run.stdout, run.stderr) == (0, "", "")
    assert fake_home.wait_done(1)["created"] > 0
    assert fake_home.db.is_file()

    garbage = fake_home.pcp("capture", "hook", "claude-code", stdin="{not json")
    assert (garbage.returncode, garbage.stdout, garbage.stderr) == (0, "", "")
    assert fake_home.runs("skipped")[-1]["why"] == "hook input is not JSON"


def test_the_hook_returns_before_a_locked_store_lets_it_write_and_the_work_finishes_detached(fake_home: Home):
    assert fake_home.pcp("capture", "install", "claude-code").returncode == 0
    source, target, sid = _session(fake_home, "claude-code")
    _grow(source, target, 20)
    event = _event(fake_home, "claude-code", target, sid)
    assert fake_home.hook("claude-code", event).returncode == 0
    fake_home.wait_done(1)
    before = fake_home.message_pages()
    _grow(source, target, None)

    writer = sqlite3.connect(fake_home.db, isolation_level=None)  # another writer holds the store
    writer.execute("BEGIN IMMEDIATE")
    try:
        run = fake_home.hook("claude-code", event)  # it returned: the agent goes on
        assert (run.returncode, run.stdout, run.stderr) == (0, "", "")
        assert fake_home.runs("detached")  # it said it left the import to a child
        assert len(fake_home.runs("done")) == 1 and fake_home.message_pages() == before  # nothing written yet
    finally:
        writer.execute("ROLLBACK")
        writer.close()
    done = fake_home.wait_done(2)  # the detached child finishes once the store is free
    assert done["created"] == len(fake_home.message_pages()) - len(before) > 0


AWS_KEY = "AKIA" + "ABCDEFGHIJKLMNOP"
PASSWORD = "hunter2Xq9Lz"
TOOL_OUTPUT = "THE PAGE TEXT pcp RETURNED TO THE AGENT"
BUNDLE_BODY = "A PAGE THAT WAS HANDED TO THE CHAT IN A BUNDLE"


def _bundle(tmp: Path) -> str:
    from store import Store

    st = Store.open(tmp / "other.db")
    try:
        page = st.write_page("project:notes", content=BUNDLE_BODY, facets={"title": "handed over"})
        return str(st.bundle([page["page_id"]])["text"])
    finally:
        st.close()


def _claude_transcript(path: Path, cwd: str, texts: list[tuple[str, Any]]) -> None:
    records, parent = [], None
    for n, (role, content) in enumerate(texts):
        uuid = f"00000000-0000-4000-8000-{n:012d}"
        records.append({"type": role, "uuid": uuid, "parentUuid": parent, "sessionId": "s-private", "cwd": cwd,
                        "timestamp": f"2026-12-01T10:00:{n:02d}.000Z",
                        "message": {"role": role, "content": content,
                                    **({"id": f"msg_{n}", "model": "claude-sonnet-4-5"} if role == "assistant" else {})}})
        parent = uuid
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))


def test_secrets_are_redacted_and_pcps_own_output_is_not_captured_again(fake_home: Home, tmp_path):
    assert fake_home.pcp("capture", "install", "claude-code").returncode == 0
    bundle = _bundle(tmp_path)
    target = fake_home.home / ".claude/projects/-work-project/s-private.jsonl"
    _claude_transcript(target, str(fake_home.project), [
        ("user", f"Deploy with key {AWS_KEY} and password = '{PASSWORD}' please"),
        ("assistant", [{"type": "text", "text": "Reading your notes."},
                       {"type": "tool_use", "id": "toolu_1", "name": "mcp__pcp__read_pages", "input": {"ids": ["x"]}}]),
        ("user", [{"type": "tool_result", "tool_use_id": "toolu_1", "content": TOOL_OUTPUT}]),
        ("assistant", "Done reading."),
        ("user", f"Here is context from before:\n\n{bundle}\nWhat should we do next?"),
        ("assistant", "Let us continue."),
    ])
    run = fake_home.hook("claude-code", {"session_id": "s-private", "transcript_path": str(target),
                                         "cwd": str(fake_home.project), "hook_event_name": "Stop"})
    assert run.returncode == 0
    done = fake_home.wait_done(1)
    stored = fake_home.contents() + fake_home.titles()
    for secret in (AWS_KEY, PASSWORD, TOOL_OUTPUT, BUNDLE_BODY, "pcp-bundle v1 sha256"):
        assert secret not in stored
    assert "[redacted: an AWS access key id]" in stored and "password = '[redacted]'" in stored
    assert "pcp does not capture it again" in stored and "What should we do next?" in stored
    assert done["bundles_not_captured"] == 1
    assert set(done["redacted"]) == {"an AWS access key id", "a credential assignment (api_key=..., password: ...)"}

    log = (fake_home.config / "capture" / "log.jsonl")
    assert log.stat().st_mode & 0o777 == 0o600
    for text in (AWS_KEY, PASSWORD, TOOL_OUTPUT, BUNDLE_BODY, "Deploy with key", "Reading your notes"):
        assert text not in log.read_text()  # the log holds no message text


def test_a_project_opts_out_with_a_file_or_the_config_list_and_others_are_not_captured(fake_home: Home):
    assert fake_home.pcp("capture", "install", "claude-code").returncode == 0
    source, target, sid = _session(fake_home, "claude-code")
    _grow(source, target, None)
    event = _event(fake_home, "claude-code", target, sid)

    (fake_home.project / ".pcp-no-capture").write_text("")
    assert fake_home.hook("claude-code", event).returncode == 0
    assert "opts out" in fake_home.runs("skipped")[-1]["why"]
    (fake_home.project / ".pcp-no-capture").unlink()

    policy = fake_home.config / "capture.toml"
    policy.write_text(policy.read_text().replace("exclude = []", f"exclude = [{json.dumps(str(fake_home.project))}]"))
    assert fake_home.hook("claude-code", event).returncode == 0
    assert "excluded" in fake_home.runs("skipped")[-1]["why"]

    other = fake_home.root / "work" / "other"
    other.mkdir()
    assert fake_home.hook("claude-code", {**event, "cwd": str(other)}).returncode == 0
    assert "not a captured project" in fake_home.runs("skipped")[-1]["why"]
    assert not fake_home.db.exists() and not fake_home.runs("done")


def test_a_hook_input_naming_a_file_outside_the_agents_folder_reads_nothing(fake_home: Home):
    assert fake_home.pcp("capture", "install", "claude-code", "--all").returncode == 0
    outside = fake_home.root / "elsewhere" / "notes.jsonl"
    _grow(CLAUDE_FILE, outside, None)
    run = fake_home.hook("claude-code", {"session_id": "x", "transcript_path": str(outside), "cwd": str(fake_home.project)})
    assert (run.returncode, run.stdout, run.stderr) == (0, "", "")
    assert "outside" in fake_home.runs("skipped")[-1]["why"]
    assert not fake_home.db.exists()


def test_capture_run_imports_what_the_agents_folders_hold_and_then_nothing_again(fake_home: Home):
    assert fake_home.pcp("capture", "install", "claude-code", "--all").returncode == 0
    shutil.copytree(CLAUDE_FILE.parent, fake_home.home / ".claude/projects/-Users-user-project")
    _grow(CODEX_FILE, _session(fake_home, "codex")[1], None)
    first = json.loads(fake_home.pcp("--json", "capture", "run").stdout)
    assert {c["agent"] for c in first["captured"]} == {"claude-code", "codex"} and first["failed"] == 0
    pages = fake_home.message_pages()
    assert sum(c["created"] for c in first["captured"]) == len(pages)
    second = json.loads(fake_home.pcp("--json", "capture", "run").stdout)
    assert second["captured"] == [] and second["unchanged"] == len(first["captured"])
    assert fake_home.message_pages() == pages
    status = fake_home.pcp("capture", "status")
    assert status.returncode == 0 and "run  done" in status.stdout


def test_the_hook_decides_before_importing_the_store_or_any_ui_library(fake_home: Home):
    """Everything before the fork (reading the input, the project rules, the seen-file check) is light: a
    skipped run imports neither the store nor Textual nor Rich."""
    import subprocess
    import sys

    event = json.dumps({"session_id": "s", "transcript_path": "/nowhere.jsonl", "cwd": str(fake_home.project)})
    run = subprocess.run([sys.executable, "-X", "importtime", "-m", "pcp_tui.cli", "capture", "hook", "claude-code"],
                         input=event, capture_output=True, text=True, env=fake_home.env(), timeout=120)
    assert run.returncode == 0 and run.stdout == ""
    imported = {line.rsplit("|", 1)[-1].strip() for line in run.stderr.splitlines() if "|" in line}
    assert "pcp_tui.capture.hook" in imported
    assert not {m for m in imported if m.split(".")[0] in ("store", "peewee", "textual", "rich")}
    assert fake_home.runs("skipped")


@pytest.mark.parametrize("agent", ["claude-code", "codex", "gemini"])
def test_the_installed_command_run_as_the_agent_runs_it_captures_into_the_named_store(fake_home: Home, agent):
    """The command install wrote, run the agent's way: Claude Code and Gemini CLI through a shell with the input
    on stdin, Codex as an argv with the notification appended; into the store named by --db at install."""
    import shlex
    import subprocess
    import tomllib

    named = fake_home.root / "named" / "store.db"
    assert fake_home.pcp("--db", str(named), "capture", "install", agent).returncode == 0
    source, target, sid = _session(fake_home, agent)
    _grow(source, target, None)
    event = _event(fake_home, agent, target, sid)
    env = {k: v for k, v in fake_home.env().items() if k != "PCP_DB"}
    config = fake_home.config_file(agent).read_text()
    if agent == "codex":
        argv = tomllib.loads(config)["notify"]
        run = subprocess.run([*argv, json.dumps(event)], capture_output=True, text=True, env=env, timeout=120,
                             cwd=fake_home.project)
    else:
        event_name = "Stop" if agent == "claude-code" else "AfterAgent"
        command = json.loads(config)["hooks"][event_name][-1]["hooks"][0]["command"]
        assert shlex.split(command)[1:3] == ["--db", str(named)]
        run = subprocess.run(["/bin/sh", "-c", command], input=json.dumps(event), capture_output=True, text=True,
                             env=env, timeout=120, cwd=fake_home.project)
    assert (run.returncode, run.stdout, run.stderr) == (0, "", "")
    done = fake_home.wait_done(1)
    assert done["store"] == str(named) and done["created"] > 0 and named.is_file()
    assert not fake_home.db.exists()


def test_on_an_encrypted_store_without_its_passphrase_the_hook_logs_one_line_naming_what_is_missing(fake_home: Home):
    from encrypted_extra import require

    require()
    from store import Store, encryption
    from waits import wait_for

    assert fake_home.pcp("capture", "install", "claude-code").returncode == 0
    source, target, sid = _session(fake_home, "claude-code")
    _grow(source, target, None)
    fake_home.db.parent.mkdir()
    Store.open(fake_home.db).close()
    encryption.encrypt(fake_home.db, passphrase="a passphrase the hook does not have")
    before = fake_home.db.read_bytes()
    run = fake_home.hook("claude-code", _event(fake_home, "claude-code", target, sid))
    assert (run.returncode, run.stdout, run.stderr) == (0, "", "")
    wait_for(lambda: fake_home.runs("error"), "the hook's error to be logged")
    error = fake_home.runs("error")[-1]["error"]
    assert "\n" not in error and "PCP_PASSPHRASE_FILE" in error and "encrypted" in error
    assert fake_home.db.read_bytes() == before
    status = fake_home.pcp("capture", "status")
    assert "PCP_PASSPHRASE_FILE" in status.stdout
