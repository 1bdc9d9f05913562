"""The sync dialog (F7) walked at 80x24: its keys stay on screen, and it says what it remembered."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import said, settle, type_into
from pcp_tui import config
from pcp_tui.screens.confirm import FormScreen
from pcp_tui.screens.sync import SyncScreen
from pcp_tui.widgets.fields import Field
from store import Store


def crowded(workdir: Path) -> tuple[Path, Path]:
    """Store a paired with three other stores through one folder, each synced once (a lists three peers)."""
    folder = workdir / "syncdir"
    a = Path("a.db")
    with Store.open(a) as st:
        st.write_page("notes:travel", content="# Ferry times\nThe morning ferry leaves at 7:40.")
        codes = [st.sync_pair(folder)["code"] for _ in range(3)]
        st.sync_folder(folder)
    for i, code in enumerate(codes):
        with Store.open(Path(f"p{i}.db")) as st:
            st.sync_join(folder, code)
            st.sync_folder(folder)
    with Store.open(a) as st:
        st.sync_folder(folder)
    return a, folder


@pytest.mark.asyncio
async def test_the_keys_stay_on_screen_at_80x24_with_peers_and_a_pairing_code(workdir, make_app):
    a, folder = crowded(workdir)
    config.save_sync_folder(workdir / "config", str(folder))
    st = Store.open(a)
    app = make_app(st)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await pilot.press("f7")
        await settle(app, pilot)
        await pilot.press("ctrl+o")  # the pairing code joins the state above the table
        await settle(app, pilot)
        dialog = app.screen
        assert isinstance(dialog, SyncScreen)
        assert "Pairing code: " in dialog.query_one("#sync-code").render().plain
        state = dialog.query_one("#sync-state")
        lines = state.render().plain.splitlines()
        assert state.region.height == len(lines), lines  # nothing of the state is cut off
        shown = sum("last taken in" in line for line in lines)
        assert shown == 3 or (shown == 2 and "1 other store" in lines[-1]), lines
        keys = dialog.query_one(".dialog-keys")
        box = dialog.query_one("#dialog").content_region
        assert keys.region.height >= 1 and box.contains_region(keys.region), (keys.region, box)
        assert "Sync now" in keys.render().plain
        table = dialog.query_one("#sync-conflicts")
        assert table.region.height >= 3 and box.contains_region(table.region)
        assert not table.region.overlaps(keys.region)
    st.close()


@pytest.mark.asyncio
async def test_a_file_typed_as_the_folder_is_refused_in_the_form(workdir, make_app):
    a, folder = crowded(workdir)
    not_a_folder = workdir / "notes.txt"
    not_a_folder.write_text("mine")
    st = Store.open(a)
    app = make_app(st)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await pilot.press("f7")
        await settle(app, pilot)
        await pilot.press("ctrl+s")  # no folder yet: asked
        await settle(app, pilot)
        await type_into(app, pilot, "#field-folder", str(not_a_folder))
        await pilot.press("enter")
        await settle(app, pilot)
        form = app.screen
        assert isinstance(form, FormScreen)  # open still, with what was typed
        assert form.query_one("#field-folder", Field).value == str(not_a_folder)
        assert any("is a file, not a folder" in n for n in said(app))
        assert config.load_settings(workdir / "config").sync_folder is None  # not remembered
        await pilot.press("escape")
        await settle(app, pilot)
        dialog = app.screen
        assert isinstance(dialog, SyncScreen) and not dialog.running
        assert "none yet" in dialog.query_one("#sync-state").render().plain
    assert not_a_folder.read_text() == "mine"
    st.close()
