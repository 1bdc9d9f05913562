"""Enter on a hit opens it: the keys go to the page in the inspector (walk13: Enter focused the tabbed container,
which takes no focus, so nothing happened, and the next esc cleared the search); esc there goes back to the list
with the search kept, and a second esc clears the search (from the list, as before)."""

from __future__ import annotations

from helpers import page_list, settle, until

from pcp_tui.widgets.document import Document
from pcp_tui.widgets.inspector import Inspector


async def test_enter_opens_a_hit_and_esc_goes_back_to_the_hits(demo_store, make_app):
    store, refs = demo_store
    app = make_app(store)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        screen = app.screen
        await pilot.press("slash", *"proof", "down", "down")
        await until(pilot, lambda: page_list(app).has_focus and len(page_list(app).rows) > 1, "the hits")
        await settle(app, pilot)
        chosen = page_list(app).current["page_id"]
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.focused, Document), "the page's content to take the keys")
        inspector = screen.query_one(Inspector)
        assert inspector.page_id == chosen and app.focused in inspector.query(Document)
        await settle(app, pilot)
        await pilot.press("escape")
        await until(pilot, lambda: page_list(app).has_focus, "esc to go back to the list")
        await settle(app, pilot)
        assert screen.query_text == "proof" and page_list(app).current["page_id"] == chosen
        await pilot.press("4", "enter")  # another tab open: Enter goes into that tab
        await until(pilot, lambda: app.focused is not None and inspector in app.focused.ancestors, "into the tab")
        assert screen.query_one("#tabs").active == "relations"
        await pilot.press("escape", "escape")
        await until(pilot, lambda: screen.query_text == "" and page_list(app).has_focus, "the search to clear")
        await settle(app, pilot)
