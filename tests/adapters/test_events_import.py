"""The JSON Lines events importer: one event per line through ingest_event."""

from __future__ import annotations

import json

import pytest

import import_helpers as h
from store import Invalid
from store.adapters import import_events

EVENTS = [
    {"idempotency_key": "evt-1", "namespace": "events:hooks", "content": "Build started for release 4.2.",
     "observed_at": "2026-01-31T09:30:00Z", "facets": {"title": "Build started", "keywords": ["ci"]}},
    {"idempotency_key": "evt-2", "namespace": "events:hooks", "source_refs": [{"uri": "file:///tmp/report.pdf"}],
     "media_type": "application/pdf"},
    {"idempotency_key": "evt-3", "content": "Deploy finished without errors.", "media_type": "text/plain"},
]


def write_lines(path, lines):
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_events_import_and_replay(store, tmp_path):
    path = write_lines(tmp_path / "events.jsonl",
                       [json.dumps(EVENTS[0]), "", "   ", json.dumps(EVENTS[1]), json.dumps(EVENTS[2])])
    calls = []
    report = import_events(store, path, namespace="events:default", progress=lambda *a: calls.append(a))
    assert report.source == "events"
    assert (report.events, report.created, report.unchanged) == (3, 3, 0)
    assert report.skipped == []
    assert calls == [(1, 3, "events"), (2, 3, "events"), (3, 3, "events")]
    assert h.page_count(store) == 3

    scopes = h.scopes(store)
    assert scopes["events:hooks"]["page_count"] == 2
    assert scopes["events:default"]["page_count"] == 1  # namespace= fills in a missing namespace

    hits = h.hits(store, ["events:hooks"], "release", "text")
    assert len(hits) == 1
    env = store.read_pages([hits[0]["page_id"]])["results"][0]["revision"]
    assert env["payload"] == {"media_type": "text/markdown", "content": "Build started for release 4.2."}
    assert env["facets"] == {"title": "Build started", "keywords": ["ci"]}
    assert env["observed_at"] == "2026-01-31T09:30:00.000Z"
    assert env["provenance"][0]["operation"] == "ingest"
    assert env["created_by"] == {"actor_type": "tool", "actor_id": "pcp-import-events"}
    default = h.pages(store, ["events:default"], ("manifest",))[0]["revision"]
    assert default["payload"]["media_type"] == "text/plain"
    pdf = [r for r in h.pages(store, ["events:hooks"], ("manifest",)) if r["revision"]["payload"] is None]
    assert pdf[0]["revision"]["source_refs"] == [{"uri": "file:///tmp/report.pdf"}]

    again = import_events(store, path, namespace="events:default")
    assert (again.events, again.created, again.unchanged) == (3, 0, 3)
    assert h.page_count(store) == 3


def test_malformed_line_fails_before_anything_is_written(store, tmp_path):
    path = write_lines(tmp_path / "broken.jsonl",
                       [json.dumps(EVENTS[0]), json.dumps(EVENTS[1]), '{"idempotency_key": "evt-x", "content": }'])
    with pytest.raises(Invalid) as err:
        import_events(store, path, namespace="events:default")
    assert "broken.jsonl" in err.value.message
    assert "line 3, column 41" in err.value.message
    assert h.page_count(store) == 0
    assert h.scopes(store) == {}


def test_rejected_events_are_skipped_with_their_line(store, tmp_path):
    path = write_lines(tmp_path / "mixed.jsonl", [
        json.dumps(EVENTS[0]),
        json.dumps({"idempotency_key": "bad-1", "namespace": "events:hooks", "content": "x", "colour": "red"}),
        json.dumps({"idempotency_key": "bad-2", "namespace": "events:hooks", "content": "x", "observed_at": "yesterday"}),
        json.dumps({"namespace": "events:hooks", "content": "no key"}),
        json.dumps({"idempotency_key": "bad-4", "content": "no namespace"}),
        json.dumps(["not", "an", "object"]),
        json.dumps({"idempotency_key": "bad-6", "namespace": "events:hooks"}),
        "",
        json.dumps(EVENTS[1]),
    ])
    report = import_events(store, path)
    assert (report.events, report.created, report.unchanged) == (2, 2, 0)
    assert [s["line"] for s in report.skipped] == [2, 3, 4, 5, 6, 7]
    assert [s["item"] for s in report.skipped] == [f"mixed.jsonl line {n}" for n in (2, 3, 4, 5, 6, 7)]
    reasons = [s["reason"] for s in report.skipped]
    assert reasons[0] == "Unknown event field colour."
    assert "observed_at" in reasons[1]
    assert "idempotency_key" in reasons[2]
    assert "namespace" in reasons[3]
    assert "object" in reasons[4]
    assert "payload or at least one source ref" in reasons[5]
    assert h.page_count(store) == 2

    # The same key with a different body is a conflict: reported, not overwritten.
    changed = dict(EVENTS[0], content="Something else.")
    path2 = write_lines(tmp_path / "conflict.jsonl", [json.dumps(changed)])
    report = import_events(store, path2)
    assert report.created == 0 and len(report.skipped) == 1
    assert "already used" in report.skipped[0]["reason"]


def test_missing_file(store, tmp_path):
    with pytest.raises(Invalid, match="no such file"):
        import_events(store, tmp_path / "none.jsonl")
