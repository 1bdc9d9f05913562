"""Issue 28 over the real stdio server: a model client sees an imported conversation's title beside its
scope's neutral name only where it may read, and never in the stored name."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import anyio
import pytest

pytest.importorskip("mcp")

from mcp.client.session import ClientSession  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402

import store  # noqa: E402
from store.adapters import import_chatgpt  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
EXPORT = REPO / "tests" / "data" / "exports" / "chatgpt-danny-avila-LibreChat-1.json"


async def scopes_seen(db: Path, grant: str) -> list[dict]:
    args = ["-m", "pcp_tui.cli", "--db", str(db), "mcp", "--client-id", "titles", "--grant", grant]
    params = StdioServerParameters(command=sys.executable, args=args, cwd=str(REPO))
    with anyio.fail_after(30):
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                result = await session.call_tool("list_scopes", {"limit": 100})
                assert not result.is_error, result
                return list(result.structured_content["scopes"])


def test_a_model_sees_the_title_only_where_it_may_read(tmp_path):
    db = tmp_path / "store.db"
    with store.Store.open(db) as st:
        import_chatgpt(st, EXPORT)
        titles = {s["namespace"]: s["title"] for s in st.list_scopes(limit=100)["scopes"] if s.get("title")}
    assert titles
    listed = anyio.run(scopes_seen, db, "conversation:*=list_scopes")
    reading = anyio.run(scopes_seen, db, "conversation:*=list_scopes,read")
    assert {s["namespace"] for s in listed} == set(titles) and all("title" not in s for s in listed)
    assert {s["namespace"]: s.get("title") for s in reading} == titles
    for s in reading:
        assert re.fullmatch(r"ChatGPT conversation, (\d{4}-\d\d-\d\d|undated)", s["display_name"]), s
