"""Store.bulk_loading: import units grouped into transactions, each unit still all or nothing."""

from __future__ import annotations

import contextlib
import gc
import os
import sys
import threading

import pytest
from peewee import sqlite3  # the SQLite the store uses: two libraries in one process break each other's locks

from store import Invalid, Store
from store import importing

import pcpstore_helpers as h


def _unit(st: Store, key: str, ns: str = "agent:test") -> None:
    with st.import_unit("test-importer") as unit:
        unit.ensure_scope(ns)
        unit.upsert(key, ns, payload={"media_type": "text/plain", "content": f"text of {key}"})


def _titles(path) -> set[str]:
    """The page titles another connection sees (a plain reader: opening a Store would wait for the writer)."""
    conn = sqlite3.connect(path, timeout=5)
    try:
        return {title for (title,) in conn.execute("SELECT title FROM page")}
    finally:
        conn.close()


def test_units_in_a_group_land_together_when_the_group_ends(db_path, monkeypatch):
    monkeypatch.setattr(importing, "BATCH_SECONDS", 3600.0)  # one group for the whole block
    st = Store.open(db_path)
    try:
        with st.bulk_loading():
            _unit(st, "a")
            _unit(st, "b")
            assert _titles(db_path) == set()  # another connection sees nothing before the group commits
        assert _titles(db_path) == {"text of a", "text of b"}
    finally:
        st.close()


def test_a_failing_unit_leaves_nothing_and_the_others_of_its_group_stay(db_path, monkeypatch):
    monkeypatch.setattr(importing, "BATCH_SECONDS", 3600.0)
    st = Store.open(db_path)
    try:
        with st.bulk_loading():
            _unit(st, "a")
            with pytest.raises(Invalid):
                with st.import_unit("test-importer") as unit:
                    unit.ensure_scope("agent:test")
                    unit.upsert("half", "agent:test", payload={"media_type": "text/plain", "content": "half written"})
                    unit.upsert("bad", "agent:test", facets={"title": 3})  # refused: the unit rolls back
            _unit(st, "c")
        assert _titles(db_path) == {"text of a", "text of c"}
    finally:
        st.close()


def test_a_stop_part_way_keeps_the_groups_already_committed_and_whole_units_only(db_path, monkeypatch):
    st = Store.open(db_path)
    try:
        monkeypatch.setattr(importing, "BATCH_SECONDS", 0.0)  # every unit ends its group
        with pytest.raises(KeyboardInterrupt):
            with st.bulk_loading():
                _unit(st, "a")
                monkeypatch.setattr(importing, "BATCH_SECONDS", 3600.0)
                _unit(st, "b")  # in an open group when the stop comes
                raise KeyboardInterrupt
        assert _titles(db_path) == {"text of a"}
        _unit(st, "d")  # the store is usable after the stop: no transaction was left open
        assert _titles(db_path) == {"text of a", "text of d"}
    finally:
        st.close()


def test_another_thread_writing_meanwhile_commits_on_its_own(db_path, monkeypatch):
    """The app shares one Store between worker threads: one thread's bulk loading groups only its own units."""
    monkeypatch.setattr(importing, "BATCH_SECONDS", 3600.0)
    st = Store.open(db_path)
    errors: list[BaseException] = []

    def other() -> None:
        try:
            _unit(st, "from another thread", ns="agent:other")
        except BaseException as exc:  # reported below
            errors.append(exc)

    try:
        with st.bulk_loading():  # no unit of this thread yet, so no group holds the write lock
            t = threading.Thread(target=other)
            t.start()
            t.join(30)
            assert not errors
            assert _titles(db_path) == {"text of from another thread"}  # committed, not held in a group
            _unit(st, "a")
        assert _titles(db_path) == {"text of from another thread", "text of a"}
    finally:
        st.close()


def test_the_collector_thresholds_come_back_after_bulk_loading(db_path):
    before = gc.get_threshold()
    st = Store.open(db_path)
    try:
        with st.bulk_loading():
            assert gc.get_threshold()[0] >= importing.IMPORT_GC_THRESHOLD
            with st.bulk_loading():
                pass
            assert gc.get_threshold()[0] >= importing.IMPORT_GC_THRESHOLD
        assert gc.get_threshold() == before
    finally:
        st.close()


def _audited_units(path, grouped: bool) -> list[tuple]:
    """Units a, a failing one, b (each its own conversation scope), grouped in one transaction or each in its own:
    the audit events they left, oldest first, without ids, times and durations."""
    st = Store.open(path)
    try:
        with st.bulk_loading() if grouped else contextlib.nullcontext():
            _unit(st, "a", ns="agent:a")
            with pytest.raises(Invalid):
                with st.import_unit("test-importer") as unit:
                    unit.ensure_scope("agent:bad")
                    unit.upsert("bad", "agent:bad", facets={"title": 3})  # refused: the unit rolls back
            _unit(st, "b", ns="agent:b")
        events = [e for e in h.all_audit(st) if e["operation"] == "import"]
    finally:
        st.close()
    return [(e["decision"], e["scopes"], e["counts"], e.get("error_code")) for e in reversed(events)]


def test_a_group_writes_its_units_audit_events_in_their_order_failures_included(tmp_path, monkeypatch):
    """Inside bulk_loading the units' audit events go in with the group's rows (one executemany, not a statement a
    unit), and a failed unit's event after those of the units before it: the trail equals the ungrouped one's."""
    monkeypatch.setattr(importing, "BATCH_SECONDS", 3600.0)  # one group: every event written at its commit
    grouped = _audited_units(tmp_path / "grouped.db", grouped=True)
    one_by_one = _audited_units(tmp_path / "ungrouped.db", grouped=False)
    assert [d for d, *_ in grouped] == ["allowed", "failed", "allowed"]
    assert grouped == one_by_one
    assert grouped[0][1] == ["agent:a"] and grouped[2][1] == ["agent:b"] and grouped[1][3] == "invalid"


def test_bulk_work_nested_keeps_the_highest_collector_threshold_asked_and_gives_the_caller_s_back():
    """An import (IMPORT_GC_THRESHOLD) and write_pages_bulk or sync (BULK_GC_THRESHOLD) may run inside one another:
    the threshold is the highest one asked while any runs, never lowered by an inner one, the caller's own after."""
    from store.import_groups import fewer_collections

    before = gc.get_threshold()
    with fewer_collections(importing.BULK_GC_THRESHOLD):
        assert gc.get_threshold()[0] == max(before[0], importing.BULK_GC_THRESHOLD)
        with fewer_collections(importing.IMPORT_GC_THRESHOLD):
            assert gc.get_threshold()[0] == importing.IMPORT_GC_THRESHOLD
            with fewer_collections(importing.BULK_GC_THRESHOLD):
                assert gc.get_threshold()[0] == importing.IMPORT_GC_THRESHOLD
        assert gc.get_threshold()[0] == importing.IMPORT_GC_THRESHOLD  # (until the last one ends)
    assert gc.get_threshold() == before


@pytest.mark.skipif(sys.platform == "win32", reason="writers say they wait with flock")
def test_a_group_commits_at_the_next_unit_s_end_when_another_writer_says_it_waits(db_path, monkeypatch):
    """An import's group writes its rows when it commits, which takes longer than its units took: a writer that says
    it waits (a shared flock on the store's -waiting file, as every pcp writer takes while it waits for the lock)
    has the group commit at the end of the unit running, not after a whole group's time."""
    import fcntl

    from store import bulkwrite

    monkeypatch.setattr(importing, "BATCH_SECONDS", 3600.0)  # one group for the whole block, unless someone waits
    monkeypatch.setattr(bulkwrite, "WAITER_LOOK_S", 0.0)  # looked at every unit's end
    st = Store.open(db_path)
    try:
        with st.bulk_loading():
            _unit(st, "a")
            assert _titles(db_path) == set()  # held by the open group
            fd = os.open(str(db_path) + "-waiting", os.O_RDWR | os.O_CREAT, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_SH)  # another writer says it waits
                _unit(st, "b")
                assert _titles(db_path) == {"text of a", "text of b"}  # committed at b's end
            finally:
                os.close(fd)  # (it has the lock now: it says so no more)
            _unit(st, "c")
            assert _titles(db_path) == {"text of a", "text of b"}  # a new group, held again
        assert _titles(db_path) == {"text of a", "text of b", "text of c"}
    finally:
        st.close()
