"""Importers that turn foreign exports into store pages (PCP's Adapter role)."""

from .base import ImportReport
from .chatgpt import import_chatgpt
from .claude import import_claude

__all__ = ["ImportReport", "import_chatgpt", "import_claude"]
