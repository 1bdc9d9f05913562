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
