"""Your rights: export (file written, path shown), delete a whole scope (typed confirmation, receipt), audit log."""

from __future__ import annotations

import json

import pytest
from store import NotFound

from helpers import settle, type_into
from pcp_tui.screens.confirm import ConfirmScreen
from pcp_tui.screens.rights import RightsScreen

SIZE = (120, 40)


async def test_export_everything_writes_the_file_and_shows_its_path(demo_store, make_app, workdir):
    store, refs = demo_store
    app = make_app(store)
    out = workdir / "mine.jsonl"
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("f2")
        await settle(app, pilot)
        assert isinstance(app.screen, RightsScreen)
        assert app.screen.query_one("#export-path").value.startswith("exports/pcp-export-")
        await type_into(app, pilot, "#export-path", str(out))
        await pilot.press("ctrl+x")
        await settle(app, pilot)
        shown = str(app.screen.query_one("#export-result").render())
        assert str(out) in shown and "Exported" in shown
    lines = out.read_text(encoding="utf-8").splitlines()
    assert json.loads(lines[0])["kind"] == "pcp.export.v1"
    assert json.loads(lines[-1])["kind"] == "pcp.export.end"
    assert sum(1 for line in lines if json.loads(line)["kind"] == "page") == len(refs)


async def test_export_chosen_scopes_only(demo_store, make_app, workdir):
    store, refs = demo_store
    app = make_app(store)
    out = workdir / "me.jsonl"
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("f2")
        await settle(app, pilot)
        scopes = app.screen.query_one("#export-scopes")
        scopes.select("user:me")
        await type_into(app, pilot, "#export-path", str(out))
        await pilot.press("ctrl+x")
        await settle(app, pilot)
    pages = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    namespaces = {p["namespace"] for p in pages if p["kind"] == "page"}
    assert namespaces == {"user:me"}


async def test_delete_a_whole_scope_with_typed_confirmation(demo_store, make_app):
    store, refs = demo_store
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("f2")
        await settle(app, pilot)
        app.screen.query_one("#rights-tabs").active = "delete-scope"
        await settle(app, pilot)
        app.screen.query_one("#scope-choice").value = "user:me"
        await settle(app, pilot)
        assert "2 pages" in str(app.screen.query_one("#scope-plan").render())
        await type_into(app, pilot, "#scope-typed", "user:m")
        assert app.screen.query_one("#scope-run").disabled  # not the namespace yet
        await pilot.press("e")
        assert not app.screen.query_one("#scope-run").disabled
        app.screen.query_one("#scope-run").focus()
        await pilot.press("enter")
        await settle(app, pilot)
        assert isinstance(app.screen, ConfirmScreen)  # the second step, as for a page: focus on Cancel
        assert app.screen.focused.id == "cancel"
        await pilot.press("y")
        await settle(app, pilot)
        assert "Deleted." in str(app.screen.query_one("#scope-result").render())
    assert "user:me" not in {s["namespace"] for s in store.list_scopes(limit=100)["scopes"]}
    with pytest.raises(NotFound):
        store.read_pages([refs["me-prefs"]])
    assert store.list_receipts()["receipts"][0]["namespace"] == "user:me"


async def test_audit_log_is_paged(demo_store, make_app):
    store, refs = demo_store
    for n in range(60):  # more events than one audit page
        store.suppress_pages([refs["me-prefs"]], f"ctx-{n}")
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("f2")
        await settle(app, pilot)
        table = app.screen.query_one("#audit-table")
        assert table.row_count == 50
        assert "loads more" in str(app.screen.query_one("#audit-note").render())
        await pilot.press("3", "ctrl+n")  # (a key of the Audit log tab: it works there)
        await settle(app, pilot)
        assert table.row_count == 100
        while app.screen.audit_cursor:
            await pilot.press("ctrl+n")
            await settle(app, pilot)
        assert "that is all" in str(app.screen.query_one("#audit-note").render())
        assert app.screen.check_action("more_audit", ()) is False  # no "^n More audit" once there is no more
        await pilot.press("escape")
        await settle(app, pilot)
        assert not isinstance(app.screen, RightsScreen)


async def test_receipts_show_a_pending_wal_erasure(demo_store, make_app):
    try:
        import pysqlite3.dbapi2 as sqlite3  # the store's own SQLite when installed
    except ImportError:  # pragma: no cover
        import sqlite3

    store, refs = demo_store
    reader = sqlite3.connect(str(store.path))
    reader.execute("BEGIN")
    reader.execute("SELECT COUNT(*) FROM revision").fetchone()  # a read snapshot, like a running export
    try:
        receipt = store.delete_page(refs["garden-idea"], "erase")
        assert receipt["wal_erasure"] == "pending"
        app = make_app(store)
        async with app.run_test(size=SIZE) as pilot:
            await settle(app, pilot)
            await pilot.press("f2")
            await settle(app, pilot)
            table = app.screen.query_one("#receipts-table")
            row = table.get_row_at(0)
            assert row[0] == receipt["receipt_id"] and "pending" in row
    finally:
        reader.rollback()
        reader.close()
    assert store.list_receipts()["receipts"][0]["wal_erasure"] == "done"


async def test_scope_delete_asks_a_second_time_and_no_erases_nothing(demo_store, make_app):
    store, refs = demo_store
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("f2")
        await settle(app, pilot)
        app.screen.query_one("#rights-tabs").active = "delete-scope"
        await settle(app, pilot)
        app.screen.query_one("#scope-choice").value = "user:me"
        await settle(app, pilot)
        await type_into(app, pilot, "#scope-typed", "user:me")
        app.screen.query_one("#scope-run").focus()
        await pilot.press("enter")
        await settle(app, pilot)
        assert isinstance(app.screen, ConfirmScreen)
        assert "2 pages" in str(app.screen.query_one(".dialog-body").render())
        await pilot.press("n")
        await settle(app, pilot)
        assert isinstance(app.screen, RightsScreen)
        assert str(app.screen.query_one("#scope-result").render()) == ""
    assert "user:me" in {s["namespace"] for s in store.list_scopes(limit=100)["scopes"]}
    store.read_pages([refs["me-prefs"]])  # still there


async def test_export_to_a_missing_folder_asks_first_and_no_creates_nothing(demo_store, make_app, workdir):
    store, refs = demo_store
    app = make_app(store)
    out = workdir / "typo" / "deeper" / "mine.jsonl"
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("f2")
        await settle(app, pilot)
        await type_into(app, pilot, "#export-path", str(out))
        await pilot.press("ctrl+x")
        await settle(app, pilot)
        assert isinstance(app.screen, ConfirmScreen)
        body = str(app.screen.query_one(".dialog-body").render())
        assert str(workdir / "typo") in body
        await pilot.press("n")
        await settle(app, pilot)
        assert "Not exported" in str(app.screen.query_one("#export-result").render())
        assert not (workdir / "typo").exists()
        await pilot.press("ctrl+x")
        await settle(app, pilot)
        await pilot.press("y")
        await settle(app, pilot)
        assert "Exported" in str(app.screen.query_one("#export-result").render())
    assert out.exists()


async def test_a_failed_export_stops_the_progress_and_says_why(demo_store, make_app, workdir):
    store, refs = demo_store
    app = make_app(store)
    (workdir / "taken.jsonl").mkdir()  # a folder where the file should go: the export cannot write it
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("f2")
        await settle(app, pilot)
        await type_into(app, pilot, "#export-path", str(workdir / "taken.jsonl"))
        await pilot.press("ctrl+x")
        await settle(app, pilot)
        shown = str(app.screen.query_one("#export-result").render())
        assert "Exporting" not in shown and "Export failed" in shown
        assert not app.screen.query_one("#export-progress").display


async def test_an_existing_file_is_replaced_only_when_asked(demo_store, make_app, workdir):
    store, refs = demo_store
    app = make_app(store)
    out = workdir / "earlier.jsonl"
    out.write_text("an earlier export I want to keep\n", encoding="utf-8")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("f2")
        await settle(app, pilot)
        await type_into(app, pilot, "#export-path", str(out))
        await pilot.press("ctrl+x")
        await settle(app, pilot)
        assert isinstance(app.screen, ConfirmScreen)
        assert str(out) in str(app.screen.query_one(".dialog-body").render())
        await pilot.press("n")
        await settle(app, pilot)
        assert "Not exported" in str(app.screen.query_one("#export-result").render())
        assert out.read_text(encoding="utf-8") == "an earlier export I want to keep\n"
        await pilot.press("ctrl+x")
        await settle(app, pilot)
        await pilot.press("y")
        await settle(app, pilot)
        assert "Exported" in str(app.screen.query_one("#export-result").render())
    assert json.loads(out.read_text(encoding="utf-8").splitlines()[0])["kind"] == "pcp.export.v1"


async def test_a_stopped_bulk_deletion_is_listed_with_the_receipts_until_it_is_finished(demo_store, make_app):
    store, refs = demo_store
    flt = {"scopes": ["project:garden"]}
    started = store.begin_bulk_delete(flt, "stopped in a test", store.plan_bulk_delete(flt)["digest"], batch_size=2)
    app = make_app(store)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await pilot.press("f2")
        await settle(app, pilot)
        await pilot.press("4")
        await settle(app, pilot)
        stopped = app.screen.query_one("#stopped-deletions")
        shown = str(stopped.render())
        assert stopped.display and started["receipt_id"] in shown and f"0 of {started['pages']:,} pages" in shown
        assert f"pcp delete --resume {started['receipt_id']}" in shown
        store.resume_bulk_delete(started["receipt_id"])
        app.announce_change(None)
        await settle(app, pilot)
        assert not stopped.display
        table = app.screen.query_one("#receipts-table")
        assert started["receipt_id"] in [table.get_row_at(i)[0] for i in range(table.row_count)]


async def test_the_default_exports_folder_is_made_for_the_owner_only(demo_store, make_app, workdir):
    """Report 21: the exports/ folder the app made was drwxr-xr-x (its files 0600; the README says 0700)."""
    import stat

    store, _ = demo_store
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("f2")
        await settle(app, pilot)
        assert not (workdir / "exports").exists()
        await pilot.press("ctrl+x")
        await settle(app, pilot)
        assert "Exported" in str(app.screen.query_one("#export-result").render())
    assert stat.S_IMODE((workdir / "exports").stat().st_mode) == 0o700
