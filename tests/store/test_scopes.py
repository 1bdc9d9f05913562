"""pcp-core.md §2 scopes and §4 list_scopes."""

from __future__ import annotations


import pcpstore_helpers as h
from pcpstore_helpers import raises_code

SCOPE_KEYS = {"namespace", "display_name", "description", "parent", "visibility", "owner_id", "permissions",
              "page_count", "last_activity"}


def test_create_scope_and_list(store):
    s = store.create_scope("project:thesis", display_name="Thesis", description="PhD thesis",
                           parent="user:me", visibility="shared")
    assert set(s) >= SCOPE_KEYS
    listed = h.scope_map(store)["project:thesis"]
    assert set(listed) >= SCOPE_KEYS
    assert listed["display_name"] == "Thesis"
    assert listed["description"] == "PhD thesis"
    assert listed["parent"] == "user:me"
    assert listed["visibility"] == "shared"
    assert listed["owner_id"] == store.owner_id
    assert listed["page_count"] == 0
    assert set(listed["permissions"]) >= {"search", "read", "write", "delete"}


def test_bad_visibility_is_invalid(store):
    with raises_code("invalid"):
        store.create_scope("project:x", visibility="public")


def test_page_count_excludes_tombstoned_only(store):
    ps = [h.write(store, "project:cnt", f"p{i}") for i in range(4)]
    assert h.scope_map(store)["project:cnt"]["page_count"] == 4
    store.revise_page(ps[0]["page_id"], ps[0]["revision_id"], content="p0 v2")
    assert h.scope_map(store)["project:cnt"]["page_count"] == 4, "revisions are not pages"
    store.tombstone_page(ps[1]["page_id"], "x")
    assert h.scope_map(store)["project:cnt"]["page_count"] == 3
    store.archive_page(ps[2]["page_id"], "x")
    assert h.scope_map(store)["project:cnt"]["page_count"] == 3
    store.untombstone_page(ps[1]["page_id"], "x")
    assert h.scope_map(store)["project:cnt"]["page_count"] == 4


def test_last_activity_moves(store, clock):
    h.write(store, "project:act", "x")
    first = h.scope_map(store)["project:act"]["last_activity"]
    assert first == clock.now()
    later = clock.advance()
    h.write(store, "project:act", "y")
    assert h.scope_map(store)["project:act"]["last_activity"] == later > first


def test_list_scopes_query_and_paging(store):
    for i in range(25):
        store.create_scope(f"project:s{i:02d}")
    store.create_scope("user:someone")
    names = [s["namespace"] for s in h.all_scopes(store, limit=10)]
    assert len(names) == len(set(names))
    assert set(names) >= {f"project:s{i:02d}" for i in range(25)} | {"user:someone"}
    q = {s["namespace"] for s in h.all_scopes(store, query="someone")}
    assert q == {"user:someone"}
    res = store.list_scopes(limit=10_000)
    assert len(res["scopes"]) <= 1000


def test_counts_alike_whether_listed_at_once_or_page_by_page(store, clock):
    # All scopes at once are counted in one pass over the pages; a page of them (or a query) scope by scope.
    ps = [h.write(store, f"project:c{i % 3}", f"p{i}") for i in range(9)]
    clock.advance()
    store.tombstone_page(ps[0]["page_id"], "x")
    store.archive_page(ps[1]["page_id"], "x")
    store.create_scope("project:empty")
    whole = store.list_scopes(limit=100)
    assert whole["next_cursor"] is None
    paged = h.all_scopes(store, limit=2)
    assert whole["scopes"] == paged
    counts = {s["namespace"]: s["page_count"] for s in paged}
    assert counts == {"project:c0": 2, "project:c1": 3, "project:c2": 3, "project:empty": 0}
    queried = store.list_scopes(query="c0")["scopes"]
    assert queried == [s for s in paged if s["namespace"] == "project:c0"]


def test_list_scopes_model_permissions(store, as_model):
    store.create_scope("project:m")
    m = as_model({"project:m": {"list_scopes", "search", "read"}, "project:*": {"search"}})
    scopes = {s["namespace"]: s for s in h.all_scopes(m)}
    assert "project:m" in scopes
    assert set(scopes["project:m"]["permissions"]) == {"list_scopes", "search", "read"}


def test_duplicate_scope_creation(store):
    store.create_scope("project:dup", display_name="One")
    with raises_code("conflict"):
        store.create_scope("project:dup", display_name="One")
    assert [s["namespace"] for s in h.all_scopes(store)].count("project:dup") == 1
