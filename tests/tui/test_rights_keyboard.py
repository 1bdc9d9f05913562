"""Scope delete by keyboard alone: tab to the tab bar, pick the scope, type it, confirm twice."""

from __future__ import annotations

import pytest
from store import NotFound

from helpers import settle
from pcp_tui.screens.confirm import ConfirmScreen
from pcp_tui.screens.rights import RightsScreen


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_a_scope_is_deleted_with_the_keyboard_only(demo_store, make_app, size):
    store, refs = demo_store
    app = make_app(store)
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        await pilot.press("f2")
        await settle(app, pilot)
        assert isinstance(app.screen, RightsScreen)
        trail = []
        for _ in range(12):  # shift+tab until the tab bar has focus
            if type(app.screen.focused).__name__ == "ContentTabs":
                break
            await pilot.press("shift+tab")
            trail.append(type(app.screen.focused).__name__)
        assert type(app.screen.focused).__name__ == "ContentTabs", trail
        await pilot.press("right")
        await settle(app, pilot)
        assert app.screen.query_one("#rights-tabs").active == "delete-scope"
        await pilot.press("tab")
        assert app.screen.focused.id == "scope-choice", app.screen.focused
        await pilot.press("enter")
        await settle(app, pilot)
        options = [str(o[0]) for o in app.screen.query_one("#scope-choice")._options]
        steps = next(i for i, label in enumerate(options) if label.startswith("user:me"))
        for _ in range(steps):
            await pilot.press("down")
        await pilot.press("enter")
        await settle(app, pilot)
        assert app.screen.query_one("#scope-choice").value == "user:me"
        await pilot.press("tab")
        assert app.screen.focused.id == "scope-typed", app.screen.focused
        await pilot.press(*"user:me")
        await pilot.press("tab", "tab")
        assert app.screen.focused.id == "scope-run", app.screen.focused
        await pilot.press("enter")
        await settle(app, pilot)
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("y")
        await settle(app, pilot)
    with pytest.raises(NotFound):
        store.read_pages([refs["me-prefs"]])


async def test_the_rights_tabs_have_keys_that_help_and_the_palette_name(demo_store, make_app):
    from textual.widgets import DataTable, SelectionList

    from pcp_tui.screens.help import HelpScreen

    store, _ = demo_store
    app = make_app(store)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await pilot.press("f2")
        await settle(app, pilot)
        tabs = app.screen.query_one("#rights-tabs")
        for key, tab, focused in (("3", "audit", "audit-table"), ("4", "receipts", "receipts-table"),
                                  ("2", "delete-scope", "scope-choice"), ("1", "export", "export-scopes")):
            await pilot.press(key)
            await settle(app, pilot)
            assert tabs.active == tab and app.screen.focused.id == focused, (key, app.screen.focused)
        assert isinstance(app.screen.focused, SelectionList)
        await pilot.press("3")
        await settle(app, pilot)
        assert isinstance(app.screen.focused, DataTable)
        await pilot.press("f1")
        await settle(app, pilot)
        assert isinstance(app.screen, HelpScreen)
        table = app.screen.query_one("#keys")
        rows = [" ".join(str(c) for c in table.get_row_at(i)) for i in range(table.row_count)]
        assert any("Audit log tab" in row and "3" in row for row in rows), rows
        await pilot.press("escape")
        await settle(app, pilot)
        from pcp_tui.palette import PcpCommands  # the palette's search, on this screen

        hits = [hit.text async for hit in PcpCommands(app.screen).search("audit")]
        assert "Audit log tab" in hits, hits


async def test_the_rights_tab_titles_carry_their_keys_at_80x24(demo_store, make_app):
    store, _ = demo_store
    app = make_app(store)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await pilot.press("f2")
        await settle(app, pilot)
        bar = app.screen.query_one("#rights-tabs #tabs-scroll")
        titles = []
        for tab in ("export", "delete-scope", "audit", "receipts"):
            header = app.screen.query_one(f"#rights-tabs #--content-tab-{tab}")
            assert bar.region.contains_region(header.region), tab
            titles.append(str(header.label))
        assert [t.split()[0] for t in titles] == ["1", "2", "3", "4"], titles


async def test_a_rights_tab_shows_only_its_own_keys_in_the_footer(demo_store, make_app):
    """On Delete a scope the footer still said `^x Export ^n More audit`: keys of the other tabs."""
    from textual.widgets._footer import FooterKey

    store, _ = demo_store
    app = make_app(store)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await pilot.press("f2")
        await settle(app, pilot)

        def footer() -> set[str]:
            return {k.description for k in app.screen.query(FooterKey)}

        for key, shown, hidden in (("1", {"Export"}, {"More audit"}), ("2", set(), {"Export", "More audit"}),
                                   ("3", {"More audit"}, {"Export"}), ("4", set(), {"Export", "More audit"})):
            await pilot.press(key)
            await settle(app, pilot)
            assert shown <= footer() and not hidden & footer(), (key, footer())
        await pilot.press("ctrl+x")  # Export's key on the Receipts tab: nothing is exported
        await settle(app, pilot)
        assert app.screen.query_one("#rights-tabs").active == "receipts"
        assert "Exported" not in str(app.screen.query_one("#export-result").render())
