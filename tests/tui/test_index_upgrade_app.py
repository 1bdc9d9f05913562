"""Issue 11 point 5 in the app: a store written by the previous pcp is re-indexed while the app opens
(the opening screen shows the progress), and the app then searches it with the new ranking."""

from __future__ import annotations

from helpers import settle

from pcp_tui.app import PcpApp
from pcp_tui.screens.main import MainScreen
from pcp_tui.widgets.page_list import PageList

PROOF = "Proof route for compactness of finite products via the tube lemma."


async def test_the_app_upgrades_an_older_store_before_it_starts(schema1_db, workdir):
    app = PcpApp(schema1_db, config_folder=workdir / "config", theme="pcp-dark", cursor_blink=False,
                 use_pyperclip=False, watch_interval=0)  # no store watcher: wait_for_complete would wait on it
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        assert app.store.index_upgrade_status() is None
        assert app.index_progress == (10, 10)  # the opening screen reported the upgrade up to its end
        assert isinstance(app.screen, MainScreen)
        screen = app.screen
        screen._search("proof route compactness")  # every term: the app's text mode finds it too
        await settle(app, pilot)
        rows = screen.query_one(PageList).rows
        assert rows and rows[0]["title"] == PROOF
