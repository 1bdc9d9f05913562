"""What the coding-agent importers share (Claude Code, Codex CLI, Gemini CLI).

A session is one all-or-nothing unit: its conversation page(s) and message pages land in one
transaction, so an import stopped part way leaves whole sessions only. Namespaces carry the
project, so a grant can give a model one project's sessions:

    agent:<tool>                              the tool's sessions
    agent:<tool>:<project-slug>               one project (the cwd, bounded)
    agent:<tool>:<project-slug>:<session-id>  one session, its subagent logs included

Tool traffic (shell commands, file reads and edits, their output) is large and often holds
secrets: by default it is not stored; each message names the tool calls that led to it and
their sizes (facet `tool_calls`). With `with_tools` every call and every result is a page of
its own (role `tool`), its input decoded to readable text.

Long because: the session model the three agent importers share (threads, tool calls, injected text, the upgrade
pass) is one set of rules.
"""

from __future__ import annotations

import functools
import gc
import hashlib
import json
import os
import re
import stat
import unicodedata
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from collections import Counter
from typing import Any, Callable, Container, Iterable, Iterator, cast

from ..constants import LIMITS
from ..errors import Invalid, LimitExceeded
from .. import import_helper
from ..import_groups import IMPORT_GC_THRESHOLD
from ..importing import ImportUnit, PageRef, Prepared, prepare
from ..names import LookAlike, digest
from ..scope_titles import neutral_name
from .base import AGENT_RULES, ImportReport, Progress, unicode_safe

SLUG_CHARS = 100  # agent:<tool>:<slug>:<session id> stays well inside the 200-character namespace limit
_NOT_SLUG = re.compile(r"[^A-Za-z0-9._-]+")


@dataclass
class ToolCall:
    """One tool call and (once the file has it) its result."""

    call_id: str
    name: str
    input: Any
    observed_at: str | None
    result: str | None = None
    result_key: str | None = None  # the message key of the record that carried the result
    result_at: str | None = None
    is_error: bool = False

    @property
    def input_chars(self) -> int:
        return len(tool_input_text(self.input))

    def summary(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "input_chars": self.input_chars}
        if self.result is not None:
            out["result_chars"] = len(self.result)
        if self.is_error:
            out["is_error"] = True
        return out


@dataclass
class AgentMessage:
    key: str  # unique within the tool's files (a record uuid, or session id + record id)
    parent: str | None  # key of the message it follows, as the file says
    role: str  # user | assistant | tool | system
    text: str
    observed_at: str | None
    model: str | None = None
    facets: dict[str, Any] = field(default_factory=dict)
    calls: list[ToolCall] = field(default_factory=list)  # tool calls this message made
    results: list[ToolCall] = field(default_factory=list)  # tool results this record carried
    hidden: bool = False  # scaffolding, tool traffic or an empty record: stepped over, not a page


@dataclass
class AgentThread:
    """One conversation page: a session's main thread or one subagent's log."""

    key: str  # source key of the conversation page
    title: str
    created_at: str | None
    messages: list[AgentMessage]
    label: str  # the file it came from, as shown to the user
    facets: dict[str, Any] = field(default_factory=dict)
    subagent: bool = False


@dataclass
class AgentSession:
    session_id: str
    cwd: str | None
    project: str  # fallback for the slug when no cwd is known (the folder the file is in)
    threads: list[AgentThread]
    facets: dict[str, Any] = field(default_factory=dict)
    skipped: dict[str, int] = field(default_factory=dict)  # record kind -> how many were not imported
    injected: dict[str, str] = field(default_factory=dict)  # message key -> why: text the CLI wrote itself


# --- reading ---

NOT_REGULAR = "not a regular file (a pipe, socket or device); not read"
LINK_OUT = "a link to outside the folder being imported; pcp never reads files outside it"
LINK_FOLDER = "a link to a folder; pcp does not follow folder links"


def walk_files(root: Path, wanted: Callable[[Path], bool], source: str, report: ImportReport) -> list[Path]:
    """The regular files under the folder `root` that `wanted` accepts, sorted. Links to folders are not
    followed and a link to a file outside `root` is not read (as the Markdown importer does); both are
    named in the report."""
    found: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        for name in sorted(dirnames):
            if (here / name).is_symlink():
                dirnames.remove(name)
                report.skip(f"{source} folder {(here / name).relative_to(root)}/", LINK_FOLDER)
        found.extend(here / name for name in filenames if wanted(here / name))
    return regular_files(sorted(found), root, source, report)


def within(path: Path, root: Path) -> bool:
    """Whether `path`, its links followed, is `root` itself (a file the user named) or inside the folder imported."""
    base = root if root.is_dir() else root.parent
    real = Path(os.path.realpath(path))
    return real == Path(os.path.realpath(root)) or real.is_relative_to(os.path.realpath(base))


def regular_files(found: Iterable[Path], root: Path, source: str, report: ImportReport) -> list[Path]:
    """The regular files among the paths a walk found (folders left out); a pipe, socket, device or broken
    link is never opened (opening a pipe blocks), nor a link to outside the folder, but skipped in the report
    with why."""
    base = root if root.is_dir() else root.parent
    out = []
    for p in found:
        try:
            mode = p.stat().st_mode
        except (OSError, RuntimeError):
            why = "a broken link or unreadable entry"
        else:
            if stat.S_ISDIR(mode):
                continue
            if p.is_symlink() and not within(p, root):
                why = LINK_OUT
            elif stat.S_ISREG(mode):
                out.append(p)
                continue
            else:
                why = NOT_REGULAR
        label = str(p.relative_to(base)) if p.is_relative_to(base) else p.name
        report.skip(f"{source} file {label}", why)
    return out


def read_regular(path: Path, root: str | None = None) -> bytes:
    """A file's bytes, never blocking on a pipe swapped in since the walk (opened non-blocking, then checked),
    nor reading through a link that now leaves the folder `root` being imported."""
    target = path
    if root is not None:
        if not within(path, Path(root)):
            raise Invalid(LINK_OUT)
        target = Path(os.path.realpath(path))
    fd = os.open(target, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | (os.O_NOFOLLOW if root is not None else 0))
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise Invalid(NOT_REGULAR)
        if info.st_size > LIMITS["max_import_bytes"]:
            raise LimitExceeded(f"{path.name} is {info.st_size:,} bytes; the import limit is "
                                f"{LIMITS['max_import_bytes']:,} bytes.")
        with os.fdopen(fd, "rb", closefd=False) as fh:
            return fh.read()
    finally:
        os.close(fd)


def jsonl_records(path: Path, report: ImportReport, source: str, read: list[tuple[int, int]] | None = None
                  ) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, record) for every JSON object line; bad lines are reported, never fatal. `read` gets the
    length and CRC-32 of the bytes read (what tells two reads of a file apart)."""
    data = read_regular(path, report.path)
    if read is not None:
        read.append((len(data), zlib.crc32(data)))
    lines: list[str | bytes]
    try:  # decoded once (json.loads of each line's bytes would detect and decode its encoding per line)
        lines = list(data.decode("utf-8").split("\n"))
    except UnicodeDecodeError:
        lines = list(data.split(b"\n"))  # a line that is not UTF-8 is then refused alone
    bad = escaped = deep = 0
    # A line is searched for a lone surrogate's escape only when the file holds one (one search of the whole text).
    surrogates = _ESCAPE_BYTES.search(data) is not None
    for number, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        try:
            record = _line_value(raw) if isinstance(raw, str) else json.loads(raw)
        except RecursionError:  # nested too deeply for the parser (jsonsafe.loads)
            deep += 1
            continue
        except ValueError:
            if number == len(lines):  # the last line, cut off while the tool was writing it
                report.skip(f"{source} {path.name} line {number}", "incomplete last line (the file was being written)")
            else:
                bad += 1
            continue
        if not isinstance(record, dict):
            bad += 1
            continue
        # A lone surrogate can only come from a \ud800-\udfff escape (a tool that cut a UTF-16 pair in two): not
        # Unicode, SQLite cannot store it, and in an id or a folder it stopped the whole import. Kept as its escape.
        if surrogates and _ESCAPE.search(raw if isinstance(raw, str) else raw.decode("utf-8", "replace")):
            try:
                fixed = _unicode_safe_record(record)
            except RecursionError:  # parsed, but too deep to walk here (it ended the whole import)
                deep += 1
                continue
            if fixed is not record:
                escaped += 1
                record = fixed
        yield number, record
    if bad:
        report.skip(f"{source} {path.name}", f"{bad} line(s) that are not JSON objects")
    if deep:
        report.skip(f"{source} {path.name}", f"{deep} line(s) nested too deeply to read (arrays or objects inside one "
                    "another about a thousand levels down); nothing was read from them")
    if escaped:
        report.skip(f"{source} {path.name}", f"{escaped} line(s) held lone surrogates (text that is not valid "
                    "Unicode); they were read with each one written as its \\u escape")


_SCAN: Callable[[str, int], tuple[Any, int]] = json.JSONDecoder().scan_once  # type: ignore[attr-defined]  # (json.loads's C scanner)
_JSON_SPACE = " \t\n\r"


def _line_value(line: str) -> Any:
    """`json.loads(line)`: the same value, the same lines refused (ValueError, RecursionError), without the checks
    around the scanner that a call makes (a tenth of an agent import's reading, a line at a time). The scanner is
    called three Python frames down, as json.loads calls it (loads, decode, raw_decode): on Python 3.11 the
    parser's nesting and the frames share one recursion limit, so a line is refused as too deep exactly where
    json.loads, called from the same place, refuses it."""
    return _value_of(line.strip(_JSON_SPACE))


def _value_of(text: str) -> Any:
    value, end = _scanned(text)
    if end != len(text):
        raise ValueError(f"extra data at {end}")
    return value


def _scanned(text: str) -> tuple[Any, int]:
    try:
        return _SCAN(text, 0)
    except StopIteration as exc:  # (no JSON value starts there)
        raise ValueError(f"not JSON at {exc.value}") from None


_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_ESCAPE_BYTES = re.compile(rb"\\u[dD][89a-fA-F]")


def _unicode_safe_record(value: Any) -> Any:
    """`value` with every string (keys too) made storable by `unicode_safe`; the same object when none changed."""
    if isinstance(value, str):
        return unicode_safe(value)
    if isinstance(value, list):
        items = [_unicode_safe_record(v) for v in value]
        return items if any(a is not b for a, b in zip(items, value, strict=True)) else value
    if isinstance(value, dict):
        pairs = [(_unicode_safe_record(k), _unicode_safe_record(v)) for k, v in value.items()]
        if any(k2 is not k or v2 is not v for (k2, v2), (k, v) in zip(pairs, value.items(), strict=True)):
            return dict(pairs)
        return value
    return value


def text_of(value: Any) -> str:
    """Readable text of a content value: a string, or a list of text parts/blocks."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        parts = []
        for item in value:
            if isinstance(item, str):
                parts.append(item)
            elif isinstance(item, dict):
                if isinstance(item.get("text"), str):
                    parts.append(item["text"])
                elif item.get("type") == "image":
                    parts.append("[image]")
        return "\n\n".join(p for p in parts if p)
    if isinstance(value, dict) and isinstance(value.get("text"), str):
        return str(value["text"])
    return ""


def tool_input_text(value: Any) -> str:
    """A tool call's input as a person reads it: strings as they are (real line breaks and quotes),
    other values as indented JSON. Never one JSON string with `\\n` escapes."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        pieces = []
        for key, item in value.items():
            if isinstance(item, str) and ("\n" in item or len(item) > 80):
                pieces.append(f"{key}:\n```\n{item}\n```")
            elif isinstance(item, str):
                pieces.append(f"{key}: {item}")
            else:
                pieces.append(f"{key}: {json.dumps(item, ensure_ascii=False)}")
        return "\n".join(pieces)
    if value is None:
        return ""
    return json.dumps(value, ensure_ascii=False, indent=1)


def first_meaningful_line(text: str) -> str:
    """The first line that says something: not a fence, a rule (`---`), a bare heading mark or a label ending in ':'."""
    for line in text.splitlines():
        line = line.strip().lstrip("#").strip()
        if not line or line.startswith("```") or line.endswith(":") and len(line) < 40:
            continue
        if not any(c.isalnum() for c in line):
            continue
        return line
    return ""


# --- names ---

_PLAIN = re.compile(r"[A-Za-z0-9._/-]+")  # what a slug shows as it is: such a cwd is its own slug (less its "/")
_PLAIN_ID = re.compile(r"[A-Za-z0-9._-]+")
_NOT_SHOWN = re.compile(r"[^\w./-]+")  # \w: letters and digits of any script, and "_"
SESSION_ID_CHARS = 64


def _rendered(text: str, limit: int, kind: str) -> str:
    """`text` as a namespace part that is not a lossless rendering of it: its letters, digits and . _ - /
    (case kept, NFC, the rest as "-"), its tail when long, then "~" and a digest of the exact text, so two
    different texts never share it ("~" is never in a lossless part)."""
    shown = _NOT_SHOWN.sub("-", unicodedata.normalize("NFC", text)).strip("-/") or "unknown"
    tail = shown[-(limit - 11):].lstrip("-/") or "unknown"
    return f"{tail}~{digest(kind + chr(0) + text)}"


def project_slug(cwd: str | None, fallback: str) -> str:
    """The project part of an agent-session namespace (pcp-core.md section 2). An absolute cwd whose
    characters are all ASCII letters, digits, `.`, `_`, `-` or `/` is its own slug less the leading `/`
    (`/srv/App` -> `srv/App`), case kept; any other cwd (a space, another script, a colon, too long) is
    rendered with a digest of the exact cwd (`/srv/my app` -> `srv/my-app~3f0c...`). Without a cwd the
    folder the sessions were found in names it, always with a digest (it is not a cwd)."""
    if cwd:
        if cwd.startswith("/") and _PLAIN.fullmatch(cwd[1:]) and len(cwd) <= SLUG_CHARS:
            return cwd[1:]
        return _rendered(cwd, SLUG_CHARS, "cwd")
    return _rendered(fallback or "unknown", SLUG_CHARS, "folder")


def session_namespace(source: str, slug: str, session_id: str) -> str:
    """`agent:<tool>:<slug>:<session id>`; a session id that is not plain ASCII is rendered with a digest too."""
    if _PLAIN_ID.fullmatch(session_id) and len(session_id) <= SESSION_ID_CHARS:
        return f"agent:{source}:{slug}:{session_id}"
    return f"agent:{source}:{slug}:{_rendered(session_id, SESSION_ID_CHARS, 'session')}"


def legacy_project_slug(cwd: str | None, fallback: str) -> str:
    """The slug before issue 30 (lower case, every other character "-"): it collided (`/srv/App`, `/srv/app`).
    Kept only where it seeds stored identities (Codex message keys), never for a namespace."""
    basis = cwd or fallback or "unknown"
    slug = _NOT_SLUG.sub("-", basis).strip("-").lower() or "unknown"
    if len(slug) > SLUG_CHARS:
        slug = slug[-(SLUG_CHARS - 9):].lstrip("-") + "-" + hashlib.sha256(basis.encode()).hexdigest()[:8]
    return slug


# --- writing ---

def write_sessions(store: Any, source: str, display: str, actor: str,
                   sessions: Iterable[AgentSession | Callable[[], AgentSession | None]], total: int,
                   report: ImportReport, with_tools: bool, progress: Progress | None,
                   ready: Callable[[int], Any] | None = None) -> ImportReport:
    """Write every session in its own transaction. A session may come as a function that makes it (None: nothing
    to import): it is called unless `ready` has that session's plan (a helper's, store/import_helper.py)."""
    with store.bulk_loading():
        return _write_sessions(store, source, display, actor, sessions, total, report, with_tools, progress, ready)


def _write_sessions(store: Any, source: str, display: str, actor: str,
                    sessions: Iterable[AgentSession | Callable[[], AgentSession | None]], total: int,
                    report: ImportReport, with_tools: bool, progress: Progress | None,
                    ready: Callable[[int], Any] | None) -> ImportReport:
    root = f"agent:{source}"
    with store.import_unit(actor, rules=AGENT_RULES) as unit:
        unit.ensure_scope(root, display_name=f"{display} sessions")
    written: dict[str, PageRef] = {}  # message key -> page, across sessions (a resumed session links back)
    projects: dict[str, str] = {}  # project namespace asked for -> the one written to
    done = 0
    for index, item in enumerate(sessions):
        answer = ready(index) if ready is not None and callable(item) else None
        plan: SessionPlan | None
        if answer is not None:
            plan = SessionPlan.from_wire(answer[1]) if answer[0] == "plan" else None
        else:
            session = item() if callable(item) else item
            plan = None if session is None else plan_session(source, session, with_tools, written=written)
        if plan is None:
            continue
        again = functools.partial(_plan_again, source, item, with_tools, written) if callable(item) else None
        done += 1
        names = _session_names(store, source, plan, report)
        if names is not None:
            project_ns, ns, fallback = names
            if project_ns not in projects:
                with store.import_unit(actor, rules=AGENT_RULES) as unit:
                    label = f"{display}: {plan.cwd or plan.project}"
                    try:
                        projects[project_ns] = unit.ensure_scope(project_ns, display_name=label, parent=root)
                    except LookAlike:  # a plain slug that reads like another scope's (`app1`, `appl`): add the digest
                        projects[project_ns] = unit.ensure_scope(
                            f"{root}:{_rendered(plan.cwd or plan.project, SLUG_CHARS, 'cwd')}",
                            display_name=label, parent=root)
            project_ns = projects[project_ns]
            if fallback:
                ns = f"{project_ns}:{ns.rsplit(':', 1)[1]}"
            try:
                _write_session(store, source, actor, plan, ns, project_ns, report, written, again)
            except (Invalid, LimitExceeded) as exc:
                report.skip(f"{source} session {plan.session_id}", exc.message)
        for kind, count in sorted(plan.skipped.items()):
            report.skip(f"{source} session {plan.session_id}: {count} {kind} record(s)", _SKIP_REASONS.get(
                kind, _SKIP_REASONS.get(kind.split(" ")[0], "no conversation content")))
        if progress:
            progress(done, total, "sessions")
    return report.keep(store)


def _plan_again(source: str, item: Callable[[], AgentSession | None], with_tools: bool,
                written: dict[str, PageRef]) -> SessionPlan:
    session = item()
    if session is None:  # (its files read the same length here and in the helper, yet hold no session here)
        raise Invalid("its files changed while they were read; import again to take it in.")
    return plan_session(source, session, with_tools, written=written)


CLAIMED = "its id belongs to a session of another project folder; a session id claimed from another project is never merged"


def _session_names(store: Any, source: str, session: SessionPlan, report: ImportReport
                   ) -> tuple[str, str, bool] | None:
    """(project namespace, session namespace, whether the session namespace follows the project's) for a
    session; None when its id is already the id of another project's session in the store (reported).

    A session already in the store keeps its namespace (found by its conversation page's source key,
    which is the source and the session id), whatever rule named it."""
    root = f"agent:{source}"
    known = store.source_scope(session.first_key) if session.first_key is not None else None
    if known is not None:
        if known["cwd"] and session.cwd and known["cwd"] != session.cwd:
            report.skip(f"{source} session {session.session_id} ({session.project})", CLAIMED)
            return None
        parent = known["parent"] if isinstance(known["parent"], str) and known["parent"].startswith(root + ":") else None
        return parent or f"{root}:{project_slug(session.cwd, session.project)}", known["namespace"], False
    slug = project_slug(session.cwd, session.project)
    return f"{root}:{slug}", session_namespace(source, slug, session.session_id), True


def one_folder_per_session(groups: dict[tuple[str, str], Any], rank: Callable[[tuple[str, str]], Any],
                           source: str, report: ImportReport) -> None:
    """Files are grouped by (project folder, session id). Of the groups that carry one session id, the one
    `rank` puts first is the session; each other is reported and dropped, never merged into it (a file in
    one project's folder can then never pull another project's session into its namespace)."""
    owners: dict[str, tuple[str, str]] = {}
    for key in sorted(groups, key=rank):
        owner = owners.setdefault(key[1], key)
        if owner != key:
            report.skip(f"{source} session {key[1]} in {key[0] or 'an unknown folder'}",
                        f"{CLAIMED} (the session is the one in {owner[0] or 'an unknown folder'})")
            del groups[key]


_SKIP_REASONS = {
    "scaffolding": "injected context the user did not write (instructions, environment, permissions)",
    "tool": "tool traffic, not stored without --with-tools (the next message names each call and its size)",
    "duplicate": "already imported from the session it was copied from (a resumed session)",
    "reasoning": "encrypted reasoning, nothing readable",
    "rewind": "a rewind: the turns it dropped are kept as a branch, marked rewound",
    "scaffolding (slash command)": "a command to the CLI (/...), not a prompt to the model",
    "scaffolding (compression summary)": "the summary a compression wrote in place of earlier turns, which are kept",
    "event_msg": "progress events: they repeat the conversation's messages or count tokens",
    "scaffolding (interrupt marker)": "the marker Claude Code writes when you interrupt a request, not a prompt",
    "scaffolding (local command output)": "the output of a local command (/exit, /cost...) Claude Code wrote, not a prompt",
    "scaffolding (continuation nudge)": "\"System: Please continue.\", sent by Gemini CLI itself, not a prompt",
    "tool (function responses)": "tool output Gemini CLI sent back as a turn; stored only with --with-tools",
    "duplicate (the same record written twice)": "the same record again in the file: one page",
    "session_meta (a later one: copied history or a resume)":
        "the header of the session a fork copied (or a resume wrote again); the file's first header names it",
}


Refused = tuple[str, str]  # (the error's class name, its message): a page prepare() refused
# What a session's landing does, in order: land the page at this place (an int), or relate (from place,
# `contains` or `responds_to`, to): a place, the key of a message another session wrote (`written`), or None
# (a reply to nothing: noted for the upgrade pass only).
Op = int | tuple[int, str, int | str | None]


@dataclass
class SessionPlan:
    """A session made ready for writing without the store (`plan_session`): every page checked and encoded in the
    order it is written, and the relations between them. Made here, or in a helper process with the pages' index
    text and their statistics (`df`, `docs`, `terms`: of every page with `ready` index text)."""

    session_id: str
    cwd: str | None
    project: str
    first_key: str | None  # the key of the session's first thread, kept or not (an imported session is found by it)
    skipped: dict[str, int]
    injected: dict[str, str]
    created_at: str | None  # of the first thread written
    label: str  # the file of the first thread written
    pages: list[tuple[str, Prepared | Refused]]  # (source key, page): the threads' pages and the messages' kept
    convs: list[int]  # the places of the threads' conversation pages
    ops: list[Op]
    pending: dict[str, int | str]  # message key -> the place of its page (written for later sessions to link to)
    message_keys: list[str]  # every message's key (a plan made without `written` is made again if one is there)
    refused: list[tuple[str, str]]  # (source key, why) of messages the store would not take
    counts: dict[str, int]
    df: Counter[str] | None = None
    docs: int = 0
    terms: int = 0

    def wire(self) -> tuple[Any, ...]:
        """The plan as plain values (a helper's answer), its pages as `Prepared.wire` (for new pages only)."""
        return (self.session_id, self.cwd, self.project, self.first_key, self.skipped, self.injected, self.created_at,
                self.label, [(key, page.wire() if isinstance(page, Prepared) else page) for key, page in self.pages],
                self.convs, self.ops, self.pending, self.message_keys, self.refused, self.counts, self.df,
                self.docs, self.terms)

    @classmethod
    def from_wire(cls, wire: tuple[Any, ...]) -> SessionPlan:
        (session_id, cwd, project, first_key, skipped, injected, created_at, label, pages, convs, ops, pending,
         message_keys, refused, counts, df, docs, terms) = wire
        from_wire = Prepared.from_wire
        return cls(session_id, cwd, project, first_key, skipped, injected, created_at, label,
                   [(key, from_wire(page) if len(page) > 2 else page) for key, page in pages], convs, ops, pending,
                   message_keys, refused, counts, df, docs, terms)


def helper_answer(source: str, session: AgentSession | None, with_tools: bool, salt: bytes) -> tuple[str, Any]:
    """A helper's answer for one session group: its plan (with index text, for new pages), or none."""
    if session is None:
        return ("none", None)
    return ("plan", plan_session(source, session, with_tools, salt).wire())


def agent_helper(store: Any, module: str, paths: list[Path], request: Any) -> import_helper.ImportHelper | None:
    """A helper process that reads the session files as the importer does and plans every session (`module`'s
    `helper_items` and `helper_plan`), started when there is enough to read and a core free; None: plan here."""
    try:
        size = sum(p.stat().st_size for p in paths)
    except OSError:
        return None  # (the import says what it cannot read)
    start = getattr(store, "import_helper", None)
    if start is None or not import_helper.HELPER_FROM_CHARS <= size <= import_helper.HELPER_UP_TO_CHARS:
        return None
    helper: import_helper.ImportHelper | None = start(module, size)
    if helper is not None:
        helper.request("agent sessions", request)
    return helper


def helper_collections() -> None:
    """In a helper process, once the files are read: the records are kept to the end, so the collector stops
    scanning them (`gc.freeze`), and runs as seldom as in a bulk load (the process lives for one import)."""
    gc.freeze()
    first, second, third = gc.get_threshold()
    gc.set_threshold(max(first, IMPORT_GC_THRESHOLD), second, third)


def plan_session(source: str, session: AgentSession, with_tools: bool, salt: bytes | None = None,
                 written: Container[str] = frozenset()) -> SessionPlan:
    """Every page of a session checked and encoded, in the order it is written, and the relations between them;
    with `salt` (a helper) also their index text, counted. `written`: the message keys earlier sessions wrote
    (a message among them is theirs: only linked to)."""
    threads = [t for t in session.threads if any(not m.hidden for m in t.messages) or with_tools and
               any(m.calls for m in t.messages)]
    df: Counter[str] | None = Counter() if salt is not None else None
    first = threads[0] if threads else None
    plan = SessionPlan(session.session_id, session.cwd, session.project,
                       session.threads[0].key if session.threads else None, session.skipped, session.injected,
                       first.created_at if first else None, first.label if first else "", [], [], [], {},
                       [m.key for t in threads for m in t.messages], [], {"messages": 0, "hidden": 0, "tools": 0}, df)
    main: int | None = None
    for thread in threads:
        try:
            conv: Prepared | Refused = prepare(
                payload={"media_type": "text/markdown", "content": _thread_text(source, session, thread)},
                facets={"title": thread.title or f"Untitled {source} session", "source": source,
                        "session_id": session.session_id, "created": thread.created_at,
                        **({"subagent": True} if thread.subagent else {}), **session.facets, **thread.facets},
                source_refs=[{"uri": f"{source}-session:{thread.label}", "media_type": "application/jsonl",
                              "locator": {"file": thread.label, "session_id": session.session_id}}],
                observed_at=thread.created_at, change_key=[], salt=salt, df=df)
        except (Invalid, LimitExceeded) as exc:  # the session is refused when it comes to it
            conv = (type(exc).__name__, exc.message)
        place = len(plan.pages)
        plan.pages.append((thread.key, conv))
        plan.ops.append(place)
        plan.convs.append(place)
        if main is None:
            main = place
        else:
            plan.ops.append((main, "contains", place))
        _plan_thread(plan, source, thread, place, with_tools, written, salt)
    ready = [p for _, p in plan.pages if isinstance(p, Prepared) and p.ready is not None]
    plan.docs, plan.terms = len(ready), sum(p.ready[4] for p in ready if p.ready is not None)
    return plan


def _plan_thread(plan: SessionPlan, source: str, thread: AgentThread, conv: int, with_tools: bool,
                 written: Container[str], salt: bytes | None) -> None:
    """The thread's message pages (and with_tools its tool pages). A message the store refuses (one over the
    payload limit) is left out and named in `refused`; the others of the session still land, and its replies link
    to the message before it."""
    pages, ops, pending, counts, df = plan.pages, plan.ops, plan.pending, plan.counts, plan.df

    def page(key: str, **fields: Any) -> int | None:
        try:
            prepared = prepare(**fields, salt=salt, df=df)
        except (Invalid, LimitExceeded) as exc:  # refused before anything of it was gathered
            plan.refused.append((key, exc.message))
            return None
        pages.append((key, prepared))
        ops.append(len(pages) - 1)
        return len(pages) - 1

    by_key = {m.key: m for m in thread.messages}
    calls_by_id = {c.call_id: c for m in thread.messages for c in m.calls}
    call_refs: dict[str, int] = {}
    refs: dict[str, int | str] = {}  # message key -> its place, or its key when another session wrote it

    def parent_ref(key: str | None) -> int | str | None:
        seen: set[str] = set()
        while key is not None and key not in seen:
            seen.add(key)
            if key in refs:
                return refs[key]
            if key in pending:
                return pending[key]
            if key not in by_key:
                return key  # another session's message, if one wrote it (looked up as the session lands)
            key = by_key[key].parent
        return None

    for msg in tree_order(thread.messages):
        if msg.key in written:  # owned by the session it was copied from
            refs[msg.key] = msg.key
            continue
        parent = parent_ref(msg.parent)
        if with_tools:
            for result in msg.results:
                call = calls_by_id.get(result.call_id)
                target = call_refs[result.call_id] if result.call_id in call_refs else parent
                result_ref = page(
                    f"{source}:{msg.key}:result:{result.call_id}",
                    payload={"media_type": "text/markdown", "content": result.result or "(no output)"},
                    facets={"title": f"tool: {(call.name if call else result.name or 'tool')} result: "
                                     f"{first_meaningful_line(result.result or '')[:80]}",
                            "role": "tool", "tool": call.name if call else result.name or None,
                            "tool_call_id": result.call_id,
                            **({"is_error": True} if result.is_error else {})},
                    observed_at=result.result_at or msg.observed_at, change_key=[])
                if result_ref is None:
                    continue
                ops.append((conv, "contains", result_ref))
                ops.append((result_ref, "responds_to", target))
                refs[msg.key] = parent = result_ref
        if msg.hidden:
            counts["hidden"] += 0 if (msg.results or msg.calls) else 1
        else:
            facets = {"title": _title(msg), "role": msg.role, "message_key": msg.key,
                      **({"model": msg.model} if msg.model else {}), **msg.facets}
            tools = _tools_before(msg, by_key)
            if tools:
                facets["tool_calls"] = tools
            message_ref = page(f"{source}:{msg.key}", payload={"media_type": "text/markdown", "content": msg.text},
                               facets=facets, observed_at=msg.observed_at, change_key=[])
            if message_ref is not None:
                ops.append((conv, "contains", message_ref))
                ops.append((message_ref, "responds_to", parent))
                refs[msg.key] = parent = message_ref
                pending[msg.key] = message_ref
                counts["messages"] += 1
        if msg.calls and not with_tools:
            counts["tools"] += len(msg.calls)
        if with_tools:
            for call in msg.calls:
                call_ref = page(
                    f"{source}:{msg.key}:call:{call.call_id}",
                    payload={"media_type": "text/markdown",
                             "content": f"Tool call `{call.name}`\n\n{tool_input_text(call.input)}".strip()},
                    facets={"title": f"tool: {call.name}: {first_meaningful_line(tool_input_text(call.input))[:80]}",
                            "role": "tool", "tool": call.name, "tool_call_id": call.call_id},
                    observed_at=call.observed_at or msg.observed_at, change_key=[])
                if call_ref is None:
                    continue
                ops.append((conv, "contains", call_ref))
                ops.append((call_ref, "responds_to", parent))
                call_refs[call.call_id] = call_ref
                refs[msg.key] = call_ref
            if msg.key in refs and msg.hidden:
                pending[msg.key] = refs[msg.key]


def _write_session(store: Any, source: str, actor: str, plan: SessionPlan, ns: str, project_ns: str,
                   report: ImportReport, written: dict[str, PageRef],
                   again: Callable[[], SessionPlan] | None) -> None:
    """One session as one unit. A plan made for new pages only (a helper's) that meets pages already in the store,
    or messages an earlier session wrote, is made `again` here, whole."""
    if not plan.convs:
        report.skip(f"{source} session {plan.session_id}", "no messages")
        return
    # Never the session's title (message text): the scope outlives its pages (store/scope_titles.py).
    label = neutral_name(source, "session", plan.created_at)
    links: dict[int, set[int]] = {}  # page key -> the pages it responds_to under these rules
    with store.import_unit(actor, rules=AGENT_RULES) as unit:
        try:
            ns = unit.ensure_scope(ns, display_name=label, parent=project_ns)
        except LookAlike:  # a plain id that reads like another scope's: the id with its digest
            ns = unit.ensure_scope(f"{project_ns}:{_rendered(plan.session_id, SESSION_ID_CHARS, 'session')}",
                                   display_name=label, parent=project_ns)
        keys = [key for key, _ in plan.pages]  # (looked up together: every page the session may write)
        unit.prefetch(keys)
        new = unit.all_new(keys) and not any(k in written for k in plan.message_keys)
        if plan.df is not None and not new:
            if again is None:
                raise ValueError("a plan for new pages met pages in the store, and cannot be made again")
            plan = again()
        if new and all(isinstance(op, int) or op[2] is None or isinstance(op[2], int) for op in plan.ops) \
                and all(isinstance(page, Prepared) for _, page in plan.pages):
            refs = unit.land_new(ns, cast("list[tuple[str, Prepared]]", plan.pages),
                                 [op for op in plan.ops if not isinstance(op, int) and isinstance(op[2], int)],
                                 plan.df if plan.df is not None else Counter(), plan.docs, plan.terms)
        else:
            refs = _land_each(unit, ns, plan, written, links)
    written.update({key: ref if isinstance(ref, PageRef) else written[ref] for key, ref in (
        (key, refs[place] if isinstance(place, int) else place) for key, place in plan.pending.items())})
    conv_ref = refs[plan.convs[0]]
    assert conv_ref is not None
    if conv_ref.outcome != "created":  # the session was imported before, maybe by older rules
        _upgrade(store, source, actor, plan, ns, links, report)
    report.wrote(plan.label, plan.pages[plan.convs[0]][0], conv_ref, unit.counts)
    report.conversations += len(plan.convs)
    report.messages += plan.counts["messages"]
    report.hidden_skipped += plan.counts["hidden"]
    report.add(unit.counts)
    if plan.counts["tools"]:
        report.skip(f"{source} session {plan.session_id}: {plan.counts['tools']} tool call(s)", _SKIP_REASONS["tool"])
    for key, why in plan.refused:
        report.skip(f"{source} session {plan.session_id}: message {key.removeprefix(source + ':')}", why)


def _land_each(unit: ImportUnit, ns: str, plan: SessionPlan, written: dict[str, PageRef],
               links: dict[int, set[int]]) -> list[PageRef | None]:
    """The session's pages landed one by one and related as they land (pages met in the store, or messages another
    session wrote); `links` gets every page's responds_to targets."""
    elsewhere = plan.df is not None  # (a helper's plan of new pages: its statistics come together)
    refs: list[PageRef | None] = [None] * len(plan.pages)
    for op in plan.ops:
        if isinstance(op, int):
            key, page = plan.pages[op]
            if isinstance(page, tuple):
                raise (LimitExceeded if page[0] == "LimitExceeded" else Invalid)(page[1])
            refs[op] = unit.land(key, ns, page, elsewhere)
            continue
        source, rtype, to = op
        ref = refs[source]
        assert ref is not None
        target = refs[to] if isinstance(to, int) else written.get(to) if to is not None else None
        if rtype == "responds_to":
            links.setdefault(ref.pk, set())
            if target is not None:
                links[ref.pk].add(target.pk)
        if target is not None:
            unit.relate(ref, rtype, target)
    if elsewhere and plan.df is not None:
        unit.index_ready(ns, plan.df, plan.docs, plan.terms)
    return refs


def _upgrade(store: Any, source: str, actor: str, session: SessionPlan, ns: str, links: dict[int, set[int]],
             report: ImportReport) -> None:
    """What older rules wrote that these rules would not, in a session imported before: a page made of
    text the CLI injected is tombstoned (reversible, its history kept), and a `responds_to` this
    importer drew that these rules do not is retracted. Each change is a line of the report."""
    db = store._db
    label = f"{source} session {session.session_id}"
    why = f"importer upgrade to {actor}/{AGENT_RULES}"
    keys = {f"{source}:{k}": kind for k, kind in session.injected.items()}
    stale: list[tuple[str, str]] = []
    for part in _chunks(sorted(keys)):
        stale += db.execute_sql(
            "SELECT sp.source_key, p.page_id FROM source_page sp JOIN page p ON p.id = sp.page_id "
            f"WHERE p.status IN ('active', 'archived') AND sp.source_key IN ({','.join('?' * len(part))})",
            part).fetchall()
    for key, page_id in stale:
        store.tombstone_page(page_id, reason=f"{why}: {keys[key]}, not a message")
        report.skip(f"{label}: message {key.removeprefix(source + ':')}",
                    f"tombstoned ({why}): {keys[key]}, text the CLI wrote, not a message", page_id=page_id)
    retract: list[tuple[str, str, str]] = []
    for part in _chunks(sorted(links)):
        # A link to a tool page stays: a re-import without --with-tools does not unthread what one with it wrote.
        rows = db.execute_sql(
            "SELECT r.relation_id, r.from_page_id, r.to_page_id, f.page_id FROM relation r "
            "JOIN page f ON f.id = r.from_page_id JOIN page t ON t.id = r.to_page_id "
            "JOIN revision h ON h.id = t.head WHERE r.relation_type = 'responds_to' AND r.retracted = 0 "
            "AND r.actor_type = 'tool' AND r.actor_id = ? AND json_extract(h.facets, '$.role') IS NOT 'tool' "
            f"AND r.from_page_id IN ({','.join('?' * len(part))})", [actor, *part]).fetchall()
        retract += [(rel, page_id, why) for rel, frm, to, page_id in rows if to not in links[frm]]
    for rel, _page, _why in retract:
        store.unlink(rel, reason=f"{why}: the message it follows is another")
    if retract:
        report.skip(f"{label}: {len(retract)} responds_to link(s)",
                    f"retracted ({why}): the thread runs through every record now, so these messages "
                    "follow another message than before")


def _chunks(items: list[Any], size: int = 500) -> Iterator[list[Any]]:
    for start in range(0, len(items), size):
        yield items[start:start + size]


def _tools_before(msg: AgentMessage, by_key: dict[str, AgentMessage]) -> list[dict[str, Any]]:
    """The tool calls that led to `msg`: those of the stepped-over records before it and of the
    message it follows (so a message's facets never change when later lines arrive)."""
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    key = msg.parent
    while key is not None and key in by_key and key not in seen:
        seen.add(key)
        node = by_key[key]
        out[:0] = [c.summary() for c in node.calls]
        if not node.hidden:
            break
        key = node.parent
    return out


def tree_order(messages: list[AgentMessage]) -> list[AgentMessage]:
    """Parents before children (siblings by time, then file order)."""
    by_key = {m.key: m for m in messages}
    order = {m.key: i for i, m in enumerate(messages)}
    children: dict[str | None, list[AgentMessage]] = {}
    for m in messages:
        children.setdefault(m.parent if m.parent in by_key else None, []).append(m)
    for kids in children.values():
        kids.sort(key=lambda m: (m.observed_at or "", order[m.key]))
    out: list[AgentMessage] = []
    seen: set[str] = set()
    stack = list(reversed(children.get(None, [])))
    while stack:
        m = stack.pop()
        if m.key in seen:
            continue
        seen.add(m.key)
        out.append(m)
        stack.extend(reversed(children.get(m.key, [])))
    out.extend(m for m in messages if m.key not in seen)  # caught in a parent cycle
    return out


def _title(msg: AgentMessage) -> str:
    line = first_meaningful_line(msg.text)
    return f"{msg.role}: {line[:100]}" if line else msg.role


def _thread_text(source: str, session: AgentSession, thread: AgentThread) -> str:
    # Only what does not change as the session grows, so a re-import adds just the new messages.
    lines = [f"# {thread.title or 'Untitled session'}", ""]
    kind = "subagent log" if thread.subagent else "session"
    lines.append(f"{source} {kind} `{session.session_id}`.")
    if session.cwd:
        lines.append(f"Project: `{session.cwd}`.")
    if thread.created_at:
        lines.append(f"Started {thread.created_at}.")
    return "\n".join(lines) + "\n"


def title_from(messages: list[AgentMessage]) -> str:
    """A session's title when the file names none: its first user prompt's first meaningful line."""
    for m in messages:
        if m.role == "user" and not m.hidden:
            line = first_meaningful_line(m.text)
            if line:
                return line[:120]
    return ""
