"""Gemini CLI sessions (`~/.gemini/tmp/<project>/chats/session-*.json[l]`, subagents in `chats/<session id>/`).

What the files hold, and what is done with it:
- Older files are one JSON object per session: `{sessionId, projectHash, startTime, lastUpdated,
  summary?, messages: [...]}`. Newer ones are JSON Lines written by Gemini CLI's
  ChatRecordingService: a metadata line, then message records, `{"$set": {...}}` metadata
  updates and `{"$rewindTo": id}` records. A message is written again, in full, whenever its
  tool calls, results or tokens change: the last line of an id is the message.
- `$rewindTo: X` (what `/rewind` writes) removes X and every message after it from the
  conversation Gemini CLI resumes (X not found: all of them). Here nothing is removed: the
  dropped turns stay, marked `rewound`, and the next turn follows the message before X, so
  they are a branch beside the new one.
- `$set` updates the session's metadata (summary, directories). `$set.messages` replaces the
  model's context after a compression or a masking of tool output: turns not seen before are
  added, a turn already seen is never removed and its text is never replaced by the masked one.
- `user` and `gemini` messages are the turns (a user's `displayContent`, what they typed, before
  `content`, what was sent); `info`, `error` and `warning` records (in a `$set` batch too), slash
  commands and "System: Please continue." (sent by Gemini CLI itself) are skipped and counted, and so
  is the `<state_snapshot>` summary a compression adds; a `[Function Response: ...]` user turn is tool
  output (a tool result, stored with --with-tools); thoughts are kept with the message, tool calls
  follow the common rule.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from ..constants import LIMITS
from ..errors import Invalid, LimitExceeded
from .agents import (
    LINK_OUT, AgentMessage, AgentSession, AgentThread, ToolCall, jsonl_records, one_folder_per_session, regular_files,
    title_from, walk_files, within, write_sessions,
)
from .base import ImportReport, Progress, epoch_to_time, json_object, json_text, read_json_export

SOURCE = "gemini"
TOOL = "pcp-import-gemini"
TURNS = ("user", "gemini")
_SLASH = re.compile(r"^/[a-z][\w:-]*(\s[^\n]*)?$")
_FUNCTION_RESPONSE = re.compile(r"\[Function Response: ([^\]\n]{1,100})\]")
_NUDGE = "System: Please continue."  # what Gemini CLI sends by itself when a reply came back empty or broken


def default_path() -> Path:
    return Path.home() / ".gemini" / "tmp"


@dataclass
class _Replay:
    """One session's messages as the file(s) wrote them, nothing removed."""

    session_id: str
    label: str
    project: str
    meta: dict[str, Any] = field(default_factory=dict)
    records: dict[str, dict[str, Any]] = field(default_factory=dict)  # id -> latest version, in first-seen order
    parents: dict[str, str | None] = field(default_factory=dict)
    live: list[str] = field(default_factory=list)  # the conversation Gemini CLI would resume
    rewound: set[str] = field(default_factory=set)
    notices: set[str] = field(default_factory=set)  # ids of info/error/warning records already counted
    skipped: Counter[str] = field(default_factory=Counter)
    parent_session: str | None = None  # a subagent's session
    first_at: str = ""

    def message(self, rec: dict[str, Any], from_set: bool = False) -> None:
        mid = str(rec["id"])
        if mid in self.records:
            if not from_set:
                self.records[mid] = rec  # rewritten with its tool calls, results or tokens
            if mid not in self.live:
                self.live.append(mid)
                self.rewound.discard(mid)
            return
        self.records[mid] = rec
        self.parents[mid] = self.live[-1] if self.live else None
        self.live.append(mid)
        stamp = epoch_to_time(rec.get("timestamp"))
        if stamp and (not self.first_at or stamp < self.first_at):
            self.first_at = stamp

    def rewind(self, target: str) -> None:
        cut = self.live.index(target) if target in self.live else 0
        self.rewound.update(self.live[cut:])
        del self.live[cut:]
        self.skipped["rewind"] += 1

    def set(self, patch: dict[str, Any]) -> None:
        messages = patch.get("messages")
        self.meta.update({k: v for k, v in patch.items() if k != "messages"})
        if isinstance(messages, list):
            self.live = []
            for rec in messages:
                if isinstance(rec, dict) and isinstance(rec.get("id"), str):
                    if json_text(rec.get("type")) in TURNS:
                        self.message(rec, from_set=True)
                    else:  # an info, error or warning notice in the batch: counted once, never a turn
                        self.notice(rec)

    def notice(self, rec: dict[str, Any]) -> None:
        mid = str(rec["id"])
        if mid not in self.notices:
            self.notices.add(mid)
            self.skipped[f"{json_text(rec.get('type')) or 'untyped'} notice"] += 1


def import_gemini(store: Any, path: str | Path | None = None, *, with_tools: bool = False,
                  progress: Progress | None = None) -> ImportReport:
    """Import every Gemini CLI session under `path` (~/.gemini/tmp, one project's folder, or one session file)."""
    root = Path(path).expanduser() if path else default_path()
    if not root.exists():
        raise Invalid(f"{root}: no such file or folder (Gemini CLI keeps its sessions in ~/.gemini/tmp).")
    report = ImportReport(source=SOURCE, path=str(root))
    with store.bulk_loading():  # the reading too: it allocates every record (fewer collector runs)
        replays: dict[tuple[str, str], _Replay] = {}  # (project folder, session id) -> the session
        for p in _session_files(root, report):
            _read(p, root, replays, report)
        one_folder_per_session(replays, lambda key: (
            key[1][:8] not in Path(replays[key].label).name, replays[key].first_at or "~", key), SOURCE, report)
        mains = [r for r in replays.values()
                 if r.parent_session is None or (r.project, r.parent_session) not in replays]
        subs: dict[tuple[str, str], list[_Replay]] = {}
        for r in replays.values():
            if r not in mains and r.parent_session:
                subs.setdefault((r.project, r.parent_session), []).append(r)
        mains.sort(key=lambda r: (r.first_at or "~", len(r.records), r.session_id))
        return write_sessions(store, SOURCE, "Gemini CLI", TOOL, _sessions(mains, subs), len(mains), report,
                              with_tools, progress)


def _session_files(root: Path, report: ImportReport) -> list[Path]:
    if not root.is_dir():
        return regular_files([root], root, SOURCE, report)
    found = walk_files(root, lambda p: p.suffix in (".json", ".jsonl") and (
        p.name.startswith("session-") or p.parent.parent.name == "chats"), SOURCE, report)
    return sorted(found, key=lambda p: (p.suffix == ".jsonl", str(p)))  # a migrated .json before its .jsonl


def _project_of(p: Path) -> tuple[str, str | None]:
    """(the project folder's name under tmp/, the project root Gemini CLI wrote beside it, if any)."""
    chats = next((a for a in p.parents if a.name == "chats"), None)
    folder = chats.parent if chats else p.parent
    marker = folder / ".project_root"
    cwd = None
    try:
        if marker.is_file() and marker.stat().st_size < 4096:
            cwd = marker.read_text(encoding="utf-8").strip() or None
    except (OSError, UnicodeDecodeError):
        cwd = None
    return folder.name, cwd


def _read(p: Path, root: Path, replays: dict[tuple[str, str], _Replay], report: ImportReport) -> None:
    base = root if root.is_dir() else root.parent
    label = str(p.relative_to(base)) if p.is_relative_to(base) else p.name
    project, cwd = _project_of(p)
    parent = p.parent.name if p.parent.name != "chats" and p.parent.parent.name == "chats" else None
    try:
        if p.suffix == ".json":
            if not within(p, root):  # a link swapped in since the walk
                raise Invalid(LINK_OUT)
            data, _ = read_json_export(p)
            records: list[dict[str, Any]] = []
            if isinstance(data, dict):
                records = [{k: v for k, v in data.items() if k != "messages"},
                           *[m for m in data.get("messages") or [] if isinstance(m, dict)]]
        else:
            records = [rec for _, rec in jsonl_records(p, report, SOURCE)]
    except (OSError, Invalid, LimitExceeded) as exc:
        report.skip(f"{SOURCE} file {label}", getattr(exc, "message", None) or str(exc))
        return
    if not records or not isinstance(records[0].get("sessionId"), str):
        report.skip(f"{SOURCE} file {label}", "not a Gemini CLI session (no sessionId)")
        return
    sid = str(records[0]["sessionId"])
    replay = replays.get((project, sid))
    if replay is None:
        replay = replays[(project, sid)] = _Replay(session_id=sid, label=label, project=project, parent_session=parent)
    if cwd and "cwd" not in replay.meta:
        replay.meta["cwd"] = cwd
    for rec in records:
        if isinstance(rec.get("$rewindTo"), str):
            replay.rewind(rec["$rewindTo"])
        elif isinstance(rec.get("id"), str):
            kind = json_text(rec.get("type")) or "untyped"
            if kind in TURNS:
                replay.message(rec)
            else:
                replay.notice(rec)
        elif isinstance(rec.get("$set"), dict):
            replay.set(rec["$set"])
        elif isinstance(rec.get("sessionId"), str):
            replay.meta.update({k: v for k, v in rec.items() if k != "sessionId"})
        else:
            replay.skipped["unknown record"] += 1


def _sessions(mains: list[_Replay], subs: dict[tuple[str, str], list[_Replay]]) -> Iterator[AgentSession]:
    for r in mains:
        threads: list[AgentThread] = []
        skipped: Counter[str] = Counter()
        injected: dict[str, str] = {}  # id -> why, of turns Gemini CLI wrote itself (never a user page)
        for replay, sub in [(r, False), *[(s, True) for s in subs.get((r.project, r.session_id), [])]]:
            skipped.update(replay.skipped)
            injected.update((mid, "a notice Gemini CLI showed") for mid in sorted(replay.notices))
            messages = _messages(replay, skipped, injected)
            key = f"{SOURCE}:session:{r.session_id}" + (f":agent:{replay.session_id}" if sub else "")
            threads.append(AgentThread(key=key, title=title_from(messages), created_at=epoch_to_time(
                replay.meta.get("startTime")) or replay.first_at or None, messages=messages, label=replay.label,
                facets={"agent_id": replay.session_id} if sub else {}, subagent=sub))
        main = threads[0]
        summary = json_text(r.meta.get("summary")).strip()
        main.title = (summary or main.title)[:LIMITS["max_title_chars"]]
        for t in threads[1:]:
            t.title = f"Subagent: {t.title}" if t.title else f"Subagent of {main.title or r.session_id}"
        dirs = [d for d in r.meta.get("directories") or [] if isinstance(d, str)]
        cwd = json_text(r.meta.get("cwd")) or (dirs[0] if dirs else "")
        facets: dict[str, Any] = {"project": r.project}
        if cwd:
            facets["cwd"] = cwd
        if summary:
            facets["summary"] = summary[:LIMITS["max_summary_chars"]]
        if json_text(r.meta.get("projectHash")):
            facets["project_hash"] = r.meta["projectHash"]
        yield AgentSession(session_id=r.session_id, cwd=cwd or None, project=r.project, threads=threads,
                           facets=facets, skipped=dict(skipped), injected=injected)


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, dict):
        content = [content]
    parts = []
    for part in content if isinstance(content, list) else []:
        if isinstance(part, str):
            parts.append(part)
        elif isinstance(part, dict):
            if isinstance(part.get("text"), str) and not part.get("thought"):
                parts.append(part["text"])
            elif isinstance(part.get("inlineData"), dict) or isinstance(part.get("fileData"), dict):
                parts.append("[file]")
    return "".join(parts)


def _messages(r: _Replay, skipped: Counter[str], injected: dict[str, str]) -> list[AgentMessage]:
    out: list[AgentMessage] = []
    pending_results: AgentMessage | None = None
    for mid, rec in r.records.items():
        kind = str(rec.get("type"))
        stamp = epoch_to_time(rec.get("timestamp"))
        if kind == "user":
            shown = _text(rec.get("displayContent")) if rec.get("displayContent") else ""
            text = shown or _text(rec.get("content"))
            m = AgentMessage(key=mid, parent=r.parents.get(mid), role="user", text=text, observed_at=stamp)
            sent = _text(rec.get("content"))
            if _SLASH.match(text.strip()) and len(text) < 200:
                m.hidden = True
                skipped["scaffolding (slash command)"] += 1
            elif text.lstrip().startswith("<state_snapshot>"):
                m.hidden = True
                skipped["scaffolding (compression summary)"] += 1
            elif sent.lstrip().startswith("[Function Response:"):
                # Tool output Gemini CLI sent back as a user turn: tool traffic (a result page with --with-tools).
                m.hidden, m.role = True, "tool"
                name = _FUNCTION_RESPONSE.match(sent.lstrip())
                m.results.append(ToolCall(call_id=f"{mid}:response", name=name.group(1) if name else "tool",
                                          input=None, observed_at=stamp, result=sent, result_key=mid,
                                          result_at=stamp))
                injected[mid] = "function response"
                skipped["tool (function responses)"] += 1
            elif text.strip() == _NUDGE:
                m.hidden = True
                skipped["scaffolding (continuation nudge)"] += 1
                injected[mid] = "continuation nudge"
        else:
            m = AgentMessage(key=mid, parent=r.parents.get(mid), role="assistant", text=_text(rec.get("content")),
                             observed_at=stamp, model=json_text(rec.get("model")) or None)
            thoughts = [f"{json_text(t.get('subject'))}: {json_text(t.get('description'))}".strip(": ")
                        for t in rec.get("thoughts") or [] if isinstance(t, dict)]
            thoughts = [t for t in thoughts if t]
            if thoughts:
                m.text = (m.text + "\n\n---\nThinking:\n\n" + "\n\n".join(thoughts)).lstrip()
            tokens = json_object(rec.get("tokens"))
            usage = {k: v for k, v in tokens.items() if isinstance(v, int) and not isinstance(v, bool)}
            if usage:
                m.facets["usage"] = usage
            for tc in rec.get("toolCalls") or []:
                if isinstance(tc, dict):
                    m.calls.append(_call(tc, mid, len(m.calls), stamp))
            results = [ToolCall(call_id=c.call_id, name=c.name, input=None, observed_at=c.observed_at,
                                result=c.result, result_key=f"{mid}:results", result_at=c.result_at,
                                is_error=c.is_error) for c in m.calls if c.result is not None]
            if results:  # the results come back in the same record: a stepped-over record after the message
                pending_results = AgentMessage(key=f"{mid}:results", parent=mid, role="tool", text="",
                                               observed_at=stamp, hidden=True, results=results)
        if mid in r.rewound:
            m.facets["rewound"] = True
        if not m.text.strip() and not m.hidden:
            m.hidden = True
        out.append(m)
        if pending_results is not None:
            out.append(pending_results)
            pending_results = None
    return out


def _call(tc: dict[str, Any], mid: str, n: int, stamp: str | None) -> ToolCall:
    result = _result_text(tc)
    status = json_text(tc.get("status"))
    return ToolCall(call_id=json_text(tc.get("id")) or f"{mid}-{n}", name=json_text(tc.get("name")) or "tool",
                    input=tc.get("args"), observed_at=epoch_to_time(tc.get("timestamp")) or stamp, result=result,
                    result_at=epoch_to_time(tc.get("timestamp")) or stamp, is_error=status in ("error", "cancelled"))


def _result_text(tc: dict[str, Any]) -> str | None:
    result = tc.get("result")
    texts = []
    for part in result if isinstance(result, list) else [result] if isinstance(result, dict) else []:
        if not isinstance(part, dict):
            continue
        response = json_object(json_object(part.get("functionResponse")).get("response"))
        for key in ("output", "error", "content"):
            if isinstance(response.get(key), str):
                texts.append(response[key])
                break
        else:
            if isinstance(part.get("text"), str):
                texts.append(part["text"])
    if texts:
        return "\n".join(texts)
    display = tc.get("resultDisplay")
    if isinstance(display, str):
        return display
    return None if result is None and display is None else ""
