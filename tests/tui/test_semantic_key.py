"""Issue 34 item 5 in the app: `ctrl+g` turns the store's semantic channel on and off (the same switch as
`pcp semantic`), says so, and the list of a search is ranked again in the new order; the list's status line says
`search (auto+semantic)` while its hits are re-ordered by meaning, `search (auto)` when not."""

from __future__ import annotations

from helpers import list_status, page_list, said, settle, until


async def test_ctrl_g_turns_the_semantic_channel_on_and_off_and_the_list_follows(zebras, make_app):
    app = make_app(zebras)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        await pilot.press("slash", *"where do zebras go when it is dry?", "escape")
        await until(pilot, lambda: page_list(app).has_focus and len(page_list(app).rows) == 4, "the search's hits")
        await settle(app, pilot)
        assert "search (auto) " in list_status(app)
        await pilot.press("ctrl+g")
        await until(pilot, lambda: any(s.startswith("On: auto search re-orders") for s in said(app)), "on, said")
        assert zebras.semantic_status()["on"] is True
        expected = [h["page_id"] for h in zebras.search_pages("where do zebras go when it is dry?")["hits"]]
        assert len(expected) == 4
        await until(pilot, lambda: [r["page_id"] for r in page_list(app).rows] == expected, "the re-ordered list")
        await until(pilot, lambda: "search (auto+semantic) " in list_status(app), "the status line says so")
        await pilot.press("ctrl+g")
        await until(pilot, lambda: any(s.startswith("Off: auto search ranks") for s in said(app)), "off, said")
        assert zebras.semantic_status()["on"] is False
        plain = [h["page_id"] for h in zebras.search_pages("where do zebras go when it is dry?")["hits"]]
        assert plain != expected  # the channel did re-order: the list followed a change, not a no-op
        await until(pilot, lambda: [r["page_id"] for r in page_list(app).rows] == plain, "the plain order again")
        await until(pilot, lambda: "search (auto) " in list_status(app), "the status line says plain auto again")
        await settle(app, pilot)
