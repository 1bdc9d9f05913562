"""Failures of store calls in workers: each one becomes exactly one notification."""

from __future__ import annotations

from helpers import settle, until
from textual.widgets import Static

from pcp_tui.app import PcpApp

SIZE = (120, 40)


async def test_a_store_file_that_is_not_a_database_is_reported_once(workdir):
    bad = workdir / "not-a-store.db"
    bad.write_text("these are notes, not an SQLite database\n" * 200, encoding="utf-8")
    app = PcpApp(bad, config_folder=workdir / "config", theme="pcp-dark", cursor_blink=False, use_pyperclip=False,
                 watch_interval=0)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await until(pilot, lambda: any(n.severity == "error" for n in app._notifications), "the error on screen")
        await settle(app, pilot, failures_ok=True)  # every worker done, every message handled: no second one comes
        errors = [n for n in app._notifications if n.severity == "error"]
        assert len(errors) == 1, [(n.title, n.message) for n in errors]
        assert "not-a-store.db" in errors[0].message
        opening = str(app.query_one("#opening", Static).render())
        assert "could not be opened" in opening
        assert app.store is None


async def test_a_failing_store_call_on_a_screen_is_reported_once(demo_store, make_app, monkeypatch):
    from store import Invalid

    from pcp_tui.screens.main import MainScreen

    store, _refs = demo_store

    def refuse(*args, **kwargs):
        raise Invalid("the recommendations are unavailable")

    monkeypatch.setattr(store, "list_recommendations", refuse)
    app = make_app(store)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await settle(app, pilot, failures_ok=True)
        assert isinstance(app.screen, MainScreen)
        errors = [n for n in app._notifications if n.severity == "error"]
        assert [(n.title, n.message) for n in errors] == [("Invalid", "the recommendations are unavailable")]
