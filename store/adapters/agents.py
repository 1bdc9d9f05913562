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
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator

from ..constants import LIMITS
from ..errors import Invalid, LimitExceeded
from ..importing import ImportUnit, PageRef
from ..jsonsafe import loads
from ..scope_titles import neutral_name
from .base import IMPORT_RULES, ImportReport, Progress

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


# --- reading ---

NOT_REGULAR = "not a regular file (a pipe, socket or device); not read"


def regular_files(found: Iterable[Path], root: Path, source: str, report: ImportReport) -> list[Path]:
    """The regular files among the paths a walk found (folders left out); a pipe, socket, device or broken
    link is never opened (opening a pipe blocks) but skipped in the report with why."""
    base = root if root.is_dir() else root.parent
    out = []
    for p in found:
        try:
            mode = p.stat().st_mode
        except (OSError, RuntimeError):
            why = "a broken link or unreadable entry"
        else:
            if stat.S_ISREG(mode):
                out.append(p)
                continue
            if stat.S_ISDIR(mode):
                continue
            why = NOT_REGULAR
        label = str(p.relative_to(base)) if p.is_relative_to(base) else p.name
        report.skip(f"{source} file {label}", why)
    return out


def read_regular(path: Path) -> bytes:
    """A file's bytes, never blocking on a pipe swapped in since the walk (opened non-blocking, then checked)."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
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


def jsonl_records(path: Path, report: ImportReport, source: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, record) for every JSON object line; bad lines are reported, never fatal."""
    data = read_regular(path)
    lines: list[str | bytes]
    try:  # decoded once (json.loads of each line's bytes would detect and decode its encoding per line)
        lines = list(data.decode("utf-8").split("\n"))
    except UnicodeDecodeError:
        lines = list(data.split(b"\n"))  # a line that is not UTF-8 is then refused alone
    bad = 0
    for number, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        try:
            record = loads(raw, f"{path.name} line {number}")
        except (ValueError, Invalid):
            if number == len(lines):  # the last line, cut off while the tool was writing it
                report.skip(f"{source} {path.name} line {number}", "incomplete last line (the file was being written)")
            else:
                bad += 1
            continue
        if isinstance(record, dict):
            yield number, record
        else:
            bad += 1
    if bad:
        report.skip(f"{source} {path.name}", f"{bad} line(s) that are not JSON objects")


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

def project_slug(cwd: str | None, fallback: str) -> str:
    """A namespace-safe name for a project: the cwd's characters, bounded, unique by a digest when cut."""
    basis = cwd or fallback or "unknown"
    slug = _NOT_SLUG.sub("-", basis).strip("-").lower() or "unknown"
    if len(slug) > SLUG_CHARS:
        digest = hashlib.sha256(basis.encode()).hexdigest()[:8]
        slug = slug[-(SLUG_CHARS - 9):].lstrip("-") + "-" + digest
    return slug


def session_namespace(source: str, slug: str, session_id: str) -> str:
    sid = _NOT_SLUG.sub("-", session_id)[:64]
    return f"agent:{source}:{slug}:{sid}"


# --- writing ---

def write_sessions(store: Any, source: str, display: str, actor: str, sessions: Iterable[AgentSession], total: int,
                   report: ImportReport, with_tools: bool, progress: Progress | None) -> ImportReport:
    """Write every session in its own transaction."""
    with store.bulk_loading():
        return _write_sessions(store, source, display, actor, sessions, total, report, with_tools, progress)


def _write_sessions(store: Any, source: str, display: str, actor: str, sessions: Iterable[AgentSession], total: int,
                    report: ImportReport, with_tools: bool, progress: Progress | None) -> ImportReport:
    root = f"agent:{source}"
    with store.import_unit(actor, rules=IMPORT_RULES) as unit:
        unit.ensure_scope(root, display_name=f"{display} sessions")
    written: dict[str, PageRef] = {}  # message key -> page, across sessions (a resumed session links back)
    projects: set[str] = set()
    done = 0
    for session in sessions:
        done += 1
        slug = project_slug(session.cwd, session.project)
        project_ns = f"{root}:{slug}"
        if project_ns not in projects:
            with store.import_unit(actor, rules=IMPORT_RULES) as unit:
                unit.ensure_scope(project_ns, display_name=f"{display}: {session.cwd or session.project}", parent=root)
            projects.add(project_ns)
        try:
            _write_session(store, source, actor, session, session_namespace(source, slug, session.session_id),
                           project_ns, report, with_tools, written)
        except (Invalid, LimitExceeded) as exc:
            report.skip(f"{source} session {session.session_id}", exc.message)
        for kind, count in sorted(session.skipped.items()):
            report.skip(f"{source} session {session.session_id}: {count} {kind} record(s)", _SKIP_REASONS.get(
                kind, _SKIP_REASONS.get(kind.split(" ")[0], "no conversation content")))
        if progress:
            progress(done, total, "sessions")
    return report.keep(store)


_SKIP_REASONS = {
    "scaffolding": "injected context the user did not write (instructions, environment, permissions)",
    "tool": "tool traffic, not stored without --with-tools (the next message names each call and its size)",
    "duplicate": "already imported from the session it was copied from (a resumed session)",
    "reasoning": "encrypted reasoning, nothing readable",
    "rewind": "a rewind: the turns it dropped are kept as a branch, marked rewound",
    "scaffolding (slash command)": "a command to the CLI (/...), not a prompt to the model",
    "scaffolding (compression summary)": "the summary a compression wrote in place of earlier turns, which are kept",
    "event_msg": "progress events: they repeat the conversation's messages or count tokens",
}


def _write_session(store: Any, source: str, actor: str, session: AgentSession, ns: str, project_ns: str,
                   report: ImportReport, with_tools: bool, written: dict[str, PageRef]) -> None:
    threads = [t for t in session.threads if any(not m.hidden for m in t.messages) or with_tools and
               any(m.calls for m in t.messages)]
    if not threads:
        report.skip(f"{source} session {session.session_id}", "no messages")
        return
    pending: dict[str, PageRef] = {}
    counts = {"messages": 0, "hidden": 0, "tools": 0}
    refused: list[tuple[str, str]] = []  # (source key, why) of messages the store would not take
    conv_refs: list[tuple[AgentThread, PageRef]] = []
    with store.import_unit(actor, rules=IMPORT_RULES) as unit:
        # Never the session's title (message text): the scope outlives its pages (store/scope_titles.py).
        unit.ensure_scope(ns, display_name=neutral_name(source, "session", threads[0].created_at), parent=project_ns)
        keys = [t.key for t in threads]
        for t in threads:
            for m in t.messages:
                keys.append(f"{source}:{m.key}")
                if with_tools:
                    keys.extend(f"{source}:{m.key}:call:{c.call_id}" for c in m.calls)
                    keys.extend(f"{source}:{m.key}:result:{c.call_id}" for c in m.results)
        unit.prefetch(keys)
        main_ref: PageRef | None = None
        for thread in threads:
            conv_ref = unit.upsert(
                thread.key, ns,
                payload={"media_type": "text/markdown", "content": _thread_text(source, session, thread)},
                facets={"title": thread.title or f"Untitled {source} session", "source": source,
                        "session_id": session.session_id, "created": thread.created_at,
                        **({"subagent": True} if thread.subagent else {}), **session.facets, **thread.facets},
                source_refs=[{"uri": f"{source}-session:{thread.label}", "media_type": "application/jsonl",
                              "locator": {"file": thread.label, "session_id": session.session_id}}],
                observed_at=thread.created_at, change_key=[],
            )
            conv_refs.append((thread, conv_ref))
            if main_ref is None:
                main_ref = conv_ref
            else:
                unit.relate(main_ref, "contains", conv_ref)
            _write_thread(unit, source, ns, thread, conv_ref, with_tools, written, pending, counts, refused)
    written.update(pending)
    for thread, ref in conv_refs[:1]:  # the session's line; its subagent logs are inside it
        report.wrote(thread.label, thread.key, ref, unit.counts)
    report.conversations += len(threads)
    report.messages += counts["messages"]
    report.hidden_skipped += counts["hidden"]
    report.add(unit.counts)
    if counts["tools"]:
        report.skip(f"{source} session {session.session_id}: {counts['tools']} tool call(s)", _SKIP_REASONS["tool"])
    for key, why in refused:
        report.skip(f"{source} session {session.session_id}: message {key.removeprefix(source + ':')}", why)


def _write_thread(unit: ImportUnit, source: str, ns: str, thread: AgentThread, conv_ref: PageRef, with_tools: bool,
                  written: dict[str, PageRef], pending: dict[str, PageRef], counts: dict[str, int],
                  refused: list[tuple[str, str]]) -> None:
    """The thread's message pages (and with_tools its tool pages). A message the store refuses (one
    over the payload limit) is left out and named in `refused`; the others of the session still land,
    and its replies link to the message before it."""

    def upsert(key: str, **page: Any) -> PageRef | None:
        try:
            return unit.upsert(key, ns, **page)
        except (Invalid, LimitExceeded) as exc:  # refused before anything of it was gathered
            refused.append((key, exc.message))
            return None

    by_key = {m.key: m for m in thread.messages}
    calls_by_id = {c.call_id: c for m in thread.messages for c in m.calls}
    call_refs: dict[str, PageRef] = {}
    refs: dict[str, PageRef] = {}

    def parent_ref(key: str | None) -> PageRef | None:
        seen: set[str] = set()
        while key is not None and key not in seen:
            seen.add(key)
            if key in refs:
                return refs[key]
            if key in pending:
                return pending[key]
            if key not in by_key:
                return written.get(key)
            key = by_key[key].parent
        return None

    for msg in tree_order(thread.messages):
        if msg.key in written:  # owned by the session it was copied from
            refs[msg.key] = written[msg.key]
            continue
        parent = parent_ref(msg.parent)
        if with_tools:
            for result in msg.results:
                call = calls_by_id.get(result.call_id)
                target = call_refs.get(result.call_id) or parent
                result_ref = upsert(
                    f"{source}:{msg.key}:result:{result.call_id}",
                    payload={"media_type": "text/markdown", "content": result.result or "(no output)"},
                    facets={"title": f"tool: {(call.name if call else 'tool')} result: "
                                     f"{first_meaningful_line(result.result or '')[:80]}",
                            "role": "tool", "tool": call.name if call else None, "tool_call_id": result.call_id,
                            **({"is_error": True} if result.is_error else {})},
                    observed_at=result.result_at or msg.observed_at, change_key=[])
                if result_ref is None:
                    continue
                unit.relate(conv_ref, "contains", result_ref)
                if target is not None:
                    unit.relate(result_ref, "responds_to", target)
                refs[msg.key] = parent = result_ref
        if msg.hidden:
            counts["hidden"] += 0 if (msg.results or msg.calls) else 1
        else:
            facets = {"title": _title(msg), "role": msg.role, "message_key": msg.key,
                      **({"model": msg.model} if msg.model else {}), **msg.facets}
            tools = _tools_before(msg, by_key, refs)
            if tools:
                facets["tool_calls"] = tools
            message_ref = upsert(f"{source}:{msg.key}", payload={"media_type": "text/markdown", "content": msg.text},
                                 facets=facets, observed_at=msg.observed_at, change_key=[])
            if message_ref is not None:
                unit.relate(conv_ref, "contains", message_ref)
                if parent is not None:
                    unit.relate(message_ref, "responds_to", parent)
                refs[msg.key] = parent = message_ref
                pending[msg.key] = message_ref
                counts["messages"] += 1
        if msg.calls and not with_tools:
            counts["tools"] += len(msg.calls)
        if with_tools:
            for call in msg.calls:
                call_ref = upsert(
                    f"{source}:{msg.key}:call:{call.call_id}",
                    payload={"media_type": "text/markdown",
                             "content": f"Tool call `{call.name}`\n\n{tool_input_text(call.input)}".strip()},
                    facets={"title": f"tool: {call.name}: {first_meaningful_line(tool_input_text(call.input))[:80]}",
                            "role": "tool", "tool": call.name, "tool_call_id": call.call_id},
                    observed_at=call.observed_at or msg.observed_at, change_key=[])
                if call_ref is None:
                    continue
                unit.relate(conv_ref, "contains", call_ref)
                if parent is not None:
                    unit.relate(call_ref, "responds_to", parent)
                call_refs[call.call_id] = call_ref
                refs[msg.key] = call_ref
            if msg.key in refs and msg.hidden:
                pending[msg.key] = refs[msg.key]


def _tools_before(msg: AgentMessage, by_key: dict[str, AgentMessage], refs: dict[str, PageRef]) -> list[dict[str, Any]]:
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
