"""Fixtures for the importer tests (store/adapters): a fresh store per test, the sample exports.

The sample exports live beside the repository checkout, in ../shared/data/exports
(SOURCES.md there says where each file comes from and what is unusual about it)."""

from __future__ import annotations

import pytest

import import_helpers as h


@pytest.fixture
def store(tmp_path):
    from store import Store

    d = tmp_path / "db"
    d.mkdir()
    st = Store.open(d / "s.db")
    yield st
    try:
        st.close()
    except Exception:
        pass


@pytest.fixture
def exports():
    if not h.EXPORTS.is_dir():
        pytest.skip(f"sample exports not found at {h.EXPORTS}")
    return h.EXPORTS
