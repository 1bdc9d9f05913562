"""A model client reads imported history: every vendored export, vault and agent transcript in one store, driven
through every tool by the official MCP SDK client over stdio and over streamable HTTP.

The SDK client itself checks each tool result's structuredContent against the tool's outputSchema (it raises on
a mismatch); every result is checked again here with a JSON Schema validator. Every page of the store is found
(a temporal search paged to its end), read with every projection, and its resource read; a 950,000-character
page is read whole in parts through `offset` until `next_offset` is null.
"""

from __future__ import annotations

import hashlib
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
from store import adapters  # noqa: E402
from pcp_tui.mcp.server import TOOLSETS  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "tests" / "data"
CLIENT = "real-data-client"
WRITABLE = "project:model"
GRANTS = ["*=search,read,list_scopes",
          f"{WRITABLE}=search,read,list_scopes,write,revise,link,ingest,suppress"]
PROJECTIONS = ["manifest", "payload", "source_spans", "relations", "facets", "history", "lifecycle"]
QUESTIONS = ["how does sourdough starter work?", "what did we decide about the staging cluster deployment?",
             "lorem ipsum dolor", "which files did the agent change?", "compactness", "紧致性的证明"]
LONG_CHARS = 950_000


def long_text() -> str:
    """950,000 characters in numbered lines, so that any lost or repeated part shows."""
    lines, size, n = [], 0, 0
    while size < LONG_CHARS:
        line = f"line {n:06d} gamma compact lemma tube cover alpha product\n"
        lines.append(line)
        size += len(line)
        n += 1
    return "".join(lines)[:LONG_CHARS - 5] + "LAST\n"


@pytest.fixture(scope="module")
def imported(tmp_path_factory) -> dict[str, Any]:
    db = tmp_path_factory.mktemp("real") / "store.db"
    exports = sorted((DATA / "exports").glob("*.json"))
    assert exports, "the vendored exports are missing"
    with store.Store.open(db) as st:
        for path in exports:
            importer = adapters.import_claude if path.name.startswith("claude-") else adapters.import_chatgpt
            importer(st, path)
        for vault in sorted((DATA / "exports").glob("vault-*")):
            adapters.import_markdown(st, vault)
        adapters.import_claude_code(st, DATA / "agents" / "claude-code")
        adapters.import_codex(st, DATA / "agents" / "codex" / "codemie-code")
        adapters.import_gemini(st, DATA / "agents" / "gemini" / "codemie-code" / "tmp")
        text = long_text()
        long = st.write_page(WRITABLE, content=text, facets={"title": "A very long page"})
        note = st.write_page(WRITABLE, content="A note the model may revise.", facets={"title": "Model note"})
        namespaces = [r[0] for r in st._db.execute_sql(
            "SELECT DISTINCT s.namespace FROM page p JOIN scope s ON s.id = p.scope_id").fetchall()]
    kinds = {ns.split(":")[0] for ns in namespaces}
    assert {"conversation", "notes", "agent", "project"} <= kinds, kinds
    return {"db": db, "long": long, "long_digest": hashlib.sha256(text.encode()).hexdigest(), "note": note}


def _command(db: Path, *extra: str) -> list[str]:
    grants = [part for g in GRANTS for part in ("--grant", g)]
    return [sys.executable, "-m", "pcp_tui.cli", "--db", str(db), "mcp", "--client-id", CLIENT, *grants,
            "--toolset", "write", *extra]


@asynccontextmanager
async def stdio_session(db: Path) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(command=sys.executable, args=_command(db)[1:], cwd=str(REPO))
    with anyio.fail_after(300):
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                yield session


@asynccontextmanager
async def http_session(db: Path) -> AsyncIterator[ClientSession]:
    with serve_http(_command(db, "--http", "--port", "0")) as url:
        token = Path(f"{db}.mcp-token").read_text().strip()
        with anyio.fail_after(300):
            async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}) as client:
                async with streamable_http_client(url, http_client=client) as streams:
                    async with ClientSession(streams[0], streams[1]) as session:
                        await session.initialize()
                        yield session


def text_of(result: Any) -> str:
    return "\n".join(block.text for block in result.content if getattr(block, "type", "") == "text")


class Client:
    """Calls tools through the SDK session and checks each result against the tool's outputSchema."""

    def __init__(self, session: ClientSession, schemas: dict[str, dict[str, Any]]) -> None:
        self.session, self.schemas = session, schemas
        self.called: set[str] = set()

    async def ok(self, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        result = await self.session.call_tool(tool, args)  # the SDK raises on structuredContent off its schema
        assert not result.is_error, f"{tool} {args}: {text_of(result)}"
        assert result.structured_content is not None and text_of(result).strip(), tool
        Draft202012Validator(self.schemas[tool]).validate(result.structured_content)
        self.called.add(tool)
        return result.structured_content

    async def refused(self, tool: str, args: dict[str, Any]) -> str:
        result = await self.session.call_tool(tool, args)
        assert result.is_error, f"{tool} {args} was not refused"
        return text_of(result)


async def journey(session: ClientSession, imported: dict[str, Any], pages: int) -> None:
    tools = (await session.list_tools()).tools
    assert {t.name for t in tools} == set(TOOLSETS["write"])
    for tool in tools:
        assert tool.input_schema.get("additionalProperties") is False, tool.name
    client = Client(session, {t.name: t.output_schema for t in tools})
    await client.ok("describe", {})

    scopes, cursor = [], None
    while True:
        listed = await client.ok("list_scopes", {"limit": 50, **({"cursor": cursor} if cursor else {})})
        scopes += [s["namespace"] for s in listed["scopes"]]
        cursor = listed["next_cursor"]
        if cursor is None:
            break
    assert len(scopes) == len(set(scopes)) and WRITABLE in scopes

    # Every page: a temporal search paged to its end, each hit read with every projection.
    page_ids: list[str] = []
    cursor = None
    while True:
        found = await client.ok("search_pages", {"query": "", "mode": "temporal", "limit": 50,
                                                 **({"cursor": cursor} if cursor else {})})
        page_ids += [h["page_id"] for h in found["hits"]]
        cursor = found["next_cursor"]
        if cursor is None:
            break
    assert len(set(page_ids)) == len(page_ids) == pages, "a page of the store was not found"
    with_locator = 0
    for start in range(0, len(page_ids), 20):
        batch = page_ids[start:start + 20]
        read = await client.ok("read_pages", {"ids": batch, "projections": PROJECTIONS, "max_chars": 64_000})
        assert [r["requested_id"] for r in read["results"]] == batch
        for item in read["results"]:
            assert "error" not in item, item
            with_locator += sum(isinstance(ref.get("locator"), dict) for ref in item["revision"]["source_refs"])
    assert with_locator > 100, "the imported pages carry their locators"

    asked = 0
    for question in QUESTIONS:  # as a model asks: a question, then each hit read, one projection at a time
        hits = (await client.ok("search_pages", {"query": question, "limit": 20}))["hits"]
        asked += bool(hits)
        for hit in hits:
            for projection in PROJECTIONS:
                await client.ok("read_pages", {"ids": [hit["revision_id"]], "projections": [projection]})
    assert asked >= 4, "most questions find something in the imported history"
    for mode in ("text", "exact"):
        await client.ok("search_pages", {"query": "compact", "mode": mode, "limit": 50})
    graph = await client.ok("search_pages", {"query": page_ids[-1], "mode": "graph"})
    assert isinstance(graph["hits"], list)

    # The long page, whole, in parts.
    long = imported["long"]
    parts, offset, calls = [], None, 0
    while True:
        args: dict[str, Any] = {"ids": [long["revision_id"]], "max_chars": 64_000}
        if offset is not None:
            args["offset"] = offset
        item = (await client.ok("read_pages", args))["results"][0]
        parts.append(item["revision"]["payload"]["content"])
        assert item["content_chars"] == LONG_CHARS
        calls += 1
        offset = item["next_offset"]
        if offset is None:
            assert item["truncated"] is False
            break
        assert item["truncated"] is True and offset == item["offset"] + len(parts[-1])
    whole = "".join(parts)
    assert calls == -(-LONG_CHARS // 64_000) and hashlib.sha256(whole.encode()).hexdigest() == imported["long_digest"]
    refused = await client.refused("read_pages", {"ids": [long["page_id"], imported["note"]["page_id"]], "offset": 5})
    assert refused.startswith("invalid: ") and "one id" in refused

    # Resources: the scopes listed page by page, and each read; every page resource of the hits read.
    uris, cursor = [], None
    while True:
        listed_resources = await session.list_resources(params=PaginatedRequestParams(cursor=cursor))
        uris += [str(r.uri) for r in listed_resources.resources]
        cursor = listed_resources.next_cursor
        if cursor is None:
            break
    assert len(uris) == len(scopes)
    for uri in uris:
        contents = (await session.read_resource(uri)).contents
        assert contents and contents[0].text.startswith("scope ")
    assert (await session.list_resource_templates()).resource_templates
    for page_id in page_ids[:60]:
        contents = (await session.read_resource(f"pcp://page/{page_id}")).contents
        assert page_id in contents[0].text

    # The writing tools, in the one writable scope.
    written = await client.ok("write_page", {"namespace": WRITABLE, "content": "the model's own note",
                                             "title": "From the model", "idempotency_key": "real-data-write"})
    note = imported["note"]
    await client.ok("revise_page", {"page_id": note["page_id"], "expected_revision_id": note["revision_id"],
                                    "content": "A revised note.", "idempotency_key": "real-data-revise"})
    await client.ok("link_pages", {"from_id": written["page_id"], "relation_type": "related_to",
                                   "to_id": page_ids[0]})
    await client.ok("ingest_event", {"namespace": WRITABLE, "idempotency_key": "real-data-event",
                                     "content": "a tool said 42", "source_uris": ["file:///tmp/out.txt"]})
    await client.ok("suppress_pages", {"page_ids": [written["page_id"]], "reason": "a test"})
    await client.ok("recommend_tombstone", {"page_id": written["page_id"], "reason": "a test"})
    assert client.called == set(TOOLSETS["write"])

    # An argument the tool does not take is refused by name, and nothing is written.
    refused = await client.refused("ingest_event", {"namespace": WRITABLE, "idempotency_key": "real-data-bad",
                                                    "event": {"content": "x"}})
    assert refused.startswith("invalid: ") and "`event`" in refused and "\n" not in refused
    refused = await client.refused("search_pages", {"query": "compactness", "scope": [WRITABLE]})
    assert "`scope`" in refused and "scopes" in refused


def _pages_in(db: Path) -> int:
    """The pages this client's searches show: all but those it suppressed in its own context."""
    with store.Store.open(db) as st:
        return st._db.execute_sql(
            "SELECT COUNT(*) FROM page WHERE id NOT IN (SELECT page_id FROM suppression)").fetchone()[0]


def test_a_model_reads_all_imported_history_over_stdio(imported):
    before = _pages_in(imported["db"])

    async def scenario() -> None:
        async with stdio_session(imported["db"]) as session:
            await journey(session, imported, before)

    anyio.run(scenario)
    assert _pages_in(imported["db"]) - before == 1  # the write (then suppressed) and the event


def test_a_model_reads_all_imported_history_over_http(imported):
    pages = _pages_in(imported["db"])

    async def scenario() -> None:
        async with http_session(imported["db"]) as session:
            await journey(session, imported, pages)

    anyio.run(scenario)
