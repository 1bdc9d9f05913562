"""pcp-core.md §4 read_pages: projections, page vs revision ids, budget, per-id errors."""

from __future__ import annotations

import pytest

import pcpstore_helpers as h
from pcpstore_helpers import raises_code

MISSING = "pg_01ARZ3NDEKTSV4RRFFQ69G5FAV"


@pytest.fixture
def page(store):
    refs = [{"uri": "file:///notes/a.md", "locator": {"lines": [10, 20]}, "media_type": "text/markdown"},
            {"uri": "https://example.org/x", "locator": {"anchor": "p3"}}]
    facets = {"title": "Title A", "summary": "Summary A", "keywords": ["k1", "k2"],
              "anchors": ["#intro"], "symbols": ["f(x)"], "custom": {"n": 1}}
    p = h.write(store, "project:read", "content of A, version 1", source_refs=refs, facets=facets)
    other = h.write(store, "project:read", "other page")
    rel = store.link_pages(p["page_id"], "supports", other["page_id"])
    rel_in = store.link_pages(other["page_id"], "related_to", p["page_id"])
    p2 = store.revise_page(p["page_id"], p["revision_id"], content="content of A, version 2")
    return {"p": p, "p2": p2, "other": other, "refs": refs, "facets": facets, "rel": rel, "rel_in": rel_in}


def test_default_projections_are_manifest_and_payload(store, page):
    res = store.read_pages([page["p"]["page_id"]])["results"][0]
    assert res["requested_id"] == page["p"]["page_id"]
    assert res["revision"]["payload"]["content"] == "content of A, version 2"
    assert set(res["revision"]) == h.ENVELOPE_KEYS
    assert res["truncated"] is False


def test_manifest_projection(store, page):
    res = h.read1(store, page["p"]["page_id"], ["manifest"])
    rev = res["revision"]
    assert set(rev) == h.ENVELOPE_KEYS
    assert "content" not in (rev["payload"] or {})
    assert rev["payload"]["media_type"] == "text/markdown"
    assert rev["content_digest"] == h.digest("content of A, version 2")
    assert rev["facets"]["title"] == "Title A"
    assert [r["uri"] for r in rev["source_refs"]] == [r["uri"] for r in page["refs"]]
    assert rev["provenance"]
    assert "content of A" not in h.dumps(res)


def test_payload_projection(store, page):
    rev = h.read1(store, page["p"]["page_id"], ["payload"])["revision"]
    assert rev["payload"] == {"media_type": "text/markdown", "content": "content of A, version 2"}


def test_source_spans_projection(store, page):
    res = h.read1(store, page["p"]["page_id"], ["source_spans"])
    spans = res["source_spans"]
    assert [(s["uri"], s["locator"]) for s in spans] == [(r["uri"], r["locator"]) for r in page["refs"]]


def test_facets_projection(store, page):
    res = h.read1(store, page["p"]["page_id"], ["facets"])
    assert res["facets"] == page["facets"]


def test_relations_projection(store, page):
    res = h.read1(store, page["p"]["page_id"], ["relations"])
    rels = res["relations"]
    assert set(rels) >= {"outgoing", "incoming"}
    assert [r["relation_id"] for r in rels["outgoing"]] == [page["rel"]["relation_id"]]
    assert [r["relation_id"] for r in rels["incoming"]] == [page["rel_in"]["relation_id"]]
    for r in rels["outgoing"] + rels["incoming"]:
        assert set(r) >= h.RELATION_KEYS
    out = rels["outgoing"][0]
    assert out["relation_type"] == "supports"
    assert out["from_page_id"] == page["p"]["page_id"]
    assert out["from_revision_id"] == page["p"]["revision_id"]
    assert out["to_page_id"] == page["other"]["page_id"]


def test_history_projection(store, page):
    res = h.read1(store, page["p"]["page_id"], ["history"])
    hist = res["history"]
    assert [e["revision_id"] for e in hist] == [page["p2"]["revision_id"], page["p"]["revision_id"]]
    assert hist[0]["created_at"] >= hist[1]["created_at"]
    for e in hist:
        assert set(e) >= h.HISTORY_KEYS


def test_history_is_bounded(store):
    p = h.write(store, "project:read", "v0")
    rev = p["revision_id"]
    for i in range(1, 106):
        rev = store.revise_page(p["page_id"], rev, content=f"v{i}")["revision_id"]
    hist = h.history(store, p["page_id"])
    assert len(hist) == 100
    assert hist[0]["revision_id"] == rev


def test_page_id_reads_latest_revision(store, page):
    res = h.read1(store, page["p"]["page_id"])
    assert res["revision"]["revision_id"] == page["p2"]["revision_id"]
    assert res["current_revision_id"] == page["p2"]["revision_id"]


def test_revision_id_reads_exact_snapshot(store, page):
    res = h.read1(store, page["p"]["revision_id"], ["manifest", "payload", "history", "relations"])
    assert res["requested_id"] == page["p"]["revision_id"]
    assert res["revision"]["revision_id"] == page["p"]["revision_id"]
    assert res["revision"]["payload"]["content"] == "content of A, version 1"
    assert res["current_revision_id"] == page["p2"]["revision_id"]
    assert res["revision"]["lifecycle_status"] == "superseded"


def test_all_projections_together(store, page):
    res = h.read1(store, page["p"]["page_id"], list(h.PROJECTIONS))
    assert {"revision", "relations", "history", "source_spans", "facets"} <= set(res)


def test_unknown_projection_is_unsupported(store, page):
    with raises_code("unsupported"):
        store.read_pages([page["p"]["page_id"]], projections=["embedding"])
    with raises_code("unsupported"):
        store.read_pages([page["p"]["page_id"]], projections=["manifest", "everything"])


def test_max_chars_budget_is_shared(store):
    a = h.write(store, "project:read", "a" * 3000)
    b = h.write(store, "project:read", "b" * 3000)
    res = store.read_pages([a["page_id"], b["page_id"]], projections=["payload"], max_chars=4000)["results"]
    contents = [r["revision"]["payload"]["content"] for r in res]
    assert sum(len(c) for c in contents) <= 4000
    assert contents[0] == "a" * 3000 and res[0]["truncated"] is False
    assert len(contents[1]) <= 1000
    assert contents[1] == "b" * len(contents[1]), "truncated content must be a prefix"
    assert res[1]["truncated"] is True


def test_default_budget_is_64000(store):
    p = h.write(store, "project:read", "x" * 70_000)
    res = h.read1(store, p["page_id"], ["payload"])
    assert res["truncated"] is True
    c = res["revision"]["payload"]["content"]
    assert 0 < len(c) <= 64_000
    # the digest still describes the full stored content
    assert res["revision"]["content_digest"] == h.digest("x" * 70_000)
    full = h.read1(store, p["page_id"], ["payload"], max_chars=100_000)
    assert len(full["revision"]["payload"]["content"]) in (64_000, 70_000)


def test_budget_is_clamped_not_refused(store):
    p = h.write(store, "project:read", "x" * 70_000)
    res = h.read1(store, p["page_id"], ["payload"], max_chars=10_000_000)
    assert len(res["revision"]["payload"]["content"]) <= 70_000


def test_unicode_budget_counts_characters(store):
    p = h.write(store, "project:read", "证" * 5000)
    res = h.read1(store, p["page_id"], ["payload"], max_chars=1000)
    c = res["revision"]["payload"]["content"]
    assert c == "证" * len(c) and 0 < len(c) <= 1000
    assert res["truncated"] is True


def test_more_than_20_ids(store):
    ids = [h.write(store, "project:read", f"p{i}")["page_id"] for i in range(21)]
    with raises_code("limit") as box:
        store.read_pages(ids, projections=["manifest"])
    assert "20" in box.value.message
    assert len(store.read_pages(ids[:20], projections=["manifest"])["results"]) == 20


def test_per_id_errors(store, page):
    res = store.read_pages([page["p"]["page_id"], MISSING, "garbage-id"], projections=["manifest"])["results"]
    assert len(res) == 3
    assert "error" not in res[0]
    assert res[1]["requested_id"] == MISSING and res[1]["error"]["code"] == "not_found"
    assert res[2]["requested_id"] == "garbage-id" and res[2]["error"]["code"] == "not_found"
    for r in res[1:]:
        assert isinstance(r["error"]["message"], str) and r["error"]["message"]


def test_not_found_only_when_nothing_readable(store):
    with raises_code("not_found"):
        store.read_pages([MISSING])
    with raises_code("not_found"):
        store.read_pages([MISSING, "rev_01ARZ3NDEKTSV4RRFFQ69G5FAV"])


def test_reader_model_reads(store, page, as_model):
    m = as_model({"project:read": {"read"}})
    res = h.read1(m, page["p"]["page_id"], list(h.PROJECTIONS))
    assert res["revision"]["payload"]["content"] == "content of A, version 2"
    none = as_model({"project:read": {"search"}})
    with raises_code("forbidden"):
        none.read_pages([page["p"]["page_id"]])


def test_lifecycle_projection_gives_reasons_and_only_own_suppressions(store):
    from store import AccessSession

    a = store.write_page("project:life", content="a page with a history")
    store.archive_page(a["page_id"], "done with it")
    store.restore_page(a["page_id"], "needed again")
    store.tombstone_page(a["page_id"], "it was wrong")
    store.suppress_pages([a["page_id"]], "chat:one", reason="not for this chat")
    model = store.with_session(AccessSession.model_client("claude", {"*": {"read", "search", "suppress", "audit"}}))
    model.suppress_pages([a["page_id"]], "chat:two", reason="the model's own")
    life = store.read_pages([a["page_id"]], projections=["lifecycle"])["results"][0]["lifecycle"]
    assert [(e["to_status"], e["reason"]) for e in life["events"]] == [
        ("tombstoned", "it was wrong"), ("active", "needed again"), ("archived", "done with it")]
    contexts = {s["context_id"]: s["reason"] for s in life["suppressions"]}
    assert contexts["chat:one"] == "not for this chat" and len(contexts) == 2  # the owner sees the model's too
    theirs = model.read_pages([a["page_id"]], projections=["lifecycle"])["results"][0]["lifecycle"]
    assert [(s["context_id"], s["reason"]) for s in theirs["suppressions"]] == [("chat:two", "the model's own")]
