"""Issue 38, question search on an encrypted store: a question's candidates (up to a thousand per word) are tested
against two narrow covering indexes (schema 9, store/db.py RANK_INDEXES) instead of the wide revision and page
rows, so they touch a few database pages of ids, not a thousand pages of text that an encrypted store must read,
check and decrypt one by one. The indexes change which pages SQLite reads, never what a session finds: hits,
order and scores are the same with and without them, for the owner, a model granted one scope, a session with
suppressions and a filter the indexes do not cover; a schema 8 store gains them when it is opened."""

from __future__ import annotations

from pathlib import Path

import pcpstore_helpers as h
import pytest
from search_helpers import PROBES, SCOPE, add_pages_in_scope, write_question_corpus

from store import Store
from store.db import RANK_INDEXES, SCHEMA_VERSION

NAMES = ("revision_rank", "page_rank")


def rank_indexes(st: Store) -> set[str]:
    return {name for (name,) in st._db.execute_sql(
        "SELECT name FROM sqlite_master WHERE type = 'index' AND name IN (?, ?)", NAMES).fetchall()}


def sessions(st: Store) -> dict[str, tuple[Store, dict]]:
    """Who asks, and the extra search arguments: the owner, a model granted one scope, a model whose context
    suppresses pages, and the owner with a filter on the revision's date (a column the indexes do not hold)."""
    restricted = h.model(st, {SCOPE: {"search", "read", "suppress"}})
    return {
        "owner": (st, {}),
        "one scope": (h.model(st, {SCOPE: {"search", "read"}}), {}),
        "suppressing": (restricted, {"context_id": "ctx"}),
        "dated filter": (st, {"filters": {"created_after": "2000-01-01T00:00:00.000Z"}}),
    }


@pytest.fixture
def corpus(store):
    write_question_corpus(store)
    pages = add_pages_in_scope(store)
    h.model(store, {SCOPE: {"search", "read", "suppress"}}).suppress_pages(pages[:2], context_id="ctx", reason="test")
    return store


def candidate_plans(st: Store, who: Store, query: str, mode: str, extra: dict) -> list[str]:
    """The query plans of the candidate statements one search ran (the statements that join the full-text
    index to revision and page), as SQLite explains them."""
    conn = st._db.connection()
    seen: list[str] = []
    conn.set_trace_callback(seen.append)
    try:
        who.search_pages(query, mode=mode, limit=20, **extra)
    finally:
        conn.set_trace_callback(None)
    plans = []
    for sql in seen:
        if "MATCH" in sql and "JOIN revision" in sql and "JOIN page" in sql:
            plans.append(" | ".join(row[3] for row in conn.execute("EXPLAIN QUERY PLAN " + sql).fetchall()))
    return plans


def test_a_new_store_has_the_rank_indexes(store):
    assert rank_indexes(store) == set(NAMES)


@pytest.mark.parametrize("who", ["owner", "one scope", "suppressing"])
def test_a_question_tests_its_candidates_against_the_narrow_indexes(corpus, who):
    session, extra = sessions(corpus)[who]
    plans = candidate_plans(corpus, session, "did we discuss a proof route for compactness?", "auto", extra)
    assert plans, "the question ran no candidate statement"
    for plan in plans:
        assert "COVERING INDEX revision_rank" in plan and "COVERING INDEX page_rank" in plan, plan


def test_a_filter_the_indexes_do_not_hold_reads_the_rows(corpus):
    session, extra = sessions(corpus)["dated filter"]
    plans = candidate_plans(corpus, session, "did we discuss a proof route for compactness?", "auto", extra)
    assert plans and all("revision_rank" not in plan for plan in plans), plans


@pytest.mark.parametrize("query,mode", PROBES)
def test_the_rank_indexes_change_no_hit_order_or_score(corpus, query, mode):
    def answers() -> dict[str, dict]:
        return {name: who.search_pages(query, mode=mode, limit=50, **extra)
                for name, (who, extra) in sessions(corpus).items()}

    assert rank_indexes(corpus) == set(NAMES)
    narrow = answers()
    assert any(a["hits"] for a in narrow.values()), (query, mode)
    for name in NAMES:
        corpus._db.execute_sql(f"DROP INDEX {name}")
    assert answers() == narrow


def test_a_schema_8_store_gains_the_rank_indexes_and_answers_the_same(tmp_path: Path):
    """Schema 9 adds only the two indexes, so a schema 8 store is today's store without them."""
    path = tmp_path / "s8.db"
    with Store.open(path) as st:
        write_question_corpus(st)
        for name in NAMES:
            st._db.execute_sql(f"DROP INDEX {name}")
        st._db.execute_sql("UPDATE meta SET value = '8' WHERE key = 'schema_version'")
        before = {q: st.search_pages(q, mode=m, limit=50) for q, m in PROBES}
    con = h.sqlite3.connect(str(path))
    try:
        assert not con.execute("SELECT name FROM sqlite_master WHERE name IN (?, ?)", NAMES).fetchall()
    finally:
        con.close()
    with Store.open(path) as st:
        assert st.doctor()["schema_version"] == SCHEMA_VERSION == 9
        assert rank_indexes(st) == set(NAMES)
        assert {q: st.search_pages(q, mode=m, limit=50) for q, m in PROBES} == before
        sql = {row[0] for row in st._db.execute_sql(
            "SELECT sql FROM sqlite_master WHERE name IN (?, ?)", NAMES).fetchall()}
    assert sql == {s.replace("IF NOT EXISTS ", "") for s in RANK_INDEXES}
