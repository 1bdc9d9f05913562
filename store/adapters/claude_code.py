"""Claude Code sessions (`~/.claude/projects/<project>/<session>.jsonl`, their subagent logs).

What the files hold, and what is done with it:
- `user` and `assistant` records are the turns; `parentUuid` threads them, through the records that are
  no turn (attachment, system, progress, a compaction boundary's `logicalParentUuid`) (a rewind or an
  edited prompt forks the tree; every branch is kept).
- One assistant message is written as several records sharing `message.id`, one per content
  block, each with its own uuid: they are merged into one page (the last record has the
  final usage), and a record that follows any of them follows the merged message.
- A resumed session copies earlier history into a new file with the same uuids: each uuid is
  imported once, by the earliest session that has it; the new session links back to it.
- Subagent logs (`agent-*.jsonl`, `<session>/subagents/`, or `isSidechain` records) get their
  own conversation page inside the session's namespace, linked from the session, never mixed
  into the main thread.
- `summary` records (often in another file, found by `leafUuid`) give the session's summary,
  `custom-title`/`ai-title` its title; `isMeta` records are scaffolding, and so is text Claude Code
  wrote into a user record itself (`<local-command-stdout>`, interrupt markers); tool results are tool
  traffic; `file-history-snapshot`, `queue-operation`, `progress`, `attachment`, `system` and
  unknown record types are counted in the report and skipped.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from ..constants import LIMITS
from ..errors import Invalid
from .agents import (
    AgentMessage, AgentSession, AgentThread, ToolCall, agent_helper, helper_answer, helper_collections, jsonl_records,
    one_folder_per_session, regular_files, text_of, title_from, walk_files, write_sessions,
)
from ..import_groups import IMPORT_GC_THRESHOLD, fewer_collections, read_kept
from .agent_plans import SharedPlans
from .base import ImportReport, Progress, epoch_to_time, json_object, json_text

SOURCE = "claude-code"
TOOL = "pcp-import-claude-code"
TURNS = ("user", "assistant")
TITLE_TYPES = {"custom-title": ("customTitle", "title"), "ai-title": ("aiTitle", "title")}


def default_path() -> Path:
    base = os.environ.get("CLAUDE_CONFIG_DIR")
    return (Path(base) if base else Path.home() / ".claude") / "projects"


@dataclass
class _File:
    path: Path
    label: str
    project: str
    session_id: str
    agent_id: str | None
    turns: list[dict[str, Any]] = field(default_factory=list)
    skipped: Counter[str] = field(default_factory=Counter)
    first_at: str = ""
    read: tuple[int, int, int] = (0, 0, 0)  # the records, bytes and CRC-32 read (what tells two reads apart)


def import_claude_code(store: Any, path: str | Path | None = None, *, with_tools: bool = False,
                       progress: Progress | None = None) -> ImportReport:
    """Import every Claude Code session under `path` (a projects folder, one project, or one .jsonl). With a core
    free and enough to read, a helper process reads the files too and plans the sessions meanwhile (issue 31)."""
    root = Path(path).expanduser() if path else default_path()
    if not root.exists():
        raise Invalid(f"{root}: no such file or folder (Claude Code keeps its sessions in ~/.claude/projects).")
    report = ImportReport(source=SOURCE, path=str(root))
    paths = _session_files(root, report)
    helper = agent_helper(store, __name__, paths, (str(root), [str(p) for p in paths], with_tools))
    try:
        with store.bulk_loading():  # the reading too: it allocates every record (fewer collector runs)
            sessions = _read(root, paths, report)
            ready = SharedPlans(SOURCE, helper, sessions, with_tools) if helper is not None else None
            with read_kept():
                return write_sessions(store, SOURCE, "Claude Code", TOOL, sessions.items(), len(sessions), report,
                                      with_tools, progress, ready)
    finally:
        if helper is not None:
            helper.close()


def helper_items(request: tuple[str, list[str], bool], label: str) -> list[Any]:
    """In the import's helper process: the files read as the import reads them; an item per session group."""
    root, paths, with_tools = request
    with fewer_collections(IMPORT_GC_THRESHOLD):
        sessions = _read(Path(root), [Path(p) for p in paths], ImportReport(source=SOURCE, path=root))
    helper_collections()
    return [(sessions, with_tools)] * len(sessions)


def helper_plan(index: int, item: tuple[_Sessions, bool], label: str, salt: bytes) -> tuple[Any, tuple[str, Any]]:
    """In the import's helper process: the plan of the session at `index` with its index text (or none)."""
    sessions, with_tools = item
    return (sessions.stamp(index), helper_answer(SOURCE, sessions.at(index), with_tools, salt))


def _read(root: Path, paths: list[Path], report: ImportReport) -> _Sessions:
    """Every file read, its turns grouped by session, the sessions in the order they are imported."""
    links: dict[str, str | None] = {}  # uuid of a record that is no turn -> its parent
    files, summaries, titles = _read_all(paths, root, report, links)
    by_session: dict[tuple[str, str], list[_File]] = {}  # (project folder, session id) -> its files
    for f in files:
        by_session.setdefault((f.project, f.session_id), []).append(f)
    one_folder_per_session(by_session, lambda key: (
        not any(f.path.stem == key[1] for f in by_session[key]),  # the folder holding the session's own file
        min((f.first_at for f in by_session[key] if f.first_at), default="~"), key), SOURCE, report)
    # The earliest session owns a uuid; on a tie (a resume copies history with its times) the one with fewer
    # records, the original, comes first.
    order = sorted(by_session, key=lambda key: (min((f.first_at for f in by_session[key] if f.first_at), default="~"),
                                                sum(len(f.turns) for f in by_session[key]), key[1]))
    return _Sessions(files, order, by_session, summaries, titles, links)


def _session_files(root: Path, report: ImportReport) -> list[Path]:
    if not root.is_dir():
        extra = root.with_suffix("") / "subagents"
        found = [root, *sorted(extra.glob("*.jsonl"))] if extra.is_dir() and not extra.is_symlink() else [root]
        return regular_files(found, root, SOURCE, report)
    return walk_files(root, lambda p: p.suffix == ".jsonl", SOURCE, report)


def _read_all(paths: list[Path], root: Path, report: ImportReport, links: dict[str, str | None]
              ) -> tuple[list[_File], dict[str, tuple[str, str]], dict[str, str]]:
    """Every file's turns, the summaries and titles; `links` gets the parent of every other record that
    has a uuid (attachment, system, progress...), so a turn's parent chain can be followed through them."""
    files: list[_File] = []
    summaries: dict[str, tuple[str, str]] = {}  # leafUuid -> (summary, file)
    titles: dict[str, str] = {}  # session id -> title (a custom title wins over an AI one)
    base = root if root.is_dir() else root.parent
    for p in paths:
        label = str(p.relative_to(base)) if p.is_relative_to(base) else p.name
        project = p.parent.parent.parent.name if p.parent.name == "subagents" else p.parent.name
        agent_id = p.stem[len("agent-"):] if p.stem.startswith("agent-") else None
        f = _File(p, label, project, p.stem, agent_id)
        sessions: Counter[str] = Counter()
        try:
            read: list[tuple[int, int]] = []
            records = list(jsonl_records(p, report, SOURCE, read))
        except (OSError, Invalid) as exc:
            report.skip(f"{SOURCE} file {label}", getattr(exc, "message", None) or str(exc))
            continue
        f.read = (len(records), *read[0])
        for _, rec in records:
            kind = json_text(rec.get("type")) or "untyped"
            if kind in TURNS and isinstance(rec.get("message"), dict) and rec.get("uuid"):
                f.turns.append(rec)
                sessions[json_text(rec.get("sessionId"))] += 1
                stamp = json_text(rec.get("timestamp"))
                if stamp and (not f.first_at or stamp < f.first_at):
                    f.first_at = stamp
            elif kind == "summary" and isinstance(rec.get("summary"), str) and rec.get("leafUuid"):
                summaries[str(rec["leafUuid"])] = (rec["summary"], label)
            elif kind in TITLE_TYPES and rec.get("sessionId"):
                value = next((rec[k] for k in TITLE_TYPES[kind] if isinstance(rec.get(k), str) and rec[k].strip()), "")
                sid = str(rec["sessionId"])
                if value and (kind == "custom-title" or sid not in titles):
                    titles[sid] = value.strip()
            else:
                f.skipped[kind] += 1
                if isinstance(rec.get("uuid"), str) and rec["uuid"] not in links:
                    links[rec["uuid"]] = _parent_of(rec)
        named = [s for s, _ in sessions.most_common() if s]
        if named:
            f.session_id = named[0]
        if f.turns or f.skipped:
            files.append(f)
        if not f.turns and f.skipped:
            report.skip(f"{SOURCE} file {label}", "no turns (" + ", ".join(
                f"{n} {k}" for k, n in sorted(f.skipped.items())) + ")")
    return files, summaries, titles


class _Sessions:
    """The sessions, made in import order (each one's messages depend on what the sessions before it own)."""

    def __init__(self, files: list[_File], order: list[tuple[str, str]], by_session: dict[tuple[str, str], list[_File]],
                 summaries: dict[str, tuple[str, str]], titles: dict[str, str], links: dict[str, str | None]) -> None:
        self.files, self.order, self.by_session = files, order, by_session
        self.read: bytes | None = None  # every file as read, digested (`stamp`)
        self.summaries, self.titles, self.links = summaries, titles, links
        self.owned: set[str] = set()  # uuids an earlier session imported
        self.alias: dict[str, str] = {}  # uuid of a later block of a split message -> key of the merged message
        self.made = 0  # the sessions before this index are made (and own their uuids); -1: one failed
        self.behind: _Sessions | None = None  # a copy making sessions again from the start (`at`)

    def __len__(self) -> int:
        return len(self.order)

    def items(self) -> list[Callable[[], AgentSession | None]]:
        """A function per session group that makes its session (None: nothing to import in it)."""
        return [functools.partial(self.at, index) for index in range(len(self.order))]

    def stamp(self, index: int) -> tuple[tuple[str, str], bytes]:
        """What the session at `index` was made of: its group, and every file as read. Not its own files alone: its
        messages are the records no session before it owns, its title or summary may be in any file, its order
        depends on every session's first time (a helper that read an earlier session's file grown lost a message
        that this process read as this session's own)."""
        if self.read is None:
            self.read = hashlib.blake2b(repr([(f.label, f.read) for f in self.files]).encode(), digest_size=16).digest()
        return self.order[index], self.read

    def at(self, index: int) -> AgentSession | None:
        """The session at `index`; the ones before it are made first (once), for the uuids they own. One before
        those made already (a session planned ahead meanwhile), or after one failed, is made from the start again,
        in a copy (`behind`)."""
        if index < self.made or self.made < 0:
            if self.behind is None or index < self.behind.made or self.behind.made < 0:
                self.behind = _Sessions(self.files, self.order, self.by_session, self.summaries, self.titles,
                                        self.links)
            return self.behind.at(index)
        made, self.made = self.made, -1  # (until it is done: a session that fails part way leaves no state to trust)
        while made < index:
            self._skip(self.order[made])
            made += 1
        session = self._make(self.order[index])
        self.made = index + 1
        return session

    def _threads(self, group: tuple[str, str]) -> list[tuple[str, list[dict[str, Any]], str, bool, dict[str, Any]]]:
        """The session's threads as (key, turns, label, subagent, facets): the main thread, its sidechain records,
        one per subagent log (none: no file of the group has a turn)."""
        sid = group[1]
        files = [f for f in self.by_session[group] if f.turns]
        if not files:
            return []
        main = [f for f in files if f.agent_id is None]
        main_turns = [r for f in main for r in f.turns if not r.get("isSidechain")]
        side_turns = [r for f in main for r in f.turns if r.get("isSidechain")]
        label = (main or files)[0].label
        plan: list[tuple[str, list[dict[str, Any]], str, bool, dict[str, Any]]] = [
            (f"{SOURCE}:session:{sid}", main_turns, label, False, {})]
        if side_turns:
            plan.append((f"{SOURCE}:session:{sid}:sidechain", side_turns, label, True, {}))
        for f in files:
            if f.agent_id is not None:
                plan.append((f"{SOURCE}:session:{sid}:agent:{f.agent_id}", f.turns, f.label, True,
                             {"agent_id": f.agent_id}))
        return plan

    def _skip(self, group: tuple[str, str]) -> None:
        """Step past a session made elsewhere (by a helper): only the uuids it owns and the split messages it
        merges are noted, by the same `_claim` that makes them."""
        for _, turns, _, _, _ in self._threads(group):
            _claim(turns, self.owned, self.alias, Counter())

    def _make(self, group: tuple[str, str]) -> AgentSession | None:
        owned, alias, links, summaries = self.owned, self.alias, self.links, self.summaries
        sid = group[1]
        plan = self._threads(group)
        if not plan:
            return None
        files = [f for f in self.by_session[group] if f.turns]
        main = [f for f in files if f.agent_id is None]
        skipped: Counter[str] = Counter()
        for f in files:
            skipped.update(f.skipped)
        threads: list[AgentThread] = []
        all_turns: list[dict[str, Any]] = []
        injected: dict[str, str] = {}  # key -> why, of records whose text the CLI wrote (never a page)
        for key, turns, thread_label, sub, facets in plan:
            messages = _messages(turns, owned, alias, links, skipped, injected)
            all_turns.extend(turns)
            if not messages and not sub:
                if not any(p[1] for p in plan[1:]):
                    continue
            created = min((m.observed_at for m in messages if m.observed_at), default=None)
            threads.append(AgentThread(key=key, title=title_from(messages), created_at=created, messages=messages,
                                       label=thread_label, facets=facets, subagent=sub))
        if not threads:
            return None
        meta = _session_facets(all_turns, sid, summaries)
        main_thread = threads[0]
        named = self.titles.get(sid) or meta.get("summary") or main_thread.title
        main_thread.title = str(named)[:LIMITS["max_title_chars"]] if named else ""
        for t in threads[1:]:
            t.title = f"Subagent: {t.title}" if t.title else f"Subagent of {main_thread.title or sid}"
        cwd = meta.pop("cwd", None)
        return AgentSession(session_id=sid, cwd=cwd, project=(main or files)[0].project, threads=threads,
                            facets={**({"cwd": cwd} if cwd else {}), **meta}, skipped=dict(skipped),
                            injected=injected)


def _session_facets(turns: list[dict[str, Any]], sid: str, summaries: dict[str, tuple[str, str]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    cwd = next((r["cwd"] for r in turns if isinstance(r.get("cwd"), str) and r["cwd"]), None)
    if cwd:
        out["cwd"] = cwd
    branches = list(dict.fromkeys(r["gitBranch"] for r in turns if isinstance(r.get("gitBranch"), str) and r["gitBranch"]))
    if branches:
        out["git_branch"] = branches[0]
        if len(branches) > 1:
            out["git_branches"] = branches
    versions = list(dict.fromkeys(r["version"] for r in turns if isinstance(r.get("version"), str)))
    if versions:
        out["claude_code_version"] = versions[0]
    leaves = [(json_text(r.get("timestamp")), summaries[str(r["uuid"])][0]) for r in turns if str(r["uuid"]) in summaries]
    if leaves:
        out["summary"] = max(leaves)[1][:LIMITS["max_summary_chars"]]
    return out


def _parent_of(rec: dict[str, Any]) -> str | None:
    # After a compaction the boundary record has no parentUuid; logicalParentUuid names the turn before it.
    parent = rec.get("parentUuid") or rec.get("logicalParentUuid")
    return str(parent) if parent else None


# Text Claude Code writes into user records itself: a local command's output and the marker an
# interrupt leaves. Neither was typed by the user nor said by the model.
_LOCAL_OUTPUT = ("<local-command-stdout>", "<local-command-stderr>")
_INTERRUPT = re.compile(r"\[Request interrupted by user[^\]\n]*\]")


def injected_kind(text: str) -> str | None:
    """Why a user record's text is the CLI's own (None: the user wrote it)."""
    bare = text.strip()
    if bare.startswith(_LOCAL_OUTPUT):
        return "scaffolding (local command output)"
    if bare and not _INTERRUPT.sub("", bare).strip():
        return "scaffolding (interrupt marker)"
    return None


def _claim(turns: list[dict[str, Any]], owned: set[str], alias: dict[str, str], skipped: Counter[str]
           ) -> list[tuple[dict[str, Any], str, dict[str, Any], str, str]]:
    """A thread's records that are its own, as (record, uuid, message, role, message id): not one written twice, nor
    one an earlier session owns (counted in `skipped`). `alias` gets the uuid of every later block of a split
    assistant message (-> the uuid of its first), `owned` every uuid claimed. The one place that decides which
    records a session owns: a session made elsewhere (a helper's) is stepped past with this alone."""
    out = []
    first: dict[str, str] = {}  # message id -> uuid of its first record
    mine: set[str] = set()
    for rec in turns:
        uuid = str(rec["uuid"])
        if uuid in mine:  # the same record written again (a retried write, a resumed file)
            skipped["duplicate (the same record written twice)"] += 1
            continue
        if uuid in owned:
            skipped["duplicate (copied by a resume)"] += 1
            continue
        mine.add(uuid)
        msg = json_object(rec.get("message"))
        role = json_text(msg.get("role")) or str(rec["type"])
        mid = json_text(msg.get("id"))
        if role == "assistant" and mid:
            if mid in first:
                alias[uuid] = first[mid]
            else:
                first[mid] = uuid
        out.append((rec, uuid, msg, role, mid))
    owned.update(mine)
    return out


def _messages(turns: list[dict[str, Any]], owned: set[str], alias: dict[str, str], links: dict[str, str | None],
              skipped: Counter[str], injected: dict[str, str]) -> list[AgentMessage]:
    messages: list[AgentMessage] = []
    by_message_id: dict[str, AgentMessage] = {}
    stepped: set[str] = set()  # messages that are never a page whatever their text (scaffolding, injected text)
    for rec, uuid, msg, role, mid in _claim(turns, owned, alias, skipped):
        parent_key = _parent_of(rec)
        stamp = epoch_to_time(rec.get("timestamp"))
        if uuid in alias:  # a later block of a split message
            merged = by_message_id[mid]
            _add_blocks(merged, msg.get("content"), stamp)
            _usage(merged, msg)
            continue
        m = AgentMessage(key=uuid, parent=parent_key, role=role, text="", observed_at=stamp,
                         model=json_text(msg.get("model")) or None)
        if role == "assistant":
            _add_blocks(m, msg.get("content"), stamp)
            _usage(m, msg)
            if mid:
                by_message_id[mid] = m
                m.facets["message_id"] = mid
            if m.model == "<synthetic>":
                m.model = None
                m.facets["synthetic"] = True
        else:
            _user(m, msg.get("content"), stamp, rec)
            kind = injected_kind(m.text)
            if kind and not rec.get("isMeta"):
                stepped.add(uuid)
                injected[uuid] = kind.removeprefix("scaffolding (").removesuffix(")")
                skipped[kind] += 1
        if rec.get("isMeta") or rec.get("isCompactSummary"):
            stepped.add(uuid)
            skipped["scaffolding (isMeta / compaction summary)"] += 1
        if rec.get("isApiErrorMessage"):
            m.facets["api_error"] = True
        messages.append(m)
    for m in messages:  # decided once every block of a split message is in (its first record is often empty)
        m.hidden = m.key in stepped or not m.text.strip()
    calls = {c.call_id: c for m in messages for c in m.calls}
    for m in messages:
        for r in m.results:
            call = calls.get(r.call_id)
            if call is not None:
                call.result, call.result_key, call.result_at, call.is_error = r.result, m.key, r.result_at, r.is_error
                r.name = call.name
    for m in messages:
        m.parent = _turn_parent(m.parent, alias, links)
        if m.parent == m.key:
            m.parent = None
    return messages


def _turn_parent(key: str | None, alias: dict[str, str], links: dict[str, str | None]) -> str | None:
    """The nearest turn up the parent chain: through the later records of a split message (to the
    merged message) and through the records that are no turn (attachment, system, progress...)."""
    seen: set[str] = set()
    while key is not None and key not in seen:
        seen.add(key)
        if key in alias:
            key = alias[key]
        elif key in links:
            key = links[key]
        else:
            return key
    return None


def _add_blocks(m: AgentMessage, content: Any, stamp: str | None) -> None:
    blocks = content if isinstance(content, list) else [{"type": "text", "text": content}] if isinstance(content, str) else []
    texts, thinking = [], []
    for block in blocks:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text" and isinstance(block.get("text"), str):
            texts.append(block["text"])
        elif kind == "thinking" and isinstance(block.get("thinking"), str) and block["thinking"].strip():
            thinking.append(block["thinking"])
        elif kind in ("tool_use", "server_tool_use"):
            m.calls.append(ToolCall(call_id=str(block.get("id") or f"{m.key}-{len(m.calls)}"),
                                    name=str(block.get("name") or "tool"), input=block.get("input"), observed_at=stamp))
    body, _, old_thinking = m.text.partition("\n\n---\nThinking:\n\n")
    body = "\n\n".join(p for p in [body, *texts] if p.strip())
    all_thinking = "\n\n".join(p for p in [old_thinking, *thinking] if p.strip())
    m.text = body + (f"\n\n---\nThinking:\n\n{all_thinking}" if all_thinking else "")


def _usage(m: AgentMessage, msg: dict[str, Any]) -> None:
    usage = msg.get("usage")
    if isinstance(usage, dict):
        m.facets["usage"] = {k: v for k, v in usage.items() if isinstance(v, int) and not isinstance(v, bool)}
    if isinstance(msg.get("stop_reason"), str) and msg["stop_reason"] not in ("end_turn", "tool_use", "stop_sequence"):
        m.facets["stop_reason"] = msg["stop_reason"]


def _user(m: AgentMessage, content: Any, stamp: str | None, rec: dict[str, Any]) -> None:
    if isinstance(content, str):
        m.text = content
        return
    texts = []
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "tool_result":
            m.results.append(ToolCall(call_id=str(block.get("tool_use_id") or ""), name="", input=None,
                                      observed_at=stamp, result=text_of(block.get("content")), result_key=m.key,
                                      result_at=stamp, is_error=bool(block.get("is_error"))))
        elif block.get("type") == "text" and isinstance(block.get("text"), str):
            texts.append(block["text"])
        elif block.get("type") == "image":
            texts.append("[image]")
    m.text = "\n\n".join(texts)
