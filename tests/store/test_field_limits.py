"""Limits on every field (issue 12 item 24): stated in LIMITS, refused as `limit`, never echoed back whole."""

from __future__ import annotations

import pytest

from store import LIMITS, LimitExceeded, PcpError

MB = 1_000_000
BIG = "x" * MB


def _refused(call) -> PcpError:
    with pytest.raises(LimitExceeded) as caught:
        call()
    assert len(caught.value.message) < 300  # the input is never echoed back whole
    return caught.value


def test_the_field_limits_are_stated_in_describe_capabilities(store):
    limits = store.describe_capabilities()["limits"]
    for key in ("max_title_chars", "max_summary_chars", "max_keywords", "max_keyword_chars", "max_facets_chars",
                "media_type_chars", "max_reason_chars", "max_query_chars", "max_source_refs", "max_uri_chars"):
        assert limits[key] == LIMITS[key]


@pytest.mark.parametrize("facets", [{"title": BIG}, {"summary": BIG}, {"keywords": ["k"] * 100_000},
                                    {"keywords": [BIG]}, {"notes": BIG}])
def test_oversized_facets_are_refused(store, facets):
    _refused(lambda: store.write_page("project:a", content="x", facets=facets))
    assert store.list_pages()["pages"] == []


def test_oversized_media_type_uri_and_reason_are_refused(store):
    _refused(lambda: store.write_page("project:a", content="x", media_type=BIG))
    _refused(lambda: store.write_page("project:a", content="x", source_refs=[{"uri": BIG}]))
    _refused(lambda: store.write_page("project:a", content="x", source_refs=[{"uri": "u", "media_type": BIG}]))
    _refused(lambda: store.write_page("project:a", content="x", source_refs=[{"uri": f"u{i}"} for i in range(300)]))
    page = store.write_page("project:a", content="x")
    _refused(lambda: store.archive_page(page["page_id"], BIG))
    _refused(lambda: store.suppress_pages([page["page_id"]], "task:1", reason=BIG))
    assert store.read_pages([page["page_id"]])["results"][0]["revision"]["lifecycle_status"] == "active"


def test_a_long_query_is_refused_before_it_runs(store):
    from store import validate

    store.write_page("project:a", content="x")
    _refused(lambda: validate.query("word " * 300_000))
    _refused(lambda: store.bundle(query="word " * 300_000))


@pytest.mark.parametrize("call", [
    lambda st: st.read_pages(["pg_" + "A" * MB]),
    lambda st: st.search_pages("x", filters={"created_after": "y" * MB}),
    lambda st: st.write_page("project:a", content="x", provenance=[{"operation": "o" * MB}]),
    lambda st: st.list_pages(order="o" * MB),
])
def test_errors_cut_echoed_input_to_a_short_prefix(store, call):
    with pytest.raises(PcpError) as caught:
        result = call(store)
        error = result["results"][0]["error"]  # read_pages reports per id
        raise PcpError(error["message"], error["code"])
    assert len(caught.value.message) < 300
