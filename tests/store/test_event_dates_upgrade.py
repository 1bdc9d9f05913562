"""Issue 34, existing stores: a store written by the previous pcp (schema 7, tests/data/stores/schema7-dated.db)
holds messages telling of days relative to when they were said, and no event dates in its index. Opening
it migrates to schema 8; the owner's upgrade derives the dates in resumable batches while search keeps
answering; an erasure during the upgrade (of a message done and of one not yet done) leaves no posting and
no date behind; afterwards every revision's index row holds exactly the dates today's code derives, and a
question naming a day finds what a message told of it. Older stores reach the same state through the chain
of migrations (schema 1 and schema 6 fixtures)."""

from __future__ import annotations

import shutil
from pathlib import Path

import fts_blocks as fb
import pcpstore_helpers as h
import pytest

from store import Store, index
from store.db import SCHEMA_VERSION

STORES = Path(__file__).resolve().parents[1] / "data" / "stores"
FIXTURE = STORES / "schema7-dated.db"
QUESTION = "Who did I meet in Lisbon on October 3, 2023?"  # "Yesterday I met some painters in Lisbon", said 4 Oct


def scope_tokens(db: Path) -> dict[int, set[str]]:
    """Revision pk -> the tokens of its index row's `scope` column, as FTS5 holds them."""
    con = h.sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        con.execute("CREATE VIRTUAL TABLE temp.inst USING fts5vocab(main, revision_terms, instance)")
        out: dict[int, set[str]] = {}
        for term, doc in con.execute("SELECT term, doc FROM temp.inst WHERE col = 'scope'"):
            out.setdefault(int(doc), set()).add(term)
        return out
    finally:
        con.close()


def expected_tokens(db: Path) -> dict[int, set[str]]:
    """Revision pk -> the scope token and the event dates today's code derives for it."""
    con = h.sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return {int(rev): {f"zs{scope}", *index.derived_dates(content, when)} for rev, scope, content, when in con.execute(
            "SELECT id, scope_id, content, COALESCE(observed_at, created_at) FROM revision")}
    finally:
        con.close()


def dated_revisions(db: Path) -> list[int]:
    return sorted(rev for rev, tokens in expected_tokens(db).items() if len(tokens) > 1)


def integrity(db: Path) -> None:
    con = h.sqlite3.connect(str(db))
    try:
        con.execute("INSERT INTO revision_terms(revision_terms, rank) VALUES('integrity-check', 0)")
    finally:
        con.close()


@pytest.fixture
def old_store(tmp_path) -> Path:
    db = tmp_path / "old.db"
    shutil.copy(FIXTURE, db)
    return db


def test_the_fixture_is_schema_7_without_event_dates(old_store):
    con = h.sqlite3.connect(str(old_store))
    try:
        assert con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0] == "7"
    finally:
        con.close()
    assert len(dated_revisions(old_store)) >= 5  # messages that tell of other days
    assert not any(t.startswith(("zd", "zm", "zy")) for t in fb.vocabulary(old_store))


def test_a_schema_7_store_derives_its_event_dates_resumably_and_erases_them(old_store):
    dated = dated_revisions(old_store)
    with Store.open(old_store) as st:
        assert st._db.execute_sql("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0] == str(
            SCHEMA_VERSION)
        total = st._db.execute_sql("SELECT COUNT(*) FROM revision").fetchone()[0]
        assert st.index_upgrade_status() == {"done": 0, "total": total}
        assert st.search_pages(QUESTION)["hits"]  # search answers while the dates are derived

        class Stop(Exception):
            pass

        def stop_after_one(done: int, total: int, unit: str) -> None:
            if done:
                raise Stop  # the first batch is committed; the run ends here

        with pytest.raises(Stop):
            st.upgrade_index(progress=stop_after_one, batch=8)
        cursor = int(st._db.execute_sql("SELECT value FROM meta WHERE key = 'index_dates'").fetchone()[0].split()[0])
        lisbon_rev = st._db.execute_sql("SELECT id FROM revision WHERE content LIKE '%Lisbon%'").fetchone()[0]
        done = [r for r in dated if r <= cursor and r != lisbon_rev]
        pending = [r for r in dated if r > cursor and r != lisbon_rev]
        assert done and pending
        # One erased whose row already holds its dates, one whose row does not yet.
        victims = [done[0], pending[-1]]
        pages = [st._db.execute_sql("SELECT p.page_id FROM revision r JOIN page p ON p.id = r.page_id WHERE r.id = ?",
                                    [rev]).fetchone()[0] for rev in victims]
        victim_dates = set().union(*(expected_tokens(old_store)[rev] for rev in victims)) - {
            t for rev, tokens in expected_tokens(old_store).items() if rev not in victims for t in tokens}
        for page in pages:
            st.delete_page(page, "erased during the upgrade")
    assert fb.postings_of(old_store, victims) == 0
    integrity(old_store)
    with Store.open(old_store) as st:  # resumed by the next run
        status = st.index_upgrade_status()
        assert status is not None and 0 < status["done"] < status["total"]
        st.upgrade_index(batch=8)
        assert st.index_upgrade_status() is None
        assert st._db.execute_sql("SELECT value FROM meta WHERE key = 'index_dates'").fetchone() is None
        lisbon = st.search_pages("painters in Lisbon", mode="exact")["hits"][0]["page_id"]
        assert st.search_pages(QUESTION, limit=1)["hits"][0]["page_id"] == lisbon
    integrity(old_store)
    assert scope_tokens(old_store) == expected_tokens(old_store)  # every row as today's code writes it
    vocab = fb.vocabulary(old_store)
    assert victim_dates and not (victim_dates & vocab)  # the erased messages' own dates are gone
    assert fb.shadow_residue(old_store, victim_dates) == []


@pytest.mark.parametrize("fixture", ["schema1.db", "schema6-erased.db"])
def test_older_stores_reach_schema_8_through_the_chain(tmp_path, fixture):
    db = tmp_path / "old.db"
    shutil.copy(STORES / fixture, db)
    with Store.open(db) as st:
        assert st._db.execute_sql("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0] == str(
            SCHEMA_VERSION)
        assert st.index_upgrade_status() is not None
        st.upgrade_index(batch=7)
        assert st.index_upgrade_status() is None
        when = "2023-10-04T15:00:00Z"
        page = st.write_page("project:dated", content="Yesterday we walked to the lighthouse.", observed_at=when)
        assert st.search_pages("Where did we walk on October 3, 2023?", limit=1)["hits"][0]["page_id"] == page["page_id"]
    integrity(db)
    assert scope_tokens(db) == expected_tokens(db)
