"""Issue 11 point 5: a store written by the previous pcp (tests/data/stores/schema1.db, schema 1)
keeps working. Opening it migrates the schema; search says "index upgrade in progress" until
`Store.upgrade_index` has re-indexed every old revision in bounded, resumable batches; afterwards
the same pages are found with the new ranking and the legacy index is gone."""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pcpstore_helpers as h
import pytest

from store import AccessSession, Conflict, Forbidden, Store
from store.db import SCHEMA_VERSION

PROOF = "Proof route for compactness of finite products via the tube lemma."
CJK = "此前对有限乘积紧致性的证明讨论……"
EN_QUESTION = "did we discuss a proof route for compactness of finite products?"
CJK_QUESTION = "此前是否讨论过有限乘积保持紧致性的证明路线？"
REPO = Path(__file__).resolve().parents[2]


def tables(path: Path) -> set[str]:
    con = h.sqlite3.connect(str(path))
    try:
        return {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    finally:
        con.close()


def schema_version(path: Path) -> int:
    con = h.sqlite3.connect(str(path))
    try:
        return int(con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0])
    finally:
        con.close()


def titles(result: dict) -> list[str]:
    return [hit["title"] for hit in result["hits"]]


def index_state(path: Path) -> dict:
    """Everything the upgrade writes: statistics, every posting of the FTS index, the meta keys."""
    con = h.sqlite3.connect(str(path))
    try:
        con.execute("CREATE VIRTUAL TABLE temp.vocab USING fts5vocab(main, revision_terms, instance)")
        return {
            "term_stat": sorted(con.execute("SELECT term, scope_id, df FROM term_stat")),
            "scope_stat": sorted(con.execute("SELECT scope_id, docs, terms FROM scope_stat")),
            "postings": sorted(con.execute("SELECT term, doc, col, offset FROM temp.vocab")),
            "meta": sorted(r[0] for r in con.execute("SELECT key FROM meta")),
        }
    finally:
        con.close()


def test_the_fixture_is_a_schema_1_store(schema1_db):
    assert schema_version(schema1_db) == 1
    assert "revision_fts" in tables(schema1_db)
    assert "term_stat" not in tables(schema1_db)


def test_opening_migrates_and_search_waits_for_the_upgrade(schema1_db):
    st = Store.open(schema1_db)
    try:
        assert schema_version(schema1_db) == SCHEMA_VERSION  # every migration since schema 1
        assert {"revision_terms", "term_stat", "scope_stat"} <= tables(schema1_db)
        assert st.index_upgrade_status() == {"done": 0, "total": 10}
        for mode in ("auto", "text"):
            with pytest.raises(Conflict, match="Index upgrade in progress"):
                st.search_pages(EN_QUESTION, mode=mode)
        # exact needs no index: it keeps answering meanwhile
        assert set(titles(st.search_pages("tube lemma", mode="exact"))) == {
            PROOF, "Mixed notes: 紧致 spaces and the tube lemma"}

        reports: list[tuple] = []
        result = st.upgrade_index(progress=lambda *a: reports.append(a), batch=3)
        assert result == {"upgraded": 10, "total": 10}
        assert st.index_upgrade_status() is None
        # the store's progress convention (done, total, what), from 0 to total in batch steps
        assert reports[0] == (0, 10, "revisions") and reports[-1] == (10, 10, "revisions")
        assert [r[0] for r in reports] == sorted(r[0] for r in reports)
        assert len(reports) >= 1 + 10 // 3
        assert "revision_fts" not in tables(schema1_db)
        assert not any(name.startswith("revision_fts") for name in tables(schema1_db))
        assert st.upgrade_index() == {"upgraded": 0, "total": 0}  # nothing left to do
    finally:
        st.close()


def test_after_the_upgrade_the_same_pages_are_found_with_the_new_ranking(schema1_db):
    st = Store.open(schema1_db)
    try:
        before = {q: titles(st.search_pages(q, mode="exact")) for q in ("compactness", "tube lemma", "紧致", "产品")}
        st.upgrade_index()
        assert titles(st.search_pages(EN_QUESTION))[0] == PROOF
        assert titles(st.search_pages(CJK_QUESTION))[0] == CJK
        for query, found in before.items():
            assert found, query
            # text mode stems (compactness ~ compact), so it finds at least what the substring found
            assert set(found) <= set(titles(st.search_pages(query, mode="text"))), query
        # the tombstoned page stays out of ordinary search, and the owner (who holds audit) can still ask for it
        assert not any("Withdrawn" in t for t in titles(st.search_pages(EN_QUESTION, limit=50)))
        gone = st.search_pages(EN_QUESTION, filters={"lifecycle_status": ["tombstoned"]})
        assert [h_["lifecycle_status"] for h_ in gone["hits"]] == ["tombstoned"]
        # the revised page's first revision was re-indexed too
        old = st.search_pages("Spectral theorem notes; products", mode="text", all_revisions=True,
                              filters={"lifecycle_status": ["superseded"]})
        assert [h_["lifecycle_status"] for h_ in old["hits"]] == ["superseded"]
        # hits carry the old pages' observed_at as their date
        proof = st.search_pages(EN_QUESTION)["hits"][0]
        assert proof["date"] == proof["observed_at"] == "2025-03-14T10:00:00.000Z"
        # statistics count exactly the revisions of pages that are not tombstoned
        assert h.stored_stats(st) == h.recounted_stats(st)
    finally:
        st.close()


def test_writes_during_a_pending_upgrade_are_indexed_once(schema1_db):
    st = Store.open(schema1_db)
    try:
        new = st.write_page("work:notes", content="Fresh note on compactness of finite products, written mid-upgrade.")
        st.upgrade_index(batch=4)
        assert h.stored_stats(st) == h.recounted_stats(st)
        hits = st.search_pages("compactness finite products", mode="text", scopes=["work:notes"])["hits"]
        assert [x["page_id"] for x in hits] == [new["page_id"]]
    finally:
        st.close()


KILLER = textwrap.dedent("""
    import os, signal, sys
    from store import Store

    st = Store.open(sys.argv[1])
    def report(done, total, what):
        if done >= int(sys.argv[2]):
            os.kill(os.getpid(), signal.SIGKILL)  # as a power cut would: no cleanup, no rollback handler
    st.upgrade_index(progress=report, batch=1)
    print("not killed")
""")


@pytest.mark.slow
def test_an_upgrade_killed_mid_way_resumes_and_ends_identical(schema1_db, tmp_path):
    reference = tmp_path / "reference.db"
    shutil.copyfile(schema1_db, reference)
    with Store.open(reference) as st:
        st.upgrade_index(batch=1)

    proc = subprocess.run([sys.executable, "-c", KILLER, str(schema1_db), "4"], cwd=REPO, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    assert "not killed" not in proc.stdout
    st = Store.open(schema1_db)
    try:
        assert st.index_upgrade_status() == {"done": 4, "total": 10}  # four committed batches survive the kill
        with pytest.raises(Conflict):
            st.search_pages(EN_QUESTION)
        reports: list[tuple] = []
        assert st.upgrade_index(progress=lambda *a: reports.append(a), batch=1) == {"upgraded": 6, "total": 10}
        assert reports[0] == (4, 10, "revisions")
        resumed = {q: st.search_pages(q, limit=50)["hits"] for q in (EN_QUESTION, CJK_QUESTION, "tube lemma")}
    finally:
        st.close()
    assert index_state(schema1_db) == index_state(reference)
    with Store.open(reference) as ref:
        for query, hits in resumed.items():
            assert hits == ref.search_pages(query, limit=50)["hits"], query


def test_open_without_migrating_refuses_an_older_store(schema1_db):
    with pytest.raises(Conflict, match="run pcp once to upgrade this store"):
        Store.open(schema1_db, migrate=False)
    assert schema_version(schema1_db) == 1 and "term_stat" not in tables(schema1_db)
    with Store.open(schema1_db) as st:  # the ordinary open migrates
        assert st.index_upgrade_status() is not None
    # a current schema opens without migrating; the pending index upgrade is visible to the caller
    with Store.open(schema1_db, migrate=False) as st:
        assert st.index_upgrade_status() == {"done": 0, "total": 10}


def test_only_the_owner_upgrades_the_index(schema1_db):
    with Store.open(schema1_db) as st:
        model = st.with_session(AccessSession.model_client("m", AccessSession.parse_grants(["*=search,read"])))
        with pytest.raises(Forbidden):
            model.upgrade_index()
        assert st.index_upgrade_status() == {"done": 0, "total": 10}


def test_a_new_store_has_nothing_to_upgrade(store):
    assert store.index_upgrade_status() is None
    assert store.upgrade_index() == {"upgraded": 0, "total": 0}
