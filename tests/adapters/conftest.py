"""Fixtures for the importer tests (store/adapters): the sample exports (the store fixture is in tests/conftest.py).

The sample exports are vendored in tests/data/exports (SOURCES.md there says where each file comes
from, under which licence, and what is unusual about it), so these tests run on any clean checkout."""

from __future__ import annotations

import pytest

import import_helpers as h


@pytest.fixture
def exports():
    # Part of the repository: a missing folder is a broken checkout, never a reason to skip.
    assert h.EXPORTS.is_dir(), f"the vendored sample exports are missing: {h.EXPORTS}"
    return h.EXPORTS
