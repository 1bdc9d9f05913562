"""The app walk's defects at 80x24 and 80 columns (issue 35, ../shared/reports/app-walk-2026-12-05.md): the
Revisions tab's diff room (14), ..."""

from __future__ import annotations

from helpers import open_in_tab, prompts, said, settle, until

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
