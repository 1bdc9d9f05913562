"""Live capture of coding-agent sessions: the store side (issue 37).

A capture is an import of one session file (or of every new one) through the existing importers
(store.adapters: claude_code, codex, gemini), with the same source keys, so a re-run never
duplicates; what differs is what reaches the store:

- text that looks like a secret (the patterns the bundle warnings check, store.bundle) is
  redacted: `[redacted: <kind>]` stands where the secret was, in message text, titles and facets;
- a bundle pasted into a prompt (text ending in a `pcp-bundle v1` trailer) is not captured again:
  one line naming its digest stands in its place;
- tool traffic is never captured (no `with_tools`): pcp's own MCP results are tool results, so
  they never come back as pages, and neither does a shell command's output.

The front end (pcp_tui/capture/) decides which sessions are captured and when.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from .bundle import redact_secrets
from .import_pages import cleaning

AGENTS = ("claude-code", "codex", "gemini")

_TRAILER = re.compile(r"^[ \t]*(?:continues )?pcp-bundle v1 (sha256:[0-9a-f]{64})(?: from sha256:[0-9a-f]{64})?[ \t\r]*$",
                      re.M)
_BUNDLE_START = re.compile(r"^(?:# Context from the user's pcp store|continues pcp-bundle sha256:[0-9a-f]{64})[ \t\r]*$",
                           re.M)


def strip_pasted_bundles(text: str) -> tuple[str, int]:
    """`text` with each pasted bundle or continuation (from its first line to its trailer) replaced by one
    line naming its digest; and how many there were. Text without a trailer is left alone."""
    if "pcp-bundle v1" not in text:
        return text, 0
    out: list[str] = []
    done = 0  # where the text not yet copied to `out` starts
    count = 0
    for trailer in _TRAILER.finditer(text):
        if trailer.group(0).lstrip().startswith("continues"):
            continue  # a continuation's first line, not a trailer
        starts = [m.start() for m in _BUNDLE_START.finditer(text, done, trailer.start())]
        start = starts[0] if starts else done
        out.append(text[done:start])
        out.append(f"[a pcp bundle ({trailer.group(1)}) was pasted here; pcp does not capture it again]")
        done = trailer.end()
        count += 1
    out.append(text[done:])
    return "".join(out), count


class Cleaned:
    """What cleaning took out of one capture: counts only, never the text."""

    def __init__(self) -> None:
        self.redacted: dict[str, int] = {}  # kind -> how many pages or facets held one
        self.bundles = 0

    def text(self, value: str) -> str:
        value, n = strip_pasted_bundles(value)
        self.bundles += n
        value, kinds = redact_secrets(value)
        for kind in kinds:
            self.redacted[kind] = self.redacted.get(kind, 0) + 1
        return value

    def value(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.text(value) if value else value
        if isinstance(value, dict):
            return {k: self.value(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.value(v) for v in value]
        return value

    def page(self, payload: dict[str, Any] | None,
             facets: dict[str, Any] | None) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
        """An imported page's payload and facets, cleaned (store/import_pages.py `cleaning`)."""
        if payload is not None and isinstance(payload.get("content"), str):
            payload = {**payload, "content": self.text(payload["content"])}
        if facets is not None:
            facets = self.value(facets)
        return payload, facets

    def to_dict(self) -> dict[str, Any]:
        return {"redacted": dict(sorted(self.redacted.items())), "bundles_not_captured": self.bundles}


def capture_session(store: Any, agent: str, path: str | Path) -> dict[str, Any]:
    """Import one session file (or folder) of `agent` through its importer, cleaned; the summary, with what
    cleaning took out. Only messages not in the store yet are created (the importer's source keys)."""
    from . import adapters

    if agent not in AGENTS:
        raise ValueError(f"unknown agent {agent!r}")
    importer = getattr(adapters, f"import_{agent.replace('-', '_')}")
    cleaned = Cleaned()
    with cleaning(cleaned.page):  # every page is cleaned where the importer checks it, whatever path lands it
        report = importer(store, path, with_tools=False)
    summary = report.to_dict()
    return {"agent": agent, "created": summary["created"], "unchanged": summary["unchanged"],
            "revised": summary["revised"], "messages": summary["messages"],
            "import_id": summary.get("import_id"), **cleaned.to_dict()}
