"""pcp-core.md §2 audit log: append-only, metadata only, denials/failures/mutations/model calls."""

from __future__ import annotations

import pytest

import pcpstore_helpers as h
from pcpstore_helpers import raises_code


def test_audit_event_shape(store):
    h.write(store, "project:au", "x")
    ev = store.audit_log()["events"][0]
    assert set(ev) >= h.AUDIT_KEYS
    assert h.is_id(ev["event_id"], "evt")
    assert h.is_ts(ev["time"])
    assert ev["principal_type"] == "user"
    assert ev["decision"] == "allowed"
    assert "write" in ev["operation"]
    assert "project:au" in h.dumps(ev["scopes"])
    assert isinstance(ev["duration_ms"], (int, float)) and ev["duration_ms"] >= 0
    assert ev["error_code"] is None


MUTATIONS = [
    ("write", lambda st, w: st.write_page("project:au", content="new")),
    ("revise", lambda st, w: st.revise_page(w["a"]["page_id"], w["a"]["revision_id"], content="a2")),
    ("link", lambda st, w: st.link_pages(w["a"]["page_id"], "related_to", w["b"]["page_id"])),
    ("unlink", lambda st, w: st.unlink(w["rel"]["relation_id"], "oops")),
    ("ingest", lambda st, w: st.ingest_event({"content": "e"}, "project:au", "k1")),
    ("archive", lambda st, w: st.archive_page(w["a"]["page_id"], "r")),
    ("restore", lambda st, w: st.restore_page(w["a"]["page_id"], "r")),
    ("tombstone", lambda st, w: st.tombstone_page(w["a"]["page_id"], "r")),
    ("untombstone", lambda st, w: st.untombstone_page(w["a"]["page_id"], "r")),
    ("suppress", lambda st, w: st.suppress_pages([w["a"]["page_id"]], "task:1")),
    ("unsuppress", lambda st, w: st.unsuppress_pages([w["a"]["page_id"]], "task:1")),
    ("delete", lambda st, w: st.delete_page(w["b"]["page_id"], "r")),
    ("scope", lambda st, w: st.create_scope("project:au2")),
    ("delete", lambda st, w: st.delete_scope("project:au3", "r")),
    ("bulk", lambda st, w: st.write_pages_bulk([{"content": "b1"}, {"content": "b2"}], "project:au")),
]


@pytest.fixture
def world(store):
    a = h.write(store, "project:au", "page a")
    b = h.write(store, "project:au", "page b")
    h.write(store, "project:au3", "page c")
    rel = store.link_pages(b["page_id"], "supports", a["page_id"])
    return {"a": a, "b": b, "rel": rel}


def test_every_owner_mutation_is_audited(store, world):
    for word, call in MUTATIONS:
        n = h.audit_count(store)
        call(store, world)
        events = h.all_audit(store)
        assert len(events) >= n + 1, f"{word}: no audit event"
        new = events[: len(events) - n]
        assert any(e["decision"] == "allowed" and e["principal_type"] == "user" for e in new), word
        assert any(word in e["operation"] for e in new), f"{word}: operations {[e['operation'] for e in new]}"


def test_owner_reads_are_not_audited(store, world):
    n = h.audit_count(store)
    store.search_pages("page")
    store.search_pages("", mode="temporal")
    store.read_pages([world["a"]["page_id"]])
    store.list_scopes()
    store.describe_capabilities()
    assert h.audit_count(store) == n


def test_every_model_call_is_audited(store, world, as_model):
    m = as_model({"project:au": h.READER | {"write"}}, client_id="model-x")
    calls = [
        lambda: m.describe_capabilities(),
        lambda: m.list_scopes(),
        lambda: m.search_pages("page"),
        lambda: m.read_pages([world["a"]["page_id"]]),
        lambda: m.write_page("project:au", content="by model"),
    ]
    for call in calls:
        n = h.audit_count(store)
        call()
        events = h.all_audit(store)
        assert len(events) == n + 1
        assert events[0]["principal_type"] == "model_client"
        assert events[0]["principal_id"] == "model-x"
        assert events[0]["decision"] == "allowed"


def test_denied_call_is_audited_and_writes_nothing_else(store, db_path, world, as_model):
    m = as_model({"project:au": h.READER}, client_id="model-y")
    before = h.snapshot(db_path)
    n = h.audit_count(store)
    with raises_code("forbidden"):
        m.write_page("project:au", content="not allowed")
    with raises_code("forbidden"):
        m.search_pages("page", scopes=["project:secret"])
    assert h.diff_snapshots(before, h.snapshot(db_path)) == []
    events = h.all_audit(store)
    assert len(events) == n + 2
    assert [e["decision"] for e in events[:2]] == ["denied", "denied"]
    assert all(e["principal_id"] == "model-y" for e in events[:2])
    assert events[0]["error_code"] in ("forbidden", None)


@pytest.mark.parametrize("code", ["conflict", "not_found", "invalid", "cycle"])
def test_failed_call_is_audited_and_writes_nothing_else(store, db_path, world, code):
    a, b = world["a"], world["b"]
    store.revise_page(a["page_id"], a["revision_id"], content="moved on")
    store.link_pages(a["page_id"], "derived_from", b["page_id"])
    before = h.snapshot(db_path)
    n = h.audit_count(store)
    with raises_code(code):
        if code == "conflict":
            store.revise_page(a["page_id"], a["revision_id"], content="stale")
        elif code == "not_found":
            store.revise_page("pg_01ARZ3NDEKTSV4RRFFQ69G5FAV", a["revision_id"], content="x")
        elif code == "invalid":
            store.write_page("project:au", content="x", observed_at="not a time")
        else:
            store.link_pages(b["page_id"], "derived_from", a["page_id"])
    assert h.diff_snapshots(before, h.snapshot(db_path)) == []
    events = h.all_audit(store)
    assert len(events) == n + 1
    assert events[0]["decision"] == "failed"
    assert events[0]["error_code"] == code


def test_owner_failed_read_is_audited(store, world):
    n = h.audit_count(store)
    with raises_code("not_found"):
        store.read_pages(["pg_01ARZ3NDEKTSV4RRFFQ69G5FAV"])
    events = h.all_audit(store)
    assert len(events) == n + 1 and events[0]["decision"] == "failed"


def test_audit_never_holds_query_text_or_content(store, db_path, world, as_model):
    query = "Xq7marmotQUERYsentinelZk"
    content = "Kp9contentSENTINELwombatTy secret body"
    m = as_model({"project:au": h.READER | {"write"}})
    m.search_pages(query)
    m.search_pages(query, mode="exact")
    m.search_pages(query, mode="temporal")
    store.search_pages(query)
    with raises_code("forbidden"):
        m.search_pages(query, scopes=["project:nope"])
    m.write_page("project:au", content=content, facets={"title": "TitleSENTINELpq"})
    events = h.all_audit(store)
    text = h.dumps(events)
    for s in (query, "SENTINEL", "secret body"):
        assert s not in text
    raw_audit = h.audit_rows_text(db_path)
    assert raw_audit, "no audit table found"
    for s in (query, "SENTINEL", "secret body"):
        assert s not in raw_audit
    for f in h.files_beside(db_path):
        data = f.read_bytes()
        assert query.encode() not in data, f"query text stored in {f.name}"


def test_audit_newest_first_and_paged(store, world):
    for i in range(12):
        store.write_page("project:au", content=f"page {i}")
    events = h.all_audit(store)
    times = [e["time"] for e in events]
    assert times == sorted(times, reverse=True)
    ids = [e["event_id"] for e in events]
    assert len(ids) == len(set(ids))
    pages = []
    cursor = None
    while True:
        res = store.audit_log(limit=5, cursor=cursor)
        assert len(res["events"]) <= 5
        pages.append([e["event_id"] for e in res["events"]])
        cursor = res.get("next_cursor")
        if not cursor:
            break
        assert len(pages) < 100
    flat = [i for p in pages for i in p]
    assert flat == ids
    # the first page starts with the newest event: the last write
    store.write_page("project:au", content="the newest")
    first = store.audit_log(limit=1)["events"][0]
    assert "write" in first["operation"]
    assert first["event_id"] not in ids


def test_audit_filters(store, world, as_model):
    m = as_model({"project:au": h.READER}, client_id="filter-model")
    m.search_pages("page")
    with raises_code("forbidden"):
        m.write_page("project:au", content="x")
    denied = h.all_audit(store, decision="denied")
    assert denied and all(e["decision"] == "denied" for e in denied)
    by_p = h.all_audit(store, principal="filter-model")
    assert len(by_p) == 2 and all(e["principal_id"] == "filter-model" for e in by_p)
    all_events = h.all_audit(store)
    op = all_events[-1]["operation"]
    by_op = h.all_audit(store, operation=op)
    assert by_op and all(e["operation"] == op for e in by_op)


def test_audit_limit_is_clamped(store, world):
    for i in range(5):
        store.write_page("project:au", content=f"p{i}")
    res = store.audit_log(limit=100_000)
    assert 0 < len(res["events"]) <= 1000
