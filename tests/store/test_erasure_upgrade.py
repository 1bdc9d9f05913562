"""Issue 28, existing stores: a store written with the `contentless_delete` index (schema 6) whose blocks
still hold the terms of pages erased there (tests/data/stores/schema6-erased.db) goes through the
resumable index upgrade; afterwards no block holds them, every revision is indexed once, and an erasure
during the upgrade leaves nothing either."""

from __future__ import annotations

import shutil
from pathlib import Path

import fts_blocks as fb
import pcpstore_helpers as h
import pytest

from store import Conflict, Store
from store.db import SCHEMA_VERSION

FIXTURE = Path(__file__).resolve().parents[1] / "data" / "stores" / "schema6-erased.db"
ERASED = ("quorvexil", "zembratic", "plimsodyne", "vorquallen", "hestrimund", "drubellox", "smarnifel",
          "yostravine", "kelpmarund", "wibberzant")  # make_schema6_erased_store.py
KEPT = ("tandorelle", "mistrovane", "borkilund", "fennastrip", "glovantine", "ruddimorg")


def ddl(db: Path, name: str) -> str | None:
    con = h.sqlite3.connect(str(db))
    try:
        row = con.execute("SELECT sql FROM sqlite_master WHERE name = ?", (name,)).fetchone()
        return None if row is None else str(row[0])
    finally:
        con.close()


@pytest.fixture
def old_store(tmp_path) -> Path:
    db = tmp_path / "old.db"
    shutil.copy(FIXTURE, db)
    return db


def test_the_fixture_keeps_erased_terms_in_its_blocks(old_store):
    assert "contentless_delete=1" in (ddl(old_store, "revision_terms") or "")
    assert fb.shadow_residue(old_store, ERASED), "the schema 6 index kept the erased pages' terms"


def test_the_upgrade_leaves_no_erased_term_and_resumes(old_store):
    with Store.open(old_store) as st:
        assert st._db.execute_sql("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0] == str(
            SCHEMA_VERSION)
        status = st.index_upgrade_status()
        assert status == {"done": 0, "total": 40}  # every revision left
        with pytest.raises(Conflict, match="Index upgrade in progress"):
            st.search_pages(KEPT[0], mode="text")
        assert st.search_pages(KEPT[0], mode="exact")["hits"]  # exact needs no index meanwhile
        kept = sorted(h.hit_ids(st, KEPT[0], mode="exact"))
        # an erasure while the upgrade is pending, of a page not re-indexed yet and of one re-indexed
        first, last = kept[0], kept[-1]

        class Stop(Exception):
            pass

        def stop_after_one(done: int, total: int, unit: str) -> None:
            if done:
                raise Stop  # cut short between two batches (each batch is its own transaction)

        with pytest.raises(Stop):
            st.upgrade_index(progress=stop_after_one, batch=10)
        assert st.index_upgrade_status()["done"] == 10
        revs = [r[0] for r in st._db.execute_sql(
            "SELECT r.id FROM revision r JOIN page p ON p.id = r.page_id WHERE p.page_id IN (?, ?)", (first, last))]
        cursor = int(st._db.execute_sql("SELECT value FROM meta WHERE key = 'index_upgrade'").fetchone()[0].split()[0])
        assert min(revs) <= cursor < max(revs)  # one re-indexed already, one not yet
        late_text = [r[0] for r in st._db.execute_sql(
            "SELECT content FROM revision r JOIN page p ON p.id = r.page_id WHERE p.page_id IN (?, ?)", (first, last))]
        st.delete_page(first, "erased during the upgrade")
        st.delete_page(last, "erased during the upgrade")
    with Store.open(old_store) as st:  # resumed by the next run, where it stopped
        assert st.index_upgrade_status() == {"done": 9, "total": 38}  # (one of the ten done was erased since)
        result = st.upgrade_index(batch=10)
        assert result == {"upgraded": 29, "total": 38} and st.index_upgrade_status() is None
        assert h.hit_ids(st, KEPT[1], mode="text")
        live = {r[0] for r in st._db.execute_sql("SELECT id FROM revision")}
        staying = [r[0] for r in st._db.execute_sql("SELECT content FROM revision")]
    assert ddl(old_store, "revision_terms_old") is None and ddl(old_store, "revision_terms_old_data") is None
    assert "contentless_delete" not in (ddl(old_store, "revision_terms") or "")
    assert fb.shadow_residue(old_store, ERASED) == []
    assert fb.postings_of(old_store, revs) == 0
    con = h.sqlite3.connect(str(old_store))
    try:
        con.execute("CREATE VIRTUAL TABLE temp.inst USING fts5vocab(main, revision_terms, instance)")
        assert {r[0] for r in con.execute("SELECT DISTINCT doc FROM temp.inst")} == live  # each revision once
        con.execute("INSERT INTO revision_terms(revision_terms, rank) VALUES('integrity-check', 0)")
    finally:
        con.close()
    gone = set()
    for t in late_text:
        gone |= h.windows(t.encode())
    for t in staying:
        gone -= h.windows(t.encode())
    assert len(gone) > 100
    assert h.find_residue(h.files_beside(old_store), gone) == []
