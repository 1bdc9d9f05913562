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


@pytest.mark.parametrize("read_ahead", [False, True])
@pytest.mark.parametrize("at", [3, 5, 13])
def test_a_ctrl_c_from_the_iterator_writes_what_it_gave_with_or_without_reading_ahead(db_path, monkeypatch,
                                                                                     read_ahead, at):
    """KeyboardInterrupt (not an Exception) raised by the caller's iterator after `at` items, batches of 4: what it
    gave is written, the batch begun and the batch being analysed too, and the ^C reaches the caller; the same
    whether it was met while reading ahead (it was raised in the gap then, dropping the batch about to be written)
    or in its place. The store is left usable (no transaction open)."""
    if read_ahead:
        monkeypatch.setattr(bulkwrite, "FALLBACK_EVERY_S", 0.0)
        monkeypatch.setattr(bulkwrite, "YIELD_FOR_S", 30.0)
        monkeypatch.setattr(time, "sleep", lambda s: None)

    def items():
        for i in range(16):
            if i == at:
                raise KeyboardInterrupt
            yield {"content": f"item {i}"}

    with Store.open(db_path) as st:
        with pytest.raises(KeyboardInterrupt):
            st.write_pages_bulk(items(), "notes:bulk", batch_size=4)
        assert not st._db.in_transaction()
        st.write_page("notes:bulk", content="after")
    assert _contents(db_path) == [f"item {i}" for i in range(at)] + ["after"]


@pytest.mark.parametrize("where", ["in the gap", "mid-transaction"])
def test_a_ctrl_c_while_a_batch_is_landed_writes_every_item_given_then_stops(db_path, monkeypatch, where):
    """A ^C (SIGINT) that arrives while a batch is being landed, not in the caller's iterator: in the gap the lock
    is let go for other writers (the sleep), or inside the batch's transaction (rolled back). The batch it met and
    the one made ready meanwhile were taken from the caller, so they are written before the ^C reaches it, once
    each, in order (they were dropped: the batch taken out of the queue before its write, the next never landed)."""
    from store.bulkwrite import RowWriter

    hit = {"done": False}

    def once(*_a, **_k):
        if not hit["done"]:
            hit["done"] = True
            raise KeyboardInterrupt

    if where == "in the gap":
        monkeypatch.setattr(bulkwrite, "FALLBACK_EVERY_S", 0.0)
        monkeypatch.setattr(time, "sleep", once)  # (the first gap's sleep is where the ^C lands)
    else:
        flush = RowWriter.flush

        def flush_once(self):
            if st._db.in_transaction() and len(_contents_now()) == 4:  # the second batch's write
                once()
            return flush(self)

        monkeypatch.setattr(RowWriter, "flush", flush_once)
    with Store.open(db_path) as st:
        def _contents_now():
            return st._db.execute_sql("SELECT id FROM page").fetchall()

        with pytest.raises(KeyboardInterrupt):
            st.write_pages_bulk(({"content": f"item {i}"} for i in range(10)), "notes:bulk", batch_size=4)
        assert hit["done"] and not st._db.in_transaction()
        st.write_page("notes:bulk", content="after")
    assert _contents(db_path) == [f"item {i}" for i in range(10)] + ["after"]


@pytest.mark.parametrize("helper", [False, True])
@pytest.mark.parametrize("bad", ["a string", None, 5, ["content", "x"], lambda: "not even picklable"])
def test_an_item_that_is_not_an_object_is_refused_in_one_line_after_the_batches_before(db_path, monkeypatch, bad,
                                                                                      helper):
    """A non-dict item among the caller's items: Invalid in one line naming what it is (not an AttributeError), the
    batches before it written, the failure in the audit; the same when batches are made ready in the analysis
    helper (one it cannot even be sent to is made ready here)."""
    from store import analyst
    from store.errors import Invalid

    monkeypatch.setattr(analyst, "HELPER_FROM_PAGES", 1)
    monkeypatch.setattr(analyst, "WAIT_FOR_START", True)
    monkeypatch.setenv(analyst.ENV, "1" if helper else "0")

    items = [{"content": f"item {i}"} for i in range(10)] + [bad, {"content": "never"}]
    with Store.open(db_path) as st:
        with pytest.raises(Invalid, match=r"^Every page of a bulk write is an object .*; one is of type \w+\.$"):
            st.write_pages_bulk(iter(items), "notes:bulk", batch_size=4)
        audit = st._db.execute_sql("SELECT operation, decision, error_code FROM audit_event "
                                   "WHERE operation = 'write_pages_bulk' ORDER BY rowid").fetchall()
    assert audit == [("write_pages_bulk", "allowed", None)] * 2 + [("write_pages_bulk", "failed", "invalid")]
    assert _contents(db_path) == [f"item {i}" for i in range(8)]


def test_a_denied_batch_before_a_refused_item_is_audited_once(db_path):
    """A model session that may not write: its first batch is denied as it lands, which here happens because the
    next batch holds a refused item. That one denial is one audit event (it was recorded twice: by the batch's
    operation and again by the refused batch's audit), and the caller gets it."""
    import pcpstore_helpers as h
    from store.errors import Forbidden

    with Store.open(db_path) as st:
        model = h.model(st, {"notes:bulk": {"read"}})
        items = [{"content": f"item {i}"} for i in range(5)] + [7, {"content": "never"}]
        with pytest.raises(Forbidden):
            model.write_pages_bulk(iter(items), "notes:bulk", batch_size=4)
        audit = st._db.execute_sql("SELECT operation, decision, error_code FROM audit_event "
                                   "WHERE operation = 'write_pages_bulk' ORDER BY rowid").fetchall()
    assert audit == [("write_pages_bulk", "denied", "forbidden")]
    assert _contents(db_path) == []


def test_the_collector_runs_as_seldom_as_in_an_import_while_a_bulk_write_runs_and_as_before_after_it(db_path):
    """While the caller's items are read the collector's first threshold is the bulk loads' (import_groups), and
    it is the caller's own again once the write returns, and once it fails."""
    import gc

    from store.import_groups import BULK_GC_THRESHOLD

    before = gc.get_threshold()
    seen: list[int] = []

    def items(fail: bool):
        for i in range(3):
            seen.append(gc.get_threshold()[0])
            yield {"content": f"page {i}"}
        if fail:
            raise OSError("the source went away")

    with Store.open(db_path) as st:
        assert st.write_pages_bulk(items(False), "project:gc")["created"] == 3
        assert gc.get_threshold() == before
        with pytest.raises(OSError):
            st.write_pages_bulk(items(True), "project:gc")
    assert gc.get_threshold() == before
    assert seen and min(seen) >= BULK_GC_THRESHOLD > before[0]
