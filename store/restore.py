"""Restoring a `pcp export` file (pcp-core.md section 7) through the bulk write path (store/bulkwrite.py).

The file is read twice (store/restore_file.py). The first pass checks every record and the closing digest
before anything is written. The second pass writes whole units: a page with all its revisions (read from
the page lines and the revision lines side by side: both are in page id order), then relations, source ids
and the rest, a batch of units at a time. Receipts come first, before any page that could be one they name.
In a large file in export order the pages are made into rows by helper processes while this one writes
(restore_file.Helpers; what the store already holds is then made ready here and written as ever).

Into an empty store (or to finish a restore that stopped) a canonical file is committed in groups
(store/bulkwrite.Groups), with a marker in `meta` (RESTORE_KEY) from the first group to the last:
`doctor` shows it, and running the same import again completes it (what is there is skipped, as
an import always does). Into a store that already holds pages, or from a file in another order,
the import is one transaction, so a conflict leaves nothing written.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import bulkwrite, ids, index, names
from .bulkwrite import Groups, RowWriter
from .constants import Progress, chunks
from .core import Call, dumps, settle_erasures
from .errors import Forbidden, Invalid
from .restore_file import ExportPlan, Helpers, Line, Opener, Rows, Unit, RevReady, parse_line, prepare_rev, task_units, units
from .types import UnfinishedRestore

if TYPE_CHECKING:
    from .export import ExportOps

RESTORE_KEY = "restore_pending"  # meta: {path, sha256, started_at, lines} while a grouped restore is unfinished
FIRST_BATCH = 400  # lines in the first batch; later batches are sized to hold the lock about GROUP_SECONDS
MAX_BATCH = 20_000


class Restore:
    """One run of `import_export` through the bulk write path."""

    def __init__(self, ex: ExportOps, p: Path, plan: ExportPlan, progress: Progress | None,
                 opener: Opener = None, confirm_lookalike: bool = False, helpers: Helpers | None = None) -> None:
        self.ex = ex
        self.helpers = helpers
        self.confirm_lookalike = confirm_lookalike
        self.opener = opener
        self.db = ex._db
        self.p = p
        self.plan = plan
        self.progress = progress
        self.added: dict[str, int] = {}
        self.writer = RowWriter(self.db, ex._salt)
        self.scopes: dict[str, int] = {}
        self.unresolved: set[str] = set()  # provenance inputs whose revision is not here yet
        self.superseded: set[int] = set()  # pages whose `supersedes` count changed in this batch
        self.retracted: list[str] = []
        self._headless: set[int] = set()  # pages written before their head revision (a file in another order)
        self.stats = index.StatsDelta()  # the statistics of helpers' rows in the open batch
        self.grouped = False
        self.done_lines = 0

    # --- the run ---

    def run(self) -> dict[str, int]:
        ex = self.ex
        call = Call("import_export")
        started = time.perf_counter()
        with ex._failures_audited(call, started):
            if not ex.session.is_owner:
                raise Forbidden("Only the owner may import an export.")
            if not self.confirm_lookalike:
                self._no_look_alike()
            settle_erasures(self.db)
            groups = Groups(self.db, None)
            with bulkwrite.loading(self.db):
                self._run(call, started, groups)
        if self.progress:
            self.progress(self.plan.lines, self.plan.lines, "lines")
        return self.added

    def _no_look_alike(self) -> None:
        """Before anything is written: a scope of the file that this store does not hold, and whose name reads
        like one it does (pcp-core section 2, TR39 skeletons), is refused unless the owner confirms it. The file's
        scopes are not compared with each other: they come from one store, whose own rules held (`doctor` names
        old ones). An empty store has nothing to look like."""
        if not self.plan.scopes or self.db.execute_sql("SELECT 1 FROM scope LIMIT 1").fetchone() is None:
            return
        for ns in self.plan.scopes:
            other = self.ex.ctx.skeletons.look_alike(self.db, ns)
            if other is None or self.db.execute_sql("SELECT 1 FROM scope WHERE namespace = ?", (ns,)).fetchone():
                continue
            raise names.LookAlike(
                f"{self.p}: the export's scope {names.shown(ns)} reads like this store's scope {names.shown(other)}; "
                "nothing was imported. To import it anyway: pcp import export FILE --confirm-lookalike.", other, ns)

    def _run(self, call: Call, started: float, groups: Groups) -> None:
        try:
            groups.begin()
            self._start(groups)
            batch: list[Unit] = []
            lines, size = 0, FIRST_BATCH
            tasks = self.plan.page_tasks() if self.helpers is not None and self.opener is None else []
            helped = self.helpers.units(tasks) if self.helpers is not None and tasks else None
            for unit in units(self.p, self.plan, self.opener, helped):
                batch.append(unit)
                lines += unit.size
                if lines >= size:
                    size = self._land(groups, batch, call, started, size)
                    batch, lines = [], 0
            self._land(groups, batch, call, started, size, last=True)
        except BaseException:
            groups.close(commit=False)
            raise
        groups.close()

    def _start(self, groups: Groups) -> None:
        """Inside the first transaction: adopt the owner, choose grouped or whole, mark a grouped restore."""
        db, ex = self.db, self.ex
        with (self.opener() if self.opener is not None else open(self.p, "rb")) as fh:
            header = parse_line(next(iter(fh), None), self.p, 1)
        ex._adopt_owner(header)
        row = db.execute_sql("SELECT value FROM meta WHERE key = ?", (RESTORE_KEY,)).fetchone()
        marker = json.loads(row[0]) if row else None
        empty = not any(db.execute_sql(f"SELECT 1 FROM {t} LIMIT 1").fetchone() for t in ("page", "scope", "deletion_receipt"))
        resuming = marker is not None and marker.get("sha256") == self.plan.sha256
        self.grouped = self.plan.canonical and (empty or resuming)
        if self.grouped:
            groups.seconds = bulkwrite.GROUP_SECONDS
            if not resuming:
                db.execute_sql("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (RESTORE_KEY, dumps({
                    "path": str(self.p.resolve()), "sha256": self.plan.sha256, "started_at": ids.now(),
                    "lines": self.plan.lines})))
        self.scopes = dict(db.execute_sql("SELECT namespace, id FROM scope").fetchall())

    def _land(self, groups: Groups, batch: list[Unit], call: Call, started: float, size: int,
              last: bool = False) -> int:
        """Make the batch ready (outside the lock), write it in the open group, commit when due; the next size."""
        ready = [self._prepare(u) for u in batch]
        groups.begin()
        t0 = time.monotonic()
        before = dict(self.added)
        self._write(ready)
        if last:
            self._finish()
        took = time.monotonic() - t0
        # One audit event per group (a restore in one transaction: one for all of it).
        call.counts = {k: n - before.get(k, 0) for k, n in self.added.items() if n - before.get(k, 0)} \
            if self.grouped else dict(self.added)
        lines = sum(u.size for u in batch)
        self.done_lines += lines
        if self.grouped or last:
            self.ex._append_audit(call, "allowed", started)
            call.scopes = set()
        if self.grouped:
            groups.commit()  # a batch is a group: the next one is made ready with the lock let go
        if self.progress:
            self.progress(min(self.done_lines + 1, self.plan.lines), self.plan.lines, "lines")
        return bulkwrite.next_size(size, lines, took, FIRST_BATCH // 4, MAX_BATCH)

    # --- making a batch ready (no database) ---

    def _prepare(self, unit: Unit) -> tuple[Unit, list[RevReady]]:
        if unit.ready is not None:
            return unit, unit.ready
        return unit, [prepare_rev(n, obj, self.ex._salt) for n, obj in unit.revisions]

    # --- writing a batch (inside the group's transaction) ---

    def _count(self, kind: str) -> None:
        self.added[kind] = self.added.get(kind, 0) + 1

    def _where(self, number: int, kind: str) -> str:
        return f"{self.p}: line {number} ({kind})"

    def _existing(self, sql: str, keys: list[str]) -> dict[str, tuple[Any, ...]]:
        found: dict[str, tuple[Any, ...]] = {}
        for part in chunks(sorted(set(keys))):
            for row in self.db.execute_sql(sql.format(marks=",".join("?" * len(part))), part).fetchall():
                found[row[0]] = tuple(row[1:])
        return found

    def _write(self, ready: list[tuple[Unit, list[RevReady]]]) -> None:
        for unit, _ in ready:
            if unit.kind == "receipt":
                self._handle(unit)
        for unit, _ in ready:
            if unit.kind == "scope":
                self._handle(unit)
                assert unit.line is not None
                ns = unit.line[1]["namespace"]
                if ns not in self.scopes:
                    self.scopes[ns] = self.db.execute_sql("SELECT id FROM scope WHERE namespace = ?", (ns,)).fetchone()[0]
        pages: list[tuple[Unit, list[RevReady]]] = []
        for u, revs in ready:  # (in their order: a helper's rows between the pages made ready here)
            if u.kind == "page":
                pages.append((u, revs))
            elif u.rows is not None:
                if pages:
                    self._pages(pages)
                    pages = []
                self._rows(u.rows)
        if pages:
            self._pages(pages)
        if self.stats.docs:
            self.writer.flush()
            self.stats.write(self.db.cursor())
        relations = [u.line for u, _ in ready if u.kind == "relation" and u.line is not None]
        if relations:
            self._relations(relations)
        sources = [u.line for u, _ in ready if u.kind == "source_page" and u.line is not None]
        if sources:
            self._source_pages(sources)
        self.writer.flush()
        for unit, _ in ready:
            if unit.kind not in ("receipt", "scope", "page", "rows", "relation", "source_page"):
                self._handle(unit)
                if unit.kind == "retraction" and unit.line is not None:
                    self.retracted.append(unit.line[1]["relation_id"])
        self._settle()

    def _handle(self, unit: Unit) -> None:
        """A rare kind, through the export's own reader of it (store/export.py `_in_<kind>`)."""
        assert unit.line is not None
        number, obj = unit.line
        handler = self.ex._importer(unit.kind)
        if handler is None:
            raise Invalid(f"{self.p}: line {number} has an unknown kind {unit.kind!r}.")
        try:
            if handler(obj):
                self._count(unit.kind)
        except (KeyError, TypeError, ValueError) as exc:
            raise Invalid(f"{self.p}: line {number} ({unit.kind}) is malformed: {exc}.") from None
        except Exception as exc:  # a page or relation it names is not here (Peewee's DoesNotExist)
            if type(exc).__name__.endswith("DoesNotExist"):
                raise Invalid(f"{self._where(number, unit.kind)} names a page or relation the export does not "
                              "hold; nothing of it was imported.") from None
            raise

    def _pages(self, pages: list[tuple[Unit, list[RevReady]]]) -> None:
        db, w = self.db, self.writer
        page_lines = [u.page for u, _ in pages if u.page is not None]
        known = self._existing(
            "SELECT p.page_id, p.id, s.namespace, p.created_at, p.status, p.head_revision_id FROM page p "
            "JOIN scope s ON s.id = p.scope_id WHERE p.page_id IN ({marks})", [obj["page_id"] for _, obj in page_lines])
        all_revs = [r for _, revs in pages for r in revs]
        have = self._existing("SELECT revision_id, content_digest, content FROM revision WHERE revision_id IN ({marks})",
                              [r.obj["revision_id"] for r in all_revs])
        # Pages only named by a revision line: the store's own or one an earlier batch wrote.
        orphans = [r.obj["page_id"] for u, revs in pages if u.page is None for r in revs]
        for pid, found in self._existing(
                "SELECT p.page_id, p.id, s.namespace, p.created_at, p.status, p.head_revision_id FROM page p "
                "JOIN scope s ON s.id = p.scope_id WHERE p.page_id IN ({marks})", orphans).items():
            known.setdefault(pid, found)
        seqs: dict[int, int] = {}
        status: dict[int, str] = {}
        new_revs: dict[str, tuple[int, int]] = {}  # revision id -> (revision pk, page pk) written in this batch
        for unit, revs in pages:
            if unit.page is not None:
                number, obj = unit.page
                pid = obj["page_id"]
                row = known.get(pid)
                if row is not None:
                    ex_fields = {"namespace": row[1], "created_at": row[2], "status": row[3], "head_revision_id": row[4]}
                    in_fields = {"namespace": obj["namespace"], "created_at": obj["created_at"], "status": obj["status"],
                                 "head_revision_id": obj["head_revision_id"]}
                    self.ex._same_or_conflict("Page", pid, ex_fields, in_fields)
                    page_pk, fresh = row[0], False
                else:
                    scope_pk = self.scopes.get(obj["namespace"])
                    if scope_pk is None:
                        raise Invalid(f"{self._where(number, 'page')}: its scope {obj['namespace']} is not in the "
                                      "export; nothing of it was imported.")
                    page_pk, fresh = w.reserve_page(), True
                    known[pid] = (page_pk, obj["namespace"], obj["created_at"], obj["status"], obj["head_revision_id"])
                    self._count("page")
                status[page_pk] = obj["status"]
                head: tuple[int, RevReady] | None = None
                mine = []
                for r in revs:
                    got = self._revision(r, page_pk, fresh, have, seqs, new_revs, obj["status"])
                    if got is not None:
                        mine.append(got)
                        if r.obj["revision_id"] == obj["head_revision_id"]:
                            head = (got, r)
                if fresh:
                    if head is None and self.grouped:
                        raise Invalid(f"The export names a head revision for page {pid} that it does not contain.")
                    head_pk, hr = head if head is not None else (None, None)
                    w.add("page", (
                        page_pk, pid, self.scopes[obj["namespace"]], head_pk, obj["head_revision_id"], obj["status"], 0,
                        hr.title if hr else "", hr.media_type if hr else None, obj.get("actor_type") or "user",
                        obj["created_at"], obj["updated_at"],
                        (hr.obj["observed_at"] or hr.obj["created_at"]) if hr else obj["created_at"]))
                    if head is None:
                        self._headless.add(page_pk)
            else:
                for r in revs:
                    pid = r.obj["page_id"]
                    held = known.get(pid)
                    if held is None:
                        raise Invalid(f"{self._where(r.number, 'revision')}: its page {pid} is not in the export; "
                                      "nothing of it was imported.")
                    page_pk = held[0]
                    if page_pk not in status:
                        st = db.execute_sql("SELECT status FROM page WHERE id = ?", (page_pk,)).fetchone()
                        status[page_pk] = st[0] if st else held[3]
                    self._revision(r, page_pk, False, have, seqs, new_revs, status[page_pk])
        # Provenance inputs: pages of revisions here now, and rows written before that waited for them.
        waiting = [rid for rid in new_revs if rid in self.unresolved]
        if waiting:
            w.flush()
            db.cursor().executemany(
                "UPDATE provenance_input SET input_page = ? WHERE input_revision_id = ? AND input_page IS NULL",
                [(new_revs[rid][1], rid) for rid in waiting])
            self.unresolved.difference_update(waiting)

    def _rows(self, rows: Rows) -> None:
        """A helper's rows of new pages, written as they are; a task with a page or revision this store holds
        already (a rerun) is made ready here instead and written as `_pages` writes (same or conflict)."""
        db, w = self.db, self.writer
        w.flush()  # (rows gathered before them are in the store: the look-ups below see them)
        if self._existing("SELECT page_id FROM page WHERE page_id IN ({marks})", [r[1] for r in rows.pages]) or \
                self._existing("SELECT revision_id FROM revision WHERE revision_id IN ({marks})",
                               [r[1] for r in rows.revisions]):
            salt = self.ex._salt
            self._pages([(u, [prepare_rev(n, obj, salt) for n, obj in u.revisions]) for u in task_units(self.p, rows.task)])
            return
        scopes = self.scopes
        for ns, (number, kind) in rows.namespaces.items():
            if ns not in scopes:
                raise Invalid(f"{self._where(number, kind)}: its scope {ns} is not in the export; nothing of it was "
                              "imported.")
        first_page, first_rev = w.reserve_many(len(rows.pages), len(rows.revisions))
        cur = db.cursor()
        cur.executemany(bulkwrite.PAGE_SQL, [
            (first_page + key, pid, scopes[ns], first_rev + head, head_id, status, 0, title, media, actor, created,
             updated, sort_time)
            for key, pid, ns, head, head_id, status, title, media, actor, created, updated, sort_time in rows.pages])
        cur.executemany(bulkwrite.REVISION_SQL, [
            (first_rev + r[0], r[1], first_page + r[2], r[3], r[4], scopes[r[5]], *r[6:]) for r in rows.revisions])
        if rows.inputs:
            cur.executemany(bulkwrite.INSERTS["provenance_input"], [
                (first_rev + key, first_page + page, input_id, first_page + input_page)
                for key, page, input_id, input_page in rows.inputs])
        cur.executemany(index.INSERT_FTS, [(first_rev + key, title, body, meta, index.fts_scope(scopes[ns], dates))
                                           for key, title, body, meta, ns, dates in rows.fts])
        for ns, (df, docs, terms) in rows.stats.items():
            self.stats.add_counted(scopes[ns], Counter(df), docs, terms)
        self.added["page"] = self.added.get("page", 0) + len(rows.pages)
        self.added["revision"] = self.added.get("revision", 0) + len(rows.revisions)
        waiting = [(first_page + r[2], r[1]) for r in rows.revisions if r[1] in self.unresolved] if self.unresolved else []
        if waiting:  # provenance rows written before that waited for these revisions
            cur.executemany("UPDATE provenance_input SET input_page = ? WHERE input_revision_id = ? AND input_page IS NULL",
                            waiting)
            self.unresolved.difference_update(rid for _, rid in waiting)

    def _revision(self, r: RevReady, page_pk: int, fresh: bool, have: dict[str, tuple[Any, ...]], seqs: dict[int, int],
                  new_revs: dict[str, tuple[int, int]], page_status: str) -> int | None:
        """Gather one revision's rows; its pk, or None when it is here already (the same)."""
        obj = r.obj
        rid = obj["revision_id"]
        if rid in have or rid in new_revs:
            existing = have.get(rid) or (obj["content_digest"], r.content)
            self.ex._same_or_conflict("Revision", rid, {"digest": existing[0], "content": existing[1]},
                                      {"digest": obj["content_digest"], "content": r.content})
            return None
        scope_pk = self.scopes.get(obj["namespace"])
        if scope_pk is None:
            raise Invalid(f"{self._where(r.number, 'revision')}: its scope {obj['namespace']} is not in the export; "
                          "nothing of it was imported.")
        seq = seqs.get(page_pk)
        if seq is None:
            seq = 0 if fresh else self.db.execute_sql(
                "SELECT COALESCE(MAX(seq), 0) FROM revision WHERE page_id = ?", (page_pk,)).fetchone()[0]
        seq += 1
        seqs[page_pk] = seq
        w = self.writer
        rev_pk = w.reserve_revision()
        new_revs[rid] = (rev_pk, page_pk)
        by = obj["created_by"]
        w.add("revision", (rev_pk, rid, page_pk, seq, obj["previous_revision_id"], scope_pk, obj["created_at"],
                           obj["observed_at"], obj["valid_from"], obj["valid_to"], by["actor_type"], by["actor_id"],
                           r.media_type, r.content, obj["content_digest"], r.title, r.facets_json, r.refs_json,
                           r.prov_json))
        if r.inputs:
            pages = self._input_pages(r.inputs, new_revs)
            for input_id in r.inputs:
                input_page = pages.get(input_id)
                if input_page is None:
                    self.unresolved.add(input_id)
                w.add("provenance_input", (rev_pk, page_pk, input_id, input_page))
        w.index(rev_pk, scope_pk, r.doc, counted=page_status != "tombstoned")
        self._count("revision")
        return rev_pk

    def _input_pages(self, inputs: list[str], new_revs: dict[str, tuple[int, int]]) -> dict[str, int]:
        out = {i: new_revs[i][1] for i in inputs if i in new_revs}
        rest = [i for i in inputs if i not in out]
        if rest:
            out.update({k: v[0] for k, v in self._existing(
                "SELECT revision_id, page_id FROM revision WHERE revision_id IN ({marks})", rest).items()})
        return out

    def _page_pks(self, page_ids: list[str]) -> dict[str, int]:
        self.writer.flush()  # pages of this batch first
        return {k: v[0] for k, v in self._existing("SELECT page_id, id FROM page WHERE page_id IN ({marks})",
                                                   page_ids).items()}

    def _relations(self, lines: list[Line]) -> None:
        w = self.writer
        pks = self._page_pks([x for _, obj in lines for x in (obj["from_page_id"], obj["to_page_id"])])
        have = self._existing("SELECT relation_id, relation_type, to_revision_id FROM relation WHERE relation_id IN ({marks})",
                              [obj["relation_id"] for _, obj in lines])
        for number, obj in lines:
            rid = obj["relation_id"]
            incoming = {"type": obj["relation_type"], "to": obj["to_revision_id"]}
            if rid in have:
                self.ex._same_or_conflict("Relation", rid, {"type": have[rid][0], "to": have[rid][1]}, incoming)
                continue
            a, b = pks.get(obj["from_page_id"]), pks.get(obj["to_page_id"])
            if a is None or b is None:
                raise Invalid(f"{self._where(number, 'relation')}: it links a page the export does not hold; "
                              "nothing of it was imported.")
            by = obj["created_by"]
            w.add("relation", (rid, obj["relation_type"], a, obj["from_revision_id"], b, obj["to_revision_id"],
                               obj["created_at"], by["actor_type"], by["actor_id"], 0))
            have[rid] = (obj["relation_type"], obj["to_revision_id"])
            if obj["relation_type"] == "supersedes":
                self.superseded.add(b)
            self._count("relation")

    def _source_pages(self, lines: list[Line]) -> None:
        w = self.writer
        pks = self._page_pks([obj["page_id"] for _, obj in lines])
        have = self._existing("SELECT source_key, page_id FROM source_page WHERE source_key IN ({marks})",
                              [obj["source_key"] for _, obj in lines])
        for number, obj in lines:
            key = obj["source_key"]
            if key in have:
                continue
            pk = pks.get(obj["page_id"])
            if pk is None:
                raise Invalid(f"{self._where(number, 'source_page')}: its page is not in the export; "
                              "nothing of it was imported.")
            w.add("source_page", (key, pk, obj["body_digest"]))
            have[key] = (pk,)
            self._count("source_page")

    def _settle(self) -> None:
        """Derived columns of what this batch changed: `supersedes` counts."""
        db = self.db
        if self.retracted:
            for part in chunks(self.retracted):
                self.superseded.update(r[0] for r in db.execute_sql(
                    f"SELECT to_page_id FROM relation WHERE relation_id IN ({','.join('?' * len(part))})", part))
            self.retracted = []
        for pks in chunks(sorted(self.superseded)):
            db.execute_sql(
                "UPDATE page SET superseded = (SELECT COUNT(*) FROM relation r WHERE r.to_page_id = page.id "
                "AND r.relation_type = 'supersedes' AND r.retracted = 0 AND r.actor_type != 'model') "
                f"WHERE id IN ({','.join('?' * len(pks))})", pks)
        self.superseded = set()

    def _finish(self) -> None:
        """The last batch: pages whose head came in another batch (a file in another order), and the marker."""
        db = self.db
        self.writer.flush()
        headless = sorted(self._headless)
        for part in chunks(headless):
            marks = ",".join("?" * len(part))
            db.execute_sql("UPDATE page SET head = (SELECT r.id FROM revision r WHERE r.revision_id = page.head_revision_id) "
                           f"WHERE head IS NULL AND id IN ({marks})", part)
            db.execute_sql(
                "UPDATE page SET title = COALESCE((SELECT r.title FROM revision r WHERE r.id = page.head), ''), "
                "media_type = (SELECT r.media_type FROM revision r WHERE r.id = page.head), "
                "sort_time = COALESCE((SELECT r.observed_at FROM revision r WHERE r.id = page.head), "
                f"(SELECT r.created_at FROM revision r WHERE r.id = page.head), sort_time) WHERE id IN ({marks})", part)
        missing = db.execute_sql("SELECT page_id FROM page WHERE head IS NULL LIMIT 1").fetchone()
        if missing:
            raise Invalid(f"The export names a head revision for page {missing[0]} that it does not contain.")
        if self.grouped:  # (a restore of another file in one transaction leaves an unfinished one's marker)
            db.execute_sql("DELETE FROM meta WHERE key = ?", (RESTORE_KEY,))


def unfinished(db: Any) -> UnfinishedRestore | None:
    """The restore that stopped part way, if any (`doctor` names it; importing the same file completes it)."""
    row = db.execute_sql("SELECT value FROM meta WHERE key = ?", (RESTORE_KEY,)).fetchone()
    if row is None:
        return None
    marker: UnfinishedRestore = json.loads(row[0])
    return marker
