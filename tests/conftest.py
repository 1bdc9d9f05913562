"""Fixtures shared by every test folder: a fresh store file per test, and the store clock held still.

Every test gets its own database file under tmp_path (never :memory:). Folder conftests add what only
their tests need (tests/handoff and tests/tui pin the clock their own way for golden text and snapshots).
"""

from __future__ import annotations

import os
import shutil
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

CLOCK_START = datetime(2026, 3, 1, 9, 0, 0, tzinfo=timezone.utc)

# A long write starts a helper process while a core is free (store/cores.py): the machine's load would choose the
# path a test takes, so the suite (and every child it starts) runs without them unless the environment asks;
# the helpers' own tests turn them on (tests/store/test_analysis_helper.py, test_restore_helpers.py,
# test_import_helper.py).
os.environ.setdefault("PCP_ANALYSIS_HELPER", "0")
os.environ.setdefault("PCP_RESTORE_HELPERS", "0")
os.environ.setdefault("PCP_IMPORT_HELPER", "0")  # (tests/store/test_import_helper.py turns it on)


def pytest_generate_tests(metafunc):
    """A test marked `encrypted` that uses the store file runs twice: on a plain and on an encrypted store."""
    if metafunc.definition.get_closest_marker("encrypted") and \
            {"db_path", "demo_store"} & set(metafunc.fixturenames):
        metafunc.parametrize("store_kind", ["plain", "encrypted"], indirect=True)


@pytest.fixture
def store_kind(request):
    """plain, or encrypted: the marked tests' second run, or every store with PCP_TEST_STORES=encrypted
    (.ci/encrypted-matrix)."""
    default = "encrypted" if os.environ.get("PCP_TEST_STORES") == "encrypted" else "plain"
    return getattr(request, "param", default)


@pytest.fixture
def db_path(tmp_path, store_kind):
    d = tmp_path / "db"
    d.mkdir()
    path = d / "s.db"
    if store_kind != "encrypted":
        yield path
        return
    from encrypted_extra import require

    require()
    from keychain import encrypt_new_store, memory_keychain

    with memory_keychain():
        encrypt_new_store(path)
        yield path


@pytest.fixture
def store(db_path):
    from store import Store

    st = Store.open(db_path)
    yield st
    st.close()


class Clock:
    """The store's clock (`store.ids.now`), standing still until the test moves it."""

    def __init__(self, start: datetime) -> None:
        self.moment = start

    def now(self) -> str:
        from store import ids

        return ids.format_time(self.moment)

    def advance(self, seconds: float = 1.0) -> str:
        """Move the clock on; returns the new time, as the store would write it."""
        self.moment += timedelta(seconds=seconds)
        return self.now()


@pytest.fixture
def clock(monkeypatch):
    """A Clock patched in as `store.ids.now`: records written now get clock.now() as their time."""
    import store.ids

    c = Clock(CLOCK_START)
    monkeypatch.setattr(store.ids, "now", c.now)
    return c


OLD_STORES = Path(__file__).parent / "data" / "stores"


@pytest.fixture
def schema1_db(tmp_path):
    """A copy of tests/data/stores/schema1.db, a store written by pcp at commit 2f2b1a2 (schema 1)."""
    target = tmp_path / "old" / "schema1.db"
    target.parent.mkdir()
    shutil.copyfile(OLD_STORES / "schema1.db", target)
    return target
