"""Codex CLI sessions (`$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl`, `archived_sessions/*.jsonl`).

What the files hold, and what is done with it:
- Since about 0.40 every line is `{timestamp, type, payload}`. `session_meta` gives the session id,
  cwd, git branch and CLI version; `turn_context` the model; `response_item` lines are the
  conversation: `message` (user, assistant, developer), `reasoning`, tool calls
  (`function_call`, `custom_tool_call`, `local_shell_call`, `web_search_call`) and their outputs.
  Older files (2025) have no envelope: a first line `{id, timestamp, instructions, git}`, then bare
  response items and `{"record_type": "state"}` markers; both are read.
- Injected context is scaffolding, skipped and counted: developer/system messages and user
  messages that are `<environment_context>`, `<permissions ...>`, `<user_instructions>`,
  `# AGENTS.md instructions`, `<INSTRUCTIONS>`, `<user_shell_command>` or `<turn_aborted>` blocks.
- Reasoning with readable summary text is kept with the assistant message that follows it;
  reasoning with only encrypted content is skipped and counted.
- `event_msg` lines repeat what the response items say (and count tokens); they are skipped,
  except that a file without any user (or assistant) response item takes its turns from
  `event_msg` `user_message` (`agent_message`) lines.
- Codex threads are linear. A message's key is a digest of the project and everything before it,
  so the history a fork copies into a new file (new session id, new times) is imported once,
  by the earliest session, and the fork's first new turn follows it: a branch, nothing twice.
  A fork's (or spawned agent's) file starts with its own `session_meta`, then the source's copied:
  the first one names the session; a later one (copied, or a resume's) is skipped and counted.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from ..constants import LIMITS
from ..errors import Invalid
from ..jsonsafe import loads
from .agents import (
    AgentMessage, AgentSession, AgentThread, ToolCall, jsonl_records, legacy_project_slug, one_folder_per_session,
    regular_files, title_from, walk_files, write_sessions,
)
from .base import ImportReport, Progress, epoch_to_time, json_object, json_text

SOURCE = "codex"
TOOL = "pcp-import-codex"
SCAFFOLD_PREFIXES = ("<environment_context>", "<permissions", "<user_instructions>", "# AGENTS.md instructions",
                     "<INSTRUCTIONS>", "<user_shell_command>", "<turn_aborted>", "<system-reminder>")
CALL_TYPES = ("function_call", "custom_tool_call", "local_shell_call", "web_search_call", "tool_search_call")
OUTPUT_TYPES = ("function_call_output", "custom_tool_call_output", "tool_search_call_output")
_UUID_TAIL = re.compile(r"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$", re.I)
_CWD_TAG = re.compile(r"<cwd>([^<]+)</cwd>")


def default_path() -> Path:
    base = os.environ.get("CODEX_HOME")
    return Path(base) if base else Path.home() / ".codex"


@dataclass
class _Item:
    kind: str  # response item type, or event_msg:<type>
    payload: dict[str, Any]
    stamp: str | None
    model: str | None


@dataclass
class _File:
    path: Path
    label: str
    session_id: str
    meta: dict[str, Any] = field(default_factory=dict)
    items: list[_Item] = field(default_factory=list)
    skipped: Counter[str] = field(default_factory=Counter)
    first_at: str = ""
    first_model: str | None = None


def import_codex(store: Any, path: str | Path | None = None, *, with_tools: bool = False,
                 progress: Progress | None = None) -> ImportReport:
    """Import every Codex CLI session under `path` (CODEX_HOME, its sessions folder, or one rollout file)."""
    root = Path(path).expanduser() if path else default_path()
    if not root.exists():
        raise Invalid(f"{root}: no such file or folder (Codex keeps its sessions in ~/.codex/sessions).")
    report = ImportReport(source=SOURCE, path=str(root))
    with store.bulk_loading():  # the reading too: it allocates every record (fewer collector runs)
        files = [f for f in (_read(p, root, report) for p in _session_files(root, report)) if f is not None]
        by_session: dict[tuple[str, str], list[_File]] = {}  # (project folder: the cwd, session id) -> its files
        for f in files:
            by_session.setdefault((_cwd(f), f.session_id), []).append(f)
        one_folder_per_session(by_session, lambda key: (
            not any(_UUID_TAIL.search(f.path.stem) and f.path.stem.endswith(key[1]) for f in by_session[key]),
            min((f.first_at for f in by_session[key] if f.first_at), default="~"), key), SOURCE, report)
        order = sorted(by_session, key=lambda key: (min((f.first_at for f in by_session[key] if f.first_at), default="~"),
                                                    sum(len(f.items) for f in by_session[key]), key[1]))
        return write_sessions(store, SOURCE, "Codex", TOOL, _sessions(order, by_session), len(order), report,
                              with_tools, progress)


def _session_files(root: Path, report: ImportReport) -> list[Path]:
    if not root.is_dir():
        return regular_files([root], root, SOURCE, report)
    return walk_files(root, lambda p: p.suffix == ".jsonl" and (
        p.name.startswith("rollout-") or p.parent.name == "archived_sessions"), SOURCE, report)


def _cwd(f: _File) -> str:
    return json_text(f.meta.get("cwd")) or _legacy_cwd(f.items)


def _read(p: Path, root: Path, report: ImportReport) -> _File | None:
    base = root if root.is_dir() else root.parent
    label = str(p.relative_to(base)) if p.is_relative_to(base) else p.name
    tail = _UUID_TAIL.search(p.stem)
    f = _File(p, label, tail.group(1) if tail else p.stem)
    try:
        records = list(jsonl_records(p, report, SOURCE))
    except (OSError, Invalid) as exc:
        report.skip(f"{SOURCE} file {label}", getattr(exc, "message", None) or str(exc))
        return None
    model: str | None = None
    for number, rec in records:
        stamp = epoch_to_time(rec.get("timestamp"))
        if stamp and not f.first_at:
            f.first_at = stamp
        payload = rec.get("payload")
        kind = json_text(rec.get("type"))
        if isinstance(payload, dict) and kind:
            if kind == "session_meta" and f.meta:
                # A fork (or spawned agent) file copies its source's session_meta after its own: history.
                f.skipped["session_meta (a later one: copied history or a resume)"] += 1
            elif kind == "session_meta":
                f.meta = json_object(payload.get("meta")) or payload
                f.session_id = json_text(f.meta.get("id")) or f.session_id
                f.first_at = epoch_to_time(f.meta.get("timestamp")) or f.first_at
            elif kind == "turn_context":
                model = json_text(payload.get("model")) or model
                f.first_model = f.first_model or model
            elif kind == "response_item":
                f.items.append(_Item(json_text(payload.get("type")) or "untyped", payload, stamp, model))
            elif kind == "event_msg":
                f.items.append(_Item(f"event_msg:{json_text(payload.get('type')) or 'untyped'}", payload, stamp, model))
            else:
                f.skipped[kind] += 1
        elif number == records[0][0] and "id" in rec and "timestamp" in rec and "type" not in rec:
            f.meta = rec  # a 2025 file's first line
            f.session_id = json_text(rec.get("id")) or f.session_id
            f.first_at = epoch_to_time(rec.get("timestamp")) or f.first_at
        elif "record_type" in rec and "type" not in rec:
            continue  # a 2025 state marker: bookkeeping, no content
        elif kind:
            f.items.append(_Item(kind, rec, stamp or f.first_at or None, model))
        else:
            f.skipped["untyped"] += 1
    if not f.items:
        report.skip(f"{SOURCE} file {label}", "no conversation records")
        return None
    return f


def _sessions(order: list[tuple[str, str]], by_session: dict[tuple[str, str], list[_File]]) -> Iterator[AgentSession]:
    owned: set[str] = set()
    for group in order:
        sid = group[1]
        files = sorted(by_session[group], key=lambda f: len(f.items), reverse=True)
        main = files[0]  # the same session twice (sessions/ and archived_sessions/): the fuller copy
        skipped: Counter[str] = Counter(main.skipped)
        for extra in files[1:]:
            skipped["duplicate (the same session in another file)"] += len(extra.items)
        cwd = json_text(main.meta.get("cwd")) or _legacy_cwd(main.items)
        messages = _messages(main.items, legacy_project_slug(cwd or None, "unknown"), owned, skipped)
        if not messages:
            continue
        title = title_from(messages)
        created = epoch_to_time(main.meta.get("timestamp")) or min(
            (m.observed_at for m in messages if m.observed_at), default=None)
        thread = AgentThread(key=f"{SOURCE}:session:{sid}", title=title[:LIMITS["max_title_chars"]], created_at=created,
                             messages=messages, label=main.label)
        yield AgentSession(session_id=sid, cwd=cwd or None, project="unknown", threads=[thread],
                           facets=_facets(main, cwd), skipped=dict(skipped))


def _facets(f: _File, cwd: str) -> dict[str, Any]:
    meta = f.meta
    out: dict[str, Any] = {}
    if cwd:
        out["cwd"] = cwd
    git = json_object(meta.get("git"))
    if json_text(git.get("branch")):
        out["git_branch"] = git["branch"]
    if json_text(git.get("repository_url")):
        out["git_repository"] = git["repository_url"]
    for key, facet in (("cli_version", "codex_version"), ("originator", "originator"),
                       ("forked_from_id", "forked_from")):
        if json_text(meta.get(key)):
            out[facet] = meta[key]
    if isinstance(meta.get("source"), str):
        out["codex_source"] = meta["source"]
    if f.first_model:
        out["model"] = f.first_model
    return out


def _legacy_cwd(items: list[_Item]) -> str:
    for item in items[:20]:
        if item.kind == "message":
            found = _CWD_TAG.search(_content_text(item.payload.get("content")))
            if found:
                return found.group(1).strip()
    return ""


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts = []
    for block in content if isinstance(content, list) else []:
        if isinstance(block, dict):
            if isinstance(block.get("text"), str):
                parts.append(block["text"])
            elif block.get("type") in ("input_image", "image"):
                parts.append("[image]")
    return "\n\n".join(p for p in parts if p)


def _scaffolding(role: str, text: str) -> bool:
    return role in ("developer", "system") or text.lstrip().startswith(SCAFFOLD_PREFIXES)


def _messages(items: list[_Item], slug: str, owned: set[str], skipped: Counter[str]) -> list[AgentMessage]:
    has = {role: any(i.kind == "message" and json_text(i.payload.get("role")) == role and not _scaffolding(
        role, _content_text(i.payload.get("content"))) for i in items) for role in ("user", "assistant")}
    fallback = {"event_msg:user_message": "user", "event_msg:agent_message": "assistant"}
    chain = hashlib.sha256(f"codex\x00{slug}".encode())
    out: list[AgentMessage] = []
    thinking: list[str] = []
    previous: str | None = None

    def add(m: AgentMessage, identity: str) -> None:
        nonlocal previous
        chain.update(b"\x00" + identity.encode("utf-8", "surrogatepass"))
        m.key = chain.copy().hexdigest()[:40]
        m.parent = parent = previous
        previous = m.key
        if m.key in owned:
            skipped["duplicate (history copied by a fork)"] += 1
            if m.hidden:
                previous = parent  # a new turn after copied tool traffic follows the last copied message
            return
        out.append(m)

    for item in items:
        p, kind = item.payload, item.kind
        if kind == "message" or kind in fallback and not has[fallback[kind]]:
            role = json_text(p.get("role")) or fallback.get(kind, "user")
            text = _content_text(p.get("content")) if kind == "message" else json_text(p.get("message"))
            if _scaffolding(role, text):
                skipped["scaffolding (injected instructions, environment, permissions)"] += 1
                continue
            if not text.strip():
                continue
            m = AgentMessage(key="", parent=None, role=role, text=text, observed_at=item.stamp,
                             model=item.model if role == "assistant" else None)
            if role == "assistant" and thinking:
                m.text += "\n\n---\nThinking:\n\n" + "\n\n".join(thinking)
                thinking = []
            if json_text(p.get("phase")):
                m.facets["phase"] = p["phase"]
            add(m, f"{role}\x00{text}")
        elif kind == "reasoning":
            readable = [json_text(b.get("text")) for key in ("summary", "content")
                        for b in _list(p.get(key)) if isinstance(b, dict)]
            readable = [t for t in readable if t.strip()]
            if readable:
                thinking.extend(readable)
            else:
                skipped["reasoning (encrypted only)"] += 1
        elif kind in CALL_TYPES:
            call = _call(item)
            m = AgentMessage(key="", parent=None, role="assistant", text="", observed_at=item.stamp, hidden=True,
                             calls=[call])
            add(m, f"call\x00{call.call_id}\x00{call.name}")
        elif kind in OUTPUT_TYPES:
            call_id = json_text(p.get("call_id"))
            result = ToolCall(call_id=call_id, name="", input=None, observed_at=item.stamp,
                              result=_output_text(p.get("output")), result_at=item.stamp)
            m = AgentMessage(key="", parent=None, role="tool", text="", observed_at=item.stamp, hidden=True,
                             results=[result])
            add(m, f"result\x00{call_id}")
        elif kind.startswith("event_msg:"):
            skipped["event_msg (progress events)"] += 1
        else:
            skipped[kind] += 1
    owned.update(m.key for m in out)
    calls = {c.call_id: c for m in out for c in m.calls}
    for m in out:
        for r in m.results:
            known = calls.get(r.call_id)
            if known is not None:
                known.result, known.result_key, known.result_at = r.result, m.key, r.result_at
                r.name = known.name
    return out


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _call(item: _Item) -> ToolCall:
    p = item.payload
    kind = item.kind
    call_id = json_text(p.get("call_id")) or json_text(p.get("id")) or f"{kind}-" + hashlib.sha256(
        json.dumps(p.get("action"), sort_keys=True, default=str).encode()).hexdigest()[:16]  # web searches have none
    if kind == "function_call":
        raw = json_text(p.get("arguments"))
        try:
            args: Any = loads(raw, "tool arguments") if raw else {}
        except (ValueError, Invalid):
            args = raw
        return ToolCall(call_id=call_id, name=json_text(p.get("name")) or "function", input=args,
                        observed_at=item.stamp)
    if kind == "custom_tool_call":
        return ToolCall(call_id=call_id, name=json_text(p.get("name")) or "tool", input=p.get("input"),
                        observed_at=item.stamp)
    if kind == "local_shell_call":
        return ToolCall(call_id=call_id, name="shell", input=p.get("action"), observed_at=item.stamp)
    return ToolCall(call_id=call_id, name=kind.removesuffix("_call"), input=p.get("action"), observed_at=item.stamp)


def _output_text(output: Any) -> str:
    """A tool output as text: Codex wraps shell output as JSON `{"output": ..., "metadata": ...}` in a string."""
    if isinstance(output, str):
        if output.startswith("{") and '"output"' in output:
            try:
                decoded = loads(output, "tool output")
            except (ValueError, Invalid):
                return output
            if isinstance(decoded, dict) and isinstance(decoded.get("output"), str):
                return str(decoded["output"])
        return output
    if isinstance(output, dict):
        return json_text(output.get("content")) or json_text(output.get("output")) or ""
    if isinstance(output, list):
        return _content_text(output)
    return ""
