"""Import reports (issue 15): what each import brought in and what it did not, kept to answer
"why can't I find X" later.

An import's report is one `import_run` row and one `import_entry` per conversation or session it
wrote and per item it skipped, naming items by source key and page id. Titles are never copied
into the report: they are read live from the pages, so a renamed page shows its new title and an
erased one shows as erased. Deleting a page removes its report entries (this part is one of the
deletion's erasers) and the delete plan counts them. The audit log stays metadata-only.
"""

from __future__ import annotations

import json
from typing import Any

from . import ids
from .constants import chunks
from .core import Call, Part, dumps, operation
from .errors import Forbidden, Invalid, not_found
from .types import EraserPlan, ImportRecorded, ImportReportEntry, ImportReportResult

OUTCOMES = ("created", "revised", "unchanged", "skipped")


class ImportReportOps(Part):
    """Keeping, showing and erasing import reports."""

    @operation("record_import", write=True)
    def record_import(self, call: Call, summary: dict[str, Any], entries: list[dict[str, Any]],
                      path: str | None = None, started_at: str | None = None) -> ImportRecorded:
        """Keep an import's report; returns its id (`pcp import-report ID`)."""
        m = self._m
        stamp = ids.now()
        import_id = ids.new_id("imp")
        run = m.ImportRun.create(import_id=import_id, source=str(summary.get("source") or "import"), path=path,
                                 started_at=started_at or stamp, finished_at=stamp, summary=dumps(
                                     {k: v for k, v in summary.items() if k not in ("skipped", "import_id")}))
        rows = []
        for n, e in enumerate(entries):
            outcome = str(e.get("outcome"))
            if outcome not in OUTCOMES:
                raise Invalid(f"An import report entry's outcome is one of {', '.join(OUTCOMES)}, not {outcome!r}.")
            rows.append((run.id, n, e.get("file"), str(e.get("item") or ""), e.get("page_id"), outcome,
                         e.get("reason"), dumps(e.get("counts") or {})))
        cursor = self._db.cursor()
        cursor.executemany("INSERT INTO import_entry (run_id, n, file, item, page_id, outcome, reason, counts) "
                           "VALUES (?,?,?,?,?,?,?,?)", rows)
        call.counts["entries"] = len(rows)
        return {"import_id": import_id}

    @operation("import_report")
    def import_report(self, call: Call, import_id: str | None = None) -> ImportReportResult:
        """One import's report (the last one when no id is given), titles read from the pages now."""
        if not self.session.is_owner:
            raise Forbidden("Only the owner may read import reports.")
        m = self._m
        query = m.ImportRun.select()
        if import_id is not None:
            run = query.where(m.ImportRun.import_id == str(import_id)).first()
        else:
            run = query.order_by(m.ImportRun.id.desc()).first()
        if run is None:
            raise not_found("import report", import_id or "(none yet)")
        rows = self._db.execute_sql(
            "SELECT e.file, e.item, e.page_id, e.outcome, e.reason, e.counts, p.title, s.namespace "
            "FROM import_entry e LEFT JOIN page p ON p.page_id = e.page_id LEFT JOIN scope s ON s.id = p.scope_id "
            "WHERE e.run_id = ? ORDER BY e.n", (run.id,)).fetchall()
        out: list[ImportReportEntry] = []
        for file, item, page_id, outcome, reason, counts, title, namespace in rows:
            entry: ImportReportEntry = {"file": file, "item": item, "page_id": page_id, "outcome": outcome,
                                        "reason": reason, "counts": json.loads(counts or "{}")}
            if page_id is not None:
                entry["title"] = title if namespace is not None else "(erased)"
                entry["erased"] = namespace is None
            out.append(entry)
        call.counts["entries"] = len(out)
        return {"import_id": run.import_id, "source": run.source, "path": run.path, "started_at": run.started_at,
                "finished_at": run.finished_at, "summary": json.loads(run.summary or "{}"), "entries": out}

    # --- deletion (Eraser) ---

    def _page_ids(self, page_pks: set[int] | list[int]) -> list[str]:
        out: list[str] = []
        for part in chunks(sorted(page_pks)):
            out += [r[0] for r in self._db.execute_sql(
                f"SELECT page_id FROM page WHERE id IN ({','.join('?' * len(part))})", part)]
        return out

    def plan_extra(self, page_pks: set[int]) -> EraserPlan:
        """How many import report entries name these pages."""
        total = 0
        for part in chunks(self._page_ids(page_pks)):
            total += self._db.execute_sql(
                f"SELECT COUNT(*) FROM import_entry WHERE page_id IN ({','.join('?' * len(part))})", part).fetchone()[0]
        return {"import_report_entries": total}

    def erase_extra(self, page_pks: list[int], counts: dict[str, int]) -> None:
        """Remove the report entries of these pages."""
        counts.setdefault("import_report_entries", 0)
        for part in chunks(self._page_ids(page_pks)):
            cursor = self._db.execute_sql(
                f"DELETE FROM import_entry WHERE page_id IN ({','.join('?' * len(part))})", part)
            counts["import_report_entries"] += cursor.rowcount
