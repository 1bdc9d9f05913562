"""`pcp capture install | uninstall` against each agent's real configuration file shape (tests/data/capture)."""

from __future__ import annotations

import json
import os
import shlex
import tomllib
from pathlib import Path

import pytest
from capture_helpers import PCP, Home, place_config

FIXTURES = [("claude-code", "complete-config.json"), ("claude-code", "hooks-complete.json"),
            ("codex", "config.toml"), ("gemini", "settings.json")]
EVENTS = {"claude-code": ("Stop", "SessionEnd"), "gemini": ("AfterAgent", "SessionEnd")}


def _ours(agent: str, data: bytes) -> list[list[str]]:
    """pcp's installed commands in a configuration file, as argv lists."""
    if agent == "codex":
        notify = tomllib.loads(data.decode()).get("notify")
        return [notify] if notify else []
    hooks = json.loads(data).get("hooks", {})
    return [shlex.split(h["command"]) for event in EVENTS[agent] for g in hooks.get(event, [])
            for h in g["hooks"] if "capture" in h["command"]]


def _without_ours(agent: str, data: bytes) -> object:
    """The configuration as the agent reads it, pcp's entries left out."""
    if agent == "codex":
        parsed = tomllib.loads(data.decode())
        parsed.pop("notify", None)
        return parsed
    parsed = json.loads(data)
    for event in EVENTS[agent]:
        groups = [g for g in parsed.get("hooks", {}).get(event, []) if not any("capture" in h["command"] for h in g["hooks"])]
        if groups:
            parsed["hooks"][event] = groups
        elif "hooks" in parsed:
            parsed["hooks"].pop(event, None)
    if parsed.get("hooks") == {}:
        del parsed["hooks"]
    return parsed


def _tree(*roots: Path) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for root in roots for p in root.rglob("*") if p.is_file()}


@pytest.mark.parametrize("agent,name", FIXTURES)
def test_install_adds_only_pcps_entry_keeps_a_backup_shows_the_diff_and_is_idempotent(fake_home: Home, agent, name):
    original = place_config(fake_home, agent, name)
    before_project = _tree(fake_home.project)
    done = fake_home.pcp("capture", "install", agent, "--all")
    assert done.returncode == 0, done.stderr
    after = fake_home.config_file(agent).read_bytes()
    assert _without_ours(agent, after) == _without_ours(agent, original)  # every other setting as it was
    installed = [PCP, "--db", str(fake_home.db), "capture", "hook", agent]  # the store $PCP_DB named at install
    assert _ours(agent, after) == [installed] * (1 if agent == "codex" else 2)
    assert os.path.isabs(_ours(agent, after)[0][0])
    assert "+++ " in done.stdout and "(after)" in done.stdout  # the diff is shown
    backups = list((fake_home.config / "capture" / "backups").iterdir())
    assert [b.read_bytes() for b in backups] == [original]
    assert backups[0].stat().st_mode & 0o777 == 0o600
    assert _tree(fake_home.project) == before_project  # nothing written inside the project folder

    again = fake_home.pcp("capture", "install", agent, "--all")
    assert again.returncode == 0, again.stderr
    assert "Already installed" in again.stdout
    assert fake_home.config_file(agent).read_bytes() == after
    assert len(list((fake_home.config / "capture" / "backups").iterdir())) == 1


def test_install_writes_nothing_but_the_agents_user_file_and_pcps_config(fake_home: Home):
    place_config(fake_home, "claude-code", "hooks-complete.json")
    (fake_home.project / ".claude").mkdir()
    before = _tree(fake_home.root)
    assert fake_home.pcp("capture", "install", "claude-code").returncode == 0
    changed = {p for p, data in _tree(fake_home.root).items() if before.get(p) != data}
    assert changed <= {str(fake_home.config_file("claude-code"))} | {
        p for p in changed if p.startswith(str(fake_home.config) + os.sep)}
    assert str(fake_home.config_file("claude-code")) in changed
    assert not list((fake_home.project / ".claude").iterdir())


@pytest.mark.parametrize("agent,name", FIXTURES)
def test_uninstall_right_after_install_gives_back_the_file_byte_for_byte(fake_home: Home, agent, name):
    original = place_config(fake_home, agent, name)
    assert fake_home.pcp("capture", "install", agent, "--all").returncode == 0
    done = fake_home.pcp("capture", "uninstall", agent)
    assert done.returncode == 0, done.stderr
    assert fake_home.config_file(agent).read_bytes() == original
    assert "byte for byte" in done.stdout
    assert "pcp is not installed" in fake_home.pcp("capture", "uninstall", agent).stdout


@pytest.mark.parametrize("agent", ["claude-code", "codex", "gemini"])
def test_install_and_uninstall_without_a_file_leave_no_file(fake_home: Home, agent):
    assert fake_home.pcp("capture", "install", agent).returncode == 0
    assert fake_home.config_file(agent).exists()
    assert fake_home.pcp("capture", "uninstall", agent).returncode == 0
    assert not fake_home.config_file(agent).exists()


def _edit(agent: str, path: Path) -> None:
    """What a person (or the agent itself) changes after install."""
    if agent == "codex":
        path.write_bytes(path.read_bytes() + b'\n[mcp_servers.docs]\ncommand = "EDIT-BY-USER"\n')
        return
    settings = json.loads(path.read_bytes())
    settings["model"] = "EDIT-BY-USER"
    settings.setdefault("hooks", {}).setdefault(EVENTS[agent][0], []).append(
        {"hooks": [{"type": "command", "command": "echo EDIT-BY-USER"}]})
    path.write_text(json.dumps(settings, indent=4) + "\n")


@pytest.mark.parametrize("agent,name", FIXTURES)
def test_uninstall_after_later_edits_keeps_them_and_shows_the_diff(fake_home: Home, agent, name):
    original = place_config(fake_home, agent, name)
    assert fake_home.pcp("capture", "install", agent, "--all").returncode == 0
    path = fake_home.config_file(agent)
    _edit(agent, path)
    edited = path.read_bytes()
    done = fake_home.pcp("capture", "uninstall", agent)
    assert done.returncode == 0, done.stderr
    after = path.read_bytes()
    assert _ours(agent, after) == []
    assert _without_ours(agent, after) == _without_ours(agent, edited)  # the later edits stay
    assert after != original
    assert "later changes are kept" in done.stdout
    removed = [line for line in done.stdout.splitlines() if line.startswith("-") and not line.startswith("---")]
    assert any("capture" in line for line in removed)  # the diff shows pcp's lines going
    assert not any("EDIT-BY-USER" in line for line in removed)  # and none of the edits
    if agent == "codex":
        assert after == original + b'\n[mcp_servers.docs]\ncommand = "EDIT-BY-USER"\n'


def test_codex_notify_goes_before_the_first_table_and_an_existing_notify_is_refused(fake_home: Home):
    original = place_config(fake_home, "codex", "config.toml")
    assert fake_home.pcp("capture", "install", "codex").returncode == 0
    text = fake_home.config_file("codex").read_text()
    assert tomllib.loads(text)["notify"] == [PCP, "--db", str(fake_home.db), "capture", "hook", "codex"]
    assert "notify" not in tomllib.loads(text)["tui"]
    assert fake_home.pcp("capture", "uninstall", "codex").returncode == 0

    path = fake_home.config_file("codex")
    path.write_bytes(b'notify = ["notify-send", "Codex"]\n' + original)
    mine = path.read_bytes()
    refused = fake_home.pcp("capture", "install", "codex")
    assert refused.returncode == 1
    assert len(refused.stderr.strip().splitlines()) == 1 and "notify" in refused.stderr
    assert path.read_bytes() == mine


def test_install_asks_nothing_without_a_terminal_and_captures_the_current_project(fake_home: Home):
    done = fake_home.pcp("--json", "capture", "install", "gemini")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["scope"] == "project" and result["projects"] == [str(fake_home.project)]
    assert not result["all_projects"]
    status = json.loads(fake_home.pcp("--json", "capture", "status").stdout)
    assert [a["agent"] for a in status["agents"] if a["installed"]] == ["gemini"]
    assert status["projects"] == [str(fake_home.project)]


def test_a_broken_settings_file_is_refused_in_one_line_and_left_alone(fake_home: Home):
    path = fake_home.config_file("claude-code")
    path.parent.mkdir(parents=True)
    path.write_bytes(b'{"model": "sonnet",')
    done = fake_home.pcp("capture", "install", "claude-code")
    assert done.returncode == 1
    assert len(done.stderr.strip().splitlines()) == 1 and "not valid JSON" in done.stderr
    assert path.read_bytes() == b'{"model": "sonnet",'


def test_install_at_a_terminal_asks_project_or_all(fake_home: Home, monkeypatch):
    from pcp_tui.capture import manage as capture

    for key, value in fake_home.env().items():
        monkeypatch.setenv(key, value)
    monkeypatch.setattr("sys.argv", [PCP])
    asked: list[str] = []
    result = capture.install("gemini", scope=None, cwd=str(fake_home.project), db=None,
                             ask=lambda q: asked.append(q) or "a")
    assert len(asked) == 1 and str(fake_home.project) in asked[0]
    assert result["all_projects"] and result["scope"] == "all"
    result = capture.install("claude-code", scope=None, cwd=str(fake_home.project), db=None, ask=lambda q: "")
    assert result["scope"] == "project" and result["projects"] == [str(fake_home.project)]


def test_a_broken_capture_toml_stops_install_before_it_writes(fake_home: Home):
    fake_home.config.mkdir()
    (fake_home.config / "capture.toml").write_text("all = maybe\n")
    done = fake_home.pcp("capture", "install", "claude-code")
    assert done.returncode == 1 and "capture.toml" in done.stderr
    assert not fake_home.config_file("claude-code").exists()
