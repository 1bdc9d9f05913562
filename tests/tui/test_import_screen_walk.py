"""The import screen (F5, and the welcome screen of an empty store) at the smallest size, 80x24."""

from __future__ import annotations

from textual.widgets import Button


async def test_the_import_screen_fits_80_columns(empty_store, make_app):
    app = make_app(empty_store)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        screen = app.screen
        box = screen.query_one("#welcome")
        assert box.region.right <= 80, box.region  # the border and the buttons are on screen, not past column 80
        for button in screen.query(Button):
            if button.display:
                assert button.region.right <= 80, (button.id, button.region)


async def test_after_an_import_at_80x24_its_result_and_the_way_on_are_on_screen(empty_store, make_app):
    from pathlib import Path

    from textual.widgets import ProgressBar, Select

    from helpers import settle, type_into

    project = Path(__file__).resolve().parents[1] / "data" / "agents" / "claude-code" / "kfischer-okarin"
    app = make_app(empty_store)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        screen = app.screen
        screen.query_one("#source", Select).value = "claude_code"
        await type_into(app, pilot, "#path", str(project))
        await pilot.press("ctrl+s")
        await settle(app, pilot)
        await pilot.pause(0.2)
        visible = screen.region
        back = screen.query_one("#back")
        assert visible.contains_region(back.region) and back.region.height >= 1, back.region
        result = screen.query_one("#result")
        assert result.region.height >= 1 and visible.overlaps(result.region), result.region
        assert screen.focused is screen.query_one("#back")
        bar = screen.query_one("#progress", ProgressBar)
        assert bar.percentage == 1  # a finished import shows a full bar
