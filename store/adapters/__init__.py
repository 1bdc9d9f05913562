"""Importers that turn foreign exports into store pages (PCP's Adapter role), and the one list of them
(IMPORTERS) that `pcp import` and the app's import screen both read."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Literal

from .base import ImportReport
from .chatgpt import import_chatgpt
from .claude import import_claude
from .claude_code import import_claude_code
from .codex import import_codex
from .events import import_events
from .gemini import import_gemini
from .markdown import import_markdown
from .memory import import_memory


@dataclass(frozen=True)
class Importer:
    """One importer: the source name `pcp import` takes, the function, what it reads and the line the app shows."""

    source: str
    run: Callable[..., ImportReport]
    # chat: an export file; agent: coding-agent sessions (the path may be left out: the agent's own folder; each
    # session goes to its project's scope); notes, events: a folder, a .jsonl; memory: needs whose memory it is
    kind: Literal["chat", "agent", "notes", "events", "memory"]
    label: str


IMPORTERS: dict[str, Importer] = {i.source: i for i in (
    Importer("chatgpt", import_chatgpt, "chat", "ChatGPT export (.zip or conversations.json)"),
    Importer("claude", import_claude, "chat", "Claude export (.zip or conversations.json)"),
    Importer("claude-code", import_claude_code, "agent", "Claude Code sessions (empty path: ~/.claude/projects)"),
    Importer("codex", import_codex, "agent", "Codex CLI sessions (empty path: ~/.codex/sessions)"),
    Importer("gemini", import_gemini, "agent", "Gemini CLI sessions (empty path: ~/.gemini/tmp)"),
    Importer("markdown", import_markdown, "notes", "A folder of Markdown notes"),
    Importer("events", import_events, "events", "Events, one JSON object per line (.jsonl)"),
    Importer("memory", import_memory, "memory", "A vendor's memory as copied out of ChatGPT or Claude (a text file)"),
)}

__all__ = ["IMPORTERS", "ImportReport", "Importer", "import_chatgpt", "import_claude", "import_claude_code", "import_codex", "import_events", "import_gemini", "import_markdown", "import_memory"]
