"""The import screen (F5, and the welcome screen of an empty store) at the smallest size, 80x24."""

from __future__ import annotations

from helpers import settle, until
from textual.widgets import Button


async def test_the_import_screen_fits_80_columns(empty_store, make_app):
    app = make_app(empty_store)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
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
        screen.query_one("#source", Select).value = "claude-code"
        await type_into(app, pilot, "#path", str(project))
        await pilot.press("ctrl+s")
        await settle(app, pilot)
        await until(pilot, lambda: screen.focused is screen.query_one("#back"), "the way on focused after the import")
        visible = screen.region
        back = screen.query_one("#back")
        result = screen.query_one("#result")
        # The focus moves first; the scroll that brings it into sight is the next layout pass: wait for it.
        await until(pilot, lambda: visible.contains_region(back.region) and back.region.height >= 1,
                    "the way on scrolled into sight")
        assert result.region.height >= 1 and visible.overlaps(result.region), result.region
        assert screen.focused is screen.query_one("#back")
        bar = screen.query_one("#progress", ProgressBar)
        assert bar.percentage == 1  # a finished import shows a full bar


def _one_with_plural(text: str) -> list[str]:
    """Counts of one with a plural noun ("1 conversations", "1 pages created")."""
    import re

    return re.findall(r"(?<![\d,.])1 (?:[a-z]+ )?[a-z]+s\b", text)


async def test_an_import_of_one_conversation_counts_it_in_the_singular(empty_store, make_app):
    from pathlib import Path

    from helpers import settle, type_into
    from textual.widgets import Select

    export = Path(__file__).resolve().parents[1] / "data" / "exports" / "claude-simonw-claude-to-sqlite-2.json"
    app = make_app(empty_store)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        app.screen.query_one("#source", Select).value = "claude"
        await type_into(app, pilot, "#path", str(export))
        await pilot.press("ctrl+s")
        await settle(app, pilot)
        result = str(app.screen.query_one("#result").render())
        lines = str(app.screen.query_one("#report-text").render())
    summary = empty_store.import_report()["summary"]
    assert summary["conversations"] == 1 and summary["created"] > 1, summary
    assert result.startswith("Imported: 1 conversation, "), result
    assert f"{summary['created']} pages created" in result, result
    assert _one_with_plural(result) == [] and _one_with_plural(lines) == [], (result, lines)


async def test_an_import_of_a_pcp_export_counts_the_records_it_added(demo_store, make_app, workdir):
    import re

    from helpers import settle, type_into
    from store import Store
    from textual.widgets import Select

    store, _ = demo_store
    export = workdir / "mine.jsonl"
    store.export(export)
    target = Store.open(workdir / "fresh.db")  # an empty store takes any owner's export
    try:
        app = make_app(target)
        async with app.run_test(size=(80, 24)) as pilot:
            await settle(app, pilot)
            app.screen.query_one("#source", Select).value = "export"
            await type_into(app, pilot, "#path", str(export))
            await pilot.press("ctrl+s")
            await settle(app, pilot)
            result = str(app.screen.query_one("#result").render())
    finally:
        target.close()
    assert "nothing new" not in result and re.search(r"\b\d+ pages, .*\b\d+ revisions\b", result), result
    assert _one_with_plural(result) == [], result


async def _failed_import(app, pilot, source: str, path: str) -> None:
    from helpers import settle, type_into
    from textual.widgets import Select

    await settle(app, pilot)
    app.screen.query_one("#source", Select).value = source
    await type_into(app, pilot, "#path", path)
    await pilot.press("ctrl+s")
    await settle(app, pilot)
    await until(pilot, lambda: str(app.screen.query_one("#result").render()).startswith("The import failed: "),
                "the failure on the screen")


def _failure_is_on_the_screen(app, reason: str) -> None:
    """The failure's own message in the result, in full and in sight; no toast over the buttons; no bar."""
    from textual.widgets import ProgressBar

    screen = app.screen
    result = screen.query_one("#result")
    shown = str(result.render())
    assert shown.startswith("The import failed: ") and reason in shown, shown
    assert screen.region.contains_region(result.region), result.region
    assert result.region.height >= len(result.render_lines(result.region.reset_offset)), result.region
    assert not screen.query_one("#progress", ProgressBar).display  # stopped, not animating "--%"
    assert list(app._notifications) == []  # the screen says it; a toast would cover the buttons
    for button in screen.query(Button):
        assert screen.region.contains_region(button.region), (button.id, button.region)


async def test_a_failed_import_keeps_its_reason_on_the_screen_at_80x24(empty_store, make_app):
    app = make_app(empty_store)
    async with app.run_test(size=(80, 24)) as pilot:
        await _failed_import(app, pilot, "chatgpt", "/tmp/nonexist_qa/foo.json")
        _failure_is_on_the_screen(app, "/tmp/nonexist_qa/foo.json: no such file.")
        await settle(app, pilot)
        _failure_is_on_the_screen(app, "no such file.")  # it stays (until the next import)


async def test_an_export_of_another_owner_says_the_conflict_on_the_screen(demo_store, make_app, workdir):
    from store import Store

    store, _ = demo_store
    with Store.open(workdir / "theirs.db") as theirs:  # another owner's store, with a page
        theirs.write_page(namespace="notes:theirs", content="their note")
        theirs.export(workdir / "theirs.jsonl")
    app = make_app(store)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle_on_import_screen(app, pilot)
        await _failed_import(app, pilot, "export", str(workdir / "theirs.jsonl"))
        _failure_is_on_the_screen(app, "is not empty.")


async def settle_on_import_screen(app, pilot) -> None:
    from helpers import settle

    await settle(app, pilot)
    await pilot.press("f5")
    await settle(app, pilot)


async def test_an_import_without_a_path_says_so_on_the_screen_not_in_a_toast_over_its_buttons(empty_store, make_app):
    from helpers import settle

    app = make_app(empty_store)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await settle(app, pilot)
        await pilot.press("f5")
        await settle(app, pilot)
        app.screen.query_one("#path").value = ""
        await pilot.press("ctrl+s")
        await settle(app, pilot)
        screen = app.screen
        result = screen.query_one("#result")
        assert "Give the path of the file or folder to import." in str(result.render())
        assert screen.region.contains_region(result.region)
        assert list(app._notifications) == []
        for button in screen.query(Button):
            assert screen.region.contains_region(button.region), (button.id, button.region)


async def test_f5_starts_at_import_from_tab_reaches_the_path_and_the_hints_follow_the_importer(demo_store, make_app):
    """Report 16: focus started in Path, so one Tab put the path into Namespace; the hints read like values."""
    from textual.widgets import Select

    from helpers import settle

    store, refs = demo_store
    app = make_app(store)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await pilot.press("f5")
        await until(pilot, lambda: app.screen.query("#source"), "the import screen")
        screen = app.screen
        await until(pilot, lambda: screen.focused is screen.query_one("#source"), "Import from focused")
        await pilot.press("tab")
        await until(pilot, lambda: screen.focused is screen.query_one("#path"), "Tab to the path")
        path, namespace = screen.query_one("#path"), screen.query_one("#namespace")
        assert path.placeholder.startswith("e.g. ") and namespace.placeholder.startswith("empty: ")
        screen.query_one("#source", Select).value = "claude-code"
        await until(pilot, lambda: "project" in namespace.placeholder and "claude" in path.placeholder,
                    "the hints of the Claude Code importer")


async def test_go_to_the_pages_after_an_import_lists_them_not_the_old_search(demo_store, make_app):
    """Report 16: "Go to the pages" came back to `“water” · No pages match.`, the imported pages out of sight."""
    from pathlib import Path

    from helpers import page_list, settle, type_into

    store, refs = demo_store
    export = Path(__file__).resolve().parents[1] / "data" / "exports" / "chatgpt-danny-avila-LibreChat-1.json"
    app = make_app(store)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await pilot.press("slash", *"water", "enter")
        await settle(app, pilot)
        await pilot.press("f5")
        await until(pilot, lambda: app.screen.query("#source"), "the import screen")
        screen = app.screen
        await type_into(app, pilot, "#path", str(export))
        await pilot.press("ctrl+s")
        await until(pilot, lambda: screen.focused is screen.query_one("#back"), "the way on focused after the import")
        await pilot.press("enter")
        await until(pilot, lambda: app.screen is not screen, "back to the pages")
        await settle(app, pilot)
        assert app.screen.query_one("#search").value == "" and app.screen.query_text == ""
        assert app.screen.scopes is None
        assert any(r["namespace"].startswith("conversation:chatgpt:") for r in page_list(app).rows)
