"""pcp-core.md §4 link_pages / unlink and the acyclic derivation subgraph."""

from __future__ import annotations

import pytest

import pcpstore_helpers as h
from pcpstore_helpers import raises_code


@pytest.fixture
def abc(store):
    return [h.write(store, "project:rel", f"page {n}") for n in "ABCD"]


def test_link_page_ids_resolve_to_heads(store, abc):
    a, b = abc[0], abc[1]
    a2 = store.revise_page(a["page_id"], a["revision_id"], content="A v2")
    rel = store.link_pages(a["page_id"], "depends_on", b["page_id"])
    assert h.is_id(rel["relation_id"], "rel") and rel["created"] is True
    assert rel["from_page_id"] == a["page_id"] and rel["from_revision_id"] == a2["revision_id"]
    assert rel["to_page_id"] == b["page_id"] and rel["to_revision_id"] == b["revision_id"]
    assert rel["relation_type"] == "depends_on"
    # a later revision does not rewrite the recorded ends
    store.revise_page(b["page_id"], b["revision_id"], content="B v2")
    out = h.relations(store, a["page_id"])["outgoing"]
    assert len(out) == 1
    r = out[0]
    assert set(r) >= h.RELATION_KEYS
    assert (r["from_revision_id"], r["to_revision_id"]) == (a2["revision_id"], b["revision_id"])
    assert h.is_ts(r["created_at"])
    assert r["created_by"]["actor_type"] == "user"
    inc = h.relations(store, b["page_id"])["incoming"]
    assert [x["relation_id"] for x in inc] == [rel["relation_id"]]


def test_link_revision_ids_are_kept_exactly(store, abc):
    a, b = abc[0], abc[1]
    store.revise_page(a["page_id"], a["revision_id"], content="A v2")
    rel = store.link_pages(a["revision_id"], "responds_to", b["revision_id"])
    assert rel["from_revision_id"] == a["revision_id"]
    assert rel["from_page_id"] == a["page_id"]
    assert rel["to_revision_id"] == b["revision_id"]


def test_relation_type_is_open_vocabulary_kept_verbatim(store, abc):
    a, b = abc[0], abc[1]
    weird = "Inspired-By (Loosely) / Übersetzung 译"
    store.link_pages(a["page_id"], weird, b["page_id"])
    t80 = "t" * 80
    store.link_pages(a["page_id"], t80, b["page_id"])
    types = sorted(r["relation_type"] for r in h.relations(store, a["page_id"])["outgoing"])
    assert types == sorted([weird, t80])


@pytest.mark.parametrize("bad", ["", "t" * 81])
def test_relation_type_length_is_checked(store, abc, db_path, bad):
    before = h.counts(db_path)
    with raises_code("invalid") as box:
        store.link_pages(abc[0]["page_id"], bad, abc[1]["page_id"])
    assert h.counts(db_path) == before
    if bad:
        assert "80" in box.value.message


def test_relations_are_never_collapsed(store, abc):
    a, b = abc[0], abc[1]
    store.link_pages(a["page_id"], "supports", b["page_id"])
    store.link_pages(a["page_id"], "uses", b["page_id"])
    store.link_pages(b["page_id"], "supports", a["page_id"])
    out = h.relations(store, a["page_id"])
    assert sorted(r["relation_type"] for r in out["outgoing"]) == ["supports", "uses"]
    assert [r["relation_type"] for r in out["incoming"]] == ["supports"]


def test_link_to_missing_id_is_not_found(store, abc, db_path):
    before = h.counts(db_path)
    with raises_code("not_found"):
        store.link_pages(abc[0]["page_id"], "related_to", "pg_01ARZ3NDEKTSV4RRFFQ69G5FAV")
    with raises_code("not_found"):
        store.link_pages("rev_01ARZ3NDEKTSV4RRFFQ69G5FAV", "related_to", abc[0]["page_id"])
    assert h.counts(db_path) == before


def test_write_with_relations(store, abc):
    a = abc[0]
    n = store.write_page("project:rel", content="new with links",
                         relations=[{"relation_type": "derived_from", "to": a["page_id"]},
                                    {"relation_type": "related_to", "to": abc[1]["revision_id"]}])
    out = h.relations(store, n["page_id"])["outgoing"]
    assert {(r["relation_type"], r["to_revision_id"]) for r in out} == {
        ("derived_from", a["revision_id"]), ("related_to", abc[1]["revision_id"])}


def test_unlink_hides_and_records_retraction(store, abc, db_path):
    a, b = abc[0], abc[1]
    rel = store.link_pages(a["page_id"], "related_to", b["page_id"])
    assert b["page_id"] in h.hit_ids(store, a["page_id"], mode="graph")
    res = store.unlink(rel["relation_id"], "linked by mistake")
    assert res["relation_id"] == rel["relation_id"] and res["retracted"] is True
    assert h.is_id(res["event_id"], "evt")
    assert h.relations(store, a["page_id"])["outgoing"] == []
    assert h.relations(store, b["page_id"])["incoming"] == []
    assert b["page_id"] not in h.hit_ids(store, a["page_id"], mode="graph")
    # a retraction is recorded, not a silent delete: the reason is stored somewhere
    dump = h.snapshot(db_path)
    assert "linked by mistake" in repr(dump)
    with raises_code("not_found"):
        store.unlink("rel_01ARZ3NDEKTSV4RRFFQ69G5FAV", "nothing")


def test_model_link_records_model_author(store, abc, as_model):
    m = as_model({"project:rel": h.READER | {"link"}})
    rel = m.link_pages(abc[0]["page_id"], "supports", abc[1]["page_id"])
    r = h.relations(store, abc[0]["page_id"])["outgoing"][0]
    assert r["relation_id"] == rel["relation_id"]
    assert r["created_by"]["actor_type"] == "model"


# --------------------------------------------------------------------------- cycles


@pytest.mark.parametrize("kind", ["derived_from", "summarizes", "aggregates"])
def test_direct_derivation_cycle_is_rejected(store, abc, db_path, kind):
    a, b = abc[0]["page_id"], abc[1]["page_id"]
    store.link_pages(a, kind, b)
    before = h.counts(db_path)
    with raises_code("cycle"):
        store.link_pages(b, kind, a)
    assert h.counts(db_path) == before


def test_self_derivation_is_rejected(store, abc):
    a = abc[0]
    with raises_code("cycle"):
        store.link_pages(a["page_id"], "derived_from", a["page_id"])
    a2 = store.revise_page(a["page_id"], a["revision_id"], content="A2")
    with raises_code("cycle"):
        store.link_pages(a2["revision_id"], "derived_from", a["revision_id"])


def test_transitive_mixed_cycle_is_rejected(store, abc, db_path):
    a, b, c = (x["page_id"] for x in abc[:3])
    store.link_pages(a, "summarizes", b)
    store.link_pages(b, "aggregates", c)
    before = h.counts(db_path)
    with raises_code("cycle"):
        store.link_pages(c, "derived_from", a)
    assert h.counts(db_path) == before


def test_cycle_judged_between_pages_not_revisions(store, abc):
    a, b = abc[0], abc[1]
    store.link_pages(a["revision_id"], "derived_from", b["revision_id"])
    b2 = store.revise_page(b["page_id"], b["revision_id"], content="B v2")
    a2 = store.revise_page(a["page_id"], a["revision_id"], content="A v2")
    with raises_code("cycle"):
        store.link_pages(b2["revision_id"], "derived_from", a2["revision_id"])


def test_provenance_edges_count_for_cycles_on_link(store, abc):
    a = abc[0]
    d = h.write(store, "project:rel", "derived from A",
                provenance=[{"operation": "derive", "input_revision_ids": [a["revision_id"]]}])
    with raises_code("cycle"):
        store.link_pages(a["page_id"], "derived_from", d["page_id"])


def test_provenance_cycle_on_revise_is_rejected(store, abc, db_path):
    a, b = abc[0], abc[1]
    store.link_pages(b["page_id"], "derived_from", a["page_id"])  # B derives from A
    before = h.counts(db_path)
    with raises_code("cycle"):
        store.revise_page(a["page_id"], a["revision_id"], content="A now derives from B",
                          provenance=[{"operation": "derive", "input_revision_ids": [b["revision_id"]]}])
    assert h.counts(db_path) == before
    assert h.head(store, a["page_id"]) == a["revision_id"]


def test_transitive_provenance_cycle_on_revise_is_rejected(store, abc, db_path):
    """A derived_from B (link), N derives from A (write provenance); B revised with input N
    would close B <- N <- A <- B."""
    a, b = abc[0], abc[1]
    store.link_pages(a["page_id"], "derived_from", b["page_id"])
    n = h.write(store, "project:rel", "N", provenance=[{"operation": "derive",
                                                         "input_revision_ids": [a["revision_id"]]}])
    before = h.counts(db_path)
    with raises_code("cycle"):
        store.revise_page(b["page_id"], b["revision_id"], content="B from N",
                          provenance=[{"operation": "derive", "input_revision_ids": [n["revision_id"]]}])
    assert h.counts(db_path) == before
    assert h.head(store, b["page_id"]) == b["revision_id"]


def test_written_derivations_block_the_reverse_edge(store, abc, db_path):
    """A write whose relations and provenance both point at A is legal; afterwards A can
    derive from N neither by revise provenance nor by a derivation link."""
    a = abc[0]
    n = store.write_page("project:rel", content="N", relations=[{"relation_type": "summarizes", "to": a["page_id"]}],
                         provenance=[{"operation": "derive", "input_revision_ids": [a["revision_id"]]}])
    assert n["created"] is True
    # and now A cannot derive from N
    before = h.counts(db_path)
    with raises_code("cycle"):
        store.revise_page(a["page_id"], a["revision_id"], content="A from N",
                          provenance=[{"operation": "derive", "input_revision_ids": [n["revision_id"]]}])
    with raises_code("cycle"):
        store.link_pages(a["page_id"], "aggregates", n["page_id"])
    assert h.counts(db_path) == before


@pytest.mark.parametrize("kind", ["contains", "related_to", "depends_on", "links_to"])
def test_non_derivation_cycles_are_allowed(store, abc, kind):
    a, b, c = (x["page_id"] for x in abc[:3])
    store.link_pages(a, kind, b)
    store.link_pages(b, kind, c)
    store.link_pages(c, kind, a)
    assert len(h.relations(store, a)["outgoing"]) >= 1


def test_unlinked_derivation_no_longer_blocks(store, abc):
    a, b = abc[0]["page_id"], abc[1]["page_id"]
    rel = store.link_pages(a, "derived_from", b)
    store.unlink(rel["relation_id"], "wrong direction")
    store.link_pages(b, "derived_from", a)
