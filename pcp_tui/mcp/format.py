"""The MCP tools' text: store results written as compact, bounded text a model reads well (beside each result's
structuredContent). Pure functions of the store's answers; no SDK, no store import."""

from __future__ import annotations

import json
from typing import Any, Mapping

from . import schema
from .schema import TOOLSETS

MAX_HITS = schema.MAX_HITS
DEFAULT_HITS = 10
MAX_READ_CHARS = schema.MAX_READ_CHARS
DEFAULT_READ_CHARS = 16_000
MAX_IDS = schema.MAX_IDS
SNIPPET_CHARS = 300
MAX_LIST_LINES = 25       # relations / history / source refs shown per page
FACETS_CHARS = 1_500
RESULT_CEILING = MAX_READ_CHARS + 24_000  # no tool result is ever longer than this


def cut(text: str | None, limit: int) -> str:
    """`text` on one line, at most `limit` characters (an ellipsis marks a cut)."""
    text = " ".join((text or "").split())
    return text if len(text) <= limit else text[: max(0, limit - 1)] + "…"


def bounded(text: str) -> str:
    """A tool result within the server's ceiling (RESULT_CEILING characters), saying so when cut."""
    if len(text) <= RESULT_CEILING:
        return text
    return text[: RESULT_CEILING - 60] + "\n[result cut at the server's size ceiling; ask for less]"


def _actor(created_by: Mapping[str, Any] | None) -> str:
    if not created_by:
        return "?"
    return f"{created_by.get('actor_type', '?')}:{created_by.get('actor_id', '?')}"


def _more(lines: list[str], shown: int, total: int) -> None:
    if total > shown:
        lines.append(f"  … {total - shown} more not shown")


# --- formatting of store results as text a model reads well ------------------------------------------------


def format_describe(caps: Mapping[str, Any], client_id: str, grants: Mapping[str, frozenset[str]],
                    toolset: str, context_id: str) -> str:
    limits = caps.get("limits", {})
    lines = [
        f"PCP context store (protocol {caps.get('protocol_version')}), seen by model client {client_id!r}.",
        f"toolset: {toolset} ({', '.join(TOOLSETS[toolset])})",
        "grants (fixed for this session):",
    ]
    for ns in sorted(grants):
        lines.append(f"  {ns}: {', '.join(sorted(grants[ns])) or '(none)'}")
    lines += [
        "never available to a model client: tombstone (use recommend_tombstone), delete, export",
        f"search modes: {', '.join(caps.get('search_modes', []))}",
        f"projections: {', '.join(caps.get('projections', []))}",
        f"limits: {min(MAX_HITS, limits.get('max_hits', MAX_HITS))} hits per search, "
        f"{limits.get('max_ids_per_read', MAX_IDS)} ids per read, "
        f"{min(MAX_READ_CHARS, limits.get('max_chars_per_read', MAX_READ_CHARS))} chars per read, "
        f"{limits.get('max_payload_chars')} chars per payload",
        f"relation types (open vocabulary): {', '.join(caps.get('relation_types', []))}",
        f"suppression context of this session: {context_id}",
    ]
    return "\n".join(lines)


def format_scopes(result: Mapping[str, Any]) -> str:
    scopes = result.get("scopes") or []
    if not scopes:
        return "No scopes visible to this session."
    lines = [f"{len(scopes)} scope(s):"]
    for s in scopes:
        head = f"- {s['namespace']}"
        if s.get("display_name") and s["display_name"] != s["namespace"]:
            head += f" ({cut(s['display_name'], 80)})"
        lines.append(head)
        lines.append(f"  pages: {s.get('page_count')} | last activity: {s.get('last_activity') or '-'} | "
                     f"permissions: {', '.join(s.get('permissions') or []) or '-'}")
        if s.get("description"):
            lines.append(f"  {cut(s['description'], 200)}")
    if result.get("next_cursor"):
        lines.append(f"next_cursor: {result['next_cursor']}")
    return "\n".join(lines)


def matched_words(hit: Mapping[str, Any], limit: int = 12) -> list[str]:
    """The distinct snippet words the store highlighted (its `highlights` ranges), in order of appearance."""
    snippet = str(hit.get("snippet") or "")
    seen: list[str] = []
    for pair in hit.get("highlights") or []:
        try:
            start, end = int(pair[0]), int(pair[1])
        except (TypeError, ValueError, IndexError):
            continue
        word = " ".join(snippet[max(0, start):max(0, end)].split())
        if word and word not in seen:
            seen.append(word)
        if len(seen) >= limit:
            break
    return seen


def format_hits(result: Mapping[str, Any], query: str) -> str:
    hits = result.get("hits") or []
    if not hits:
        return f"No pages found for {query!r} in the scopes this session can search."
    lines = [f"{len(hits)} hit(s):"]
    for i, h in enumerate(hits, 1):
        lines.append(f"[{i}] {cut(h['title'], 120)}")
        lines.append(f"    page_id: {h['page_id']} | revision_id: {h['revision_id']}")
        lines.append(f"    namespace: {h['namespace']} | status: {h.get('lifecycle_status')} | "
                     f"matched_by: {h.get('matched_by')} | score: {h.get('score')} | "
                     f"date: {h.get('date') or h.get('created_at')}")
        snippet = cut(h.get("snippet"), SNIPPET_CHARS)
        if snippet:
            lines.append(f"    snippet: {snippet}")
        words = matched_words(h)
        if words:
            lines.append(f"    matched: {', '.join(words)}")
    if result.get("next_cursor"):
        lines.append(f"next_cursor: {result['next_cursor']}")
    return "\n".join(lines)


def _relation_line(r: Mapping[str, Any]) -> str:
    return (f"  {r['relation_type']}: {r['from_page_id']} ({r['from_revision_id']}) -> "
            f"{r['to_page_id']} ({r['to_revision_id']}) [{r.get('relation_id')}, by {_actor(r.get('created_by'))}]")


def format_read(result: Mapping[str, Any], max_chars: int) -> str:
    blocks = []
    for item in result.get("results") or []:
        if "error" in item:
            err = item["error"]
            blocks.append(f"=== {item.get('requested_id')}\nerror: {err.get('code')}: {err.get('message')}")
            continue
        rev = item.get("revision") or {}
        lines = [f"=== {cut(item['title'], 120)}",
                 f"page_id: {rev.get('page_id')} | revision_id: {rev.get('revision_id')}"
                 + (f" | current_revision_id: {item['current_revision_id']}"
                    if item.get("current_revision_id") and item.get("current_revision_id") != rev.get("revision_id")
                    else ""),
                 f"namespace: {rev.get('namespace')} | status: {rev.get('lifecycle_status')} | "
                 f"created: {rev.get('created_at')} by {_actor(rev.get('created_by'))}"]
        if rev.get("previous_revision_id"):
            lines.append(f"previous_revision_id: {rev['previous_revision_id']}")
        payload = rev.get("payload")
        if payload is not None:
            lines.append(f"media_type: {payload.get('media_type')} | digest: {rev.get('content_digest')}")
        prov = rev.get("provenance") or []
        if prov:
            parts = []
            for p in prov[:5]:
                inputs = p.get("input_revision_ids") or []
                parts.append(f"{p.get('operation')} by {p.get('actor_type')}:{p.get('actor_id')}"
                             + (f" from {', '.join(inputs[:5])}" + (" …" if len(inputs) > 5 else "") if inputs else ""))
            lines.append("provenance: " + "; ".join(parts) + (" …" if len(prov) > 5 else ""))
        refs = rev.get("source_refs") or []
        if refs and "source_spans" not in item:
            lines.append("source_refs: " + ", ".join(cut(r.get("uri"), 200) for r in refs[:5])
                         + (" …" if len(refs) > 5 else ""))
        facets = item.get("facets", None)
        facets = facets if facets is not None else rev.get("facets")
        if facets:
            lines.append("facets: " + cut(json.dumps(facets, ensure_ascii=False, sort_keys=True), FACETS_CHARS))
        if "source_spans" in item:
            spans = item.get("source_spans") or []
            lines.append(f"source_spans ({len(spans)}):")
            for s in spans[:MAX_LIST_LINES]:
                lines.append("  " + cut(json.dumps(s, ensure_ascii=False, sort_keys=True), 300))
            _more(lines, min(len(spans), MAX_LIST_LINES), len(spans))
        if "relations" in item:
            rel = item.get("relations") or {}
            for side in ("outgoing", "incoming"):
                entries = rel.get(side) or []
                lines.append(f"relations {side} ({len(entries)}):")
                for r in entries[:MAX_LIST_LINES]:
                    lines.append(_relation_line(r))
                _more(lines, min(len(entries), MAX_LIST_LINES), len(entries))
        if "history" in item:
            hist = item.get("history") or []
            lines.append(f"history ({len(hist)}, newest first):")
            for h in hist[:MAX_LIST_LINES]:
                lines.append(f"  {h.get('revision_id')} {h.get('created_at')} by {_actor(h.get('created_by'))} "
                             f"[{h.get('lifecycle_status')}]")
            _more(lines, min(len(hist), MAX_LIST_LINES), len(hist))
        if payload is not None and "content" in payload:
            lines.append(f"truncated: {'true' if item.get('truncated') else 'false'}")
            lines.append("--- content ---")
            lines.append(payload.get("content") or "")
            if item.get("next_offset") is not None:
                lines.append(f"--- [characters {item.get('offset', 0)} to {item['next_offset']} of "
                             f"{item.get('content_chars')}; to read on, call read_pages with ids "
                             f"[\"{rev.get('revision_id')}\"] and offset {item['next_offset']}] ---")
        elif item.get("truncated"):
            lines.append("truncated: true")
        blocks.append("\n".join(lines))
    return bounded("\n\n".join(blocks))


def format_written(result: Mapping[str, Any], what: str, namespace: str | None = None) -> str:
    state = "created" if result.get("created", True) else "already existed (idempotent repeat)"
    lines = [f"{what} {state}.", f"page_id: {result['page_id']} | revision_id: {result['revision_id']}"]
    if namespace:
        lines.append(f"namespace: {namespace}")
    return "\n".join(lines)


def format_link(result: Mapping[str, Any]) -> str:
    state = "created" if result.get("created", True) else "already existed"
    return (f"Relation {state}: {result['relation_type']}\n"
            f"relation_id: {result['relation_id']}\n"
            f"from: {result['from_page_id']} ({result['from_revision_id']})\n"
            f"to: {result['to_page_id']} ({result['to_revision_id']})")
