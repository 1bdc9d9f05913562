"""`pcp mcp`: a Model Context Protocol server over the store (stdio, or streamable HTTP on 127.0.0.1), for one
model client.

The session's principal is a model client whose grants are fixed when the server
starts; no tool argument can widen them (the store enforces every grant, denies
tombstone/delete/export to model clients, and audits every call under the client id).
Tool results are compact, bounded text; a store error becomes an MCP tool error whose
text starts with the contract's code (`forbidden: ...`, `conflict: ...`). Beside the text, every result carries
`structuredContent` (the store's own result: a hit is the API's hit) matching the tool's `outputSchema`.

Answering `initialize` does no store work and does not even import the store: the tools' schemas come from
mcp/schema.py, the tools' text from mcp/format.py, and the store is opened by the first call that needs it.

Needs the optional `mcp` SDK (`pip install 'pcp[mcp]'`); the store never imports it.

Long because: the ten tools, each one method with its parameters described for the model, are the server's surface;
their text is in format.py, their schemas in schema.py.
"""

from __future__ import annotations

import functools
import sys
from functools import partial
from pathlib import Path
from typing import Annotated, Any, Callable, Mapping
from urllib.parse import quote, unquote

import anyio
import anyio.to_thread
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError
from mcp_types import (
    CallToolResult, ListResourcesResult, ListResourceTemplatesResult, NotificationParams, PaginatedRequestParams, ReadResourceRequestParams,
    ReadResourceResult, Resource, ResourceTemplate, TextContent, TextResourceContents, ToolAnnotations,
)
from pydantic import Field

from ..shared import (RECOMMENDED_RELATION_TYPES, ActorType, LifecycleStatus, Projection, SearchMode, checked_query,
                      revised_facets, search_filters)
from . import schema
from .format import (DEFAULT_HITS, DEFAULT_READ_CHARS, MAX_HITS, MAX_IDS, MAX_READ_CHARS, bounded, cut, format_describe,
                     format_hits, format_link, format_read, format_scopes, format_written)
from .schema import TOOLSETS
from .wire import PcpServer, package_version, run_stdio


def _clamp(value: Any, low: int, high: int, default: int) -> int:
    try:
        number = int(value) if value is not None else default
    except (TypeError, ValueError):
        number = default
    return max(low, min(high, number))


# --- the tools: what a client sees in tools/list --------------------------------------------------------------

ID_TEXT = "a page id (pg_..., its head revision) or a revision id (rev_...)"
KEY_TEXT = ("optional idempotency key: a retry with the same key and the same arguments returns the first result "
            "instead of writing again")
Ids = Annotated[list[str], Field(description=f"up to {MAX_IDS} ids to read; each is {ID_TEXT}")]
Cursor = Annotated[str | None, Field(description="the next_cursor of the previous result, to get the next page; "
                                                 "omit for the first page")]
Time = str | None


def _time(what: str) -> Any:
    return Field(description=f"RFC 3339 timestamp (e.g. 2026-03-01T09:00:00Z): {what}")


READ_ONLY = {"read_only_hint": True, "destructive_hint": False, "idempotent_hint": True, "open_world_hint": False}


def _hints(read_only: bool, idempotent: bool) -> dict[str, bool]:
    return {"read_only_hint": read_only, "destructive_hint": False, "idempotent_hint": idempotent,
            "open_world_hint": False}


# name -> (title, description, hints, result type in store.types or mcp_results)
TOOL_INFO: dict[str, tuple[str, str, dict[str, bool], str]] = {
    "describe": (
        "Describe this store and session",
        "Call first, once per conversation, to learn what this session may do: its grants per namespace (fixed for "
        "the session), the toolset, the search modes, projections and limits, and the recommended relation types.",
        _hints(True, True), "DescribeResult"),
    "list_scopes": (
        "List scopes",
        "List the scopes (namespaces) this session can see, with page counts, last activity and its permissions "
        "there. Use it to choose `scopes` for search_pages or the namespace for write_page.",
        _hints(True, True), "ScopeList"),
    "search_pages": (
        "Search pages",
        "Find pages in the granted scopes; use it before reading, and before writing to avoid duplicates. Returns "
        "hits (page_id, revision_id, namespace, title, date, snippet, highlights), never whole pages: read_pages "
        "gets the content. mode: auto (default; a question in plain words, English or CJK, ranked by relevance), "
        "text (every word must occur), exact (substring), temporal (most recent first), graph (query = a page or "
        f"revision id: its related pages). At most {MAX_HITS} hits per call; page on with next_cursor.",
        _hints(True, True), "SearchResult"),
    "read_pages": (
        "Read pages",
        f"Read up to {MAX_IDS} pages or revisions by id (from search_pages or list_scopes results). A page id reads "
        "its head revision. projections choose what comes back (default manifest and payload); max_chars is one "
        f"content budget shared by all ids (default {DEFAULT_READ_CHARS}, at most {MAX_READ_CHARS}). Content "
        "the budget cut is marked truncated and its result gives next_offset: to read on, call read_pages again "
        "with that one revision_id and offset=next_offset, until next_offset is null (never treat a cut part as "
        "the whole page, nor revise from it). Pass the revision_id you read as expected_revision_id to "
        "revise_page.",
        _hints(True, True), "ReadResult"),
    "write_page": (
        "Write a new page",
        "Save new knowledge as a new page in a namespace where this session holds `write`. Search first: to change "
        "an existing page use revise_page. Returns the new page_id and revision_id.",
        _hints(False, False), "WriteResult"),
    "revise_page": (
        "Revise a page",
        "Write a new revision of an existing page (the old revision stays readable). expected_revision_id (the "
        "revision you read) is required: if the page has moved on since, you get a conflict naming the head, and "
        "should read it again. Fields not given are carried over.",
        _hints(False, False), "WriteResult"),
    "link_pages": (
        "Link two pages",
        "Record a typed, directed relation from one page or revision to another (e.g. this note supports that "
        "claim). Linking the same pair with the same type again changes nothing.",
        _hints(False, True), "LinkResult"),
    "ingest_event": (
        "Record an event",
        "Record a raw event (a message, a tool output, a file change) as a source-backed page, when it should be "
        "kept as evidence rather than as a written note. idempotency_key is required; a retry never duplicates.",
        _hints(False, True), "WriteResult"),
    "suppress_pages": (
        "Hide pages from this session",
        "Hide pages from this session's own searches (its suppression context), e.g. ones that proved off topic. "
        "Nothing is hidden for anyone else and no revision is written.",
        _hints(False, True), "SuppressResult"),
    "recommend_tombstone": (
        "Recommend withdrawing a page",
        "Ask the user to withdraw (tombstone) a page that is wrong or obsolete. Only records a recommendation the "
        "user reviews in pcp; nothing is withdrawn.",
        _hints(False, False), "RecommendResult"),
}


def output_schemas() -> dict[str, dict[str, Any]]:
    """Each tool's outputSchema: the JSON Schema of the store's result type (imports the store)."""
    import store.types as types

    from . import results as mcp_results

    def find(name: str) -> Any:
        return getattr(mcp_results, name, None) or getattr(types, name)

    return {name: schema.json_schema(find(info[3])) for name, info in TOOL_INFO.items()}


def scope_uri(namespace: str) -> str:
    return "pcp://scope/" + quote(namespace, safe="")


def _text_result(text: str, structured: Mapping[str, Any]) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=dict(structured))


class _Unavailable(Exception):
    """The store could not be opened; every call answers with this error."""


# --- the server -------------------------------------------------------------------------------------------------


class PcpMcp:
    """One store session (a model client) exposed as MCP tools and resources."""

    def __init__(self, db_path: str | Path | None, client_id: str, grants: Mapping[str, frozenset[str]],
                 toolset: str = "read") -> None:
        if toolset not in TOOLSETS:
            from store import Invalid

            raise Invalid(f"--toolset must be read or write, got {toolset!r}.")
        self.db_path = db_path
        self.client_id = client_id
        self.grants = dict(grants)
        self.toolset = toolset
        self.context_id = f"mcp:{client_id}"
        self._store: Any = None
        self._open_error: tuple[str, str] | None = None
        self._open_lock = anyio.Lock()
        self._schemas: dict[str, dict[str, Any]] | None = None
        # Peewee keeps one connection per thread; one worker at a time keeps calls serialised.
        self._limiter = anyio.CapacityLimiter(1)
        self.server = PcpServer(
            name="pcp",
            title="pcp context store",
            version=package_version(),
            instructions=(
                "A user's long-term context store (PCP). Search, then read pages by id; every result names the "
                f"page_id, revision_id and namespace. Session grants are fixed: {self._grant_text()}."
            ),
            log_level="WARNING",
            subscriptions=False,
        )
        self.server.output_schemas = self._output_schemas
        self.server.on_refusal = self._audit_refusal
        self._register()

    def _grant_text(self) -> str:
        return "; ".join(f"{ns}={','.join(sorted(p))}" for ns, p in sorted(self.grants.items()))

    # --- the store, opened by the first call that needs it ---

    def _open(self) -> Any:
        import store

        session = store.AccessSession.model_client(self.client_id, self.grants)
        # A model server never migrates: an older store, or one still being re-indexed, is refused.
        opened = store.Store.open(self.db_path, session=session, migrate=False, create=False)
        if opened.index_upgrade_status() is not None:
            opened.close()
            raise store.Conflict("The search index of this store is being upgraded: run pcp once to upgrade this store.")
        return opened

    async def store(self) -> Any:
        async with self._open_lock:
            if self._store is None and self._open_error is None:
                import store

                try:
                    self._store = await anyio.to_thread.run_sync(self._open, limiter=self._limiter)
                except store.PcpError as exc:
                    self._open_error = (exc.code, exc.message)
                    sys.stderr.write(f"pcp: {exc.message} ({exc.code})\n")
            if self._open_error is not None:
                raise _Unavailable(f"{self._open_error[0]}: {self._open_error[1]}")
            return self._store

    def _output_schemas(self) -> dict[str, dict[str, Any]]:
        if self._schemas is None:
            self._schemas = output_schemas()
        return self._schemas

    async def _call(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        import store

        try:
            return await anyio.to_thread.run_sync(partial(fn, *args, **kwargs), limiter=self._limiter)
        except store.PcpError as exc:
            raise ToolError(f"{exc.code}: {exc.message}") from None

    async def _op(self, name: str, *args: Any, **kwargs: Any) -> Any:
        """Call the store operation `name` in the worker thread."""
        try:
            st = await self.store()
        except _Unavailable as exc:
            raise ToolError(str(exc)) from None
        return await self._call(getattr(st, name), *args, **kwargs)

    async def _audit_refusal(self, tool: str, message: str) -> None:
        """A call refused before it reached the store (unknown tool, wrong arguments), audited as a failure."""
        try:
            st = await self.store()
        except _Unavailable:
            return
        import store
        from store.refusal import audit_refusal

        code, _, text = message.partition(": ")
        error = store.LimitExceeded(text) if code == "limit" else store.Invalid(text or message)
        operation = tool if tool in TOOL_INFO else "unknown_tool"
        await anyio.to_thread.run_sync(partial(audit_refusal, st, operation, error), limiter=self._limiter)

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

    def _register(self) -> None:
        for name in TOOLSETS[self.toolset]:
            title, description, hints, _ = TOOL_INFO[name]
            self.server.add_tool(self._as_tool(getattr(self, name)), name=name, title=title, description=description,
                                 annotations=ToolAnnotations(title=title, **hints), structured_output=False)
        lowlevel = self.server._lowlevel_server
        for method in ("prompts/list", "prompts/get", "resources/subscribe", "resources/unsubscribe",
                       "completion/complete", "logging/setLevel"):
            lowlevel._request_handlers.pop(method, None)  # advertised only what is served
        lowlevel.add_request_handler("resources/list", PaginatedRequestParams, self._list_resources)
        lowlevel.add_request_handler("resources/templates/list", PaginatedRequestParams, self._list_templates)
        lowlevel.add_request_handler("resources/read", ReadResourceRequestParams, self._read_resource)
        lowlevel.add_notification_handler("notifications/initialized", NotificationParams, self._initialized)

    async def _initialized(self, ctx: Any, params: Any) -> None:
        """Once `initialize` is answered, open the store, so that a store pcp cannot serve is named at once."""
        try:
            await self.store()
        except _Unavailable:
            pass

    # --- tools ---

    async def describe(self) -> CallToolResult:
        caps = await self._op("describe_capabilities")
        structured = {"client_id": self.client_id, "toolset": self.toolset, "tools": list(TOOLSETS[self.toolset]),
                      "grants": {ns: sorted(p) for ns, p in sorted(self.grants.items())},
                      "never_available": ["tombstone", "delete", "export"], "context_id": self.context_id,
                      "capabilities": caps}
        return _text_result(format_describe(caps, self.client_id, self.grants, self.toolset, self.context_id),
                            structured)

    async def list_scopes(
        self,
        query: Annotated[str | None, Field(description="optional words that a scope's namespace, name or "
                                                       "description must contain")] = None,
        limit: Annotated[int, Field(description="scopes per page, 1 to 50")] = 20,
        cursor: Cursor = None,
    ) -> CallToolResult:
        result = await self._op("list_scopes", query=query or None, limit=_clamp(limit, 1, 50, 20),
                                cursor=cursor or None)
        return _text_result(format_scopes(result), result)

    async def search_pages(
        self,
        query: Annotated[str, Field(description="what to look for: a question or words (auto, text), a substring "
                                                "(exact), a page or revision id (graph); may be empty for temporal "
                                                f"(at most {schema.MAX_QUERY_CHARS} characters)")] = "",
        scopes: Annotated[list[str] | None, Field(description="namespaces to search (see list_scopes); default: "
                                                              "every scope this session may search")] = None,
        mode: Annotated[SearchMode, Field(description="auto (default): ranked by relevance; text: every word must occur; "
                                                "exact: substring; temporal: most recent first; graph: the pages "
                                                "related to the page or revision id in query")] = "auto",
        limit: Annotated[int, Field(description=f"hits per page, 1 to {MAX_HITS} (default {DEFAULT_HITS})")]
        = DEFAULT_HITS,
        cursor: Cursor = None,
        lifecycle_status: Annotated[list[LifecycleStatus] | None, Field(description="only pages in these lifecycle states "
                                                                           "(default: active)")] = None,
        relation_types: Annotated[list[str] | None, Field(description="only pages with a relation of one of these "
                                                                      "types")] = None,
        actor_types: Annotated[list[ActorType] | None, Field(description="only revisions written by these kinds "
                                                                         "of actor")] = None,
        created_after: Annotated[Time, _time("only revisions stored after this time")] = None,
        created_before: Annotated[Time, _time("only revisions stored before this time")] = None,
        observed_after: Annotated[Time, _time("only things that happened after this time (a hit's date)")] = None,
        observed_before: Annotated[Time, _time("only things that happened before this time (a hit's date)")] = None,
    ) -> CallToolResult:
        from store import PcpError

        try:
            checked_query(query)  # a long query is refused before any work
        except PcpError as exc:
            raise ToolError(f"{exc.code}: {exc.message}") from None
        filters = search_filters(
            lifecycle_status=lifecycle_status, relation_types=relation_types, actor_types=actor_types,
            created_after=created_after, created_before=created_before, observed_after=observed_after,
            observed_before=observed_before)
        result = await self._op(
            "search_pages", query or "", scopes=list(scopes or ()), mode=mode or "auto",
            filters=filters, limit=_clamp(limit, 1, MAX_HITS, DEFAULT_HITS), cursor=cursor or None,
            context_id=self.context_id,  # always this session's own context, never another client's
        )
        return _text_result(bounded(format_hits(result, query or "")), result)

    async def read_pages(
        self,
        ids: Ids,
        projections: Annotated[list[Projection] | None, Field(description="what to return per id: manifest (ids, "
                                                                          "status, provenance), payload (the content), "
                                                                          "source_spans, relations, facets, history, lifecycle (archive and "
                                                                          "tombstone reasons, suppressions); "
                                                                          "default manifest and payload")] = None,
        max_chars: Annotated[int, Field(description=f"content characters shared by all ids, 0 to {MAX_READ_CHARS} "
                                                    f"(default {DEFAULT_READ_CHARS})")] = DEFAULT_READ_CHARS,
        offset: Annotated[int | None, Field(description="with exactly one id: the character where the content "
                                                        "starts, the next_offset of the previous part")] = None,
    ) -> CallToolResult:
        if not ids:
            raise ToolError("invalid: name at least one page or revision id.")
        if len(ids) > MAX_IDS:
            raise ToolError(f"limit: at most {MAX_IDS} ids per read_pages call, got {len(ids)}.")
        budget = _clamp(max_chars, 0, MAX_READ_CHARS, DEFAULT_READ_CHARS)
        result = await self._op("read_pages", list(ids), projections=tuple(projections or ("manifest", "payload")),
                                max_chars=budget, offset=offset)
        return _text_result(format_read(result, budget), result)

    async def write_page(
        self,
        namespace: Annotated[str, Field(description="the scope to write into (this session needs write there)")],
        content: Annotated[str, Field(description="the page's text")],
        title: Annotated[str | None, Field(description="a short title (default: from the first line)")] = None,
        media_type: Annotated[str, Field(description="the content's media type")] = "text/markdown",
        summary: Annotated[str | None, Field(description="a one-paragraph summary")] = None,
        keywords: Annotated[list[str] | None, Field(description="keywords to find the page by")] = None,
        source_uris: Annotated[list[str] | None, Field(description="URIs of the sources this page is based "
                                                                   "on")] = None,
        derived_from: Annotated[list[str] | None, Field(description="revision ids this page was derived from "
                                                                    "(recorded as provenance)")] = None,
        idempotency_key: Annotated[str | None, Field(description=KEY_TEXT)] = None,
    ) -> CallToolResult:
        facets = {k: v for k, v in {"title": title, "summary": summary, "keywords": keywords}.items() if v}
        provenance = [{"operation": "derive", "input_revision_ids": list(derived_from), "tool_or_model": "pcp-mcp"}] \
            if derived_from else None
        result = await self._op(
            "write_page", namespace, content=content, media_type=media_type or "text/markdown",
            facets=facets or None, source_refs=[{"uri": u} for u in source_uris] if source_uris else None,
            provenance=provenance, idempotency_key=idempotency_key or None,
        )
        return _text_result(format_written(result, "Page", namespace), result)

    async def revise_page(
        self,
        page_id: Annotated[str, Field(description="the page to revise (pg_...)")],
        expected_revision_id: Annotated[str, Field(description="the revision you read and are revising "
                                                               "(rev_...); a conflict if the page moved on")],
        content: Annotated[str | None, Field(description="the new text (default: unchanged)")] = None,
        title: Annotated[str | None, Field(description="a new title (default: unchanged)")] = None,
        summary: Annotated[str | None, Field(description="a new summary (default: unchanged)")] = None,
        keywords: Annotated[list[str] | None, Field(description="new keywords (default: unchanged)")] = None,
        media_type: Annotated[str | None, Field(description="a new media type (default: unchanged)")] = None,
        idempotency_key: Annotated[str | None, Field(description=KEY_TEXT)] = None,
    ) -> CallToolResult:
        if not expected_revision_id:
            raise ToolError("invalid: expected_revision_id is required (the revision you read).")
        facets = None
        if (title, summary, keywords) != (None, None, None):
            # Facets given replace the stored ones, so merge the changes into the expected revision's facets.
            current = await self._op("read_pages", [expected_revision_id], projections=("manifest",), max_chars=0)
            item = (current.get("results") or [{}])[0]
            facets = revised_facets((item.get("revision") or {}).get("facets"), title=title, summary=summary,
                                    keywords=keywords)
        result = await self._op(
            "revise_page", page_id, expected_revision_id, content=content, media_type=media_type,
            facets=facets, idempotency_key=idempotency_key or None,
        )
        namespace = None
        try:  # name the scope too; a session with revise but without read simply goes without it
            head = await self._op("read_pages", [result["revision_id"]], projections=("manifest",), max_chars=0)
            namespace = ((head.get("results") or [{}])[0].get("revision") or {}).get("namespace")
        except ToolError:
            pass
        return _text_result(format_written(result, "Revision", namespace), result)

    async def link_pages(
        self,
        from_id: Annotated[str, Field(description=f"where the relation starts: {ID_TEXT}")],
        relation_type: Annotated[str, Field(description="the relation, free text (1 to 80 characters); recommended: "
                                                        + ", ".join(RECOMMENDED_RELATION_TYPES))],
        to_id: Annotated[str, Field(description=f"where the relation points: {ID_TEXT}")],
        idempotency_key: Annotated[str | None, Field(description=KEY_TEXT)] = None,
    ) -> CallToolResult:
        result = await self._op("link_pages", from_id, relation_type, to_id, idempotency_key=idempotency_key or None)
        return _text_result(format_link(result), result)

    async def ingest_event(
        self,
        namespace: Annotated[str, Field(description="the scope to record into (this session needs ingest there)")],
        idempotency_key: Annotated[str, Field(description="required: a key unique to this event (e.g. the message "
                                                          "id); a retry with it never duplicates")],
        content: Annotated[str | None, Field(description="the event's text (or give source_uris)")] = None,
        source_uris: Annotated[list[str] | None, Field(description="URIs of what the event is (a file, a "
                                                                   "message)")] = None,
        media_type: Annotated[str | None, Field(description="the content's media type")] = None,
        observed_at: Annotated[Time, _time("when the event happened")] = None,
        title: Annotated[str | None, Field(description="a short title")] = None,
    ) -> CallToolResult:
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
        result = await self._op("ingest_event", event, namespace, idempotency_key)
        return _text_result(format_written(result, "Event page", namespace), result)

    async def suppress_pages(
        self,
        page_ids: Annotated[list[str], Field(description="the pages (pg_...) to hide from this session's "
                                                         "searches")],
        reason: Annotated[str | None, Field(description="why, for the user reading the audit")] = None,
        expires_at: Annotated[Time, _time("when the pages show again (default: never)")] = None,
    ) -> CallToolResult:
        result = await self._op("suppress_pages", list(page_ids), self.context_id, reason=reason or None,
                                expires_at=expires_at or None)
        text = (f"Suppressed {len(result['suppressed'])} page(s) in context {result['context_id']} only "
                f"(no revision written, nothing hidden elsewhere): {', '.join(result['suppressed'])}")
        return _text_result(text, result)

    async def recommend_tombstone(
        self,
        page_id: Annotated[str, Field(description="the page (pg_...) to recommend withdrawing")],
        reason: Annotated[str, Field(description="why the page should be withdrawn, shown to the user")],
    ) -> CallToolResult:
        result = await self._op("recommend_tombstone", page_id, reason)
        text = (f"Recommendation recorded for the user to review (the page is not withdrawn).\n"
                f"recommendation_id: {result['recommendation_id']} | page_id: {result['page_id']} | "
                f"status: {result['status']}")
        return _text_result(text, result)

    # --- resources: the session's scopes, and pages by id ---

    async def _resource_store(self) -> Any:
        try:
            return await self.store()
        except _Unavailable as exc:
            raise MCPError(code=-32603, message=str(exc)) from None

    async def _resource_call(self, name: str, *args: Any, **kwargs: Any) -> Any:
        st = await self._resource_store()
        try:
            return await self._call(getattr(st, name), *args, **kwargs)
        except ToolError as exc:
            code = -32002 if str(exc).startswith("not_found") else -32602
            raise MCPError(code=code, message=str(exc)) from None

    async def _list_resources(self, ctx: Any, params: PaginatedRequestParams) -> ListResourcesResult:
        result = await self._resource_call("list_scopes", limit=50, cursor=params.cursor or None)
        resources = [Resource(uri=scope_uri(s["namespace"]), name=s["namespace"],
                              title=s.get("display_name") or s["namespace"],
                              description=cut(s.get("description") or f"{s.get('page_count')} page(s)", 300),
                              mime_type="text/plain")
                     for s in result.get("scopes") or []]
        return ListResourcesResult(resources=resources, next_cursor=result.get("next_cursor"))

    async def _list_templates(self, ctx: Any, params: PaginatedRequestParams) -> ListResourceTemplatesResult:
        return ListResourceTemplatesResult(resource_templates=[
            ResourceTemplate(uri_template="pcp://page/{page_id}", name="page", title="A page (head revision)",
                             description="The head revision of a page, as read_pages shows it.",
                             mime_type="text/plain"),
            ResourceTemplate(uri_template="pcp://page/{page_id}@{revision_id}", name="page_revision",
                             title="A revision of a page",
                             description="One revision of a page, as read_pages shows it.", mime_type="text/plain"),
        ])

    async def _read_resource(self, ctx: Any, params: ReadResourceRequestParams) -> ReadResourceResult:
        uri = str(params.uri)
        if uri.startswith("pcp://scope/"):
            namespace = unquote(uri[len("pcp://scope/"):])
            text = await self._scope_text(namespace)
        elif uri.startswith("pcp://page/"):
            page_id, _, revision_id = uri[len("pcp://page/"):].partition("@")
            text = await self._page_text(unquote(page_id), unquote(revision_id) or None)
        else:
            raise MCPError(code=-32002, message=f"not_found: no resource {cut(uri, 200)!r}; resources are "
                                                "pcp://scope/<namespace> and pcp://page/<page_id>[@<revision_id>].")
        return ReadResourceResult(contents=[TextResourceContents(uri=uri, text=text, mime_type="text/plain")])

    async def _scope_text(self, namespace: str) -> str:
        pages = await self._resource_call("list_pages", scopes=[namespace], limit=schema.MAX_LIST)
        lines = [f"scope {namespace}: {len(pages['pages'])} most recent page(s)"
                 + (" (more: search_pages with this scope)" if pages.get("next_cursor") else "")]
        for p in pages["pages"]:
            lines.append(f"- {cut(p['title'], 120)} | page_id: {p['page_id']} | revision_id: {p['revision_id']} "
                         f"| {p['lifecycle_status']} | {p['updated_at']}")
        return "\n".join(lines)

    async def _page_text(self, page_id: str, revision_id: str | None) -> str:
        if not page_id.startswith("pg_") or (revision_id is not None and not revision_id.startswith("rev_")):
            raise MCPError(code=-32602, message="invalid: a page resource is pcp://page/<pg_...>[@<rev_...>].")
        result = await self._resource_call("read_pages", [revision_id or page_id], max_chars=DEFAULT_READ_CHARS)
        item = (result.get("results") or [{}])[0]
        if "error" in item:
            raise MCPError(code=-32002 if item["error"]["code"] == "not_found" else -32602,
                           message=f"{item['error']['code']}: {item['error']['message']}")
        if (item.get("revision") or {}).get("page_id") != page_id:
            raise MCPError(code=-32002, message=f"not_found: revision {revision_id} is not a revision of {page_id}.")
        return format_read(result, DEFAULT_READ_CHARS)

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None

    def run(self) -> None:
        try:
            anyio.run(run_stdio, self.server)
        finally:
            self.close()


class StartError(Exception):
    """The server cannot start (bad grants, a busy port): `code` and one line of `message`."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code, self.message = code, message


def _session(db_path: str | Path | None, client_id: str, grant_specs: list[str], toolset: str) -> PcpMcp:
    import store
    from store.access import AccessSession

    try:
        grants = AccessSession.parse_grants(grant_specs)
        return PcpMcp(db_path, client_id, grants, toolset)
    except store.PcpError as exc:
        raise StartError(exc.code, exc.message) from None


def _stop_at_once(signum: int, frame: Any) -> None:
    """Ctrl-C: stop now (the stdin reader blocks in a thread that a graceful exit would wait for)."""
    import os

    sys.stderr.write("pcp: interrupted\n")
    sys.stderr.flush()
    os._exit(130)


def serve(db_path: str | Path | None, client_id: str, grant_specs: list[str], toolset: str = "read") -> int:
    """Run the stdio server until the client closes stdin (and every pending request is answered)."""
    import signal

    pcp = _session(db_path, client_id, grant_specs, toolset)
    previous = signal.signal(signal.SIGINT, _stop_at_once)
    try:
        pcp.run()
    finally:
        signal.signal(signal.SIGINT, previous)
    return 0


def serve_http(db_path: str | Path, client_id: str, grant_specs: list[str], toolset: str = "read",
               port: int = 8765) -> int:
    """Serve streamable HTTP on 127.0.0.1:`port` behind the local guard and the bearer token, until Ctrl-C."""
    from . import http as mcp_http

    pcp = _session(db_path, client_id, grant_specs, toolset)
    try:
        return mcp_http.run(pcp, Path(db_path), port)
    except (OSError, OverflowError) as exc:
        why = getattr(exc, "strerror", None) or str(exc)
        code = "invalid" if isinstance(exc, OverflowError) else "unsupported"
        raise StartError(code, f"cannot listen on 127.0.0.1:{port}: {why}") from None
    finally:
        pcp.close()
