"""Deletion that really deletes: plan, erase in one transaction, keep a content-free receipt, leave no residue."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Protocol, Sequence

from . import ids
from . import validate as v
from .constants import DERIVATION_TYPES, Progress
from .constants import chunks as _chunks
from .core import WAL_PENDING_KEY, Call, Part, StoreContext, dumps, operation, pending_erasures, truncate_wal
from . import index
from .errors import Forbidden, not_found
from .files import leftover_temps, remove_dead_temps
from .types import DeletePlan, EraserPlan, ErasurePlan, ExportFileRef, Receipt, ReceiptList, ScopeDeletePlan


class Eraser(Protocol):
    """Something that holds copies of pages outside their own rows, which a deletion must name and erase."""

    def plan_extra(self, page_pks: set[int]) -> EraserPlan:
        """What it holds of these pages, merged into the deletion plan."""
        ...

    def erase_extra(self, page_pks: list[int], counts: dict[str, int]) -> None:
        """Erase what it holds of these pages (called once per batch, before their rows go), counting it."""
        ...


class ExportFiles(Part):
    """The export files this store wrote: a plan names those that may hold a page (they are not rewritten)."""

    def plan_extra(self, page_pks: set[int]) -> EraserPlan:
        return {"export_files": self._exports_holding(page_pks)}

    def erase_extra(self, page_pks: list[int], counts: dict[str, int]) -> None:
        """Files outside the store are the user's: named in the plan, never edited."""

    def _exports_holding(self, page_pks: set[int]) -> list[ExportFileRef]:
        """Export files this store wrote after these pages existed, in a scope that covered them."""
        if not page_pks:
            return []
        first: dict[str, str] = {}
        for part in _chunks(sorted(page_pks)):  # every page counts, however many (a bulk deletion's)
            for ns, created in self._db.execute_sql(
                f"SELECT s.namespace, MIN(p.created_at) FROM page p JOIN scope s ON s.id = p.scope_id "
                f"WHERE p.id IN ({','.join('?' * len(part))}) GROUP BY s.namespace", part
            ).fetchall():
                first[ns] = min(created, first.get(ns, created))
        rows = sorted(first.items())
        out: list[ExportFileRef] = []
        for rec in self._m.ExportRecord.select().order_by(self._m.ExportRecord.id):
            scopes = json.loads(rec.scopes)
            if any((scopes is None or ns in scopes) and rec.created_at >= first for ns, first in rows):
                out.append({"path": rec.path, "format": rec.format, "created_at": rec.created_at})
                for tmp in leftover_temps(Path(rec.path)):  # a killed export's full-content temporary file
                    out.append({"path": str(tmp), "format": rec.format, "created_at": rec.created_at,
                                "incomplete": True})
        return out


class DeletionOps(Part):
    """Planning and erasing pages and scopes; `erasers` are the other holders of page copies it must cover."""

    def __init__(self, ctx: StoreContext, erasers: Sequence[Eraser]) -> None:
        super().__init__(ctx)
        self._erasers = tuple(erasers)

    # --- what a deletion would touch ---

    def derived_from(self, page_pks: set[int]) -> set[int]:
        """Pages (outside the set) whose provenance or derivation relations name these pages."""
        out: set[int] = set()
        for part in _chunks(sorted(page_pks)):
            marks = ",".join("?" * len(part))
            rows = self._db.execute_sql(
                f"SELECT page_id FROM provenance_input WHERE input_page IN ({marks}) "
                f"UNION SELECT from_page_id FROM relation WHERE retracted = 0 AND to_page_id IN ({marks}) "
                f"AND relation_type IN ({','.join('?' * len(DERIVATION_TYPES))})",
                (*part, *part, *DERIVATION_TYPES),
            ).fetchall()
            out.update(r[0] for r in rows)
        return out - page_pks

    def _closure(self, start: set[int], cascade: bool) -> tuple[set[int], set[int]]:
        """(pages to erase, derived pages left in place)."""
        pages = set(start)
        derived = self.derived_from(pages)
        while cascade and derived:
            pages |= derived
            derived = self.derived_from(pages)
        return pages, derived

    def erasure_plan(self, page_pks: set[int], derived: set[int]) -> ErasurePlan:
        """What erasing these pages touches: page, revision and relation ids, counts, and the derived pages kept."""
        db = self._db
        revisions: list[str] = []
        relations: list[str] = []
        page_ids: list[str] = []
        counts = {"revisions": 0, "relations": 0, "suppressions": 0, "lifecycle_events": 0, "bytes": 0}
        for part in _chunks(sorted(page_pks)):
            marks = ",".join("?" * len(part))
            page_ids += [r[0] for r in db.execute_sql(f"SELECT page_id FROM page WHERE id IN ({marks}) ORDER BY id", part)]
            rows = db.execute_sql(
                f"SELECT revision_id, COALESCE(length(CAST(content AS BLOB)), 0) FROM revision "
                f"WHERE page_id IN ({marks}) ORDER BY page_id, seq", part
            ).fetchall()
            revisions += [r[0] for r in rows]
            counts["bytes"] += sum(r[1] for r in rows)
            relations += [r[0] for r in db.execute_sql(
                f"SELECT relation_id FROM relation WHERE from_page_id IN ({marks}) OR to_page_id IN ({marks}) ORDER BY id",
                (*part, *part))]
            counts["suppressions"] += db.execute_sql(f"SELECT COUNT(*) FROM suppression WHERE page_id IN ({marks})", part).fetchone()[0]
            counts["lifecycle_events"] += db.execute_sql(
                f"SELECT COUNT(*) FROM lifecycle_event WHERE page_id IN ({marks})", part).fetchone()[0]
        relations = sorted(set(relations))
        counts["revisions"], counts["relations"], counts["pages"] = len(revisions), len(relations), len(page_ids)
        derived_ids = []
        for part in _chunks(sorted(derived)):
            marks = ",".join("?" * len(part))
            derived_ids += [r[0] for r in db.execute_sql(f"SELECT page_id FROM page WHERE id IN ({marks}) ORDER BY id", part)]
        return {"pages": page_ids, "revisions": revisions, "relations": relations, "derived_pages": derived_ids,
                "suppressions": counts["suppressions"], "bytes": counts["bytes"], "counts": counts,
                **self.extra_plan(page_pks)}

    def extra_plan(self, page_pks: set[int]) -> EraserPlan:
        """What the erasers hold of these pages (export files, handoff copies), in their declared order."""
        out: EraserPlan = {}
        for eraser in self._erasers:
            out.update(eraser.plan_extra(page_pks))
        return out

    def _erase_extra(self, page_pks: list[int], counts: dict[str, Any]) -> None:
        """Every eraser erases what it holds of these pages, counting it in `counts` (once per batch)."""
        for eraser in self._erasers:
            eraser.erase_extra(page_pks, counts)

    def _deletable(self, call: Call, page_id: str) -> Any:
        if not self.session.is_owner:
            raise Forbidden("Only the owner may delete; a model client can recommend a tombstone instead.")
        return self._page_row(page_id, call, "delete")

    @operation("plan_delete", always_audit=True)
    def plan_delete(self, call: Call, page_id: str, cascade: bool = False) -> DeletePlan:
        """What delete_page would erase (nothing is written but the audit event)."""
        page = self._deletable(call, page_id)
        pages, derived = self._closure({page.id}, cascade)
        plan = self.erasure_plan(pages, derived)
        return {"page_id": page.page_id, "cascade": bool(cascade), **plan}

    @operation("plan_delete_scope", always_audit=True)
    def plan_delete_scope(self, call: Call, namespace: str) -> ScopeDeletePlan:
        """What delete_scope would erase (nothing is written but the audit event)."""
        scope = self._deletable_scope(call, namespace)
        pages = {r[0] for r in self._db.execute_sql("SELECT id FROM page WHERE scope_id = ?", (scope.id,))}
        plan = self.erasure_plan(pages, self.derived_from(pages))
        counts = plan["counts"]
        # A scope can hold many pages: numbers at the top, ids listed up to a bound.
        return {
            "namespace": scope.namespace, "pages": counts["pages"], "revisions": counts["revisions"],
            "relations": counts["relations"], "suppressions": counts["suppressions"], "bytes": counts["bytes"],
            "page_ids": plan["pages"][:1000], "revision_ids": plan["revisions"][:1000],
            "relation_ids": plan["relations"][:1000], "derived_pages": plan["derived_pages"][:1000], "counts": counts,
            "handoffs": plan.get("handoffs", [])[:1000], "export_files": plan["export_files"],
            "import_report_entries": plan.get("import_report_entries", 0),
        }

    def _deletable_scope(self, call: Call, namespace: str) -> Any:
        if not self.session.is_owner:
            raise Forbidden("Only the owner may delete a scope.")
        ns = v.namespace(namespace)
        self._require(call, "delete", ns)
        scope = self._scope_row(ns)
        if scope is None:
            raise not_found("scope", ns)
        return scope

    # --- erasing ---

    def delete_page(self, page_id: str, reason: str, cascade: bool = False) -> Receipt:
        """Erase a page (and with cascade, the pages derived from it); returns the receipt."""
        receipt = self._delete_page(page_id, reason, cascade)
        receipt["wal_erasure"] = self._checkpoint(receipt["receipt_id"])
        return receipt

    @operation("delete_page", write=True)
    def _delete_page(self, call: Call, page_id: str, reason: str, cascade: bool) -> Receipt:
        why = v.reason(reason)
        page = self._deletable(call, page_id)
        pages, derived = self._closure({page.id}, cascade)
        plan = self.erasure_plan(pages, derived)
        receipt = self._erase(call, pages, plan, why, None, None)
        return receipt

    def delete_scope(self, namespace: str, reason: str, progress: Progress | None = None) -> Receipt:
        """Erase every page of a namespace and the scope itself; returns the receipt."""
        receipt = self._delete_scope(namespace, reason, progress)
        receipt["wal_erasure"] = self._checkpoint(receipt["receipt_id"])
        return receipt

    @operation("delete_scope", write=True)
    def _delete_scope(self, call: Call, namespace: str, reason: str, progress: Progress | None) -> Receipt:
        why = v.reason(reason)
        scope = self._deletable_scope(call, namespace)
        pages = {r[0] for r in self._db.execute_sql("SELECT id FROM page WHERE scope_id = ?", (scope.id,))}
        plan = self.erasure_plan(pages, set())
        receipt = self._erase(call, pages, plan, why, scope.namespace, progress)
        index.drop_scope(self._db.cursor(), scope.id)
        self._m.Scope.delete().where(self._m.Scope.id == scope.id).execute()
        return receipt

    def _erase(self, call: Call, pages: set[int], plan: ErasurePlan, reason: str, namespace: str | None,
               progress: Progress | None) -> Receipt:
        receipt_id = ids.new_id("del")
        ordered = sorted(pages)
        done = 0
        erased: dict[str, int] = {}
        for part in _chunks(ordered):
            # A whole scope's statistics go with the scope; a page's are taken out term by term.
            self.erase_batch(part, receipt_id, erased, count=namespace is None)
            done += len(part)
            if progress:
                progress(done, len(ordered))
        temps = sum(remove_dead_temps(Path(f["path"])) for f in plan["export_files"] if not f.get("incomplete"))
        if temps:
            erased["export_temp_files"] = temps
        stamp = ids.now()
        counts = {**plan["counts"], **erased}
        self._m.DeletionReceipt.create(
            receipt_id=receipt_id, namespace=namespace, page_ids=dumps(plan["pages"]), revision_ids=dumps(plan["revisions"]),
            counts=dumps(counts), actor_type=self.session.actor_type, actor_id=self.session.principal_id,
            reason=reason, created_at=stamp,
        )
        call.counts.update({"pages": counts["pages"], "revisions": counts["revisions"]})
        return {
            "receipt_id": receipt_id, "namespace": namespace, "page_ids": plan["pages"], "revision_ids": plan["revisions"],
            "counts": counts, "created_at": stamp,
            "actor": {"actor_type": self.session.actor_type, "actor_id": self.session.principal_id}, "reason": reason,
            "lifecycle_status": "deleted",
        }

    def erase_batch(self, part: list[int], receipt_id: str, erased: dict[str, int], count: bool = True) -> int:
        """Erase these pages (at most BATCH page pks) inside the caller's transaction; returns revisions erased.

        The one erasure path: single, scope and bulk deletion all go through it, so every one
        leaves the same (no) residue."""
        db = self._db
        marks = ",".join("?" * len(part))
        self._erase_extra(part, erased)
        rev_rows = db.execute_sql(
            f"SELECT r.id, r.revision_id, p.page_id, COALESCE(length(CAST(r.content AS BLOB)), 0) FROM revision r "
            f"JOIN page p ON p.id = r.page_id WHERE r.page_id IN ({marks})", part
        ).fetchall()
        index.remove_revisions(db.cursor(), self._salt, [r[0] for r in rev_rows], count=count)
        # A supersedes link from an erased page no longer hides its target.
        db.execute_sql(
            f"UPDATE page SET superseded = superseded - (SELECT COUNT(*) FROM relation r WHERE r.to_page_id = page.id "
            f"AND r.relation_type = 'supersedes' AND r.retracted = 0 AND r.actor_type != 'model' "
            f"AND r.from_page_id IN ({marks})) "
            f"WHERE id IN (SELECT to_page_id FROM relation WHERE relation_type = 'supersedes' AND retracted = 0 "
            f"AND actor_type != 'model' AND from_page_id IN ({marks}))",
            (*part, *part),
        )
        # What went is counted as it goes (the receipt's counts; a bulk deletion adds them up batch by batch,
        # a relation between two batches counted once, by the batch that erased it).
        gone = {"relations": 0, "suppressions": 0, "lifecycle_events": 0}
        for table, where in (
            ("retraction", f"relation_id IN (SELECT id FROM relation WHERE from_page_id IN ({marks}) OR to_page_id IN ({marks}))"),
            ("relation", f"from_page_id IN ({marks}) OR to_page_id IN ({marks})"),
        ):
            rows = db.execute_sql(f"DELETE FROM {table} WHERE {where}", (*part, *part)).rowcount
            if table == "relation":
                gone["relations"] = rows
        for table in ("provenance_input", "suppression", "lifecycle_event", "recommendation", "idempotency", "source_page"):
            rows = db.execute_sql(f"DELETE FROM {table} WHERE page_id IN ({marks})", part).rowcount
            if table in ("suppression", "lifecycle_event"):
                gone[f"{table}s"] = rows
        gone["bytes"] = sum(r[3] for r in rev_rows)
        for key, n in gone.items():
            erased[key] = erased.get(key, 0) + n
        db.execute_sql(f"DELETE FROM revision WHERE page_id IN ({marks})", part)
        db.execute_sql(f"DELETE FROM page WHERE id IN ({marks})", part)
        if rev_rows:
            self._m.DeletedRevision.insert_many(
                [{"revision_id": rev_id, "page_id": pid, "receipt_id": receipt_id} for _, rev_id, pid, _ in rev_rows]
            ).execute()
        return len(rev_rows)

    def checkpoint(self, receipt_id: str) -> str:
        """The WAL erasure of a finished deletion (done | pending), for parts that erase in batches."""
        return self._checkpoint(receipt_id)

    def _checkpoint(self, receipt_id: str) -> str:
        """Fold the WAL into the database and truncate it, so erased pages leave no copy there.

        It never waits: while another connection holds a read snapshot the WAL cannot be
        truncated, so the receipt is marked `pending` and the next store call after the
        reader is gone finishes it (core.settle_erasures), which makes it `done`.
        """
        if truncate_wal(self._db):
            if pending_erasures(self._db):  # an earlier pending erasure is complete too
                with self._db.atomic("IMMEDIATE"):
                    self._db.execute_sql("DELETE FROM meta WHERE key = ?", (WAL_PENDING_KEY,))
                truncate_wal(self._db)
            return "done"
        with self._db.atomic("IMMEDIATE"):
            pending = pending_erasures(self._db)
            self._db.execute_sql("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
                                 (WAL_PENDING_KEY, dumps([*pending, receipt_id])))
        return "pending"

    @operation("list_receipts")
    def list_receipts(self, call: Call, limit: int = 50) -> ReceiptList:
        """Deletion receipts, newest first (ids and counts, never content); the owner's own record."""
        if not self.session.is_owner:
            raise Forbidden("Only the owner may list deletion receipts.")
        m = self._m
        rows = m.DeletionReceipt.select().order_by(m.DeletionReceipt.id.desc()).limit(max(1, min(limit, 100)))
        pending = set(pending_erasures(self._db))
        return {"receipts": [
            {"receipt_id": r.receipt_id, "namespace": r.namespace, "page_ids": json.loads(r.page_ids),
             "revision_ids": json.loads(r.revision_ids), "counts": json.loads(r.counts), "created_at": r.created_at,
             "actor": {"actor_type": r.actor_type, "actor_id": r.actor_id}, "reason": r.reason,
             "wal_erasure": "pending" if r.receipt_id in pending else "done"}
            for r in rows
        ]}
