"""The rows of an import group: what the units of one group transaction wrote, written when it commits.

Inside `Store.bulk_loading` an import's units (a conversation, a session) are savepoints of a group
transaction of about half a second (store/importing.py). Their pages, revisions, relations, source ids
and index rows are gathered here and written with one `executemany` per table and one index write per
group: FTS5 writes its pending terms as a segment of their own at every savepoint, so writing unit by
unit made a segment (and its merges) per conversation. Also here: the garbage collector's thresholds
while bulk loading.
"""

from __future__ import annotations

import gc
import threading
from contextlib import contextmanager
from typing import Any, Callable, Iterator

from . import stops
from .bulkwrite import Groups, RowWriter

# Inside bulk work the cyclic garbage collector runs less often: an import holds hundreds of thousands of
# parsed records until their sessions are written, and the default first-generation threshold (700
# allocations) had the collector walk them over and over (about a tenth of an agent import's CPU time).
BULK_GC_THRESHOLD = 50_000  # write_pages_bulk and sync
# An import's group holds its rows until it commits: up to ~500,000 tracked objects (a ChatGPT import's group of
# ~600 conversations, statistics rows included), and its helper the whole parsed export. At 50,000 the young
# generation was collected ~8 times a group, each walking ~50,000 of them, freeing nothing (imports make next to no
# cyclic garbage): 2 s of a 27 s import of 10,000 conversations, and half of its helper's 4 s parse. Above a group's
# live rows it runs about once in 20 groups. (write_pages_bulk keeps 50,000: at 1,000,000 it ran 3-4 % slower.)
IMPORT_GC_THRESHOLD = 1_000_000
_gc_lock = threading.Lock()


class _GcState:
    users = 0  # bulk loaders running in this process
    saved: tuple[int, int, int] = (700, 10, 10)  # the thresholds to restore when the last one ends


@contextmanager
def fewer_collections(threshold: int = BULK_GC_THRESHOLD) -> Iterator[None]:
    """The collector's first threshold at least `threshold` meanwhile (the highest asked while several run), the
    caller's own again when the last ends."""
    with _gc_lock:
        if _GcState.users == 0:
            _GcState.saved = gc.get_threshold()
        first, second, third = gc.get_threshold()
        if first < threshold:
            gc.set_threshold(threshold, second, third)
        _GcState.users += 1
    try:
        yield
    finally:
        with _gc_lock:
            _GcState.users -= 1
            if _GcState.users == 0:
                gc.set_threshold(*_GcState.saved)


class _Frozen:
    users = 0  # imports in this process holding what they read apart from the collector (`read_kept`)
    ours = False  # they froze it (nothing was frozen before the first of them): theirs to hand back


@contextmanager
def read_kept() -> Iterator[None]:
    """An import that holds every record it read until its last unit is written: from here to the end the collector
    no longer walks what exists now (`gc.freeze`; its older generations held those records, and each of their
    collections took a tenth of a second of a 5-second agent import), and the objects are handed back to it
    (`gc.unfreeze`) when the last such import of this process ends. In a program that froze objects itself
    (gc.freeze before forking) nothing is frozen nor handed back: `gc.unfreeze` would hand back the program's too."""
    with _gc_lock:
        if _Frozen.users == 0:
            _Frozen.ours = gc.get_freeze_count() == 0
        if _Frozen.ours:
            gc.freeze()
        _Frozen.users += 1
    try:
        yield
    finally:
        with _gc_lock:
            _Frozen.users -= 1
            if _Frozen.users == 0 and _Frozen.ours:
                gc.unfreeze()


# (rows per table, analysed docs, scope times, index rows made elsewhere, their statistics)
Held = tuple[dict[str, list[tuple[Any, ...]]], list[Any], dict[int, str], list[Any], list[Any]]
Mark = tuple[dict[str, int], int, int, int]  # how many of each the group held


class GroupRows:
    """The rows of the units a group has closed, written when the group commits.

    Inside bulk_loading a unit's pages, revisions, relations and index rows are not written when the
    unit closes but added here, and the whole group goes in with one `executemany` per table and one
    index write: a unit is a savepoint, and FTS5 writes its pending terms as a segment of their own at
    every savepoint, so writing unit by unit made a segment (and a merge) per conversation. Units
    later in the group find these pages here (by source key, by page key) as they would in the store."""

    def __init__(self, db: Any, salt: bytes) -> None:
        self.db = db
        self.writer = RowWriter(db, salt)
        self.sources: dict[str, tuple[Any, ...]] = {}  # source key -> (digest, page pk, page id, head, namespace)
        self.pages: dict[int, tuple[str, str]] = {}  # page pk -> (namespace, head revision id)
        self.linked: set[tuple[int, int, str]] = set()  # (from pk, to pk, type) of the relations held here
        self.scopes: dict[int, str] = {}  # scope pk -> the store time of the last unit that wrote to it

    def mark(self) -> Mark:
        w = self.writer
        return {table: len(rows) for table, rows in w.rows.items()}, len(w.docs), len(w.fts), len(w.counted)

    def drop_since(self, mark: Mark) -> None:
        """Forget the rows added after `mark` (a unit that failed)."""
        rows, docs, fts, counted = mark
        w = self.writer
        for table, n in rows.items():
            del w.rows[table][n:]
        del w.docs[docs:]
        del w.fts[fts:]
        del w.counted[counted:]

    def take(self) -> Held:
        """The rows held (before a flush inside a unit: put back if that unit fails)."""
        w = self.writer
        return dict(w.rows), list(w.docs), dict(self.scopes), list(w.fts), list(w.counted)

    def flush(self) -> None:
        """Write what is held (inside the group's transaction); the store is then the only truth."""
        self.writer.flush()
        write_scope_times(self.db, self.scopes)
        self.sources.clear()
        self.pages.clear()
        self.linked.clear()
        self.scopes.clear()

    def put_back(self, held: Held, salt: bytes) -> None:
        """Write again rows a failed unit's savepoint took back with it (they were flushed inside it)."""
        rows, docs, scopes, fts, counted = held
        again = RowWriter(self.db, salt)
        again.rows = {table: list(rows.get(table, ())) for table in again.rows}
        again.docs = list(docs)
        again.fts = list(fts)
        again.counted = list(counted)
        again.flush()
        write_scope_times(self.db, scopes)


def write_scope_times(db: Any, scopes: dict[int, str]) -> None:
    """The scopes' updated_at: the store time of the last unit that wrote to each."""
    if scopes:
        db.cursor().executemany("UPDATE scope SET updated_at = ? WHERE id = ?",
                                [(stamp, pk) for pk, stamp in scopes.items()])


class UnitGroups:
    """One thread's bulk loading: its group transactions (bulkwrite.Groups), the rows the open group holds,
    the unit open in it, and how many are open (a unit inside a unit is not one of the group's)."""

    def __init__(self, db: Any, salt: bytes, seconds: float, settle: Callable[[], None] | None = None) -> None:
        self.db, self.salt = db, salt
        # Called before the first group begins, outside the lock; one given while a group is open (a bulk load
        # inside another's group) before that group commits (what it raises then rolls the group back).
        self.settle = settle
        self.groups = Groups(db, seconds)
        self.rows: GroupRows | None = None
        self.unit: Any = None  # the group's unit now open (an importing.ImportUnit)
        self.units = 0

    def begin_unit(self) -> GroupRows | None:
        """Before a unit: open the group's transaction if none is open; the group's rows (None for a unit
        inside another unit, or inside the caller's own transaction: it then writes its rows itself)."""
        if self.units:
            return None
        if not self.groups.open:
            if self.db.in_transaction():
                return None
            if self.settle is not None:  # before the first group takes the lock: its wait (or a whole parse) keeps
                settle, self.settle = self.settle, None  # no other writer waiting (what it raises writes nothing)
                settle()
            self.groups.begin()  # the lock stays free a moment between two groups, so a writer waiting gets in
            self.rows = GroupRows(self.db, self.salt)
        self.units += 1
        return self.rows

    def unit_done(self, grouped: bool, seconds: float) -> None:
        """After a unit (`grouped`: one of the group's): commit the group once it has held the lock `seconds`, or
        sooner when another writer says it waits (it then waits for the rows gathered so far, not for a whole group)."""
        if grouped:
            self.units -= 1
            self.unit = None
        if self.groups.open and not self.units:
            self.groups.seconds = seconds
            if self.groups.due() or self.groups.waited_for():
                self.end(commit=True)

    def end(self, commit: bool) -> None:
        """Commit the open group with the rows its units left (or, with commit=False, roll it back: a stop part
        way, an error, ^C: the group's units go, earlier groups stay)."""
        rows, self.rows = self.rows, None
        if not self.groups.open:
            return
        if not commit or not self.db.in_transaction():  # not in one: SQLite rolled it back itself (disk full)
            self.groups.close(commit=False)
            return
        try:
            if self.settle is not None:
                self.settle()
                self.settle = None
            if rows is not None:
                rows.flush()
        except BaseException:
            self.groups.close(commit=False)
            raise
        self.groups.commit()
        stops.reached("import-group")
