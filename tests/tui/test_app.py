"""The app as a whole: welcome and import, the demo, reviews, keymap, themes, help, palette, quitting."""

from __future__ import annotations

from pathlib import Path

import pytest

from rich.cells import cell_len
from helpers import page_list, said, settle, type_into, until
from pcp_tui import commands
from pcp_tui.screens.confirm import ConfirmScreen
from pcp_tui.screens.help import HelpScreen
from pcp_tui.screens.main import MainScreen
from pcp_tui.screens.recommendations import RecommendationsScreen
from pcp_tui.screens.welcome import WelcomeScreen

SIZE = (120, 40)


async def test_empty_store_welcomes_and_imports_with_progress(demo_store, empty_store, make_app, workdir):
    demo, refs = demo_store
    export = workdir / "from-demo.jsonl"
    demo.export(export)
    app = make_app(empty_store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert isinstance(app.screen, WelcomeScreen)
        app.screen.query_one("#source").value = "export"
        await type_into(app, pilot, "#path", str(export))
        await pilot.press("ctrl+s")
        await settle(app, pilot)
        assert "Imported" in str(app.screen.query_one("#result").render())
        assert app.screen.query_one("#progress").percentage == 1.0
        await pilot.press("escape")  # to the pages
        await settle(app, pilot)
        assert isinstance(app.screen, MainScreen)
        assert len(page_list(app).rows) > 10
    assert empty_store.read_pages([refs["alpha-outline"]])["results"][0]["revision"]["page_id"] == refs["alpha-outline"]


def _title(app) -> str:
    return app.screen.query_one(".dialog-title").render().plain


async def test_f5_welcomes_only_an_empty_store_and_is_titled_import_on_a_store_with_pages(workdir, make_app):
    from store import Store

    st = Store.open(Path("one.db"))
    st.write_page("notes:one", content="# Only page\nIt goes later.")
    app = make_app(st)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert isinstance(app.screen, MainScreen)
        await pilot.press("f5")
        await settle(app, pilot)
        assert isinstance(app.screen, WelcomeScreen)
        assert _title(app) == "Import" and "Welcome" not in _title(app)
        assert "This store is empty" not in app.screen.query_one(".dialog-body").render().plain
        await pilot.press("escape")
        await settle(app, pilot)
        other = Store.open(Path("one.db"))  # another process empties the store meanwhile
        try:
            other.delete_scope("notes:one", "emptied elsewhere")
        finally:
            other.close()
        await pilot.press("f5")
        await settle(app, pilot)
        assert _title(app) == "Welcome to pcp"
        assert "This store is empty" in app.screen.query_one(".dialog-body").render().plain
    st.close()


async def test_the_first_run_on_an_empty_store_is_the_welcome(empty_store, make_app):
    app = make_app(empty_store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert isinstance(app.screen, WelcomeScreen) and _title(app) == "Welcome to pcp"


async def test_an_import_names_its_kept_report(empty_store, make_app):
    from pathlib import Path

    export = Path(__file__).resolve().parents[1] / "data" / "exports" / "chatgpt-danny-avila-LibreChat-3.json"
    app = make_app(empty_store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await type_into(app, pilot, "#path", str(export))
        await pilot.press("ctrl+s")
        await settle(app, pilot)
        shown = str(app.screen.query_one("#result").render())
    last = empty_store.import_report()
    assert f"pcp import-report {last['import_id']}" in shown and last["summary"]["conversations"] == 3


async def test_welcome_opens_the_demo_and_leaves_the_store_alone(empty_store, make_app, workdir, monkeypatch):
    monkeypatch.setenv("PCP_DEMO_DB", str(workdir / "the-demo.db"))
    app = make_app(empty_store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("ctrl+d")
        await settle(app, pilot)
        assert isinstance(app.screen, MainScreen)
        assert app.demo_mode and app.store.path == workdir / "the-demo.db"
        assert len(page_list(app).rows) > 10
    from store import Store

    with Store.open(Path("empty.db")) as again:
        assert again.list_pages(status="all")["pages"] == []


async def test_reviews_list_recommendations_and_tombstone_after_asking(demo_store, make_app):
    store, refs = demo_store
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert "1 tombstone recommendation" in str(app.screen.query_one("#status-line").render())
        await pilot.press("f4")
        await settle(app, pilot)
        assert isinstance(app.screen, RecommendationsScreen)
        assert app.screen.query_one("#reviews-table").row_count == 1
        await pilot.press("t")
        await settle(app, pilot)
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("ctrl+s")  # the dialog takes a reason, so it confirms with ctrl+s, not y
        await settle(app, pilot)
        assert any("Tombstoned “Idea: soil moisture sensor”" in m for m in said(app)), said(app)  # not its id
    head = store.read_pages([refs["garden-idea"]], projections=("manifest",))["results"][0]["revision"]
    assert head["lifecycle_status"] == "tombstoned"


async def test_user_keymap_remaps_and_a_broken_one_is_a_notice(demo_store, make_app, workdir):
    store, refs = demo_store
    config = workdir / "config"
    config.mkdir(exist_ok=True)
    (config / "keymap.toml").write_text('archive = "z"\nquit = "ctrl+x"\nnot_a_command = "k"\n', encoding="utf-8")
    app = make_app(store)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await settle(app, pilot)
        assert any("not_a_command" in n.message for n in app._notifications)
        await pilot.press("z")
        await settle(app, pilot)
        assert isinstance(app.screen, ConfirmScreen)  # z now archives (after asking)
        await pilot.press("escape")
        await pilot.press("ctrl+x")
        await settle(app, pilot)
    assert app.return_code == 0
    (config / "keymap.toml").write_text("archive = [broken\n", encoding="utf-8")
    app = make_app(store)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await settle(app, pilot)
        assert any("could not be read" in n.message for n in app._notifications)
        assert isinstance(app.screen, MainScreen)


async def test_themes_from_files_a_broken_one_is_a_notice_and_the_choice_is_remembered(demo_store, workdir):
    from pcp_tui.app import PcpApp

    store, refs = demo_store
    config = workdir / "config"
    (config / "themes").mkdir(parents=True)
    (config / "themes" / "mine.toml").write_text('name = "mine"\nprimary = "#336699"\n[variables]\n'
                                                  'lifecycle-tombstoned = "#ff00ff"\n', encoding="utf-8")
    (config / "themes" / "bad.json").write_text('{"name": "bad", "primary": "not a colour"}', encoding="utf-8")
    app = PcpApp(store.path, store=store, config_folder=config, cursor_blink=False, use_pyperclip=False)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await settle(app, pilot)
        assert app.theme == "pcp-dark"
        assert {"pcp-dark", "pcp-light", "pcp-high-contrast", "mine"} <= set(app.available_themes)
        assert "bad" not in app.available_themes
        assert any("bad.json" in n.message for n in app._notifications)
        assert app.get_css_variables()["lifecycle-archived"]  # app variables are declared for every theme
        app.theme = "pcp-light"
        saved = config / "config.toml"
        await until(pilot, lambda: saved.exists() and 'theme = "pcp-light"' in saved.read_text(encoding="utf-8"),
                    "the theme saved in the config")
    app = PcpApp(store.path, store=store, config_folder=config, cursor_blink=False, use_pyperclip=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert app.theme == "pcp-light"


async def test_help_lists_every_key_and_the_palette_every_command(demo_store, make_app):
    store, refs = demo_store
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        palette = {c.title for c in app.get_system_commands(app.screen)}
        main_titles = {c.title for c in commands.for_screen("main") if c.id != "command_palette"}
        assert main_titles <= palette and "Theme: pcp-high-contrast" in palette
        await pilot.press("f1")
        await settle(app, pilot)
        assert isinstance(app.screen, HelpScreen)
        table = app.screen.query_one("#keys")
        ids = {table.get_row_at(i)[4] for i in range(table.row_count)}
        assert {c.id for c in commands.COMMANDS} <= ids
        await pilot.press("escape")
        await pilot.press("ctrl+p")
        await settle(app, pilot)
        assert app.screen.__class__.__name__ == "CommandPalette"
        await pilot.press(*"Your rights", "enter")
        await settle(app, pilot)
        assert app.screen.__class__.__name__ == "RightsScreen"


async def test_ctrl_q_quits_with_status_zero(demo_store, make_app):
    store, refs = demo_store
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("ctrl+q")
        await until(pilot, lambda: app.return_code is not None, "the app to quit")
    assert app.return_code == 0


async def test_reviews_confirm_a_models_supersedes_as_the_owners_own(demo_store, make_app):
    from store import AccessSession

    store, refs = demo_store
    old, new = refs["alpha-outline"], refs["garden-idea"]
    model = store.with_session(AccessSession.model_client("helper-model", {"*": {"read", "search", "link"}}))
    rel = model.link_pages(new, "supersedes", old)
    assert store.read_pages([old], projections=("manifest",))["results"][0]["revision"]["lifecycle_status"] == "active"
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("f4")
        await settle(app, pilot)
        assert isinstance(app.screen, RecommendationsScreen)
        rows = app.screen.rows
        assert [r["action"] for r in rows].count("supersedes") == 1
        table = app.screen.query_one("#reviews-table")
        table.move_cursor(row=next(i for i, r in enumerate(rows) if r["action"] == "supersedes"))
        await pilot.press("s")
        await settle(app, pilot)
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("y")
        await settle(app, pilot)
        assert [r.get("action") for r in app.screen.rows] == ["tombstone"]
    head = store.read_pages([old], projections=("manifest", "relations"))["results"][0]
    assert head["revision"]["lifecycle_status"] == "superseded"
    owners = [r for r in head["relations"]["incoming"] if r["created_by"]["actor_type"] == "user"
              and r["relation_type"] == "supersedes" and r["from_page_id"] == new]
    assert len(owners) == 1 and owners[0]["relation_id"] != rel["relation_id"]


async def test_the_import_screen_shows_the_kept_report_and_imports_agent_sessions(empty_store, make_app):
    from pathlib import Path

    from textual.widgets import Select

    from pcp_tui.screens.welcome import SOURCES

    assert {"claude-code", "codex", "gemini"} <= {value for _, value in SOURCES}
    project = Path(__file__).resolve().parents[1] / "data" / "agents" / "claude-code" / "kfischer-okarin"
    app = make_app(empty_store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        app.screen.query_one("#source", Select).value = "claude-code"
        await type_into(app, pilot, "#path", str(project))
        await pilot.press("ctrl+s")
        await settle(app, pilot)
        lines = str(app.screen.query_one("#report-text").render())
        assert app.screen.query_one("#report-lines").display
    report = empty_store.import_report()
    assert report["source"] == "claude-code" and report["entries"]
    assert f"Report {report['import_id']}" in lines
    for entry in report["entries"][:5]:
        assert entry["item"] in lines and entry["outcome"] in lines


def test_a_store_path_is_shown_from_home_and_cut_from_its_start(monkeypatch, tmp_path):
    from pcp_tui.text import shown_path

    monkeypatch.setenv("HOME", str(tmp_path))
    deep = tmp_path / "a" / "very" / "long" / "folder" / "name" / "pcp" / "store.db"
    assert shown_path(deep) == "~/a/very/long/folder/name/pcp/store.db"
    assert shown_path(deep, 21) == "~/…/name/pcp/store.db" and shown_path(deep, 20) == "…/name/pcp/store.db"
    assert shown_path(deep, 15) == "…/pcp/store.db"  # (report 13: `…are/pcp/demo.db` cut inside a folder's name)
    assert shown_path(deep, 5) == "…store.db"  # the file name always
    assert shown_path("/srv/x\x1b]0;owned\x07.db") == "/srv/x␛]0;owned␇.db"  # never a terminal escape
    assert shown_path(tmp_path.parent / (tmp_path.name + "-other") / "s.db").startswith("/")  # not "~-other"
    wide = tmp_path / ("紧致性" * 6) / "s.db"
    assert cell_len(shown_path(wide, 12)) <= 12


async def test_the_status_line_keeps_its_keys_on_a_long_store_path(workdir, fixed_clock, make_app, monkeypatch):
    """At 80x24 a store deep in folders shows the end of its path: the basket, the recommendation and help
    stay on the line (the path took it all and cut them off); narrower, help goes before the others."""
    from store import Store

    from pcp_tui import demo

    monkeypatch.setenv("HOME", str(workdir))  # the path as shown is as long on every machine: ~/a-deep-folder/…
    folder = workdir / "a-deep-folder" / "where-the-notes-of-many-years-are-kept"
    folder.mkdir(parents=True)
    store = Store.open(folder / "my-store.db")
    demo.fill(store)
    app = make_app(store)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        bar = app.screen.query_one("#status-line")
        text = bar.render().plain
        assert text.startswith("…") and "my-store.db" in text
        assert "1 tombstone recommendation (f4)" in text and text.endswith("help f1")
        assert cell_len(text) <= bar.content_size.width
        await pilot.resize_terminal(72, 24)  # too narrow for all of it: help goes first (F1 works anyway)
        await settle(app, pilot)
        text = bar.render().plain
        assert "help" not in text and "1 tombstone recommendation (f4)" in text and "my-store.db" in text
        assert cell_len(text) <= bar.content_size.width
        await pilot.resize_terminal(160, 48)
        await settle(app, pilot)
        assert str(folder / "my-store.db").replace(str(Path.home()), "~") in bar.render().plain  # room for it all
    store.close()


async def test_notifications_are_plain_text(demo_store, make_app):
    """A toast carries titles and relation types a writer chose: never markup (a live `@click` link) and never
    a terminal escape sequence, whichever widget notifies."""
    store, refs = demo_store
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        app.screen.notify("Linked “[@click=app.quit]x[/]” ─[b]uses[/b]─▶ \x1b]0;owned\x07.", title="[i]Link\x1b")
        await settle(app, pilot)
        (note,) = list(app._notifications)
        assert note.markup is False
        assert note.message == "Linked “[@click=app.quit]x[/]” ─[b]uses[/b]─▶ ␛]0;owned␇."
        assert note.title == "[i]Link␛"


async def test_f1_in_a_dialog_is_titled_by_that_dialog(demo_store, make_app):
    """F1 in the dates dialog said "Confirmations with a reason" (the group of dialogs with fields): it names the
    dialog it was opened from."""
    store, refs = demo_store
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        page_list(app).focus()
        await pilot.press("d")
        await settle(app, pilot)
        assert _title(app) == "Filter by date"
        await pilot.press("f1")
        await settle(app, pilot)
        assert isinstance(app.screen, HelpScreen) and _title(app) == "Keys of this dialog: Filter by date"

        await pilot.press("escape")
        await settle(app, pilot)
        await pilot.press("escape")
        await settle(app, pilot)
        await pilot.press("ctrl+p")  # the command palette: no title of its own ("Keys of this dialog: None")
        await settle(app, pilot)
        await pilot.press("f1")
        await settle(app, pilot)
        assert isinstance(app.screen, HelpScreen) and _title(app) == "Keys of this dialog: Command palette"


@pytest.mark.parametrize("size", [(80, 24), (160, 48)])
async def test_help_descriptions_wrap_instead_of_being_cut(demo_store, make_app, size):
    """F1's "What it does" was cut mid-word at 80x24 ("Switch the searc"): it takes the width the other columns
    leave and wraps; the Id column is left out when it would leave that under 24 cells."""
    from rich.text import Text
    from textual.widgets import DataTable

    store, refs = demo_store
    app = make_app(store)
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        await pilot.press("f1")
        await settle(app, pilot)
        table = app.screen.query_one(DataTable)
        labels = [c.label.plain for c in table.columns.values()]
        assert ("Id" in labels) == (size[0] >= 120)
        what = next(c for c in table.columns.values() if c.label.plain == "What it does")
        assert table.row_count == sum(1 for c in commands.COMMANDS)
        for key, row in table.rows.items():
            text = table.get_row(key)[labels.index("What it does")]
            lines = Text(text.plain).wrap(app.console, what.width)
            assert row.height >= len(lines), (text.plain, row.height, what.width)
        right = sum(c.get_render_width(table) for c in table.columns.values())
        assert right <= table.scrollable_content_region.width  # nothing scrolls off to the right


async def test_help_at_80x24_names_every_id_and_keeps_its_preamble_short(demo_store, make_app):
    """Report 20: at 80x24 the preamble took 7 lines, and it pointed to an Id column the narrow screen hid, so the
    ids keymap.toml needs could not be learnt; the Reviews dialog's help repeated the Revisions tab's keys."""
    from textual.widgets import DataTable

    store, refs = demo_store
    app = make_app(store)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await pilot.press("f1")
        await settle(app, pilot)
        assert isinstance(app.screen, HelpScreen)
        table = app.screen.query_one("#keys", DataTable)
        labels = [c.label.plain for c in table.columns.values()]
        assert "Id" not in labels
        what = labels.index("What it does")
        texts = [table.get_row_at(i)[what].plain for i in range(table.row_count)]
        assert all(" · id " in t for t in texts)  # each row ends with the id keymap.toml remaps
        assert {t.rsplit(" · id ", 1)[1] for t in texts} == {c.id for c in commands.COMMANDS}
        preamble = app.screen.query_one("#help-preamble")
        assert preamble.region.height <= 4, preamble.region
        await pilot.press("escape")
        await settle(app, pilot)
        await pilot.press("f4")
        await settle(app, pilot)
        await pilot.press("f1")
        await settle(app, pilot)
        assert "Revisions" not in str(app.screen.query_one("#help-preamble").render())
