"""pcp-core.md §5 lifecycle and §4 archive / suppress / tombstone: each does only its job."""

from __future__ import annotations

import pytest

import pcpstore_helpers as h
from pcpstore_helpers import raises_code


@pytest.fixture
def pages(store):
    out = {k: h.write(store, "project:life", f"lifeword {k} page") for k in ("a", "b", "c", "d")}
    return out


def _ids(st, q="lifeword", **kw):
    return h.hit_ids(st, q, **kw)


def _all_modes_ids(st, **kw):
    return {
        "text": _ids(st, "lifeword", mode="text", **kw),
        "exact": _ids(st, "lifeword", mode="exact", **kw),
        "temporal": _ids(st, "", mode="temporal", **kw),
        "auto": _ids(st, "lifeword", **kw),
    }


def test_default_search_returns_active_only(store, pages):
    a, b, c, d = (pages[k]["page_id"] for k in "abcd")
    store.archive_page(a, "old")
    store.tombstone_page(b, "withdrawn")
    store.link_pages(d, "supersedes", c)
    for mode, ids in _all_modes_ids(store).items():
        assert ids == {d}, f"{mode}: {ids}"
    for x in h.all_hits(store, "lifeword"):
        assert x["lifecycle_status"] == "active"


def test_lifecycle_filter_selects_other_statuses(store, pages):
    a, b, c, d = (pages[k]["page_id"] for k in "abcd")
    store.archive_page(a, "old")
    store.tombstone_page(b, "withdrawn")
    store.link_pages(d, "supersedes", c)
    by = lambda *s: {x["page_id"]: x["lifecycle_status"]  # noqa: E731
                     for x in h.all_hits(store, "lifeword", filters={"lifecycle_status": list(s)})}
    assert by("archived") == {a: "archived"}
    assert by("tombstoned") == {b: "tombstoned"}
    assert by("superseded") == {c: "superseded"}
    assert by("active", "archived") == {a: "archived", d: "active"}
    assert set(by("active", "archived", "tombstoned", "superseded")) == {a, b, c, d}


def test_superseded_page_is_readable_and_reports_status(store, pages):
    c, d = pages["c"]["page_id"], pages["d"]["page_id"]
    store.link_pages(d, "supersedes", c)
    rev = h.env(store, c)
    assert rev["lifecycle_status"] == "superseded"
    assert rev["payload"]["content"] == "lifeword c page"
    assert c not in _ids(store)


# --------------------------------------------------------------------------- archive


def test_archive_only_archives(store, pages, db_path, as_model):
    a = pages["a"]
    n_rev = h.revision_count(db_path)
    hist = h.history(store, a["page_id"])
    res = store.archive_page(a["page_id"], "no longer relevant")
    assert res["page_id"] == a["page_id"] and res["lifecycle_status"] == "archived"
    assert h.is_id(res["event_id"], "evt")
    # out of ordinary search, in every mode
    for mode, ids in _all_modes_ids(store).items():
        assert a["page_id"] not in ids, mode
    # readable by id, by the owner and by a reader (archive is not tombstone)
    rev = h.env(store, a["page_id"])
    assert rev["lifecycle_status"] == "archived"
    assert rev["revision_id"] == a["revision_id"]
    assert rev["payload"]["content"] == "lifeword a page"
    reader = as_model({"project:life": h.READER})
    assert h.env(reader, a["page_id"])["lifecycle_status"] == "archived"
    # no new revision; history unchanged
    assert h.revision_count(db_path) == n_rev
    assert [e["revision_id"] for e in h.history(store, a["page_id"])] == [e["revision_id"] for e in hist]
    # still counted (not tombstoned), still in its scope
    assert h.scope_map(store)["project:life"]["page_count"] == 4
    # restore brings it back
    res = store.restore_page(a["page_id"], "needed again")
    assert res["lifecycle_status"] == "active"
    assert a["page_id"] in _ids(store)
    assert h.revision_count(db_path) == n_rev


# --------------------------------------------------------------------------- suppress


def test_suppress_only_hides_in_that_context(store, pages, db_path):
    a = pages["a"]["page_id"]
    n_rev = h.revision_count(db_path)
    res = store.suppress_pages([a], "task:42", reason="noise for this task")
    assert res["context_id"] == "task:42" and res["suppressed"] == [a]
    for mode, ids in _all_modes_ids(store, context_id="task:42").items():
        assert a not in ids, f"{mode}: suppressed page visible in its context"
    for mode, ids in _all_modes_ids(store).items():
        assert a in ids, f"{mode}: suppression acted globally"
    for mode, ids in _all_modes_ids(store, context_id="task:43").items():
        assert a in ids, f"{mode}: suppression leaked into another context"
    # no revision, status unchanged, readable
    assert h.revision_count(db_path) == n_rev
    assert h.env(store, a)["lifecycle_status"] == "active"
    assert h.env(store, a)["revision_id"] == pages["a"]["revision_id"]
    assert h.scope_map(store)["project:life"]["page_count"] == 4
    # unsuppress
    res = store.unsuppress_pages([a], "task:42")
    assert res["unsuppressed"] == [a]
    assert a in _ids(store, context_id="task:42")


def test_expired_suppression_does_not_hide(store, pages):
    a = pages["a"]["page_id"]
    store.suppress_pages([a], "task:old", expires_at="2001-01-01T00:00:00.000Z")
    assert a in _ids(store, context_id="task:old")
    b = pages["b"]["page_id"]
    store.suppress_pages([b], "task:old", expires_at="2999-01-01T00:00:00.000Z")
    assert b not in _ids(store, context_id="task:old")


def test_suppress_bad_expiry_is_invalid(store, pages, db_path):
    before = h.counts(db_path)
    with raises_code("invalid"):
        store.suppress_pages([pages["a"]["page_id"]], "task:x", expires_at="soon")
    assert h.counts(db_path) == before


# --------------------------------------------------------------------------- tombstone


def test_tombstone_only_withdraws(store, pages, db_path):
    a, b = pages["a"], pages["b"]
    r2 = store.revise_page(a["page_id"], a["revision_id"], content="lifeword a page v2")
    rel = store.link_pages(a["page_id"], "related_to", b["page_id"])
    n_rev = h.revision_count(db_path)
    res = store.tombstone_page(a["page_id"], "withdrawn by the user")
    assert res["lifecycle_status"] == "tombstoned" and h.is_id(res["event_id"], "evt")
    # leaves every ordinary search and list
    for mode, ids in _all_modes_ids(store).items():
        assert a["page_id"] not in ids, mode
    assert a["page_id"] not in h.hit_ids(store, b["page_id"], mode="graph")
    assert h.scope_map(store)["project:life"]["page_count"] == 3
    # history, provenance and relations stay readable by the owner
    full = h.read1(store, a["page_id"], list(h.PROJECTIONS))
    assert full["revision"]["lifecycle_status"] == "tombstoned"
    assert full["revision"]["payload"]["content"] == "lifeword a page v2"
    assert [e["revision_id"] for e in full["history"]] == [r2["revision_id"], a["revision_id"]]
    assert [x["relation_id"] for x in full["relations"]["outgoing"]] == [rel["relation_id"]]
    assert full["revision"]["provenance"]
    assert h.content_of(store, a["revision_id"]) == "lifeword a page"
    # no revision written, nothing erased
    assert h.revision_count(db_path) == n_rev
    # untombstone restores
    res = store.untombstone_page(a["page_id"], "changed my mind")
    assert res["lifecycle_status"] == "active"
    assert a["page_id"] in _ids(store)
    assert h.scope_map(store)["project:life"]["page_count"] == 4
    assert h.env(store, a["page_id"])["revision_id"] == r2["revision_id"]


def test_archive_suppress_tombstone_delete_are_distinct(store, pages, db_path):
    """One page each; afterwards every page shows only its own operation's effect."""
    a, b, c, d = (pages[k]["page_id"] for k in "abcd")
    store.archive_page(a, "archive")
    store.suppress_pages([b], "task:ctx")
    store.tombstone_page(c, "tombstone")
    store.delete_page(d, "delete")
    status = {p: h.env(store, p)["lifecycle_status"] for p in (a, b, c)}
    assert status == {a: "archived", b: "active", c: "tombstoned"}
    with raises_code("not_found"):
        store.read_pages([d])
    default = _ids(store)
    assert default == {b}
    assert _ids(store, context_id="task:ctx") == set()
    assert h.scope_map(store)["project:life"]["page_count"] == 2  # a (archived) and b
    # tombstone and archive keep their revisions; delete erased d's
    assert h.content_of(store, c) == "lifeword c page"
    assert h.content_of(store, a) == "lifeword a page"
    assert all(pages["d"]["revision_id"] not in repr(r) for r in h.revision_rows(db_path))


def test_lifecycle_changes_are_audited_events_not_revisions(store, pages, db_path):
    a = pages["a"]["page_id"]
    n_rev = h.revision_count(db_path)
    n_audit = h.audit_count(store)
    ev_ids = []
    for call in (store.archive_page, store.restore_page, store.tombstone_page, store.untombstone_page):
        ev_ids.append(call(a, "because")["event_id"])
    assert len(set(ev_ids)) == 4
    assert h.revision_count(db_path) == n_rev
    assert h.audit_count(store) >= n_audit + 4


def test_lifecycle_calls_on_missing_page(store):
    for call in (store.archive_page, store.restore_page, store.tombstone_page, store.untombstone_page):
        with raises_code("not_found"):
            call("pg_01ARZ3NDEKTSV4RRFFQ69G5FAV", "x")


def test_suppression_contexts_lists_the_callers_own_contexts_newest_first_with_their_page_counts(store, pages):
    """Issue 35, report 12: the app asks for a context id and must offer the ones in use; a model client's are its
    own (as it named them), never the owner's, and the owner's list holds no client's qualified context."""
    a, b, c = (pages[k]["page_id"] for k in "abc")
    store.suppress_pages([a, b], "chat:thesis-help")
    store.suppress_pages([c], "task:old", expires_at="2001-01-01T00:00:00.000Z")  # expired: hides nothing
    store.suppress_pages([a], "task:42")
    client = h.model(store, {"project:life": ["read", "search", "suppress"]}, client_id="claude")
    client.suppress_pages([c], "mcp:mine")
    listed = store.suppression_contexts()["contexts"]
    assert sorted((x["context_id"], x["pages"]) for x in listed) == [("chat:thesis-help", 2), ("task:42", 1)]
    assert [x["last_at"] for x in listed] == sorted((x["last_at"] for x in listed), reverse=True)  # newest first
    assert [(x["context_id"], x["pages"]) for x in client.suppression_contexts()["contexts"]] == [("mcp:mine", 1)]
    assert len(store.suppression_contexts(limit=1)["contexts"]) == 1
