"""An MCP read and an MCP search hit show the same title, the one the store computes (no heading marks)."""

from __future__ import annotations

import pytest

pytest.importorskip("mcp")

from pcp_tui.mcp.format import format_hits, format_read  # noqa: E402
from store import Store  # noqa: E402


def test_read_and_search_show_the_stores_title(tmp_path):
    with Store.open(tmp_path / "s.db") as st:
        page = st.write_page("project:t", content="# Thesis outline\n\nthe outline of the thesis")
        read = format_read(st.read_pages([page["page_id"]]), 16_000)
        hits = format_hits(st.search_pages("outline"), "outline")
    assert read.splitlines()[0] == "=== Thesis outline"
    assert hits.splitlines()[1] == "[1] Thesis outline"
