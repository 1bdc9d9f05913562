"""The sync dialog (F7) says what is so: a pairing code only while it can pair, the store's pairing state in
words, a folder checked when it is typed, and an answer to every key (a tmux walk found each of these)."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import said, settle, type_into
from pcp_tui import config
from pcp_tui.screens.confirm import FormScreen
from pcp_tui.screens.sync import SyncScreen
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


def code_shown(dialog: SyncScreen) -> str:
    code = dialog.query_one("#sync-code")
    return code.render().plain if code.display else ""


def state(dialog: SyncScreen) -> str:
    return dialog.query_one("#sync-state").render().plain


async def type_folder(app, pilot, path: Path | str) -> None:
    await type_into(app, pilot, "#field-folder", str(path))
    await pilot.press("enter")
    await settle(app, pilot)


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
async def test_a_one_field_form_left_empty_asks_for_the_field(workdir, make_app):
    folder = workdir / "syncdir"
    folder.mkdir()
    config.save_sync_folder(workdir / "config", str(folder))
    st = Store.open(Path("a.db"))
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
