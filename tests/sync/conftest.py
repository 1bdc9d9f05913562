"""Fixtures for the sync tests (store/sync): stores side by side, each in its own folder."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "store"))  # pcpstore_helpers (find_residue, windows)


@pytest.fixture
def stores(tmp_path):
    """stores(n) -> n fresh (empty) stores' paths, each alone in its own directory."""
    from store import Store

    def make(n: int, prefix: str = "s") -> list[Path]:
        out = []
        for i in range(n):
            d = tmp_path / f"{prefix}{i}"
            d.mkdir()
            Store.open(d / "context.db").close()
            out.append(d / "context.db")
        return out

    return make
