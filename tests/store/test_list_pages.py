"""list_pages: keyset paging over page heads for the app's page list (bounded, authorized in SQL)."""

from __future__ import annotations

import pytest

from store import AccessSession, Forbidden, Invalid, Unsupported
from store.db import SCHEMA_VERSION


def _seed(store):
    ids = {}
    for i, (ns, title, day) in enumerate([
        ("project:a", "Banana", "2025-01-03"), ("project:a", "apple", "2025-01-01"), ("project:a", "Cherry", "2025-01-05"),
        ("project:b", "Damson", "2025-01-02"), ("project:b", "Elder", "2025-01-04"),
    ]):
        ids[title] = store.write_page(ns, content=f"{title} text {i}", facets={"title": title},
                                      observed_at=f"{day}T10:00:00Z")["page_id"]
    return ids


def _walk(store, **kw):
    out, cursor = [], None
    while True:
        page = store.list_pages(after=cursor, limit=2, **kw)
        assert len(page["pages"]) <= 2
        out += [p["title"] for p in page["pages"]]
        cursor = page["next_cursor"]
        if cursor is None:
            return out


def test_recent_order_walks_every_page_once_in_sort_time_order(store):
    _seed(store)
    assert _walk(store) == ["Cherry", "Elder", "Banana", "Damson", "apple"]
    assert _walk(store, scopes=["project:a"]) == ["Cherry", "Banana", "apple"]


def test_title_order_and_row_shape(store):
    ids = _seed(store)
    # Case does not split the order: "apple" before "Banana" (issue 13: title sort was case-sensitive).
    assert _walk(store, order="title") == ["apple", "Banana", "Cherry", "Damson", "Elder"]
    assert _walk(store, order="title", scopes=["project:a"]) == ["apple", "Banana", "Cherry"]
    row = store.list_pages(scopes=["project:b"], order="title", limit=1)["pages"][0]
    assert row["page_id"] == ids["Damson"] and row["namespace"] == "project:b"
    assert row["lifecycle_status"] == "active" and row["media_type"] == "text/markdown"
    assert row["actor_type"] == "user" and row["revision_id"].startswith("rev_")
    assert "content" not in row and "payload" not in row


def test_status_filters(store):
    ids = _seed(store)
    store.archive_page(ids["Banana"], "old")
    store.tombstone_page(ids["Elder"], "wrong")
    store.link_pages(ids["Cherry"], "supersedes", ids["apple"])
    assert _walk(store) == ["Cherry", "Damson"]
    assert _walk(store, status="archived") == ["Banana"]
    assert _walk(store, status="tombstoned") == ["Elder"]
    assert _walk(store, status=["superseded"]) == ["apple"]
    assert _walk(store, status="all") == ["Cherry", "Banana", "Damson", "apple"]
    with pytest.raises(Invalid):
        store.list_pages(status="gone")


def test_actor_type_filter(store):
    _seed(store)
    model = store.with_session(AccessSession.model_client("m", {"project:a": {"search", "read", "write"}}))
    model.write_page("project:a", content="model note", facets={"title": "Model note"})
    assert _walk(store, actor_types=["model"]) == ["Model note"]
    assert "Model note" not in _walk(store, actor_types="user")


def test_authorization_in_sql_and_named_scopes(store):
    _seed(store)
    model = store.with_session(AccessSession.model_client("m", {"project:b": {"search", "read"}}))
    assert _walk(model) == ["Elder", "Damson"]
    with pytest.raises(Forbidden):
        model.list_pages(scopes=["project:a"])


def test_cursor_belongs_to_its_listing_and_order_is_checked(store):
    _seed(store)
    cursor = store.list_pages(limit=1)["next_cursor"]
    with pytest.raises(Invalid):
        store.list_pages(after=cursor, order="title")
    with pytest.raises(Unsupported):
        store.list_pages(order="size")


def test_limit_is_clamped(store):
    store.write_pages_bulk(({"content": f"bulk {i}"} for i in range(150)), "project:bulk")
    page = store.list_pages(limit=10_000)
    assert len(page["pages"]) == 100 and page["next_cursor"]


def test_title_order_walks_its_index_and_an_older_store_gains_it(store, tmp_path):
    from peewee import sqlite3  # the store's SQLite (one library per process)

    from store import Store

    _seed(store)
    db = store._ctx.db
    sql = ("EXPLAIN QUERY PLAN SELECT p.title COLLATE NOCASE AS key, p.id FROM page p WHERE p.scope_id = 1 "
           "ORDER BY p.title COLLATE NOCASE ASC, p.id ASC LIMIT 3")
    plan = " ".join(r[3] for r in db.execute_sql(sql).fetchall())
    assert "page_scope_title_nocase" in plan and "TEMP B-TREE" not in plan, plan
    # A store of schema 4 had the case-sensitive index: opening it replaces the index.
    path = store.path
    store.close()
    con = sqlite3.connect(path)
    con.execute("DROP INDEX page_scope_title_nocase")
    con.execute('CREATE INDEX "page_scope_id_title" ON "page" ("scope_id", "title")')
    con.execute("UPDATE meta SET value = '4' WHERE key = 'schema_version'")
    con.commit()
    con.close()
    with Store.open(path) as again:
        assert _walk(again, order="title") == ["apple", "Banana", "Cherry", "Damson", "Elder"]
    con = sqlite3.connect(path)
    names = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'page'")}
    version = con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0]
    con.close()
    assert "page_scope_title_nocase" in names and "page_scope_id_title" not in names
    assert version == str(SCHEMA_VERSION)


def test_oldest_order_walks_the_recent_order_backwards_from_the_other_end(store):
    """The app's End: the listing read from its other end, keyset-paged (issue 35)."""
    _seed(store)
    store.archive_page(store.list_pages(limit=1)["pages"][0]["page_id"], "old")
    for kw in ({}, {"scopes": ["project:a"]}, {"status": ["active", "archived"]}):
        assert _walk(store, order="oldest", **kw) == list(reversed(_walk(store, **kw))), kw
    cursor = store.list_pages(limit=1)["next_cursor"]
    with pytest.raises(Invalid):
        store.list_pages(after=cursor, order="oldest")  # a recent cursor is not an oldest one


def test_count_pages_counts_what_the_listing_would_list_and_only_what_the_caller_may_see(store):
    _seed(store)
    store.archive_page(store.list_pages(limit=1)["pages"][0]["page_id"], "old")
    for kw in ({}, {"scopes": ["project:a"]}, {"status": ["active", "archived"]}, {"actor_types": ["model"]},
               {"status": ["archived"]}):
        assert store.count_pages(**kw)["pages"] == len(_walk(store, **kw)), kw
    model = store.with_session(AccessSession.model_client("m", {"project:b": {"search", "read"}}))
    assert model.count_pages()["pages"] == 2
    with pytest.raises(Forbidden):
        model.count_pages(scopes=["project:a"])
