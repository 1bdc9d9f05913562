"""pcp-core.md §1 "Revisions are immutable": no code path updates a revision row.

Every row of the revision table is snapshot (raw SQLite) before and after each kind of
operation; every earlier row must still be there, byte for byte."""

from __future__ import annotations

from collections import Counter

import pytest

import pcpstore_helpers as h


@pytest.fixture
def world(store):
    a = h.write(store, "project:imm", "page A alpha content", facets={"title": "A"})
    b = h.write(store, "project:imm", "page B beta content")
    c = h.write(store, "project:imm", "page C gamma content")
    c2 = store.revise_page(c["page_id"], c["revision_id"], content="page C gamma content, second")
    d = h.write(store, "project:imm", "page D derived from A",
                provenance=[{"operation": "derive", "input_revision_ids": [a["revision_id"]]}])
    rel = store.link_pages(a["page_id"], "related_to", b["page_id"])
    store.suppress_pages([b["page_id"]], "task:ctx")
    # populate the search index too
    h.all_hits(store, "content")
    return {"a": a, "b": b, "c": c, "c2": c2, "d": d, "rel": rel}


OPS = {
    "revise": lambda st, w: st.revise_page(w["a"]["page_id"], w["a"]["revision_id"], content="A v2"),
    "revise_facets_only": lambda st, w: st.revise_page(w["a"]["page_id"], w["a"]["revision_id"],
                                                      facets={"title": "A2"}),
    "write": lambda st, w: st.write_page("project:imm", content="new page"),
    "ingest": lambda st, w: st.ingest_event({"content": "event"}, "project:imm", "imm-key"),
    "link": lambda st, w: st.link_pages(w["b"]["page_id"], "supersedes", w["c"]["page_id"]),
    "link_revision_ids": lambda st, w: st.link_pages(w["c"]["revision_id"], "contains", w["b"]["revision_id"]),
    "unlink": lambda st, w: st.unlink(w["rel"]["relation_id"], "wrong link"),
    "archive": lambda st, w: st.archive_page(w["a"]["page_id"], "old"),
    "archive_restore": lambda st, w: (st.archive_page(w["a"]["page_id"], "old"),
                                      st.restore_page(w["a"]["page_id"], "back")),
    "tombstone": lambda st, w: st.tombstone_page(w["c"]["page_id"], "withdrawn"),
    "tombstone_untombstone": lambda st, w: (st.tombstone_page(w["c"]["page_id"], "withdrawn"),
                                            st.untombstone_page(w["c"]["page_id"], "back")),
    "suppress": lambda st, w: st.suppress_pages([w["a"]["page_id"]], "task:other", reason="noise"),
    "unsuppress": lambda st, w: st.unsuppress_pages([w["b"]["page_id"]], "task:ctx"),
    "recommend_tombstone": lambda st, w: h.model(
        st, {"project:imm": {"search", "read", "write", "tombstone"}}).recommend_tombstone(w["a"]["page_id"], "dup"),
    "search_and_read": lambda st, w: (h.all_hits(st, "gamma"), st.read_pages(
        [w["a"]["page_id"], w["c"]["revision_id"]], projections=list(h.PROJECTIONS))),
    "plan_delete": lambda st, w: st.plan_delete(w["a"]["page_id"], cascade=True),
    "create_scope": lambda st, w: st.create_scope("project:imm2", display_name="Imm 2"),
    "write_pages_bulk": lambda st, w: st.write_pages_bulk([{"content": "bulk 1"}, {"content": "bulk 2"}],
                                                          "project:imm"),
    "model_reads": lambda st, w: (h.model(st, {"project:imm": h.READER}).search_pages("content"),
                                  h.model(st, {"project:imm": h.READER}).read_pages([w["a"]["page_id"]])),
}


@pytest.mark.parametrize("op", sorted(OPS))
def test_operation_does_not_rewrite_revision_rows(store, db_path, world, op):
    before = h.revision_rows(db_path)
    OPS[op](store, world)
    after = h.revision_rows(db_path)
    missing = Counter(before) - Counter(after)
    assert not missing, f"{op} changed or removed revision rows: {list(missing)[:3]}"
    assert len(after) >= len(before)


@pytest.mark.parametrize("cascade", [False, True])
def test_delete_removes_rows_but_rewrites_none(store, db_path, world, cascade):
    a = world["a"]
    doomed = {a["revision_id"]}
    if cascade:
        doomed.add(world["d"]["revision_id"])
    before = h.revision_rows(db_path)
    store.delete_page(a["page_id"], "erase", cascade=cascade)
    after = h.revision_rows(db_path)
    kept_before = [r for r in before if not (set(map(str, r)) & doomed)]
    assert len(kept_before) == len(before) - len(doomed), "cannot locate the erased revision rows"
    assert Counter(kept_before) == Counter(after), "delete rewrote revision rows of other pages"


def test_revision_content_never_changes_through_the_api(store, world):
    """Reading a revision id later returns exactly the same envelope as right after writing."""
    ids = [world[k]["revision_id"] for k in ("a", "b", "c", "c2", "d")]
    first = {i: h.env(store, i, ("manifest", "payload")) for i in ids}
    for op in ("revise", "link", "archive", "tombstone", "suppress", "unlink"):
        OPS[op](store, world)
    for i in ids:
        now = h.env(store, i, ("manifest", "payload"))
        for key in h.ENVELOPE_KEYS - {"lifecycle_status"}:
            assert now[key] == first[i][key], f"{i}: {key} changed"


def test_delete_scope_removes_rows_but_rewrites_none(store, db_path, world):
    other = [h.write(store, "project:gone", f"gone {i}") for i in range(3)]
    store.link_pages(other[0]["page_id"], "related_to", world["a"]["page_id"])
    before = h.revision_rows(db_path)
    store.delete_scope("project:gone", "drop")
    after = h.revision_rows(db_path)
    doomed = {o["revision_id"] for o in other}
    kept_before = [r for r in before if not (set(map(str, r)) & doomed)]
    assert len(kept_before) == len(before) - 3
    assert Counter(kept_before) == Counter(after)
