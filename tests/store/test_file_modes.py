"""File modes (issue 12 item 14): what pcp creates only the user can read; folders it did not create keep their mode."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from store import Store


@pytest.fixture
def loose_umask():
    old = os.umask(0o022)
    yield
    os.umask(old)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_new_store_its_folders_and_side_files_are_private(tmp_path, loose_umask):
    db = tmp_path / "data" / "pcp" / "context.db"
    st = Store.open(db)
    page = st.write_page("project:alpha", content="private")
    st.copy([page["page_id"]], label="chat", clipboard=lambda text: None)
    assert _mode(tmp_path / "data") == 0o700 and _mode(tmp_path / "data" / "pcp") == 0o700
    assert _mode(db) == 0o600
    for side in ("context.db-wal", "context.db-shm"):
        if (db.parent / side).exists():
            assert _mode(db.parent / side) == 0o600, side
    assert _mode(db.parent / "handoffs") == 0o700
    for f in (db.parent / "handoffs").iterdir():
        assert _mode(f) == 0o600
    st.close()


def test_exports_are_private_whatever_the_umask(tmp_path, loose_umask):
    st = Store.open(tmp_path / "s.db")
    st.write_page("project:alpha", content="private")
    st.export(tmp_path / "out.jsonl")
    st.export(tmp_path / "md" / "tree", format="markdown")
    assert _mode(tmp_path / "out.jsonl") == 0o600
    assert _mode(tmp_path / "md") == 0o700 and _mode(tmp_path / "md" / "tree") == 0o700
    files = [p for p in (tmp_path / "md").rglob("*")]
    assert files and all(_mode(p) == (0o700 if p.is_dir() else 0o600) for p in files)
    st.close()


def test_a_folder_pcp_did_not_create_keeps_its_mode_and_doctor_warns(tmp_path, loose_umask):
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o755)
    st = Store.open(shared / "s.db")
    assert _mode(shared) == 0o755
    assert _mode(shared / "s.db") == 0o600
    warnings = st.doctor()["warnings"]
    assert len(warnings) == 1 and "readable by group and others" in warnings[0] and "chmod 700" in warnings[0]
    st.close()
    os.chmod(shared, 0o700)
    st = Store.open(shared / "s.db")
    assert st.doctor()["warnings"] == []
    st.close()


def test_an_existing_world_readable_store_file_is_narrowed(tmp_path, loose_umask):
    st = Store.open(tmp_path / "s.db")
    st.close()
    os.chmod(tmp_path / "s.db", 0o644)
    Store.open(tmp_path / "s.db").close()
    assert _mode(tmp_path / "s.db") == 0o600
