"""Report 18: an off checkbox drew the same X as an on one (only its colour differed): on an erasure dialog it read
as "cascade on". Off is an empty box now, in the delete dialog and in the export's scope list."""

from __future__ import annotations

from helpers import select_page, settle, until


async def test_the_cascade_box_is_empty_when_off_and_marked_when_on(demo_store, make_app):
    store, refs = demo_store
    app = make_app(store)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        await select_page(app, pilot, refs["garden-readme"])
        await pilot.press("D")
        await until(pilot, lambda: app.screen.query("#cascade"), "the delete dialog")
        await settle(app, pilot)
        box = app.screen.query_one("#cascade")
        assert not box.value and "X" not in str(box.render()).split("Also")[0]
        box.value = True  # (drawn as when ctrl+k turns it on for a page with derived pages)
        await settle(app, pilot)
        assert "X" in str(box.render()).split("Also")[0]


async def test_the_export_scope_list_shows_an_empty_box_for_a_scope_not_chosen(demo_store, make_app):
    store, _ = demo_store
    app = make_app(store)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        await pilot.press("f2")
        await settle(app, pilot)
        scopes = app.screen.query_one("#export-scopes")
        await until(pilot, lambda: scopes.option_count > 1, "the scopes")
        await settle(app, pilot)
        first = scopes.render_line(0).text
        assert "X" not in first[:4], first
        scopes.select(scopes.get_option_at_index(0).value)
        await settle(app, pilot)
        assert "X" in scopes.render_line(0).text[:4]
