"""A bulk write reads the caller's next items while it lets the write lock go (store/writes.py `_ReadAhead`),
instead of sleeping through the gap; and an iterator that fails loses none of the items it gave."""

from __future__ import annotations

import time

import pytest

import store.bulkwrite as bulkwrite
from store import Store


def _contents(db_path) -> list[str]:
    with Store.open(db_path) as st:
        return [r[0] for r in st._db.execute_sql("SELECT r.content FROM page p JOIN revision r ON r.id = p.head "
                                                 "ORDER BY p.id").fetchall()]


def test_the_next_items_are_read_while_the_lock_is_let_go(db_path, monkeypatch):
    """A yield at every group (FALLBACK_EVERY_S 0) of a gap that never ends by itself (YIELD_FOR_S 30 s, its
    sleep recorded, not slept): the gap is spent reading items, as many as two batches, and then sleeps the
    rest. Every item is written once, in order."""
    monkeypatch.setattr(bulkwrite, "FALLBACK_EVERY_S", 0.0)
    monkeypatch.setattr(bulkwrite, "YIELD_FOR_S", 30.0)
    slept: list[float] = []
    monkeypatch.setattr(time, "sleep", slept.append)
    gap = {"open": False}
    wait_turn = bulkwrite.Groups.wait_turn

    def in_the_gap(self: bulkwrite.Groups, fill=None) -> None:
        gap["open"] = True
        try:
            wait_turn(self, fill)
        finally:
            gap["open"] = False

    monkeypatch.setattr(bulkwrite.Groups, "wait_turn", in_the_gap)
    read: list[tuple[int, bool, bool]] = []  # (item, read in the gap, read inside a transaction)
    with Store.open(db_path) as st:
        def items():
            for i in range(40):
                read.append((i, gap["open"], st._db.in_transaction()))
                yield {"content": f"page number {i}"}
        st.write_pages_bulk(items(), "notes:bulk", batch_size=4)
    in_gap = [i for i, in_gap, _ in read if in_gap]
    assert len(in_gap) >= 8, in_gap
    assert not any(locked for _, _, locked in read)
    assert len(slept) >= 1
    assert _contents(db_path) == [f"page number {i}" for i in range(40)]


def test_an_iterator_that_fails_loses_none_of_the_items_it_gave(db_path, monkeypatch):
    """The iterator raises after 10 items, with batches of 4: the two whole batches and the two items of the
    third are written, and its error reaches the caller. The same when its error is met while reading
    ahead (a yield at every group)."""
    class Broken(Exception):
        pass

    def items(n: int):
        for i in range(n):
            yield {"content": f"item {i}"}
        raise Broken("the source file ended mid-record")

    with Store.open(db_path) as st, pytest.raises(Broken):
        st.write_pages_bulk(items(10), "notes:bulk", batch_size=4)
    assert _contents(db_path) == [f"item {i}" for i in range(10)]

    monkeypatch.setattr(bulkwrite, "FALLBACK_EVERY_S", 0.0)
    monkeypatch.setattr(bulkwrite, "YIELD_FOR_S", 30.0)
    monkeypatch.setattr(time, "sleep", lambda s: None)
    with Store.open(db_path) as st, pytest.raises(Broken):
        st.write_pages_bulk(({"content": f"more {x['content']}"} for x in items(10)), "notes:other", batch_size=4)
    assert _contents(db_path)[10:] == [f"more item {i}" for i in range(10)]
