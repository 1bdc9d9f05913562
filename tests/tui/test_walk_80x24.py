"""The app walk's defects at 80x24 and 80 columns (issue 35, ../shared/reports/app-walk-2026-12-05.md): the
Revisions tab's diff room (14), suppress contexts (12), delete plans' height (10), and the rest of 21 (CJK cut, the
f/w cycle, ctrl+b in f3, the Receipts tab, the return from $EDITOR, the basket's lifetime)."""

from __future__ import annotations

from helpers import open_in_tab, page_list, prompts, said, select_page, settle, until

from textual.widgets._toast import Toast

from pcp_tui.screens.revise import ReviseScreen
from pcp_tui.widgets.diff import DiffView
from pcp_tui.widgets.revisions import HistoryList

SMALL = (80, 24)


async def test_at_80x24_the_revisions_tab_gives_the_diff_ten_rows_and_a_revise_toast_covers_two(demo_store, make_app):
    """Report 14: the dates note and the history took all but 4 rows of the pane, and the Revised toast covered
    those. Now the diff keeps at least 9 rows, a revision's number, id and status stay on one line, and the
    toast after a revise is two rows (title and the short id)."""
    store, refs = demo_store
    app = make_app(store)
    async with app.run_test(size=SMALL, notifications=True) as pilot:
        await settle(app, pilot)
        await open_in_tab(app, pilot, refs["alpha-outline"], "2")
        diff = app.screen.query_one(DiffView)
        assert diff.size.height >= 9, diff.size
        history = app.screen.query_one(HistoryList)
        first = prompts(history)[0].split("\n")
        assert first[0].startswith("#3 …") and first[0].endswith("active"), first  # not cut apart by a wrap
        assert all(len(line) <= history.scrollable_content_region.width for p in prompts(history)
                   for line in p.split("\n"))
        await pilot.press("e")
        await until(pilot, lambda: isinstance(app.screen, ReviseScreen), "the revise dialog")
        await settle(app, pilot)
        await pilot.press(*"x", "ctrl+s")
        await until(pilot, lambda: not isinstance(app.screen, ReviseScreen) and app._notifications,
                    "the dialog to close with its toast")
        await until(pilot, lambda: prompts(history)[0].startswith("#4"), "the new revision in the history")
        await until(pilot, lambda: app.screen.query(Toast), "the toast on screen")
        await settle(app, pilot)
        toasts = list(app.screen.query(Toast))
        assert any("Revised: new revision …" in s for s in said(app))  # the short id
        assert all(t.region.height <= 2 for t in toasts), [t.region for t in toasts]
        assert diff.size.height >= 9


async def test_suppress_offers_the_contexts_in_use_and_unsuppress_the_pages_own(demo_store, make_app):
    """Report 12: suppress asked for a context id with a made-up default (`chat:current`) and nothing said which
    contexts exist. Now the dialog names the contexts in use with their page counts, starts with the newest,
    completes from them as you type; unsuppress starts with a context the page is suppressed in."""
    from pcp_tui.screens.confirm import FormScreen
    from pcp_tui.widgets.fields import Field

    store, refs = demo_store
    app = make_app(store)
    async with app.run_test(size=SMALL) as pilot:
        await settle(app, pilot)
        await select_page(app, pilot, refs["alpha-bib"])
        await pilot.press("s")
        await until(pilot, lambda: isinstance(app.screen, FormScreen), "the suppress dialog")
        await settle(app, pilot)
        field = app.screen.query_one("#field-context", Field)
        assert field.value == "chat:thesis-help"  # the demo's context, not a made-up one
        assert "chat:thesis-help (1 page)" in str(app.screen.query_one(".dialog-body").render())
        field.value = ""
        await pilot.press(*"chat:th")
        await until(pilot, lambda: field._suggestion == "chat:thesis-help", "the completion")
        await pilot.press("right")  # takes the completion
        await settle(app, pilot)
        assert field.value == "chat:thesis-help"
        await pilot.press("ctrl+s")
        await until(pilot, lambda: not isinstance(app.screen, FormScreen), "the dialog to close")
        await settle(app, pilot)
        found = store.search_pages("Bibliography", context_id="chat:thesis-help")["hits"]
        assert refs["alpha-bib"] not in [h["page_id"] for h in found]
        assert [c["pages"] for c in store.suppression_contexts()["contexts"]] == [2]
        await until(pilot, lambda: app.screen.query_one("#inspector-notes").display, "the suppressed note")
        await pilot.press("S")
        await until(pilot, lambda: isinstance(app.screen, FormScreen), "the unsuppress dialog")
        await settle(app, pilot)
        assert app.screen.query_one("#field-context", Field).value == "chat:thesis-help"
        await pilot.press("ctrl+s")
        await until(pilot, lambda: not isinstance(app.screen, FormScreen), "the dialog to close")
        await settle(app, pilot)
        assert [c["pages"] for c in store.suppression_contexts()["contexts"]] == [1]


async def test_at_80x24_a_delete_plan_takes_the_dialogs_height(demo_store, make_app):
    """Report 10: the plan had 6 rows and scrolled; a bulk plan of 3 pages named one of them. Now the plan takes
    the dialog's height (its fields a row each), shows whole without scrolling, and the keys stay on screen."""
    from textual.containers import VerticalScroll

    from pcp_tui.screens.bulk_delete import BulkDeleteScreen
    from pcp_tui.screens.delete import DeleteScreen

    store, refs = demo_store
    app = make_app(store)
    async with app.run_test(size=SMALL) as pilot:
        await settle(app, pilot)
        for keys, kind in ((["D"], DeleteScreen), (["m", "down", "m", "down", "m", "D"], BulkDeleteScreen)):
            await select_page(app, pilot, refs["alpha-outline"])
            await pilot.press(*keys)
            await until(pilot, lambda kind=kind: isinstance(app.screen, kind), kind.__name__)
            await until(pilot, lambda: "Planning" not in str(app.screen.query_one("#plan").render()), "the plan")
            await settle(app, pilot)
            body = app.screen.query_one("#delete-body", VerticalScroll)
            assert body.size.height >= 12 and body.max_scroll_y == 0, (kind.__name__, body.size, body.max_scroll_y)
            keys_line = app.screen.query_one(".dialog-keys")
            assert keys_line.region.bottom <= 24 and keys_line.region.height >= 1
            if kind is BulkDeleteScreen:
                plan = str(app.screen.query_one("#plan").render())
                assert plan.count("(pg_") == 3, plan  # every page of the plan named
            await pilot.press("escape")
            await until(pilot, lambda kind=kind: not isinstance(app.screen, kind), "the dialog to close")
            await settle(app, pilot)


async def test_a_cjk_title_cut_in_the_list_has_its_ellipsis_right_after_the_last_whole_character(demo_store, make_app):
    """Report 21: `✓◆● 有限乘积保持紧致性的 … 2026-03-12`: a wide character cut in half became a space before the
    ellipsis (with pages selected the title has one cell less, an odd width)."""
    from pcp_tui.text import cut_cells

    assert cut_cells("有限乘积", 6) == "有限…" and cut_cells("有限乘积", 5) == "有限…" and cut_cells("abc", 3) == "abc"
    store, refs = demo_store
    app = make_app(store)
    async with app.run_test(size=SMALL) as pilot:
        await settle(app, pilot)
        await select_page(app, pilot, refs["alpha-outline"])
        for width_change in ("m", "m"):  # selecting a page adds the ✓ column; a second m takes it away again
            await pilot.press(width_change)
            await settle(app, pilot)
            lines = [strip.text for strip in page_list(app).render_lines(page_list(app).content_region.reset_offset)]
            cjk = [line for line in lines if "有限乘积" in line]
            assert cjk and "…" in cjk[0] and " …" not in cjk[0], cjk


async def test_f_and_w_say_every_state_of_their_cycle_and_where_it_is(demo_store, make_app):
    """Report 21: `f` and `w` cycle through five states each with no hint of what comes next."""
    store, refs = demo_store
    app = make_app(store)
    async with app.run_test(size=SMALL, notifications=True) as pilot:
        await settle(app, pilot)
        page_list(app).focus()
        await pilot.press("f")
        await settle(app, pilot)
        assert any(s.startswith("Status: active → [all] → archived") and "(f steps on)" in s for s in said(app)), said(app)
        await pilot.press("w")
        await settle(app, pilot)
        assert any(s.startswith("Author: anyone → [user] → model") for s in said(app)), said(app)


async def test_in_the_handoff_screen_ctrl_b_is_not_preview_and_ctrl_r_builds_it_again(demo_store, make_app):
    """Report 21: `ctrl+b` was Sidebar on the main screen and Preview in f3. Preview is `ctrl+r` there now, as
    Refresh is on the main screen (build again what is shown); `ctrl+b` builds nothing in f3."""
    from pcp_tui.screens.handoff import HandoffScreen

    store, refs = demo_store
    app = make_app(store)
    async with app.run_test(size=SMALL) as pilot:
        await settle(app, pilot)
        await select_page(app, pilot, refs["alpha-bib"])
        await pilot.press("space")
        await settle(app, pilot)
        await pilot.press("f3")
        await until(pilot, lambda: isinstance(app.screen, HandoffScreen), "the handoff screen")
        await settle(app, pilot)
        screen = app.screen
        built = screen.preview
        await pilot.press("ctrl+b")
        await settle(app, pilot)
        assert screen.preview is built
        await pilot.press("ctrl+r")
        await until(pilot, lambda: screen.preview is not built, "the preview built again")
        assert "1 entry" in str(screen.query_one("#preview-summary").render())


async def test_at_80_columns_the_receipts_tab_shows_the_highlighted_receipt_in_full(demo_store, make_app):
    """Report 21: the Receipts tab at 80 columns cut `WAL erasure` and `reason`, and Enter on a receipt showed
    nothing. The highlighted receipt is now said in full under the table (Enter says it too)."""
    store, refs = demo_store
    receipt = store.delete_page(refs["garden-idea"], "walk: the reason said in full under the table")
    app = make_app(store)
    async with app.run_test(size=SMALL) as pilot:
        await settle(app, pilot)
        await pilot.press("f2")
        await settle(app, pilot)
        await pilot.press("4")
        await settle(app, pilot)
        detail = app.screen.query_one("#receipt-detail")
        await until(pilot, lambda: receipt["receipt_id"] in str(detail.render()), "the receipt's line")
        await pilot.press("enter")
        await settle(app, pilot)
        text = str(detail.render())
        assert "“walk: the reason said in full under the table”" in text and "WAL erasure: done" in text, text
        assert "1 page, " in text and detail.region.bottom <= 24 and detail.region.height >= 2


async def test_back_from_the_editor_the_dialog_says_the_draft_is_not_saved_yet(demo_store, make_app, monkeypatch):
    """Report 21: after `E` you come back to the revise dialog and must press ctrl+s, and nothing said so; the
    key line says it before, and the dialog after."""
    import contextlib
    import sys

    store, refs = demo_store
    monkeypatch.setenv("VISUAL", f"{sys.executable} -c \"import sys; open(sys.argv[1], 'a').write('more')\"")
    app = make_app(store)

    @contextlib.contextmanager
    def suspend():  # a headless run has no terminal to hand over
        yield

    monkeypatch.setattr(app, "suspend", suspend)
    async with app.run_test(size=SMALL) as pilot:
        await settle(app, pilot)
        await select_page(app, pilot, refs["me-reading"])
        await pilot.press("e")
        await until(pilot, lambda: isinstance(app.screen, ReviseScreen), "the revise dialog")
        await settle(app, pilot)
        assert "$EDITOR (then Save)" in str(app.screen.query_one(".dialog-keys").render())
        await pilot.press("ctrl+e")
        await until(pilot, lambda: any("not saved yet" in s for s in said(app)), "the dialog's notice")
        assert any(f"{app.key_display('revise.save')} saves it" in s for s in said(app)), said(app)
        assert isinstance(app.screen, ReviseScreen)


async def test_an_empty_basket_says_how_to_fill_it_and_that_it_lasts_until_you_quit(demo_store, make_app):
    """Report 21: the basket was empty after a restart and nothing said whether it is kept. It is not (a basket
    is a handoff under way; the last chat is what is kept): the empty basket says so, and how to fill it."""
    from pcp_tui.screens.handoff import HandoffScreen

    store, refs = demo_store
    app = make_app(store)
    async with app.run_test(size=SMALL) as pilot:
        await settle(app, pilot)
        await pilot.press("f3")
        await until(pilot, lambda: isinstance(app.screen, HandoffScreen), "the handoff screen")
        await settle(app, pilot)
        shown = " ".join(prompts(app.screen.query_one("#basket")))
        assert "The basket is empty." in shown and "lasts until you quit" in shown and "space on a page" in shown, shown
