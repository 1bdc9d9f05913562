"""Full garbage collections wait for a pause in the input (pcp_tui/collector.py)."""

from __future__ import annotations

import gc

import pytest

from helpers import until

from pcp_tui import collector
from pcp_tui.collector import IdleCollector


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock():
    return Clock()


def _promote(collections: int) -> None:
    """Make `collections` young collections of the middle generation happen (each raises count[2])."""
    for _ in range(collections):
        gc.collect(1)


def test_full_collections_wait_for_a_pause_and_the_thresholds_come_back(clock):
    before = gc.get_threshold()
    col = IdleCollector(clock)
    col.start()
    try:
        assert gc.get_threshold()[2] == collector.OUT_OF_REACH  # no automatic full collection
        assert gc.get_freeze_count() > 0
        assert collector.MIN_GAP + collector.IDLE * 2 < collector.FORCE_AFTER  # the pause path, not the forced one
        clock.now += collector.MIN_GAP + 0.01
        col.input()  # typing
        _promote(collector.PENDING)
        assert not col.tick()  # input just now: not yet
        clock.now += collector.IDLE / 2
        assert not col.tick()
        clock.now += collector.IDLE
        frozen = gc.get_freeze_count()
        survivor = [object() for _ in range(1000)]  # lists are tracked: survivors of the collection
        assert col.tick()  # a pause: it runs
        assert gc.get_count()[2] == 0 and col.full_collections == 1
        assert gc.get_freeze_count() >= frozen + 1  # what survived is out of the next one's sight
        del survivor
        _promote(collector.PENDING)
        clock.now += collector.MIN_GAP / 2
        assert not col.tick()  # paused, but the last one is too recent
    finally:
        col.stop()
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0


def test_a_busy_user_still_gets_one_now_and_then(clock):
    col = IdleCollector(clock)
    col.start()
    try:
        _promote(1)
        for _ in range(int(collector.FORCE_AFTER // 0.5) - 1):
            clock.now += 0.5
            col.input()
            assert not col.tick()
        clock.now += 1
        col.input()
        assert col.tick()  # input every half second for FORCE_AFTER: collected anyway
    finally:
        col.stop()


def test_a_long_pause_runs_a_deep_collection_that_finds_frozen_garbage(clock):
    col = IdleCollector(clock)

    class Node:
        pass

    a, b = Node(), Node()
    a.other, b.other = b, a  # a cycle, alive when frozen
    col.start()
    try:
        del a, b  # garbage now, but frozen: a full collection does not see it
        clock.now += collector.DEEP_EVERY + 1
        col.last_input = clock.now - collector.IDLE  # a short pause: a full collection, not a deep one
        _promote(collector.PENDING)
        assert col.tick() and col.deep_collections == 0
        before = sum(1 for o in _frozen_and_tracked() if type(o) is Node)
        assert before == 2  # still there: frozen
        col.last_input = clock.now - collector.DEEP_IDLE
        assert col.tick() and col.deep_collections == 1
        assert sum(1 for o in _frozen_and_tracked() if type(o) is Node) == 0  # found and freed
    finally:
        col.stop()


def _frozen_and_tracked() -> list:
    gc.unfreeze()
    try:
        return gc.get_objects()
    finally:
        gc.freeze()


def test_a_bulk_import_raising_the_first_threshold_meanwhile_is_kept(clock):
    before = gc.get_threshold()
    col = IdleCollector(clock)
    col.start()
    try:
        gc.set_threshold(50_000, before[1], gc.get_threshold()[2])  # store/import_groups.py: fewer_collections
        col.stop()
        assert gc.get_threshold() == (50_000, before[1], before[2])
    finally:
        gc.set_threshold(*before)


async def test_the_app_hands_full_collections_to_its_collector_and_back(tmp_path):
    from store import Store

    from pcp_tui.app import PcpApp

    before = gc.get_threshold()
    store = Store.open(tmp_path / "s.db")
    store.write_page("project:x", content="one page")
    app = PcpApp(tmp_path / "s.db", store=store, config_folder=tmp_path / "config", use_pyperclip=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, lambda: app.collector.running and gc.get_threshold()[2] == collector.OUT_OF_REACH,
                    "the collector to take the full collections")
        last = app.collector.last_input
        await pilot.press("down")
        assert app.collector.last_input > last  # keys count as input
    assert gc.get_threshold() == before and not app.collector.running
    store.close()
