"""The one write path for bulk work (restore, imports, bulk ingest): plain SQL, one `executemany` per
table, keys reserved while the write lock is held, and commits in groups of whole units.

A group is one transaction of about GROUP_SECONDS (pcp-core.md section 7, the exception for long bulk
writes): another writer waits at most about one group. Between two groups the write lock is let go to
a writer that waits: every pcp writer says so while it waits (store/db.py `announce_waits`), and the
bulk write waits until those have the lock before it takes it again. When nobody says so it goes on at
once, but at least every FALLBACK_EVERY_S it lets the lock go for YIELD_FOR_S, longer than SQLite's busy
handler sleeps between two tries, so a writer that cannot say it waits (the sqlite3 shell, a platform
without flock) gets in too. The work of preparing the next group (parsing, validating, analysing the
index terms) is done outside the lock. The WAL is folded back after a group (PASSIVE, without the lock)
so it stays bounded.
"""

from __future__ import annotations

import contextlib
import time
from collections import Counter
from typing import Any, Callable, Iterator, Literal

import peewee as pw

from . import index, stops
from .db import fold_wal, writers_waiting

GROUP_SECONDS = 0.3  # a group holds the write lock about this long (longer on a loaded machine: a margin to 1 s)
YIELD_FOR_S = 0.11  # a yield without a known waiter lets the lock go this long (SQLite's busy sleeps are <= 100 ms)
FALLBACK_EVERY_S = 1.0  # with nobody saying they wait, the lock is still let go this often (a writer not pcp's)
WAITER_CAP_S = 2.0  # the longest a bulk write waits for a writer that said it waits to take the lock (one stopped)
STUCK_FOR_S = 30.0  # a waiter that did not take the lock within WAITER_CAP_S (stopped?) is not waited for meanwhile
WAITER_POLL_S = 0.001
# The WAL is folded back (without the lock) before the lock is let go to another writer: otherwise that
# writer's commit (checkpointing every 1,000 pages) would copy the groups' frames back inside its own write.
# Else about every FOLD_EVERY_S: index pages that several groups touch are copied back once, not once a group.
FOLD_EVERY_S = 1.0
# An import's group gathers its units' rows and writes them when it commits (import_groups.GroupRows), which takes
# longer than the units did: a writer that came while the units ran waited for both. The group looks this often
# whether a writer says it waits, and then commits at the next unit's end (the writer waits for the rows so far).
WAITER_LOOK_S = 0.02

PAGE_SQL = ("INSERT INTO page (id, page_id, scope_id, head, head_revision_id, status, superseded, title, media_type, "
            "actor_type, created_at, updated_at, sort_time) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)")
REVISION_SQL = ("INSERT INTO revision (id, revision_id, page_id, seq, previous_revision_id, scope_id, created_at, "
                "observed_at, valid_from, valid_to, actor_type, actor_id, media_type, content, content_digest, title, "
                "facets, source_refs, provenance) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)")
INSERTS = {
    "page": PAGE_SQL,
    "revision": REVISION_SQL,
    "provenance_input": "INSERT INTO provenance_input (revision_id, page_id, input_revision_id, input_page) "
                        "VALUES (?,?,?,?)",
    "source_page": "INSERT INTO source_page (source_key, page_id, body_digest) VALUES (?,?,?)",
    "relation": "INSERT INTO relation (relation_id, relation_type, from_page_id, from_revision_id, to_page_id, "
                "to_revision_id, created_at, actor_type, actor_id, retracted) VALUES (?,?,?,?,?,?,?,?,?,?)",
    # an import group's units' own audit events (store/core.py `_audit_row`), written with the group's rows
    "audit_event": "INSERT INTO audit_event (event_id, time, principal_type, principal_id, operation, scopes, decision, "
                   "counts, duration_ms, error_code, receipt_id) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
}


class RowWriter:
    """Rows gathered for the open transaction, written table by table with one `executemany` each.

    Keys of new pages and revisions are reserved up front (the caller holds the write lock), so rows
    can point at each other before any is written; `flush` writes them in dependency order and
    indexes the new revisions (counted in the statistics unless their page is tombstoned)."""

    def __init__(self, db: pw.SqliteDatabase, salt: bytes) -> None:
        self.db = db
        self.salt = salt
        self.rows: dict[str, list[tuple[Any, ...]]] = {name: [] for name in INSERTS}
        self.docs: list[tuple[int, int, index.Analysed, bool]] = []  # (revision pk, scope pk, terms, counted)
        self.fts: list[tuple[Any, ...]] = []  # index rows of revisions analysed elsewhere (index_prepared)
        self.delta = index.StatsDelta()  # and their statistics
        # the statistics of import units whose index rows (in `fts`) were made elsewhere: (scope pk, how many
        # hold each key, revisions, terms), merged at the flush (kept apart until then: a unit may be dropped)
        self.counted: list[tuple[int, Any, int, int]] = []
        self._next: list[int] | None = None

    def _keys(self) -> list[int]:
        if self._next is None:
            db = self.db
            self._next = [db.execute_sql("SELECT COALESCE(MAX(id), 0) + 1 FROM page").fetchone()[0],
                          db.execute_sql("SELECT COALESCE(MAX(id), 0) + 1 FROM revision").fetchone()[0]]
        return self._next

    def reserve(self) -> tuple[int, int]:
        """The next free (page pk, revision pk), one of each."""
        return self.reserve_page(), self.reserve_revision()

    def reserve_page(self) -> int:
        keys = self._keys()
        keys[0] += 1
        return keys[0] - 1

    def reserve_revision(self) -> int:
        keys = self._keys()
        keys[1] += 1
        return keys[1] - 1

    def reserve_many(self, pages: int, revisions: int) -> tuple[int, int]:
        """The first of `pages` free page pks and of `revisions` free revision pks (each run of keys follows on)."""
        keys = self._keys()
        first = (keys[0], keys[1])
        keys[0] += pages
        keys[1] += revisions
        return first

    def add(self, table: str, row: tuple[Any, ...]) -> None:
        self.rows[table].append(row)

    def index(self, rev_pk: int, scope_pk: int, doc: index.Analysed, counted: bool = True) -> None:
        self.docs.append((rev_pk, scope_pk, doc, counted))

    def analyse(self, rev_pk: int, scope_pk: int, title: str, content: str | None, facets: dict[str, Any],
                when: str | None, counted: bool = True) -> None:
        """Index a revision; `when` (its observed_at, else created_at) is what relative time is read against."""
        self.docs.append((rev_pk, scope_pk, index.analyse(title, content, facets, self.salt, when), counted))

    def index_prepared(self, rows: list[tuple[int, str, str, str, str]], scope_pk: int, df: Any, terms: int) -> None:
        """Index new revisions of one scope analysed elsewhere (analyst.analyse_batch): their FTS rows
        (revision pk, title, body, meta, scope), how many hold each key, and their term total; all counted.
        (write_pages_bulk's: an import group's marks and roll-backs cover `docs` and `rows` only.)"""
        self.fts.extend(rows)
        self.delta.add_counted(scope_pk, df, len(rows), terms)

    def pending(self) -> int:
        return sum(len(rows) for rows in self.rows.values())

    def flush(self) -> None:
        """Write what was gathered (inside the caller's transaction); keys are handed out afresh after it."""
        cursor = self.db.cursor()
        for table, sql in INSERTS.items():
            rows = self.rows[table]
            if rows:
                cursor.executemany(sql, rows)
                self.rows[table] = []
        for scope_pk, df, docs, terms in self.counted:  # (a copy: held rows may be written again, import_groups)
            self.delta.add_counted(scope_pk, Counter(df), docs, terms)
        self.counted = []
        if self.docs or self.fts:
            index.add_analysed(cursor, self.docs, self.fts, self.delta)
            self.docs, self.fts, self.delta = [], [], index.StatsDelta()
        self._next = None  # other writers in this transaction may now take keys


LOADING_CHECKPOINT = 20_000  # WAL pages (about 80 MB) between automatic checkpoints during a bulk write
DEFAULT_CHECKPOINT = 1000


@contextlib.contextmanager
def loading(db: pw.SqliteDatabase) -> Iterator[None]:
    """A long bulk write: the WAL is checkpointed every LOADING_CHECKPOINT pages instead of every 1,000 (index
    pages touched by many groups are written back once per checkpoint, not once per group; the WAL stays
    bounded), and folded back at the end."""
    db.execute_sql(f"PRAGMA wal_autocheckpoint={LOADING_CHECKPOINT}")
    try:
        yield
    finally:
        db.execute_sql(f"PRAGMA wal_autocheckpoint={DEFAULT_CHECKPOINT}")
        fold_wal(db)


def next_size(size: int, done: int, took: float, least: int, most: int) -> int:
    """The next batch's size, after `done` units held the lock `took` seconds: about GROUP_SECONDS of
    work, growing at most twofold a time."""
    if done and took > 0:
        size = min(2 * size, int(done * GROUP_SECONDS / took))
    return max(least, min(most, size))


class Groups:
    """Transactions of about `seconds` each over a run of whole units (None: one transaction for all).

    Use `begin()` before writing a unit and `unit_done()` after it; `close()` commits what is open
    (or, with commit=False, rolls the open group back: earlier groups stay)."""

    def __init__(self, db: pw.SqliteDatabase, seconds: float | None | Literal["group"] = "group") -> None:
        self.db = db
        self.seconds = GROUP_SECONDS if seconds == "group" else seconds
        self._txn: Any = None
        self.since = 0.0
        self._released = float("-inf")
        self._yielded = time.monotonic()
        self._stuck_until = float("-inf")
        self._looked = float("-inf")
        self._folded = time.monotonic()
        self._unfolded = False  # groups committed since the WAL was last folded back
        self.groups = 0
        self.yields = 0  # times the lock was let go to another writer (or for FALLBACK_EVERY_S)

    @property
    def open(self) -> bool:
        return self._txn is not None

    def wait_turn(self, fill: Callable[[], bool] | None = None) -> None:
        """Before taking the lock again: let a writer that waits for it have it first (doing `fill()`, work
        that needs no lock such as reading ahead, meanwhile; False when there is none left). Nobody waiting:
        go on at once, unless FALLBACK_EVERY_S passed since the lock was last let go for YIELD_FOR_S."""
        if self._released == float("-inf"):
            return  # (the first group: nobody was kept out yet)
        waiting = writers_waiting(self.db) if time.monotonic() >= self._stuck_until else False
        if waiting:
            self.yields += 1
            self.fold()
            stops.reached("bulk-yield-waiter")  # tests let the waiting writer go on here
            until = time.monotonic() + WAITER_CAP_S
            while waiting and time.monotonic() < until:
                if fill is None or not fill():
                    time.sleep(WAITER_POLL_S)  # its busy handler takes the lock within its next try
                waiting = writers_waiting(self.db)
            self._yielded = time.monotonic()
            if waiting:  # it never took the lock (stopped with ^Z?): go on without waiting for it a while
                self._stuck_until = self._yielded + STUCK_FOR_S
            return
        if waiting is False and time.monotonic() - self._yielded < FALLBACK_EVERY_S:
            return
        self.yields += 1
        self.fold()
        if fill is not None:
            while time.monotonic() - self._released < YIELD_FOR_S and fill():
                pass
        gap = YIELD_FOR_S - (time.monotonic() - self._released)
        if gap > 0:
            time.sleep(gap)  # a writer waiting in its busy handler gets its turn in this gap
        self._yielded = time.monotonic()

    def released(self) -> None:
        """A group committed by its own transaction (an audited operation): note it, fold the WAL when due."""
        self.groups += 1
        self._released = time.monotonic()
        self._unfolded = True
        if self._released - self._folded >= FOLD_EVERY_S:
            self.fold()

    def begin(self, fill: Callable[[], bool] | None = None) -> None:
        if self._txn is not None:
            return
        self.wait_turn(fill)
        self._txn = self.db.atomic("IMMEDIATE")
        self._txn.__enter__()
        self.since = time.monotonic()

    def waited_for(self) -> bool:
        """Whether a writer says it waits for the lock the open group holds (looked at most every WAITER_LOOK_S, and
        not while one that never took it is let be)."""
        now = time.monotonic()
        if self._txn is None or now < self._looked + WAITER_LOOK_S or now < self._stuck_until:
            return False
        self._looked = now
        return writers_waiting(self.db) is True

    def due(self) -> bool:
        """Whether the open group has held the lock long enough to commit at the next unit boundary."""
        return self._txn is not None and self.seconds is not None and time.monotonic() - self.since >= self.seconds

    def commit(self) -> None:
        if self._txn is None:
            return
        txn, self._txn = self._txn, None
        txn.__exit__(None, None, None)
        self.released()

    def fold(self) -> None:
        """Copy the WAL's frames into the database now, without the lock and without waiting for readers."""
        self._folded = time.monotonic()
        if not self._unfolded:
            return
        self._unfolded = False
        fold_wal(self.db)

    def close(self, commit: bool = True) -> None:
        if self._txn is None:
            return
        if not self.db.in_transaction():  # SQLite rolled it back itself (disk full): the error is on its way
            self._txn = None
            return
        if commit:
            self.commit()
        else:
            txn, self._txn = self._txn, None
            txn.__exit__(RuntimeError, RuntimeError("bulk write stopped"), None)
