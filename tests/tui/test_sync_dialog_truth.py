"""The sync dialog (F7) says what is so: a pairing code only while it can pair, the store's pairing state in
words, a folder checked when it is typed, and an answer to every key (a tmux walk found each of these)."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import said, settle, type_into
from pcp_tui import config
from pcp_tui.screens.confirm import ConfirmScreen, FormScreen
from pcp_tui.screens.sync import SyncScreen
from pcp_tui.widgets.fields import Field
from store import Store


def one_page(path: Path) -> None:
    with Store.open(path) as st:
        st.write_page("notes:travel", content="# Ferry times\nThe morning ferry leaves at 7:40.")


async def open_dialog(app, pilot) -> SyncScreen:
    await settle(app, pilot)
    await pilot.press("f7")
    await settle(app, pilot)
    assert isinstance(app.screen, SyncScreen)
    return app.screen


def a_store_with_its_folder(workdir: Path, *, page: bool = True) -> tuple[Store, Path]:
    """Store a.db (with one page), its sync folder made and remembered."""
    folder = workdir / "syncdir"
    folder.mkdir()
    config.save_sync_folder(workdir / "config", str(folder))
    if page:
        one_page(Path("a.db"))
    return Store.open(Path("a.db")), folder


async def offer_a_code(app, pilot, dialog: SyncScreen) -> str:
    """ctrl+o: the code the dialog shows."""
    await pilot.press("ctrl+o")
    await settle(app, pilot)
    return code_shown(dialog).split("Pairing code: ", 1)[1].split()[0]


def code_shown(dialog: SyncScreen) -> str:
    code = dialog.query_one("#sync-code")
    return code.render().plain if code.display else ""


def state(dialog: SyncScreen) -> str:
    return dialog.query_one("#sync-state").render().plain


async def type_folder(app, pilot, path: Path | str) -> None:
    await type_into(app, pilot, "#field-folder", str(path))
    await pilot.press("enter")
    await settle(app, pilot)


# --- 1. a pairing code only while it can pair ---


@pytest.mark.asyncio
async def test_the_code_goes_when_the_folder_changes(workdir, make_app):
    first, second = workdir / "usb", workdir / "dropbox"
    first.mkdir()
    second.mkdir()
    config.save_sync_folder(workdir / "config", str(first))
    one_page(Path("a.db"))
    st = Store.open(Path("a.db"))
    app = make_app(st)
    async with app.run_test(size=(80, 24)) as pilot:
        dialog = await open_dialog(app, pilot)
        await pilot.press("ctrl+o")
        await settle(app, pilot)
        assert "Pairing code: " in code_shown(dialog)
        await pilot.press("ctrl+f")  # the code belongs to the offer in the first folder
        await settle(app, pilot)
        await type_folder(app, pilot, second)
        assert app.screen is dialog and str(second) in state(dialog)
        assert code_shown(dialog) == ""
    st.close()


@pytest.mark.asyncio
async def test_the_code_goes_once_a_store_joined_with_it(workdir, make_app):
    st, folder = a_store_with_its_folder(workdir)
    app = make_app(st)
    async with app.run_test(size=(80, 24)) as pilot:
        dialog = await open_dialog(app, pilot)
        code = await offer_a_code(app, pilot, dialog)
        with Store.open(Path("b.db")) as other:  # the other machine types it (and has not synced yet)
            other.sync_join(folder, code)
        app.announce_change()  # any reload of the dialog sees the offer gone from the folder
        await settle(app, pilot)
        assert code_shown(dialog) == ""
        assert " · a store took the code" in state(dialog), state(dialog)
    st.close()


@pytest.mark.asyncio
async def test_the_code_goes_when_a_sync_shows_the_store_that_joined(workdir, make_app):
    st, folder = a_store_with_its_folder(workdir)
    app = make_app(st)
    async with app.run_test(size=(80, 24)) as pilot:
        dialog = await open_dialog(app, pilot)
        code = await offer_a_code(app, pilot, dialog)
        with Store.open(Path("b.db")) as other:
            other.sync_join(folder, code)
            other.sync_folder(folder)
            joined = other.sync_status()["store_id"]
        await pilot.press("ctrl+s")
        await settle(app, pilot)
        assert joined in state(dialog)  # the peer line
        assert code_shown(dialog) == ""
        assert " · paired with 1 store" in state(dialog), state(dialog)
    st.close()


# --- 2. the state line ---


@pytest.mark.asyncio
async def test_the_state_line_says_offered_paired_or_not_paired_in_words(workdir, make_app):
    st, folder = a_store_with_its_folder(workdir)
    app = make_app(st)
    async with app.run_test(size=(80, 24)) as pilot:
        dialog = await open_dialog(app, pilot)
        assert "This store: no id yet (given at its first sync or pairing) · not paired yet" in state(dialog)
        await pilot.press("ctrl+o")
        await settle(app, pilot)
        store_id = st.sync_status()["store_id"]
        assert f"This store: {store_id} · offered a code, no store has joined yet" in state(dialog), state(dialog)
    st.close()


# --- 3, 4. the folder checked when it is typed ---


@pytest.mark.asyncio
async def test_ctrl_f_refuses_a_file_in_the_form(workdir, make_app):
    st, folder = a_store_with_its_folder(workdir, page=False)
    a_file = workdir / "notes.txt"
    a_file.write_text("mine")
    app = make_app(st)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_dialog(app, pilot)
        await pilot.press("ctrl+f")
        await settle(app, pilot)
        await type_folder(app, pilot, a_file)
        assert isinstance(app.screen, FormScreen)
        assert app.screen.query_one("#field-folder", Field).value == str(a_file)
        assert any(f"{a_file} is a file, not a folder" in n for n in said(app)), said(app)
        assert config.load_settings(workdir / "config").sync_folder == str(folder)
    st.close()


@pytest.mark.asyncio
async def test_a_folder_whose_parent_is_missing_is_refused_and_nothing_is_created(workdir, make_app):
    unplugged = workdir / "media" / "usb" / "pcp"
    st = Store.open(Path("a.db"))
    app = make_app(st)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_dialog(app, pilot)
        await pilot.press("ctrl+f")
        await settle(app, pilot)
        await type_folder(app, pilot, unplugged)
        assert isinstance(app.screen, FormScreen)  # open still, no question to create anything
        assert app.screen.query_one("#field-folder", Field).value == str(unplugged)
        message = " ".join(said(app))
        assert f"No folder {unplugged}, and {unplugged.parent} does not exist either" in message, message
        assert "is the drive plugged in?" in message
        assert not (workdir / "media").exists()
        assert config.load_settings(workdir / "config").sync_folder is None
    st.close()


@pytest.mark.asyncio
async def test_a_missing_last_folder_is_created_only_when_the_user_says_so(workdir, make_app):
    new = workdir / "shared"
    st = Store.open(Path("a.db"))
    app = make_app(st)
    async with app.run_test(size=(80, 24)) as pilot:
        dialog = await open_dialog(app, pilot)
        await pilot.press("ctrl+f")
        await settle(app, pilot)
        await type_folder(app, pilot, new)
        assert type(app.screen) is ConfirmScreen  # a yes/no question, y / n / escape
        assert f"Create the folder {new}?" in app.screen.query_one(".dialog-body").render().plain
        await pilot.press("n")  # no: back to the form with what was typed
        await settle(app, pilot)
        assert isinstance(app.screen, FormScreen)
        assert app.screen.query_one("#field-folder", Field).value == str(new)
        assert not new.exists() and config.load_settings(workdir / "config").sync_folder is None
        await pilot.press("enter")
        await settle(app, pilot)
        await pilot.press("y")
        await settle(app, pilot)
        assert app.screen is dialog and new.is_dir()
        assert config.load_settings(workdir / "config").sync_folder == str(new)
    st.close()


# --- 5, 6, 7. an answer to every key ---


@pytest.mark.asyncio
async def test_enter_with_no_conflicts_says_there_is_none(workdir, make_app):
    st = Store.open(Path("a.db"))
    app = make_app(st)
    async with app.run_test(size=(80, 24)) as pilot:
        dialog = await open_dialog(app, pilot)
        await pilot.press("enter")
        await settle(app, pilot)
        assert app.screen is dialog
        assert any("No pages with conflicts to open." in n for n in said(app)), said(app)
        assert not app._notifications  # said in the dialog, not in a toast over it
    st.close()


@pytest.mark.asyncio
async def test_a_code_that_works_says_it_paired_then_what_the_sync_did(workdir, make_app):
    folder = workdir / "syncdir"
    with Store.open(Path("a.db")) as other:
        other.write_page("notes:travel", content="# Ferry times\nThe morning ferry leaves at 7:40.")
        code = other.sync_pair(folder)["code"]
        other.sync_folder(folder)
        offered_by = other.sync_status()["store_id"]
    config.save_sync_folder(workdir / "config", str(folder))
    st = Store.open(Path("b.db"))
    app = make_app(st)
    async with app.run_test(size=(80, 24)) as pilot:
        dialog = await open_dialog(app, pilot)
        await pilot.press("ctrl+t")
        await settle(app, pilot)
        await type_into(app, pilot, "#field-code", code)
        await pilot.press("enter")
        await settle(app, pilot)
        assert app.screen is dialog and not dialog.running
        message = " ".join(said(app))
        assert f"Paired with {offered_by} (this store took its owner). Took in 1 new page" in message, message
        assert " · paired with 1 store" in state(dialog)
    st.close()


@pytest.mark.asyncio
async def test_a_one_field_form_left_empty_asks_for_the_field(workdir, make_app):
    st, folder = a_store_with_its_folder(workdir, page=False)
    app = make_app(st)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_dialog(app, pilot)
        await pilot.press("ctrl+t")
        await settle(app, pilot)
        await pilot.press("enter")  # no code typed
        await settle(app, pilot)
        assert isinstance(app.screen, FormScreen)
        message = " ".join(said(app))
        assert "Fill in the field first." in message and "every field" not in message, message
    st.close()
