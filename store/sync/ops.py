"""Sync between stores of one owner: take in another store's change records, apply each once.

Pages, revisions and every other record have random ids, so two stores union cleanly; what needs a
rule is (pcp-core.md, sync):
- concurrent revisions: every revision is kept; the head is the newest leaf (latest `created_at`, then
  `revision_id`) and the other leaves are the page's `conflict_revision_ids` until a revision on top
  resolves them;
- deletions win: a receipt received is erased here by the local erasure path (same guarantees, same
  `del_` id), and later records of an erased page are dropped on arrival;
- one source item, one page: when two stores imported the same item (same source key) before they
  synced, the page with the smaller id stays and the other, when it holds the same text, goes.

Long because: each record kind a sync applies (revisions, receipts, relations, lifecycle, handoffs) follows the same
rules in one transaction.
"""

from __future__ import annotations

import json
import time
from collections import deque
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Iterator

import peewee as pw

from .. import ids, index
from ..constants import chunks
from ..bulkwrite import Groups, loading
from ..core import Call, Part, StoreContext, dumps, operation, settle_erasures
from ..deletion import DeletionOps
from ..errors import Conflict, Forbidden, Invalid
from ..export import ExportOps
from ..handoff_ledger import LedgerOps
from ..importing import fewer_collections
from ..titles import page_title
from ..types import SyncApplied, SyncPeer, SyncStatus
from . import records

STORE_ID_KEY = "sync_store_id"
GONE_MARK_KEY = "sync_gone_mark"  # deletion_receipt rowid up to which sync_gone_page is filled
FOREIGN_KEY = "sync_foreign"  # table -> rowid ranges that came in from other stores' change files
READ_AHEAD = 5_000  # records read ahead while the lock is let go between two groups
PARK_BATCH = 1000  # new pages parked in the temporary table a batch at a time
PARK_IN_MEMORY = 2000  # new pages parked in memory before the temporary table takes the rest
LAST_SYNC_KEY = "sync_last"  # when this store last finished a sync (through a folder or with another store)


@dataclass(frozen=True)
class _Prepared:
    """A revision record made ready outside the write lock."""

    title: str
    content: str | None
    media_type: str | None
    facets: str
    refs: str
    provenance: str
    inputs: list[str]
    doc: index.Analysed


def store_id(ctx: StoreContext) -> str:
    """This store's id among the owner's stores (minted once)."""
    db = ctx.db
    row = db.execute_sql("SELECT value FROM meta WHERE key = ?", (STORE_ID_KEY,)).fetchone()
    if row:
        return str(row[0])
    value = "sto_" + ids.ulid()
    with db.atomic("IMMEDIATE"):
        db.execute_sql("INSERT OR IGNORE INTO meta (key, value) VALUES (?, ?)", (STORE_ID_KEY, value))
    return str(db.execute_sql("SELECT value FROM meta WHERE key = ?", (STORE_ID_KEY,)).fetchone()[0])


def is_empty(ctx: StoreContext) -> bool:
    db = ctx.db
    return not any(db.execute_sql(f"SELECT 1 FROM {t} LIMIT 1").fetchone() for t in ("page", "scope", "deletion_receipt"))


def conflicts_of(db: Any, page_pks: Iterable[int]) -> dict[int, list[str]]:
    """Open revision conflicts: page pk -> the leaf revisions other than the head."""
    out: dict[int, list[str]] = {}
    for part in chunks(sorted(set(page_pks))):
        rows = db.execute_sql(f"SELECT page_id, revision_ids FROM sync_conflict WHERE page_id IN ({','.join('?' * len(part))})",
                              part).fetchall()
        out.update({r[0]: json.loads(r[1]) for r in rows})
    return out


class SyncOps(Part):
    """Applying another store's change records here (the folder and the two-store sync both end here)."""

    def __init__(self, ctx: StoreContext, exports: ExportOps, deletion: DeletionOps, ledger: LedgerOps) -> None:
        super().__init__(ctx)
        self._exports = exports
        self._deletion = deletion
        self._ledger = ledger

    # --- identity ---

    @property
    def store_id(self) -> str:
        return store_id(self.ctx)

    def owner_ids(self) -> set[str]:
        """This store's owner id and its aliases (the owner ids of stores that joined with history: one owner)."""
        from .identity import owner_ids

        return owner_ids(self._db, self.owner_id)

    def require_owner(self, operation_name: str) -> None:
        """Sync is the owner's (pcp-core section 2): any other session is `forbidden`, audited as denied."""
        if not self.session.is_owner:
            call = Call(operation_name)
            err = Forbidden("Only the store's owner may sync, pair, join or unpair it.")
            self._audit_failure(call, err, time.perf_counter())
            raise err

    def check_owner(self, other_owner: str, other_empty: bool, other_aliases: Iterable[Any] = ()) -> str:
        """Same owner, or this store is empty and adopts the other's; 'adopted', 'same' or 'theirs' (the other adopts)."""
        if other_owner in self.owner_ids() or self.owner_id in set(other_aliases):
            return "same"
        if is_empty(self.ctx):
            if ids.id_kind(other_owner) != "usr":
                raise Invalid("The other store has no valid owner id.")
            with self._db.atomic("IMMEDIATE"):
                self._db.execute_sql("UPDATE meta SET value = ? WHERE key = 'owner_id'", (other_owner,))
            self.owner_id = other_owner
            return "adopted"
        if other_empty:
            return "theirs"
        raise Conflict(f"That store belongs to another owner ({other_owner}, this one is {self.owner_id}); "
                       "stores sync only with stores of the same owner.")

    # --- marks ---

    def marks(self, peer: str) -> dict[str, int]:
        row = self._db.execute_sql("SELECT marks FROM sync_peer WHERE peer_id = ?", (peer,)).fetchone()
        return json.loads(row[0]) if row else {}

    def revoked(self) -> set[str]:
        """Stores whose changes are refused: unpaired (a revocation in force, or one of two that unpaired each
        other until the owner confirms), and those unpaired before stores signed their files."""
        from .identity import Standing, members, revocations

        standing = Standing(members(self._db), revocations(self._db))
        legacy = {r[0] for r in self._db.execute_sql("SELECT peer_id FROM sync_peer WHERE revoked = 1").fetchall()}
        return legacy | standing.revoked | standing.disputed

    def _set_marks(self, peer: str, marks: dict[str, int]) -> None:
        self._db.execute_sql(
            "INSERT INTO sync_peer (peer_id, marks, last_sync) VALUES (?, ?, ?) ON CONFLICT(peer_id) DO UPDATE SET "
            "marks = excluded.marks, last_sync = excluded.last_sync", (peer, dumps(marks), ids.now()))

    @operation("sync", write=True)
    def finished(self, call: Call) -> None:
        """Remember that a sync just finished: it counts as this store's last sync even when it only wrote (no
        other store had anything new), which the peers' marks alone do not show. Audited, so an open app's
        store watcher sees a sync another process ran."""
        self._db.execute_sql("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (LAST_SYNC_KEY, ids.now()))

    def outgoing(self, since: dict[str, int], skip: dict[str, Any] | None = None,
                 ) -> tuple[dict[str, int], Iterator[dict[str, Any]]]:
        """(the mark reached, the records after `since`): read inside the caller's transaction. `skip`: rowid
        ranges (as `apply` fills its `added`) of rows the receiver itself sent in this sync, left out."""
        upto = records.top_marks(self._db)
        ranges = None
        if skip:
            ranges = {t: list(v) for t, v in skip.items() if t != records.REUSE}
            # A range is cut where a delete since freed rowids in it (a row given one again is this store's own).
            for tbl, floor in self._db.execute_sql("SELECT tbl, MIN(floor) FROM sync_reuse WHERE n > ? GROUP BY tbl",
                                                   (skip.get(records.REUSE, 0),)).fetchall():
                ranges[tbl] = [(a, min(b, floor)) for a, b in ranges.get(tbl, []) if a < floor]
        return upto, records.changes(self._db, self.owner_id, records.lowered(self._db, since), upto, ranges)

    # --- applying ---

    def apply(self, peer: str, recs: Iterable[dict[str, Any]], marks: dict[str, Any] | None = None,
              foreign: bool = False, added: dict[str, Any] | None = None) -> SyncApplied:
        """Apply records from `peer` once, in groups of whole pages (store/bulkwrite.Groups: another writer waits
        at most about one group); `marks` (if given) is remembered as how far we got, with the last group.

        A page is written with its first revision (until then it waits in a temporary table, seen by no one), so
        no group makes a page visible without its head. A run stopped part way leaves the groups before it; the
        marks are not moved, so the next sync applies the same records again and skips what is here.

        `foreign`: the records come from a store's own change files, which every store reads, so the rows they
        add here are left out of this store's own files (FOREIGN_KEY). `added`, when given, is filled with the rowid
        ranges of the rows this run added, per table (and the sync_reuse mark when it began, under REUSE): `sync_with`
        leaves them out of what it sends back to the same store."""
        call = Call("sync")
        started = time.perf_counter()
        with self._failures_audited(call, started):
            settle_erasures(self._db)
            groups = Groups(self._db)
            with loading(self._db), fewer_collections():  # the records read ahead make every full collection long
                try:
                    groups.begin()
                    result = self._apply(call, started, groups, peer, recs, marks, foreign, added)
                except BaseException:
                    groups.close(commit=False)
                    raise
                groups.close()
        return result

    def _apply(self, call: Call, started: float, groups: Groups, peer: str, recs: Iterable[dict[str, Any]],
               marks: dict[str, Any] | None, foreign: bool, added: dict[str, Any] | None) -> SyncApplied:
        if not self.session.is_owner:
            raise Forbidden("Only the owner may sync the store.")
        if peer.split("@")[0] in self.revoked():
            raise Forbidden(f"Store {peer.split('@')[0]} was unpaired; its changes are refused.")
        track = foreign or added is not None
        before = records.top_marks(self._db) if track else {}
        if added is not None:
            added.setdefault(records.REUSE, before[records.REUSE])
        run = _Run(self, call)
        run.fill_gone()
        counted: dict[str, int] = {}
        last_page = None
        source, ahead = iter(recs), deque[dict[str, Any]]()

        def read_ahead() -> bool:
            """Between two groups (the lock let go): read the next records and make their revisions ready."""
            if len(ahead) >= READ_AHEAD:
                return False
            rec = next(source, None)
            if rec is not None:
                ahead.append(rec)
                if rec.get("kind") == "revision":
                    run.prepare(rec)
            return rec is not None

        def tracked() -> None:
            after = records.top_marks(self._db)
            if foreign:
                self._remember_foreign(before, after)
            if added is not None:
                for table, top in after.items():
                    if table != records.REUSE and top > before[table]:
                        added.setdefault(table, []).append((before[table], top))

        def close_group() -> None:
            run.settle()
            if track:
                tracked()
            self._group_audit(call, started, run, counted)
            groups.commit()

        def open_group() -> None:
            nonlocal before
            if not groups.open:
                groups.begin(fill=read_ahead)
                before = records.top_marks(self._db) if track else {}

        run.lock = open_group
        taken = 0
        due = False
        while True:
            rec = ahead.popleft() if ahead else next(source, None)
            if rec is None:
                break
            kind = rec.get("kind")
            page = rec.get("page_id") if kind == "revision" else None
            taken += 1
            if not due and taken % 32 == 0:  # the clock read every 32 records (a group is about 0.3 s of them)
                due = groups.due()
            if due and (page is None or page != last_page):  # never between two revisions of one page
                close_group()
                due = False
            last_page = page
            if kind != "page" and not groups.open:  # a new page is parked: no lock needed until its revision
                open_group()
            run.take(rec)
        open_group()
        run.unpark()
        told = run.settle()
        if marks is not None:
            self._set_marks(peer, marks)
        if track:
            tracked()
        self._group_audit(call, started, run, counted)
        return {"peer": peer, "added": dict(run.added), "erased_pages": sorted(run.erased),
                "deleted_while_revised": sorted(told), "conflicts": run.conflicts,
                "collapsed_pages": sorted(run.collapsed)}

    def _group_audit(self, call: Call, started: float, run: _Run, counted: dict[str, int]) -> None:
        """One audit event per group, with what that group added."""
        call.counts = {k: n - counted.get(k, 0) for k, n in run.added.items() if n - counted.get(k, 0)}
        counted.update(run.added)
        self._append_audit(call, "allowed", started)

    def status(self) -> SyncStatus:
        """This store's sync state: its id, whether it is paired through a folder, its peers, open conflicts."""
        db = self._db
        peers: dict[str, SyncPeer] = {}
        for peer_id, last, revoked in db.execute_sql("SELECT peer_id, last_sync, revoked FROM sync_peer ORDER BY peer_id"):
            store, _, via = str(peer_id).partition("@")
            if via == "unpair":
                continue
            entry = peers.setdefault(store, {"store_id": store, "last_sync": None, "revoked": False, "via": []})
            entry["revoked"] = entry["revoked"] or bool(revoked)
            if last is not None:
                entry["via"].append(via or "with")
                entry["last_sync"] = max(filter(None, (entry["last_sync"], last)))
        conflicts = [r[0] for r in db.execute_sql(
            "SELECT p.page_id FROM sync_conflict c JOIN page p ON p.id = c.page_id ORDER BY p.page_id LIMIT 1000")]
        paired = db.execute_sql("SELECT 1 FROM meta WHERE key = 'sync_keys'").fetchone() is not None
        # Asking never mints the store's id (that happens at its first sync or pairing): a status read stays a read.
        minted = db.execute_sql("SELECT value FROM meta WHERE key = ?", (STORE_ID_KEY,)).fetchone()
        finished = db.execute_sql("SELECT value FROM meta WHERE key = ?", (LAST_SYNC_KEY,)).fetchone()
        last = [p["last_sync"] for p in peers.values() if p["last_sync"]] + ([str(finished[0])] if finished else [])
        from .identity import Standing, members, revocations

        listed, revs = members(db), revocations(db)
        standing = Standing(listed, revs)
        for store in standing.revoked | standing.disputed:
            if store in peers:
                peers[store]["revoked"] = True
        return {"store_id": str(minted[0]) if minted else None, "paired": paired, "peers": list(peers.values()),
                "last_sync": max(last, default=None), "conflicts": conflicts,
                "stores": [{"store_id": sid, "paired_through": m.get("by"), "revoked": sid in standing.revoked,
                            "disputed": sid in standing.disputed} for sid, m in sorted(listed.items())],
                "disputes": [list(pair) for pair in standing.disputes],
                "unsigned_pairing": paired and "granted" not in json.loads(db.execute_sql(
                    "SELECT value FROM meta WHERE key = 'sync_keys'").fetchone()[0])}

    def foreign_ranges(self) -> dict[str, list[tuple[int, int]]]:
        """Rowid ranges per table that came from other stores' files; cut where a delete freed rowids since
        (a row given such a rowid again is this store's own)."""
        row = self._db.execute_sql("SELECT value FROM meta WHERE key = ?", (FOREIGN_KEY,)).fetchone()
        stored = json.loads(row[0]) if row else {}
        seen = int(stored.pop(records.REUSE, 0))
        ranges = {t: [(a, b) for a, b in v] for t, v in stored.items()}
        for tbl, floor in self._db.execute_sql("SELECT tbl, MIN(floor) FROM sync_reuse WHERE n > ? GROUP BY tbl",
                                               (seen,)).fetchall():
            ranges[tbl] = [(a, min(b, floor)) for a, b in ranges.get(tbl, []) if a < floor]
        return ranges

    def _remember_foreign(self, before: dict[str, int], after: dict[str, int]) -> None:
        ranges = self.foreign_ranges()
        for table, top in after.items():
            if table != records.REUSE and top > before[table]:
                spans = ranges.setdefault(table, [])
                if spans and spans[-1][1] == before[table]:
                    spans[-1] = (spans[-1][0], top)
                else:
                    spans.append((before[table], top))
        stored: dict[str, Any] = {**ranges, records.REUSE: after[records.REUSE]}
        self._db.execute_sql("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (FOREIGN_KEY, dumps(stored)))

    def finish_erasures(self, result: SyncApplied) -> None:
        """Fold the WAL after a sync that erased pages (as a local delete does), outside the transaction."""
        if result["erased_pages"]:
            self._deletion.checkpoint(f"sync:{result['peer']}")


class _Run:
    """One application of records: caches, the pages touched, and what to tell the user."""

    def __init__(self, ops: SyncOps, call: Call) -> None:
        self.ops = ops
        self.call = call
        self.db = ops._db
        self.ex = ops._exports
        self.pk: dict[str, int | None] = {}
        self.touched: set[int] = set()
        self.status_touched: set[int] = set()
        self.added: dict[str, int] = {}
        self.erased: set[str] = set()
        self.told: set[str] = set()
        self.collapsed: set[str] = set()
        self.conflicts = 0
        self.scopes: dict[str, int] = {}
        self.fresh: set[int] = set()  # pages made in this run (their first revision is seq 1)
        self.seq: dict[int, int] = {}  # page pk -> the last seq given in this run
        self.index_rows: list[tuple[int, int, int, index.Analysed]] = []  # (page pk, revision pk, scope pk, terms)
        self._owners: set[str] | None = None
        self.parking = False  # the temporary table of parked pages exists
        self.waiting: dict[str, tuple[int, Any, str, Any, Any]] = {}  # page id -> its row, parked in memory
        self.to_park: list[tuple[str, int, Any, str, Any, Any]] = []  # pages parked, not yet in the table
        self.prepared: dict[int, _Prepared] = {}  # id(record) -> its revision made ready while the lock was free
        self.lock: Callable[[], None] = lambda: None  # takes the write lock (a group) before a page is changed
        self.none_gone = False  # set by fill_gone
        self.no_pages = False
        self.none_deleted = False
        self.last_was_here = False  # the last revision taken was here already (then none is made ready ahead)

    def count(self, kind: str) -> None:
        self.added[kind] = self.added.get(kind, 0) + 1

    def fill_gone(self) -> None:
        """Every receipt's page ids in sync_gone_page (local deletes too), from where the last run stopped."""
        row = self.db.execute_sql("SELECT value FROM meta WHERE key = ?", (GONE_MARK_KEY,)).fetchone()
        last = int(row[0]) if row else 0
        rows = self.db.execute_sql("SELECT rowid, receipt_id, page_ids FROM deletion_receipt WHERE rowid > ? ORDER BY rowid",
                                   (last,)).fetchall()
        for rowid, receipt_id, page_ids in rows:
            self.mark_gone(json.loads(page_ids), receipt_id)
            last = rowid
        self.db.execute_sql("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (GONE_MARK_KEY, str(last)))
        # No page erased or merged away yet (a new store): nothing to look up for every page (this run's
        # receipts and merges turn it off; only a sync writes these tables).
        self.none_gone = not any(self.db.execute_sql(f"SELECT 1 FROM {t} LIMIT 1").fetchone()
                                 for t in ("sync_gone_page", "sync_alias"))
        # A store with no page (a first sync): the new pages' and revisions' ids are unique keys, so an insert
        # that finds one here already (another writer meanwhile) fails and is then taken as "here".
        self.no_pages = not self.db.execute_sql("SELECT 1 FROM page LIMIT 1").fetchone()
        self.none_deleted = not self.db.execute_sql("SELECT 1 FROM deleted_revision LIMIT 1").fetchone()

    def mark_gone(self, page_ids: list[str], receipt_id: str) -> None:
        if page_ids:
            self.none_gone = self.none_deleted = False
        for part in chunks(page_ids):
            self.db.execute_sql("INSERT OR IGNORE INTO sync_gone_page (page_id, receipt_id) VALUES " +
                                ",".join("(?,?)" for _ in part), [x for p in part for x in (p, receipt_id)])

    def gone(self, page_id: str) -> bool:
        if self.none_gone:
            return False
        return self.db.execute_sql("SELECT 1 FROM sync_gone_page WHERE page_id = ? UNION ALL "
                                   "SELECT 1 FROM sync_alias WHERE page_id = ?", (page_id, page_id)).fetchone() is not None

    def page_pk(self, page_id: Any) -> int | None:
        if not isinstance(page_id, str):
            return None
        if page_id not in self.pk:
            pk = self._unpark(page_id)  # a page parked in this run (then cached); else one the store holds
            if pk is not None:
                return pk
            row = self.db.execute_sql("SELECT id FROM page WHERE page_id = ?", (page_id,)).fetchone()
            if row is None:
                return None  # (not cached: the page may come later in the run)
            self.pk[page_id] = row[0]
        return self.pk[page_id]

    def _stored_pk(self, page_id: Any) -> int | None:
        """The pk of a page the store holds (not one parked in this run)."""
        if not isinstance(page_id, str):
            return None
        row = self.db.execute_sql("SELECT id FROM page WHERE page_id = ?", (page_id,)).fetchone()
        if row is not None:
            self.pk[page_id] = row[0]
        return row[0] if row else None

    def take(self, rec: dict[str, Any]) -> None:
        kind = rec.get("kind")
        handler = getattr(self, f"_take_{kind}", None)
        if handler is None:
            raise Invalid(f"A sync record has an unknown kind {str(kind)[:40]!r}; is the other store newer? upgrade pcp.")
        try:
            handler(rec)
        except (KeyError, TypeError, ValueError) as exc:
            raise Invalid(f"A sync record ({kind}) is malformed: {exc}.") from None

    # --- each kind ---

    def _take_receipt(self, rec: dict[str, Any]) -> None:
        db = self.db
        rid = rec["receipt_id"]
        if db.execute_sql("SELECT 1 FROM deletion_receipt WHERE receipt_id = ?", (rid,)).fetchone():
            return
        page_ids = list(rec["page_ids"])
        self.none_deleted = False  # its revisions are refused from now on (deleted_revision)
        self.mark_gone(page_ids, rid)
        local: dict[int, str] = {}
        for part in chunks(page_ids):
            local.update(db.execute_sql(f"SELECT id, page_id FROM page WHERE page_id IN ({','.join('?' * len(part))})",
                                        part).fetchall())
        scope = None
        if rec["namespace"] is not None:
            scope = db.execute_sql("SELECT id FROM scope WHERE namespace = ?", (rec["namespace"],)).fetchone()
            if scope is not None:  # a scope delete takes every page it held then, those made here meanwhile too
                local.update(db.execute_sql("SELECT id, page_id FROM page WHERE scope_id = ? AND created_at <= ?",
                                            (scope[0], rec["created_at"])).fetchall())
        if local:
            known = set(rec["revision_ids"])
            for part in chunks(sorted(local)):
                marks = ",".join("?" * len(part))
                for (pid,) in db.execute_sql(
                        f"SELECT DISTINCT p.page_id FROM revision r JOIN page p ON p.id = r.page_id WHERE r.page_id IN ({marks}) "
                        f"AND r.revision_id NOT IN (SELECT value FROM json_each(?))", (*part, dumps(sorted(known)))):
                    self.told.add(pid)
            self._erase(set(local), rec["reason"], rid)
            self.erased.update(local.values())
        self.ex._in_receipt(rec)
        if scope is not None and not db.execute_sql("SELECT 1 FROM page WHERE scope_id = ? LIMIT 1", (scope[0],)).fetchone():
            index.drop_scope(db.cursor(), scope[0])
            db.execute_sql("DELETE FROM scope WHERE id = ?", (scope[0],))
            self.scopes.pop(rec["namespace"], None)
        self.count("receipt")

    def _erase(self, pks: set[int], reason: str, receipt_id: str | None) -> None:
        """The local erasure path (store/deletion.py) under the receipt id that travelled (or none, for a duplicate)."""
        self.flush_index()
        deletion = self.ops._deletion
        plan = deletion.erasure_plan(pks, set())
        local = deletion._erase(self.call, pks, plan, reason, None, None)
        db = self.db
        db.execute_sql("DELETE FROM deletion_receipt WHERE receipt_id = ?", (local["receipt_id"],))
        if receipt_id is None:
            db.execute_sql("DELETE FROM deleted_revision WHERE receipt_id = ?", (local["receipt_id"],))
        else:
            db.execute_sql("UPDATE deleted_revision SET receipt_id = ? WHERE receipt_id = ?", (receipt_id, local["receipt_id"]))
        gone = plan["pages"]
        if receipt_id is not None:
            self.mark_gone(gone, receipt_id)
        for pid in gone:
            self.pk[pid] = None
        for pk in pks:
            self.seq.pop(pk, None)
        self.touched -= pks
        self.status_touched -= pks

    def _take_scope(self, rec: dict[str, Any]) -> None:
        db = self.db
        row = db.execute_sql("SELECT id, updated_at, created_at, display_name, description, parent, visibility, owner_id "
                             "FROM scope WHERE namespace = ?", (rec["namespace"],)).fetchone()
        owners = self.owners()
        owner = rec.get("owner_id") if rec.get("owner_id") in owners else self.ops.owner_id
        if row is not None:
            if rec["updated_at"] > row[1]:
                db.execute_sql("UPDATE scope SET updated_at = ? WHERE id = ?", (rec["updated_at"], row[0]))
            # One namespace held by two stores (made on both before they synced, or both held history when they
            # joined): one scope, the stricter visibility, the older one's name, description, parent and owner id.
            visibility = "private" if "private" in (rec["visibility"], row[6]) else row[6]
            theirs = (rec["created_at"], rec["display_name"], rec["description"] or "", rec["parent"] or "", owner)
            mine = (row[2], row[3], row[4] or "", row[5] or "", row[7])
            kept = min(theirs, mine)
            if kept != mine or visibility != row[6]:
                db.execute_sql("UPDATE scope SET created_at = ?, display_name = ?, description = ?, parent = ?, owner_id = ?, "
                               "visibility = ? WHERE id = ?", (*kept[:2], kept[2] or None, kept[3] or None, kept[4],
                                                               visibility, row[0]))
            return
        deleted = db.execute_sql("SELECT MAX(created_at) FROM deletion_receipt WHERE namespace = ?",
                                 (rec["namespace"],)).fetchone()[0]
        if deleted is not None and rec["updated_at"] <= deleted:
            return  # the scope as it was before its deletion
        self.ex._in_scope({**rec, "owner_id": owner})
        self.count("scope")

    def owners(self) -> set[str]:
        if self._owners is None:
            self._owners = self.ops.owner_ids()
        return self._owners

    def scope_pk(self, namespace: str) -> int | None:
        if namespace not in self.scopes:
            row = self.db.execute_sql("SELECT id FROM scope WHERE namespace = ?", (namespace,)).fetchone()
            if row is None:
                return None
            self.scopes[namespace] = row[0]
        return self.scopes[namespace]

    def _take_page(self, rec: dict[str, Any]) -> None:
        """A page new here (as the export's reader makes it, in plain SQL: this is the hot path)."""
        pid = rec["page_id"]
        if isinstance(pid, str) and pid in self.pk:
            pk = self.pk[pid]
        else:  # into a store that had no page when the run began, a page is looked up only if its insert fails
            pk = None if self.no_pages else self._stored_pk(pid)
        if pk is not None:
            self.lock()
            self.db.execute_sql("UPDATE page SET updated_at = ? WHERE id = ? AND updated_at < ?", (rec["updated_at"], pk, rec["updated_at"]))
            return
        if self.gone(pid):
            return
        scope = self.scope_pk(rec["namespace"])
        if scope is None:
            return  # its scope was deleted here
        if ids.id_kind(pid) != "pg":
            raise ValueError(f"{str(pid)[:40]!r} is not a page id")
        # Parked until its first revision (or the end of the run): a group never commits a page without its head.
        # A page travels just before its first revision (records.changes), so it waits in memory; files that send
        # every page first (older pcp) park the rest in a temporary table, a batch at a time, which needs no write
        # lock on the store.
        row = (scope, rec["head_revision_id"], rec.get("actor_type") or "user", rec["created_at"], rec["updated_at"])
        if pid in self.waiting or (len(self.waiting) < PARK_IN_MEMORY and not self.parking and not self.to_park):
            self.waiting[pid] = row
        else:
            self.to_park.append((pid, *row))
            if len(self.to_park) >= PARK_BATCH:
                self.park()
        self.pk.pop(pid, None)
        self.count("page")

    def park(self) -> None:
        """Write the pages waiting to be parked into the temporary table (made at the first)."""
        if not self.parking:
            self.db.execute_sql("CREATE TEMP TABLE IF NOT EXISTS sync_parked (page_id TEXT PRIMARY KEY, scope_id INTEGER, "
                                "head_revision_id TEXT, actor_type TEXT, created_at TEXT, updated_at TEXT)")
            self.db.execute_sql("DELETE FROM temp.sync_parked")
            self.parking = True
        if self.to_park:
            self.db.cursor().executemany(
                "INSERT OR REPLACE INTO temp.sync_parked (page_id, scope_id, head_revision_id, actor_type, created_at, "
                "updated_at) VALUES (?, ?, ?, ?, ?, ?)", self.to_park)
            self.to_park = []

    def _unpark(self, page_id: str) -> int | None:
        """Write a parked page now (its first revision, or another record naming it, is here), in one statement;
        None when it is not parked. Its row stays in the temporary table (dropped at the end of the run): the
        page is cached in `pk` from now on, so it is never written twice."""
        row = self.waiting.pop(page_id, None)
        if row is not None:
            self.lock()
            scope, head, actor, created, updated = row
            try:
                pk: int = self.db.execute_sql(
                    "INSERT INTO page (page_id, scope_id, head, head_revision_id, status, superseded, title, actor_type, "
                    "created_at, updated_at, sort_time) VALUES (?, ?, NULL, ?, 'active', 0, '', ?, ?, ?, ?)",
                    (page_id, scope, head, actor, created, updated, created)).lastrowid
            except pw.IntegrityError:  # here after all (not looked up first: see no_pages)
                return self._here(page_id, updated)
            return self._unparked(page_id, pk)
        if self.to_park:
            self.park()
        if not self.parking:
            return None
        self.lock()
        try:
            cur = self.db.execute_sql(
                "INSERT INTO page (page_id, scope_id, head, head_revision_id, status, superseded, title, actor_type, "
                "created_at, updated_at, sort_time) SELECT page_id, scope_id, NULL, head_revision_id, 'active', 0, '', "
                "actor_type, created_at, updated_at, created_at FROM temp.sync_parked WHERE page_id = ?", (page_id,))
        except pw.IntegrityError:
            updated = self.db.execute_sql("SELECT updated_at FROM temp.sync_parked WHERE page_id = ?", (page_id,)).fetchone()
            return self._here(page_id, updated[0])
        if not cur.rowcount:
            return None
        return self._unparked(page_id, cur.lastrowid)

    def _here(self, page_id: str, updated: Any) -> int | None:
        """A parked page this store turned out to hold: taken as the page record of one it holds."""
        pk = self._stored_pk(page_id)
        if pk is not None:
            self.added["page"] -= 1
            self.db.execute_sql("UPDATE page SET updated_at = ? WHERE id = ? AND updated_at < ?", (updated, pk, updated))
        return pk

    def _unparked(self, page_id: str, pk: int) -> int:
        self.pk[page_id] = pk
        self.fresh.add(pk)
        self.touched.add(pk)
        self.status_touched.add(pk)
        return pk

    def unpark(self) -> None:
        """At the end of the run: the parked pages no revision came for are written as they are."""
        for page_id in list(self.waiting):
            self._unpark(page_id)
        if not (self.parking or self.to_park):
            return
        self.park()
        for (page_id,) in self.db.execute_sql("SELECT page_id FROM temp.sync_parked ORDER BY rowid").fetchall():
            if page_id not in self.pk:
                self._unpark(page_id)
        self.db.execute_sql("DROP TABLE IF EXISTS temp.sync_parked")
        self.parking = False

    def prepare(self, rec: dict[str, Any]) -> None:
        """Make a revision record ready while the lock is free (its title, stored JSON and index terms); a record
        that does not fit is left for `_take_revision` to refuse."""
        if self.last_was_here:
            return  # revisions this store holds (the other way of a sync with another store): likely more of them
        try:
            self.prepared[id(rec)] = self._ready(rec)
        except (KeyError, TypeError, ValueError, AttributeError):
            pass

    def _ready(self, rec: dict[str, Any]) -> _Prepared:
        payload = rec["payload"]
        facets = rec["facets"]
        if not isinstance(facets, dict) or not isinstance(rec["source_refs"], list) or not isinstance(rec["provenance"], list):
            raise TypeError("facets, source_refs and provenance must be an object and lists")
        title = page_title(facets, payload, rec["source_refs"])
        content = payload["content"] if payload else None
        inputs = sorted({i for e in rec["provenance"] for i in e.get("input_revision_ids", [])})
        return _Prepared(title, content, payload["media_type"] if payload else None, dumps(facets),
                         dumps(rec["source_refs"]), dumps(rec["provenance"]), inputs,
                         index.analyse(title, content, facets, self.ops._salt, rec["observed_at"] or rec["created_at"]))

    def _take_revision(self, rec: dict[str, Any]) -> None:
        """A revision new here (as the export's reader makes it, in plain SQL; indexed in batches)."""
        ready = self.prepared.pop(id(rec), None)
        pk = self.page_pk(rec["page_id"])
        if pk is None:
            return
        rid = rec["revision_id"]
        # A revision of a page made in this run, with nothing erased here: its insert is the look-up (unique id).
        insert_first = pk in self.fresh and self.none_deleted
        if not insert_first:
            self.last_was_here = self.db.execute_sql(
                "SELECT 1 FROM revision WHERE revision_id = ? UNION ALL SELECT 1 FROM deleted_revision WHERE revision_id = ?",
                (rid, rid)).fetchone() is not None
            if self.last_was_here:
                return
        if ids.id_kind(rid) != "rev":
            raise ValueError(f"{str(rid)[:40]!r} is not a revision id")
        scope = self.scope_pk(rec["namespace"])
        if scope is None:
            return
        if ready is None:
            ready = self._ready(rec)
        seq = 1 if pk in self.fresh and pk not in self.seq else None
        if seq is None:
            seq = self.seq.get(pk) or (self.db.execute_sql("SELECT COALESCE(MAX(seq), 0) FROM revision WHERE page_id = ?",
                                                           (pk,)).fetchone()[0])
            seq += 1
        try:
            cur = self.db.execute_sql(
                "INSERT INTO revision (revision_id, page_id, seq, previous_revision_id, scope_id, created_at, observed_at, "
                "valid_from, valid_to, actor_type, actor_id, media_type, content, content_digest, title, facets, "
                "source_refs, provenance) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (rid, pk, seq, rec["previous_revision_id"], scope, rec["created_at"], rec["observed_at"], rec["valid_from"],
                 rec["valid_to"], rec["created_by"]["actor_type"], rec["created_by"]["actor_id"], ready.media_type,
                 ready.content, rec["content_digest"], ready.title, ready.facets, ready.refs, ready.provenance))
        except pw.IntegrityError:
            if not insert_first:
                raise
            self.last_was_here = True  # here already (under another page: a record naming it twice)
            return
        self.last_was_here = False
        self.seq[pk] = seq
        rev_pk = cur.lastrowid
        if ready.inputs:
            self.db.cursor().executemany(
                "INSERT INTO provenance_input (revision_id, page_id, input_revision_id, input_page) VALUES (?,?,?,NULL)",
                [(rev_pk, pk, i) for i in ready.inputs])
        self.index_rows.append((pk, rev_pk, scope, ready.doc))
        if len(self.index_rows) >= 500:
            self.flush_index()
        self.touched.add(pk)
        self.count("revision")

    def flush_index(self) -> None:
        """Index the revisions taken in (counted in the statistics unless their page is tombstoned here)."""
        if not self.index_rows:
            return
        pks = sorted({pk for pk, _, _, _ in self.index_rows})
        hidden: set[int] = set()
        for part in chunks(pks):
            hidden.update(r[0] for r in self.db.execute_sql(
                f"SELECT id FROM page WHERE status = 'tombstoned' AND id IN ({','.join('?' * len(part))})", part))
        index.add_analysed(self.db.cursor(), [(rev_pk, scope, doc, pk not in hidden)
                                              for pk, rev_pk, scope, doc in self.index_rows])
        self.index_rows = []

    def _take_relation(self, rec: dict[str, Any]) -> None:
        a, b = self.page_pk(rec["from_page_id"]), self.page_pk(rec["to_page_id"])
        if a is None or b is None:
            return
        if self.ex._in_relation(rec):
            self.touched.update((a, b))
            self.count("relation")

    def _take_retraction(self, rec: dict[str, Any]) -> None:
        if not self.db.execute_sql("SELECT 1 FROM relation WHERE relation_id = ?", (rec["relation_id"],)).fetchone():
            return
        if self.ex._in_retraction(rec):
            self.touched.update(p for p in (self.page_pk(rec["from_page_id"]), self.page_pk(rec["to_page_id"])) if p)
            self.count("retraction")

    def _take_lifecycle_event(self, rec: dict[str, Any]) -> None:
        pk = self.page_pk(rec["page_id"])
        if pk is not None and self.ex._in_lifecycle_event(rec):
            self.touched.add(pk)
            self.status_touched.add(pk)
            self.count("lifecycle_event")

    def _take_suppression(self, rec: dict[str, Any]) -> None:
        if self.page_pk(rec["page_id"]) is None:
            return
        lifted = self.db.execute_sql("SELECT lifted_at FROM sync_unsuppress WHERE key = ?",
                                     (f"{rec['context_id']} {rec['page_id']}",)).fetchone()
        if lifted is not None and lifted[0] >= rec["created_at"]:
            return
        if self.ex._in_suppression(rec):
            self.count("suppression")

    def _take_unsuppress(self, rec: dict[str, Any]) -> None:
        pk = self.page_pk(rec["page_id"])
        if pk is None:
            return
        key = f"{rec['context_id']} {rec['page_id']}"
        mine = self.db.execute_sql("SELECT lifted_at FROM sync_unsuppress WHERE key = ?", (key,)).fetchone()
        if mine is not None and mine[0] >= rec["lifted_at"]:
            return
        self.db.execute_sql("DELETE FROM suppression WHERE page_id = ? AND context_id = ? AND created_at <= ?",
                            (pk, rec["context_id"], rec["lifted_at"]))
        # The lift is recorded with its own time, so it travels on unchanged.
        self.db.execute_sql("INSERT OR REPLACE INTO sync_unsuppress (key, page_id, context_id, lifted_at) VALUES (?,?,?,?)",
                            (key, rec["page_id"], rec["context_id"], rec["lifted_at"]))
        self.count("unsuppress")

    def _take_recommendation(self, rec: dict[str, Any]) -> None:
        if self.page_pk(rec["page_id"]) is not None and self.ex._in_recommendation(rec):
            self.count("recommendation")

    def _take_source_page(self, rec: dict[str, Any]) -> None:
        db = self.db
        theirs = rec["page_id"]
        their_pk = self.page_pk(theirs)
        if their_pk is None:
            return
        row = db.execute_sql("SELECT s.page_id, p.page_id FROM source_page s JOIN page p ON p.id = s.page_id "
                             "WHERE s.source_key = ?", (rec["source_key"],)).fetchone()
        if row is None:
            self.ex._in_source_page(rec)
            self.count("source_page")
            return
        mine_pk, mine = row
        if mine == theirs:
            return
        # The same source item imported on two stores before they synced: one page stays, the smaller id.
        keep, drop, drop_pk = (mine, theirs, their_pk) if mine < theirs else (theirs, mine, mine_pk)
        if self._same_text(mine_pk, their_pk):
            self.none_gone = False
            db.execute_sql("INSERT OR REPLACE INTO sync_alias (page_id, winner_page_id) VALUES (?, ?)", (drop, keep))
            self._erase({drop_pk}, "a duplicate of the same source item, kept as " + keep, None)
            self.collapsed.add(drop)
        if keep == theirs:
            db.execute_sql("UPDATE source_page SET page_id = ?, body_digest = ? WHERE source_key = ?",
                           (their_pk, rec["body_digest"], rec["source_key"]))
            if not db.execute_sql("SELECT 1 FROM source_page WHERE source_key = ?", (rec["source_key"],)).fetchone():
                self.ex._in_source_page(rec)
            self.count("source_page")

    def _same_text(self, a: int, b: int) -> bool:
        rows = self.db.execute_sql("SELECT r.content_digest FROM page p JOIN revision r ON r.revision_id = p.head_revision_id "
                                   "WHERE p.id IN (?, ?)", (a, b)).fetchall()
        return len(rows) == 2 and rows[0][0] == rows[1][0]

    def _take_idempotency(self, rec: dict[str, Any]) -> None:
        pk = self.page_pk(rec["page_id"]) if rec["page_id"] is not None else None
        if rec["page_id"] is not None and pk is None:
            return
        cur = self.db.execute_sql(
            "INSERT OR IGNORE INTO idempotency (principal, operation, key, body_digest, result, page_id, created_at) "
            "VALUES (?,?,?,?,?,?,?)", (rec["principal"], rec["operation"], rec["key"], rec["body_digest"], rec["result"],
                                       pk, rec["created_at"]))
        if cur.rowcount:
            self.count("idempotency")

    def _take_handoff(self, rec: dict[str, Any]) -> None:
        if rec["previous_handoff_id"] and not self.db.execute_sql(
                "SELECT 1 FROM handoff WHERE handoff_id = ?", (rec["previous_handoff_id"],)).fetchone():
            return
        if self.ops._ledger._in_handoff(rec):
            self.count("handoff")

    # --- derived columns of the pages touched ---

    def settle(self) -> set[str]:
        """Heads, conflicts, titles, sort times, status, supersedes counts of the pages touched; returns who to tell."""
        db = self.db
        self.flush_index()
        touched = sorted(pk for pk in self.touched if pk is not None)
        for part in chunks(touched):
            marks = ",".join("?" * len(part))
            leaves: dict[int, list[tuple[str, str, int]]] = {}
            for page, rid, created, rev_pk in db.execute_sql(
                f"SELECT r.page_id, r.revision_id, r.created_at, r.id FROM revision r WHERE r.page_id IN ({marks}) "
                "AND NOT EXISTS (SELECT 1 FROM revision c WHERE c.page_id = r.page_id AND c.previous_revision_id = r.revision_id) "
                "AND NOT EXISTS (SELECT 1 FROM provenance_input i WHERE i.input_revision_id = r.revision_id "
                "AND i.page_id = r.page_id AND i.revision_id != r.id)", part,
            ):
                leaves.setdefault(page, []).append((created, rid, rev_pk))
            heads = []
            db.execute_sql(f"DELETE FROM sync_conflict WHERE page_id IN ({marks})", part)
            for page, found in leaves.items():
                found.sort(reverse=True)
                heads.append((found[0][2], found[0][1], page))
                if len(found) > 1:
                    db.execute_sql("INSERT INTO sync_conflict (page_id, revision_ids) VALUES (?, ?)",
                                   (page, dumps(sorted(r for _, r, _ in found[1:]))))
                    self.conflicts += 1
            db.cursor().executemany(
                "UPDATE page SET head = ?, head_revision_id = ? WHERE id = ? AND (head IS NULL OR head != ?)",
                [(h, rid, page, h) for h, rid, page in heads])
            db.execute_sql(
                "UPDATE page SET title = r.title, media_type = r.media_type, sort_time = COALESCE(r.observed_at, r.created_at), "
                "updated_at = MAX(page.updated_at, r.created_at) FROM revision r "
                f"WHERE r.id = page.head AND page.id IN ({marks})", part)
            db.execute_sql(
                "UPDATE page SET superseded = (SELECT COUNT(*) FROM relation r WHERE r.to_page_id = page.id "
                "AND r.relation_type = 'supersedes' AND r.retracted = 0 AND r.actor_type != 'model') "
                f"WHERE id IN ({marks})", part)
            db.execute_sql(
                "UPDATE provenance_input SET input_page = (SELECT r.page_id FROM revision r "
                f"WHERE r.revision_id = provenance_input.input_revision_id) WHERE input_page IS NULL AND page_id IN ({marks})",
                part)
        for part in chunks(sorted(pk for pk in self.status_touched if pk is not None)):
            marks = ",".join("?" * len(part))
            for pk, status, latest, last_at in db.execute_sql(
                "SELECT p.id, p.status, (SELECT e.to_status FROM lifecycle_event e WHERE e.page_id = p.id "
                "ORDER BY e.created_at DESC, e.event_id DESC LIMIT 1), (SELECT MAX(e.created_at) FROM lifecycle_event e "
                f"WHERE e.page_id = p.id) FROM page p WHERE p.id IN ({marks})", part,
            ).fetchall():
                target = latest or "active"
                if target != status:
                    if (status == "tombstoned") != (target == "tombstoned"):
                        index.set_counted(db.cursor(), self.ops._salt, pk, counted=target != "tombstoned")
                    db.execute_sql("UPDATE page SET status = ? WHERE id = ?", (target, pk))
                if last_at is not None:
                    db.execute_sql("UPDATE page SET updated_at = ? WHERE id = ? AND updated_at < ?", (last_at, pk, last_at))
        self.touched = set()
        self.status_touched = set()
        return self.told
