"""Issue 12 item 9 over the real stdio server: a model suppresses and searches only in its own context."""

from __future__ import annotations

import sys
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, AsyncIterator

import anyio
import pytest

pytest.importorskip("mcp")

from mcp.client.session import ClientSession  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402

import store  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
GRANT = "project:a=search,read,list_scopes,suppress"


@asynccontextmanager
async def connect(db: Path, client_id: str, *grants: str) -> AsyncIterator[ClientSession]:
    args = ["-m", "pcp_tui.cli", "--db", str(db), "mcp", "--client-id", client_id, "--toolset", "write"]
    for grant in grants:
        args += ["--grant", grant]
    params = StdioServerParameters(command=sys.executable, args=args, cwd=str(REPO))
    with anyio.fail_after(30):
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                yield session


def text_of(result: Any) -> str:
    return "\n".join(block.text for block in result.content if getattr(block, "type", "") == "text")


def test_a_client_cannot_suppress_in_another_clients_or_the_owners_context(tmp_path):
    db = tmp_path / "store.db"
    with store.Store.open(db) as st:
        page = st.write_page("project:a", content="The quokka field notes.", facets={"title": "Quokka notes"})
        st.suppress_pages([page["page_id"]], "owner-ctx-other")  # an unrelated owner suppression stays as it is
    pid = page["page_id"]

    async def scenario() -> list[str]:
        seen = []
        async with connect(db, "client-a", GRANT) as a:
            for ctx in ("mcp:client-b", "owner-ctx"):
                await a.call_tool("suppress_pages", {"page_ids": [pid], "context_id": ctx})
            # a search naming another client's context is not that context: A's own suppressions apply
            seen.append(text_of(await a.call_tool("search_pages", {"query": "quokka", "context_id": "mcp:client-b"})))
        async with connect(db, "client-b", GRANT) as b:
            seen.append(text_of(await b.call_tool("search_pages", {"query": "quokka"})))
        return seen

    a_view, b_view = anyio.run(scenario)
    assert pid not in a_view  # A hid the page from its own searches
    assert pid in b_view  # B's searches are untouched
    with store.Store.open(db) as st:
        for ctx in ("owner-ctx", "mcp:client-b"):
            hits = st.search_pages("quokka", context_id=ctx)["hits"]
            assert pid in {x["page_id"] for x in hits}, ctx
        # the store keeps a model's contexts apart too (pcp --as-model, any caller of the Store)
        model = st.with_session(store.AccessSession.model_client("client-c", {"project:a": {"search", "suppress"}}))
        model.suppress_pages([pid], "owner-ctx")
        assert pid in {x["page_id"] for x in st.search_pages("quokka", context_id="owner-ctx")["hits"]}
        assert model.search_pages("quokka", context_id="owner-ctx")["hits"] == []
        model.unsuppress_pages([pid], "owner-ctx")
        assert pid in {x["page_id"] for x in model.search_pages("quokka", context_id="owner-ctx")["hits"]}
