"""The delete dialogs walked as a person would, at the smallest size (80x24): what they say after the deed."""

from __future__ import annotations

from store import NotFound

from helpers import said, select_page, settle, type_into, until
from pcp_tui.screens.bulk_delete import BulkDeleteScreen
from pcp_tui.screens.delete import DeleteScreen

SMALL = (80, 24)


async def open_delete(app, pilot, page: str) -> DeleteScreen:
    """The single-page delete dialog (D) on `page`."""
    await settle(app, pilot)
    await select_page(app, pilot, page)
    await pilot.press("D")
    await settle(app, pilot)
    assert isinstance(app.screen, DeleteScreen)
    return app.screen


def text_of(screen, selector: str) -> str:
    return str(screen.query_one(selector).render())


async def test_the_single_delete_receipt_counts_in_the_right_number_and_shows_its_own_keys(demo_store, make_app):
    store, refs = demo_store
    page = refs["alpha-bib"]
    assert len(store.read_pages([page], projections=("history",))["results"][0]["history"]) == 1
    app = make_app(store)
    async with app.run_test(size=SMALL) as pilot:
        dialog = await open_delete(app, pilot, page)
        assert "Enter in the reason" in text_of(dialog, ".dialog-keys")
        await pilot.press(*page[-6:], "enter", "enter")
        await settle(app, pilot)
        assert dialog.receipt is not None
        shown = text_of(dialog, "#plan")
        assert "1 page" in shown and "1 pages" not in shown and "1 revisions" not in shown
        keys = text_of(dialog, ".dialog-keys")
        assert "Cascade" not in keys and "Enter in the reason" not in keys and "Close" in keys
        assert text_of(dialog, ".dialog-title").startswith("Deleted")
        assert dialog.focused.id == "cancel"
        await pilot.press("escape")
        await settle(app, pilot)
        assert not isinstance(app.screen, DeleteScreen)
    try:
        store.read_pages([page])
        raise AssertionError("the page is still there")
    except NotFound:
        pass


async def test_the_bulk_receipt_of_one_page_says_one_page(demo_store, make_app):
    store, refs = demo_store
    page = refs["me-reading"]
    app = make_app(store)
    async with app.run_test(size=SMALL) as pilot:
        await settle(app, pilot)
        await select_page(app, pilot, page)
        await pilot.press("m", "D")
        await settle(app, pilot)
        dialog = app.screen
        assert isinstance(dialog, BulkDeleteScreen)
        plan = text_of(dialog, "#plan")
        assert "Erases 1 page:" in plan and "Nothing of it stays" in plan and "of them" not in plan, plan
        await pilot.press("1", "enter", "enter")
        await settle(app, pilot)
        assert dialog.receipt is not None and dialog.receipt["state"] == "complete"
        shown = text_of(dialog, "#plan")
        assert "Counts: 1 page, 1 revision" in shown, shown


def test_a_long_bulk_receipt_names_a_command_that_exists():
    import re

    from pcp_tui.cli import pcp
    from pcp_tui.screens.bulk_delete import LISTED, bulk_receipt_text

    ids = [f"pg_{i:026d}" for i in range(LISTED + 3)]
    receipt = {"receipt_id": "del_01M8S0ZX9BB0AX8NA97SB9P3AW", "pages_done": len(ids), "pages": len(ids),
               "completed": f"{len(ids)}/{len(ids)}", "updated_at": "2026-04-01T12:00:00.000Z", "page_ids": ids,
               "counts": {"pages": len(ids)}, "reason": "r", "state": "complete"}
    shown = str(bulk_receipt_text(receipt, {}, stopped=False))
    assert "… and 3 more" in shown
    named = re.findall(r"`pcp ([^`]+)`", shown)
    assert named
    for command in named:
        words = command.split()
        while words[0].startswith("--"):  # the global options, then the subcommand and its words
            del words[:2 if words[0] in ("--db", "--as-model", "--grant") else 1]
        with pcp.make_context("pcp", command.split()) as ctx:  # a usage error on a command pcp does not have
            sub = pcp.get_command(ctx, words[0])
            assert sub is not None, command
            sub.make_context(words[0], words[1:], parent=ctx)


async def test_the_bulk_receipt_at_80x24_uses_the_room_the_fields_left(demo_store, make_app):
    store, refs = demo_store
    chosen = [refs["alpha-bib"], refs["me-reading"], refs["garden-schedule"]]
    app = make_app(store)
    async with app.run_test(size=SMALL) as pilot:
        await settle(app, pilot)
        for page in chosen:
            await select_page(app, pilot, page)
            await pilot.press("m")
        await pilot.press("D")
        await settle(app, pilot)
        dialog = app.screen
        assert isinstance(dialog, BulkDeleteScreen)
        await pilot.press("3", "enter", "enter")
        await settle(app, pilot)
        await until(pilot, lambda: dialog.receipt is not None and dialog.receipt["state"] == "complete",
                    "the deletion's receipt")
        body = dialog.query_one("#delete-body")
        lines = text_of(dialog, "#plan").splitlines()
        assert body.region.height >= len(lines), (body.region, lines)  # every erased page on screen, no scrolling
        assert app.screen.region.contains_region(dialog.query_one("#bulk-keys").region)
        assert app.screen.region.contains_region(dialog.query_one("#cancel").region)


async def test_the_short_id_may_be_typed_in_lower_case(demo_store, make_app):
    """Found in the walk: the typed id was compared case-sensitively (ids are upper case)."""
    store, refs = demo_store
    page = next(p for p in refs.values() if any(c.isalpha() for c in p[-6:]))
    app = make_app(store)
    async with app.run_test(size=SMALL) as pilot:
        dialog = await open_delete(app, pilot, page)
        await type_into(app, pilot, "#typed", page[-6:].lower())
        await type_into(app, pilot, "#reason", "no longer needed")
        await settle(app, pilot)
        assert dialog.query_one("#confirm").disabled is False
        await type_into(app, pilot, "#typed", "zzzzzz")  # another id still does not confirm
        await settle(app, pilot)
        assert dialog.query_one("#confirm").disabled is True


def test_a_receipts_counts_read_pages_first_in_words_whatever_order_they_come_in():
    from pcp_tui.screens.delete import counts_text

    read_back = {"bytes": 1234, "handoff_entries": 1, "lifecycle_events": 0, "pages": 7, "relations": 7,
                 "revisions": 8, "suppressions": 1, "export_temp_files": 2}  # sorted by name, as stored
    assert counts_text(read_back) == ("7 pages, 8 revisions, 7 relations, 1 suppression, 1 handoff entry, "
                                      "1,234 bytes, 2 export temp files")


async def test_cascade_is_offered_only_when_a_page_derives_from_this_one(demo_store, make_app):
    store, refs = demo_store
    app = make_app(store)
    async with app.run_test(size=SMALL) as pilot:
        dialog = await open_delete(app, pilot, refs["alpha-bib"])  # nothing is derived from it
        assert "Cascade" not in text_of(dialog, ".dialog-keys")
        await pilot.press("ctrl+k")
        await settle(app, pilot)
        assert "Nothing is derived from this page: there is nothing to cascade to." in said(app)
        assert not dialog.query_one("#cascade").value
        await pilot.press("escape")
        await settle(app, pilot)
        dialog = await open_delete(app, pilot, refs["alpha-proof"])  # its summary is derived from it
        assert "Cascade" in text_of(dialog, ".dialog-keys")
        await pilot.press("ctrl+k")
        await settle(app, pilot)
        assert dialog.query_one("#cascade").value
        assert not any("nothing to cascade" in m for m in said(app))


def test_a_delete_plan_says_what_it_leaves_out_and_puts_the_deciding_lines_before_revision_ids():
    """Report 10: at 80x24 the body shows six rows; the export file line came after every revision id, and a long
    list of pages or derived pages ended with no "and N more"."""
    from pcp_tui.screens.delete import plan_text

    pages = [f"pg_{n:02d}" for n in range(15)]
    plan = {"counts": {"pages": 15, "revisions": 20}, "pages": pages, "revisions": [f"rev_{n}" for n in range(20)],
            "derived_pages": [f"pg_d{n}" for n in range(10)], "export_files": [{"path": "/home/me/export.jsonl"}]}
    lines = plan_text(plan, {}).plain.splitlines()
    assert lines[2].startswith("Pages: ") and lines[2].endswith(", and 3 more")
    assert lines[3].endswith(", and 2 more")  # derived pages: 8 named of 10
    export = next(i for i, line in enumerate(lines) if "export file" in line)
    first_revision = next(i for i, line in enumerate(lines) if line.strip().startswith("revision "))
    assert export < first_revision and export <= 5  # among the six rows drawn at 80x24
    assert lines[-1] == "  … and 12 more revisions"
