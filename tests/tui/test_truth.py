"""What the app shows is true: nothing erased or unselected stays on screen, and store changes show up."""

from __future__ import annotations

from textual.widgets import Markdown, OptionList, Static, Tree

from helpers import page_list, select_page, settle, type_into
from pcp_tui.widgets.inspector import TABS, Inspector

SIZE = (120, 40)


def inspector_text(app) -> str:
    """Everything the inspector's tabs hold now (drawn or not), as one string."""
    inspector = app.screen.query_one(Inspector)
    parts: list[str] = []
    for widget in inspector.query("*"):
        if isinstance(widget, Markdown):
            parts.append(widget.source)
        elif isinstance(widget, Static):
            parts.append(str(widget.render()))
        elif isinstance(widget, OptionList):
            parts += [str(widget.get_option_at_index(i).prompt) for i in range(widget.option_count)]
        elif isinstance(widget, Tree):
            stack = [widget.root]
            while stack:
                node = stack.pop()
                parts.append(str(node.label))
                stack += list(node.children)
    return "\n".join(parts)


async def visit_every_tab(app, pilot) -> None:
    for n, _ in enumerate(TABS, 1):
        await pilot.press(str(n))
        await settle(app, pilot)
    await pilot.press("1")


async def test_no_match_clears_every_tab(demo_store, make_app):
    store, refs = demo_store
    page = refs["alpha-proof"]
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await select_page(app, pilot, page)
        await visit_every_tab(app, pilot)
        assert page in inspector_text(app)
        await type_into(app, pilot, "#search", "zzqx")
        await pilot.press("enter")
        await settle(app, pilot)
        assert page_list(app).rows == []
        text = inspector_text(app)
        assert "No page selected." in text
        assert page not in text and page[-6:] not in text and "紧致" not in text, text


async def test_an_erased_page_leaves_every_tab_and_the_basket(demo_store, make_app):
    store, refs = demo_store
    page = refs["me-reading"]
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await type_into(app, pilot, "#search", "WAL mode documentation")  # one hit: the list is empty after the delete
        await pilot.press("enter")
        await settle(app, pilot)
        assert [r["page_id"] for r in page_list(app).rows] == [page]
        await select_page(app, pilot, page)
        await pilot.press("space")  # into the basket (the cursor stays on the only row)
        await visit_every_tab(app, pilot)
        assert app.basket and page in inspector_text(app)
        await pilot.press("D")
        await settle(app, pilot)
        await pilot.press(*page[-6:], "enter", "enter")
        await settle(app, pilot)
        await pilot.press("escape")
        await settle(app, pilot)
        assert page_list(app).rows == [] and app.basket == []
        text = inspector_text(app)
        assert page not in text and "Reading list" not in text, text
