"""pcp-core.md §4 describe_capabilities: truthful; everything else is unsupported."""

from __future__ import annotations

import pytest

import pcpstore_helpers as h
from pcpstore_helpers import raises_code


def test_capabilities_document(store):
    caps = store.describe_capabilities()
    assert caps["protocol_version"] == "0.4.0-draft"
    assert set(caps["search_modes"]) >= h.SEARCH_MODES
    assert set(caps["projections"]) >= h.PROJECTIONS
    assert set(caps["relation_types"]) >= h.RECOMMENDED_RELATION_TYPES
    flags = caps["flags"]
    for f in ("event_ingest", "revision_conflicts", "durable_deletion", "suppression", "access_sessions",
              "audit_log"):
        assert flags.get(f) is True, f
    limit_values = set()
    for v in caps["limits"].values():
        if isinstance(v, (int, float)):
            limit_values.add(v)
    for expected in (50, 20, 64_000, 1_000_000):
        assert expected in limit_values, f"limit {expected} not published: {caps['limits']}"


def test_capabilities_are_json_ready(store):
    import json

    json.dumps(store.describe_capabilities())


def test_every_advertised_search_mode_works(store):
    a = h.write(store, "project:cap", "capword alpha")
    b = h.write(store, "project:cap", "capword beta")
    store.link_pages(a["page_id"], "related_to", b["page_id"])
    for mode in store.describe_capabilities()["search_modes"]:
        q = a["page_id"] if mode == "graph" else ("" if mode == "temporal" else "capword")
        hits = store.search_pages(q, mode=mode)["hits"]
        assert hits, f"advertised mode {mode!r} found nothing"


def test_every_advertised_projection_works(store):
    a = h.write(store, "project:cap", "capword", source_refs=[{"uri": "file:///x"}], facets={"title": "t"})
    for proj in store.describe_capabilities()["projections"]:
        res = h.read1(store, a["page_id"], [proj])
        assert "error" not in res
        if proj in ("relations", "history", "source_spans", "facets", "lifecycle"):
            assert proj in res, proj
        else:
            assert "revision" in res


@pytest.mark.parametrize("mode", ["vector", "semantic", "hybrid", "fuzzy", ""])
def test_unadvertised_mode_is_unsupported(store, mode):
    caps = store.describe_capabilities()
    if mode in caps["search_modes"]:
        pytest.skip(f"{mode} is advertised")
    h.write(store, "project:cap", "x")
    with raises_code("unsupported"):
        store.search_pages("x", mode=mode)


@pytest.mark.parametrize("proj", ["embedding", "summary", "raw", "tokens"])
def test_unadvertised_projection_is_unsupported(store, proj):
    caps = store.describe_capabilities()
    if proj in caps["projections"]:
        pytest.skip(f"{proj} is advertised")
    a = h.write(store, "project:cap", "x")
    with raises_code("unsupported"):
        store.read_pages([a["page_id"]], projections=[proj])


def test_advertised_limits_are_enforced(store):
    store.write_pages_bulk(({"content": f"limword {i}"} for i in range(55)), "project:cap")
    assert len(store.search_pages("limword", limit=1000)["hits"]) == 50


def test_doctor(store):
    h.write(store, "project:cap", "x")
    d = store.doctor()
    assert d["integrity"] == "ok"
    assert tuple(int(x) for x in str(d["sqlite_version"]).split(".")[:2]) >= (3, 42)
    assert isinstance(d["counts"], dict)
