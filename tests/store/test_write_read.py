"""pcp-core.md §1 (identity and envelope) and §4 write_page / ingest_event."""

from __future__ import annotations

import time

import pytest


import pcpstore_helpers as h
from pcpstore_helpers import raises_code


def test_store_open_creates_file_and_owner(tmp_path):
    from store import Store

    path = tmp_path / "deep" / "er" / "ctx.db"
    st = Store.open(path)
    try:
        assert path.exists()
        assert h.is_id(st.owner_id, "usr")
        assert st.path == path or str(st.path) == str(path)
    finally:
        st.close()
    # reopening keeps the same owner
    st2 = Store.open(path)
    try:
        assert st2.owner_id == st.owner_id
    finally:
        st2.close()


def test_envelope_has_exactly_the_contract_keys(store):
    content = "# Hello\n\nFirst page body, with ünïcödé and 中文."
    res = h.write(store, "project:env", content, facets={"title": "Hello", "keywords": ["a", "b"]})
    assert set(res) >= {"page_id", "revision_id", "created"}
    assert res["created"] is True
    for projections in (("manifest",), ("payload",), ("manifest", "payload")):
        rev = h.env(store, res["page_id"], projections)
        assert set(rev) == h.ENVELOPE_KEYS, f"{projections}: {sorted(set(rev) ^ h.ENVELOPE_KEYS)}"
        assert set(rev["created_by"]) == {"actor_type", "actor_id"}
        for ev in rev["provenance"]:
            assert {"operation", "actor_type", "actor_id", "timestamp", "input_revision_ids"} <= set(ev)
            assert set(ev) <= {"operation", "actor_type", "actor_id", "timestamp", "input_revision_ids",
                               "tool_or_model"}


@pytest.mark.encrypted
def test_envelope_values_for_a_first_write(store):
    content = "Body of the page.\nSecond line with ünïcödé, 中文 and emoji \U0001F600."
    t0 = h.now_ts(-2)
    res = h.write(store, "project:env", content, facets={"title": "T"})
    t1 = h.now_ts(2)
    rev = h.env(store, res["page_id"], ("manifest", "payload"))
    assert h.is_id(rev["page_id"], "pg") and rev["page_id"] == res["page_id"]
    assert h.is_id(rev["revision_id"], "rev") and rev["revision_id"] == res["revision_id"]
    assert rev["previous_revision_id"] is None
    assert rev["owner_id"] == store.owner_id
    assert rev["namespace"] == "project:env"
    assert rev["visibility"] == "private"
    assert rev["lifecycle_status"] == "active"
    assert h.is_ts(rev["created_at"]) and t0 <= rev["created_at"] <= t1
    assert rev["observed_at"] is None and rev["valid_from"] is None and rev["valid_to"] is None
    assert rev["created_by"]["actor_type"] == "user"
    assert isinstance(rev["created_by"]["actor_id"], str) and rev["created_by"]["actor_id"]
    assert rev["payload"] == {"media_type": "text/markdown", "content": content}
    assert rev["content_digest"] == h.digest(content)
    assert rev["source_refs"] == []
    assert rev["facets"]["title"] == "T"
    # the store adds a provenance event when none is given
    assert len(rev["provenance"]) >= 1
    ev = rev["provenance"][0]
    assert ev["operation"] == "write"
    assert ev["actor_type"] == "user"
    assert h.is_ts(ev["timestamp"])
    assert ev["input_revision_ids"] == []


def test_ids_are_fresh_ulids_minted_now(store):
    before = int(time.time() * 1000)
    ids = [h.write(store, "project:ids", f"page {i}") for i in range(5)]
    after = int(time.time() * 1000)
    pages = [r["page_id"] for r in ids]
    revs = [r["revision_id"] for r in ids]
    assert len(set(pages)) == 5 and len(set(revs)) == 5
    for pid in pages:
        assert h.is_id(pid, "pg"), pid
        assert before - 5000 <= h.ulid_ms(pid) <= after + 5000, "ULID time part is not the mint time"
    for rid in revs:
        assert h.is_id(rid, "rev"), rid


def test_manifest_omits_content_but_keeps_metadata(store):
    content = "manifest body"
    refs = [{"uri": "file:///tmp/x.md", "locator": {"lines": "1-3"}, "media_type": "text/markdown"}]
    res = h.write(store, "project:env", content, source_refs=refs, facets={"title": "M", "summary": "S"})
    rev = h.env(store, res["page_id"], ("manifest",))
    assert rev["payload"] is not None
    assert "content" not in rev["payload"]
    assert rev["payload"]["media_type"] == "text/markdown"
    assert rev["content_digest"] == h.digest(content)
    assert rev["facets"]["title"] == "M" and rev["facets"]["summary"] == "S"
    assert rev["source_refs"][0]["uri"] == "file:///tmp/x.md"
    assert rev["source_refs"][0]["locator"] == {"lines": "1-3"}
    assert rev["provenance"]


def test_payload_argument_form_and_media_type(store):
    res = store.write_page("project:env", {"media_type": "text/plain", "content": "plain text"})
    rev = h.env(store, res["page_id"], ("payload",))
    assert rev["payload"] == {"media_type": "text/plain", "content": "plain text"}
    res2 = h.write(store, "project:env", "x = 1", media_type="text/x-python")
    assert h.env(store, res2["page_id"], ("payload",))["payload"]["media_type"] == "text/x-python"


def test_source_refs_only_page(store):
    refs = [{"uri": "https://example.org/doc", "locator": {"anchor": "sec-2"}, "content_digest": "sha256:" + "0" * 64}]
    res = store.write_page("project:env", source_refs=refs)
    rev = h.env(store, res["page_id"], ("manifest", "payload"))
    assert rev["payload"] is None
    assert rev["content_digest"] is None
    assert rev["source_refs"][0]["uri"] == "https://example.org/doc"
    assert rev["source_refs"][0]["locator"] == {"anchor": "sec-2"}


def test_neither_payload_nor_source_refs_is_invalid(store, db_path):
    before = h.counts(db_path)
    with raises_code("invalid"):
        store.write_page("project:env")
    with raises_code("invalid"):
        store.write_page("project:env", source_refs=[])
    assert h.counts(db_path) == before


def test_empty_media_type_is_invalid(store, db_path):
    before = h.counts(db_path)
    with raises_code("invalid"):
        store.write_page("project:env", {"media_type": "", "content": "x"})
    with raises_code("invalid"):
        h.write(store, "project:env", "x", media_type="")
    assert h.counts(db_path) == before


def test_observed_and_valid_times_round_trip(store):
    res = h.write(
        store,
        "project:env",
        "observed",
        observed_at="2024-02-29T12:34:56.789Z",
        valid_from="2024-01-01T00:00:00.000Z",
        valid_to="2025-01-01T00:00:00.000Z",
    )
    rev = h.env(store, res["page_id"])
    assert rev["observed_at"] == "2024-02-29T12:34:56.789Z"
    assert rev["valid_from"] == "2024-01-01T00:00:00.000Z"
    assert rev["valid_to"] == "2025-01-01T00:00:00.000Z"
    assert h.is_ts(rev["created_at"]) and rev["created_at"] > "2025"


def test_caller_provenance_is_completed_by_the_store(store):
    src = h.write(store, "project:env", "source material")
    res = h.write(
        store,
        "project:env",
        "a summary of the source",
        provenance=[{"operation": "derive", "input_revision_ids": [src["revision_id"]], "tool_or_model": "gpt-x"}],
    )
    rev = h.env(store, res["page_id"])
    ev = [e for e in rev["provenance"] if e["operation"] == "derive"]
    assert ev, rev["provenance"]
    assert ev[0]["input_revision_ids"] == [src["revision_id"]]
    assert ev[0]["actor_type"] == "user"
    assert ev[0]["actor_id"]
    assert h.is_ts(ev[0]["timestamp"])
    assert ev[0].get("tool_or_model") == "gpt-x"


def test_bad_provenance_operation_is_invalid(store):
    with raises_code("invalid"):
        h.write(store, "project:env", "x", provenance=[{"operation": "teleport", "input_revision_ids": []}])


def test_model_client_writes_actor_type_model(store, as_model):
    m = as_model({"project:m": {"write", "read", "manage_scope", "revise"}}, client_id="claude-desktop")
    res = h.write(m, "project:m", "written by a model")
    rev = h.env(store, res["page_id"])
    assert rev["created_by"] == {"actor_type": "model", "actor_id": "claude-desktop"}
    assert rev["provenance"][0]["actor_type"] == "model"
    assert rev["provenance"][0]["actor_id"] == "claude-desktop"
    r2 = m.revise_page(res["page_id"], res["revision_id"], content="revised by a model")
    rev2 = h.env(store, r2["revision_id"])
    assert rev2["created_by"]["actor_type"] == "model"
    assert all(e["actor_type"] == "model" for e in rev2["provenance"] if e["operation"] == "revise")


def test_owner_writes_actor_type_user(store):
    res = h.write(store, "project:u", "owner page")
    rev = h.env(store, res["page_id"])
    assert rev["created_by"]["actor_type"] == "user"
    assert all(e["actor_type"] == "user" for e in rev["provenance"])


# --------------------------------------------------------------------------- idempotency


def test_write_idempotent_replay(store, db_path):
    first = h.write(store, "project:idem", "same body", facets={"title": "t"}, idempotency_key="k-1")
    assert first["created"] is True
    n = h.revision_count(db_path)
    again = h.write(store, "project:idem", "same body", facets={"title": "t"}, idempotency_key="k-1")
    assert again["created"] is False
    assert again["page_id"] == first["page_id"] and again["revision_id"] == first["revision_id"]
    assert h.revision_count(db_path) == n
    assert len(h.all_hits(store, "", mode="temporal", scopes=["project:idem"])) == 1


def test_write_same_key_different_body_is_conflict(store, db_path):
    h.write(store, "project:idem", "body one", idempotency_key="k-2")
    before = h.counts(db_path)
    with raises_code("conflict"):
        h.write(store, "project:idem", "body two", idempotency_key="k-2")
    with raises_code("conflict"):
        h.write(store, "project:idem", "body one", facets={"title": "other"}, idempotency_key="k-2")
    with raises_code("conflict"):
        h.write(store, "project:other", "body one", idempotency_key="k-2")
    assert h.counts(db_path) == before


def test_idempotency_key_is_per_principal(store, as_model):
    mine = h.write(store, "project:idem", "shared body", idempotency_key="k-3")
    m = as_model({"project:idem": {"write", "read"}})
    theirs = h.write(m, "project:idem", "shared body", idempotency_key="k-3")
    assert theirs["created"] is True
    assert theirs["page_id"] != mine["page_id"]


def test_revise_idempotent_replay(store, db_path):
    p = h.write(store, "project:idem", "v1")
    r1 = store.revise_page(p["page_id"], p["revision_id"], content="v2", idempotency_key="rk")
    n = h.revision_count(db_path)
    r2 = store.revise_page(p["page_id"], p["revision_id"], content="v2", idempotency_key="rk")
    assert r2["created"] is False and r2["revision_id"] == r1["revision_id"]
    assert h.revision_count(db_path) == n
    with raises_code("conflict"):
        store.revise_page(p["page_id"], p["revision_id"], content="v3", idempotency_key="rk")


def test_link_idempotent_replay(store):
    a = h.write(store, "project:idem", "a")
    b = h.write(store, "project:idem", "b")
    c = h.write(store, "project:idem", "c")
    l1 = store.link_pages(a["page_id"], "related_to", b["page_id"], idempotency_key="lk")
    assert l1["created"] is True and h.is_id(l1["relation_id"], "rel")
    l2 = store.link_pages(a["page_id"], "related_to", b["page_id"], idempotency_key="lk")
    assert l2["created"] is False and l2["relation_id"] == l1["relation_id"]
    assert len(h.relations(store, a["page_id"])["outgoing"]) == 1
    with raises_code("conflict"):
        store.link_pages(a["page_id"], "related_to", c["page_id"], idempotency_key="lk")
    assert len(h.relations(store, a["page_id"])["outgoing"]) == 1


# --------------------------------------------------------------------------- ingest


def test_ingest_event_makes_a_source_backed_page(store):
    ev = {"content": "user: hello\nassistant: hi", "media_type": "text/plain",
          "observed_at": "2025-05-05T05:05:05.005Z", "facets": {"title": "chat"}, "actor_id": "chatgpt"}
    res = store.ingest_event(ev, "conversation:c1", "ev-1")
    assert res["created"] is True
    rev = h.env(store, res["page_id"])
    assert rev["payload"]["content"] == ev["content"]
    assert rev["payload"]["media_type"] == "text/plain"
    assert rev["observed_at"] == ev["observed_at"]
    assert any(e["operation"] == "ingest" for e in rev["provenance"])
    assert "conversation:c1" in h.scope_map(store)


def test_ingest_event_replay_never_duplicates(store, db_path):
    ev = {"content": "tool event: file saved"}
    first = store.ingest_event(ev, "task:t1", "ev-2")
    n = h.revision_count(db_path)
    for _ in range(3):
        again = store.ingest_event(dict(ev), "task:t1", "ev-2")
        assert again["created"] is False
        assert (again["page_id"], again["revision_id"]) == (first["page_id"], first["revision_id"])
    assert h.revision_count(db_path) == n
    with raises_code("conflict"):
        store.ingest_event({"content": "a different event"}, "task:t1", "ev-2")
    assert h.revision_count(db_path) == n


def test_ingest_event_requires_a_key(store, db_path):
    before = h.counts(db_path)
    with raises_code("invalid"):
        store.ingest_event({"content": "x"}, "task:t1", None)
    with raises_code("invalid"):
        store.ingest_event({"content": "x"}, "task:t1", "")
    assert h.counts(db_path) == before


def test_ingest_source_refs_event(store):
    res = store.ingest_event({"source_refs": [{"uri": "file:///a.txt", "locator": {"lines": "1-2"}}]}, "import:fs", "ev-3")
    rev = h.env(store, res["page_id"])
    assert rev["source_refs"][0]["uri"] == "file:///a.txt"
    assert rev["payload"] is None


# --------------------------------------------------------------------------- scopes on write


def test_write_creates_the_scope(store):
    assert "project:new" not in h.scope_map(store)
    h.write(store, "project:new", "x")
    s = h.scope_map(store)["project:new"]
    assert s["page_count"] == 1
    assert s["owner_id"] == store.owner_id
    assert s["visibility"] == "private"


def test_model_needs_manage_scope_for_a_new_scope(store, as_model, db_path):
    m = as_model({"project:*": {"write", "read", "search"}})
    before = h.counts(db_path)
    with raises_code("forbidden"):
        h.write(m, "project:fresh", "x")
    assert h.counts(db_path) == before
    assert "project:fresh" not in h.scope_map(store)
    m2 = as_model({"project:*": {"write", "read", "search", "manage_scope"}})
    h.write(m2, "project:fresh", "x")
    assert "project:fresh" in h.scope_map(store)
    # an existing scope needs only write
    h.write(m, "project:fresh", "y")


def test_model_without_write_grant_is_forbidden(store, as_model, db_path):
    h.write(store, "project:a", "x")
    m = as_model({"project:a": {"search", "read"}})
    before = h.counts(db_path)
    with raises_code("forbidden"):
        h.write(m, "project:a", "nope")
    assert h.counts(db_path) == before


def test_reopen_reads_back_the_same_data(db_path):
    from store import Store

    st = Store.open(db_path)
    r = h.write(st, "project:persist", "durable text")
    st.close()
    st2 = Store.open(db_path)
    try:
        assert h.content_of(st2, r["page_id"]) == "durable text"
    finally:
        st2.close()
