"""What the app shows is true: nothing erased or unselected stays on screen, and store changes show up."""

from __future__ import annotations

from textual.widgets import OptionList, Static, Tree

from helpers import page_list, prompts, select_page, settle, type_into, until
from pcp_tui.widgets.document import Document
from pcp_tui.widgets.inspector import TABS, Inspector

SIZE = (120, 40)


def inspector_text(app) -> str:
    """Everything the inspector's tabs hold now (drawn or not), as one string."""
    inspector = app.screen.query_one(Inspector)
    parts: list[str] = []
    for widget in inspector.query("*"):
        if isinstance(widget, Document):
            parts.append(widget.text)
        elif isinstance(widget, Static):
            parts.append(str(widget.render()))
        elif isinstance(widget, OptionList):
            parts += prompts(widget)
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


async def test_another_process_writing_shows_up_in_the_list_and_the_tree(demo_store, make_app):
    """Issue 13.5: a second Store (another process: the CLI, a model over MCP) writes while the app runs."""
    from store import Store

    from pcp_tui.widgets.scope_tree import ScopeTree

    store, refs = demo_store
    app = make_app(store, watch_interval=0.05)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await select_page(app, pilot, refs["alpha-bib"])
        other = Store.open(store.path)
        try:
            written = other.write_page("project:elsewhere", content="# From the other process\n\nHello.")
            assert await until(pilot, lambda: any(r["page_id"] == written["page_id"] for r in page_list(app).rows))
            tree = app.screen.query_one(ScopeTree)
            assert await until(pilot, lambda: "project:elsewhere" in str([str(n.label) for n in tree_nodes(tree)]))
            assert page_list(app).current["page_id"] == refs["alpha-bib"]  # the cursor stayed on its page
            other.archive_page(refs["alpha-bib"], "archived by the other process")
            # the list shows active pages: the archived one leaves it, and the inspector follows the cursor
            assert await until(pilot, lambda: all(r["page_id"] != refs["alpha-bib"] for r in page_list(app).rows))
            other.delete_scope("project:elsewhere", "erased by the other process")
            assert await until(pilot, lambda: all(r["page_id"] != written["page_id"] for r in page_list(app).rows))
            assert await until(pilot, lambda: "project:elsewhere" not in str([str(n.label) for n in tree_nodes(tree)]))
        finally:
            other.close()


def tree_nodes(tree):
    stack, out = [tree.root], []
    while stack:
        node = stack.pop()
        out.append(node)
        stack += list(node.children)
    return out


async def test_the_audit_log_tab_and_the_basket_follow_the_store(demo_store, make_app):
    from store import Store

    from textual.widgets import DataTable

    store, refs = demo_store
    page = refs["alpha-bib"]
    app = make_app(store, watch_interval=0.05)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await select_page(app, pilot, page)
        await pilot.press("space")
        await pilot.press("f2")
        await settle(app, pilot)
        table = app.screen.query_one("#audit-table", DataTable)
        assert "revise_page" not in str(table.get_row_at(0))
        other = Store.open(store.path)
        try:
            head = other.read_pages([page])["results"][0]["revision"]
            other.revise_page(page, head["revision_id"], content="new text", facets={"title": "Renamed elsewhere"})
            assert await until(pilot, lambda: "revise_page" in str(table.get_row_at(0)))  # newest first
            assert await until(pilot, lambda: app.basket[0]["title"] == "Renamed elsewhere")
            other.delete_page(page, "erased elsewhere")
            assert await until(pilot, lambda: app.basket == [])
        finally:
            other.close()


async def test_a_tombstone_from_the_reviews_leaves_no_pending_review_on_screen(demo_store, make_app):
    store, refs = demo_store
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert "1 tombstone recommendation" in str(app.screen.query_one("#status-line").render())
        await pilot.press("f4")
        await settle(app, pilot)
        await pilot.press("t", "ctrl+s")
        await settle(app, pilot)
        table = app.screen.query_one("#reviews-table")
        assert table.row_count == 1 and "No pending recommendations." in str(table.get_row_at(0))
        await pilot.press("escape")
        await settle(app, pilot)
        assert "recommendation" not in str(app.screen.query_one("#status-line").render())


async def test_at_80x24_the_tree_folds_away_and_the_delete_dialog_shows_the_id_and_its_field(demo_store, make_app):
    """Issue 13.11: at 80x24 the delete dialog hid the id that must be typed."""
    from pcp_tui.widgets.scope_tree import ScopeTree

    store, refs = demo_store
    page = refs["alpha-proof"]
    app = make_app(store)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        tree = app.screen.query_one(ScopeTree)
        assert not tree.display and page_list(app).size.width >= 30
        await pilot.press("ctrl+b")
        await until(pilot, lambda: tree.display, "the tree shown")
        await pilot.press("ctrl+b")
        await select_page(app, pilot, page)
        await pilot.press("D")
        await settle(app, pilot)
        screen = app.screen.region
        for selector in ("#typed-label", "#typed", "#reason", "#confirm", "#cancel"):
            widget = app.screen.query_one(selector)
            assert screen.contains_region(widget.region) and widget.region.height > 0, selector
        label = app.screen.query_one("#typed-label")
        assert label.size.height >= 2 and page in str(label.render())  # wrapped, never cut


async def test_escape_sequences_in_stored_text_never_reach_the_terminal(demo_store, make_app):
    """A page (an import, a model's write) with ESC ] 2 (window title), ESC ] 52 (clipboard), ESC [ 2 J: drawn as
    visible symbols in the list, the inspector's content and its diff, never as control characters."""
    from pcp_tui.widgets.diff import DiffView
    from pcp_tui.widgets.scope_tree import ScopeTree

    store, refs = demo_store
    evil = "\x1b]2;PWNED\x07 \x1b]52;c;ZXZpbA==\x07 \x1b[2J\x9b31m"
    first = store.write_page("user:me", content=f"# Title {evil}\n\nbody {evil}", media_type="text/markdown")
    store.revise_page(first["page_id"], first["revision_id"], content=f"# Title {evil}\n\nbody {evil} more", media_type="text/markdown")
    store.write_page("user:x", content="a page in a scope whose name carries escapes")
    # New names with control characters are refused now (store/names.py); a store from before may hold one.
    store._db.execute_sql("UPDATE scope SET namespace = ? WHERE namespace = 'user:x'", (f"user:x{evil}",))
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        pages = page_list(app)
        drawn = [app.screen.query_one(ScopeTree).render_line(y).text for y in range(12)]
        await select_page(app, pilot, first["page_id"])
        drawn += [pages.render_line(y).text for y in range(pages.size.height)]
        drawn += app.screen.query_one("#content-view", Document).drawn_lines
        drawn.append(str(app.screen.query_one("#inspector-title", Static).render()))
        await pilot.press("2")
        await settle(app, pilot)
        drawn.append(app.screen.query_one(DiffView).drawn_text)
        text = "\n".join(drawn)
        assert "Title" in text and "␛]2;PWNED␇" in text and "more" in text and "user:x␛]2;PWNED" in text
        bad = [line for line in drawn if any(ord(c) < 32 and c not in "\t\n" or 0x7F <= ord(c) < 0xA0 for c in line)]
        assert not bad, bad
