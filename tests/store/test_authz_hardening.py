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
