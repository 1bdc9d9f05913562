"""Deleting many pages at once from the app: the selection, one plan, the typed count, progress, stop, resume."""

from __future__ import annotations

import threading

import pytest
from store import NotFound

from helpers import audit_since, page_list, said, select_page, settle, type_into, until
from pcp_tui.screens.bulk_delete import BulkDeleteScreen, typed_count
from pcp_tui.screens.help import HelpScreen
from pcp_tui.widgets.graph import GraphView
from pcp_tui.widgets.inspector import Inspector

SIZE = (120, 40)


def gone(store, page_id) -> bool:
    try:
        store.read_pages([page_id])
    except NotFound:
        return True
    return False


def listed(app) -> set[str]:
    return {r["page_id"] for r in page_list(app).rows}


def status_line(app) -> str:
    return str(app.screen.query_one("#list-status").render())


async def _flat_pages_listed(app, pilot) -> None:
    """The app started, its list showing the scope project:old-flat (as the scopes tree holds it), focused."""
    await settle(app, pilot)
    assert any(s["namespace"] == "project:old-flat" for s in app.screen.query_one("#scopes").scopes)
    app.screen.scopes, app.screen.scope_label = ["project:old-flat"], "project:old-flat"
    app.screen.reload_pages()
    await settle(app, pilot)
    page_list(app).focus()


def test_the_typed_count_takes_separators():
    assert typed_count("1,234") == 1234 and typed_count(" 12 ") == 12
    assert typed_count("12a") is None and typed_count("") is None


async def test_selected_pages_are_erased_and_vanish_from_every_view(demo_store, make_app):
    store, refs = demo_store
    chosen = [refs["alpha-bib"], refs["me-reading"], refs["garden-schedule"]]
    kept = refs["alpha-proof"]  # it uses alpha-bib
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await select_page(app, pilot, refs["alpha-bib"])
        await pilot.press("space")  # into the handoff basket too
        for page in chosen:
            await select_page(app, pilot, page)
            await pilot.press("m")
        assert "✓ 3 selected" in status_line(app)
        assert page_list(app).selected == set(chosen)
        assert [b["page_id"] for b in app.basket] == [refs["alpha-bib"]]  # the basket is apart from it
        await select_page(app, pilot, kept)
        await pilot.press("4")  # the relations tab, with the graph
        await settle(app, pilot)
        graph = app.screen.query_one(GraphView)
        before = " ".join(str(graph.get_option_at_index(i).id) for i in range(graph.option_count))
        assert refs["alpha-bib"] in before
        app.screen.query_one("#pages").focus()
        await pilot.press("D")
        await settle(app, pilot)
        dialog = app.screen
        assert isinstance(dialog, BulkDeleteScreen) and dialog.focused.id == "typed"
        plan = str(dialog.query_one("#plan").render())
        assert "Erases 3 pages:" in plan and refs["alpha-bib"] in plan and "Handoffs" not in plan
        assert "(3)" in str(dialog.query_one("#typed-label").render())
        await pilot.press("2")
        assert dialog.query_one("#confirm").disabled  # the wrong number
        await type_into(app, pilot, "#typed", "3")
        assert not dialog.query_one("#confirm").disabled
        await pilot.press("enter", "enter")  # to the reason, then Enter deletes
        await settle(app, pilot)
        shown = str(dialog.query_one("#plan").render())
        assert dialog.receipt["state"] == "complete" and "Deleted." in shown
        for page in chosen:
            assert page in shown
        assert "Bibliography" in shown  # by title: known before the pages went
        await pilot.press("escape")
        await settle(app, pilot)
        assert not isinstance(app.screen, BulkDeleteScreen)
        assert not listed(app) & set(chosen)  # the list
        assert app.basket == []  # the basket
        assert app.screen.selection == {} and "selected" not in status_line(app)
        assert app.screen.query_one(Inspector).page_id == kept  # the inspector's page stays, its graph changes
        after = " ".join(str(graph.get_option_at_index(i).id) for i in range(graph.option_count))
        assert not any(page in after for page in chosen)
    assert all(gone(store, page) for page in chosen)
    assert not gone(store, kept)
    receipt = store.list_receipts()["receipts"][0]
    assert sorted(receipt["page_ids"]) == sorted(chosen)


async def test_d_without_a_selection_is_still_the_one_page_delete(demo_store, make_app):
    from pcp_tui.screens.delete import DeleteScreen

    store, refs = demo_store
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await select_page(app, pilot, refs["alpha-bib"])
        await pilot.press("m")
        await select_page(app, pilot, refs["alpha-bib"])
        await pilot.press("m")  # selected, then unselected
        assert app.screen.selection == {}
        await pilot.press("D")
        await settle(app, pilot)
        assert isinstance(app.screen, DeleteScreen)


async def test_escape_clears_the_selection_and_a_cancel_erases_nothing(demo_store, make_app):
    store, refs = demo_store
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await select_page(app, pilot, refs["alpha-bib"])
        await pilot.press("m", "m")
        await pilot.press("D")
        await settle(app, pilot)
        assert isinstance(app.screen, BulkDeleteScreen)
        await pilot.press("f1")  # the dialog's own keys
        await settle(app, pilot)
        assert isinstance(app.screen, HelpScreen)
        table = app.screen.query_one("#keys")
        ids = {str(table.get_row_at(i)[-1]) for i in range(table.row_count)}
        assert {"bulk_delete.cancel", "bulk_delete.resume", "help"} <= ids and "delete.cascade" not in ids
        await pilot.press("escape")
        await pilot.press("escape")  # closes the dialog: nothing erased
        await settle(app, pilot)
        assert not isinstance(app.screen, BulkDeleteScreen)
        assert len(app.screen.selection) == 2
        await pilot.press("escape")  # clears the selection
        assert app.screen.selection == {} and page_list(app).selected == set()
    assert store.list_receipts()["receipts"] == []
    assert not gone(store, refs["alpha-bib"])


async def test_select_every_match_of_the_search(demo_store, make_app):
    store, refs = demo_store
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("slash", *"lemma", "enter")
        await settle(app, pilot)
        await pilot.press("M")  # auto mode has no edge: refused
        await settle(app, pilot)
        assert app.screen.matching is None
        await pilot.press("ctrl+t")  # text: every word
        await settle(app, pilot)
        hits = listed(app)
        assert hits
        await pilot.press("M")
        await settle(app, pilot)
        matching = app.screen.matching
        assert matching is not None and matching.filters["query"] == "lemma" and matching.filters["mode"] == "text"
        assert f"✓ {matching.pages} every match" in status_line(app)
        assert page_list(app).select_all
        await pilot.press("D")
        await settle(app, pilot)
        dialog = app.screen
        assert isinstance(dialog, BulkDeleteScreen)
        count = dialog.plan["pages"]
        assert count == matching.pages and count >= len(hits)  # a query matches any revision of a page
        await type_into(app, pilot, "#typed", str(count))
        await pilot.press("enter", "enter")
        await settle(app, pilot)
        assert dialog.receipt["state"] == "complete"
        erased = dialog.receipt["page_ids"]
        await pilot.press("escape")
        await settle(app, pilot)
        assert app.screen.matching is None and not page_list(app).select_all
        assert listed(app) == set()  # nothing matches any more
    assert hits <= set(erased) and all(gone(store, p) for p in erased)


async def test_changing_the_search_drops_a_select_every_match(demo_store, make_app):
    store, refs = demo_store
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("M")  # every page of the store: refused
        await settle(app, pilot)
        assert app.screen.matching is None
        await pilot.press("f")  # a status filter alone selects nothing either
        await pilot.press("M")
        await settle(app, pilot)
        assert app.screen.matching is None
        await pilot.press("ctrl+t", "slash", *"lemma", "enter")
        await settle(app, pilot)
        await pilot.press("M")
        await settle(app, pilot)
        assert app.screen.matching is not None
        await pilot.press("slash", "backspace", "enter")
        await settle(app, pilot)
        assert app.screen.matching is None


@pytest.fixture
def many_pages(demo_store):
    store, refs = demo_store
    written = store.write_pages_bulk(({"content": f"Old flat note {i}: the landlord, the deposit, the keys.",
                                       "facets": {"title": f"Flat {i:02d}"}} for i in range(40)),
                                      namespace="project:old-flat")
    return store, refs, written


def texts(store, page_ids):
    """The content of each page, read 20 at a time (each read must find every page of its batch)."""
    out = {}
    for start in range(0, len(page_ids), 20):
        for r in store.read_pages(page_ids[start:start + 20])["results"]:
            out[r["revision"]["page_id"]] = r["revision"]["payload"]["content"]
    return out


async def test_escape_stops_between_batches_and_resume_finishes(many_pages, make_app, monkeypatch):
    store, refs, _ = many_pages
    flat = [p["page_id"] for p in store.list_pages(scopes=["project:old-flat"], limit=100)["pages"]]
    assert len(flat) == 40
    before = texts(store, flat)
    monkeypatch.setattr(BulkDeleteScreen, "batch_size", 5)
    # The first batch's report waits until the test has pressed Escape: a stop in the middle, every run.
    reached, go = threading.Event(), threading.Event()
    run = store.run_bulk_delete  # the first run (a resume after a stop is not held)

    def held(receipt_id, progress=None):
        def report(done, total, unit="pages", /):
            if done and not reached.is_set():  # after the first batch (the first report is 0 of N)
                reached.set()
                go.wait(10)
            progress(done, total, unit)

        return run(receipt_id, progress=report)

    monkeypatch.setattr(store, "run_bulk_delete", held)
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await _flat_pages_listed(app, pilot)
        await pilot.press("M")
        await settle(app, pilot)
        assert app.screen.matching.pages == 40
        await pilot.press("D")
        await settle(app, pilot)
        dialog = app.screen
        await type_into(app, pilot, "#typed", "40")
        await pilot.press("enter", "enter")
        await until(pilot, reached.is_set, "the first batch to start")
        await until(pilot, lambda: dialog.running and str(dialog.query_one("#cancel").label) == "Stop",
                    "the Stop button while the deletion runs")
        await pilot.press("escape")  # stop after this batch
        assert dialog.running  # the dialog stays until the batch is done
        go.set()
        await settle(app, pilot)
        receipt = dialog.receipt
        assert not dialog.running and dialog.stopped
        assert receipt["state"] == "pending" and receipt["pages_done"] == 5
        shown = str(dialog.query_one("#plan").render())
        assert "Stopped." in shown and "5 of 40 pages erased" in shown and receipt["receipt_id"] in shown
        assert f"pcp delete --resume {receipt['receipt_id']}" in shown
        assert dialog.query_one("#resume").display
        erased = receipt["page_ids"][:5]
        assert all(gone(store, p) for p in erased)
        # Whole pages only: every other page is there, unchanged.
        rest = [p for p in flat if p not in erased]
        assert texts(store, rest) == {p: before[p] for p in rest}
        await pilot.press("ctrl+r")  # resume here: the recorded set, not the filter
        await settle(app, pilot)
        assert dialog.receipt["state"] == "complete" and dialog.receipt["pages_done"] == 40
        assert "Deleted." in str(dialog.query_one("#plan").render())
        await pilot.press("escape")
        await settle(app, pilot)
        assert listed(app) == set()
    assert all(gone(store, p) for p in flat)
    assert store.bulk_deletion(receipt["receipt_id"])["completed"] == "40/40"


async def test_closing_a_stopped_deletion_removes_what_was_erased(many_pages, make_app, monkeypatch):
    store, refs, _ = many_pages
    flat = [p["page_id"] for p in store.list_pages(scopes=["project:old-flat"], limit=100)["pages"]]
    monkeypatch.setattr(BulkDeleteScreen, "batch_size", 5)
    reached, go = threading.Event(), threading.Event()
    run = store.run_bulk_delete  # the first run (a resume after a stop is not held)

    def held(receipt_id, progress=None):
        def report(done, total, unit="pages", /):
            if done and not reached.is_set():  # after the first batch (the first report is 0 of N)
                reached.set()
                go.wait(10)
            progress(done, total, unit)

        return run(receipt_id, progress=report)

    monkeypatch.setattr(store, "run_bulk_delete", held)
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await _flat_pages_listed(app, pilot)
        for _ in range(8):
            await pilot.press("m")
        chosen = set(app.screen.selection)
        assert len(chosen) == 8
        await pilot.press("D")
        await settle(app, pilot)
        await type_into(app, pilot, "#typed", "8")
        await pilot.press("enter", "enter")
        await until(pilot, reached.is_set, "the first batch to start")
        await pilot.press("escape")
        go.set()
        await settle(app, pilot)
        receipt = app.screen.receipt
        assert receipt["pages_done"] == 5
        await pilot.press("escape")  # close the stopped deletion
        await settle(app, pilot)
        erased = set(receipt["page_ids"][:5])
        assert not listed(app) & erased and set(app.screen.selection) == chosen - erased
        assert len(listed(app)) == len(flat) - 5


async def test_a_selection_changed_since_the_plan_is_planned_again(many_pages, make_app):
    store, refs, _ = many_pages
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await _flat_pages_listed(app, pilot)
        await pilot.press("M", "D")
        await settle(app, pilot)
        dialog = app.screen
        assert dialog.plan["pages"] == 40
        newcomer = store.write_page("project:old-flat", content="# Flat 40\n\nWritten after the plan.")["page_id"]
        await type_into(app, pilot, "#typed", "40")
        await pilot.press("enter", "enter")
        await settle(app, pilot)
        # said in the app's words (report 9: "plan again and confirm the digest" is the CLI's)
        assert any("1 page matched since the plan" in n and "type 41 to go on" in n for n in said(app)), said(app)
        assert not any("digest" in n for n in said(app)), said(app)
        assert dialog.receipt is None and not dialog.running
        assert dialog.plan["pages"] == 41 and dialog.query_one("#typed").display
        assert "(41)" in str(dialog.query_one("#typed-label").render())
    assert store.list_receipts()["receipts"] == [] and not gone(store, newcomer)


async def test_delete_pressed_while_the_matches_are_counted_deletes_the_matches(many_pages, make_app, monkeypatch):
    """M then D at once: the count of "select matching" is still under way when D arrives. The delete waits for
    it and plans the matches, not the page under the cursor (a fast typist; a loaded machine in CI)."""
    store, refs, _ = many_pages
    counting, release = threading.Event(), threading.Event()
    plan = store.plan_bulk_delete

    def held_plan(filters, *args, **kwargs):
        if not counting.is_set():  # (the first call: the count of the matches; the dialog's own plan goes through)
            counting.set()
            release.wait(30)
        return plan(filters, *args, **kwargs)

    monkeypatch.setattr(store, "plan_bulk_delete", held_plan)
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await _flat_pages_listed(app, pilot)
        main = app.screen
        await pilot.press("M")
        await until(pilot, counting.is_set, "the count of the matches under way")
        await pilot.press("D")
        assert app.screen is main  # no dialog for the page under the cursor
        release.set()
        await settle(app, pilot)
        dialog = app.screen
        assert isinstance(dialog, BulkDeleteScreen) and dialog.plan["pages"] == 40, getattr(dialog, "plan", None)


def test_the_typed_count_refuses_digits_that_are_not_decimal():
    assert typed_count("2²") is None and typed_count("³") is None and typed_count("①") is None


async def test_a_superscript_typed_as_the_count_is_not_a_crash(demo_store, make_app):
    store, refs = demo_store
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await select_page(app, pilot, refs["alpha-bib"])
        await pilot.press("m")
        await pilot.press("D")
        await settle(app, pilot)
        dialog = app.screen
        assert isinstance(dialog, BulkDeleteScreen) and dialog.focused.id == "typed"
        await pilot.press("1", "²")  # isdigit() says yes, int() says no
        await settle(app, pilot)
        assert app.screen is dialog and dialog.query_one("#confirm").disabled
        await type_into(app, pilot, "#typed", "1")
        assert not dialog.query_one("#confirm").disabled
        assert not gone(store, refs["alpha-bib"])


async def test_at_80x24_the_filter_line_keeps_the_count_with_a_selection(demo_store, make_app):
    """Found in the tmux walk: with every match selected the line wrapped and lost the page count."""
    from textual.geometry import Region

    store, refs = demo_store
    app = make_app(store)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await pilot.press("slash", *"lemma", "enter")
        await settle(app, pilot)
        await pilot.press("ctrl+t")
        await settle(app, pilot)
        await pilot.press("M")
        await settle(app, pilot)
        assert app.screen.matching is not None
        widget = app.screen.query_one("#list-status")
        shown = "".join(strip.text for strip in widget.render_lines(Region(0, 0, *widget.size)))
        count = len(page_list(app).rows)
        assert "every match" in shown and f"{count} page" in shown, shown


async def test_the_screen_under_the_receipt_is_true_and_the_audit_log_has_only_what_was_done(demo_store, make_app):
    """At 160x48 the main screen shows around the receipt: it said "✓ 2 selected" for erased pages until the
    dialog closed. The inspector read its erased page back (a failed read_pages in the owner's audit log), and
    the first run was logged as a resume nobody asked for."""
    store, refs = demo_store
    chosen = [refs["alpha-bib"], refs["me-reading"]]
    app = make_app(store)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        for page in chosen:
            await select_page(app, pilot, page)
            await pilot.press("m")
        await select_page(app, pilot, refs["me-reading"])  # one of the set in the inspector
        mark = store.audit_log(limit=1)["events"][0]["event_id"]
        await pilot.press("D")
        await settle(app, pilot)
        dialog = app.screen
        await type_into(app, pilot, "#typed", "2")
        await pilot.press("enter", "enter")
        await settle(app, pilot)
        # What the store watcher's tick does when it sees the deletion (the watcher itself is off in tests): the
        # change it reports must not read an erased page back.
        app.announce_change(external=True)
        await settle(app, pilot)
        assert app.screen is dialog and dialog.receipt["state"] == "complete"  # the receipt is still up
        main = app.screen_stack[-2]
        assert main.selection == {} and "selected" not in str(main.query_one("#list-status").render())
        assert not {r["page_id"] for r in main.query_one("#pages").rows} & set(chosen)
        assert main.query_one(Inspector).page_id not in chosen
        events = audit_since(store, mark)
        ops = [e["operation"] for e in events]
        assert "bulk_delete_resume" not in ops and "bulk_delete_complete" in ops, ops
        assert not [e for e in events if e["decision"] == "failed"], events
        await pilot.press("escape")
        await settle(app, pilot)


async def test_removing_the_erased_rows_never_shows_one_of_them_again(demo_store, make_app):
    """Each erased row removed from the list makes it highlight its next row, which could be another erased page
    not removed yet: the inspector read it back (a failed read_pages in the audit log, tmux walk with M)."""
    store, refs = demo_store
    app = make_app(store)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        rows = [r["page_id"] for r in page_list(app).rows]
        chosen = rows[:4]  # adjacent, the cursor on the first
        for page in chosen:
            await select_page(app, pilot, page)
            await pilot.press("m")
        await select_page(app, pilot, chosen[0])
        await pilot.press("4")
        await settle(app, pilot)
        shown: list[str | None] = []
        inspector = app.screen.query_one(Inspector)
        real = inspector._load
        monkey = lambda page_id: (shown.append(page_id), real(page_id))[1]  # noqa: E731
        inspector._load = monkey
        mark = store.audit_log(limit=1)["events"][0]["event_id"]
        await pilot.press("D")
        await settle(app, pilot)
        await type_into(app, pilot, "#typed", "4")
        await pilot.press("enter", "enter")
        await settle(app, pilot)
        await pilot.press("escape")
        await settle(app, pilot)
        assert not set(shown) & set(chosen), shown  # no erased page is loaded, not even for a moment
    events = audit_since(store, mark)
    assert not [e for e in events if e["decision"] != "allowed"], events


async def test_the_every_match_count_follows_a_page_written_by_another_process(demo_store, make_app):
    """Report 9: a matching page written from the CLI showed up with a ✓, the count stayed at 4."""
    from store import Store

    store, refs = demo_store
    app = make_app(store, watch_interval=0.05)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await pilot.press("slash", *"water", "ctrl+t", "enter")
        await settle(app, pilot)
        await pilot.press("M")
        await until(pilot, lambda: app.screen.matching is not None, "every match selected")
        before = app.screen.matching.pages
        other = Store.open(store.path)
        try:
            other.write_page("project:garden", content="# CLI water note\n\nRemember to water the basil.")
        finally:
            other.close()
        await until(pilot, lambda: app.screen.matching is not None and app.screen.matching.pages == before + 1,
                    "the count to follow")
        await until(pilot, lambda: f"✓ {before + 1} every match" in status_line(app), "the header")


async def test_a_stopped_deletion_is_a_row_of_the_receipts_tab_and_r_resumes_it(many_pages, make_app):
    """Report 11: once its dialog was closed, a stopped deletion was a sentence naming the CLI, with no row or key."""
    from textual.widgets import DataTable

    store, refs, _ = many_pages
    flat = [p["page_id"] for p in store.list_pages(scopes=["project:old-flat"], limit=100)["pages"]]
    filters = {"scopes": ["project:old-flat"]}
    plan = store.plan_bulk_delete(filters)
    started = store.begin_bulk_delete(filters, "old flat", plan["digest"], batch_size=5)

    class Stop(Exception):
        pass

    def stop_after_first(done, total, unit="pages", /):
        if done and total and done < total:
            raise Stop  # between two batches, as the app's esc does

    with pytest.raises(Stop):
        store.run_bulk_delete(started["receipt_id"], progress=stop_after_first)
    assert store.bulk_deletion(started["receipt_id"])["completed"] == "5/40"
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("f2")
        await settle(app, pilot)
        await pilot.press("4")
        await settle(app, pilot)
        table = app.screen.query_one("#receipts-table", DataTable)
        row = [str(c) for c in table.get_row_at(0)]
        assert row[0] == started["receipt_id"] and row[3] == "5 of 40" and row[5] == "stopped", row
        assert app.screen.check_action("resume_deletion", ())  # r is in the footer on this tab
        await pilot.press("r")
        await until(pilot, lambda: isinstance(app.screen, BulkDeleteScreen), "the deletion dialog")
        dialog = app.screen
        await until(pilot, lambda: dialog.receipt is not None and dialog.receipt["state"] == "complete",
                    "the rest erased")
        assert "Deleted." in str(dialog.query_one("#plan").render())
        await pilot.press("escape")
        await settle(app, pilot)
        assert all(str(table.get_row_at(i)[5]) != "stopped" for i in range(table.row_count))
        await pilot.press("escape")
        await settle(app, pilot)
        assert not listed(app) & set(flat)
    assert all(gone(store, p) for p in flat)
    assert store.bulk_deletion(started["receipt_id"])["completed"] == "40/40"
