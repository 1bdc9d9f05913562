"""Fixtures for the store contract tests (shared/spec/pcp-core.md, /tmp/store_api.md).

The store and db_path fixtures (a database file under tmp_path, never :memory:) are in tests/conftest.py."""

from __future__ import annotations

from pathlib import Path

import pytest

import pcpstore_helpers as h
from store import import_helper


@pytest.fixture
def as_model(store):
    """as_model(grants, client_id="test-client") -> a Store facade for a model client."""

    def make(grants, client_id="test-client"):
        return h.model(store, grants, client_id)

    return make


@pytest.fixture
def two_scopes(store):
    """Owner pages in project:a and project:b (b holds the best match for 'zanzibar quokka')."""
    a1 = h.write(store, "project:a", "Notes about zanzibar spice routes and trade winds.",
                 facets={"title": "Alpha zanzibar"})
    a2 = h.write(store, "project:a", "Second alpha page about harbor logistics.")
    b1 = h.write(
        store,
        "project:b",
        "zanzibar quokka zanzibar quokka zanzibar quokka: the secret beta plan.",
        facets={"title": "Beta zanzibar quokka"},
    )
    b2 = h.write(store, "project:b", "Another beta page, harbor logistics for beta.")
    return {"a1": a1, "a2": a2, "b1": b1, "b2": b2}


@pytest.fixture
def exported(tmp_path: Path) -> Path:
    """The export of test_restore_groups' store of 900 pages (revised, linked, archived, an erased page)."""
    from test_restore_groups import _build

    (tmp_path / "a").mkdir()
    out = tmp_path / "all.jsonl"
    with _build(tmp_path / "a" / "s.db") as st:
        st.export(out)
    return out


@pytest.fixture
def helpers(monkeypatch):
    """Every import helper started (store/import_helper.py), for any size, whatever the load, each answer waited
    for (so that its plans are the ones written): the list of them."""
    made: list[import_helper.ImportHelper] = []
    monkeypatch.setattr(import_helper, "HELPER_FROM_CHARS", 0)
    monkeypatch.setattr(import_helper, "WAIT", True)
    monkeypatch.setenv(import_helper.ENV, "1")
    start = import_helper.start

    def record(*args):
        helper = start(*args)
        if helper is not None:
            made.append(helper)
        return helper

    monkeypatch.setattr(import_helper, "start", record)
    return made
