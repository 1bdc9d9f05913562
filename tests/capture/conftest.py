"""The fake home folder every `pcp capture` test runs in (capture_helpers.Home)."""

from __future__ import annotations

from pathlib import Path

import pytest
from capture_helpers import Home


@pytest.fixture
def fake_home(tmp_path: Path) -> Home:
    h = Home(tmp_path)
    for folder in (h.home, h.project):
        folder.mkdir(parents=True)
    return h
