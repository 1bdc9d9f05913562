"""`pcp mcp` as an MCP client sees it, over stdio and over streamable HTTP, driven by the SDK's own clients.

One server process per transport serves the module's store (the HTTP one on a free port, stopped at the end
of the module); each check connects a client session. Every tool is listed with a title, hints, described
parameters and valid JSON Schemas; every tool is called with valid arguments (its structuredContent validated
against its outputSchema) and with wrongly typed ones; resources are listed and read; ping answers.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, AsyncIterator

import anyio
import pytest
from mcp_helpers import http_server as serve_http

pytest.importorskip("mcp")

import httpx2  # noqa: E402
from jsonschema import Draft202012Validator  # noqa: E402
from mcp.client.session import ClientSession  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402
from mcp_types import PaginatedRequestParams  # noqa: E402

import store  # noqa: E402
from pcp_tui import shared  # noqa: E402
from pcp_tui.mcp import schema as mcp_schema  # noqa: E402
from pcp_tui.mcp.server import TOOL_INFO, TOOLSETS  # noqa: E402
from pcp_tui.mcp.wire import package_version  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
CLIENT = "proto-client"
GRANT = "project:a=search,read,list_scopes,write,revise,link,ingest,suppress"
SUB_GRANT = "project:a/*=search,read,list_scopes"
SUBSCOPES = 55  # more than one page of resources/list
SERVE = ["-m", "pcp_tui.cli", "--db", "{db}", "mcp", "--client-id", CLIENT, "--grant", GRANT, "--grant", SUB_GRANT,
         "--toolset", "write"]


@pytest.fixture(scope="module")
def seeded(tmp_path_factory) -> dict[str, Any]:
    db = tmp_path_factory.mktemp("proto") / "store.db"
    with store.Store.open(db) as st:
        st.create_scope("project:a", display_name="Project A", description="the granted project")
        a1 = st.write_page("project:a", content="Notes on compactness of spaces.", facets={"title": "Compactness"})
        a2 = st.write_page("project:a", content="A reading list about topology.", facets={"title": "Reading list"})
        b1 = st.write_page("project:b", content="SECRET-B compactness", facets={"title": "Other project"})
        for i in range(SUBSCOPES):
            st.create_scope(f"project:a/sub{i:02}")
    return {"db": db, "a1": a1, "a2": a2, "b1": b1}


def _command(db: Path, *extra: str) -> list[str]:
    return [sys.executable] + [part.format(db=db) for part in SERVE] + list(extra)


@pytest.fixture(scope="module")
def http_server(seeded) -> Any:
    """`pcp mcp --http --port 0` on the module's store; yields (url, token); always stopped."""
    with serve_http(_command(seeded["db"], "--http", "--port", "0")) as url:
        yield url, (seeded["db"].parent / "store.db.mcp-token").read_text().strip()


@asynccontextmanager
async def stdio_session(db: Path) -> AsyncIterator[tuple[ClientSession, Any]]:
    params = StdioServerParameters(command=sys.executable, args=_command(db)[1:], cwd=str(REPO))
    with anyio.fail_after(60):
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                yield session, await session.initialize()


@asynccontextmanager
async def http_session(url: str, token: str) -> AsyncIterator[tuple[ClientSession, Any]]:
    with anyio.fail_after(60):
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}) as client:
            async with streamable_http_client(url, http_client=client) as streams:
                async with ClientSession(streams[0], streams[1]) as session:
                    yield session, await session.initialize()


def _session(transport: str, seeded: dict, request: Any):
    if transport == "stdio":
        return stdio_session(seeded["db"])
    url, token = request.getfixturevalue("http_server")
    return http_session(url, token)


def text_of(result: Any) -> str:
    return "\n".join(block.text for block in result.content if getattr(block, "type", "") == "text")


def valid_args(seeded: dict) -> dict[str, dict[str, Any]]:
    a1, a2 = seeded["a1"], seeded["a2"]
    return {
        "describe": {},
        "list_scopes": {"limit": 2},
        "search_pages": {"query": "compactness", "mode": "text", "lifecycle_status": ["active"]},
        "read_pages": {"ids": [a1["page_id"], a2["revision_id"]], "projections": ["manifest", "payload", "history"]},
        "write_page": {"namespace": "project:a", "content": "a model note", "title": "Model note",
                       "idempotency_key": "proto-write"},
        "revise_page": {"page_id": a2["page_id"], "expected_revision_id": a2["revision_id"],
                        "content": "A longer reading list.", "idempotency_key": "proto-revise"},
        "link_pages": {"from_id": a1["page_id"], "relation_type": "related_to", "to_id": a2["page_id"]},
        "ingest_event": {"namespace": "project:a", "idempotency_key": "proto-event", "content": "tool said 42"},
        "suppress_pages": {"page_ids": [a2["page_id"]], "reason": "test"},
        "recommend_tombstone": {"page_id": a1["page_id"], "reason": "test"},
    }


WRONG_ARGS = {
    "describe": None,  # takes no arguments: nothing to get wrong
    "list_scopes": {"limit": "many"},
    "search_pages": {"query": 5, "mode": "fuzzy"},
    "read_pages": {"ids": "pg_x"},
    "write_page": {"namespace": ["project:a"], "content": 1},
    "revise_page": {"page_id": 3, "expected_revision_id": None},
    "link_pages": {"from_id": {}, "relation_type": 7, "to_id": []},
    "ingest_event": {"namespace": "project:a", "idempotency_key": 9},
    "suppress_pages": {"page_ids": "pg_x"},
    "recommend_tombstone": {"page_id": 1, "reason": 2},
}


LAST_SEARCH = {"query": "compactness", "mode": "text", "lifecycle_status": ["active"]}


def check_listing(tools: list[Any]) -> None:
    assert {t.name for t in tools} == set(TOOLSETS["write"])
    for tool in tools:
        assert tool.title and tool.description and len(tool.description) > 60, tool.name
        hints = tool.annotations
        assert hints is not None and hints.title == tool.title, tool.name
        assert hints.open_world_hint is False and hints.destructive_hint is False, tool.name
        assert isinstance(hints.read_only_hint, bool) and isinstance(hints.idempotent_hint, bool), tool.name
        assert hints.read_only_hint == (tool.name in TOOLSETS["read"]), tool.name
        Draft202012Validator.check_schema(tool.input_schema)
        Draft202012Validator.check_schema(tool.output_schema)
        assert tool.output_schema["type"] == "object"
        for name, prop in tool.input_schema.get("properties", {}).items():
            assert prop.get("description"), f"{tool.name}.{name} has no description"
    by_name = {t.name: t for t in tools}
    search = by_name["search_pages"].input_schema["properties"]
    assert search["mode"]["enum"] == list(shared.SEARCH_MODES)
    assert search["lifecycle_status"]["anyOf"][0]["items"]["enum"] == list(shared.LIFECYCLE_STATUSES)
    assert search["actor_types"]["anyOf"][0]["items"]["enum"] == list(shared.ACTOR_TYPES)
    read = by_name["read_pages"].input_schema["properties"]
    assert read["projections"]["anyOf"][0]["items"]["enum"] == list(shared.PROJECTIONS)
    relation = by_name["link_pages"].input_schema["properties"]["relation_type"]
    assert relation["type"] == "string" and "enum" not in relation
    assert all(t in relation["description"] for t in shared.RECOMMENDED_RELATION_TYPES)
    hit = by_name["search_pages"].output_schema["properties"]["hits"]["items"]
    assert {"date", "highlights", "page_id", "revision_id", "namespace", "snippet"} <= set(hit["required"])


async def exercise(session: ClientSession, init: Any, seeded: dict) -> dict[str, Any]:
    """Everything a client does, checked as it goes; returns what the test checks against the store."""
    assert init.server_info.name == "pcp" and init.server_info.version == package_version()
    caps = init.capabilities
    assert caps.prompts is None and caps.tools is not None
    assert caps.resources is not None and not caps.resources.subscribe
    await session.send_ping()

    tools = (await session.list_tools()).tools
    check_listing(tools)
    schemas = {t.name: t.output_schema for t in tools}
    out: dict[str, Any] = {}
    for name, args in valid_args(seeded).items():
        result = await session.call_tool(name, args)
        assert not result.is_error, f"{name}: {text_of(result)}"
        assert text_of(result).strip() and result.structured_content is not None, name
        Draft202012Validator(schemas[name]).validate(result.structured_content)
        out[name] = result.structured_content
    for name, args in WRONG_ARGS.items():
        if args is None:
            continue
        result = await session.call_tool(name, args)
        text = text_of(result)
        assert result.is_error and text.startswith("invalid: ") and "\n" not in text, f"{name}: {text}"
    unknown = await session.call_tool("delete_page", {"page_id": seeded["a1"]["page_id"]})
    assert unknown.is_error and text_of(unknown).startswith("invalid: ")

    # search: next_cursor is the cursor of the next page
    first = await session.call_tool("search_pages", {"query": "", "mode": "temporal", "limit": 1})
    assert first.structured_content["next_cursor"]
    second = await session.call_tool("search_pages", {"query": "", "mode": "temporal", "limit": 1,
                                                      "cursor": first.structured_content["next_cursor"]})
    assert second.structured_content["hits"][0]["page_id"] != first.structured_content["hits"][0]["page_id"]

    # resources: the session's scopes, paged; pages and revisions through the templates
    listed = await session.list_resources()
    uris = [r.uri for r in listed.resources]
    assert listed.next_cursor  # paged
    while listed.next_cursor:
        listed = await session.list_resources(params=PaginatedRequestParams(cursor=listed.next_cursor))
        uris += [r.uri for r in listed.resources]
    assert "pcp://scope/project%3Aa" in uris and "pcp://scope/project%3Aa%2Fsub00" in uris
    assert len(uris) == len(set(uris)) == 1 + SUBSCOPES
    assert not any("project%3Ab" in u for u in uris)
    templates = (await session.list_resource_templates()).resource_templates
    assert {t.uri_template for t in templates} == {"pcp://page/{page_id}", "pcp://page/{page_id}@{revision_id}"}
    scope = (await session.read_resource("pcp://scope/project%3Aa")).contents[0].text
    assert seeded["a1"]["page_id"] in scope
    a1 = seeded["a1"]
    head = (await session.read_resource(f"pcp://page/{a1['page_id']}")).contents[0].text
    assert "Notes on compactness of spaces." in head
    exact = (await session.read_resource(f"pcp://page/{a1['page_id']}@{a1['revision_id']}")).contents[0].text
    assert a1["revision_id"] in exact
    for hidden in (f"pcp://page/{seeded['b1']['page_id']}", "pcp://scope/project%3Ab",
                   f"pcp://page/{a1['page_id']}@{seeded['b1']['revision_id']}"):
        with pytest.raises(Exception) as refused:
            await session.read_resource(hidden)
        message = str(refused.value)
        assert "SECRET" not in message and re.search(r"\b(not_found|forbidden): ", message), message
    out["last_search"] = (await session.call_tool("search_pages", LAST_SEARCH)).structured_content
    return out


def _failures(db: Path) -> list[tuple[str, str | None]]:
    with store.Store.open(db) as st:
        events = st.audit_log(principal=CLIENT, decision="failed", limit=100)["events"]
    return [(e["operation"], e["error_code"]) for e in events]


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_a_client_session_over_each_transport(transport, seeded, request):
    async def scenario():
        async with _session(transport, seeded, request) as (session, init):
            return await exercise(session, init, seeded)

    before = _failures(seeded["db"])
    out = anyio.run(scenario)
    grants = store.AccessSession.parse_grants([GRANT, SUB_GRANT])
    session = store.AccessSession.model_client(CLIENT, grants)
    with store.Store.open(seeded["db"], session=session) as st:  # the hit is the API's hit
        api = st.search_pages("compactness", mode="text", filters={"lifecycle_status": ["active"]},
                              context_id=f"mcp:{CLIENT}", limit=10)
    assert out["last_search"] == json.loads(json.dumps(api)) and api["hits"]
    # calls refused before the store (wrong arguments, an unknown tool) are audited under the client, as failures
    after = _failures(seeded["db"])  # newest first
    new = after[: len(after) - len(before)]
    refused = {name for name, args in WRONG_ARGS.items() if args is not None}
    assert {(name, "invalid") for name in refused} | {("unknown_tool", "invalid")} <= set(new)


def test_the_http_server_refuses_without_the_token_and_from_another_origin(http_server):
    url, token = http_server
    body = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    accept = {"Accept": "application/json, text/event-stream", "Authorization": f"Bearer {token}"}
    with httpx2.Client(timeout=30) as client:
        missing = client.post(url, json=body, headers={"Accept": accept["Accept"]})
        wrong = client.post(url, json=body, headers={**accept, "Authorization": "Bearer not-the-token"})
        foreign = client.post(url, json=body, headers={**accept, "Origin": "http://evil.example"})
        rebound = client.post(url, json=body, headers={**accept, "Host": "evil.example"})
    assert missing.status_code == wrong.status_code == 401
    assert "Bearer" in missing.headers["www-authenticate"] and "--show-token" in missing.text
    assert token not in missing.text + wrong.text
    assert foreign.status_code == 403 and rebound.status_code == 403


def _raw(db: Path, lines: list[dict[str, Any]]) -> tuple[list[str], str]:
    """Write every line at once and close stdin; everything the server wrote, line by line."""
    done = subprocess.run(_command(db), input="".join(json.dumps(x) + "\n" for x in lines), capture_output=True,
                          text=True, cwd=str(REPO), timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines(), done.stderr


def test_stdio_answers_every_request_before_exit_and_writes_only_json_rpc(seeded):
    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}}
    calls = [{"jsonrpc": "2.0", "id": i, "method": "tools/call",
              "params": {"name": "search_pages", "arguments": {"query": "compactness", "limit": 50}}}
             for i in range(1, 9)]
    calls += [{"jsonrpc": "2.0", "id": "list", "method": "tools/list"},
              {"jsonrpc": "2.0", "id": "res", "method": "resources/list"},
              {"jsonrpc": "2.0", "id": "ping", "method": "ping"},
              {"jsonrpc": "2.0", "id": "nope", "method": "tools/call", "params": {"name": "nope", "arguments": {}}}]
    out, err = _raw(seeded["db"], [init, {"jsonrpc": "2.0", "method": "notifications/initialized"}] + calls)
    messages = [json.loads(line) for line in out]  # every line is JSON ...
    assert all(m.get("jsonrpc") == "2.0" for m in messages)  # ... and JSON-RPC
    answered = {m["id"] for m in messages if "result" in m or "error" in m}
    assert answered == {0} | {c["id"] for c in calls}
    assert "Traceback" not in err


def test_ctrl_c_stops_the_stdio_server_at_once(seeded):
    proc = subprocess.Popen(_command(seeded["db"]), cwd=str(REPO), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    try:
        init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}}
        proc.stdin.write((json.dumps(init) + "\n").encode())  # type: ignore[union-attr]
        proc.stdin.flush()  # type: ignore[union-attr]
        assert json.loads(proc.stdout.readline())["id"] == 0  # type: ignore[union-attr]
        proc.send_signal(signal.SIGINT)  # stdin stays open: a graceful exit would wait on its reader for ever
        assert proc.wait(30) == 130
        assert b"interrupted" in proc.stderr.read()  # type: ignore[union-attr]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_the_word_lists_and_schema_copies_match_the_store():
    from store import reads

    from store import validate

    assert shared.ACTOR_TYPES == tuple(validate.ACTOR_TYPES)
    assert shared.SEARCH_MODES == tuple(reads.SEARCH_MODES)
    assert shared.PROJECTIONS == tuple(reads.PROJECTIONS)
    assert shared.LIFECYCLE_STATUSES == tuple(store.LIFECYCLE_STATUSES)
    assert shared.RECOMMENDED_RELATION_TYPES == tuple(store.RECOMMENDED_RELATION_TYPES)
    limits = store.LIMITS
    assert (mcp_schema.MAX_HITS, mcp_schema.MAX_IDS, mcp_schema.MAX_READ_CHARS, mcp_schema.MAX_QUERY_CHARS,
            mcp_schema.MAX_LIST) == (limits["max_hits"], limits["max_ids_per_read"], limits["max_chars_per_read"],
                                     limits["max_query_chars"], limits["max_list"])
    assert set(TOOL_INFO) == set(TOOLSETS["write"])


def test_initialize_needs_no_store_import():
    code = ("import sys; import pcp_tui.mcp.server as m; m.PcpMcp('/nonexistent', 'c', {'*': frozenset({'read'})}); "
            "print(sorted(n for n in sys.modules if n == 'store' or n.startswith('store.')))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=str(REPO), timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_a_model_server_never_creates_a_store(tmp_path, capsys, monkeypatch):
    from pcp_tui import cli

    missing = tmp_path / "nowhere" / "s.db"
    assert cli.main(["--db", str(missing), "mcp", "--client-id", CLIENT, "--grant", GRANT]) == 1
    monkeypatch.setenv("PCP_DB", str(missing))
    assert cli.main(["mcp", "--client-id", CLIENT, "--grant", GRANT, "--http"]) == 1
    assert cli.main(["mcp", "--show-token"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 3 and err.count(str(missing)) == 3 and "Traceback" not in err
    assert not missing.exists() and not missing.parent.exists()
    monkeypatch.delenv("PCP_DB")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    with pytest.raises(cli.CliError, match=r"No store at .* \(the default path\)"):
        cli.mcp_store_path(None)
    assert cli.main(["--db", str(missing), "write", "--namespace", "project:a", "--content", "x"]) == 0
    assert missing.is_file()  # the owner's writing commands create it on first use
    assert cli.mcp_store_path(str(missing)) == missing


def test_the_token_file_is_private_and_kept_until_replaced(tmp_path, capsys):
    from pcp_tui import cli

    db = tmp_path / "s.db"
    store.Store.open(db).close()
    assert cli.main(["--db", str(db), "mcp", "--show-token"]) == 0
    first = capsys.readouterr().out.strip()
    assert cli.main(["--db", str(db), "mcp", "--show-token"]) == 0
    assert capsys.readouterr().out.strip() == first and len(first) >= 40
    path = tmp_path / "s.db.mcp-token"
    assert path.read_text().strip() == first and (path.stat().st_mode & 0o777) == 0o600
    assert cli.main(["--db", str(db), "mcp", "--new-token"]) == 0
    second = capsys.readouterr().out.strip()
    assert second != first and path.read_text().strip() == second and (path.stat().st_mode & 0o777) == 0o600
    assert not [n for n in os.listdir(tmp_path) if n.endswith(".tmp")]  # no temporary file left behind


def test_the_readme_tool_table_shows_the_served_hints():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## Let models use the store (MCP)"):]
    rows = dict(re.findall(r"^\| `(\w+)` \| (yes \| no \| (?:yes|no)|no \| no \| (?:yes|no)) \|", section, re.M))
    assert set(rows) == set(TOOL_INFO)
    for name, (_, _, hints, _) in TOOL_INFO.items():
        shown = [part.strip() == "yes" for part in rows[name].split("|")]
        assert shown == [hints["read_only_hint"], hints["destructive_hint"], hints["idempotent_hint"]], name
    for client in ("Claude Desktop", "Claude Code", "Codex CLI", "Gemini CLI"):
        assert f"| {client}" in section
    assert "pcp mcp --http" in section and "--show-token" in section


def test_the_printed_http_address_takes_a_connection_at_once(seeded):
    """The address is printed once the socket listens: a client that connects the moment it reads the line is
    queued, never refused (it was refused while uvicorn was still starting: a failed CI run)."""
    import socket

    with serve_http(_command(seeded["db"], "--http", "--port", "0")) as url:
        port = int(re.search(r":(\d+)/mcp", url).group(1))  # type: ignore[union-attr]
        with socket.create_connection(("127.0.0.1", port), timeout=30):
            pass  # connected: not refused


def _ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # what a process started in the background (`cmd &`) inherits


def _stopped(proc: subprocess.Popen[str]) -> tuple[int, str]:
    """The exit code and stderr of `proc` once it ends (a Ctrl-C was sent); killed and failed after 20 s."""
    try:
        code = proc.wait(20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        raise AssertionError("pcp mcp --http served on after a Ctrl-C") from None
    return code, proc.stderr.read()  # type: ignore[union-attr]


@pytest.mark.parametrize("inherited", ["ignored", "default"])
def test_a_ctrl_c_the_moment_the_http_address_is_printed_stops_the_server(seeded, inherited):
    """A Ctrl-C that comes right after the address, before uvicorn has its own handler, stops the server at once,
    also when it was started in the background and so inherited SIGINT ignored: that Ctrl-C was lost and the
    server served on until the test killed it 30 s later (a slow CI run)."""
    env = {**os.environ, "PCP_TEST_STOP": "mcp-http-listening:1!INT"}  # the server sends it itself, there
    proc = subprocess.Popen(_command(seeded["db"], "--http", "--port", "0"), cwd=str(REPO), env=env,
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            preexec_fn=_ignore_sigint if inherited == "ignored" else None)
    code, err = _stopped(proc)
    assert "/mcp" in err.splitlines()[0]  # the address was printed first
    assert code == 130 and err.splitlines()[1:] == ["pcp: interrupted"]


def test_a_ctrl_c_once_the_http_server_serves_stops_it_with_130_also_started_in_the_background(seeded):
    """Started in the background (SIGINT ignored on entry), a Ctrl-C once it serves ends it as in a terminal:
    `pcp: interrupted` and 130 (it stopped with 0 and said nothing)."""
    proc = subprocess.Popen(_command(seeded["db"], "--http", "--port", "0"), cwd=str(REPO), stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, preexec_fn=_ignore_sigint)
    try:
        url = re.search(r"http://\S+/mcp", proc.stderr.readline()).group(0)  # type: ignore[union-attr]
        assert httpx2.get(url, timeout=30).status_code == 401  # answered: uvicorn serves
    finally:
        proc.send_signal(signal.SIGINT)
    code, err = _stopped(proc)
    assert code == 130 and err == "pcp: interrupted\n"
