"""Fixtures for the handoff tests (shared spec handoff.md); data and helpers live in handoff_helpers.py.

Every test gets its own database file under tmp_path (never :memory:).
"""

from __future__ import annotations

import pytest

from handoff_helpers import FIXED_NOW, write_fixed_export


@pytest.fixture
def fixed_clock(monkeypatch):
    """Pin the store clock: the preamble's date (and every new record's time) is FIXED_NOW."""
    import store.ids

    monkeypatch.setattr(store.ids, "now", lambda: FIXED_NOW)
    return FIXED_NOW


@pytest.fixture
def db_path(tmp_path):
    d = tmp_path / "db"
    d.mkdir()
    return d / "s.db"


@pytest.fixture
def store(db_path):
    from store import Store

    st = Store.open(db_path)
    yield st
    st.close()


@pytest.fixture
def fixed_store(store, tmp_path, fixed_clock):
    """A store holding the fixed pages P1..P4 (ids, owner and times from the hand-made export)."""
    store.import_export(write_fixed_export(tmp_path / "fixed.jsonl"))
    return store
