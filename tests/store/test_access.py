"""pcp-core.md §2: access sessions, "authorization before relevance", scope isolation."""

from __future__ import annotations

import pytest

import pcpstore_helpers as h
from pcpstore_helpers import raises_code

MISSING_PG = "pg_01ARZ3NDEKTSV4RRFFQ69G5FAV"
MISSING_REV = "rev_01ARZ3NDEKTSV4RRFFQ69G5FAV"


@pytest.fixture
def reader_a(as_model):
    return as_model({"project:a": h.READER})


def _b_ids(two_scopes):
    return {two_scopes["b1"]["page_id"], two_scopes["b1"]["revision_id"],
            two_scopes["b2"]["page_id"], two_scopes["b2"]["revision_id"]}


@pytest.mark.parametrize("mode", ["auto", "text", "exact", "temporal"])
def test_hidden_best_match_never_appears_in_hits(store, two_scopes, reader_a, mode):
    query = "" if mode == "temporal" else "zanzibar"
    # the owner sees the project:b page as a hit (it is the best match)
    owner_hits = h.all_hits(store, query, mode=mode)
    assert two_scopes["b1"]["page_id"] in {x["page_id"] for x in owner_hits}
    hits = h.all_hits(reader_a, query, mode=mode)
    assert {x["namespace"] for x in hits} <= {"project:a"}
    assert two_scopes["a1"]["page_id"] in {x["page_id"] for x in hits}
    text = h.dumps(hits)
    for i in _b_ids(two_scopes):
        assert i not in text
    assert "quokka" not in text and "secret beta" not in text


def test_hidden_scope_not_counted_when_limit_is_small(store, two_scopes, reader_a):
    """Ranking happens after filtering: with limit 1 the top hit is the visible page."""
    res = reader_a.search_pages("zanzibar quokka", mode="text", limit=1)
    # a query with 'quokka' (only in b) may give nothing; 'zanzibar' alone must give a1 first
    assert all(x["namespace"] == "project:a" for x in res["hits"])
    res = reader_a.search_pages("zanzibar", mode="text", limit=1)
    assert [x["page_id"] for x in res["hits"]] == [two_scopes["a1"]["page_id"]]
    if res.get("next_cursor"):
        nxt = reader_a.search_pages("zanzibar", mode="text", limit=1, cursor=res["next_cursor"])
        assert nxt["hits"] == []


def test_naming_an_ungranted_scope_is_forbidden(store, two_scopes, reader_a):
    with raises_code("forbidden") as box:
        reader_a.search_pages("zanzibar", scopes=["project:b"])
    with raises_code("forbidden"):
        reader_a.search_pages("zanzibar", scopes=["project:a", "project:b"])
    with raises_code("forbidden"):
        reader_a.search_pages("zanzibar", scopes=["project:does-not-exist"])
    assert "quokka" not in box.value.message
    # naming the granted scope works
    hits = reader_a.search_pages("zanzibar", scopes=["project:a"])["hits"]
    assert {x["namespace"] for x in hits} == {"project:a"}


def test_list_scopes_shows_only_granted_scopes(store, two_scopes, reader_a):
    scopes = h.all_scopes(reader_a)
    assert [s["namespace"] for s in scopes] == ["project:a"]
    s = scopes[0]
    assert s["page_count"] == 2
    assert set(s["permissions"]) == h.READER
    assert "project:b" not in h.dumps(scopes)
    # a query that only matches the hidden scope returns nothing
    assert reader_a.list_scopes(query="project:b")["scopes"] == []


def test_list_scopes_needs_permission(store, two_scopes, as_model):
    m = as_model({"project:a": {"search", "read"}})
    with raises_code("forbidden"):
        m.list_scopes()


def test_prefix_grant(store, two_scopes, as_model):
    h.write(store, "user:me", "private diary zanzibar")
    m = as_model({"project:*": h.READER})
    assert {s["namespace"] for s in h.all_scopes(m)} == {"project:a", "project:b"}
    assert {x["namespace"] for x in h.all_hits(m, "zanzibar")} == {"project:a", "project:b"}
    with raises_code("forbidden"):
        m.search_pages("zanzibar", scopes=["user:me"])


def test_graph_neighbours_are_filtered(store, two_scopes, reader_a):
    a1, b1, a2 = two_scopes["a1"], two_scopes["b1"], two_scopes["a2"]
    store.link_pages(a1["page_id"], "related_to", b1["page_id"])
    store.link_pages(b1["page_id"], "supports", a1["page_id"])
    store.link_pages(a1["page_id"], "related_to", a2["page_id"])
    h.write(store, "project:b", "derived in b from a1",
            provenance=[{"operation": "derive", "input_revision_ids": [a1["revision_id"]]}])
    owner = h.hit_ids(store, a1["page_id"], mode="graph")
    assert b1["page_id"] in owner and a2["page_id"] in owner
    hits = h.all_hits(reader_a, a1["page_id"], mode="graph")
    assert {x["page_id"] for x in hits} == {a2["page_id"]}
    text = h.dumps(hits)
    for i in _b_ids(two_scopes):
        assert i not in text


def test_graph_query_on_hidden_page_reveals_nothing(store, two_scopes, reader_a):
    b1 = two_scopes["b1"]
    store.link_pages(b1["page_id"], "related_to", two_scopes["a1"]["page_id"])
    # The same answer as for a page that does not exist: nothing says the page is there.
    with raises_code("not_found") as box:
        reader_a.search_pages(b1["page_id"], mode="graph")
    assert "project:b" not in box.value.message


def test_relation_lists_show_authorized_ends_only(store, two_scopes, reader_a):
    a1, b1, a2 = two_scopes["a1"], two_scopes["b1"], two_scopes["a2"]
    store.link_pages(a1["page_id"], "related_to", b1["page_id"])
    store.link_pages(b1["page_id"], "supports", a1["page_id"])
    keep = store.link_pages(a1["page_id"], "contains", a2["page_id"])
    own = h.relations(store, a1["page_id"])
    assert len(own["outgoing"]) == 2 and len(own["incoming"]) == 1
    rels = h.relations(reader_a, a1["page_id"])
    assert [r["relation_id"] for r in rels["outgoing"]] == [keep["relation_id"]]
    assert rels["incoming"] == []
    for r in rels["outgoing"]:
        assert h.RELATION_KEYS <= set(r)
    text = h.dumps(rels)
    for i in _b_ids(two_scopes):
        assert i not in text


def test_provenance_inputs_from_hidden_scopes_are_stripped(store, two_scopes, reader_a):
    a1, b1 = two_scopes["a1"], two_scopes["b1"]
    d = h.write(store, "project:a", "synthesis of a1 and b1",
                provenance=[{"operation": "derive",
                             "input_revision_ids": [a1["revision_id"], b1["revision_id"]]}])
    owner_ev = h.env(store, d["page_id"])
    assert b1["revision_id"] in h.dumps(owner_ev["provenance"])
    res = h.read1(reader_a, d["page_id"], list(h.PROJECTIONS))
    ev = [e for e in res["revision"]["provenance"] if e["operation"] == "derive"][0]
    assert ev["input_revision_ids"] == [a1["revision_id"]]
    text = h.dumps(res)
    for i in _b_ids(two_scopes):
        assert i not in text


def test_reading_a_hidden_id_looks_like_a_missing_id(store, two_scopes, reader_a):
    b1 = two_scopes["b1"]
    for hidden, missing in ((b1["page_id"], MISSING_PG), (b1["revision_id"], MISSING_REV)):
        with raises_code("not_found") as hid:
            reader_a.read_pages([hidden])
        with raises_code("not_found") as mis:
            reader_a.read_pages([missing])
        assert type(hid.value) is type(mis.value)
        assert h.mask_ids(hid.value.message) == h.mask_ids(mis.value.message)
        assert "project:b" not in hid.value.message and "quokka" not in hid.value.message
        # per-id errors in a mixed call look the same too
        res = reader_a.read_pages([two_scopes["a1"]["page_id"], hidden, missing])["results"]
        assert "error" not in res[0]
        e_hid, e_mis = res[1]["error"], res[2]["error"]
        assert e_hid["code"] == e_mis["code"] == "not_found"
        assert h.mask_ids(e_hid["message"]) == h.mask_ids(e_mis["message"])
        assert res[1]["requested_id"] == hidden and res[2]["requested_id"] == missing


def test_relations_never_grant_access(store, two_scopes, reader_a):
    a1, b1 = two_scopes["a1"], two_scopes["b1"]
    store.link_pages(a1["page_id"], "contains", b1["page_id"])
    with raises_code("not_found"):
        reader_a.read_pages([b1["page_id"]])
    hits = h.all_hits(reader_a, "quokka")
    assert hits == []


def test_model_cannot_link_to_hidden_page(store, two_scopes, as_model, db_path):
    m = as_model({"project:a": h.READER | {"link"}})
    before = h.counts(db_path)
    with raises_code("not_found") as box:
        m.link_pages(two_scopes["a1"]["page_id"], "related_to", two_scopes["b1"]["page_id"])
    assert "project:b" not in box.value.message
    assert h.counts(db_path) == before


def test_model_cannot_revise_hidden_page(store, two_scopes, as_model, db_path):
    m = as_model({"project:a": h.READER | {"revise", "write"}})
    b1 = two_scopes["b1"]
    before = h.counts(db_path)
    with raises_code("not_found"):
        m.revise_page(b1["page_id"], b1["revision_id"], content="overwritten")
    assert h.counts(db_path) == before
    assert h.content_of(store, b1["page_id"]).startswith("zanzibar quokka")


def test_derive_across_scopes_needs_its_grant(store, two_scopes, as_model, db_path):
    b1 = two_scopes["b1"]
    m = as_model({"project:a": h.READER | {"write"}, "project:b": h.READER})
    before = h.counts(db_path)
    with raises_code("forbidden"):
        h.write(m, "project:a", "uses b", provenance=[{"operation": "derive",
                                                       "input_revision_ids": [b1["revision_id"]]}])
    assert h.counts(db_path) == before
    m2 = as_model({"project:a": h.READER | {"write", "derive_across_scopes"}, "project:b": h.READER})
    r = h.write(m2, "project:a", "uses b", provenance=[{"operation": "derive",
                                                        "input_revision_ids": [b1["revision_id"]]}])
    assert b1["revision_id"] in h.dumps(h.env(store, r["page_id"])["provenance"])


# --------------------------------------------------------------------------- model limits


ALL = {"list_scopes", "search", "read", "audit", "write", "manage_scope", "revise", "link", "ingest",
       "suppress", "archive", "tombstone", "delete", "export", "derive_across_scopes"}


def test_all_permissions_constant():
    from store import ALL_PERMISSIONS

    assert set(ALL_PERMISSIONS) == ALL


def test_parse_grants():
    from store import AccessSession

    g = AccessSession.parse_grants(["project:alpha=search,read", "*=search"])
    assert {k: set(v) for k, v in g.items()} == {"project:alpha": {"search", "read"}, "*": {"search"}}
    with raises_code("invalid"):
        AccessSession.parse_grants(["project:alpha=search,teleport"])
    with raises_code("invalid"):
        AccessSession.parse_grants(["no-equals-sign"])


@pytest.mark.parametrize("op", ["plan_delete", "delete_page", "plan_delete_scope", "delete_scope"])
def test_model_can_never_delete(store, two_scopes, as_model, db_path, op):
    m = as_model({"*": ALL})
    a1 = two_scopes["a1"]
    before = h.snapshot(db_path)
    n_audit = h.audit_count(store)
    with raises_code("forbidden"):
        if op == "plan_delete":
            m.plan_delete(a1["page_id"])
        elif op == "delete_page":
            m.delete_page(a1["page_id"], "model wants it gone")
        elif op == "plan_delete_scope":
            m.plan_delete_scope("project:a")
        else:
            m.delete_scope("project:a", "model wants it gone")
    assert h.diff_snapshots(before, h.snapshot(db_path)) == []
    assert h.content_of(store, a1["page_id"]) is not None
    events = h.all_audit(store)
    assert len(events) == n_audit + 1
    ev = events[0]
    assert ev["decision"] == "denied"
    assert ev["principal_type"] == "model_client" and ev["principal_id"] == "test-client"
    assert "delete" in ev["operation"]


@pytest.mark.parametrize("op", ["tombstone_page", "untombstone_page"])
def test_model_can_never_tombstone(store, two_scopes, as_model, db_path, op):
    a1 = two_scopes["a1"]
    if op == "untombstone_page":
        store.tombstone_page(a1["page_id"], "owner withdrew it")
    m = as_model({"*": ALL})
    before = h.snapshot(db_path)
    with raises_code("forbidden"):
        getattr(m, op)(a1["page_id"], "model decision")
    assert h.diff_snapshots(before, h.snapshot(db_path)) == []
    assert h.all_audit(store, decision="denied")[0]["principal_id"] == "test-client"


def test_model_can_recommend_tombstone(store, two_scopes, as_model):
    a1 = two_scopes["a1"]
    m = as_model({"project:a": h.READER | {"tombstone"}})
    rec = m.recommend_tombstone(a1["page_id"], "duplicate of a2")
    assert rec["page_id"] == a1["page_id"]
    assert rec["status"] == "pending"
    assert rec["recommendation_id"]
    # a recommendation is not a tombstone
    assert h.env(store, a1["page_id"])["lifecycle_status"] == "active"
    assert a1["page_id"] in h.hit_ids(store, "zanzibar")


def test_tombstoned_page_needs_audit_to_read(store, two_scopes, as_model):
    a1 = two_scopes["a1"]
    store.tombstone_page(a1["page_id"], "withdrawn")
    assert h.env(store, a1["page_id"])["lifecycle_status"] == "tombstoned"
    m = as_model({"project:a": h.READER})
    with raises_code("not_found") as hid:
        m.read_pages([a1["page_id"]])
    with raises_code("not_found") as mis:
        m.read_pages([MISSING_PG])
    assert h.mask_ids(hid.value.message) == h.mask_ids(mis.value.message)
    auditor = as_model({"project:a": h.READER | {"audit"}})
    assert h.env(auditor, a1["page_id"])["lifecycle_status"] == "tombstoned"


@pytest.mark.parametrize(
    "perm,call",
    [
        ("link", lambda m, w: m.link_pages(w["a1"]["page_id"], "related_to", w["a2"]["page_id"])),
        ("suppress", lambda m, w: m.suppress_pages([w["a1"]["page_id"]], "task:x")),
        ("archive", lambda m, w: m.archive_page(w["a1"]["page_id"], "old")),
        ("ingest", lambda m, w: m.ingest_event({"content": "e"}, "project:a", "k")),
        ("audit", lambda m, w: m.audit_log()),
    ],
)
def test_model_operations_need_their_grant(store, two_scopes, as_model, db_path, perm, call):
    without = as_model({"project:a": h.READER | {"write"}})
    before = h.snapshot(db_path)
    with raises_code("forbidden"):
        call(without, two_scopes)
    assert h.diff_snapshots(before, h.snapshot(db_path)) == []
    with_grant = as_model({"project:a": h.READER | {perm}})
    call(with_grant, two_scopes)


def test_model_with_no_grants_can_describe_capabilities(store, as_model):
    m = as_model({})
    caps = m.describe_capabilities()
    assert caps["protocol_version"] == "0.4.0-draft"


def test_empty_scope_list_means_scopes_granted_for_this_operation(store, two_scopes, as_model):
    """search on a only; b is readable but not searchable: an empty scope list searches a only."""
    m = as_model({"project:a": {"search", "read"}, "project:b": {"read"}})
    hits = h.all_hits(m, "zanzibar")
    assert {x["namespace"] for x in hits} == {"project:a"}
    with raises_code("forbidden"):
        m.search_pages("zanzibar", scopes=["project:b"])
    # but b is readable by id
    assert h.env(m, two_scopes["b1"]["page_id"])["namespace"] == "project:b"


def test_tombstone_filter_needs_audit(store, two_scopes, as_model):
    a1 = two_scopes["a1"]
    store.tombstone_page(a1["page_id"], "withdrawn")
    m = as_model({"project:a": h.READER})
    # Without audit the filter is accepted but tombstoned pages stay out of the hits.
    hits = h.all_hits(m, "zanzibar", filters={"lifecycle_status": ["tombstoned"]})
    assert a1["page_id"] not in {x["page_id"] for x in hits}
    auditor = as_model({"project:a": h.READER | {"audit"}})
    hits = h.all_hits(auditor, "zanzibar", filters={"lifecycle_status": ["tombstoned"]})
    assert a1["page_id"] in {x["page_id"] for x in hits}
