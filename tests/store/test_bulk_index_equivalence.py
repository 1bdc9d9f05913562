"""The bulk write path keeps the full-text index and its statistics exactly as the single-page path does
(issue 31): the same pages written by `write_pages_bulk`, restored by `import_export` or taken in by a sync
give the same postings (term, revision, column, position), the same per-scope term counts and the same
export lines as pages written one by one; and erasing them all leaves no posting and no count behind,
which holds only if every row was indexed with exactly the values the erasure analyses again (FTS5's
'delete' command, issue 28)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pcpstore_helpers import sqlite3

from store import Store
from test_bulk_equivalence import ITEMS, _mapped

NS = "project:eq"


def _postings(db: Path, by_id: bool) -> list[tuple[Any, ...]]:
    """Every posting of the index as (term, revision, column, offset): the revision named by its id
    (`by_id`), else by its place in the order the revisions were written (ids minted anew); a scope's
    token by its namespace (scope keys differ between stores)."""
    con = sqlite3.connect(db)
    try:
        con.execute("CREATE VIRTUAL TABLE temp.v USING fts5vocab(main, revision_terms, instance)")
        revs = [r[0] for r in con.execute("SELECT revision_id FROM revision ORDER BY id")]
        name = {pk: (rid if by_id else n) for n, (pk, rid) in
                enumerate(con.execute("SELECT id, revision_id FROM revision ORDER BY id"))}
        assert len(name) == len(revs)
        scopes = {f"zs{pk}": f"zs:{ns}" for pk, ns in con.execute("SELECT id, namespace FROM scope")}
        return sorted((scopes.get(term, term) if col == "scope" else term, name[doc], col, off)
                      for term, doc, col, off in con.execute("SELECT * FROM temp.v"))
    finally:
        con.close()


def _stats(db: Path) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    con = sqlite3.connect(db)
    try:
        terms = sorted(con.execute("SELECT t.term, s.namespace, t.df FROM term_stat t JOIN scope s ON s.id = t.scope_id"))
        scopes = sorted(con.execute("SELECT s.namespace, x.docs, x.terms FROM scope_stat x JOIN scope s ON s.id = x.scope_id "
                                    "WHERE x.docs != 0 OR x.terms != 0"))
        return terms, scopes
    finally:
        con.close()


def _erase_all(db: Path) -> None:
    with Store.open(db) as st:
        for ns in [s["namespace"] for s in st.list_scopes()["scopes"]]:
            st.delete_scope(ns, "test: everything goes")
    assert _postings(db, by_id=True) == []
    assert _stats(db) == ([], [])


def _same_index(a: Path, b: Path, by_id: bool) -> None:
    assert _postings(a, by_id) == _postings(b, by_id)
    assert _stats(a) == _stats(b)


def test_write_pages_bulk_indexes_and_counts_as_write_page_does(tmp_path):
    with Store.open(tmp_path / "one.db") as st:
        for item in ITEMS:
            st.write_page(NS, **item)
        st.export(tmp_path / "one.jsonl")
    with Store.open(tmp_path / "bulk.db") as st:
        st.write_pages_bulk(iter(ITEMS), NS, batch_size=4)
        st.export(tmp_path / "bulk.jsonl")
    assert _postings(tmp_path / "one.db", by_id=False)  # the comparison is not of two empty indexes
    _same_index(tmp_path / "one.db", tmp_path / "bulk.db", by_id=False)
    assert _mapped(tmp_path / "bulk.jsonl") == _mapped(tmp_path / "one.jsonl")
    for name in ("one.db", "bulk.db"):
        _erase_all(tmp_path / name)


def _source(db: Path) -> None:
    """Pages written one by one in two scopes, one revised, one tombstoned (its revisions indexed, not counted)."""
    with Store.open(db) as st:
        pids = [st.write_page(NS if i % 2 else "project:other", **item)["page_id"] for i, item in enumerate(ITEMS)]
        head = st.read_pages([pids[1]], projections=["manifest"])["results"][0]["current_revision_id"]
        st.revise_page(pids[1], head, content="revised: the tide went out at noon", facets={"title": "Ebb"})
        st.tombstone_page(pids[2], "test: out of the counts")


def test_restore_and_sync_index_and_count_as_the_store_they_came_from(tmp_path):
    src = tmp_path / "src.db"
    _source(src)
    with Store.open(src) as st:
        st.export(tmp_path / "src.jsonl")
    with Store.open(tmp_path / "restored.db") as st:
        st.import_export(tmp_path / "src.jsonl")
        st.export(tmp_path / "restored.jsonl")
    with Store.open(tmp_path / "synced.db") as st:
        st.sync_with(src)
    with Store.open(src) as st:
        st.export(tmp_path / "src.jsonl")  # after the sync (which adopts nothing, writes nothing here)
    source = (tmp_path / "src.jsonl").read_text(encoding="utf-8").splitlines()[1:-1]
    assert (tmp_path / "restored.jsonl").read_text(encoding="utf-8").splitlines()[1:-1] == source
    for copy in ("restored.db", "synced.db"):
        _same_index(src, tmp_path / copy, by_id=True)
    for name in ("src.db", "restored.db", "synced.db"):
        _erase_all(tmp_path / name)
