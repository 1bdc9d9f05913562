"""pcp-core.md §6: deletion that really deletes (plan, apply, receipt, no residue)."""

from __future__ import annotations

import random

import pytest

import pcpstore_helpers as h
from pcpstore_helpers import raises_code


def _ids_of(items, key):
    return {x if isinstance(x, str) else x[key] for x in items}


@pytest.fixture
def graph(store):
    v = h.write(store, "project:del", "victim content v1 with vocabulary", facets={"title": "Victim"})
    v2 = store.revise_page(v["page_id"], v["revision_id"], content="victim content v2")
    k = h.write(store, "project:del", "keeper content")
    d = h.write(store, "project:del", "derived content written from the victim",
                provenance=[{"operation": "derive", "input_revision_ids": [v["revision_id"]]}])
    r1 = store.link_pages(v["page_id"], "related_to", k["page_id"])
    r2 = store.link_pages(k["page_id"], "supports", v["page_id"])
    store.suppress_pages([v["page_id"]], "task:t")
    return {"v": v, "v2": v2, "k": k, "d": d, "r1": r1, "r2": r2}


def test_plan_delete_writes_nothing_but_audit(store, db_path, graph):
    v = graph["v"]
    before = h.snapshot(db_path)
    n_audit = h.audit_count(store)
    plan = store.plan_delete(v["page_id"])
    assert h.diff_snapshots(before, h.snapshot(db_path)) == []
    assert h.audit_count(store) == n_audit + 1
    assert plan["page_id"] == v["page_id"]
    assert plan["cascade"] is False
    assert _ids_of(plan["revisions"], "revision_id") == {v["revision_id"], graph["v2"]["revision_id"]}
    assert _ids_of(plan["relations"], "relation_id") == {graph["r1"]["relation_id"], graph["r2"]["relation_id"]}
    assert _ids_of(plan["derived_pages"], "page_id") == {graph["d"]["page_id"]}
    assert plan["pages"] == [v["page_id"]]
    plan_c = store.plan_delete(v["page_id"], cascade=True)
    assert set(plan_c["pages"]) == {v["page_id"], graph["d"]["page_id"]}
    assert plan_c["cascade"] is True
    assert h.diff_snapshots(before, h.snapshot(db_path)) == []


def test_plan_delete_shape(store, graph):
    """/tmp/store_api.md: plan_delete -> {..., "suppressions": n, "bytes": n, "cascade": bool}."""
    plan = store.plan_delete(graph["v"]["page_id"])
    assert plan["suppressions"] == 1
    assert isinstance(plan["bytes"], int) and plan["bytes"] > 0


def test_delete_page_removes_everything_of_the_page(store, db_path, graph):
    v, k = graph["v"], graph["k"]
    receipt = store.delete_page(v["page_id"], "user asked")
    for i in (v["page_id"], v["revision_id"], graph["v2"]["revision_id"]):
        with raises_code("not_found"):
            store.read_pages([i])
    rels = h.relations(store, k["page_id"])
    assert rels["outgoing"] == [] and rels["incoming"] == []
    assert v["page_id"] not in h.hit_ids(store, "victim")
    assert v["page_id"] not in h.hit_ids(store, "victim", filters={"lifecycle_status": [
        "active", "archived", "tombstoned", "superseded"]}, all_revisions=True)
    assert v["page_id"] not in h.hit_ids(store, k["page_id"], mode="graph")
    assert h.scope_map(store)["project:del"]["page_count"] == 2
    # no row outside the receipt/audit tables still names the page or its revisions
    erased = {v["page_id"], v["revision_id"], graph["v2"]["revision_id"],
              graph["r1"]["relation_id"], graph["r2"]["relation_id"]}
    for table, rows in h.snapshot(db_path).items():
        low = table.lower()
        if "receipt" in low or "delet" in low or "fts" in low:
            continue
        for row in rows:
            text = repr(row)
            # provenance of a derived page may still name an erased revision id (it resolves
            # to the receipt), but no other table may keep a row about the erased page
            named = {i for i in erased if i in text}
            if named and not named <= {v["revision_id"]}:
                pytest.fail(f"table {table} still has a row naming {named}: {text[:200]}")
    assert h.is_id(receipt["receipt_id"], "del")


def test_suppressions_of_deleted_page_are_removed(store, db_path, graph):
    v = graph["v"]
    store.delete_page(v["page_id"], "erase")
    with h.raw(db_path) as c:
        for t in h.plain_tables(db_path):
            if "suppress" in t.lower():
                rows = c.execute(f'SELECT * FROM "{t}"').fetchall()
                assert not any(v["page_id"] in repr(r) for r in rows), t


def test_receipt_holds_no_content(store, db_path, graph):
    v = graph["v"]
    receipt = store.delete_page(v["page_id"], "privacy request")
    assert h.is_id(receipt["receipt_id"], "del")
    assert receipt["page_ids"] == [v["page_id"]]
    assert set(receipt["revision_ids"]) == {v["revision_id"], graph["v2"]["revision_id"]}
    assert isinstance(receipt["counts"], dict) and receipt["counts"]
    assert h.is_ts(receipt["created_at"])
    assert receipt["reason"] == "privacy request"
    assert receipt["actor"]
    text = h.dumps(receipt)
    for s in ("victim content", "Victim", "sha256:",
              h.digest("victim content v1 with vocabulary")[7:], h.digest("victim content v2")[7:]):
        assert s not in text
    # the receipt is kept in the database, without content or digest either
    snap = repr(h.snapshot(db_path))
    assert receipt["receipt_id"] in snap, "receipt is not stored"
    for s in ("victim content", h.digest("victim content v2")[7:], h.digest("victim content v1 with vocabulary")[7:]):
        assert s not in snap


def test_derived_page_is_kept_and_marks_input_deleted(store, graph):
    d = graph["d"]
    before = h.env(store, d["page_id"])
    store.delete_page(graph["v"]["page_id"], "erase")
    after = h.read1(store, d["page_id"])
    assert after["revision"]["payload"]["content"] == "derived content written from the victim"
    assert after["revision"]["content_digest"] == before["content_digest"]
    assert "input_deleted" in h.dumps(after), "provenance input of an erased revision is not marked"


def test_cascade_deletes_derived_pages(store, graph):
    receipt = store.delete_page(graph["v"]["page_id"], "erase all", cascade=True)
    assert set(receipt["page_ids"]) == {graph["v"]["page_id"], graph["d"]["page_id"]}
    for pid in (graph["v"]["page_id"], graph["d"]["page_id"]):
        with raises_code("not_found"):
            store.read_pages([pid])
    assert h.content_of(store, graph["k"]["page_id"]) == "keeper content"


def test_delete_missing_page(store, db_path):
    with raises_code("not_found"):
        store.delete_page("pg_01ARZ3NDEKTSV4RRFFQ69G5FAV", "x")
    with raises_code("not_found"):
        store.plan_delete("pg_01ARZ3NDEKTSV4RRFFQ69G5FAV")


def test_deleted_idempotency_key_does_not_resurrect(store, db_path):
    p = h.write(store, "project:del", "with a key", idempotency_key="del-key")
    store.delete_page(p["page_id"], "erase")
    again = h.write(store, "project:del", "with a key", idempotency_key="del-key")
    assert again["page_id"] != p["page_id"]
    assert h.content_of(store, again["page_id"]) == "with a key"


def test_tombstoned_page_can_be_deleted(store, graph):
    store.tombstone_page(graph["v"]["page_id"], "first withdraw")
    store.delete_page(graph["v"]["page_id"], "then erase")
    with raises_code("not_found"):
        store.read_pages([graph["v"]["page_id"]])


# --------------------------------------------------------------------------- no residue


def _residue_world(store, seed):
    rng = random.Random(seed)
    victim_texts = [h.random_text(rng, 2000) for _ in range(3)]
    facet_text = h.random_text(rng, 300, tokens=3)
    keeper_texts = [h.random_text(rng, 1500) for _ in range(2)]
    derived_text = h.random_text(rng, 800)
    v = h.write(store, "project:res", victim_texts[0], facets={"title": "Victim", "summary": facet_text},
                idempotency_key="residue-key")
    rev = v["revision_id"]
    for t in victim_texts[1:]:
        rev = store.revise_page(v["page_id"], rev, content=t)["revision_id"]
    k1 = h.write(store, "project:res", keeper_texts[0])
    k2 = h.write(store, "project:other", keeper_texts[1])
    h.write(store, "project:res", derived_text,
                provenance=[{"operation": "derive", "input_revision_ids": [v["revision_id"]]}])
    store.link_pages(v["page_id"], "related_to", k1["page_id"])
    store.link_pages(k2["page_id"], "supports", v["page_id"])
    store.suppress_pages([v["page_id"]], "task:res", reason="noise")
    # populate and exercise the search index (text, exact, all revisions)
    for t in victim_texts:
        tok = [w for w in t.split() if len(w) >= 24][0]
        h.all_hits(store, tok, mode="text", all_revisions=True)
        h.all_hits(store, tok, mode="exact", all_revisions=True)
        h.all_hits(store, " ".join(t.split()[:3]))
    last_tok = [w for w in victim_texts[-1].split() if len(w) >= 24][0]
    assert v["page_id"] in h.hit_ids(store, last_tok, mode="text")
    erased = victim_texts + [facet_text]
    remaining = keeper_texts + [derived_text]
    return v, erased, remaining


def _erased_windows(erased, remaining):
    keep: set[bytes] = set()
    for t in remaining:
        keep |= h.windows(t.encode("utf-8")) | h.windows(t.lower().encode("utf-8"))
    gone: set[bytes] = set()
    for t in erased:
        gone |= h.windows(t.encode("utf-8")) | h.windows(t.lower().encode("utf-8"))
    return gone - keep


def test_no_residue_after_delete_page_returns(store, db_path):
    v, erased, remaining = _residue_world(store, 1234)
    windows = _erased_windows(erased, remaining)
    assert len(windows) > 5000
    # sanity: the content is in the files before deletion (WAL or main file)
    assert h.find_residue(h.files_beside(db_path), windows), "test setup: content not found before delete"
    store.delete_page(v["page_id"], "erase it for real")
    problems = h.find_residue(h.files_beside(db_path), windows)
    assert problems == [], f"erased content still on disk while the store is open: {problems}"


def test_no_residue_after_delete_and_close(db_path):
    from store import Store

    st = Store.open(db_path)
    v, erased, remaining = _residue_world(st, 99)
    windows = _erased_windows(erased, remaining)
    st.delete_page(v["page_id"], "erase it for real")
    st.close()
    problems = h.find_residue(h.files_beside(db_path), windows)
    assert problems == [], f"erased content still on disk after close: {problems}"
    # and the remaining pages are intact
    st = Store.open(db_path)
    try:
        for t in remaining:
            tok = [w for w in t.split() if len(w) >= 24][0]
            assert len(h.all_hits(st, tok, mode="exact")) == 1
    finally:
        st.close()


# --------------------------------------------------------------------------- delete_scope


def test_plan_delete_scope_writes_nothing_but_audit(store, db_path):
    for i in range(3):
        h.write(store, "project:gone", f"gone {i}")
    h.write(store, "project:stay", "stay")
    before = h.snapshot(db_path)
    plan = store.plan_delete_scope("project:gone")
    assert h.diff_snapshots(before, h.snapshot(db_path)) == []
    assert plan["namespace"] == "project:gone"


def test_plan_delete_scope_shape(store):
    """/tmp/store_api.md: plan_delete_scope -> {"namespace", "pages": n, "revisions": n, "relations": n, ...}."""
    for i in range(3):
        h.write(store, "project:gone", f"gone {i}")
    plan = store.plan_delete_scope("project:gone")
    assert plan["pages"] == 3
    assert plan["revisions"] == 3
    assert plan["relations"] == 0


def test_delete_scope_erases_namespace(store, db_path):
    rng = random.Random(7)
    gone_texts = [h.random_text(rng, 1200) for _ in range(3)]
    stay_text = h.random_text(rng, 1200)
    gone = [h.write(store, "project:gone", t) for t in gone_texts]
    store.revise_page(gone[0]["page_id"], gone[0]["revision_id"], content=gone_texts[0] + " extra tail words")
    stay = h.write(store, "project:stay", stay_text)
    store.link_pages(gone[1]["page_id"], "related_to", stay["page_id"])
    store.suppress_pages([gone[2]["page_id"]], "task:x")
    for t in gone_texts:
        h.all_hits(store, t.split()[0])
    calls = []
    receipt = store.delete_scope("project:gone", "drop the project", progress=lambda d, t: calls.append((d, t)))
    assert h.is_id(receipt["receipt_id"], "del")
    assert set(receipt["page_ids"]) == {g["page_id"] for g in gone}
    assert calls and calls[-1][0] == calls[-1][1]
    assert "project:gone" not in h.scope_map(store)
    for g in gone:
        with raises_code("not_found"):
            store.read_pages([g["page_id"]])
    assert h.content_of(store, stay["page_id"]) == stay_text
    assert h.relations(store, stay["page_id"])["incoming"] == []
    with raises_code("not_found"):
        store.plan_delete_scope("project:gone")
    windows = _erased_windows(gone_texts + [gone_texts[0] + " extra tail words"], [stay_text])
    problems = h.find_residue(h.files_beside(db_path), windows)
    assert problems == [], f"erased scope content still on disk: {problems}"
    store.close()
    problems = h.find_residue(h.files_beside(db_path), windows)
    assert problems == [], f"erased scope content still on disk after close: {problems}"
