"""The page title rule, once: what a revision's `title` is, and what is shown when it is empty."""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from .constants import UNTITLED
from .text import first_line


def page_title(facets: Mapping[str, Any], payload: Mapping[str, Any] | None,
               source_refs: Sequence[Mapping[str, Any]]) -> str:
    """The stored title: the title facet, else the payload's first line (heading marks removed),
    else the first source ref's URI. Empty when none of them has any text."""
    if facets.get("title"):
        return str(facets["title"])
    if payload:
        return first_line(payload["content"])
    return str(source_refs[0]["uri"]) if source_refs else ""


def shown_title(title: str | None) -> str:
    """The title every result carries: the stored title, or the one fallback for an empty one."""
    return title or UNTITLED
