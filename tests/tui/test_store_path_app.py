"""The app and `--db`: its first run says it is creating a new store, and a file that is not a pcp store is
refused on screen and left exactly as it was (bytes, mode, mtime, no side files)."""

from __future__ import annotations

import hashlib
import os

from peewee import sqlite3

from helpers import said, settle, until

SIZE = (120, 40)


def fingerprint(path) -> tuple:
    info = path.stat()
    return (hashlib.sha256(path.read_bytes()).hexdigest(), info.st_mode, info.st_mtime_ns,
            sorted(os.listdir(path.parent)))


def app_on(path, workdir):
    from pcp_tui.app import PcpApp

    return PcpApp(path, config_folder=workdir / "config", cursor_blink=False, use_pyperclip=False,
                  theme="pcp-dark", watch_interval=0)


async def test_the_first_run_says_it_creates_a_new_store_at_its_path(workdir):
    from store import paths

    target = workdir / "first" / "run.db"
    app = app_on(target, workdir)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: any("Creating a new store at" in line and str(target) in line
                                       for line in said(app)), "the new-store notice")
        await settle(app, pilot)
    assert paths.store_state(target) == "store"
    app = app_on(target, workdir)  # the next run opens it, and says nothing of creating one
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.store is not None and type(app.screen).__name__ == "WelcomeScreen",
                    "the store to open")
        await settle(app, pilot)
        assert not any("Creating a new store" in line for line in said(app))


async def test_another_programs_database_is_refused_on_screen_and_left_untouched(workdir):
    from textual.widgets import Static

    target = workdir / "other.db"
    conn = sqlite3.connect(str(target))
    conn.execute("CREATE TABLE notes (body TEXT)")
    conn.execute("INSERT INTO notes VALUES ('keep me')")
    conn.commit()
    conn.close()
    os.chmod(target, 0o644)
    before = fingerprint(target)
    app = app_on(target, workdir)
    async with app.run_test(size=SIZE) as pilot:
        opening = app.query_one("#opening", Static)
        await until(pilot, lambda: "not a pcp store" in str(opening.render()), "the refusal on screen")
        assert app.store is None
    assert fingerprint(target) == before
