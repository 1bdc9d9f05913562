"""`pcp`, `pcp demo` and `pcp serve` start the app on the right store (the app itself is replaced by a recorder)."""

from __future__ import annotations

import sys

import pytest

from pcp_tui import cli, launch


@pytest.fixture
def started(monkeypatch):
    calls = []
    monkeypatch.setattr(launch, "run_app", lambda db, demo=False: calls.append(("app", db, demo)) or 0)
    monkeypatch.setattr(cli.base, "at_terminal", lambda: True)
    return calls


def test_pcp_opens_the_app_on_the_default_store(started, monkeypatch, tmp_path):
    monkeypatch.setenv("PCP_DB", str(tmp_path / "env.db"))
    assert cli.main([]) == 0
    assert cli.main(["--db", str(tmp_path / "given.db")]) == 0
    assert started == [("app", tmp_path / "env.db", False), ("app", tmp_path / "given.db", False)]


def test_pcp_with_json_and_no_subcommand_is_still_a_usage_error(started, capsys):
    assert cli.main(["--json"]) == 2
    assert '"usage"' in capsys.readouterr().out and started == []


def test_pcp_demo_never_uses_pcp_db(started, monkeypatch, tmp_path):
    monkeypatch.setenv("PCP_DB", str(tmp_path / "mine.db"))
    monkeypatch.setenv("PCP_DEMO_DB", str(tmp_path / "demo-env.db"))
    assert cli.main(["demo"]) == 0
    assert cli.main(["--db", str(tmp_path / "d.db"), "demo"]) == 0
    monkeypatch.delenv("PCP_DEMO_DB")
    assert cli.main(["demo"]) == 0
    assert started[0] == ("app", tmp_path / "demo-env.db", True)
    assert started[1] == ("app", tmp_path / "d.db", True)
    assert started[2][1].name == "demo.db" and started[2][1] != tmp_path / "mine.db"


def test_pcp_serve_binds_to_loopback_and_runs_the_app_command(monkeypatch, tmp_path):
    served = {}

    from pcp_tui.serve import web as web_serve

    def serve(self):
        served.update(command=self.command, host=self.host, port=self.port, guard=self.guard, running=True)

    monkeypatch.setattr(web_serve.GuardedServer, "serve", serve)
    assert cli.main(["--db", str(tmp_path / "s.db"), "serve", "--port", "8123"]) == 1  # no store there yet
    assert not served and not (tmp_path / "s.db").exists()
    from store import Store

    Store.open(tmp_path / "s.db").close()
    assert cli.main(["--db", str(tmp_path / "s.db"), "serve", "--port", "8123"]) == 0
    assert served["host"] == "127.0.0.1" and served["port"] == 8123 and served["running"]
    assert served["guard"].port == 8123 and len(served["guard"].secret) >= 40
    assert served["command"].startswith(sys.executable) and "-m pcp_tui.launch" in served["command"]
    assert str((tmp_path / "s.db").resolve()) in served["command"]


def test_the_demo_content_ships_inside_the_package():
    from importlib import resources

    text = resources.files("pcp_tui").joinpath("data/demo.jsonl").read_text(encoding="utf-8")
    assert "紧致性" in text and '"op": "tombstone"' in text  # the wheel's copy: tests/test_wheel.py


SOURCE_CHECKOUT_RUN = r'''
import asyncio, json, sys
from pathlib import Path

# As `python -m pcp_tui.launch` from the repository root with pcp installed elsewhere (a wheel) or not at
# all: the cwd's pcp_tui/ is imported, and no installed mapping supplies the pcp_tui.themes package.
sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in repr(f).lower()]
import pcp_tui
from pcp_tui.app import PcpApp

assert Path(pcp_tui.__file__).resolve().parent == Path.cwd() / "pcp_tui", pcp_tui.__file__


async def main():
    app = PcpApp(Path(sys.argv[1]) / "s.db", config_folder=Path(sys.argv[1]) / "config", cursor_blink=False)
    async with app.run_test(notifications=True) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        print(json.dumps([app.theme, sorted(set(app.theme_names)), [n.message for n in app._notifications]]))


asyncio.run(main())
'''


def test_themes_load_from_a_source_checkout_run_from_its_root(tmp_path):
    """Issue 13.1: `pcp serve` from the repository root ended the session (no pcp_tui.themes there)."""
    import json
    import subprocess
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    run = subprocess.run([sys.executable, "-c", SOURCE_CHECKOUT_RUN, str(tmp_path)], cwd=root, capture_output=True,
                         text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-3000:]
    theme, names, notes = json.loads(run.stdout.strip().splitlines()[-1])
    assert theme == "pcp-dark"
    assert {"pcp-dark", "pcp-high-contrast", "pcp-light"} <= set(names)
    # (the first run says it creates the store, at a path holding this test's name, "themes")
    assert not [n for n in notes if "theme" in n.lower() and not n.startswith("Creating a new store")], notes


def test_an_encrypted_stores_passphrase_is_asked_before_the_app_takes_the_terminal(monkeypatch, tmp_path, capfd):
    from encrypted_extra import require

    require()
    import getpass
    import io

    from store import Store, crypt, encryption

    db = tmp_path / "s.db"
    Store.open(db).close()
    encryption.encrypt(db, passphrase="a long enough passphrase")
    crypt.forget()
    monkeypatch.delenv("PCP_PASSPHRASE_FILE", raising=False)
    monkeypatch.setattr(cli.base, "at_terminal", lambda: True)
    tty = io.StringIO()
    tty.isatty = lambda: True  # type: ignore[method-assign]
    monkeypatch.setattr(sys, "stdin", tty)
    asked: list[str] = []
    answers = iter(["not it", "a long enough passphrase"])
    monkeypatch.setattr(getpass, "getpass", lambda prompt: asked.append(prompt) or next(answers))
    seen = []
    monkeypatch.setattr(launch, "run_app", lambda d, demo=False: seen.append((crypt.cached_key(d), crypt._prompt)) or 0)
    capfd.readouterr()
    assert cli.main(["--db", str(db)]) == 1  # a wrong passphrase: one line, and no app
    err = capfd.readouterr().err
    assert err.count("\n") == 1 and "does not open the store" in err and seen == []
    assert cli.main(["--db", str(db)]) == 0
    assert len(asked) == 2 and str(db) in asked[-1]
    assert seen and seen[0][0] is not None and seen[0][1] is None  # unwrapped, and nothing prompts inside the app
    crypt.forget()
