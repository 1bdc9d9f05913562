"""pcp-core.md §4 read_pages `offset` / `next_offset`: long content read whole in parts; locators are objects."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st_

import pcpstore_helpers as h
from pcpstore_helpers import raises_code


def read_whole(store, rid: str, budget: int) -> tuple[str, int]:
    """The content read part by part from next_offset until it is None; returns it and the number of reads."""
    parts, offset, calls = [], None, 0
    while True:
        item = store.read_pages([rid], max_chars=budget, **({} if offset is None else {"offset": offset}))
        item = item["results"][0]
        parts.append(item["revision"]["payload"]["content"])
        calls += 1
        assert item["offset"] == (offset or 0)
        offset = item["next_offset"]
        assert item["truncated"] is (offset is not None)
        if offset is None:
            return "".join(parts), calls
        assert offset == item["offset"] + len(parts[-1])


def test_a_950000_character_page_is_read_whole_in_parts(store):
    text = "".join(f"line {i:06d} 紧致性 compact\n" for i in range(40_000))[:950_000]
    page = h.write(store, "project:long", text)
    first = store.read_pages([page["page_id"]])["results"][0]
    assert first["truncated"] is True and first["next_offset"] == 64_000 and first["content_chars"] == 950_000
    whole, calls = read_whole(store, page["revision_id"], 64_000)
    assert whole == text and calls == 15


TEXT = st_.text(st_.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=300)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=TEXT, budget=st_.integers(min_value=1, max_value=80))
def test_parts_join_to_the_content_for_any_text_and_budget(store, text, budget):
    page = h.write(store, "project:parts", text or "x", media_type="text/plain")
    whole, _ = read_whole(store, page["revision_id"], budget)
    assert whole == (text or "x")


def test_offset_takes_one_id_and_stays_inside_the_content(store):
    a, b = h.write(store, "project:o", "alpha"), h.write(store, "project:o", "beta")
    with raises_code("invalid"):
        store.read_pages([a["page_id"], b["page_id"]], offset=1)
    with raises_code("invalid"):
        store.read_pages([a["page_id"]], offset=6)
    for bad in (-1, True, "2"):
        with raises_code("invalid"):
            store.read_pages([a["page_id"]], offset=bad)
    end = store.read_pages([a["page_id"]], offset=5)["results"][0]
    assert end["revision"]["payload"]["content"] == "" and end["next_offset"] is None
    tail = store.read_pages([a["page_id"]], offset=2)["results"][0]
    assert tail["revision"]["payload"]["content"] == "pha" and tail["truncated"] is False


def test_a_new_locator_must_be_an_object(store):
    with raises_code("invalid"):
        store.write_page("project:l", content="x", source_refs=[{"uri": "file:///a.md", "locator": "L1-L3"}])
    ok = store.write_page("project:l", content="x", source_refs=[{"uri": "file:///a.md", "locator": {"line": 3}}])
    assert h.env(store, ok["page_id"])["source_refs"][0]["locator"] == {"line": 3}


@pytest.mark.parametrize("legacy", ["L1-L3", 7, ["a", 1]])
def test_a_locator_an_older_pcp_kept_as_text_reads_as_an_object(store, legacy):
    page = store.write_page("project:l", content="x", source_refs=[{"uri": "file:///a.md", "locator": {"k": 1}}])
    db = store._db  # an older pcp stored any JSON value as the locator
    db.execute_sql("DROP TRIGGER revision_immutable")
    db.execute_sql("UPDATE revision SET source_refs = ? WHERE revision_id = ?",
                   (json.dumps([{"uri": "file:///a.md", "locator": legacy}]), page["revision_id"]))
    item = store.read_pages([page["page_id"]], projections=("manifest", "source_spans"))["results"][0]
    assert item["revision"]["source_refs"][0]["locator"] == {"value": legacy}
    assert item["source_spans"][0]["locator"] == {"value": legacy}
