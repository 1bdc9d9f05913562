"""Bad input over MCP (issue 12 items 23, 25): every call gets an answer that starts with its contract code."""

from __future__ import annotations

import pytest

pytest.importorskip("mcp")

from test_mcp_server import WRITE_GRANT, connect, fails, run, seeded  # noqa: E402,F401

EDGES = ["0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59-14:00"]


def test_edge_timestamps_are_invalid_over_mcp(seeded):  # noqa: F811
    page = seeded["a1"]["page_id"]

    async def scenario():
        texts = []
        async with connect(seeded["db"], WRITE_GRANT, toolset="write") as s:
            for edge in EDGES:
                texts.append(await fails(s, "search_pages", {"query": "compactness", "created_after": edge}))
                texts.append(await fails(s, "ingest_event", {"namespace": "project:a", "idempotency_key": "k-" + edge,
                                                             "content": "event", "observed_at": edge}))
                texts.append(await fails(s, "suppress_pages", {"page_ids": [page], "expires_at": edge}))
        return texts

    for text in run(scenario):
        assert text.startswith("invalid: ") and "outside the years 1 to 9999" in text, text


def test_a_long_query_over_mcp_is_refused_as_limit(seeded):  # noqa: F811
    async def scenario():
        async with connect(seeded["db"], WRITE_GRANT, toolset="write") as s:
            return await fails(s, "search_pages", {"query": "compactness " * 100_000})

    text = run(scenario)
    assert text.startswith("limit: ") and len(text) < 300
