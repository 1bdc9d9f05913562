"""Schema 3 (store/db.py _migrate_sync): a store written before sync gains the sync tables and syncs."""

from __future__ import annotations

import shutil
from pathlib import Path

from sync_helpers import export_lines, sync
from store import Store
from store.db import SCHEMA_VERSION

SCHEMA1 = Path(__file__).resolve().parents[1] / "data" / "stores" / "schema1.db"
SYNC_TABLES = {"sync_peer", "sync_gone_page", "sync_alias", "sync_conflict", "sync_unsuppress"}


def test_an_older_store_migrates_and_syncs(tmp_path, stores):
    old = tmp_path / "old" / "context.db"
    old.parent.mkdir()
    shutil.copy(SCHEMA1, old)
    with Store.open(old) as st:
        assert SYNC_TABLES <= set(st._db.get_tables())
        version = st._db.execute_sql("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0]
        assert int(version) == SCHEMA_VERSION
        pages = st.doctor()["counts"]["page"]
        assert pages > 0
    (fresh,) = stores(1)
    res = sync(fresh, old)
    assert res["adopted_owner"] and res["taken"]["added"]["page"] == pages
    with Store.open(old) as st:  # the suppression log of the migrated store works
        first = st.list_pages(limit=1)["pages"][0]["page_id"]
        st.suppress_pages([first], "ctx")
        st.unsuppress_pages([first], "ctx")
        assert st._db.execute_sql("SELECT COUNT(*) FROM sync_unsuppress").fetchone()[0] == 1
    sync(old, fresh)
    assert export_lines(old, tmp_path / "a.jsonl") == export_lines(fresh, tmp_path / "b.jsonl")
