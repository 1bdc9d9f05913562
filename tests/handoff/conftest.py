"""Fixtures for the handoff tests (shared spec handoff.md); data and helpers live in handoff_helpers.py.

The store and db_path fixtures (a database file under tmp_path, never :memory:) are in tests/conftest.py.
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
def fixed_store(store, tmp_path, fixed_clock):
    """A store holding the fixed pages P1..P4 (ids, owner and times from the hand-made export)."""
    store.import_export(write_fixed_export(tmp_path / "fixed.jsonl"))
    return store
