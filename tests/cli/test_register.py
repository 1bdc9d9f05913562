"""`pcp register CLIENT`: the config each client reads, then the official MCP client started from what was written.

The schemas below are the documented entry shapes (see pcp_tui/mcp/register.py for the pages followed):
a stdio server is a command and its arguments; keys a client does not know are refused here, so an
entry that only pcp understands fails the test.
"""

from __future__ import annotations

import json
import os
import re
import sys
import tomllib
from pathlib import Path
from typing import Any

import anyio
import jsonschema
import pytest

pytest.importorskip("mcp")

from mcp.client.session import ClientSession  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402

from pcp_tui import cli  # noqa: E402
from pcp_tui.mcp import register  # noqa: E402

EXPORTS = Path(__file__).resolve().parents[1] / "data" / "exports"
CHATGPT = EXPORTS / "chatgpt-danny-avila-LibreChat-1.json"
STRINGS = {"type": "array", "items": {"type": "string"}}
STR_MAP = {"type": "object", "additionalProperties": {"type": "string"}}
# code.claude.com/docs/en/mcp (~/.claude.json, user scope): a stdio server.
CLAUDE_CODE = {"type": "object", "required": ["command"], "additionalProperties": False, "properties": {
    "type": {"const": "stdio"}, "command": {"type": "string", "minLength": 1}, "args": STRINGS, "env": STR_MAP}}
# modelcontextprotocol.io, "For Claude Desktop users": claude_desktop_config.json.
CLAUDE_DESKTOP = {"type": "object", "required": ["command"], "additionalProperties": False, "properties": {
    "command": {"type": "string", "minLength": 1}, "args": STRINGS, "env": STR_MAP}}
# google-gemini/gemini-cli docs/tools/mcp-server.md: the mcpServers properties.
GEMINI = {"type": "object", "required": ["command"], "additionalProperties": False, "properties": {
    "command": {"type": "string", "minLength": 1}, "args": STRINGS, "env": STR_MAP, "cwd": {"type": "string"},
    "url": {"type": "string"}, "httpUrl": {"type": "string"}, "headers": STR_MAP, "timeout": {"type": "number"},
    "trust": {"type": "boolean"}, "description": {"type": "string"}, "includeTools": STRINGS, "excludeTools": STRINGS}}
# openai/codex docs/config.md, "MCP servers": [mcp_servers.<name>] in config.toml.
CODEX = {"type": "object", "required": ["command"], "additionalProperties": False, "properties": {
    "command": {"type": "string", "minLength": 1}, "args": STRINGS, "env": STR_MAP, "env_vars": STRINGS,
    "cwd": {"type": "string"}, "startup_timeout_sec": {"type": "number"}, "tool_timeout_sec": {"type": "number"},
    "enabled": {"type": "boolean"}, "enabled_tools": STRINGS, "disabled_tools": STRINGS}}


def config_document(root: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "required": ["mcpServers"],
            "properties": {"mcpServers": {"type": "object", "additionalProperties": root}}}


SCHEMAS = {"claude-code": CLAUDE_CODE, "claude-desktop": CLAUDE_DESKTOP, "gemini": GEMINI, "codex": CODEX}


@pytest.fixture()
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    h = tmp_path / "home"
    h.mkdir()
    monkeypatch.setenv("HOME", str(h))
    for var in ("CODEX_HOME", "CLAUDE_CONFIG_DIR", "XDG_CONFIG_HOME", "APPDATA", "PCP_DB"):
        monkeypatch.delenv(var, raising=False)
    return h


@pytest.fixture()
def imported(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    db = tmp_path / "store.db"
    assert cli.main(["--db", str(db), "--json", "import", "chatgpt", str(CHATGPT)]) == 0
    capsys.readouterr()
    return db


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = cli.main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def read_entry(client: str, path: Path) -> dict[str, Any]:
    text = path.read_text(encoding="utf-8")
    if client == "codex":
        document = tomllib.loads(text)
        jsonschema.validate(document["mcp_servers"]["pcp"], CODEX)
        return document["mcp_servers"]["pcp"]
    document = json.loads(text)
    jsonschema.validate(document, config_document(SCHEMAS[client]))
    return document["mcpServers"]["pcp"]


async def find_and_read(entry: dict[str, Any], query: str) -> tuple[str, str, str]:
    """Start the server exactly as the client would (command and args from its config), search, read."""
    params = StdioServerParameters(command=entry["command"], args=entry["args"], env=entry.get("env") or None)
    with anyio.fail_after(60):
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                found = await session.call_tool("search_pages", {"query": query})
                assert not found.is_error, found.content
                hit = found.structured_content["hits"][0]
                page = await session.read_resource(f"pcp://page/{hit['page_id']}")
                described = await session.call_tool("describe", {})
                return hit["namespace"], page.contents[0].text, json.dumps(described.structured_content)


@pytest.mark.parametrize("client", register.CLIENTS)
def test_register_writes_an_entry_the_client_accepts_and_the_sdk_client_reads_chatgpt_through_it(
        client: str, home: Path, imported: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = register.config_path(client)
    assert str(path).startswith(str(home))
    if client in ("claude-code", "gemini"):  # an existing config keeps everything else it holds
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"theme": "dark", "mcpServers": {"other": {"command": "other-server"}}}))
    code, out, err = run(["--db", str(imported), "register", client, "--grant", "conversation:chatgpt:*"], capsys)
    assert code == 0, err
    assert "Grant: conversation:chatgpt:*=search,read,list_scopes" in out
    entry = read_entry(client, path)
    assert entry["args"][-5:] == ["mcp", "--client-id", client, "--grant", "conversation:chatgpt:*=search,read,list_scopes"]
    assert "*=" not in " ".join(a for a in entry["args"] if a.startswith("*"))
    if client in ("claude-code", "gemini"):
        kept = json.loads(path.read_text())
        assert kept["theme"] == "dark" and kept["mcpServers"]["other"] == {"command": "other-server"}
        backups = list(path.parent.glob(path.name + ".pcp-backup-*"))
        assert len(backups) == 1 and json.loads(backups[0].read_text())["theme"] == "dark"
    before = path.read_bytes()
    code, out, _ = run(["--db", str(imported), "register", client, "--grant", "conversation:chatgpt:*"], capsys)
    assert code == 0 and "Already registered" in out
    assert path.read_bytes() == before  # idempotent: nothing rewritten, no second backup
    assert len(list(path.parent.glob(path.name + ".pcp-backup-*"))) == (1 if client in ("claude-code", "gemini") else 0)

    namespace, text, described = anyio.run(find_and_read, entry, "village nestled")
    assert namespace.startswith("conversation:chatgpt:")
    assert "Once upon a time, in a small village nestled" in text
    assert f'"client_id": "{client}"' in described


def test_print_writes_nothing(home: Path, imported: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["--db", str(imported), "register", "codex", "--grant", "conversation:chatgpt:*", "--print"], capsys)
    assert code == 0
    assert "[mcp_servers.pcp]" in out and "nothing written" in out
    assert not register.config_path("codex").exists()


def test_without_grant_outside_a_terminal_is_refused_with_exit_2(home: Path, imported: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    for client in register.CLIENTS:
        code, out, err = run(["--db", str(imported), "register", client], capsys)
        assert code == 2
        assert "--grant" in err and "not at a terminal" in err
        assert not register.config_path(client).exists()


@pytest.mark.parametrize("grant, says", [
    ("*", "never grants every scope"), ("import:*", "holds no pages"),
    ("conversation:chatgpt:*=search,read,delete", "grants only"), ("project:a=write", "grants only"),
])
def test_wide_or_writing_grants_are_refused(grant: str, says: str, home: Path, imported: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["--db", str(imported), "register", "gemini", "--grant", grant], capsys)
    assert code == 2 and says in err
    assert not register.config_path("gemini").exists()


def test_write_goes_only_to_the_named_scope(home: Path, imported: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["--db", str(imported), "register", "gemini", "--grant", "conversation:chatgpt:*",
                        "--toolset", "write"], capsys)
    assert code == 2 and "--write NS" in err
    code, out, _ = run(["--db", str(imported), "--json", "register", "gemini", "--grant", "conversation:chatgpt:*",
                        "--toolset", "write", "--write", "project:scratch"], capsys)
    assert code == 0
    grants = json.loads(out)["grants"]
    assert grants[0] == "conversation:chatgpt:*=search,read,list_scopes"
    assert grants[1].startswith("project:scratch=") and "write" in grants[1] and "delete" not in grants[1]
    assert read_entry("gemini", register.config_path("gemini"))["args"][-2:] == ["--toolset", "write"]


def test_a_broken_config_is_left_alone(home: Path, imported: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = register.config_path("gemini")
    path.parent.mkdir(parents=True)
    path.write_text("{not json")
    code, _, err = run(["--db", str(imported), "register", "gemini", "--grant", "conversation:chatgpt:*"], capsys)
    assert code == 1 and "not valid JSON" in err
    assert path.read_text() == "{not json"


def test_a_toml_layout_it_cannot_update_safely_is_left_alone(home: Path, imported: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    path = register.config_path("codex")
    path.parent.mkdir(parents=True)
    path.write_text('[mcp_servers]\npcp = { command = "old" }\n')
    code, _, err = run(["--db", str(imported), "register", "codex", "--grant", "conversation:chatgpt:*"], capsys)
    assert code == 1 and "edit it by hand" in err
    assert path.read_text() == '[mcp_servers]\npcp = { command = "old" }\n'


def test_no_store_no_registration(home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["--db", str(tmp_path / "nope.db"), "register", "codex", "--grant", "project:*"], capsys)
    assert code == 1 and "no store at" in err.lower()
    assert not (tmp_path / "nope.db").exists()


def test_in_a_terminal_it_lists_groups_with_counts_and_ticks_only_projects_and_own_sessions(
        home: Path, imported: Path, tmp_path: Path) -> None:
    import store
    from store.adapters.agents import project_slug

    st = store.Store.open(imported)
    try:
        st.write_page("project:alpha", content="ship on Friday")
        st.write_page(f"agent:claude-code:{project_slug('/srv/App', '')}:s1", content="a session")
        st.write_page("agent:claude-code:other:s2", content="another project's session")
    finally:
        st.close()
    shown: list[str] = []
    plan = register.register("claude-code", imported, grants=[], write_ns=None, toolset="read", name="pcp",
                             client_id=None, config=None, print_only=True, interactive=True,
                             ask=lambda prompt: "", say=shown.append, cwd="/srv/App")
    listing = "\n".join(shown)
    assert re.search(r"\[x\]\s+\d+\. project:\*\s+1 page", listing)
    assert re.search(r"\[x\]\s+\d+\. agent:claude-code:srv/App:\*\s+1 page", listing)
    assert re.search(r"\[ \]\s+\d+\. agent:claude-code:other:\*", listing)
    assert re.search(r"\[ \]\s+\d+\. conversation:chatgpt:\*\s+\d+ pages", listing)
    assert "import:" not in listing  # tree folders hold no pages
    assert plan.grants == ["project:*=search,read,list_scopes", "agent:claude-code:srv/App:*=search,read,list_scopes"]
    numbers = {m.group(2): m.group(1) for m in re.finditer(r"(\d+)\. (\S+)", listing)}
    plan = register.register("gemini", imported, grants=[], write_ns=None, toolset="read", name="pcp",
                             client_id=None, config=None, print_only=True, interactive=True,
                             ask=lambda prompt: numbers["conversation:chatgpt:*"], say=lambda line: None, cwd="/srv/App")
    assert plan.grants == ["conversation:chatgpt:*=search,read,list_scopes"]


def test_the_toml_entry_replaces_only_its_own_table(home: Path, imported: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = register.config_path("codex")
    path.parent.mkdir(parents=True)
    path.write_text('model = "o4"\n\n[mcp_servers.pcp]\ncommand = "old"\n\n[mcp_servers.pcp.env]\nX = "1"\n\n'
                    '[mcp_servers.other]\ncommand = "keep"\n')
    code, _, err = run(["--db", str(imported), "register", "codex", "--grant", "conversation:chatgpt:*"], capsys)
    assert code == 0, err
    document = tomllib.loads(path.read_text())
    assert document["model"] == "o4" and document["mcp_servers"]["other"] == {"command": "keep"}
    assert set(document["mcp_servers"]["pcp"]) == {"command", "args"}
    assert os.stat(path).st_mode & 0o777 == os.stat(next(path.parent.glob("config.toml.pcp-backup-*"))).st_mode & 0o777


def test_the_command_written_is_this_pcp() -> None:
    command = register.pcp_command()
    assert Path(command[0]).is_absolute()
    assert command == [str(Path(sys.executable).parent / "pcp")] or command[-1] == "pcp_tui.cli"
