"""Issue 12, authorization: a model client learns nothing outside its grants (pcp-core.md §2, §5)."""

from __future__ import annotations

import pytest

import pcpstore_helpers as h
from pcpstore_helpers import raises_code


# --- item 1: one grant matcher everywhere, case-sensitive, wildcard characters literal ---------------


@pytest.fixture
def hr_store(store):
    """A hidden PROJECT:HR page next to granted project:a pages, plus namespaces with LIKE wildcards."""
    pages = {
        "hr": h.write(store, "PROJECT:HR", "salary review walrusquill for the whole team",
                      facets={"title": "HR walrusquill"}),
        "a": h.write(store, "project:a", "alpha walrusquill notes"),
        "pct": h.write(store, "pro%ject:x", "percent walrusquill notes"),
        "under": h.write(store, "project_a:y", "underscore walrusquill notes"),
    }
    store.link_pages(pages["a"]["page_id"], "related_to", pages["hr"]["page_id"])
    return pages


@pytest.mark.parametrize("pattern, visible", [
    ("project:*", {"project:a"}),
    ("pro%*", {"pro%ject:x"}),
    ("project_*", {"project_a:y"}),
    ("Project:*", set()),
    ("PROJECT:hr", set()),
])
def test_grant_patterns_match_one_way_everywhere(store, hr_store, pattern, visible):
    from store.access import pattern_matches

    m = h.model(store, {pattern: h.READER | {"link"}})
    scopes = {s["namespace"] for s in h.all_scopes(m)}
    assert scopes == visible
    namespaces = ["PROJECT:HR", "project:a", "pro%ject:x", "project_a:y"]
    assert {ns for ns in namespaces if pattern_matches(pattern, ns)} == visible
    for mode in ("auto", "text", "exact", "temporal"):
        hits = h.all_hits(m, "" if mode == "temporal" else "walrusquill", mode=mode)
        assert {x["namespace"] for x in hits} == visible, (mode, hits)
    listed = m.list_pages(status="all")["pages"]
    assert {p["namespace"] for p in listed} == visible
    text = h.dumps([h.all_hits(m, "walrusquill"), listed, h.all_scopes(m)])
    assert hr_store["hr"]["page_id"] not in text and "salary" not in text
    if "project:a" in visible:
        assert h.relations(m, hr_store["a"]["page_id"])["outgoing"] == []
        graph = h.all_hits(m, hr_store["a"]["page_id"], mode="graph")
        assert hr_store["hr"]["page_id"] not in h.dumps(graph)


# --- item 2: a relation whose other end is hidden never makes a page match a relation_types filter --------


def test_relation_type_filter_ignores_relations_to_hidden_pages(store, two_scopes, as_model):
    a1, a2, b1 = two_scopes["a1"], two_scopes["a2"], two_scopes["b1"]
    store.link_pages(a1["page_id"], "contradicts", b1["page_id"])  # the far end is hidden from the model
    store.link_pages(b1["page_id"], "supports", a2["page_id"])  # incoming from a hidden page
    m = as_model({"project:a": h.READER})
    for rtype in ("contradicts", "supports"):
        for mode in ("auto", "exact", "temporal"):
            query = "" if mode == "temporal" else ("zanzibar" if rtype == "contradicts" else "harbor")
            assert h.all_hits(m, query, mode=mode, filters={"relation_types": [rtype]}) == [], (rtype, mode)
        owner = h.hit_ids(store, "", mode="temporal", filters={"relation_types": [rtype]})
        assert owner  # the owner, who sees both ends, still finds them
    store.link_pages(a1["page_id"], "contradicts", a2["page_id"])
    visible = h.hit_ids(m, "", mode="temporal", filters={"relation_types": ["contradicts"]})
    assert visible == {a1["page_id"], a2["page_id"]}


# --- item 3: unlink never names a hidden end ---------------------------------------------------------------


def test_unlink_with_a_hidden_end_names_no_hidden_page(store, two_scopes, as_model):
    a1, b1 = two_scopes["a1"], two_scopes["b1"]
    outgoing = store.link_pages(a1["page_id"], "related_to", b1["page_id"])
    incoming = store.link_pages(b1["page_id"], "related_to", a1["page_id"])
    m = as_model({"project:a": h.READER | {"link"}})
    for rel in (outgoing, incoming):
        with raises_code("not_found") as box:
            m.unlink(rel["relation_id"], "tidy up")
        text = box.value.message
        assert b1["page_id"] not in text and b1["revision_id"] not in text and "project:b" not in text
        assert rel["relation_id"] in text  # the same answer as for a relation that does not exist
    with raises_code("not_found") as missing:
        m.unlink("rel_01ARZ3NDEKTSV4RRFFQ69G5FAV", "tidy up")
    assert h.mask_ids(missing.value.message) == h.mask_ids(box.value.message)
    assert len(h.relations(store, a1["page_id"])["outgoing"]) == 1  # nothing was retracted


# --- item 4: acyclicity never reveals a derivation path through hidden pages ----------------------------


def test_a_cycle_through_hidden_pages_is_refused_without_revealing_it(store, two_scopes, as_model):
    a1, a2, b1 = two_scopes["a1"], two_scopes["a2"], two_scopes["b1"]
    store.link_pages(b1["page_id"], "derived_from", a1["page_id"])
    store.link_pages(a2["page_id"], "derived_from", b1["page_id"])  # a2 <- b1 <- a1, through hidden b1
    m = as_model({"project:a": h.READER | {"link", "revise"}})
    before = h.relations(store, a1["page_id"])
    with raises_code("forbidden") as box:
        m.link_pages(a1["page_id"], "derived_from", a2["page_id"])
    head = h.head(store, a1["page_id"])
    with raises_code("forbidden") as box2:
        m.revise_page(a1["page_id"], head, content="a1 again, now from a2",
                      provenance=[{"operation": "derive", "input_revision_ids": [a2["revision_id"]]}])
    for exc in (box.value, box2.value):
        assert exc.code != "cycle"
        for hidden in (b1["page_id"], b1["revision_id"], "project:b", a1["page_id"], a2["page_id"]):
            assert hidden not in exc.message
    assert h.mask_ids(box.value.message) == h.mask_ids(box2.value.message)
    assert h.relations(store, a1["page_id"]) == before and h.head(store, a1["page_id"]) == head
    # the owner, who sees the whole path, gets the cycle error; a visible cycle is a cycle for the model too
    with raises_code("cycle"):
        store.link_pages(a1["page_id"], "derived_from", a2["page_id"])
    a3 = h.write(store, "project:a", "third alpha page")
    m.link_pages(a3["page_id"], "derived_from", a1["page_id"])
    with raises_code("cycle"):
        m.link_pages(a1["page_id"], "derived_from", a3["page_id"])


# --- item 5: doctor and deletion receipts are the owner's ---------------------------------------------


def test_doctor_and_receipts_are_owner_only(store, two_scopes, as_model):
    store.delete_page(two_scopes["b2"]["page_id"], reason="HR asked me to remove the salary notes")
    m = as_model({"*": h.READER | {"audit"}})
    for call in (m.doctor, m.list_receipts):
        with raises_code("forbidden") as box:
            call()
        assert str(store.path) not in box.value.message and "salary" not in box.value.message
    denied = [e for e in h.all_audit(store) if e["principal_id"] == "test-client"]
    assert {e["operation"] for e in denied if e["decision"] == "denied"} >= {"doctor", "list_receipts"}
    assert store.doctor()["path"] == str(store.path)
    assert store.list_receipts()["receipts"][0]["reason"].startswith("HR asked")


# --- item 6: a hidden provenance input stays invisible once erased ------------------------------------


def test_erased_hidden_input_never_appears_in_provenance(store, two_scopes, as_model):
    a1, b1 = two_scopes["a1"], two_scopes["b1"]
    d = h.write(store, "project:a", "synthesis of a1 and b1",
                provenance=[{"operation": "derive", "input_revision_ids": [a1["revision_id"], b1["revision_id"]]}])
    m = as_model({"project:a": h.READER})
    receipt = store.delete_page(b1["page_id"], reason="erase b1")
    for projections in (("manifest",), ("manifest", "payload", "relations", "history")):
        text = h.dumps(m.read_pages([d["page_id"]], projections=list(projections)))
        assert b1["revision_id"] not in text and receipt["receipt_id"] not in text
        assert "input_deleted" not in text
        assert a1["revision_id"] in text
    graph = h.dumps(h.all_hits(m, d["page_id"], mode="graph"))
    assert b1["revision_id"] not in graph and receipt["receipt_id"] not in graph
    owner = h.env(store, d["page_id"])
    assert owner["provenance"][0]["input_deleted"] == {b1["revision_id"]: receipt["receipt_id"]}


# --- item 7: a chat import confirms nothing about hidden pages -------------------------------------------


def _chatgpt_export(path, texts):
    mapping = {"root": {"id": "root", "message": None, "parent": None, "children": ["m1"]}}
    parent = "root"
    for i, text in enumerate(texts, 1):
        node = f"m{i}"
        mapping[node] = {"id": node, "parent": parent, "children": [f"m{i + 1}"] if i < len(texts) else [],
                         "message": {"id": node, "author": {"role": "user" if i % 2 else "assistant"},
                                     "create_time": 1700000000 + i,
                                     "content": {"content_type": "text", "parts": [text]}}}
        parent = node
    conv = [{"id": "conv-hr-1", "conversation_id": "conv-hr-1", "title": "Salary talk", "create_time": 1700000000,
             "mapping": mapping, "current_node": parent}]
    path.write_text(__import__("json").dumps(conv), encoding="utf-8")
    return path


def test_chat_import_confirms_nothing_hidden(store, tmp_path, as_model, db_path):
    from store import Store
    from store.adapters import import_chatgpt

    secret = ["What should Dana's raise be?", "Dana gets 4 percent."]
    store.write_page("PROJECT:HR", content="placeholder")
    import_chatgpt(store, _chatgpt_export(tmp_path / "hr.json", secret), namespace="PROJECT:HR")
    m = as_model({"project:a": {"ingest", "manage_scope", "read", "search", "link"}})
    fresh = Store.open(tmp_path / "fresh.db").with_session(m.session)
    outcomes = []
    for name, guess in (("right", secret), ("wrong", ["What should Dana's raise be?", "Dana gets 9 percent."])):
        for target in (m, fresh):
            report = import_chatgpt(target, _chatgpt_export(tmp_path / f"{name}.json", guess), namespace="project:a")
            outcomes.append(report.to_dict())
            assert "PROJECT:HR" not in h.dumps(report.to_dict())
    # the same outcomes as in a store that never held the hidden conversation
    strip = [{k: v for k, v in o.items() if k not in ("skipped", "import_id")} for o in outcomes]
    assert strip[0] == strip[1] and strip[2] == strip[3], strip
    assert strip[0]["created"] == 3 and strip[0]["unchanged"] == 0
    assert strip[2]["revised"] == 1
    owner_hr = [x for x in h.all_hits(store, "Dana", mode="exact") if x["namespace"] == "PROJECT:HR"]
    assert {x["snippet"] for x in owner_hr} >= {"Dana gets 4 percent."}  # the owner's pages are untouched
    again = import_chatgpt(m, _chatgpt_export(tmp_path / "wrong.json", ["What should Dana's raise be?",
                                                                        "Dana gets 9 percent."]), namespace="project:a")
    assert again.unchanged == 3 and again.created == 0  # the model's own copy is found again
    fresh.close()


# --- item 8: a model session writes its own identity --------------------------------------------------


def test_model_events_carry_the_sessions_own_identity(store, tmp_path, as_model):
    import json

    from store.adapters.events import import_events

    m = as_model({"project:a": {"ingest", "manage_scope", "read"}}, client_id="client-a")
    direct = m.ingest_event({"content": "spoofed message", "actor_id": "client-b"}, "project:a", "k1")
    lines = tmp_path / "events.jsonl"
    lines.write_text(json.dumps({"idempotency_key": "k2", "content": "spoofed line", "actor_id": "client-b"}) + "\n",
                     encoding="utf-8")
    import_events(m, lines, namespace="project:a")
    written = [direct["page_id"], *(x["page_id"] for x in h.all_hits(store, "spoofed line", mode="exact"))]
    assert len(written) == 2
    for page_id in written:
        env = h.env(store, page_id)
        assert env["created_by"] == {"actor_type": "model", "actor_id": "client-a"}
        assert {(p["actor_type"], p["actor_id"]) for p in env["provenance"]} == {("model", "client-a")}
    owner = store.ingest_event({"content": "relayed", "actor_id": "alice"}, "project:a", "k3")
    assert h.env(store, owner["page_id"])["created_by"]["actor_id"] == "alice"  # the owner may say who spoke


# --- item 10: a model's relation never changes a page's status ------------------------------------------


def test_a_models_supersedes_waits_for_the_owner(store, two_scopes, as_model):
    a1, a2 = two_scopes["a1"], two_scopes["a2"]
    m = as_model({"project:a": h.READER | {"link"}})
    for target in (store, m):
        with raises_code("invalid"):
            target.link_pages(a1["page_id"], "supersedes", a1["page_id"])
        with raises_code("invalid"):
            target.link_pages(a1["revision_id"], "related_to", a1["page_id"])
    rel = m.link_pages(a2["page_id"], "supersedes", a1["page_id"])
    assert rel["created"] is True
    again = m.link_pages(a2["page_id"], "supersedes", a1["page_id"])
    assert again["created"] is False and again["relation_id"] == rel["relation_id"]
    assert len(h.relations(store, a1["page_id"])["incoming"]) == 1
    # nobody's default search loses the page, the owner's included; its status stays active
    for who in (store, m):
        assert a1["page_id"] in h.hit_ids(who, "zanzibar")
        assert h.env(who, a1["page_id"])["lifecycle_status"] == "active"
    assert a1["page_id"] in {p["page_id"] for p in store.list_pages()["pages"]}
    # the owner's review list holds it beside tombstone recommendations
    m2 = as_model({"project:a": h.READER | {"write"}}, client_id="other")
    m2.recommend_tombstone(a2["page_id"], "duplicate")
    review = store.list_recommendations()["recommendations"]
    assert {r["action"] for r in review} == {"tombstone", "supersedes"}
    item = next(r for r in review if r["action"] == "supersedes")
    assert (item["page_id"], item["from_page_id"], item["relation_id"]) == (a1["page_id"], a2["page_id"], rel["relation_id"])
    assert item["actor"] == {"actor_type": "model", "actor_id": "test-client"}
    # confirming it is the owner's own supersedes: now the page is superseded, and the item leaves the list
    own = store.link_pages(item["from_page_id"], "supersedes", item["page_id"])
    assert own["created"] is True and own["relation_id"] != rel["relation_id"]
    assert h.env(store, a1["page_id"])["lifecycle_status"] == "superseded"
    assert a1["page_id"] not in h.hit_ids(store, "zanzibar")
    assert [r["action"] for r in store.list_recommendations()["recommendations"]] == ["tombstone"]
    assert store.link_pages(a2["page_id"], "supersedes", a1["page_id"])["created"] is False
    # retracting the model's relation changes nothing; retracting the owner's brings the page back
    store.unlink(rel["relation_id"], "not needed")
    assert h.env(store, a1["page_id"])["lifecycle_status"] == "superseded"
    store.unlink(own["relation_id"], "changed my mind")
    assert h.env(store, a1["page_id"])["lifecycle_status"] == "active"


def test_erasing_a_models_superseding_page_leaves_status_alone(store, two_scopes, as_model):
    a1, a2 = two_scopes["a1"], two_scopes["a2"]
    m = as_model({"project:a": h.READER | {"link"}})
    m.link_pages(a2["page_id"], "supersedes", a1["page_id"])
    store.delete_page(a2["page_id"], reason="erase")
    assert h.env(store, a1["page_id"])["lifecycle_status"] == "active"
    assert a1["page_id"] in h.hit_ids(store, "zanzibar")
