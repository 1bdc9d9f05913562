"""A file given to the wrong importer is refused in one line naming the importer to use, and nothing is written.

Every vendored chat export against every other file importer (chatgpt, claude, events, export), and the
files of those importers and of the coding agents against the chat importers, through `pcp import`.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

import store
from pcp_tui import cli

DATA = Path(__file__).resolve().parents[1] / "data"
EXPORTS = sorted((DATA / "exports").glob("*.json"))
CHAT = {path: "claude" if path.name.startswith("claude-") else "chatgpt" for path in EXPORTS}
FILE_IMPORTERS = ("chatgpt", "claude", "events", "export")
TABLES = ("page", "revision", "scope", "import_run", "import_entry", "relation", "idempotency")


def counts(db: Path) -> dict[str, int]:
    with store.Store.open(db, create=False) as st:
        return {t: st._db.execute_sql(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in TABLES}


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "store.db"
    with store.Store.open(path) as st:
        st.write_page("project:x", content="already here")
    return path


def refused(db: Path, source: str, path: Path, capsys) -> str:
    before = counts(db)
    capsys.readouterr()
    status = cli.main(["--db", str(db), "import", source, str(path)])
    out, err = capsys.readouterr()
    assert status == 1, (source, path.name, out, err)
    assert counts(db) == before, f"import {source} {path.name} wrote something"
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


@pytest.mark.parametrize("export", EXPORTS, ids=[p.name for p in EXPORTS])
def test_a_chat_export_given_to_another_importer_names_its_own(db, export, capsys):
    right = CHAT[export]
    for source in FILE_IMPORTERS:
        if source == right:
            continue
        line = refused(db, source, export, capsys)
        assert f"pcp import {right} FILE" in line and export.name in line, line
    before = counts(db)["page"]
    assert cli.main(["--db", str(db), "import", right, str(export)]) == 0, capsys.readouterr()
    assert counts(db)["page"] > before  # and the right importer takes it


def test_a_chat_export_zip_given_to_the_other_chat_importer(db, tmp_path, capsys):
    for export, right in CHAT.items():
        archive = tmp_path / f"{export.stem}.zip"
        with zipfile.ZipFile(archive, "w") as zf:
            zf.write(export, "export/conversations.json")
        wrong = "claude" if right == "chatgpt" else "chatgpt"
        line = refused(db, wrong, archive, capsys)
        assert f"pcp import {right} FILE" in line, line


def test_pcp_exports_events_and_agent_sessions_are_refused_by_the_chat_importers(db, tmp_path, capsys):
    export = tmp_path / "everything.jsonl"
    with store.Store.open(db) as st:
        st.export(export)
    events = tmp_path / "events.jsonl"
    events.write_text("".join(json.dumps({"idempotency_key": f"e{i}", "namespace": "project:x",
                                          "content": f"event {i}"}) + "\n" for i in range(3)))
    sessions = {
        "claude-code": next((DATA / "agents" / "claude-code").rglob("*.jsonl")),
        "codex": next((DATA / "agents" / "codex").rglob("*.jsonl")),
        "gemini": next((DATA / "agents" / "gemini" / "codemie-code").rglob("*.json")),
    }
    files = {"export": export, "events": events, **sessions}
    for right, path in files.items():
        for source in FILE_IMPORTERS:
            if source == right:
                continue
            line = refused(db, source, path, capsys)
            assert f"pcp import {right} FILE" in line, (source, right, line)

