"""The app's sync (issue 17.6): state in the status line and the sync dialog (F7), a folder sync with a
progress bar in a worker, conflicts listed and opened, the inspector marking a page in conflict."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import drawn, open_in_tab, page_list, said, settle, type_into, until
from pcp_tui import config
from pcp_tui.app import DialogNotice
from pcp_tui.screens.confirm import FormScreen
from pcp_tui.screens.main import MainScreen
from pcp_tui.screens.sync import ConflictTable, SyncScreen
from pcp_tui.screens.welcome import WelcomeScreen
from pcp_tui.widgets.fields import Field
from pcp_tui.widgets.inspector import Inspector
from store import Store

SIZES = {"80x24": (80, 24), "160x48": (160, 48)}


def paired_stores(workdir: Path, namespace: str = "notes:travel") -> tuple[Path, Path, Path]:
    """Store a (with two pages, synced once) and an empty store b, paired through a temp folder.

    The stores' paths are relative (the test runs in workdir): the status line shows the same on every run."""
    folder = workdir / "syncdir"
    a, b = Path("a.db"), Path("b.db")
    with Store.open(a) as st:
        st.write_page(namespace, content="# Ferry times\nThe morning ferry leaves at 7:40.")
        st.write_page(namespace, content="# Packing list\nRain jacket, charger, passport.")
        code = st.sync_pair(folder)["code"]
        st.sync_folder(folder)
    with Store.open(b) as st:
        st.sync_join(folder, code)
    return a, b, folder


def conflicted(workdir: Path, namespace: str = "notes:travel") -> tuple[Path, Path, Path, str]:
    """Both stores revise one page from the same parent; a syncs; b has not yet (its app will)."""
    a, b, folder = paired_stores(workdir, namespace)
    with Store.open(b) as st:
        st.sync_folder(folder)
        page = st.search_pages("ferry")["hits"][0]["page_id"]
        head = st.read_pages([page])["results"][0]["current_revision_id"]
        st.revise_page(page, head, content="# Ferry times\nOn b: the ferry now leaves at 7:50.")
    with Store.open(a) as st:
        st.revise_page(page, head, content="# Ferry times\nOn a: the ferry leaves at 7:45 on weekdays.")
        st.sync_folder(folder)
    return a, b, folder, page


async def sync_now(app, pilot) -> None:
    await pilot.press("f7")
    await settle(app, pilot)
    assert isinstance(app.screen, SyncScreen)
    await pilot.press("ctrl+s")
    await settle(app, pilot)


@pytest.mark.asyncio
async def test_first_sync_asks_the_folder_then_the_list_shows_the_other_stores_pages(workdir, make_app):
    a, b, folder = paired_stores(workdir)
    st = Store.open(b)
    app = make_app(st)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        assert isinstance(app.screen, WelcomeScreen)  # an empty store: F7 works from here too
        await pilot.press("f7")
        await settle(app, pilot)
        assert "not paired" not in app.screen.query_one("#sync-state").render().plain
        await pilot.press("ctrl+s")  # no folder yet: it is asked
        await settle(app, pilot)
        await type_into(app, pilot, "#field-folder", str(folder))
        await pilot.press("enter")
        await settle(app, pilot)
        assert isinstance(app.screen, SyncScreen) and not app.screen.running
        state = app.screen.query_one("#sync-state").render().plain
        assert str(folder) in state and "Last sync: never" not in state
        assert config.load_settings(workdir / "config").sync_folder == str(folder)
        await pilot.press("escape")  # the welcome screen gives way to the pages
        await settle(app, pilot)
        assert isinstance(app.screen, MainScreen)
        titles = sorted(r["title"] for r in page_list(app).rows)
        assert titles == ["Ferry times", "Packing list"]
        line = app.screen.query_one("#status-line").render().plain
        assert "synced never" not in line and "synced 20" in line and "in conflict" not in line
    st.close()


@pytest.mark.asyncio
async def test_a_conflict_is_listed_opened_and_marked_in_the_inspector(workdir, make_app):
    a, b, folder, page = conflicted(workdir)
    config.save_sync_folder(workdir / "config", str(folder))  # remembered from an earlier sync
    st = Store.open(b)
    app = make_app(st)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await sync_now(app, pilot)
        screen = app.screen
        assert isinstance(screen, SyncScreen)
        assert screen.rows == [(page, "Ferry times", "notes:travel")]
        assert "Pages with conflicts: 1" in screen.query_one("#sync-conflicts-title").render().plain
        await pilot.press("enter")  # opens the page
        await settle(app, pilot)
        assert not isinstance(app.screen, SyncScreen)
        inspector = app.screen.query_one(Inspector)
        assert inspector.page_id == page
        notes = inspector.query_one("#inspector-notes-text")
        assert inspector.query_one("#inspector-notes").display
        assert "conflict: 1 concurrent revision" in notes.render().plain
        assert "1 in conflict" in app.screen.query_one("#status-line").render().plain
        # Revising on top resolves it: the note and the count go.
        head = st.read_pages([page])["results"][0]["current_revision_id"]
        st.revise_page(page, head, content="# Ferry times\nResolved: 7:45 on weekdays, 7:50 at weekends.")
        app.announce_change(page)
        await settle(app, pilot)
        assert not inspector.query_one("#inspector-notes").display
        assert "in conflict" not in app.screen.query_one("#status-line").render().plain
    st.close()


@pytest.mark.asyncio
async def test_progress_bar_shows_while_the_worker_syncs(workdir, make_app, monkeypatch):
    import threading

    a, b, folder = paired_stores(workdir)
    config.save_sync_folder(workdir / "config", str(folder))
    st = Store.open(b)
    release, reached = threading.Event(), threading.Event()
    real = st.sync_folder

    def slow(path, progress=None):  # the store's own sync, held at its first progress report
        def report(done, total, what):
            progress(done, total, what)
            if not reached.is_set():
                reached.set()
                release.wait(10)

        return real(path, progress=report)

    monkeypatch.setattr(st, "sync_folder", slow)
    app = make_app(st)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("f7")
        await settle(app, pilot)
        await pilot.press("ctrl+s")
        await until(pilot, lambda: reached.is_set() and "Checking change files" in app.screen.query_one(
            "#sync-phase").render().plain, "the sync's first phase on screen")
        screen = app.screen
        assert screen.running and screen.query_one("#sync-running").display
        await pilot.press("escape")  # not while it runs
        assert app.screen is screen
        release.set()
        await settle(app, pilot)
        assert not screen.running and not screen.query_one("#sync-running").display
        await pilot.press("escape")
        await settle(app, pilot)
        assert len(page_list(app).rows) == 2
    st.close()


@pytest.mark.asyncio
async def test_pairing_in_the_app_offer_a_code_and_type_it_on_the_other_store(workdir, make_app):
    folder = workdir / "syncdir"
    a, b = Path("a.db"), Path("b.db")
    with Store.open(a) as st:
        st.write_page("notes:travel", content="# Ferry times\nThe morning ferry leaves at 7:40.")
    st = Store.open(a)
    app = make_app(st)
    async with app.run_test(size=(120, 40)) as pilot:  # store a offers a code
        await settle(app, pilot)
        await pilot.press("f7")
        await settle(app, pilot)
        await pilot.press("ctrl+o")  # no folder yet: asked first
        await settle(app, pilot)
        await type_into(app, pilot, "#field-folder", str(folder))
        await pilot.press("enter")
        await settle(app, pilot)
        assert f"Create the folder {folder}?" in app.screen.query_one(".dialog-body").render().plain
        await pilot.press("y")  # it does not exist yet (its parent does): created once the user says so
        await settle(app, pilot)
        assert folder.is_dir()
        shown = app.screen.query_one("#sync-code").render().plain
        state = app.screen.query_one("#sync-state").render().plain
        assert "Pairing code: " in shown and " · offered a code, no store has joined yet" in state, state
        code = shown.split("Pairing code: ", 1)[1].split()[0]
        await pilot.press("ctrl+s")  # a's first file, for b to read
        await settle(app, pilot)
    st.close()
    st = Store.open(b)
    app = make_app(st)
    async with app.run_test(size=(120, 40)) as pilot:  # the empty store b types it (same config: folder known)
        await settle(app, pilot)
        await pilot.press("f7")
        await settle(app, pilot)
        await pilot.press("ctrl+t")
        await settle(app, pilot)
        await type_into(app, pilot, "#field-code", code)
        await pilot.press("enter")
        await settle(app, pilot)
        assert " · paired with 1 store" in app.screen.query_one("#sync-state").render().plain
        await pilot.press("escape")
        await settle(app, pilot)
        assert [r["title"] for r in page_list(app).rows] == ["Ferry times"]
    with Store.open(a) as other:
        assert st.sync_status()["store_id"] != other.sync_status()["store_id"]
        assert st.sync.owner_id == other.sync.owner_id  # the empty store took a's owner
    st.close()


@pytest.mark.asyncio
async def test_a_wrong_code_is_refused_in_one_line(workdir, make_app):
    a, b, folder = paired_stores(workdir)
    config.save_sync_folder(workdir / "config", str(folder))
    st = Store.open(Path("c.db"))
    app = make_app(st)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("f7")
        await settle(app, pilot)
        await pilot.press("ctrl+t")
        await settle(app, pilot)
        await type_into(app, pilot, "#field-code", "AAAA-BBBB-CCCC-DDDD-EEEE-FFFF-GG")
        await pilot.press("enter")
        await settle(app, pilot)
        # The prompt again, with the code as typed and why it did not pair, in a line above its keys.
        assert isinstance(app.screen, FormScreen)
        assert app.screen.query_one("#field-code", Field).value == "AAAA-BBBB-CCCC-DDDD-EEEE-FFFF-GG"
        assert any("No pairing offer" in str(n.render()) for n in app.screen.query(DialogNotice))
        assert not app._notifications  # no toast over the prompt
        await pilot.press("escape")
        await settle(app, pilot)
        assert isinstance(app.screen, SyncScreen) and not app.screen.running
        assert "not paired yet" in app.screen.query_one("#sync-state").render().plain
    st.close()


@pytest.mark.asyncio
async def test_the_demo_never_syncs(demo_store, make_app):
    store, _ = demo_store
    app = make_app(store, demo=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("f7")
        await settle(app, pilot)
        assert not isinstance(app.screen, SyncScreen)
        assert config.load_settings(app.config_folder).sync_folder is None


@pytest.mark.asyncio
async def test_f1_in_the_sync_dialog_lists_its_keys(workdir, make_app):
    from textual.widgets import DataTable

    a, b, folder = paired_stores(workdir)
    st = Store.open(b)
    app = make_app(st)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("f7")
        await settle(app, pilot)
        await pilot.press("f1")
        await settle(app, pilot)
        table = app.screen.query_one("#keys", DataTable)
        ids = [table.get_row_at(i)[-1] for i in range(table.row_count)]
        assert {"sync.run", "sync.folder", "sync.open", "sync.back"} <= set(ids)
        assert not any(i.startswith(("rights.", "handoff.")) for i in ids)
    st.close()


@pytest.mark.parametrize("size", SIZES)
def test_sync_dialog_snapshot(snap_compare, workdir, fixed_clock, make_app, size):
    a, b, folder, page = conflicted(workdir)
    config.save_sync_folder(workdir / "config", "syncdir")  # relative: the same on every run
    st = Store.open(b)
    app = make_app(st)

    async def run_before(pilot):
        await settle(app, pilot)
        await sync_now(app, pilot)
        app.clear_notifications()
        await settle(app, pilot)
        # The conflict list sizes its columns when the app is next idle: under load that came after the shot.
        table = app.screen.query_one(ConflictTable)
        await until(pilot, lambda: page in drawn(table), "the conflict list drawn with its columns sized")

    assert snap_compare(app, terminal_size=SIZES[size], run_before=run_before)
    st.close()


@pytest.mark.asyncio
async def test_a_cli_sync_that_only_wrote_shows_as_the_last_sync(workdir, make_app, monkeypatch):
    """A sync from the CLI with nothing to read (the other store has written nothing yet) is a sync: the dialog
    shows its time, on opening and while it is open (the store watcher sees the other process's sync)."""
    import store.ids as ids
    from pcp_tui.cli import main

    folder = workdir / "syncdir"
    with Store.open(Path("a.db")) as st:
        st.write_page("notes:travel", content="# Ferry times\nThe morning ferry leaves at 7:40.")
        st.sync_pair(folder)
    monkeypatch.setattr(ids, "now", lambda: "2026-05-01T09:15:00.000Z")
    assert main(["--db", "a.db", "sync", str(folder)]) == 0  # writes a's changes; no other store's files yet
    st = Store.open(Path("a.db"))
    app = make_app(st, watch_interval=0.05)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("f7")
        await settle(app, pilot)
        assert isinstance(app.screen, SyncScreen)
        state = app.screen.query_one("#sync-state").render().plain
        assert "Last sync: 2026-05-01 09:15" in state, state
        monkeypatch.setattr(ids, "now", lambda: "2026-05-02T10:30:00.000Z")
        assert main(["--db", "a.db", "sync", str(folder)]) == 0  # again, nothing new at all, the dialog open
        await until(pilot, lambda: "Last sync: 2026-05-02 10:30" in app.screen.query_one("#sync-state").render().plain,
                    "the dialog to show the CLI's sync")
        assert "Last sync: 2026-05-02 10:30" in app.screen.query_one("#sync-state").render().plain
    st.close()


@pytest.mark.asyncio
async def test_the_dialog_names_the_keys_in_use_a_keymap_changes_them(workdir, make_app):
    """The intro, the folder line and the pairing code's hint name the keys bound now, not the defaults."""
    (workdir / "config").mkdir(exist_ok=True)
    (workdir / "config" / "keymap.toml").write_text(
        'sync = "f9"\n"sync.run" = "ctrl+n"\n"sync.pair" = "ctrl+g"\n"sync.join" = "ctrl+u"\n', encoding="utf-8")
    st = Store.open(Path("a.db"))
    st.write_page("notes:travel", content="# Ferry times\nThe morning ferry leaves at 7:40.")
    app = make_app(st)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("f9")
        await settle(app, pilot)
        assert isinstance(app.screen, SyncScreen)
        intro = app.screen.query_one(".dialog-body").render().plain
        assert "(^g)" in intro and "(^u," in intro, intro
        assert not any(k in intro for k in ("ctrl+o", "ctrl+t", "^o", "^t"))
        state = app.screen.query_one("#sync-state").render().plain
        assert "none yet (^n asks for it)" in state, state
        config.save_sync_folder(workdir / "config", str(workdir / "syncdir"))
        await pilot.press("ctrl+g")  # the rebound key offers a code
        await settle(app, pilot)
        code = app.screen.query_one("#sync-code").render().plain
        assert "Pairing code" in code and "(f9, then ^u;" in code, code
    st.close()


@pytest.mark.asyncio
async def test_sync_now_on_a_store_not_paired_says_which_keys_pair_it(workdir, make_app):
    folder = workdir / "shared"
    folder.mkdir()
    config.save_sync_folder(workdir / "config", str(folder))
    st = Store.open(Path("lonely.db"))
    app = make_app(st)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await pilot.press("f7")
        await settle(app, pilot)
        await pilot.press("ctrl+s")
        await settle(app, pilot)
        assert isinstance(app.screen, SyncScreen) and not app.screen.running
        message = " ".join(said(app))
        assert "not paired yet" in message and "^o" in message and "^t" in message, message
        assert "--pair" not in message  # the store's sentence names the command line, not this dialog's keys
    st.close()


@pytest.mark.asyncio
async def test_a_store_with_history_asks_before_it_joins_and_merges(workdir, make_app):
    """Issue 30: a store that holds history of its own joins only after the owner saw what merges (in the app as
    at the CLI); the first answer is no (nothing changes), the second yes."""
    from pcp_tui.screens.confirm import ConfirmScreen

    folder = workdir / "syncdir"
    with Store.open(Path("a.db")) as st:
        st.write_page("notes:travel", content="# Ferry times\nThe morning ferry leaves at 7:40.")
        code = st.sync_pair(folder)["code"]
        st.sync_folder(folder)
    config.save_sync_folder(workdir / "config", str(folder))
    st = Store.open(Path("b.db"))
    st.write_page("notes:garden", content="# Tomatoes\nWater them at dusk.")
    own = st.owner_id
    app = make_app(st)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("f7")
        for answer in ("escape", "y"):
            await settle(app, pilot)
            assert isinstance(app.screen, SyncScreen)
            await pilot.press("ctrl+t")
            await settle(app, pilot)
            await type_into(app, pilot, "#field-code", code)
            await pilot.press("enter")
            await settle(app, pilot)
            assert isinstance(app.screen, ConfirmScreen)
            body = app.screen.query_one(".dialog-body").render().plain
            assert "notes:garden: 1 page" in body and "history of its own" in body
            if answer == "escape":
                await pilot.press("escape")
                await settle(app, pilot)
                assert st.sync.owner_ids() == {own}  # nothing changed
            else:
                await pilot.press("y")
                await settle(app, pilot)
        assert isinstance(app.screen, SyncScreen) and not app.screen.running
        assert own in st.sync.owner_ids() and st.owner_id != own
    st.close()


@pytest.mark.asyncio
async def test_two_stores_that_unpaired_each_other_are_shown_in_the_dialog(workdir, make_app):
    folder = workdir / "syncdir"
    a, b, c = Path("a.db"), Path("b.db"), Path("c.db")
    with Store.open(a) as st:
        codes = [st.sync_pair(folder)["code"] for _ in range(2)]
    for path, code in zip((b, c), codes, strict=True):
        with Store.open(path) as st:
            st.sync_join(folder, code)
    for _ in range(2):
        for path in (a, b, c):
            with Store.open(path) as st:
                st.sync_folder(folder)
    ids = {}
    for path in (a, b, c):
        with Store.open(path) as st:
            ids[path] = st.sync.store_id
    with Store.open(a) as st:
        st.sync_unpair(folder, ids[c])
    with Store.open(c) as st:
        st.sync_unpair(folder, ids[a])
    for path in (a, c, b):
        with Store.open(path) as st:
            st.sync_folder(folder)
    config.save_sync_folder(workdir / "config", str(folder))
    st = Store.open(b)
    app = make_app(st)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("f7")
        await settle(app, pilot)
        state = app.screen.query_one("#sync-state").render().plain
        first, second = sorted([ids[a], ids[c]])
        assert f"{first} and {second} unpaired each other" in state
    st.close()


@pytest.mark.asyncio
async def test_a_revision_from_another_store_in_conflict_is_labelled_conflict_not_superseded(workdir, make_app):
    """Report 17: the other store's concurrent revision read `superseded` in the Revisions tab."""
    from pcp_tui.widgets.revisions import HistoryList

    a, b, folder, page = conflicted(workdir)
    with Store.open(b) as st:
        st.sync_folder(folder)
        conflicts = st.read_pages([page], projections=("manifest", "history"))["results"][0]["conflict_revision_ids"]
    assert len(conflicts) == 1
    st = Store.open(b)
    app = make_app(st)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await open_in_tab(app, pilot, page, "2")
        history = app.screen.query_one(HistoryList)
        await until(pilot, lambda: history.option_count >= 3, "the history")
        labels = {history.get_option_at_index(i).id: str(history.get_option_at_index(i).prompt)
                  for i in range(history.option_count)}
        assert labels[conflicts[0]].split("\n")[0].endswith("conflict"), labels  # (number, id and status: line 1)
        assert sum(label.split("\n")[0].endswith("superseded") for label in labels.values()) == 1  # the common parent only
    st.close()


@pytest.mark.asyncio
async def test_at_80_columns_the_conflict_table_shows_the_whole_page_id_and_cuts_the_scope_with_an_ellipsis(
        workdir, make_app):
    """Report 17: at 80 columns the f7 conflict table cut the scope and the page id column was off the edge."""
    scope = "conversation:claude-code-users-someone-projects-thesis-chapter-three-draft"
    a, b, folder, page = conflicted(workdir, scope)
    config.save_sync_folder(workdir / "config", str(folder))
    st = Store.open(b)
    app = make_app(st)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await sync_now(app, pilot)
        table = app.screen.query_one(ConflictTable)
        await until(pilot, lambda: table.row_count == 1, "the conflict row")
        await settle(app, pilot)
        assert table.max_scroll_x == 0  # nothing off the right edge
        shown = drawn(table)
        assert page in shown and "Ferry times" in shown, shown
        assert "conversation:cl" in shown and "…" in shown and scope not in shown, shown
        await pilot.press("enter")  # still opens the page
        await settle(app, pilot)
        assert app.screen.query_one(Inspector).page_id == page
    st.close()
