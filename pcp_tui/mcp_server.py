"""`pcp mcp`: a stdio Model Context Protocol server over the store, for one model client.

The session's principal is a model client whose grants are fixed when the server
starts; no tool argument can widen them (the store enforces every grant, denies
tombstone/delete/export to model clients, and audits every call under the client id).
Tool results are compact, bounded text; a store error becomes an MCP tool error whose
text starts with the contract's code (`forbidden: ...`, `conflict: ...`).

Needs the optional `mcp` SDK (`pip install 'pcp[mcp]'`); the store never imports it.
"""

from __future__ import annotations

import functools
import json
from functools import partial
from pathlib import Path
from typing import Any, Callable, Mapping

import anyio
import anyio.to_thread
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, TextContent

import store
from store import validate

from .mcp_wire import PcpServer, run_stdio

READ_TOOLS = ("describe", "list_scopes", "search_pages", "read_pages")
WRITE_TOOLS = ("write_page", "revise_page", "link_pages", "ingest_event", "suppress_pages", "recommend_tombstone")
TOOLSETS = {"read": READ_TOOLS, "write": READ_TOOLS + WRITE_TOOLS}

MAX_HITS = store.LIMITS["max_hits"]
DEFAULT_HITS = 10
MAX_READ_CHARS = store.LIMITS["max_chars_per_read"]
DEFAULT_READ_CHARS = 16_000
MAX_IDS = store.LIMITS["max_ids_per_read"]
SNIPPET_CHARS = 300
MAX_LIST_LINES = 25       # relations / history / source refs shown per page
FACETS_CHARS = 1_500
RESULT_CEILING = MAX_READ_CHARS + 24_000  # no tool result is ever longer than this


def _clamp(value: Any, low: int, high: int, default: int) -> int:
    try:
        number = int(value) if value is not None else default
    except (TypeError, ValueError):
        number = default
    return max(low, min(high, number))


def _cut(text: str | None, limit: int) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= limit else text[: max(0, limit - 1)] + "…"


def _bounded(text: str) -> str:
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
            head += f" ({_cut(s['display_name'], 80)})"
        lines.append(head)
        lines.append(f"  pages: {s.get('page_count')} | last activity: {s.get('last_activity') or '-'} | "
                     f"permissions: {', '.join(s.get('permissions') or []) or '-'}")
        if s.get("description"):
            lines.append(f"  {_cut(s['description'], 200)}")
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
        lines.append(f"[{i}] {_cut(h['title'], 120)}")
        lines.append(f"    page_id: {h['page_id']} | revision_id: {h['revision_id']}")
        lines.append(f"    namespace: {h['namespace']} | status: {h.get('lifecycle_status')} | "
                     f"matched_by: {h.get('matched_by')} | score: {h.get('score')} | "
                     f"date: {h.get('date') or h.get('created_at')}")
        snippet = _cut(h.get("snippet"), SNIPPET_CHARS)
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
        lines = [f"=== {_cut(item['title'], 120)}",
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
            lines.append("source_refs: " + ", ".join(_cut(r.get("uri"), 200) for r in refs[:5])
                         + (" …" if len(refs) > 5 else ""))
        facets = item.get("facets", None)
        facets = facets if facets is not None else rev.get("facets")
        if facets:
            lines.append("facets: " + _cut(json.dumps(facets, ensure_ascii=False, sort_keys=True), FACETS_CHARS))
        if "source_spans" in item:
            spans = item.get("source_spans") or []
            lines.append(f"source_spans ({len(spans)}):")
            for s in spans[:MAX_LIST_LINES]:
                lines.append("  " + _cut(json.dumps(s, ensure_ascii=False, sort_keys=True), 300))
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
            if item.get("truncated"):
                lines.append(f"--- [content truncated at the shared max_chars budget of {max_chars}; "
                             "read this page alone or raise max_chars (at most 64000)] ---")
        elif item.get("truncated"):
            lines.append("truncated: true")
        blocks.append("\n".join(lines))
    return _bounded("\n\n".join(blocks))


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


# --- the server -------------------------------------------------------------------------------------------------


class PcpMcp:
    """One store session (a model client) exposed as MCP tools."""

    def __init__(self, db_path: str | Path | None, client_id: str, grants: Mapping[str, frozenset[str]],
                 toolset: str = "read") -> None:
        if toolset not in TOOLSETS:
            raise store.Invalid(f"--toolset must be read or write, got {toolset!r}.")
        self.client_id = client_id
        self.grants = dict(grants)
        self.toolset = toolset
        self.context_id = f"mcp:{client_id}"
        session = store.AccessSession.model_client(client_id, self.grants)
        # A model server never migrates: an older store, or one still being re-indexed, is refused.
        self.store = store.Store.open(db_path, session=session, migrate=False)
        if self.store.index_upgrade_status() is not None:
            self.store.close()
            raise store.Conflict("The search index of this store is being upgraded: run pcp once to upgrade this store.")
        # Peewee keeps one connection per thread; one worker at a time keeps calls serialised.
        self._limiter = anyio.CapacityLimiter(1)
        self.server = PcpServer(
            name="pcp",
            instructions=(
                "A user's long-term context store (PCP). Search, then read pages by id; every result names the "
                f"page_id, revision_id and namespace. Session grants are fixed: {self._grant_text()}."
            ),
            log_level="WARNING",
        )
        self._register()

    def _grant_text(self) -> str:
        return "; ".join(f"{ns}={','.join(sorted(p))}" for ns, p in sorted(self.grants.items()))

    async def _call(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        try:
            return await anyio.to_thread.run_sync(partial(fn, *args, **kwargs), limiter=self._limiter)
        except store.PcpError as exc:
            raise ToolError(f"{exc.code}: {exc.message}") from None

    @staticmethod
    def _as_tool(fn: Callable[..., Any]) -> Callable[..., Any]:
        """A tool whose anticipated failure is an MCP tool error (`isError`) reading `code: message`."""

        @functools.wraps(fn)
        async def tool(*args: Any, **kwargs: Any) -> Any:
            try:
                return await fn(*args, **kwargs)
            except ToolError as exc:
                return CallToolResult(content=[TextContent(type="text", text=str(exc))], is_error=True)

        return tool

    # --- tools ---

    def _register(self) -> None:
        tools: dict[str, tuple[Callable[..., Any], str]] = {
            "describe": (self.describe, "What this store offers and what this session may do (grants, limits)."),
            "list_scopes": (self.list_scopes, "The scopes (namespaces) this session can see, with page counts "
                                              "and its permissions there."),
            "search_pages": (self.search_pages, "Search pages in the granted scopes. mode: auto (default: ask a "
                                                "question in plain words, English or CJK; ranked by relevance), "
                                                "text (every word must occur), exact (substring), temporal (recent "
                                                "first) or graph (query = a page or revision id: its neighbours). "
                                                "observed_after / observed_before (RFC 3339) bound when things "
                                                "happened (a hit's date). At most 50 hits; snippets only."),
            "read_pages": (self.read_pages, "Read up to 20 pages (page id -> latest revision) or revisions by id. "
                                            "projections: manifest, payload (default both), source_spans, "
                                            "relations, facets, history. max_chars is a shared content budget "
                                            "(default 16000, at most 64000); cut content is marked truncated."),
            "write_page": (self.write_page, "Write a new page into a namespace you hold `write` on. Returns its "
                                            "page_id and revision_id."),
            "revise_page": (self.revise_page, "Write a new revision of a page. expected_revision_id (the revision "
                                              "you read) is required; if the page moved on you get a conflict. "
                                              "Fields not given are carried over."),
            "link_pages": (self.link_pages, "Add a typed, directed relation between two pages or revisions "
                                            "(e.g. supports, contradicts, derived_from, related_to)."),
            "ingest_event": (self.ingest_event, "Record a raw event (a message, tool output, file change) as a "
                                                "source-backed page. idempotency_key is required; retries never "
                                                "duplicate."),
            "suppress_pages": (self.suppress_pages, "Hide pages from this session's own searches (its context id), "
                                                    "never globally; creates no revision."),
            "recommend_tombstone": (self.recommend_tombstone, "Recommend that the user withdraw (tombstone) a page. "
                                                              "It only records a recommendation for the user to "
                                                              "review; nothing is withdrawn."),
        }
        for name in TOOLSETS[self.toolset]:
            fn, description = tools[name]
            self.server.add_tool(self._as_tool(fn), name=name, description=description, structured_output=False)

    async def describe(self) -> str:
        caps = await self._call(self.store.describe_capabilities)
        return format_describe(caps, self.client_id, self.grants, self.toolset, self.context_id)

    async def list_scopes(self, query: str | None = None, limit: int = 20, cursor: str | None = None) -> str:
        result = await self._call(self.store.list_scopes, query=query or None, limit=_clamp(limit, 1, 50, 20),
                                  cursor=cursor or None)
        return format_scopes(result)

    async def search_pages(self, query: str = "", scopes: list[str] | None = None, mode: str = "auto",
                           limit: int = DEFAULT_HITS, cursor: str | None = None,
                           lifecycle_status: list[str] | None = None, relation_types: list[str] | None = None,
                           actor_types: list[str] | None = None, created_after: str | None = None,
                           created_before: str | None = None, observed_after: str | None = None,
                           observed_before: str | None = None) -> str:
        try:
            validate.query(query)  # a long query is refused before any work
        except store.PcpError as exc:
            raise ToolError(f"{exc.code}: {exc.message}") from None
        filters = {k: v for k, v in {
            "lifecycle_status": lifecycle_status, "relation_types": relation_types, "actor_types": actor_types,
            "created_after": created_after, "created_before": created_before, "observed_after": observed_after,
            "observed_before": observed_before}.items() if v}
        result = await self._call(
            self.store.search_pages, query or "", scopes=list(scopes or ()), mode=mode or "auto",
            filters=filters or None, limit=_clamp(limit, 1, MAX_HITS, DEFAULT_HITS), cursor=cursor or None,
            context_id=self.context_id,  # always this session's own context, never another client's
        )
        return _bounded(format_hits(result, query or ""))

    async def read_pages(self, ids: list[str], projections: list[str] | None = None,
                         max_chars: int = DEFAULT_READ_CHARS) -> str:
        if not ids:
            raise ToolError("invalid: name at least one page or revision id.")
        if len(ids) > MAX_IDS:
            raise ToolError(f"limit: at most {MAX_IDS} ids per read_pages call, got {len(ids)}.")
        budget = _clamp(max_chars, 0, MAX_READ_CHARS, DEFAULT_READ_CHARS)
        result = await self._call(self.store.read_pages, list(ids),
                                  projections=tuple(projections or ("manifest", "payload")), max_chars=budget)
        return format_read(result, budget)

    async def write_page(self, namespace: str, content: str, title: str | None = None,
                         media_type: str = "text/markdown", summary: str | None = None,
                         keywords: list[str] | None = None, source_uris: list[str] | None = None,
                         derived_from: list[str] | None = None, idempotency_key: str | None = None) -> str:
        facets = {k: v for k, v in {"title": title, "summary": summary, "keywords": keywords}.items() if v}
        provenance = [{"operation": "derive", "input_revision_ids": list(derived_from), "tool_or_model": "pcp-mcp"}] \
            if derived_from else None
        result = await self._call(
            self.store.write_page, namespace, content=content, media_type=media_type or "text/markdown",
            facets=facets or None, source_refs=[{"uri": u} for u in source_uris] if source_uris else None,
            provenance=provenance, idempotency_key=idempotency_key or None,
        )
        return format_written(result, "Page", namespace)

    async def revise_page(self, page_id: str, expected_revision_id: str, content: str | None = None,
                          title: str | None = None, summary: str | None = None, keywords: list[str] | None = None,
                          media_type: str | None = None, idempotency_key: str | None = None) -> str:
        if not expected_revision_id:
            raise ToolError("invalid: expected_revision_id is required (the revision you read).")
        changes = {k: v for k, v in {"title": title, "summary": summary, "keywords": keywords}.items()
                   if v is not None}
        facets = None
        if changes:
            # Facets given replace the stored ones, so merge the changes into the expected revision's facets.
            current = await self._call(self.store.read_pages, [expected_revision_id], projections=("manifest",),
                                       max_chars=0)
            item = (current.get("results") or [{}])[0]
            facets = dict((item.get("revision") or {}).get("facets") or {})
            facets.update(changes)
        result = await self._call(
            self.store.revise_page, page_id, expected_revision_id, content=content, media_type=media_type,
            facets=facets, idempotency_key=idempotency_key or None,
        )
        namespace = None
        try:  # name the scope too; a session with revise but without read simply goes without it
            head = await self._call(self.store.read_pages, [result["revision_id"]], projections=("manifest",),
                                    max_chars=0)
            namespace = ((head.get("results") or [{}])[0].get("revision") or {}).get("namespace")
        except ToolError:
            pass
        return format_written(result, "Revision", namespace)

    async def link_pages(self, from_id: str, relation_type: str, to_id: str,
                         idempotency_key: str | None = None) -> str:
        result = await self._call(self.store.link_pages, from_id, relation_type, to_id,
                                  idempotency_key=idempotency_key or None)
        return format_link(result)

    async def ingest_event(self, namespace: str, idempotency_key: str, content: str | None = None,
                           source_uris: list[str] | None = None, media_type: str | None = None,
                           observed_at: str | None = None, title: str | None = None) -> str:
        event: dict[str, Any] = {"actor_id": self.client_id}
        if content is not None:
            event["content"] = content
        if source_uris:
            event["source_refs"] = [{"uri": u} for u in source_uris]
        for key, value in (("media_type", media_type), ("observed_at", observed_at)):
            if value:
                event[key] = value
        if title:
            event["facets"] = {"title": title}
        result = await self._call(self.store.ingest_event, event, namespace, idempotency_key)
        return format_written(result, "Event page", namespace)

    async def suppress_pages(self, page_ids: list[str], reason: str | None = None,
                             expires_at: str | None = None) -> str:
        result = await self._call(self.store.suppress_pages, list(page_ids), self.context_id, reason=reason or None,
                                  expires_at=expires_at or None)
        return (f"Suppressed {len(result['suppressed'])} page(s) in context {result['context_id']} only "
                f"(no revision written, nothing hidden elsewhere): {', '.join(result['suppressed'])}")

    async def recommend_tombstone(self, page_id: str, reason: str) -> str:
        result = await self._call(self.store.recommend_tombstone, page_id, reason)
        return (f"Recommendation recorded for the user to review (the page is not withdrawn).\n"
                f"recommendation_id: {result['recommendation_id']} | page_id: {result['page_id']} | "
                f"status: {result['status']}")

    def run(self) -> None:
        try:
            anyio.run(run_stdio, self.server)
        finally:
            self.store.close()


def serve(db_path: str | Path | None, client_id: str, grant_specs: list[str], toolset: str = "read") -> int:
    """Run the stdio server until the client closes stdin (store errors raise `store.PcpError`)."""
    grants = store.AccessSession.parse_grants(grant_specs)
    PcpMcp(db_path, client_id, grants, toolset).run()
    return 0
