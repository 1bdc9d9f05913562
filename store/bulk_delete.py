"""Forgetting many pages at once: a filter selects every matching page; one plan, one receipt, bounded batches.

A bulk deletion is the one explicit exception to one transaction per delete (pcp-core.md section 6):
1. `plan_bulk_delete(filters)` evaluates the filter (every matching page: no limit, no ranking) and
   shows what would go, with a digest of the exact sorted page-id set. It writes its audit event only.
2. `bulk_delete(filters, reason, plan_digest)` evaluates the filter again inside the transaction
   that records the deletion (`bulk_deletion` row: receipt id, the exact page-id set, its digest) and
   refuses (`conflict`) when the set differs from the plan's. Nothing is erased in that transaction.
3. The recorded set is then erased in batches of `batch_size` pages, each batch its own transaction
   through the same erasure path as a single delete (DeletionOps.erase_batch), each updating the
   receipt (`completed: n/N`). A concurrent writer waits for one batch at most, never for the whole.
4. Cut short (SIGKILL, Ctrl-C between batches), whole pages only are gone; `resume_bulk_delete(id)`
   continues the recorded set and never evaluates the filter again.
5. One audit event at the start (`bulk_delete_start`) and one at completion (`bulk_delete_complete`),
   both carrying the receipt id; a resume adds `bulk_delete_resume`.
Owner only: a model session never deletes.
"""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path
from typing import Any


from . import analysis, ids, stops
from . import validate as v
from .constants import LIFECYCLE_STATUSES, Progress
from .core import Call, Part, StoreContext, dumps, operation
from .db import fold_wal
from .deletion import DeletionOps
from .errors import Conflict, Forbidden, Invalid, Unsupported, not_found
from .files import remove_dead_temps
from .index import FTS_TABLE
from .search import FILTER_KEYS as SEARCH_FILTER_KEYS
from .search import SearchOps
from .titles import shown_title
from .types import BulkDeletePlan, BulkDeleteReceipt, BulkPage, ExportFileRef, StoppedBulkDeletions

FILTER_KEYS = frozenset({
    "scopes", "query", "mode", "lifecycle_status", "actor_types", "media_types", "observed_after", "observed_before",
    "created_after", "created_before", "relation_types", "in_page", "page_ids",
})
SELECTING = FILTER_KEYS - {"mode", "lifecycle_status"}  # at least one of these: never "every page" by accident
MODES = ("text", "exact")
DEFAULT_BATCH = 200  # pages per transaction: short enough that a concurrent writer never waits long
MAX_BATCH = 500  # ids per statement (constants.BATCH)
FIRST_PAGES = 20
# Between batches the write lock is let go for a moment, and now and then for longer than SQLite's
# busy handler sleeps between two tries (100 ms at most), so a writer in another process that waits
# for the lock is sure to get it: otherwise back-to-back batches can starve it for the whole deletion.
YIELD_EVERY_S = 0.3
YIELD_FOR_S = 0.11
# A batch takes the number of pages that held the lock about this long last time (at most batch_size):
# a 1,000,000-page store or a busy machine makes each page slower, and the wait of other writers with it.
BATCH_TARGET_S = 0.2
MIN_BATCH = 10
# FTS5 merges a segment once enough of its entries are deleted ('deletemerge', 10 % by default), and
# it does so inside whichever transaction next writes to the index: during a bulk deletion that is
# another writer's one-page write, which then takes seconds. While a bulk deletion is pending the
# store sets it to 0 (the value before is kept in meta) and puts it back when none is pending.
DELETEMERGE_KEY = "bulk_delete_fts_deletemerge"
FTS_DEFAULT_DELETEMERGE = 10
DIGEST_HEX = 32  # 128 bits of SHA-256: short enough to pass on a command line, far too long to collide


def selection_digest(page_ids: list[str]) -> str:
    """The digest of an exact page set (order does not matter)."""
    return "sha256:" + hashlib.sha256("\n".join(sorted(page_ids)).encode("utf-8")).hexdigest()[:DIGEST_HEX]


def _given(value: Any) -> bool:
    return value is not None and value != [] and value != ()


class BulkDeleteOps(Part):
    """plan_bulk_delete, bulk_delete, resume_bulk_delete, bulk_deletions over the search filters and the erasure path."""

    def __init__(self, ctx: StoreContext, search: SearchOps, deletion: DeletionOps) -> None:
        super().__init__(ctx)
        self._search = search
        self._deletion = deletion

    # --- selection ---

    def _owner(self) -> None:
        if not self.session.is_owner:
            raise Forbidden("Only the owner may delete; a model client can recommend a tombstone instead.")

    def _select(self, call: Call, filters: dict[str, Any] | None) -> tuple[list[tuple[str, int]], dict[str, Any]]:
        """Every page the filter selects as sorted (page_id, pk) pairs, and the filter as understood."""
        raw = {k: val for k, val in dict(filters or {}).items() if _given(val)}
        unknown = set(raw) - FILTER_KEYS
        if unknown:
            raise Unsupported(f"Deletion filter {', '.join(sorted(unknown))} is not supported.")
        if not set(raw) & SELECTING:
            raise Invalid("Name at least one filter (scope, query, type, time, relation or --in); "
                          "a bulk deletion never selects every page by default.")
        query = raw.get("query")
        mode = raw.get("mode")
        if query is not None:
            query = v.query(query).strip()
            if not query:
                raise Invalid("The query is empty; leave it out or give words to match.")
        if mode is not None and mode not in MODES:
            if mode == "auto":
                raise Unsupported("Deletion selects with mode text or exact; auto (a ranked any-term match) has no edge.")
            raise Unsupported(f"Deletion mode {mode!r} is not supported; use text or exact.")
        if query is not None and mode is None:
            raise Invalid("A query for deletion needs its mode: text (every word) or exact (the substring).")
        if mode is not None and query is None:
            raise Invalid("A mode applies to a query; give one.")
        statuses = raw.get("lifecycle_status") or list(LIFECYCLE_STATUSES)  # archived and tombstoned too
        search_flt = {k: raw[k] for k in SEARCH_FILTER_KEYS if k in raw}
        search_flt["lifecycle_status"] = statuses
        checked = self._search.checked_filters(search_flt)  # (refused before the scopes are looked at)
        named = self._named_scopes(call, raw.get("scopes"), "delete")
        selection = self._search.page_query(named, checked)
        flt, where, params = selection.filters, selection.where, list(selection.params)
        sql = ("SELECT p.page_id, p.id, s.namespace FROM page p JOIN revision r ON r.id = p.head "
               f"JOIN scope s ON s.id = p.scope_id WHERE {where}")
        shown: dict[str, Any] = {**flt}
        if named:
            shown["scopes"] = sorted(set(named))
        if "in_page" in raw:
            inside = self._page_row(str(raw["in_page"]), call, "delete")
            # The page and everything it contains, over live `contains` relations, however deep.
            sql += (" AND p.id IN (WITH RECURSIVE inside(id) AS (SELECT ? UNION SELECT x.to_page_id FROM relation x "
                    "JOIN inside ON x.from_page_id = inside.id WHERE x.relation_type = 'contains' AND x.retracted = 0) "
                    "SELECT id FROM inside)")
            params = [*params, inside.id]
            shown["in_page"] = inside.page_id
        if "page_ids" in raw:  # an explicit selection (the app's own): exactly these, if they pass the rest
            chosen = raw["page_ids"]
            if isinstance(chosen, str) or not all(isinstance(x, str) for x in chosen):
                raise Invalid("page_ids must be a list of page ids.")
            wanted = sorted({x.strip() for x in chosen})
            sql += " AND p.page_id IN (SELECT value FROM json_each(?))"
            params = [*params, dumps(wanted)]
            shown["page_ids"] = wanted
        if query is not None:
            # The query matches any revision of a page: an old revision that mentions it is forgotten too.
            if mode == "text":
                self._search.require_current_index()
                expr = analysis.text_match(query, self._salt)
                if expr is None:
                    sql += " AND 0"
                else:
                    sql += (f" AND p.id IN (SELECT x.page_id FROM revision x WHERE x.id IN "
                            f"(SELECT rowid FROM {FTS_TABLE} WHERE {FTS_TABLE} MATCH ?))")
                    params = [*params, "{title body meta} : (" + expr + ")"]
            else:
                sql += (" AND EXISTS (SELECT 1 FROM revision x WHERE x.page_id = p.id AND "
                        "(instr(pcp_fold(x.content), pcp_fold(?)) > 0 OR instr(pcp_fold(x.title), pcp_fold(?)) > 0))")
                params = [*params, query, query]
            shown["query"], shown["mode"] = query, mode
        rows = self._db.execute_sql(sql, params).fetchall()
        call.scopes.update(r[2] for r in rows)
        return sorted((r[0], r[1]) for r in rows), shown

    @staticmethod
    def _recorded_filters(shown: dict[str, Any]) -> dict[str, Any]:
        """What the receipt keeps of the filter: everything but the query text (a receipt holds no content)."""
        return {k: val for k, val in shown.items() if k != "query"}

    # --- planning ---

    @operation("plan_bulk_delete", always_audit=True)
    def plan_bulk_delete(self, call: Call, filters: dict[str, Any] | None = None) -> BulkDeletePlan:
        """What bulk_delete would erase: every page the filter selects (nothing is written but the audit event)."""
        self._owner()
        selected, shown = self._select(call, filters)
        pks = {pk for _, pk in selected}
        d = self._deletion
        plan = d.erasure_plan(pks, d.derived_from(pks))
        counts = plan["counts"]
        handoffs = plan.get("handoffs", [])
        call.counts.update({"pages": counts["pages"], "revisions": counts["revisions"]})
        return {
            "filters": shown, "pages": len(selected), "first_pages": self._first_pages(selected),
            "revisions": counts["revisions"], "relations": counts["relations"],
            "suppressions": counts["suppressions"], "derived_pages": len(plan["derived_pages"]),
            "handoffs": len({ref["handoff_id"] for ref in handoffs}), "handoff_entries": len(handoffs),
            "export_files": plan.get("export_files", []), "bytes": counts["bytes"],
            "digest": selection_digest([pid for pid, _ in selected]),
        }

    def _first_pages(self, selected: list[tuple[str, int]]) -> list[BulkPage]:
        first = [pk for _, pk in selected[:FIRST_PAGES]]
        if not first:
            return []
        rows = self._db.execute_sql(
            f"SELECT p.page_id, p.title, s.namespace FROM page p JOIN scope s ON s.id = p.scope_id "
            f"WHERE p.id IN ({','.join('?' * len(first))}) ORDER BY p.page_id", first
        ).fetchall()
        return [{"page_id": pid, "title": shown_title(title), "namespace": ns} for pid, title, ns in rows]

    # --- erasing ---

    def bulk_delete(self, filters: dict[str, Any] | None, reason: str, plan_digest: str,
                    progress: Progress | None = None, batch_size: int = DEFAULT_BATCH) -> BulkDeleteReceipt:
        """Record the planned set (refused if the filter now selects another), then erase it in batches."""
        started = self.begin_bulk_delete(filters, reason, plan_digest, batch_size)
        return self._run(started["receipt_id"], progress)

    @operation("bulk_delete_start", write=True)
    def begin_bulk_delete(self, call: Call, filters: dict[str, Any] | None, reason: str, plan_digest: str,
                          batch_size: int = DEFAULT_BATCH) -> BulkDeleteReceipt:
        """Record a pending bulk deletion of exactly the planned set (erases nothing; resume_bulk_delete does)."""
        self._owner()
        why = v.reason(reason)
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or not 1 <= batch_size <= MAX_BATCH:
            raise Invalid(f"The batch size must be between 1 and {MAX_BATCH} pages.")
        if not isinstance(plan_digest, str) or not plan_digest.strip():
            raise Invalid("Give the plan's digest (plan_bulk_delete shows it) to confirm the exact set.")
        selected, shown = self._select(call, filters)
        page_ids = [pid for pid, _ in selected]
        digest = selection_digest(page_ids)
        if digest != plan_digest.strip():
            raise Conflict(f"The pages the filter selects now ({len(page_ids):,}, digest {digest}) are not the planned "
                           "set; plan again and confirm the digest it prints.")
        if not page_ids:
            raise Invalid("The filter selects no pages; there is nothing to delete.")
        pks = {pk for _, pk in selected}
        export_files = self._deletion.extra_plan(pks).get("export_files", [])
        receipt_id = ids.new_id("del")
        stamp = ids.now()
        self._hold_delete_merges()
        self._m.BulkDeletion.create(
            receipt_id=receipt_id, digest=digest, page_ids=dumps(page_ids), total=len(page_ids), completed=0,
            state="pending", filters=dumps(self._recorded_filters(shown)), counts=dumps({}),
            export_files=dumps(export_files), batch_size=batch_size, actor_type=self.session.actor_type,
            actor_id=self.session.principal_id, reason=why, created_at=stamp, updated_at=stamp,
        )
        call.receipt_id = receipt_id
        call.counts.update({"pages": len(page_ids)})
        return self._receipt(self._row(receipt_id))

    def run_bulk_delete(self, receipt_id: str, progress: Progress | None = None) -> BulkDeleteReceipt:
        """Erase a bulk deletion begin_bulk_delete has just recorded: its first run, so no resume event (the
        audit log showed a resume nobody asked for). Refused once it has erased anything: that is a resume."""
        self._owner()
        row = self._row(receipt_id)
        if row.completed or row.state == "complete":
            raise Conflict(f"Bulk deletion {row.receipt_id} has already started; resume it (resume_bulk_delete).")
        return self._run(row.receipt_id, progress)

    def resume_bulk_delete(self, receipt_id: str, progress: Progress | None = None) -> BulkDeleteReceipt:
        """Continue a recorded bulk deletion from where it stopped (the recorded set, never the filter)."""
        self._resume_event(receipt_id)
        return self._run(receipt_id, progress)

    @operation("bulk_delete_resume", write=True)
    def _resume_event(self, call: Call, receipt_id: str) -> None:
        self._owner()
        row = self._row(receipt_id)
        call.receipt_id = row.receipt_id
        call.counts.update({"pages": row.total, "completed": row.completed})

    def _row(self, receipt_id: str) -> Any:
        m = self._m
        row = m.BulkDeletion.get_or_none(m.BulkDeletion.receipt_id == str(receipt_id))
        if row is None:
            raise not_found("bulk deletion", str(receipt_id))
        return row

    def _run(self, receipt_id: str, progress: Progress | None) -> BulkDeleteReceipt:
        """Erase the recorded set batch by batch; each batch commits with the receipt's new `completed`."""
        self._owner()
        row = self._row(receipt_id)
        page_ids: list[str] = json.loads(row.page_ids)  # immutable once recorded: read once
        total = row.total
        call = Call("bulk_delete_batch", receipt_id=receipt_id)
        with self._failures_audited(call, time.perf_counter()):
            done = row.completed
            if progress:
                progress(done, total, "pages")
            size = row.batch_size
            held = 0.0  # seconds the write lock was held since the last pause
            while done < total:
                started = time.monotonic()
                done, dealt = self._batch(receipt_id, page_ids, size)
                stops.reached("bulk-delete-batched")
                took = time.monotonic() - started
                held += took
                if dealt:
                    size = max(MIN_BATCH, min(row.batch_size, int(dealt * BATCH_TARGET_S / max(took, 1e-3))))
                self._fold_wal()
                if progress:
                    progress(done, total, "pages")  # between batches: a callback that raises stops here
                if done < total and held >= YIELD_EVERY_S:
                    time.sleep(YIELD_FOR_S)  # a waiting writer's next try falls in this gap
                    held = 0.0
        if self._row(receipt_id).state != "complete":
            self._complete(receipt_id)
        receipt = self._receipt(self._row(receipt_id))
        receipt["wal_erasure"] = self._deletion.checkpoint(receipt_id)
        return receipt

    def _fold_wal(self) -> None:
        """Copy the batch's WAL frames into the database now, without the write lock and without waiting.

        Otherwise the next writer to commit (another process) would run that checkpoint inside its
        own write, and wait for it."""
        fold_wal(self._db)

    def _batch(self, receipt_id: str, page_ids: list[str], size: int) -> tuple[int, int]:
        """One batch in one transaction: the next `size` pages of the recorded set go.

        Returns (pages of the set dealt with so far, pages dealt with in this batch)."""
        m = self._m
        with self._db.atomic("IMMEDIATE"):
            row = m.BulkDeletion.get(m.BulkDeletion.receipt_id == receipt_id)  # re-read under the write lock
            if row.completed >= row.total:
                return int(row.completed), 0
            part = page_ids[row.completed : row.completed + size]
            # Pages of the set already gone (erased another way meanwhile) are simply dealt with.
            pks = [r[0] for r in self._db.execute_sql(
                f"SELECT id FROM page WHERE page_id IN ({','.join('?' * len(part))}) ORDER BY id", part)]
            counts: dict[str, int] = json.loads(row.counts)
            if pks:
                revisions = self._deletion.erase_batch(pks, receipt_id, counts, count=True)
                counts["pages"] = counts.get("pages", 0) + len(pks)
                counts["revisions"] = counts.get("revisions", 0) + revisions
            done = row.completed + len(part)
            m.BulkDeletion.update(completed=done, counts=dumps(counts), updated_at=ids.now()).where(
                m.BulkDeletion.id == row.id).execute()
            stops.reached("bulk-delete-batch")  # tests stop here: the batch erased, not committed
        return int(done), len(part)

    @operation("bulk_delete_complete", write=True)
    def _complete(self, call: Call, receipt_id: str) -> None:
        """The deletion receipt of the whole set (listed with the others) and the completion event."""
        m = self._m
        row = self._row(receipt_id)
        call.receipt_id = receipt_id
        if row.state == "complete":  # another process resuming the same deletion finished it first
            return
        counts: dict[str, int] = {"pages": 0, "revisions": 0, **json.loads(row.counts)}
        files: list[ExportFileRef] = json.loads(row.export_files)
        temps = sum(remove_dead_temps(Path(f["path"])) for f in files if not f.get("incomplete"))
        if temps:
            counts["export_temp_files"] = temps
        revision_ids = [r[0] for r in self._db.execute_sql(
            "SELECT revision_id FROM deleted_revision WHERE receipt_id = ? ORDER BY revision_id", (receipt_id,))]
        stamp = ids.now()
        m.DeletionReceipt.create(
            receipt_id=receipt_id, namespace=None, page_ids=row.page_ids, revision_ids=dumps(revision_ids),
            counts=dumps(counts), actor_type=row.actor_type, actor_id=row.actor_id, reason=row.reason, created_at=stamp,
        )
        m.BulkDeletion.update(state="complete", counts=dumps(counts), updated_at=stamp).where(
            m.BulkDeletion.id == row.id).execute()
        if not m.BulkDeletion.select().where(m.BulkDeletion.state == "pending").exists():
            self._release_delete_merges()
        call.receipt_id = receipt_id
        call.counts.update({"pages": counts["pages"], "revisions": counts["revisions"]})

    def _hold_delete_merges(self) -> None:
        """No FTS5 delete-merge while a bulk deletion is pending (see DELETEMERGE_KEY); inside the caller's transaction."""
        db = self._db
        if db.execute_sql("SELECT 1 FROM meta WHERE key = ?", (DELETEMERGE_KEY,)).fetchone():
            return  # another bulk deletion already holds them
        row = db.execute_sql(f"SELECT v FROM {FTS_TABLE}_config WHERE k = 'deletemerge'").fetchone()
        before = int(row[0]) if row else FTS_DEFAULT_DELETEMERGE
        db.execute_sql("INSERT INTO meta (key, value) VALUES (?, ?)", (DELETEMERGE_KEY, str(before)))
        db.execute_sql(f"INSERT INTO {FTS_TABLE}({FTS_TABLE}, rank) VALUES('deletemerge', 0)")

    def _release_delete_merges(self) -> None:
        db = self._db
        row = db.execute_sql("SELECT value FROM meta WHERE key = ?", (DELETEMERGE_KEY,)).fetchone()
        if row is None:
            return
        db.execute_sql(f"INSERT INTO {FTS_TABLE}({FTS_TABLE}, rank) VALUES('deletemerge', ?)", (int(row[0]),))
        db.execute_sql("DELETE FROM meta WHERE key = ?", (DELETEMERGE_KEY,))

    # --- receipts ---

    def _receipt(self, row: Any) -> BulkDeleteReceipt:
        return {
            "receipt_id": row.receipt_id, "digest": row.digest, "state": row.state,
            "completed": f"{row.completed}/{row.total}", "pages_done": row.completed, "pages": row.total,
            "page_ids": json.loads(row.page_ids), "counts": json.loads(row.counts),
            "filters": json.loads(row.filters), "batch_size": row.batch_size, "created_at": row.created_at,
            "updated_at": row.updated_at, "actor": {"actor_type": row.actor_type, "actor_id": row.actor_id},
            "reason": row.reason,
        }

    @operation("stopped_bulk_deletions")
    def stopped_bulk_deletions(self, call: Call, limit: int = 20) -> StoppedBulkDeletions:
        """Bulk deletions recorded and not finished, newest first (ids and counts only; `resume_bulk_delete`
        continues one): the app's Receipts tab lists them beside the receipts of finished ones."""
        self._owner()
        m = self._m
        rows = (m.BulkDeletion.select(m.BulkDeletion.receipt_id, m.BulkDeletion.state, m.BulkDeletion.completed,
                                      m.BulkDeletion.total, m.BulkDeletion.created_at, m.BulkDeletion.updated_at,
                                      m.BulkDeletion.reason)
                .where(m.BulkDeletion.state != "complete").order_by(m.BulkDeletion.id.desc())
                .limit(max(1, min(int(limit), 100))))
        return {"deletions": [
            {"receipt_id": r.receipt_id, "state": r.state, "pages_done": r.completed, "pages": r.total,
             "created_at": r.created_at, "updated_at": r.updated_at, "reason": r.reason} for r in rows]}

    @operation("bulk_deletion")
    def bulk_deletion(self, call: Call, receipt_id: str) -> BulkDeleteReceipt:
        """One bulk deletion's receipt: how far it got (`completed: n/N`)."""
        self._owner()
        call.receipt_id = str(receipt_id)
        return self._receipt(self._row(receipt_id))

