"""Issue 29: over EVERY vendored coding-agent transcript (tests/data/agents), from the raw records.

The expectations come from a small reader of the files written here, not from the importers' code:
1. every non-empty text or readable thinking block of every user and assistant record (main thread
   and sidechains) is on a page and found by an exact search, except the scaffolding the README
   lists as skipped;
2. a message `responds_to` its nearest kept ancestor, whatever records the chain passes through;
3. a record written more than once (same uuid, or one message.id over several lines) is one page, and
   prompts the user typed are one page each, equal texts included;
4. text the CLI injected (local command output, interrupt markers, function responses, continuation
   nudges, notices) is no user or assistant page and no title.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest

import import_helpers as h
from store.adapters import import_claude_code, import_codex, import_gemini

AGENTS = Path(__file__).resolve().parents[1] / "data" / "agents"
IMPORTERS = {"claude-code": import_claude_code, "codex": import_codex, "gemini": import_gemini}


@dataclass
class Want:
    """A page the files call for."""

    key: str | None  # its source key when the file names one (Claude Code, Gemini), else None
    role: str
    blocks: list[str]  # every non-empty text or readable thinking block
    parent: Want | None = None  # the nearest kept ancestor
    session: str = ""


@dataclass
class Files:
    wants: list[Want] = field(default_factory=list)
    injected: list[str] = field(default_factory=list)  # texts the CLI wrote into user turns
    kinds: set[str] = field(default_factory=set)  # what the vendored set shows (checked below)


def _jsonl(path: Path) -> list[dict]:
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        if isinstance(rec, dict):
            out.append(rec)
    return out


# --- Claude Code ---

INTERRUPT = re.compile(r"\[Request interrupted by user[^\]\n]*\]")


def _claude_code() -> Files:
    got = Files()
    records: list[dict] = []
    for path in sorted((AGENTS / "claude-code").rglob("*.jsonl")):
        for rec in _jsonl(path):
            records.append({**rec, "_file": str(path)})
    parent_of: dict[str, str | None] = {}
    for rec in records:
        if isinstance(rec.get("uuid"), str) and rec["uuid"] not in parent_of:
            parent_of[rec["uuid"]] = rec.get("parentUuid") or rec.get("logicalParentUuid")
            if rec.get("type") in ("attachment", "system", "progress") and rec.get("parentUuid"):
                got.kinds.add(f"{rec['type']} in the chain")
    group: dict[str, str] = {}  # uuid of any record of a message -> uuid of its first record
    first_of: dict[tuple[str, str], str] = {}
    pages: dict[str, Want] = {}
    seen: set[str] = set()
    for rec in records:
        msg = rec.get("message")
        if rec.get("type") not in ("user", "assistant") or not isinstance(msg, dict) or not rec.get("uuid"):
            continue
        uid = rec["uuid"]
        if uid in seen:
            got.kinds.add("a record written twice")
            continue
        seen.add(uid)
        content = msg.get("content")
        blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
        if rec["type"] == "assistant":
            mid = (rec["_file"], str(msg.get("id") or uid))
            first = first_of.setdefault(mid, uid)
            group[uid] = first
            texts = [b.get("text") if b.get("type") == "text" else b.get("thinking") for b in blocks
                     if isinstance(b, dict) and b.get("type") in ("text", "thinking")]
            if any(b.get("type") == "thinking" and not (b.get("thinking") or "").strip() for b in blocks
                   if isinstance(b, dict)):
                got.kinds.add("redacted thinking")
            texts = [t for t in texts if isinstance(t, str) and t.strip()]
            if texts:
                want = pages.setdefault(first, Want(first, "assistant", [], session=rec.get("sessionId", "")))
                want.blocks += texts
            continue
        group[uid] = uid
        texts = [b["text"] for b in blocks if isinstance(b, dict) and b.get("type") == "text"
                 and isinstance(b.get("text"), str) and b["text"].strip()]
        joined = "\n\n".join(texts).strip()
        if rec.get("isMeta") or rec.get("isCompactSummary"):
            got.kinds.add("compaction" if rec.get("isCompactSummary") else "isMeta")
            continue  # scaffolding the README lists as skipped
        if joined.startswith(("<local-command-stdout>", "<local-command-stderr>")):
            got.kinds.add("local command output")
            got.injected.append(joined)
            continue
        if joined and not INTERRUPT.sub("", joined).strip():
            got.kinds.add("interrupt marker")
            got.injected.append(joined)
            continue
        if texts:
            pages[uid] = Want(uid, "user", texts, session=rec.get("sessionId", ""))
    for key, want in pages.items():
        up, hops = parent_of.get(key), 0
        while up is not None and hops < 100_000:
            hops += 1
            kept = pages.get(group.get(up, ""))
            if kept is not None and kept is not want:
                want.parent = kept
                break
            up = parent_of.get(up)
    got.wants = list(pages.values())
    return got


# --- Gemini CLI ---

SLASH = re.compile(r"^/[a-z][\w:-]*(\s[^\n]*)?$")


def _gemini_text(content) -> str:
    if isinstance(content, str):
        return content
    parts = content if isinstance(content, list) else [content] if isinstance(content, dict) else []
    return "".join(p if isinstance(p, str) else p.get("text", "") for p in parts
                   if isinstance(p, str) or isinstance(p, dict) and not p.get("thought")
                   and isinstance(p.get("text", ""), str))


def _gemini() -> Files:
    got = Files()
    sessions: dict[str, list[Path]] = {}
    for path in sorted((AGENTS / "gemini").rglob("session-*.json*"), key=lambda p: (p.suffix == ".jsonl", str(p))):
        if path.suffix == ".json":
            data = json.loads(path.read_text())
            recs = [{k: v for k, v in data.items() if k != "messages"}, *data["messages"]]
        else:
            recs = _jsonl(path)
        sessions.setdefault(recs[0]["sessionId"], []).append(path)
    for sid, paths in sessions.items():
        latest: dict[str, dict] = {}  # id -> its last version
        parent: dict[str, str | None] = {}
        live: list[str] = []  # the conversation Gemini CLI would resume

        def add(rec: dict, from_set: bool = False, latest=latest, parent=parent, live=live) -> None:
            mid = rec["id"]
            if rec.get("type") not in ("user", "gemini"):
                got.kinds.add(f"{rec.get('type')} notice" + (" in a $set" if from_set else ""))
                if rec.get("type") == "info":
                    got.injected.append(_gemini_text(rec.get("content")))
                return
            if mid in latest:
                if not from_set:
                    latest[mid] = rec
                if mid not in live:
                    live.append(mid)
                return
            latest[mid] = rec
            parent[mid] = live[-1] if live else None
            live.append(mid)

        for path in paths:
            if path.suffix == ".json":
                data = json.loads(path.read_text())
                recs = [m for m in data["messages"] if isinstance(m, dict)]
            else:
                recs = _jsonl(path)
            for rec in recs:
                if isinstance(rec.get("$rewindTo"), str):
                    cut = live.index(rec["$rewindTo"]) if rec["$rewindTo"] in live else 0
                    del live[cut:]
                elif isinstance(rec.get("$set"), dict) and isinstance(rec["$set"].get("messages"), list):
                    live[:] = []
                    for m in rec["$set"]["messages"]:
                        add(m, from_set=True)
                elif isinstance(rec.get("id"), str):
                    add(rec)
        pages: dict[str, Want] = {}
        for mid, rec in latest.items():
            if rec["type"] == "user":
                sent = _gemini_text(rec.get("content"))
                text = _gemini_text(rec.get("displayContent")) if rec.get("displayContent") else sent
                if sent.lstrip().startswith("[Function Response:"):
                    got.kinds.add("function response")
                    got.injected.append(sent)
                elif text.strip() == "System: Please continue.":
                    got.kinds.add("continuation nudge")
                    got.injected.append(text)
                elif text.strip() and not (SLASH.match(text.strip()) and len(text) < 200) \
                        and not text.lstrip().startswith("<state_snapshot>"):
                    pages[mid] = Want(mid, "user", [text], session=sid)
            else:
                blocks = [_gemini_text(rec.get("content"))]
                blocks += [f"{t.get('subject', '')}: {t.get('description', '')}".strip(": ")
                           for t in rec.get("thoughts") or []]
                blocks = [b for b in blocks if b.strip()]
                if blocks:
                    pages[mid] = Want(mid, "assistant", blocks, session=sid)
        for mid, want in pages.items():
            up = parent.get(mid)
            while up is not None and up not in pages:
                up = parent.get(up)
            want.parent = pages.get(up) if up else None
        got.wants += list(pages.values())
    return got


# --- Codex CLI ---

SCAFFOLD = ("<environment_context>", "<permissions", "<user_instructions>", "# AGENTS.md instructions",
            "<INSTRUCTIONS>", "<user_shell_command>", "<turn_aborted>", "<system-reminder>")


def _codex_turns(path: Path) -> tuple[dict, list[tuple[str, str, list[str]]]]:
    """(session meta, [(role, text, thinking blocks)]) in file order."""
    recs = _jsonl(path)
    meta = next((r["payload"] for r in recs if r.get("type") == "session_meta"), {})
    items = [r["payload"] for r in recs if r.get("type") in ("response_item", "event_msg")]

    def text(content) -> str:
        if isinstance(content, str):
            return content
        return "\n\n".join(b["text"] for b in content or [] if isinstance(b, dict) and isinstance(b.get("text"), str)
                           and b["text"])

    def real(role: str, t: str) -> bool:
        return role in ("user", "assistant") and not t.lstrip().startswith(SCAFFOLD) and bool(t.strip())

    has = {role: any(i.get("type") == "message" and i.get("role") == role and real(role, text(i.get("content")))
                     for i in items) for role in ("user", "assistant")}
    turns: list[tuple[str, str, list[str]]] = []
    thinking: list[str] = []
    for i in items:
        kind = i.get("type")
        if kind == "message":
            role, t = i.get("role"), text(i.get("content"))
        elif kind == "user_message" and not has["user"]:
            role, t = "user", i.get("message") or ""
        elif kind == "agent_message" and not has["assistant"]:
            role, t = "assistant", i.get("message") or ""
        elif kind == "reasoning":
            thinking += [b["text"] for key in ("summary", "content") for b in i.get(key) or []
                         if isinstance(b, dict) and isinstance(b.get("text"), str) and b["text"].strip()]
            continue
        else:
            continue
        if not real(role, t):
            continue
        turns.append((role, t, thinking if role == "assistant" else []))
        if role == "assistant":
            thinking = []
    return meta, turns


def _codex() -> Files:
    got = Files()
    files = {}
    for path in sorted((AGENTS / "codex").rglob("rollout-*.jsonl")):
        meta, turns = _codex_turns(path)
        files[meta.get("id") or path.stem] = (meta, turns)
    made: dict[str, list[Want]] = {}
    for sid, (meta, turns) in sorted(files.items(), key=lambda kv: bool(kv[1][0].get("forked_from_id"))):
        previous: Want | None = None
        start = 0
        source = files.get(meta.get("forked_from_id") or "")
        if source is not None:  # the copied history is the source session's pages
            got.kinds.add("fork")
            while start < min(len(turns), len(source[1])) and turns[start][:2] == source[1][start][:2]:
                start += 1
            previous = made[meta["forked_from_id"]][start - 1] if start else None
        made[sid] = []
        for role, text, thinking in turns[start:]:
            want = Want(None, role, [text, *thinking], parent=previous, session=sid)
            made[sid].append(want)
            got.wants.append(want)
            previous = want
    return got


READERS = {"claude-code": _claude_code, "codex": _codex, "gemini": _gemini}
SHOWN = {  # what the vendored set must hold (the list)
    "claude-code": {"redacted thinking", "attachment in the chain", "system in the chain", "progress in the chain",
                    "local command output", "interrupt marker", "compaction", "a record written twice"},
    "gemini": {"function response", "continuation nudge", "info notice in a $set"},
    "codex": {"fork"},
}


@pytest.mark.parametrize("tool", sorted(IMPORTERS))
def test_every_vendored_transcript_holds_points_1_to_4(store, tool):
    assert SHOWN[tool] <= READERS[tool]().kinds, f"the vendored {tool} set lacks {SHOWN[tool] - READERS[tool]().kinds}"
    IMPORTERS[tool](store, AGENTS / tool)
    check_points(store, tool)


def check_points(store, tool: str) -> None:
    """Points 1-4 for every transcript of `tool`, over the live pages of a store that imported them all."""
    files = READERS[tool]()
    pages = [p for p in h.pages(store, projections=("manifest", "relations", "payload", "facets"))
             if p["revision"]["namespace"].startswith(f"agent:{tool}")]
    by_id = {p["revision"]["page_id"]: p for p in pages}
    messages = [p for p in pages if p["facets"].get("role") in ("user", "assistant")]
    found: dict[int, dict] = {}  # id(want) -> its page

    def page_of(want: Want) -> dict:
        if id(want) in found:
            return found[id(want)]
        if want.key is not None:
            page = by_id[store.source_page_id(f"{tool}:{want.key}")]
        else:  # Codex keys are digests: the page with the text that follows the parent's page
            parent = page_of(want.parent)["revision"]["page_id"] if want.parent else None
            candidates = [p for p in messages if p["facets"]["role"] == want.role
                          and p["revision"]["payload"]["content"].startswith(want.blocks[0])
                          and (h.outgoing(p, "responds_to") == ([parent] if parent else []))]
            assert len(candidates) == 1, (want.role, want.blocks[0][:80], len(candidates))
            page = candidates[0]
        found[id(want)] = page
        return page

    for want in files.wants:
        page = page_of(want)
        content = page["revision"]["payload"]["content"]
        # 1. every block is on the page (once, whatever records it came in) and an exact search finds it
        assert page["facets"]["role"] == want.role, want.blocks[0][:80]
        for block in want.blocks:
            assert block.strip() in content, (want.key, block[:80])
            probe = max(block.strip().splitlines(), key=len).strip()[:80]
            hits = h.hits(store, [page["revision"]["namespace"]], probe, mode="exact")
            assert page["revision"]["page_id"] in {x["page_id"] for x in hits}, probe
        # 2. it responds to its nearest kept ancestor, and to nothing else
        expected = [page_of(want.parent)["revision"]["page_id"]] if want.parent else []
        assert h.outgoing(page, "responds_to") == expected, (want.key, want.blocks[0][:80])
        if tool == "codex":  # and it is in its own session's scope (a fork's turns are not its source's)
            assert page["revision"]["namespace"].endswith(":" + want.session), (want.session, want.blocks[0][:80])
    # 3. one page per message: no page the files do not call for, none twice
    assert len({id(p) for p in found.values()}) == len(files.wants)
    assert len(messages) == len(files.wants)
    # 4. injected text is no user or assistant page and no title
    titles = [p["title"] for p in pages]
    for text in files.injected:
        line = next(x.strip() for x in text.splitlines() if x.strip())[:60]
        assert not any(p["revision"]["payload"]["content"].strip() == text.strip() for p in messages), line
        assert not any(t.removeprefix("user: ").startswith(line) for t in titles), line
