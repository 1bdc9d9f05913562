"""Importers that turn foreign exports into store pages (PCP's Adapter role)."""

from .base import ImportReport
from .chatgpt import import_chatgpt
from .claude import import_claude
from .claude_code import import_claude_code
from .codex import import_codex
from .events import import_events
from .gemini import import_gemini
from .markdown import import_markdown
from .memory import import_memory

__all__ = ["ImportReport", "import_chatgpt", "import_claude", "import_claude_code", "import_codex", "import_events", "import_gemini", "import_markdown", "import_memory"]
