"""Reading a `pcp export` file for a restore (store/restore.py): the checking pass and what it learns
(ExportPlan), the file's units in the order they are written, and the helper processes that make a plain
file's pages into rows while the restore writes (Helpers).

The checking pass reads every record and the closing digest before anything is written, and notes where
each kind's lines are and whether they are in the order `pcp export` writes (a "canonical" file: every kind
in one run, pages by page id, revisions by page id); in such a file it also cuts the pages into tasks of
TASK_PAGES pages with all their revisions. With a helper, a large file is checked in two halves at once (the
helper's half: its lines counted ahead, its digest hashed here, its revision lines sampled so that the cuts
are found afterwards by a short scan). A helper (a `python -c` child on the same `store` package) reads a task's lines, parses them and
makes them rows ready to insert: keys numbered within the task, index terms, titles, stored JSON and the
task's term statistics, so that the restore only adds its first free keys and inserts. Tasks are
independent, so they are written in the order they are ready, and the restore makes one ready itself when
no answer is there (and every task of a helper that stopped). The check is still whole before the first write; a task that meets what the store holds
(a rerun) is written as the one-process path writes it.

Long because: the file's reading, its plan and the helpers that read it by that plan are one piece of work.
"""

from __future__ import annotations

import bisect
import collections
import contextlib
import hashlib
import json
import json.scanner
import os
import pickle
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, ContextManager, Iterable, Iterator

from . import index
from .core import dumps
from .errors import Invalid, PcpError
from .export_check import check_record, header_owners
from .jsonsafe import loads
from .titles import page_title

EXPORT_KIND = "pcp.export.v1"
END_KIND = "pcp.export.end"
# The order `pcp export` writes its kinds in (store/export.py _export_lines); other kinds (the ledger's) follow.
KIND_ORDER = ("scope", "page", "revision", "relation", "retraction", "lifecycle_event", "suppression",
              "recommendation", "source_page", "receipt")
# The pages of a plain file in export order are made into rows (keys, titles, stored JSON, index terms, statistics)
# by helper processes while the restore writes (`Helpers`): for files of at least HELPERS_MIN_BYTES, on a machine
# with two or more cores and one free besides the restore's (PCP_RESTORE_HELPERS=1: always, =0: never). A task is
# TASK_PAGES page lines with their revision lines. The first helper checks the second half of the file while the
# restore checks the first (`_check_halves`); should it not take that, it is given up to TASKS_AHEAD tasks while the
# file is checked (their answers wait in it: about 1.6 MB each). While the restore writes a helper holds up to
# WRITING_AHEAD tasks, enough for a group's writing (a task the restore takes itself at the end may be one a helper
# had: a few are done twice).
HELPERS_MIN_BYTES = 8 << 20
TASK_PAGES = 1000
TASKS_AHEAD = 8
WRITING_AHEAD = 8
PIPE_BYTES = 1 << 20  # a helper's answers pipe (Linux lets anyone make one this large)
MAX_HELPERS = 3


@dataclass
class Section:
    start: int  # byte offset of the kind's first line
    end: int  # byte offset after its last line
    first_line: int
    last_line: int = 0


# A task for a helper: page lines from (byte offset, line number) to the next task's, and the revision lines of
# those pages (and of pages the file does not hold whose ids sort among them) likewise.
Cut = tuple[int, int]


@dataclass
class PageTask:
    pages: tuple[Cut, Cut]
    revisions: tuple[Cut, Cut]


def _task(sections: dict[str, Section], page_cuts: list[tuple[str, int, int]], revision_cuts: list[Cut],
          i: int) -> PageTask:
    """Task i, once the checking pass found where its pages and revisions end (cut i of each)."""
    pages, revs = sections["page"], sections["revision"]
    page_from = (pages.start, pages.first_line) if i == 0 else page_cuts[i - 1][1:]
    rev_from = (revs.start, revs.first_line) if i == 0 else revision_cuts[i - 1]
    return PageTask((page_from, page_cuts[i][1:]), (rev_from, revision_cuts[i]))


@dataclass
class ExportPlan:
    """What the checking pass learnt of an export file."""

    lines: int
    sha256: str
    canonical: bool
    sections: dict[str, Section] = field(default_factory=dict)
    scopes: list[str] = field(default_factory=list)  # the namespaces of its scope records, in file order
    # Every TASK_PAGES-th page line after the first (its page id, offset, line number), and where the revisions of
    # page ids from that one on begin (offset, line number; as many as reached): the cuts between PageTasks.
    page_cuts: list[tuple[str, int, int]] = field(default_factory=list)
    revision_cuts: list[Cut] = field(default_factory=list)

    def page_tasks(self) -> list[PageTask]:
        """The page and revision lines cut into tasks of whole pages (a file in export order only)."""
        pages, revs = self.sections.get("page"), self.sections.get("revision")
        if not self.canonical or pages is None:
            return []
        rev_start = (revs.start, revs.first_line) if revs is not None else (0, 0)
        rev_end = (revs.end, revs.last_line + 1) if revs is not None else (0, 0)
        page_at = [(pages.start, pages.first_line)] + [(o, n) for _, o, n in self.page_cuts] + \
            [(pages.end, pages.last_line + 1)]
        rev_at = [rev_start] + self.revision_cuts + [rev_end] * (len(self.page_cuts) + 1 - len(self.revision_cuts))
        return [PageTask((page_at[i], page_at[i + 1]), (rev_at[i], rev_at[i + 1])) for i in range(len(page_at) - 1)]


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


def check_file(p: Path, opener: Opener = None, helpers: Helpers | None = None) -> ExportPlan:
    """Check the header, every record and the closing digest before anything is written (the first page
    tasks are offered to `helpers` as soon as their lines are known, so that they are made ready meanwhile)."""
    if helpers is not None and opener is None:
        try:
            halves = _check_halves(p, helpers)
        except OSError as exc:
            raise Invalid(f"{p}: cannot read ({exc.strerror or exc}).") from None
        if halves is not None:
            return halves
    digest = hashlib.sha256()
    count, last, header = 0, None, None
    owners: set[str] = set()
    sections: dict[str, Section] = {}
    scopes: list[str] = []
    canonical = True
    current: str | None = None
    last_page = last_rev_page = ""
    offset = 0
    page_cuts: list[tuple[str, int, int]] = []
    revision_cuts: list[Cut] = []
    pages = 0
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
                        sections[kind].last_line = number
                        if kind == "page":
                            canonical = canonical and obj["page_id"] > last_page
                            last_page = obj["page_id"]
                            if pages and pages % TASK_PAGES == 0:
                                page_cuts.append((last_page, offset, number))
                            pages += 1
                        elif kind == "revision":
                            canonical = canonical and obj["page_id"] >= last_rev_page
                            last_rev_page = obj["page_id"]
                            while len(revision_cuts) < len(page_cuts) and last_rev_page >= page_cuts[len(revision_cuts)][0]:
                                revision_cuts.append((offset, number))  # (pages cut before the revisions: else not canonical)
                                if helpers is not None and canonical:
                                    helpers.offer(_task(sections, page_cuts, revision_cuts, len(revision_cuts) - 1))
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
    return ExportPlan(count, digest.hexdigest(), canonical, sections, scopes, page_cuts, revision_cuts)


# A large file is checked in two halves at once when a helper is there: this process the first half, a helper the
# second (line numbers counted ahead, the digest of the second half hashed here afterwards); revision lines are
# sampled every REV_SAMPLE-th so that the cuts between tasks are found afterwards by a short scan.
REV_SAMPLE = 64


@dataclass
class CheckTask:
    """A helper's part of the checking pass: the lines from byte `start` to the end of the file."""

    start: int
    owners: set[str]


@dataclass
class Checked:
    """What a checking pass learnt of a run of lines (a half of the file)."""

    first_line: int
    lines: int = 0
    runs: list[list[Any]] = field(default_factory=list)  # [kind, start, end, first line, last line]
    scopes: list[str] = field(default_factory=list)
    canonical: bool = True  # within these lines
    first_page: str | None = None
    last_page: str = ""
    first_rev: str | None = None
    last_rev: str = ""
    pages: int = 0
    page_cuts: list[tuple[str, int, int]] = field(default_factory=list)
    rev_samples: list[tuple[str, int, int]] = field(default_factory=list)  # (page id, offset, line number)
    revs: int = 0
    last: tuple[int, bytes] = (0, b"")  # the last line: (offset, bytes)


def _check_line(c: Checked, p: Path, owners: set[str], number: int, offset: int, data: bytes) -> None:
    """One line of the checking pass (as `check_file`'s loop checks it) into `c`."""
    c.lines += 1
    c.last = (offset, data)
    obj = parse_line(data, p, number)
    kind = obj.get("kind")
    if kind == END_KIND:
        return
    check_record(obj, p, number)
    assert isinstance(kind, str)  # check_record refuses an unknown kind
    if kind == "scope":
        if owners and obj["owner_id"] not in owners:
            raise Invalid(f"{p}: line {number} (scope): its owner {obj['owner_id']} is neither the export's owner "
                          "nor an owner id its header lists; nothing was imported.")
        c.scopes.append(obj["namespace"])
    if c.runs and c.runs[-1][0] == kind:
        c.runs[-1][2], c.runs[-1][4] = offset + len(data), number
    else:
        c.runs.append([kind, offset, offset + len(data), number, number])
    if kind == "page":
        pid = obj["page_id"]
        if c.first_page is None:
            c.first_page = pid
        c.canonical = c.canonical and pid > c.last_page
        c.last_page = pid
        if c.pages and c.pages % TASK_PAGES == 0:
            c.page_cuts.append((pid, offset, number))
        c.pages += 1
    elif kind == "revision":
        pid = obj["page_id"]
        if c.first_rev is None:
            c.first_rev = pid
        c.canonical = c.canonical and pid >= c.last_rev
        c.last_rev = pid
        if c.revs % REV_SAMPLE == 0:
            c.rev_samples.append((pid, offset, number))
        c.revs += 1


def check_range(p: Path, task: CheckTask) -> Checked:
    """A helper's half of the checking pass: line numbers counted up to `start`, then every line to the end."""
    with open(p, "rb") as fh:
        number = 1
        left = task.start
        while left > 0:
            block = fh.read(min(left, 1 << 20))
            if not block:
                break
            number += block.count(b"\n")
            left -= len(block)
        c = Checked(number)
        offset = fh.tell()
        for data in fh:
            _check_line(c, p, task.owners, number, offset, data)
            number += 1
            offset += len(data)
    return c


def _check_halves(p: Path, helpers: Helpers) -> ExportPlan | None:
    """`check_file` of a large plain file, its second half checked by a helper meanwhile (None: the file is too
    small to split, or not an export: checked in one pass)."""
    digest = hashlib.sha256()
    with open(p, "rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        header_line = fh.readline()
        header = parse_line(header_line, p, 1)
        if not isinstance(header, dict) or header.get("kind") != EXPORT_KIND:
            return None
        fh.seek(max(len(header_line), (len(header_line) + size) // 2))
        fh.readline()
        start = fh.tell()
        if start >= size or start <= len(header_line):
            return None
        owners = header_owners(header)
        if not helpers.check(CheckTask(start, owners)):
            return None
        digest.update(header_line)
        mine = Checked(2)
        fh.seek(len(header_line))
        offset, number = len(header_line), 2
        while offset < start:
            data = fh.readline()
            digest.update(data)
            _check_line(mine, p, owners, number, offset, data)
            number += 1
            offset += len(data)
        theirs = helpers.checked()
        if theirs is None:  # (the helper stopped: its half is checked here)
            theirs = check_range(p, CheckTask(start, owners))
        fh.seek(start)
        left = theirs.last[0] - start  # every line before the last
        while left > 0:
            block = fh.read(min(left, 1 << 20))
            digest.update(block)
            left -= len(block)
    count = theirs.first_line + theirs.lines - 1
    end = parse_line(theirs.last[1], p, count)
    if end.get("kind") != END_KIND:
        raise Invalid(f"{p}: the export is incomplete (no closing digest line); export it again.")
    if end.get("sha256") != digest.hexdigest():
        raise Invalid(f"{p}: the export's digest does not match its lines (damaged or edited).")
    runs = mine.runs + theirs.runs
    if mine.runs and theirs.runs and mine.runs[-1][0] == theirs.runs[0][0]:  # one run across the halves
        first = theirs.runs[0]
        runs = mine.runs[:-1] + [[first[0], mine.runs[-1][1], first[2], mine.runs[-1][3], first[4]]] + theirs.runs[1:]
    canonical = mine.canonical and theirs.canonical
    if mine.first_page is not None and theirs.first_page is not None:
        canonical = canonical and theirs.first_page > mine.last_page
    if mine.first_rev is not None and theirs.first_rev is not None:
        canonical = canonical and theirs.first_rev >= mine.last_rev
    sections: dict[str, Section] = {}
    for kind, run_start, run_end, first_line, last_line in runs:
        if kind in sections:
            canonical = False  # a kind in two runs
            sections[kind].end, sections[kind].last_line = run_end, last_line
        else:
            sections[kind] = Section(run_start, run_end, first_line, last_line)
    order = [k for k in KIND_ORDER if k in sections]
    if [k for k in sections if k in KIND_ORDER] != order:
        canonical = False
    page_cuts = mine.page_cuts + theirs.page_cuts
    revision_cuts = _revision_cuts(p, sections.get("revision"), page_cuts, mine.rev_samples + theirs.rev_samples) \
        if canonical else []
    return ExportPlan(count, digest.hexdigest(), canonical, sections, mine.scopes + theirs.scopes, page_cuts,
                      revision_cuts)


def _revision_cuts(p: Path, revs: Section | None, page_cuts: list[tuple[str, int, int]],
                   samples: list[tuple[str, int, int]]) -> list[Cut]:
    """For each page cut, where the revisions of page ids from its one on begin: from the last sampled revision
    line of a smaller page id, a scan of at most REV_SAMPLE lines."""
    if revs is None:
        return []
    out: list[Cut] = []
    ids = [pid for pid, _, _ in samples]
    with open(p, "rb") as fh:
        for pid, _, _ in page_cuts:
            i = bisect.bisect_left(ids, pid)
            offset, number = (samples[i - 1][1], samples[i - 1][2]) if i else (revs.start, revs.first_line)
            fh.seek(offset)
            while offset < revs.end:
                data = fh.readline()
                if parse_line(data, p, number)["page_id"] >= pid:
                    break
                offset += len(data)
                number += 1
            out.append((offset, number) if offset < revs.end else (revs.end, revs.last_line + 1))
    return out


# A unit: a page line with its revision lines (page None: revisions of a page the store or an earlier unit
# holds), or one line of another kind. Lines are (line number, record).
Line = tuple[int, dict[str, Any]]


@dataclass
class Unit:
    kind: str
    page: Line | None = None
    revisions: list[Line] = field(default_factory=list)
    line: Line | None = None
    ready: list[RevReady] | None = None  # its revisions made ready by a helper (Helpers)
    rows: Rows | None = None  # kind "rows": a helper's task as rows

    @property
    def size(self) -> int:
        return self.rows.lines if self.rows is not None else len(self.revisions) + 1


@dataclass
class Rows:
    """A task's pages and revisions made into rows by a helper, when every page has its head revision beside it,
    no revision comes twice and every provenance input is one of the task's revisions. Keys are numbered from 0 within the task (the writer
    adds the first free key), scopes named by namespace, and the task's statistics already counted."""

    task: PageTask
    lines: int
    # (page, page_id, namespace, head, head_revision_id, status, title, media_type, actor_type, created_at,
    #  updated_at, sort_time)
    pages: list[tuple[Any, ...]]
    # bulkwrite.REVISION_SQL's columns, with the namespace for the scope
    revisions: list[tuple[Any, ...]]
    fts: list[tuple[int, str, str, str, str, tuple[str, ...]]]  # (revision, title, body, meta, namespace, dates)
    stats: dict[str, tuple[dict[str, int], int, int]]  # namespace -> (term -> pages, pages, terms)
    namespaces: dict[str, tuple[int, str]]  # namespace -> (first line naming it, its kind)
    inputs: list[tuple[int, int, str, int]]  # provenance inputs: (revision, its page, input revision id, its page)


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


def units(p: Path, plan: ExportPlan, opener: Opener = None, helped: Iterable[Unit] | None = None) -> Iterator[Unit]:
    """The file's units in the order they are written: receipts first, then pages with their revisions (with
    `helped`, the page units of a plain file in export order as helpers made them ready: plan.page_tasks())."""
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
        page_section = sections.get("page") if helped is not None else None
        rf = open(p, "rb")
        try:
            pending: Iterator[Line] = iter(())
            if revs is not None and page_section is None:
                rf.seek(revs.start)
                pending = _read(rf, p, revs.first_line, revs.end)
            beside = _Beside(pending)
            pages_end = sections["page"].end if "page" in sections else 0
            number = 2
            while True:
                if page_section is not None and helped is not None and fh.tell() == page_section.start:
                    yield from helped  # (the revisions too)
                    fh.seek(page_section.end)
                    number = page_section.last_line + 1
                    continue
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
                    if pages_end <= fh.tell():  # the revisions left are of pages the store holds
                        yield from beside.rest()
                    yield Unit(kind, line=line)
                    continue
                unit = Unit("page", page=line)
                yield from beside.up_to(unit, obj["page_id"])
                yield unit
            yield from beside.rest()
        finally:
            rf.close()


def task_units(p: Path, task: PageTask) -> Iterator[Unit]:
    """A task's page lines, each with its revision lines beside it (a revision whose page the task does not hold
    is a unit of its own, in page id order, as `units` makes them)."""
    with open(p, "rb") as fh, open(p, "rb") as rf:
        (start, first), (end, _) = task.pages
        fh.seek(start)
        (rstart, rfirst), (rend, _) = task.revisions
        rf.seek(rstart)
        beside = _Beside(_read(rf, p, rfirst, rend))
        for line in _read(fh, p, first, end):
            unit = Unit("page", page=line)
            yield from beside.up_to(unit, line[1]["page_id"])
            yield unit
        yield from beside.rest()


class _Beside:
    """Revision lines read beside the page lines, both in page id order: each page takes its own; a revision of a
    page the lines do not hold is a unit of its own (its page is in the store already, or the check refuses it)."""

    def __init__(self, revisions: Iterator[Line]) -> None:
        self.revisions = revisions
        self.waiting = next(revisions, None)

    def up_to(self, unit: Unit, pid: str) -> Iterator[Unit]:
        """Give `unit` (page `pid`) its revisions; yield those of lower page ids, which no page line here holds."""
        while self.waiting is not None and self.waiting[1]["page_id"] <= pid:
            if self.waiting[1]["page_id"] == pid:
                unit.revisions.append(self.waiting)
            else:
                yield Unit("page", revisions=[self.waiting])
            self.waiting = next(self.revisions, None)

    def rest(self) -> Iterator[Unit]:
        while self.waiting is not None:
            yield Unit("page", revisions=[self.waiting])
            self.waiting = next(self.revisions, None)


def prepare_task(p: Path, task: PageTask, salt: bytes) -> list[Unit]:
    """A helper's work: the task as one unit of rows (Rows), or, when it holds what only the writer can settle
    (a revision of a page it does not hold, a page without its head, a provenance input outside the task, a
    revision twice), its units with their revisions made ready."""
    units = list(task_units(p, task))
    ready = [(u, [prepare_rev(n, obj, salt) for n, obj in u.revisions]) for u in units]
    keys = _task_keys(ready)
    if keys is not None:
        return [Unit("rows", rows=_rows(task, ready, keys))]
    for u, revs in ready:
        u.ready = revs
    return units


def _task_keys(ready: list[tuple[Unit, list[RevReady]]]) -> dict[str, tuple[int, int]] | None:
    """Revision id -> (its key, its page's key) within the task; None when the task cannot be rows."""
    keys: dict[str, tuple[int, int]] = {}
    for page_key, (u, revs) in enumerate(ready):
        if u.page is None or not any(r.obj["revision_id"] == u.page[1]["head_revision_id"] for r in revs):
            return None
        for r in revs:
            if r.obj["revision_id"] in keys:
                return None
            keys[r.obj["revision_id"]] = (len(keys), page_key)
    if not all(i in keys for _, revs in ready for r in revs for i in r.inputs):
        return None
    return keys


def _rows(task: PageTask, ready: list[tuple[Unit, list[RevReady]]], keys: dict[str, tuple[int, int]]) -> Rows:
    """The rows of a task's pages (each with its head revision beside it, every provenance input among the
    task's revisions: `keys`), as `Restore._pages` writes them."""
    pages: list[tuple[Any, ...]] = []
    inputs: list[tuple[int, int, str, int]] = []
    revisions: list[tuple[Any, ...]] = []
    fts: list[tuple[int, str, str, str, str, tuple[str, ...]]] = []
    stats: dict[str, tuple[dict[str, int], int, int]] = {}
    namespaces: dict[str, tuple[int, str]] = {}
    counters: dict[str, Counter[str]] = {}
    docs: Counter[str] = Counter()
    terms: Counter[str] = Counter()
    lines = 0
    for page_key, (unit, revs) in enumerate(ready):
        assert unit.page is not None
        number, obj = unit.page
        lines += 1 + len(revs)
        namespaces.setdefault(obj["namespace"], (number, "page"))
        counted = obj["status"] != "tombstoned"
        head: tuple[int, RevReady] | None = None
        for seq, r in enumerate(revs, 1):
            o = r.obj
            key = len(revisions)
            ns = o["namespace"]
            namespaces.setdefault(ns, (r.number, "revision"))
            if o["revision_id"] == obj["head_revision_id"]:
                head = (key, r)
            for input_id in r.inputs:
                inputs.append((key, page_key, input_id, keys[input_id][1]))
            by = o["created_by"]
            revisions.append((key, o["revision_id"], page_key, seq, o["previous_revision_id"], ns, o["created_at"],
                              o["observed_at"], o["valid_from"], o["valid_to"], by["actor_type"], by["actor_id"],
                              r.media_type, r.content, o["content_digest"], r.title, r.facets_json, r.refs_json,
                              r.prov_json))
            d = r.doc
            fts.append((key, " ".join(d.title), " ".join(d.body), " ".join(d.meta), ns, d.dates))
            if counted:
                counter = counters.get(ns)
                if counter is None:
                    counter = counters[ns] = Counter()
                index.count_keys(counter, d)
                docs[ns] += 1
                terms[ns] += d.count
        assert head is not None
        head_key, hr = head
        pages.append((page_key, obj["page_id"], obj["namespace"], head_key, obj["head_revision_id"], obj["status"],
                      hr.title, hr.media_type, obj.get("actor_type") or "user", obj["created_at"], obj["updated_at"],
                      hr.obj["observed_at"] or hr.obj["created_at"]))
    for ns, counter in counters.items():
        stats[ns] = (dict(counter), docs[ns], terms[ns])
    return Rows(task, lines, pages, revisions, fts, stats, namespaces, inputs)


class Helpers:
    """Processes that make the pages of a plain export into rows while this process writes (the file is checked
    first, by this process, as always). Started before the check, so that they load and take the first tasks
    meanwhile.

    A helper is `python -c` running `helper_main` on the `store` package this process runs (not a
    multiprocessing child: that would run the caller's main script again in it), fed tasks as pickles on its
    stdin and answering with length-prefixed pickles on its stdout; it opens nothing but the export file, and
    ends when its stdin closes (this process ended or is done with it). Tasks are independent (each holds whole
    pages and every revision of theirs), so they are written in the order their answers come; when no answer
    is there yet, the restore makes the next task ready itself rather than wait (a helper starved of CPU on a
    busy machine slows nothing)."""

    def __init__(self, count: int, p: Path, salt: bytes) -> None:
        from .cores import start_helper

        self.p, self.salt = p, salt
        self.procs: list[Any] = []
        self.sent: list[PageTask] = []  # offered during the check
        self._out: dict[int, collections.deque[PageTask]] = {}  # helper's stdout fd -> its tasks not answered yet
        self._got: dict[int, bytearray] = {}  # helper's stdout fd -> what it wrote that is not read as an answer yet
        self._taken: set[int] = set()  # ids of the tasks made ready here
        self._lost: list[PageTask] = []  # tasks of helpers that stopped, not made ready yet
        self.done_here = 0  # tasks this process made ready itself
        try:
            for _ in range(count):
                proc = start_helper("restore_file", "helper_main")
                self.procs.append(proc)
                assert proc.stdout is not None
                fd = proc.stdout.fileno()
                with contextlib.suppress(OSError, AttributeError):  # (Linux: an answer in one piece, not 64 KiB ones)
                    import fcntl

                    fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, PIPE_BYTES)
                self._out[fd], self._got[fd] = collections.deque(), bytearray()
                self._send(proc, (p, salt))
        except BaseException:
            self.close()
            raise

    @classmethod
    def start(cls, p: Path, salt: bytes, opener: Opener = None) -> Helpers | None:
        """Helpers for a plain file of at least HELPERS_MIN_BYTES on a machine with two or more cores and about a
        core free besides this process (a 1-minute load average under the cores less half a core: on a busy machine
        a helper only takes turns with this process and adds its start and copying), else None; and never on
        Windows, where a pipe cannot be asked whether an answer is there. PCP_RESTORE_HELPERS=1 starts them
        whatever the load, =0 never."""
        from .cores import cores, helper_wanted

        try:
            if (opener is not None or os.name == "nt" or p.stat().st_size < HELPERS_MIN_BYTES
                    or not helper_wanted("PCP_RESTORE_HELPERS")):
                return None
            return cls(max(1, min(MAX_HELPERS, cores() - 1)), p, salt)
        except OSError:  # no file (the check says so) or no process to be had: the work is done here
            return None

    @staticmethod
    def _send(proc: Any, message: Any) -> None:
        pickle.dump(message, proc.stdin, pickle.HIGHEST_PROTOCOL)
        proc.stdin.flush()

    def _give(self, task: PageTask, ahead: int = WRITING_AHEAD) -> bool:
        """Send a task to a helper with fewer than `ahead` under way (False: none has room)."""
        for proc in self.procs:
            fd = proc.stdout.fileno()
            out = self._out.get(fd)
            if out is not None and len(out) < ahead:
                try:
                    self._send(proc, task)
                except OSError:
                    self._drop(fd)
                    continue
                out.append(task)
                return True
        return False

    def _drop(self, fd: int) -> None:
        """A helper that stopped: its tasks not answered are made ready here instead."""
        self._lost.extend(t for t in self._out.pop(fd, ()) if id(t) not in self._taken)
        self._got.pop(fd, None)

    def offer(self, task: PageTask) -> None:
        """A task known during the check, sent at once while a helper has room (the answers wait in the helpers:
        TASKS_AHEAD each at most)."""
        if self._give(task, TASKS_AHEAD):
            self.sent.append(task)

    def check(self, task: CheckTask) -> bool:
        """Give the first helper its half of the checking pass (False: it could not take it)."""
        if not self.procs or self.sent or any(self._out.values()):
            return False
        fd = self.procs[0].stdout.fileno()
        try:
            self._send(self.procs[0], task)
        except OSError:
            self._drop(fd)
            return False
        self._out[fd].append(task)  # type: ignore[arg-type]  # (answered in turn, as a page task)
        return True

    def checked(self) -> Checked | None:
        """The helper's half of the checking pass, once it is done (its error raised); None: the helper stopped."""
        got = self._answer(wait=True)
        if got is None:
            self._lost = [t for t in self._lost if not isinstance(t, CheckTask)]
            return None
        status, value = got[1]
        if status != "ok":
            raise value
        assert isinstance(value, Checked)
        return value

    def _answer(self, wait: bool) -> tuple[PageTask, tuple[str, Any]] | None:
        """A helper's next whole answer and its task, if one is there (waiting for one with `wait`)."""
        import select
        import struct

        while True:
            for fd, got in self._got.items():
                if len(got) >= 8:
                    size = struct.unpack_from("<Q", got)[0]
                    if len(got) >= 8 + size:
                        data = bytes(got[8:8 + size])
                        del got[:8 + size]
                        return self._out[fd].popleft(), pickle.loads(data)  # (a helper answers in turn)
            asked = [fd for fd, out in self._out.items() if out]
            if not asked:
                return None
            coming = any(self._got[fd] for fd in asked)  # an answer part read: the rest is on its way, wait for it
            readable, _, _ = select.select(asked, [], [], None if wait or coming else 0)
            if not readable:
                return None
            for fd in readable:
                data = os.read(fd, 1 << 20)
                if data:
                    self._got[fd] += data
                else:
                    self._drop(fd)  # (it ended: killed, or it could not start)

    def _unanswered(self) -> PageTask | None:
        """The last task a helper has not answered and this process did not take, if any."""
        for out in sorted(self._out.values(), key=len, reverse=True):
            for task in reversed(out):
                if id(task) not in self._taken:
                    return task
        return None

    def units(self, tasks: list[PageTask]) -> Iterator[Unit]:
        """The tasks' units, a task at a time, in the order they are ready: a helper's answer when one is there,
        else the next task made ready here (the last not yet sent, or at the end the last a helper has not
        answered: its answer is then passed over); a helper that answers gets the next task not yet sent."""
        if tasks[:len(self.sent)] != self.sent:  # (the plan's tasks are the ones offered: a file that changed?)
            raise Invalid("The export changed while it was read; import it again.")
        todo = collections.deque(tasks[len(self.sent):])
        try:
            while True:
                todo.extend(self._lost)  # (a helper's that stopped)
                self._lost.clear()
                while todo and self._give(todo[0]):  # (a helper with room first: it may have answered meanwhile)
                    todo.popleft()
                got = self._answer(wait=False)
                if got is None:
                    task = todo.pop() if todo else self._unanswered()  # (the helpers take from the front)
                    if task is not None:
                        self._taken.add(id(task))
                        self.done_here += 1
                        yield from prepare_task(self.p, task, self.salt)
                        continue
                    if not any(self._out.values()) and not self._lost:
                        return
                    got = self._answer(wait=True)
                    if got is None:
                        continue  # (the helper waited for stopped: its tasks are lost ones now)
                task, (status, value) = got
                if id(task) in self._taken:
                    continue  # made ready here meanwhile
                if status != "ok":
                    raise value
                while todo and self._give(todo[0]):
                    todo.popleft()  # (before writing it: the helper works meanwhile)
                yield from value
                if not todo and not self._lost and all(id(t) in self._taken for out in self._out.values() for t in out):
                    return
        except (OSError, EOFError, pickle.UnpicklingError):  # (an answer that cannot be read)
            raise PcpError("A helper process of the restore failed; nothing of its part was written. Run the same "
                           "import again to complete it.", "unavailable") from None

    def close(self) -> None:
        """End the helpers: they hold nothing of the store; one still making ready a task taken here is ended at once."""
        for proc in self.procs:
            with contextlib.suppress(OSError):
                proc.stdin.close()  # its end
            if self._out.get(proc.stdout.fileno()):
                proc.kill()
        for proc in self.procs:
            try:
                proc.wait(timeout=5)
            except Exception:  # (it is stuck)
                proc.kill()
                proc.wait()
            with contextlib.suppress(OSError):
                proc.stdout.close()
        self.procs = []


def helper_main() -> None:
    """A helper's loop (Helpers): (path, salt), then tasks, each answered with ("ok", units) or ("error", exc)
    after its length (8 bytes). The answers are written by a thread, so that the next task is made ready while
    one waits to be read."""
    import queue
    import struct
    import sys
    import threading

    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # anything printed goes to stderr, not into the answers
    stdin = sys.stdin.buffer
    answers: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()  # (at most TASKS_AHEAD: the parent sends no more)

    def write() -> None:
        with contextlib.suppress(OSError):  # (the parent is gone)
            while (data := answers.get()) is not None:
                out.write(struct.pack("<Q", len(data)))
                out.write(data)
                out.flush()

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    try:
        p, salt = pickle.load(stdin)
        while True:
            try:
                task = pickle.load(stdin)
            except EOFError:
                break
            answer: tuple[str, Any]
            try:
                answer = ("ok", check_range(p, task) if isinstance(task, CheckTask) else prepare_task(p, task, salt))
            except Exception as exc:  # (a PcpError names the line)
                answer = ("error", exc if isinstance(exc, PcpError) else Invalid(f"{p}: {type(exc).__name__}: {exc}"))
            answers.put(pickle.dumps(answer, pickle.HIGHEST_PROTOCOL))
    except (OSError, EOFError, KeyboardInterrupt):
        return
    answers.put(None)
    writer.join()


def _section_lines(plan: ExportPlan, kind: str) -> int:
    """Lines in a kind's section (the numbers of the lines after it)."""
    following = [s.first_line for s in plan.sections.values() if s.first_line > plan.sections[kind].first_line]
    return (min(following) if following else plan.lines) - plan.sections[kind].first_line


@dataclass
class RevReady:
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


def prepare_rev(number: int, obj: dict[str, Any], salt: bytes) -> RevReady:
    """A revision line made ready to write: title, stored JSON, provenance inputs and index terms."""
    payload = obj["payload"]
    facets = obj["facets"]
    refs = obj["source_refs"]
    title = page_title(facets, payload, refs)
    content = payload["content"] if payload else None
    inputs = sorted({i for e in obj["provenance"] for i in e.get("input_revision_ids", [])})
    return RevReady(number, obj, title, content, payload["media_type"] if payload else None,
                dumps(facets) if facets else "{}", dumps(refs) if refs else "[]", dumps(obj["provenance"]), inputs,
                index.analyse(title, content, facets, salt, obj["observed_at"] or obj["created_at"]))
