"""Which importer a file is for: each importer refuses a file in another importer's format, naming the right one.

Given a Claude export, `pcp import chatgpt` made an empty conversation page and `pcp import export` said "line 1 is
not valid JSON": nothing told the user which importer to use. Recognition looks at the file's shape (JSON or JSON
Lines) and the keys its objects carry; a file it cannot place is left to the importer's own checks.
"""

from __future__ import annotations

import json
import re
import zipfile
from pathlib import Path
from typing import Any

from ..errors import Invalid

# How each importer's files are named to a person, and the command that imports them.
NAMES = {
    "chatgpt": "a ChatGPT export", "claude": "a Claude export", "export": "a pcp export",
    "events": "an events file (one JSON event per line)", "claude-code": "a Claude Code session",
    "codex": "a Codex session", "gemini": "a Gemini CLI session",
}
# The key only one kind of JSON export has (a key: quoted, then a colon; quotes inside text are escaped).
KEYS = [(kind, re.compile(rf'"{key}"\s*:')) for kind, key in
        (("chatgpt", "mapping"), ("claude", "chat_messages"), ("gemini", "projectHash"))]
HEAD_BYTES = 1 << 20  # read to recognise a file (an export's first lines; never the whole file)
SAMPLE_LINES = 20


def chat_kind(items: list[Any]) -> str | None:
    """`chatgpt` or `claude` from the conversation objects of a parsed chat export, else None."""
    for item in items[:SAMPLE_LINES]:
        if not isinstance(item, dict):
            continue
        if "mapping" in item:
            return "chatgpt"
        if "chat_messages" in item or ("uuid" in item and "name" in item):
            return "claude"
        if "sessionId" in item and "messages" in item:
            return "gemini"
    return None


def line_kind(obj: dict[str, Any]) -> str | None:
    """The importer one JSON Lines record belongs to, else None."""
    kind = obj.get("kind")
    if isinstance(kind, str) and kind.startswith("pcp.export"):
        return "export"
    if "idempotency_key" in obj:
        return "events"
    if obj.get("type") == "session_meta" or ("payload" in obj and "timestamp" in obj and "type" in obj):
        return "codex"
    if "sessionId" in obj and "projectHash" in obj:
        return "gemini"
    if "sessionId" in obj or obj.get("type") in ("file-history-snapshot", "summary"):
        return "claude-code"
    return None


def file_kind(path: Path) -> str | None:
    """The importer a file is for, from its first bytes (JSON Lines by its records, JSON by its keys)."""
    try:
        if zipfile.is_zipfile(path):
            return None  # a chat export archive: recognised once its conversations.json is read
        with open(path, "rb") as fh:
            head = fh.read(HEAD_BYTES)
    except OSError:
        return None
    text = head.decode("utf-8-sig", errors="replace")
    lines = [line for line in text.splitlines()[:SAMPLE_LINES] if line.strip()]
    records = []
    for line in lines:
        try:
            obj = json.loads(line)
        except (ValueError, RecursionError):
            break
        if isinstance(obj, dict):
            records.append(obj)
    if len(records) >= 2:  # JSON Lines
        kinds = [k for k in (line_kind(r) for r in records) if k]
        return kinds[0] if kinds else None
    if len(records) == 1 and len(lines) == 1:  # one JSON object on one line: one record, or a minified export
        return line_kind(records[0]) or chat_kind(records)
    if text.lstrip().startswith(("[", "{")):
        # A JSON document over many lines: its keys say what it is (a whole parse is the importer's work).
        found = [kind for kind, key in KEYS if key.search(text)]
        return found[0] if len(found) == 1 else None
    return None


def refuse_other(kind: str | None, expected: str, label: str) -> None:
    """Refuse (Invalid) a file recognised as another importer's, naming the importer to use."""
    if kind is None or kind == expected:
        return
    raise Invalid(f"{label} is {NAMES[kind]}, not {NAMES[expected]}, so nothing was imported "
                  f"(import it with: pcp import {kind} FILE).")


def check_parsed(data: Any, expected: str, label: str) -> None:
    """Refuse a parsed chat export (a list of conversations or one) that is another importer's."""
    items: list[Any] = [data]
    if isinstance(data, list):
        items = data
    elif isinstance(data, dict) and isinstance(data.get("conversations"), list):
        items = data["conversations"]
    refuse_other(chat_kind(items), expected, label)


def check_file(path: str | Path, expected: str) -> None:
    """Refuse a file that is another importer's (before anything is read into the store)."""
    p = Path(path)
    if p.is_file():
        refuse_other(file_kind(p), expected, p.name)
