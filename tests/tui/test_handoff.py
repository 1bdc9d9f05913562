"""Handoff from the app: basket, preview, copy (clipboard + ledger), continue a chat, the ledger per page."""

from __future__ import annotations

from helpers import page_list, select_page, settle, type_into, until
from pcp_tui.screens.confirm import ConfirmScreen
from pcp_tui.screens.handoff import HandoffScreen

SIZE = (120, 40)


async def _basket(app, pilot, *page_ids):
    for page_id in page_ids:
        await select_page(app, pilot, page_id)
        await pilot.press("space")
    await settle(app, pilot)


async def test_copy_puts_the_bundle_on_the_clipboard_and_records_the_ledger(demo_store, make_app):
    store, refs = demo_store
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await _basket(app, pilot, refs["alpha-outline"], refs["alpha-proof"])
        assert [b["page_id"] for b in app.basket] == [refs["alpha-outline"], refs["alpha-proof"]]
        assert refs["alpha-outline"] in page_list(app).marked
        await pilot.press("f3")
        await settle(app, pilot)
        assert isinstance(app.screen, HandoffScreen)
        await pilot.press("ctrl+r")
        await settle(app, pilot)
        summary = str(app.screen.query_one("#preview-summary").render())
        assert "bytes" in summary and "tokens (estimated)" in summary and "2 entries" in summary
        await type_into(app, pilot, "#label", "Claude: thesis")
        await pilot.press("ctrl+y")
        await settle(app, pilot)
        ledger = store.handoffs(label="Claude: thesis")["handoffs"]
        assert len(ledger) == 1
        assert app.clipboard.rstrip().endswith(f"sha256:{ledger[0]['digest'].split(':')[-1]}")
        assert refs["alpha-proof"] in app.clipboard
        shown = str(app.screen.query_one("#copy-result").render())
        assert "Sent to the terminal (OSC 52)" in shown and "Copied" not in shown.split("\n")[-1]
        assert ledger[0]["handoff_id"] in shown
        assert f"file {store.path.parent.resolve()}" in shown or "file handoffs" in shown, shown  # where the file is
        # which chats saw this page?
        basket = app.screen.query_one("#basket")
        basket.focus()
        basket.highlighted = 1
        await settle(app, pilot)
        assert "Chats that saw" in str(app.screen.query_one("#ledger-note").render())
        table = app.screen.query_one("#ledger-table")
        assert table.row_count == 1
        # a continuation carries only what changed since: the count is of new entries (a page sent in an earlier
        # handoff of the chat is in the delete plan's "handoffs touched", not in this column)
        assert [str(c.label) for c in table.columns.values()][4] == "new entries"


async def test_continue_a_chat_copies_only_the_continuation(demo_store, make_app):
    store, refs = demo_store
    store.copy(ids=[refs["garden-readme"]], label="ChatGPT: garden")
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await _basket(app, pilot, refs["garden-decision"])
        await pilot.press("f3")
        await settle(app, pilot)
        await type_into(app, pilot, "#label", "ChatGPT: garden")
        await pilot.press("ctrl+o")
        await settle(app, pilot)
    assert app.clipboard.startswith("continues pcp-bundle sha256:")
    assert refs["garden-decision"] in app.clipboard and refs["garden-readme"] not in app.clipboard
    assert len(store.handoffs(label="ChatGPT: garden")["handoffs"]) == 2


async def test_mixed_scopes_warn_and_ask_before_copying(demo_store, make_app):
    store, refs = demo_store
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await _basket(app, pilot, refs["alpha-outline"], refs["me-prefs"])
        await pilot.press("f3")
        await settle(app, pilot)
        await pilot.press("ctrl+r")
        await settle(app, pilot)
        assert "⚠" in str(app.screen.query_one("#preview-summary").render())
        await type_into(app, pilot, "#label", "Mixed chat")
        await pilot.press("ctrl+y")
        await settle(app, pilot)
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("n")  # no copy
        await settle(app, pilot)
        assert store.handoffs(label="Mixed chat")["handoffs"] == []
        await pilot.press("ctrl+y")
        await settle(app, pilot)
        await pilot.press("y")
        await settle(app, pilot)
    assert len(store.handoffs(label="Mixed chat")["handoffs"]) == 1


async def test_a_tombstoned_page_leaves_the_basket_and_cannot_go_in(demo_store, make_app):
    """The tombstone dialog says a tombstoned page is withdrawn from every handoff bundle: one tombstoned while
    in the basket (here or by another process) leaves it with a notice, and `space` on one says why it is not
    put in."""
    store, refs = demo_store
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await _basket(app, pilot, refs["alpha-bib"], refs["alpha-proof"])
        assert len(app.basket) == 2
        store.tombstone_page(refs["alpha-bib"], "withdrawn in a test")
        app.announce_change(refs["alpha-bib"], external=True)  # as the store watcher does
        await settle(app, pilot)
        assert [b["page_id"] for b in app.basket] == [refs["alpha-proof"]]
        assert any("Left the basket" in n.message and "Bibliography" in n.message for n in app._notifications)
        await pilot.press("f")  # status: all, then archived, superseded, tombstoned
        for _ in range(4):
            if app.screen.status == "tombstoned":
                break
            await pilot.press("f")
        await settle(app, pilot)
        assert app.screen.status == "tombstoned"
        await select_page(app, pilot, refs["alpha-bib"])
        await pilot.press("space")
        await settle(app, pilot)
        assert [b["page_id"] for b in app.basket] == [refs["alpha-proof"]]
        assert any("withdrawn from handoff bundles" in n.message for n in app._notifications)


def _lines(widget) -> list[str]:
    """The text of a widget's rows as drawn at its size (wrapped as on screen)."""
    from textual.geometry import Region

    return [strip.text for strip in widget.render_lines(Region(0, 0, widget.size.width, widget.size.height))]


async def test_the_basket_label_fits_at_80_and_160_columns(demo_store, make_app):
    store, _ = demo_store
    for size in ((80, 24), (160, 48)):
        app = make_app(store)
        async with app.run_test(size=size) as pilot:
            await settle(app, pilot)
            await pilot.press("f3")
            await settle(app, pilot)
            label = app.screen.query_one("#basket-label")
            drawn = " ".join(line.strip() for line in _lines(label))
            assert drawn.startswith("Basket (") and drawn.endswith(")"), (size, drawn)
            assert app.screen.query_one("#basket-pane").region.contains_region(label.region), size


async def test_after_a_copy_at_80x24_the_basket_stays_in_sight_and_the_result_reads_in_full(demo_store, make_app):
    from textual.widgets import Static

    store, refs = demo_store
    app = make_app(store)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await _basket(app, pilot, refs["alpha-outline"])
        await pilot.press("f3")
        await settle(app, pilot)
        await pilot.press("ctrl+r")
        await settle(app, pilot)
        await type_into(app, pilot, "#label", "Claude: thesis")
        await pilot.press("ctrl+y")
        await settle(app, pilot)
        screen = app.screen
        handoff = store.handoffs(label="Claude: thesis")["handoffs"][0]
        basket = screen.query_one("#basket")
        assert basket.content_region.height >= 3, basket.content_region  # a few rows of the list, not 0
        assert screen.region.contains_region(basket.region)
        assert any("1. Thesis outline" in line for line in _lines(basket))
        result = screen.query_one("#copy-result", Static)
        drawn = _lines(result)
        width = result.size.width
        # Every word that fits the width is on one line (ids are not broken); the whole result is laid out.
        for word in str(result.render()).split():
            if len(word) <= width:
                assert any(word in line for line in drawn), (word, drawn)
        assert handoff["handoff_id"] + ":" in " ".join(drawn) and "nothing confirms it did." in " ".join(drawn)
        scroll = screen.query_one("#copy-scroll")  # what does not fit scrolls, within the screen
        assert screen.region.contains_region(scroll.region) and scroll.region.height >= 3, scroll.region
        scroll.scroll_end(animate=False)
        await until(pilot, lambda: result.region.bottom <= scroll.region.bottom, "the result scrolled into sight")


async def test_continue_with_nothing_new_is_news_not_an_invalid_request(demo_store, make_app):
    store, refs = demo_store
    store.copy(ids=[refs["garden-readme"]], label="ChatGPT: garden")
    app = make_app(store)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await _basket(app, pilot, refs["garden-readme"])  # what the chat already holds
        await pilot.press("f3")
        await settle(app, pilot)
        await type_into(app, pilot, "#label", "ChatGPT: garden")
        await pilot.press("ctrl+o")
        await settle(app, pilot)
        toasts = list(app._notifications)
    assert [(n.title, n.severity) for n in toasts] == [("Continue chat", "information")], toasts
    assert toasts[0].message.startswith("Nothing new for “ChatGPT: garden” since its last copy")
    assert len(store.handoffs(label="ChatGPT: garden")["handoffs"]) == 1


async def test_the_handoff_tabs_have_keys_that_help_and_the_palette_name(demo_store, make_app):
    """The Ledger tab was reachable only by Tab to the tab bar, then Right; F1 listed nothing for it."""
    from pcp_tui.palette import PcpCommands
    from pcp_tui.screens.help import HelpScreen

    store, refs = demo_store
    store.copy(ids=[refs["garden-readme"]], label="ChatGPT: garden")
    app = make_app(store)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await _basket(app, pilot, refs["garden-readme"])
        await pilot.press("f3")
        await settle(app, pilot)
        tabs = app.screen.query_one("#handoff-tabs")
        titles = [str(app.screen.query_one(f"#handoff-tabs #--content-tab-{t}").label) for t in ("preview", "ledger")]
        assert titles == ["1 Preview", "2 Ledger"], titles
        # f3 opened in the label (no chat chosen yet), where digits are text; the tab keys work from the basket
        assert app.screen.focused.id == "label"
        app.screen.query_one("#basket").focus()
        await pilot.press("2")
        await settle(app, pilot)
        assert tabs.active == "ledger" and app.screen.focused.id == "ledger-table", app.screen.focused
        await pilot.press("1")
        await settle(app, pilot)
        assert tabs.active == "preview" and app.screen.focused in tabs.get_pane("preview").query("*")
        await pilot.press("f1")
        await settle(app, pilot)
        assert isinstance(app.screen, HelpScreen)
        table = app.screen.query_one("#keys")
        rows = [" ".join(str(c) for c in table.get_row_at(i)) for i in range(table.row_count)]
        assert any("Ledger tab" in row and "2" in row for row in rows), rows
        assert any("Preview tab" in row and "1" in row for row in rows), rows
        await pilot.press("escape")
        await settle(app, pilot)
        hits = [hit.text async for hit in PcpCommands(app.screen).search("ledger")]
        assert "Ledger tab" in hits, hits
