"""`--db` never touches what is not its store (shared/spec/cli.md, global options).

A file that is not a pcp store (another program's SQLite database, a text file) is refused by every command in
one line, before anything writes to it or changes its mode: its bytes, mode and mtime stay as they were, and no
side file appears beside it. A missing path (or an empty file) becomes a store only for the commands that write
pages, scopes or imports; every other command says "No store at PATH", naming the default path, and creates
nothing.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest
from peewee import sqlite3  # the store's SQLite library (two in one process break each other's locks)

import store
from pcp_tui import cli
from store import paths

DATA = Path(__file__).resolve().parents[1] / "data"
PAGE = "pg_01ARZ3NDEKTSV4RRFFQ69G5FAV"
REV = "rev_01ARZ3NDEKTSV4RRFFQ69G5FAV"


def reading_commands(tmp: Path) -> dict[str, list[str]]:
    """Every command that must not create a store, with arguments it accepts."""
    bundle = tmp / "pasted.md"
    bundle.write_text("not a bundle\n")
    return {
        "scopes": ["scopes"], "search": ["search", "compactness"], "read": ["read", PAGE],
        "list": ["list"], "list --sort oldest": ["list", "--sort", "oldest"],
        "read --offset": ["read", PAGE, "--offset", "10"], "export": ["export", "--out", str(tmp / "out.jsonl")],
        "export markdown": ["export", "--format", "markdown", "--out", str(tmp / "md")],
        "audit": ["audit"], "doctor": ["doctor"], "describe": ["describe"], "handoffs": ["handoffs"],
        "verify": ["verify", str(bundle)], "bundle": ["bundle", "--query", "x"], "import-report": ["import-report"],
        "delete --plan": ["delete", PAGE, "--plan"], "bulk delete --plan": ["delete", "--scope", "project:x", "--plan"],
        "scope delete --plan": ["scope", "delete", "project:x", "--plan"],
        "delete --yes": ["delete", PAGE, "--yes", "--reason", "r"],
        "link": ["link", PAGE, "related_to", PAGE], "unlink": ["unlink", "rel_x", "--reason", "r"],
        "archive": ["archive", PAGE, "--reason", "r"], "restore": ["restore", PAGE, "--reason", "r"],
        "tombstone": ["tombstone", PAGE, "--reason", "r"], "untombstone": ["untombstone", PAGE, "--reason", "r"],
        "recommend-tombstone": ["recommend-tombstone", PAGE, "--reason", "r"],
        "suppress": ["suppress", PAGE, "--context", "c"], "unsuppress": ["unsuppress", PAGE, "--context", "c"],
        "copy": ["copy", "--label", "chat", "--query", "x"],
        "mcp": ["mcp", "--client-id", "c", "--grant", "*=read"], "mcp --show-token": ["mcp", "--show-token"],
        "serve": ["serve", "--port", "1"],
    }


def writing_commands(tmp: Path) -> dict[str, list[str]]:
    """The commands that create a missing store (cli.md: write, revise, ingest, import, scope create, sync)."""
    sync_dir = tmp / "sync"
    sync_dir.mkdir(exist_ok=True)
    return {
        "write": ["write", "--namespace", "project:x", "--content", "hello"],
        "revise": ["revise", PAGE, "--expected", REV, "--content", "x"],
        "ingest": ["ingest", "--namespace", "project:x", "--idempotency-key", "k", "--content", "x"],
        "import": ["import", "chatgpt", str(DATA / "exports" / "chatgpt-danny-avila-LibreChat-3.json")],
        "scope create": ["scope", "create", "project:new"],
        "sync": ["sync", str(sync_dir)],
    }


def fingerprint(path: Path) -> tuple:
    info = path.stat()
    return (hashlib.sha256(path.read_bytes()).hexdigest(), info.st_mode, info.st_mtime_ns, info.st_size,
            sorted(os.listdir(path.parent)))


def run(argv: list[str], capsys) -> tuple[int, str]:
    capsys.readouterr()
    status = cli.main(argv)
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return status, err


@pytest.fixture(autouse=True)
def own_data_dir(tmp_path, monkeypatch):
    """The default store path inside the test's folder; no $PCP_DB."""
    monkeypatch.delenv("PCP_DB", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))


def foreign_sqlite(path: Path) -> Path:
    conn = sqlite3.connect(str(path))
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("CREATE TABLE contacts (name TEXT, phone TEXT)")
    conn.execute("INSERT INTO contacts VALUES ('Ada', '555-0100')")
    conn.commit()
    conn.close()
    os.chmod(path, 0o644)
    os.utime(path, ns=(1_600_000_000_000_000_000, 1_600_000_000_000_000_000))
    return path


@pytest.mark.parametrize("kind", ["sqlite", "text"])
def test_a_file_that_is_not_a_store_is_refused_by_every_command_and_left_as_it_was(tmp_path, capsys, kind):
    folder = tmp_path / "other-app"
    folder.mkdir()
    target = folder / "other.db"
    if kind == "sqlite":
        foreign_sqlite(target)
    else:
        target.write_text("# My notes\n\nnot a database\n")
        os.chmod(target, 0o644)
    before = fingerprint(target)
    commands = {**reading_commands(tmp_path), **writing_commands(tmp_path)}
    for name, argv in commands.items():
        status, err = run(["--db", str(target), *argv], capsys)
        lines = err.strip().splitlines()
        assert status == 1 and len(lines) == 1, (name, err)
        assert "not a pcp store" in lines[0] and str(target) in lines[0], (name, lines[0])
        assert fingerprint(target) == before, f"{name} touched {target}"


def test_a_missing_store_is_refused_by_every_reading_command_and_nothing_is_created(tmp_path, capsys):
    target = tmp_path / "typo" / "sub" / "x.db"
    default = paths.default_path()
    assert str(tmp_path) in str(default)
    for name, argv in reading_commands(tmp_path).items():
        status, err = run(["--db", str(target), *argv], capsys)
        lines = err.strip().splitlines()
        assert status == 1 and len(lines) == 1, (name, err)
        assert lines[0].startswith(f"pcp: error: No store at {target}") and str(default) in lines[0], (name, lines[0])
        assert not (tmp_path / "typo").exists(), f"{name} created a folder"
    # Without --db the default path is named as the default.
    status, err = run(["scopes"], capsys)
    assert status == 1 and f"No store at {default} (the default path)" in err
    assert not default.exists() and not default.parent.exists()
    # The commands that write create it (and its folders, private to you).
    for name, argv in writing_commands(tmp_path).items():
        created = tmp_path / name.replace(" ", "-") / "deeper" / "s.db"
        run(["--db", str(created), *argv], capsys)
        assert paths.store_state(created) == "store", name
        assert (created.stat().st_mode & 0o777) == 0o600 and (created.parent.stat().st_mode & 0o777) == 0o700
        status, _ = run(["--db", str(created), "scopes"], capsys)
        assert status == 0, name


def test_an_empty_file_counts_as_missing(tmp_path, capsys):
    (tmp_path / "store").mkdir()
    target = tmp_path / "store" / "empty.db"
    target.touch()
    os.chmod(target, 0o644)
    before = fingerprint(target)
    for name, argv in reading_commands(tmp_path).items():
        status, err = run(["--db", str(target), *argv], capsys)
        assert status == 1 and f"No store at {target}" in err, (name, err)
        assert fingerprint(target) == before, name
    status, _ = run(["--db", str(target), "write", "--namespace", "project:x", "--content", "now a store"], capsys)
    assert status == 0
    status, _ = run(["--db", str(target), "search", "store"], capsys)
    assert status == 0


def test_the_store_api_refuses_another_programs_database_untouched(tmp_path):
    target = foreign_sqlite(tmp_path / "other.db")
    before = fingerprint(target)
    for create in (True, False):
        with pytest.raises(store.Invalid, match="not a pcp store"):
            store.Store.open(target, create=create)
    with pytest.raises(store.NotFound, match="No store at"):
        store.Store.open(tmp_path / "missing.db", create=False)
    assert fingerprint(target) == before and not (tmp_path / "missing.db").exists()
