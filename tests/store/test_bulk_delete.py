"""Issue 14: forget by filter. Every page a filter selects, one plan with a digest, one receipt, bounded batches,
the same no-residue guarantee as a single delete, a resume that continues the recorded set."""

from __future__ import annotations

import json
import random

import pcpstore_helpers as h
import pytest
from pcpstore_helpers import raises_code

from store import Store
from store.bulk_delete import selection_digest

OLD = "2025-06-01T00:00:00Z"
NEW = "2026-06-01T00:00:00Z"
BEFORE = {"scopes": ["project:big"], "observed_before": "2026-01-01T00:00:00Z"}


def _ten_thousand(st: Store) -> None:
    """9,000 pages in project:big (every ninth observed in 2025) and 1,000 old ones in project:other."""
    st.write_pages_bulk(({"content": f"page {i} about harbor logistics, number {i}", "observed_at": OLD if i % 9 == 0
                          else NEW, "facets": {"title": f"Big {i}"}} for i in range(9000)), "project:big")
    st.write_pages_bulk(({"content": f"other page {i}", "observed_at": OLD} for i in range(1000)), "project:other")


def _export_lines(st: Store, path) -> list[dict]:
    st.export(path)
    out = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            doc = json.loads(line)
            if doc["kind"] not in ("pcp.export.v1", "pcp.export.end", "receipt"):
                out.append(doc)
    return out


def test_a_filter_selecting_1000_of_10000_pages_erases_exactly_those(store, tmp_path):
    _ten_thousand(store)
    before = _export_lines(store, tmp_path / "before.jsonl")
    plan = store.plan_bulk_delete(BEFORE)
    assert plan["pages"] == 1000 and plan["revisions"] == 1000
    assert len(plan["first_pages"]) == 20 and plan["first_pages"][0]["title"].startswith("Big ")
    doomed = {p["page_id"] for p in h.all_hits(store, "", scopes=["project:big"], mode="temporal",
                                                filters={"observed_before": "2026-01-01T00:00:00Z"}, max_pages=100)}
    assert len(doomed) == 1000 and plan["digest"] == selection_digest(sorted(doomed))
    seen: list[tuple[int, int | None]] = []
    receipt = store.bulk_delete(BEFORE, "old harbor notes", plan["digest"], batch_size=100,
                                progress=lambda done, total, what="": seen.append((done, total)))
    assert receipt["state"] == "complete" and receipt["completed"] == "1000/1000"
    assert set(receipt["page_ids"]) == doomed and receipt["counts"]["pages"] == 1000
    steps = [done for done, _ in seen]  # one step per batch of at most 100 pages (fewer when pages are slow)
    assert steps[0] == 0 and steps[-1] == 1000 and {total for _, total in seen} == {1000}
    assert all(0 < b - a <= 100 for a, b in zip(steps, steps[1:], strict=False)) and len(steps) >= 11
    after = _export_lines(store, tmp_path / "after.jsonl")
    assert after == [doc for doc in before if doc.get("page_id") not in doomed]  # the other 9,000 identical
    assert len([d for d in after if d["kind"] == "page"]) == 9000
    for pid in list(doomed)[:20]:
        with raises_code("not_found"):
            store.read_pages([pid])
    listed = store.list_receipts(limit=1)["receipts"][0]
    assert listed["receipt_id"] == receipt["receipt_id"] and set(listed["page_ids"]) == doomed
    assert len(listed["revision_ids"]) == 1000
    # One audit event at the start and one at completion, linked by the receipt id.
    linked = [e for e in h.all_audit(store) if e.get("receipt_id") == receipt["receipt_id"]]
    assert sorted(e["operation"] for e in linked) == ["bulk_delete_complete", "bulk_delete_start"]


def _forget_world(st: Store, seed: int) -> tuple[list[str], list[str], list[dict]]:
    """2,000 plain pages, 60 pages to forget (random text, revisions, relations, a suppression), 40 keepers."""
    rng = random.Random(seed)
    st.write_pages_bulk(({"content": f"filler {i} river stone"} for i in range(2000)), "project:res")
    erased, remaining, victims = [], [], []
    for i in range(60):
        text = "forgetme " + h.random_text(rng, 300, tokens=2)
        page = h.write(st, "project:res", text, facets={"title": f"Victim {i}"})
        if i % 10 == 0:
            later = "forgetme " + h.random_text(rng, 200, tokens=2)
            st.revise_page(page["page_id"], page["revision_id"], content=later)
            erased.append(later)
        erased.append(text)
        victims.append(page)
    for i in range(40):
        text = h.random_text(rng, 300, tokens=2)
        keeper = h.write(st, "project:res", text)
        remaining.append(text)
        if i < 5:
            st.link_pages(victims[i]["page_id"], "related_to", keeper["page_id"])
    st.suppress_pages([victims[1]["page_id"]], "task:res")
    for t in erased[:10]:  # the index has served searches for the text
        tok = [w for w in t.split() if len(w) >= 24][0]
        assert h.hit_ids(st, tok, mode="text", all_revisions=True)
    return erased, remaining, victims


def _windows(erased: list[str], remaining: list[str]) -> set[bytes]:
    keep: set[bytes] = set()
    for t in remaining:
        keep |= h.windows(t.encode("utf-8")) | h.windows(t.lower().encode("utf-8"))
    gone: set[bytes] = set()
    for t in erased:
        gone |= h.windows(t.encode("utf-8")) | h.windows(t.lower().encode("utf-8"))
    return gone - keep - set().union(*(h.windows(f"filler {i} river stone".encode()) for i in range(2000)))


def test_no_16_byte_window_of_the_erased_text_remains_on_disk(db_path):
    st = Store.open(db_path)
    erased, remaining, victims = _forget_world(st, 4242)
    windows = _windows(erased, remaining)
    assert len(windows) > 10_000
    assert h.find_residue(h.files_beside(db_path), windows), "test setup: the text is on disk before"
    flt = {"query": "forgetme", "mode": "text"}
    plan = st.plan_bulk_delete(flt)
    assert plan["pages"] == 60 and plan["revisions"] == 66 and plan["relations"] == 5 and plan["suppressions"] == 1
    receipt = st.bulk_delete(flt, "forget them", plan["digest"], batch_size=7)
    assert receipt["wal_erasure"] == "done" and receipt["counts"]["revisions"] == 66
    assert h.find_residue(h.files_beside(db_path), windows) == []
    st.close()
    assert h.find_residue(h.files_beside(db_path), windows) == []
    with Store.open(db_path) as again:  # the keepers are intact and found
        for t in remaining[:5]:
            tok = [w for w in t.split() if len(w) >= 24][0]
            assert len(h.all_hits(again, tok, mode="exact")) == 1
        assert h.all_hits(again, "forgetme", mode="exact") == []


def test_a_changed_selection_is_refused_by_its_digest(store, db_path):
    for i in range(30):
        h.write(store, "project:x", f"invoice {i} for the old address")
    h.write(store, "project:x", "unrelated page")
    flt = {"scopes": ["project:x"], "query": "old address", "mode": "exact"}
    plan = store.plan_bulk_delete(flt)
    assert plan["pages"] == 30
    h.write(store, "project:x", "a new invoice for the old address")  # the filter now selects 31
    before = h.snapshot(db_path)
    with raises_code("conflict"):
        store.bulk_delete(flt, "forget the address", plan["digest"])
    with raises_code("conflict"):
        store.bulk_delete(flt, "forget the address", "sha256:" + "0" * 32)
    assert h.diff_snapshots(before, h.snapshot(db_path)) == []  # nothing recorded, nothing erased
    fresh = store.plan_bulk_delete(flt)
    assert fresh["pages"] == 31 and fresh["digest"] != plan["digest"]
    assert store.bulk_delete(flt, "forget the address", fresh["digest"])["completed"] == "31/31"
    assert [hit["title"] for hit in h.all_hits(store, "", scopes=["project:x"], mode="temporal")] == ["unrelated page"]


def _gone(st: Store, page_id: str) -> bool:
    try:
        st.read_pages([page_id])
    except Exception as exc:  # noqa: BLE001 - the store's not_found
        assert getattr(exc, "code", None) == "not_found"
        return True
    return False


def _deletemerge(st: Store) -> int:
    row = st._db.execute_sql("SELECT v FROM revision_terms_config WHERE k = 'deletemerge'").fetchone()
    return int(row[0]) if row else 10


@pytest.mark.encrypted
def test_an_interrupted_deletion_resumes_the_recorded_set_never_the_filter(store):
    pages = [h.write(store, "project:r", f"draft {i}")["page_id"] for i in range(50)]
    flt = {"scopes": ["project:r"]}
    plan = store.plan_bulk_delete(flt)

    def stop_after_two_batches(done: int, total: int | None, what: str = "") -> None:
        if done >= 20:
            raise KeyboardInterrupt

    started = store.begin_bulk_delete(flt, "drafts", plan["digest"], batch_size=10)
    assert started["state"] == "pending" and started["completed"] == "0/50"
    with pytest.raises(KeyboardInterrupt):
        store.resume_bulk_delete(started["receipt_id"], progress=stop_after_two_batches)
    status = store.bulk_deletion(started["receipt_id"])
    assert status["completed"] == "20/50" and status["state"] == "pending"
    gone = [p for p in pages if _gone(store, p)]
    assert gone == sorted(pages)[:20]  # whole pages, in the recorded order
    assert _deletemerge(store) == 0  # no FTS5 delete-merge inside other writers' writes while it is pending
    late = h.write(store, "project:r", "a page written after the plan")  # the filter would now select it
    done = store.resume_bulk_delete(started["receipt_id"])
    assert done["state"] == "complete" and done["completed"] == "50/50" and done["counts"]["pages"] == 50
    assert h.content_of(store, late["page_id"]) == "a page written after the plan"
    assert _deletemerge(store) == 10  # FTS5's default again once no bulk deletion is pending
    assert store.resume_bulk_delete(started["receipt_id"])["state"] == "complete"  # idempotent once complete
    ops = [e["operation"] for e in h.all_audit(store) if e.get("receipt_id") == started["receipt_id"]]
    assert sorted(set(ops)) == ["bulk_delete_complete", "bulk_delete_resume", "bulk_delete_start"]
    assert ops.count("bulk_delete_complete") == 1


def test_in_page_selects_a_conversation_and_everything_it_contains(store):
    conv = h.write(store, "chat:c", "conversation")
    msgs = [h.write(store, "chat:c", f"message {i}") for i in range(3)]
    for m in msgs:
        store.link_pages(conv["page_id"], "contains", m["page_id"])
    nested = h.write(store, "chat:c", "attachment")
    store.link_pages(msgs[0]["page_id"], "contains", nested["page_id"])
    other = h.write(store, "chat:c", "another conversation")
    plan = store.plan_bulk_delete({"in_page": conv["page_id"]})
    assert plan["pages"] == 5 and plan["relations"] == 4
    store.bulk_delete({"in_page": conv["page_id"]}, "forget this chat", plan["digest"])
    assert h.content_of(store, other["page_id"]) == "another conversation"
    assert store.plan_bulk_delete({"scopes": ["chat:c"]})["pages"] == 1


def test_an_explicit_selection_deletes_exactly_those_pages(store):
    pages = [h.write(store, "project:sel", f"page {i}")["page_id"] for i in range(6)]
    chosen = pages[1:4] + ["pg_01NOTAPAGE0000000000000000"]  # an id that is gone is simply not selected
    plan = store.plan_bulk_delete({"page_ids": chosen})
    assert plan["pages"] == 3 and plan["digest"] == selection_digest(pages[1:4])
    narrowed = store.plan_bulk_delete({"page_ids": chosen, "query": "page 2", "mode": "exact"})
    assert narrowed["pages"] == 1  # with other filters, the pages that pass them all
    store.bulk_delete({"page_ids": chosen}, "these three", plan["digest"])
    assert [p for p in pages if _gone(store, p)] == pages[1:4]
    with raises_code("invalid"):
        store.plan_bulk_delete({"page_ids": pages[0]})  # a list, not one id


def test_every_status_is_selected_by_default_and_status_narrows(store):
    a = h.write(store, "project:s", "active one")
    b = h.write(store, "project:s", "archived one")
    c = h.write(store, "project:s", "tombstoned one")
    store.archive_page(b["page_id"], "old")
    store.tombstone_page(c["page_id"], "wrong")
    assert store.plan_bulk_delete({"scopes": ["project:s"]})["pages"] == 3
    only = store.plan_bulk_delete({"scopes": ["project:s"], "lifecycle_status": ["archived", "tombstoned"]})
    assert only["pages"] == 2
    store.bulk_delete({"scopes": ["project:s"], "lifecycle_status": ["archived", "tombstoned"]}, "tidy", only["digest"])
    assert h.content_of(store, a["page_id"]) == "active one"


def test_refusals(store, as_model):
    h.write(store, "project:q", "something")
    with raises_code("invalid"):
        store.plan_bulk_delete({})  # never every page by default
    with raises_code("invalid"):
        store.plan_bulk_delete({"lifecycle_status": ["active"]})
    with raises_code("unsupported"):
        store.plan_bulk_delete({"query": "something", "mode": "auto"})
    with raises_code("invalid"):
        store.plan_bulk_delete({"query": "something"})  # the mode is required with a query
    with raises_code("unsupported"):
        store.plan_bulk_delete({"owner": "x"})
    with raises_code("not_found"):
        store.resume_bulk_delete("del_01NOTADELETION00000000000000")
    plan = store.plan_bulk_delete({"scopes": ["project:q"]})
    with raises_code("invalid"):
        store.bulk_delete({"scopes": ["project:q"]}, "", plan["digest"])  # a reason is required
    model = as_model({"*": ["search", "read", "delete", "write"]})
    for call in (lambda: model.plan_bulk_delete({"scopes": ["project:q"]}),
                 lambda: model.bulk_delete({"scopes": ["project:q"]}, "x", plan["digest"])):
        with raises_code("forbidden"):
            call()
    started = store.begin_bulk_delete({"scopes": ["project:q"]}, "later", plan["digest"])
    with raises_code("forbidden"):
        model.resume_bulk_delete(started["receipt_id"])
    assert store.bulk_deletion(started["receipt_id"])["completed"] == "0/1"


def test_the_receipt_holds_no_query_text(store, db_path):
    h.write(store, "project:t", "the secret phrase zanzibar-quokka lives here")
    flt = {"query": "zanzibar-quokka", "mode": "exact"}
    receipt = store.bulk_delete(flt, "forget", store.plan_bulk_delete(flt)["digest"])
    assert receipt["filters"] == {"mode": "exact", "lifecycle_status": ["active", "archived", "superseded",
                                                                        "tombstoned"]}
    with h.raw(db_path) as c:
        stored = repr(c.execute("SELECT * FROM bulk_deletion").fetchall()) + h.audit_rows_text(db_path)
    assert "zanzibar" not in stored


def test_a_store_written_before_bulk_deletion_migrates(db_path):
    with Store.open(db_path) as st:
        h.write(st, "project:m", "kept across the migration")
    c = h.sqlite3.connect(str(db_path))  # what schema 3 had: no bulk_deletion table, no receipt_id
    try:
        c.execute("DROP TABLE bulk_deletion")
        c.execute("ALTER TABLE audit_event DROP COLUMN receipt_id")
        c.execute("UPDATE meta SET value = '3' WHERE key = 'schema_version'")
        c.commit()
    finally:
        c.close()
    with Store.open(db_path) as st:
        assert h.plain_tables(db_path).count("bulk_deletion") == 1
        flt = {"scopes": ["project:m"]}
        receipt = st.bulk_delete(flt, "after the upgrade", st.plan_bulk_delete(flt)["digest"])
        assert receipt["completed"] == "1/1"
        assert any(e.get("receipt_id") == receipt["receipt_id"] for e in h.all_audit(st))


def test_the_receipt_counts_what_the_plan_showed_relations_suppressions_and_bytes_across_batches(store):
    """The plan shows relations, suppressions and bytes; the receipt said only pages and revisions."""
    written = [h.write(store, "project:c", f"note {i} " + "x" * i) for i in range(7)]
    pages = [w["page_id"] for w in written]
    keep = h.write(store, "project:keep", "a page that stays")["page_id"]
    for a, b in zip(pages[:-1], pages[1:], strict=True):  # a chain: each link between two batches of 3 is counted once
        store.link_pages(a, "references", b)
    store.link_pages(keep, "references", pages[0])  # from a page that stays: it goes with the erased one
    store.revise_page(pages[2], written[2]["revision_id"], content="note 2, revised")
    store.archive_page(pages[3], "old")
    store.suppress_pages([pages[4]], "ctx_1", "not here")
    flt = {"scopes": ["project:c"]}
    plan = store.plan_bulk_delete(flt)
    assert plan["relations"] == 7 and plan["suppressions"] == 1
    receipt = store.bulk_delete(flt, "counted", plan["digest"], batch_size=3)
    counts = receipt["counts"]
    assert counts["pages"] == 7 and counts["revisions"] == plan["revisions"] == 8
    assert counts["relations"] == plan["relations"] and counts["suppressions"] == plan["suppressions"]
    assert counts["bytes"] == plan["bytes"] and counts["lifecycle_events"] >= 1
    listed = next(r for r in store.list_receipts()["receipts"] if r["receipt_id"] == receipt["receipt_id"])
    assert listed["counts"] == counts


def test_the_first_run_is_not_audited_as_a_resume_and_cannot_run_twice(store):
    pages = [h.write(store, "project:f", f"draft {i}")["page_id"] for i in range(5)]
    flt = {"scopes": ["project:f"]}
    started = store.begin_bulk_delete(flt, "drafts", store.plan_bulk_delete(flt)["digest"], batch_size=2)
    done = store.run_bulk_delete(started["receipt_id"])
    assert done["state"] == "complete" and all(_gone(store, p) for p in pages)
    ops = [e["operation"] for e in h.all_audit(store) if e.get("receipt_id") == started["receipt_id"]]
    assert sorted(ops) == ["bulk_delete_complete", "bulk_delete_start"]
    with raises_code("conflict"):
        store.run_bulk_delete(started["receipt_id"])  # it ran: a second run is a resume
