"""Issue 11 points 3 and 4 through the Python API: observed_after / observed_before filters, and hits a
model can use without a second call (date, highlights inside the snippet, each on a query word)."""

from __future__ import annotations

import pytest
from search_helpers import check_hit_shape

from store import Invalid


@pytest.fixture
def dated(store, clock):
    """Pages that happened at known times (observed_at), one without (its date is when it was stored)."""
    pages = {
        "march": store.write_page("work:notes", content="Decision: we decided to ship the release in March.",
                                  observed_at="2025-03-14T10:00:00Z"),
        "april": store.write_page("work:notes", content="Decision: we decided to delay the release in April.",
                                  observed_at="2025-04-02T09:00:00Z"),
        "jan": store.write_page("work:notes", content="Decision: we decided on the release plan in January.",
                                observed_at="2025-01-10T12:00:00Z"),
        "stored": store.write_page("work:notes", content="Decision: we decided the release owner today."),
        "cjk": store.write_page("project:math", content="此前对有限乘积紧致性的证明讨论……用管引理。",
                                observed_at="2025-03-20T09:30:00Z"),
    }
    return pages


def ids(result):
    return {h["page_id"] for h in result["hits"]}


@pytest.mark.parametrize("mode", ["auto", "text", "exact", "temporal"])
def test_observed_filters_bound_when_things_happened(store, dated, mode):
    query = "" if mode == "temporal" else ("decided release" if mode != "exact" else "decided")
    march = store.search_pages(query, mode=mode, filters={"observed_after": "2025-03-01T00:00:00Z",
                                                           "observed_before": "2025-04-01T00:00:00Z"})
    expected = {dated["march"]["page_id"]} | ({dated["cjk"]["page_id"]} if mode == "temporal" else set())
    assert ids(march) == expected
    after = store.search_pages(query, mode=mode, filters={"observed_after": "2025-03-14T10:00:00Z"})
    # `after` is inclusive; a page without observed_at happened when it was stored (2026, the fixed clock)
    assert {dated["march"]["page_id"], dated["april"]["page_id"], dated["stored"]["page_id"]} <= ids(after)
    assert dated["jan"]["page_id"] not in ids(after)
    before = store.search_pages(query, mode=mode, filters={"observed_before": "2025-03-14T10:00:00Z"})
    assert dated["jan"]["page_id"] in ids(before)
    assert not ids(before) & {dated["march"]["page_id"], dated["april"]["page_id"], dated["stored"]["page_id"]}


def test_observed_filters_are_not_created_filters(store, dated):
    # every page was stored in 2026 (the fixed clock): the created filters cannot tell March 2025 from January
    created = store.search_pages("decided release", filters={"created_before": "2026-01-01T00:00:00Z"})
    assert created["hits"] == []
    observed = store.search_pages("decided release", filters={"observed_before": "2026-01-01T00:00:00Z"})
    assert ids(observed) == {dated["march"]["page_id"], dated["april"]["page_id"], dated["jan"]["page_id"]}


def test_a_bad_observed_time_is_invalid(store, dated):
    with pytest.raises(Invalid):
        store.search_pages("release", filters={"observed_after": "last March"})


def test_hit_shape_date_and_highlights(store, dated, clock):
    for query in ("did we decide to ship the release in March?", "decided release", "此前是否讨论过有限乘积保持紧致性的证明路线？"):
        hits = store.search_pages(query)["hits"]
        assert hits, query
        for hit in hits:
            check_hit_shape(hit, query)
    march = next(h for h in store.search_pages("decided release")["hits"] if h["page_id"] == dated["march"]["page_id"])
    assert march["date"] == "2025-03-14T10:00:00.000Z" and march["observed_at"] == march["date"]
    stored = next(h for h in store.search_pages("decided release")["hits"] if h["page_id"] == dated["stored"]["page_id"])
    assert stored["observed_at"] is None and stored["date"] == stored["created_at"]
    # exact search marks the substring itself
    exact = store.search_pages("Decision", mode="exact")["hits"]
    assert exact and all(h["snippet"][a:b] == "Decision" for h in exact for a, b in h["highlights"])
