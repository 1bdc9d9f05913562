"""Restoring a `pcp export` file (pcp-core.md section 7) through the bulk write path (store/bulkwrite.py).

The file is read twice. The first pass checks every record and the closing digest before anything is
written, and notes where each kind's lines are and whether they are in the order `pcp export` writes
(a "canonical" file: every kind in one run, pages by page id, revisions by page id). The second pass
writes whole units: a page with all its revisions (read from the page lines and the revision lines
side by side: both are in page id order), then relations, source ids and the rest, a batch of units
at a time. Receipts come first, before any page that could be one they name.

Into an empty store (or to finish a restore that stopped) a canonical file is committed in groups
(store/bulkwrite.Groups), with a marker in `meta` (RESTORE_KEY) from the first group to the last:
`doctor` shows it, and running the same import again completes it (what is there is skipped, as
an import always does). Into a store that already holds pages, or from a file in another order,
the import is one transaction, so a conflict leaves nothing written.

Long because: one pass of one file format, its checking plan, its units and the writing of each kind of
row are one piece of work, each part meaningful only beside the others.
"""

from __future__ import annotations

import hashlib
import json
import json.scanner
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, ContextManager, Iterable, Iterator

from . import ids, index
from . import bulkwrite, names
from .bulkwrite import Groups, RowWriter
from .constants import Progress, chunks
from .core import Call, dumps, settle_erasures
from .errors import Forbidden, Invalid
from .export_check import check_record, header_owners
from .jsonsafe import loads
from .titles import page_title
from .types import UnfinishedRestore

if TYPE_CHECKING:
    from .export import ExportOps

EXPORT_KIND = "pcp.export.v1"
END_KIND = "pcp.export.end"
RESTORE_KEY = "restore_pending"  # meta: {path, sha256, started_at, lines} while a grouped restore is unfinished
# The order `pcp export` writes its kinds in (store/export.py _export_lines); other kinds (the ledger's) follow.
KIND_ORDER = ("scope", "page", "revision", "relation", "retraction", "lifecycle_event", "suppression",
              "recommendation", "source_page", "receipt")
FIRST_BATCH = 400  # lines in the first batch; later batches are sized to hold the lock about GROUP_SECONDS
MAX_BATCH = 20_000


@dataclass
class Section:
    start: int  # byte offset of the kind's first line
    end: int  # byte offset after its last line
    first_line: int


@dataclass
class ExportPlan:
    """What the checking pass learnt of an export file."""

    lines: int
    sha256: str
    canonical: bool
    sections: dict[str, Section] = field(default_factory=dict)
    scopes: list[str] = field(default_factory=list)  # the namespaces of its scope records, in file order


# The JSON scanner json.loads ends in, called directly: a restore parses every line (twice); the
# wrappers around it (encoding detection, whitespace skips) cost about a third of the parse.
_SCAN: Any = json.scanner.make_scanner(json.JSONDecoder())  # type: ignore[arg-type]  # (typeshed: the class)


def parse_line(data: bytes | None, p: Path, number: int) -> dict[str, Any]:
    if not data:
        raise Invalid(f"{p}: line {number} is empty; the export is damaged.")
    try:
        try:  # the common line: UTF-8, an object from its first byte, then only the newline
            text = data.decode("utf-8")
            obj, end = _SCAN(text, 0)
            if end != len(text) and text[end:].strip(" \t\n\r"):
                raise ValueError
        except (ValueError, StopIteration):  # anything else as json.loads reads it, and its message
            obj = json.loads(data)
    except RecursionError:  # as store/jsonsafe.loads, without naming the line before it is needed
        loads(data, f"{p}: line {number}")
        raise
    except (ValueError, UnicodeDecodeError) as exc:
        raise Invalid(f"{p}: line {number} is not valid JSON ({exc}).") from None
    if not isinstance(obj, dict):
        raise Invalid(f"{p}: line {number} is not a JSON object.")
    return obj


# Opens an export whose lines cannot be read by offset (a sealed one, unsealed in memory): a context manager
# giving its lines in order. None: the plain file, read by offset.
Opener = Callable[[], ContextManager[Iterable[bytes]]] | None


def check_file(p: Path, opener: Opener = None) -> ExportPlan:
    """Check the header, every record and the closing digest before anything is written."""
    digest = hashlib.sha256()
    count, last, header = 0, None, None
    owners: set[str] = set()
    sections: dict[str, Section] = {}
    scopes: list[str] = []
    canonical = True
    current: str | None = None
    last_page = last_rev_page = ""
    offset = 0
    try:
        with (opener() if opener is not None else open(p, "rb")) as fh:
            for number, data in enumerate(fh, 1):
                if last is not None:
                    digest.update(last)
                last = data
                count = number
                if number == 1:
                    header = parse_line(data, p, 1)
                    owners = header_owners(header)
                elif header is not None and header.get("kind") == EXPORT_KIND:
                    obj = parse_line(data, p, number)
                    kind = obj.get("kind")
                    if kind != END_KIND:
                        check_record(obj, p, number)
                        assert isinstance(kind, str)  # check_record refuses an unknown kind
                        if kind == "scope" and owners and obj["owner_id"] not in owners:
                            # one owner (pcp-core section 2): a scope of anyone else would join the store unseen
                            raise Invalid(f"{p}: line {number} (scope): its owner {obj['owner_id']} is neither the "
                                          "export's owner nor an owner id its header lists; nothing was imported.")
                        if kind == "scope":
                            scopes.append(obj["namespace"])
                        if kind != current:
                            if kind in sections:
                                canonical = False  # a kind in two runs
                            else:
                                sections[kind] = Section(offset, offset, number)
                            current = kind
                        sections[kind].end = offset + len(data)
                        if kind == "page":
                            canonical = canonical and obj["page_id"] > last_page
                            last_page = obj["page_id"]
                        elif kind == "revision":
                            canonical = canonical and obj["page_id"] >= last_rev_page
                            last_rev_page = obj["page_id"]
                offset += len(data)
    except OSError as exc:
        raise Invalid(f"{p}: cannot read ({exc.strerror or exc}).") from None
    if header is None or header.get("kind") != EXPORT_KIND:
        raise Invalid(f"{p}: not a pcp export (line 1 is not a {EXPORT_KIND} header).")
    end = parse_line(last, p, count)
    if end.get("kind") != END_KIND:
        raise Invalid(f"{p}: the export is incomplete (no closing digest line); export it again.")
    if end.get("sha256") != digest.hexdigest():
        raise Invalid(f"{p}: the export's digest does not match its lines (damaged or edited).")
    order = [k for k in KIND_ORDER if k in sections]
    if [k for k in sections if k in KIND_ORDER] != order or opener is not None:
        canonical = False  # (a sealed file is read in one pass: no offsets)
    return ExportPlan(count, digest.hexdigest(), canonical, sections, scopes)


# A unit: a page line with its revision lines (page None: revisions of a page the store or an earlier unit
# holds), or one line of another kind. Lines are (line number, record).
Line = tuple[int, dict[str, Any]]


@dataclass
class Unit:
    kind: str
    page: Line | None = None
    revisions: list[Line] = field(default_factory=list)
    line: Line | None = None

    @property
    def size(self) -> int:
        return len(self.revisions) + 1


def _read(fh: Any, p: Path, start_line: int, end: int) -> Iterator[Line]:
    """Lines from the file's position up to byte offset `end`, parsed, with their numbers."""
    number = start_line
    pos = fh.tell()
    while pos < end:
        data = fh.readline()
        if not data:
            return
        pos += len(data)
        yield number, parse_line(data, p, number)
        number += 1


def _in_file_order(lines: Iterable[tuple[int, dict[str, Any]]]) -> Iterator[Unit]:
    """Units of (line number, record) pairs as the file orders them, up to its end record."""
    for number, obj in lines:
        kind = obj["kind"]
        if kind == END_KIND:
            return
        if kind == "page":
            yield Unit("page", page=(number, obj))
        elif kind == "revision":
            yield Unit("page", revisions=[(number, obj)])
        else:
            yield Unit(kind, line=(number, obj))


def units(p: Path, plan: ExportPlan, opener: Opener = None) -> Iterator[Unit]:
    """The file's units in the order they are written: receipts first, then pages with their revisions."""
    if opener is not None:  # one pass, in the file's order
        with opener() as lines:
            yield from _in_file_order((number, parse_line(data, p, number))
                                      for number, data in enumerate(lines, 1) if number > 1)  # (1: the header)
        return
    with open(p, "rb") as fh:
        fh.readline()  # the header
        if not plan.canonical:
            yield from _in_file_order(_read(fh, p, 2, 1 << 62))
            return
        sections = plan.sections
        receipts = sections.get("receipt")
        if receipts is not None:
            with open(p, "rb") as rf:
                rf.seek(receipts.start)
                for line in _read(rf, p, receipts.first_line, receipts.end):
                    yield Unit("receipt", line=line)
        revs = sections.get("revision")
        rf = open(p, "rb")
        try:
            pending: Iterator[Line] = iter(())
            if revs is not None:
                rf.seek(revs.start)
                pending = _read(rf, p, revs.first_line, revs.end)
            waiting = next(pending, None)
            pages_end = sections["page"].end if "page" in sections else 0
            number = 2
            while True:
                if revs is not None and fh.tell() == revs.start:
                    fh.seek(revs.end)  # read beside the pages already
                    number = revs.first_line + _section_lines(plan, "revision")
                if receipts is not None and fh.tell() == receipts.start:
                    fh.seek(receipts.end)
                    number = receipts.first_line + _section_lines(plan, "receipt")
                data = fh.readline()
                if not data:
                    break
                obj = parse_line(data, p, number)
                line = (number, obj)
                number += 1
                kind = obj["kind"]
                if kind == END_KIND:
                    break
                if kind != "page":
                    while waiting is not None and pages_end <= fh.tell():  # revisions of pages the store holds
                        yield Unit("page", revisions=[waiting])
                        waiting = next(pending, None)
                    yield Unit(kind, line=line)
                    continue
                unit = Unit("page", page=line)
                pid = obj["page_id"]
                while waiting is not None and waiting[1]["page_id"] <= pid:
                    if waiting[1]["page_id"] == pid:
                        unit.revisions.append(waiting)
                    else:
                        yield Unit("page", revisions=[waiting])
                    waiting = next(pending, None)
                yield unit
            while waiting is not None:
                yield Unit("page", revisions=[waiting])
                waiting = next(pending, None)
        finally:
            rf.close()


def _section_lines(plan: ExportPlan, kind: str) -> int:
    """Lines in a kind's section (the numbers of the lines after it)."""
    following = [s.first_line for s in plan.sections.values() if s.first_line > plan.sections[kind].first_line]
    return (min(following) if following else plan.lines) - plan.sections[kind].first_line


@dataclass
class _Rev:
    """A revision line made ready outside the lock."""

    number: int
    obj: dict[str, Any]
    title: str
    content: str | None
    media_type: str | None
    facets_json: str
    refs_json: str
    prov_json: str
    inputs: list[str]
    doc: index.Analysed


class Restore:
    """One run of `import_export` through the bulk write path."""

    def __init__(self, ex: ExportOps, p: Path, plan: ExportPlan, progress: Progress | None,
                 opener: Opener = None, confirm_lookalike: bool = False) -> None:
        self.ex = ex
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
            for unit in units(self.p, self.plan, self.opener):
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

    def _prepare(self, unit: Unit) -> tuple[Unit, list[_Rev]]:
        return unit, [self._prepare_rev(n, obj) for n, obj in unit.revisions]

    def _prepare_rev(self, number: int, obj: dict[str, Any]) -> _Rev:
        payload = obj["payload"]
        facets = obj["facets"]
        refs = obj["source_refs"]
        title = page_title(facets, payload, refs)
        content = payload["content"] if payload else None
        inputs = sorted({i for e in obj["provenance"] for i in e.get("input_revision_ids", [])})
        return _Rev(number, obj, title, content, payload["media_type"] if payload else None,
                    dumps(facets) if facets else "{}", dumps(refs) if refs else "[]", dumps(obj["provenance"]), inputs,
                    index.analyse(title, content, facets, self.ex._salt, obj["observed_at"] or obj["created_at"]))

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

    def _write(self, ready: list[tuple[Unit, list[_Rev]]]) -> None:
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
        pages = [(u, revs) for u, revs in ready if u.kind == "page"]
        if pages:
            self._pages(pages)
        relations = [u.line for u, _ in ready if u.kind == "relation" and u.line is not None]
        if relations:
            self._relations(relations)
        sources = [u.line for u, _ in ready if u.kind == "source_page" and u.line is not None]
        if sources:
            self._source_pages(sources)
        self.writer.flush()
        for unit, _ in ready:
            if unit.kind not in ("receipt", "scope", "page", "relation", "source_page"):
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

    def _pages(self, pages: list[tuple[Unit, list[_Rev]]]) -> None:
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
                head: tuple[int, _Rev] | None = None
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

    def _revision(self, r: _Rev, page_pk: int, fresh: bool, have: dict[str, tuple[Any, ...]], seqs: dict[int, int],
                  new_revs: dict[str, tuple[int, int]], page_status: str) -> int | None:
        """Gather one revision's rows; its pk, or None when it is here already (the same)."""
        obj = r.obj
        rid = obj["revision_id"]
        payload = obj["payload"]
        if rid in have or rid in new_revs:
            existing = have.get(rid) or (obj["content_digest"], r.content)
            self.ex._same_or_conflict("Revision", rid, {"digest": existing[0], "content": existing[1]},
                                      {"digest": obj["content_digest"], "content": payload and payload["content"]})
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
