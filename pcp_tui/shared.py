"""What the app, the `pcp` command and the MCP server do the same way, written once: the store's closed word
lists, a search's filters and query check, a revision's facets when only some change.

Imports no store at module import (the MCP server answers `tools/list` and the capture hook runs without
loading it); tests/mcp/test_mcp_protocol.py checks each list against the store's own.
"""

from __future__ import annotations

from typing import Any, Literal, Mapping, get_args

SearchMode = Literal["auto", "text", "exact", "temporal", "graph"]
Projection = Literal["manifest", "payload", "source_spans", "relations", "facets", "history", "lifecycle"]
LifecycleStatus = Literal["active", "superseded", "archived", "tombstoned"]
ActorType = Literal["user", "model", "tool", "system"]

SEARCH_MODES: tuple[SearchMode, ...] = get_args(SearchMode)
PROJECTIONS: tuple[Projection, ...] = get_args(Projection)
LIFECYCLE_STATUSES: tuple[LifecycleStatus, ...] = get_args(LifecycleStatus)
ACTOR_TYPES: tuple[ActorType, ...] = get_args(ActorType)
RECOMMENDED_RELATION_TYPES = ("contains", "derived_from", "depends_on", "defines", "uses", "supports", "contradicts",
                              "supersedes", "inspired_by", "related_to", "responds_to", "continues", "summarizes",
                              "aggregates", "links_to")


def search_filters(**given: Any) -> dict[str, Any] | None:
    """The `filters` of search_pages from what a front end was given (lifecycle_status, relation_types,
    media_types, actor_types, created_/observed_ after and before): empty values left out, None when none is left."""
    filters = {key: value for key, value in given.items() if value}
    return filters or None


def checked_query(query: str | None) -> str:
    """The query, refused (PcpError) before any work when the store would refuse it (too long, not text)."""
    from store import validate

    return validate.query(query)


def revised_facets(current: Mapping[str, Any] | None, **changes: Any) -> dict[str, Any] | None:
    """The facets for a new revision when only some change: the current ones with each change (None: unchanged)
    applied, so a new title keeps the summary and keywords; None when nothing changes (the store carries them over)."""
    changed = {key: value for key, value in changes.items() if value is not None}
    if not changed:
        return None
    return {**(current or {}), **changed}
