"""A 100,000-page store: the app opens it and moves through it a window at a time, never loading it all.

How fast it opens is measured by bench/tui_bench.py (its first-window budget), not here."""

from __future__ import annotations

import pytest

from helpers import page_list, settle
from pcp_tui.widgets.inspector import Inspector
from pcp_tui.widgets.scope_tree import ScopeTree

SIZE = (120, 40)


@pytest.mark.slow
async def test_opens_and_navigates_100k_pages_by_windows(big_store_path, workdir):
    from store import Store

    from pcp_tui.app import PcpApp

    store = Store.open(big_store_path)
    app = PcpApp(store.path, store=store, config_folder=workdir / "config", theme="pcp-dark", cursor_blink=False,
                 use_pyperclip=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        pages = page_list(app)
        assert len(pages.rows) == 100 and pages.more  # one window, not 100,000 rows
        first = pages.rows[0]["page_id"]
        for _ in range(8):
            await pilot.press("pagedown")
        await settle(app, pilot)
        assert pages.cursor > 60
        loaded = len(pages.rows)
        assert 100 < loaded <= 400  # the next windows arrived as the cursor came near the end
        ids = [r["page_id"] for r in pages.rows]
        assert len(ids) == len(set(ids)) and ids[0] == first  # keyset windows neither repeat nor skip
        times = [r["sort_time"] for r in pages.rows]
        assert times == sorted(times, reverse=True)
        await pilot.press("end")  # the listing read from its other end: the oldest page, one window held
        await settle(app, pilot)
        oldest = store.list_pages(order="oldest", limit=1)["pages"][0]["page_id"]
        assert pages.current["page_id"] == oldest and len(pages.rows) <= 100
        times = [r["sort_time"] for r in pages.rows]
        assert times == sorted(times, reverse=True)
        assert app.screen.query_one(Inspector).page["page_id"] == pages.current["page_id"]
        await pilot.press("home")
        await settle(app, pilot)
        assert pages.cursor == 0 and pages.current["page_id"] == first
        # switch scope
        tree = app.screen.query_one(ScopeTree)
        other = next(n for g in tree.root.children for n in g.children if str(n.label).startswith("project:other"))
        tree.focus()
        tree.move_cursor(other)
        await pilot.press("enter")
        await settle(app, pilot)
        assert {r["namespace"] for r in pages.rows} == {"project:other"} and len(pages.rows) == 100
        # search (text mode: every word; auto is the default, see the report on its speed at this size)
        app.screen.set_search_mode("text")
        await pilot.press("0", "slash", *"topic 42", "enter")
        await settle(app, pilot)
        assert pages.rows and all("topic 42" in r["snippet"] for r in pages.rows)
        assert len(pages.rows) % 50 == 0 and len(pages.rows) <= 150 and pages.more  # search windows of 50
    store.close()
