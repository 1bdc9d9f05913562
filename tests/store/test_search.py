"""pcp-core.md §4 search_pages: modes, CJK, snippets, limits, paging, filters."""

from __future__ import annotations

import pytest

import pcpstore_helpers as h
from pcpstore_helpers import raises_code

CJK = "有限乘积保持紧致性的证明"


def _text_ids(st, q, **kw):
    return {x["page_id"] for x in st.search_pages(q, mode="text", limit=50, **kw)["hits"]}


# --------------------------------------------------------------------------- CJK


@pytest.fixture
def cjk(store):
    p = h.write(store, "project:math", f"第三章 {CJK}。")
    other = h.write(store, "project:math", "同伦论的基本群与覆叠空间。")
    latin = h.write(store, "project:math", "Completely unrelated english page about gardens.")
    return p, other, latin


@pytest.mark.parametrize("query", ["证明", "紧致性", "乘积", "有限乘积", CJK])
def test_cjk_text_search_finds_unsegmented_words(store, cjk, query):
    p, other, latin = cjk
    hits = store.search_pages(query, mode="text")["hits"]
    ids = [x["page_id"] for x in hits]
    assert p["page_id"] in ids, f"text search for {query!r} missed the page"
    assert other["page_id"] not in ids and latin["page_id"] not in ids
    assert all(x["matched_by"] == "text" for x in hits)


@pytest.mark.parametrize("query", ["拓扑空间", "同调", "紧致空间的乘积是紧致的"])
def test_cjk_query_not_in_page_does_not_match(store, cjk, query):
    p, other, latin = cjk
    assert p["page_id"] not in _text_ids(store, query)


def test_cjk_auto_mode(store, cjk):
    p, _, _ = cjk
    hits = store.search_pages("紧致性")["hits"]
    assert p["page_id"] in [x["page_id"] for x in hits]


@pytest.mark.encrypted
def test_mixed_latin_cjk(store):
    p = h.write(store, "project:math", f"Tychonoff 定理 proof: {CJK}, by Zorn's lemma.")
    q = h.write(store, "project:math", "A proof of something else entirely, no theorem names.")
    for query in ("Tychonoff 定理 proof", "定理", "Tychonoff", "tychonoff 证明", "Zorn"):
        assert p["page_id"] in _text_ids(store, query), query
    assert p["page_id"] not in _text_ids(store, "Urysohn 引理")
    assert q["page_id"] not in _text_ids(store, "Tychonoff 定理")


# --------------------------------------------------------------------------- modes


@pytest.mark.encrypted
def test_text_mode_ranks_and_reports_channel(store):
    a = h.write(store, "project:s", "lantern lantern lantern lantern about lanterns and lantern light")
    b = h.write(store, "project:s", "a single lantern mention among many other words " + "filler " * 50)
    c = h.write(store, "project:s", "nothing relevant here")
    hits = store.search_pages("lantern", mode="text")["hits"]
    ids = [x["page_id"] for x in hits]
    assert set(ids) == {a["page_id"], b["page_id"]}
    assert ids[0] == a["page_id"], "bm25 should rank the denser page first"
    assert all(x["matched_by"] == "text" for x in hits)
    assert c["page_id"] not in ids


def test_text_query_syntax_is_not_interpreted(store):
    h.write(store, "project:s", 'a "quoted" page with AND OR NOT NEAR words (and parens) * ^ :')
    for q in ['"unbalanced', "AND", "OR NOT", "(", "NEAR(", "a*b", "col:val", "^", "-minus", "'", "\\"]:
        res = store.search_pages(q, mode="text")  # must not raise an FTS syntax error
        assert isinstance(res["hits"], list)
        store.search_pages(q)  # auto too


def test_exact_mode_is_case_insensitive_substring(store):
    p = h.write(store, "project:s", "Hello WORLD Zebra crossing")
    h.write(store, "project:s", "another page")
    hits = store.search_pages("world zeb", mode="exact")["hits"]
    assert [x["page_id"] for x in hits] == [p["page_id"]]
    assert hits[0]["matched_by"] == "exact"
    assert store.search_pages("worldzeb", mode="exact")["hits"] == []
    assert [x["page_id"] for x in store.search_pages("ORLD ZEB", mode="exact")["hits"]] == [p["page_id"]]


def test_auto_empty_query_is_temporal(store):
    h.write(store, "project:s", "one")
    h.write(store, "project:s", "two")
    hits = store.search_pages("")["hits"]
    assert len(hits) == 2
    assert all(x["matched_by"] == "temporal" for x in hits)


def test_auto_falls_back_to_exact_when_text_finds_nothing(store):
    p = h.write(store, "project:s", "the word supercalifragilistic and the sign ~#@!%~ appear here")
    for q in ("califrag", "~#@!%~", "fragilis"):
        exact = [x["page_id"] for x in store.search_pages(q, mode="exact")["hits"]]
        assert exact == [p["page_id"]], q
        # Inside a word or punctuation only: text mode finds nothing (no error), auto falls back to exact.
        assert store.search_pages(q, mode="text")["hits"] == [], q
        auto = store.search_pages(q)["hits"]
        assert [x["page_id"] for x in auto] == [p["page_id"]], q
        assert auto[0]["matched_by"] == "exact", q


def test_auto_ranks_when_a_term_matches(store):
    p = h.write(store, "project:s", "meadow thistle cobalt")
    hits = store.search_pages("thistle")["hits"]
    assert [x["page_id"] for x in hits] == [p["page_id"]]
    assert hits[0]["matched_by"] == "auto"


def test_temporal_mode_orders_by_observed_then_created(store, clock):
    old = h.write(store, "project:t", "observed long ago", observed_at="2001-01-01T00:00:00.000Z")
    mid = h.write(store, "project:t", "no observed time")
    clock.advance()
    late = h.write(store, "project:t", "created last, but observed in 2010", observed_at="2010-01-01T00:00:00.000Z")
    future = h.write(store, "project:t", "observed in the future", observed_at="2999-01-01T00:00:00.000Z")
    hits = store.search_pages("", mode="temporal")["hits"]
    assert [x["page_id"] for x in hits] == [future["page_id"], mid["page_id"], late["page_id"], old["page_id"]]
    assert all(x["matched_by"] == "temporal" for x in hits)
    assert hits[0]["observed_at"] == "2999-01-01T00:00:00.000Z"


def test_temporal_mode_substring_filter(store, clock):
    a = h.write(store, "project:t", "alpha one")
    h.write(store, "project:t", "beta two")
    clock.advance()
    c = h.write(store, "project:t", "ALPHA three")
    hits = store.search_pages("alpha", mode="temporal")["hits"]
    assert [x["page_id"] for x in hits] == [c["page_id"], a["page_id"]]


@pytest.mark.encrypted
def test_graph_mode_neighbours_both_directions(store):
    a = h.write(store, "project:g", "hub page A")
    b = h.write(store, "project:g", "B derived from A",
                provenance=[{"operation": "derive", "input_revision_ids": [a["revision_id"]]}])
    c = h.write(store, "project:g", "C links to A")
    d = h.write(store, "project:g", "D contained in A")
    e = h.write(store, "project:g", "E unrelated")
    f = h.write(store, "project:g", "F is an input of A's revision")
    store.link_pages(c["page_id"], "related_to", a["page_id"])
    store.link_pages(a["page_id"], "contains", d["page_id"])
    a2 = store.revise_page(a["page_id"], a["revision_id"], content="hub page A v2",
                           provenance=[{"operation": "derive", "input_revision_ids": [f["revision_id"]]}])
    assert a2["page_id"] == a["page_id"]
    hits = store.search_pages(a["page_id"], mode="graph", limit=50)["hits"]
    ids = {x["page_id"] for x in hits}
    assert {b["page_id"], c["page_id"], d["page_id"], f["page_id"]} <= ids
    assert e["page_id"] not in ids
    assert all(x["matched_by"] == "graph" for x in hits)
    # by revision id: the first revision of A is the one B derives from and the links name
    hits = store.search_pages(a["revision_id"], mode="graph", limit=50)["hits"]
    ids = {x["page_id"] for x in hits}
    assert {b["page_id"], c["page_id"], d["page_id"]} <= ids
    assert e["page_id"] not in ids


def test_graph_mode_unknown_id(store):
    h.write(store, "project:g", "x")
    with raises_code("not_found"):
        store.search_pages("pg_01ARZ3NDEKTSV4RRFFQ69G5FAV", mode="graph")


def test_unknown_mode_is_unsupported(store):
    h.write(store, "project:s", "x")
    with raises_code("unsupported"):
        store.search_pages("x", mode="vector")
    with raises_code("unsupported"):
        store.search_pages("x", mode="semantic")


# --------------------------------------------------------------------------- hit shape, snippets


def test_hit_shape_and_no_payload(store):
    content = "first line title\n" + "body words " * 200 + " needleword " + "tail " * 100
    p = h.write(store, "project:s", content)
    f = h.write(store, "project:s", "another needleword page", facets={"title": "Facet Title"})
    hits = {x["page_id"]: x for x in store.search_pages("needleword", mode="text")["hits"]}
    for x in hits.values():
        assert h.HIT_KEYS <= set(x), sorted(h.HIT_KEYS - set(x))
        assert "payload" not in x and "content" not in x
        assert x["owner_id"] == store.owner_id
        assert x["namespace"] == "project:s"
        assert x["lifecycle_status"] == "active"
        assert h.is_ts(x["created_at"])
        assert isinstance(x["projections"], list) and x["projections"]
        assert h.is_id(x["revision_id"], "rev")
    assert hits[f["page_id"]]["title"] == "Facet Title"
    assert hits[p["page_id"]]["title"] == "first line title"
    assert h.dumps(hits).count("body words") < 200


def test_snippet_is_bounded_and_within_content(store):
    content = ("lorem ipsum dolor " * 300) + " targetterm " + ("sit amet consectetur " * 300)
    p = h.write(store, "project:s", content)
    for mode in ("text", "exact", "auto", "temporal"):
        q = "targetterm"
        hits = [x for x in store.search_pages(q, mode=mode)["hits"] if x["page_id"] == p["page_id"]]
        assert hits, mode
        x = hits[0]
        assert isinstance(x["snippet"], str) and 0 < len(x["snippet"]) <= 600
        start, end = x["range"]
        assert 0 <= start <= end <= len(content), (mode, x["range"])
        assert end - start <= 600
        if x["projection"] == "payload" and mode != "temporal":
            assert "targetterm" in content[start:end], f"{mode}: range {x['range']} does not cover the match"


def test_snippet_for_long_cjk_page(store):
    content = "前言。" * 500 + CJK + "。" + "后记。" * 500
    p = h.write(store, "project:s", content)
    x = [y for y in store.search_pages("紧致性", mode="text")["hits"] if y["page_id"] == p["page_id"]][0]
    assert len(x["snippet"]) <= 600
    start, end = x["range"]
    assert 0 <= start <= end <= len(content)
    if x["projection"] == "payload":
        assert "紧致性" in content[start:end]


def test_limit_default_and_clamp(store):
    store.write_pages_bulk(({"content": f"common token page {i}"} for i in range(60)), "project:many")
    assert len(store.search_pages("common")["hits"]) == 20
    assert len(store.search_pages("common", limit=100)["hits"]) == 50
    assert len(store.search_pages("common", limit=10_000, mode="temporal")["hits"]) == 50
    assert len(store.search_pages("", limit=7)["hits"]) == 7


@pytest.mark.parametrize("mode,query", [("text", "common"), ("temporal", ""), ("exact", "token page"),
                                        ("auto", "common")])
def test_cursor_paging_is_disjoint_and_complete(store, mode, query):
    store.write_pages_bulk(({"content": f"common token page {i}"} for i in range(45)), "project:many")
    seen: list[str] = []
    cursor = None
    pages = 0
    while True:
        res = store.search_pages(query, mode=mode, limit=10, cursor=cursor)
        assert len(res["hits"]) <= 10
        seen.extend(x["page_id"] for x in res["hits"])
        pages += 1
        cursor = res.get("next_cursor")
        if not cursor:
            break
        assert pages < 20
    assert len(seen) == len(set(seen)) == 45
    assert pages in (5, 6)


def test_head_revisions_only_unless_all_revisions(store):
    p = h.write(store, "project:s", "obsoleteword appears in the first version")
    r = store.revise_page(p["page_id"], p["revision_id"], content="freshword in the second version")
    assert store.search_pages("obsoleteword", mode="text")["hits"] == []
    assert store.search_pages("obsoleteword", mode="exact")["hits"] == []
    assert [x["revision_id"] for x in store.search_pages("freshword", mode="text")["hits"]] == [r["revision_id"]]
    hits = store.search_pages("obsoleteword", mode="text", all_revisions=True)["hits"]
    assert [x["revision_id"] for x in hits] == [p["revision_id"]]
    assert hits[0]["lifecycle_status"] == "superseded"


# --------------------------------------------------------------------------- filters


def test_filter_media_types_and_actor_types(store, as_model):
    a = h.write(store, "project:f", "filterword markdown by user")
    b = h.write(store, "project:f", "filterword plain by user", media_type="text/plain")
    m = as_model({"project:f": {"write", "search", "read"}})
    c = h.write(m, "project:f", "filterword markdown by model")
    ids = lambda **f: {x["page_id"] for x in store.search_pages("filterword", filters=f)["hits"]}  # noqa: E731
    assert ids() == {a["page_id"], b["page_id"], c["page_id"]}
    assert ids(media_types=["text/plain"]) == {b["page_id"]}
    assert ids(actor_types=["model"]) == {c["page_id"]}
    assert ids(actor_types=["user"]) == {a["page_id"], b["page_id"]}


def test_filter_created_window(store, clock):
    a = h.write(store, "project:f", "windowword a")
    t = clock.advance()
    clock.advance()
    b = h.write(store, "project:f", "windowword b")
    after = {x["page_id"] for x in store.search_pages("windowword", filters={"created_after": t})["hits"]}
    before = {x["page_id"] for x in store.search_pages("windowword", filters={"created_before": t})["hits"]}
    assert after == {b["page_id"]} and before == {a["page_id"]}
    with raises_code("invalid"):
        store.search_pages("windowword", filters={"created_after": "last tuesday"})


def test_filter_relation_types(store):
    a = h.write(store, "project:f", "relword a")
    b = h.write(store, "project:f", "relword b")
    c = h.write(store, "project:f", "relword c")
    store.link_pages(a["page_id"], "contradicts", b["page_id"])
    ids = {x["page_id"] for x in store.search_pages("relword", filters={"relation_types": ["contradicts"]})["hits"]}
    assert c["page_id"] not in ids
    assert ids and ids <= {a["page_id"], b["page_id"]}


def test_unknown_lifecycle_filter_is_invalid(store):
    with raises_code("invalid"):
        store.search_pages("x", filters={"lifecycle_status": ["sleeping"]})


def test_all_revisions_default_statuses_exclude_tombstoned(store):
    a = h.write(store, "project:ar", "allrevword a v1")
    store.revise_page(a["page_id"], a["revision_id"], content="allrevword a v2")
    b = h.write(store, "project:ar", "allrevword b")
    store.archive_page(b["page_id"], "old")
    c = h.write(store, "project:ar", "allrevword c")
    store.tombstone_page(c["page_id"], "withdrawn")
    hits = h.all_hits(store, "allrevword", mode="text", all_revisions=True)
    revs = {x["revision_id"] for x in hits}
    assert a["revision_id"] in revs, "superseded revisions are searchable with all_revisions"
    assert b["revision_id"] in revs, "archived pages are searchable with all_revisions"
    assert c["revision_id"] not in revs and c["page_id"] not in {x["page_id"] for x in hits}


def test_write_pages_bulk(store):
    calls = []
    res = store.write_pages_bulk(({"content": f"bulkword {i}", "facets": {"title": f"B{i}"}} for i in range(5)),
                                 "project:bulk", batch_size=2, progress=lambda d, t=None: calls.append(d))
    assert res["created"] == 5
    hits = h.all_hits(store, "bulkword", mode="text")
    assert len(hits) == 5
    assert {x["title"] for x in hits} == {f"B{i}" for i in range(5)}
    bulk_events = [e for e in h.all_audit(store) if "bulk" in e["operation"]]
    assert len(bulk_events) == 3, "one audit event per batch"
    assert calls, "progress callback never called"
