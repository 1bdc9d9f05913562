"""pcp-core.md §4 revise_page: new revision, head moves, carry-over, stale -> conflict."""

from __future__ import annotations

import pcpstore_helpers as h
from pcpstore_helpers import raises_code


def test_revise_moves_head_and_links_previous(store):
    p = h.write(store, "project:r", "version one", facets={"title": "One"})
    r = store.revise_page(p["page_id"], p["revision_id"], content="version two")
    assert r["created"] is True and r["page_id"] == p["page_id"]
    assert h.is_id(r["revision_id"], "rev") and r["revision_id"] != p["revision_id"]
    res = h.read1(store, p["page_id"])
    assert res["revision"]["revision_id"] == r["revision_id"]
    assert res["current_revision_id"] == r["revision_id"]
    rev = res["revision"]
    assert rev["previous_revision_id"] == p["revision_id"]
    assert rev["payload"]["content"] == "version two"
    assert rev["content_digest"] == h.digest("version two")
    assert rev["lifecycle_status"] == "active"
    # facets not given are carried over
    assert rev["facets"].get("title") == "One"


def test_revise_provenance_lists_previous_revision(store):
    p = h.write(store, "project:r", "v1")
    r = store.revise_page(p["page_id"], p["revision_id"], content="v2")
    rev = h.env(store, r["revision_id"])
    ev = [e for e in rev["provenance"] if e["operation"] == "revise"]
    assert ev, rev["provenance"]
    assert p["revision_id"] in ev[0]["input_revision_ids"]
    assert ev[0]["actor_type"] == "user"


def test_old_revision_stays_readable_as_superseded(store):
    p = h.write(store, "project:r", "v1")
    r = store.revise_page(p["page_id"], p["revision_id"], content="v2")
    old = h.read1(store, p["revision_id"])
    assert old["revision"]["revision_id"] == p["revision_id"]
    assert old["revision"]["payload"]["content"] == "v1"
    assert old["revision"]["lifecycle_status"] == "superseded"
    assert old["current_revision_id"] == r["revision_id"]


def test_facets_only_revise_carries_content_over(store):
    refs = [{"uri": "file:///src.md", "locator": {"line": 3}}]
    p = h.write(store, "project:r", "the content stays", media_type="text/plain", source_refs=refs,
                facets={"title": "Before"})
    r = store.revise_page(p["page_id"], p["revision_id"], facets={"title": "After", "keywords": ["k"]})
    rev = h.env(store, r["revision_id"])
    assert rev["revision_id"] != p["revision_id"]
    assert rev["payload"] == {"media_type": "text/plain", "content": "the content stays"}
    assert rev["content_digest"] == h.digest("the content stays")
    assert rev["source_refs"][0]["uri"] == "file:///src.md"
    assert rev["facets"]["title"] == "After"
    assert rev["facets"]["keywords"] == ["k"]


def test_content_only_revise_keeps_source_refs_and_media_type(store):
    refs = [{"uri": "file:///src.md"}]
    p = h.write(store, "project:r", "a", media_type="text/plain", source_refs=refs)
    r = store.revise_page(p["page_id"], p["revision_id"], content="b")
    rev = h.env(store, r["revision_id"])
    assert rev["payload"] == {"media_type": "text/plain", "content": "b"}
    assert rev["source_refs"][0]["uri"] == "file:///src.md"
    assert rev["namespace"] == "project:r"


def test_stale_expected_revision_is_conflict_and_writes_nothing(store, db_path):
    p = h.write(store, "project:r", "v1")
    r = store.revise_page(p["page_id"], p["revision_id"], content="v2")
    before = h.snapshot(db_path)
    with raises_code("conflict") as box:
        store.revise_page(p["page_id"], p["revision_id"], content="v3 from a stale view")
    msg = box.value.message
    assert p["revision_id"] in msg, f"message does not name the expected id: {msg}"
    assert r["revision_id"] in msg, f"message does not name the current id: {msg}"
    assert h.diff_snapshots(before, h.snapshot(db_path)) == []
    assert h.content_of(store, p["page_id"]) == "v2"


def test_expected_revision_of_another_page_is_rejected(store, db_path):
    p = h.write(store, "project:r", "p")
    q = h.write(store, "project:r", "q")
    before = h.counts(db_path)
    with raises_code("conflict"):
        store.revise_page(p["page_id"], q["revision_id"], content="x")
    assert h.counts(db_path) == before


def test_expected_revision_is_required(store, db_path):
    p = h.write(store, "project:r", "p")
    before = h.counts(db_path)
    with raises_code("invalid"):
        store.revise_page(p["page_id"], None, content="x")
    assert h.counts(db_path) == before


def test_revise_missing_page_is_not_found(store):
    p = h.write(store, "project:r", "p")
    with raises_code("not_found"):
        store.revise_page("pg_01ARZ3NDEKTSV4RRFFQ69G5FAV", p["revision_id"], content="x")


def test_history_newest_first(store):
    p = h.write(store, "project:r", "v1")
    revs = [p["revision_id"]]
    for i in range(2, 5):
        r = store.revise_page(p["page_id"], revs[-1], content=f"v{i}")
        revs.append(r["revision_id"])
    hist = h.history(store, p["page_id"])
    assert [e["revision_id"] for e in hist] == list(reversed(revs))
    for e in hist:
        assert h.HISTORY_KEYS <= set(e)
        assert h.is_ts(e["created_at"])
    assert hist[0]["lifecycle_status"] == "active"
    assert all(e["lifecycle_status"] == "superseded" for e in hist[1:])
    assert hist[0]["content_digest"] == h.digest("v4")
    assert hist[-1]["content_digest"] == h.digest("v1")


def test_model_revise_needs_revise_grant(store, as_model, db_path):
    p = h.write(store, "project:a", "v1")
    m = as_model({"project:a": {"search", "read", "write"}})
    before = h.counts(db_path)
    with raises_code("forbidden"):
        m.revise_page(p["page_id"], p["revision_id"], content="v2")
    assert h.counts(db_path) == before
    m2 = as_model({"project:a": {"search", "read", "revise"}})
    r = m2.revise_page(p["page_id"], p["revision_id"], content="v2")
    assert h.content_of(store, p["page_id"]) == "v2"
    assert r["created"] is True
