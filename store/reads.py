"""Reading: envelopes, read_pages projections, scopes, capabilities, doctor and the audit log.

Long because: every read operation of the protocol shares one set of row helpers; the cursor codec is the piece to
move out."""

from __future__ import annotations

import base64
import hashlib
import heapq
import json
from typing import Any, Literal, NamedTuple

from .constants import LIMITS, LIFECYCLE_STATUSES, RECOMMENDED_RELATION_TYPES
from .core import Call, Part, named_rows, operation, pending_erasures
from .db import SCHEMA_VERSION
from .index import FTS_TABLE
from . import encryption, ids, names
from .errors import Forbidden, Invalid, LimitExceeded, NotFound, PcpError, Unsupported, shown
from .files import folder_warnings
from .scope_titles import live_titles
from .restore import unfinished
from .titles import shown_title
from .types import (
    AuditEvent, AuditLog, Capabilities, DoctorReport, HistoryEntry, PageCount, PageList, PageSummary, Payload, ProvenanceEvent,
    LifecycleStep, PageLifecycle, ReadItem, ReadResult, Relation, Relations, Revision, Scope, ScopeList,
    SourceRef, SuppressionNote,
)

PROJECTIONS = ("manifest", "payload", "source_spans", "relations", "facets", "history", "lifecycle")
MAX_LIFECYCLE_NOTES = 50  # lifecycle steps and suppressions listed per page, newest first
SEARCH_MODES = ("auto", "text", "exact", "temporal", "graph")
PROTOCOL_VERSION = "0.4.0-draft"
CONCURRENT_REVISIONS_RULE = (
    "Revisions made from the same parent on two synced stores are all kept; the head is the newest "
    "(latest created_at, then revision_id) and the others are listed as conflict_revision_ids; revise_page "
    "accepts either as expected_revision_id, and the new revision resolves the conflict."
)
MAX_RELATIONS_PER_DIRECTION = 100
MAX_HISTORY = 100
# (direction, this page's end, the other end) of a page's relations
DIRECTIONS: tuple[tuple[Literal["outgoing", "incoming"], str, str], ...] = (
    ("outgoing", "from_page_id", "to_page_id"), ("incoming", "to_page_id", "from_page_id"))


LIST_ORDERS = ("recent", "oldest", "title")
_ASCII_FOLD = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
LIST_STATUSES = LIFECYCLE_STATUSES
STATUS_PARTS = {
    "active": "(p.status = 'active' AND p.superseded = 0)",
    "superseded": "(p.status = 'active' AND p.superseded > 0)",
    "archived": "p.status = 'archived'",
    "tombstoned": "p.status = 'tombstoned'",
}
STATUS_RAW = {"active": "active", "superseded": "active", "archived": "archived", "tombstoned": "tombstoned"}


def _list_statuses(status: Any) -> list[str]:
    """Requested effective statuses: default active; "all" is every status but tombstoned."""
    if status is None or status == [] or status == "":
        return ["active"]
    if isinstance(status, str):
        status = [s.strip() for s in status.split(",") if s.strip()]
    wanted = set(status)
    if "all" in wanted:
        wanted = (wanted - {"all"}) | {"active", "superseded", "archived"}
    bad = sorted(wanted - set(LIST_STATUSES))
    if bad:
        raise Invalid(f"Unknown lifecycle status {', '.join(bad)}; use {', '.join(LIST_STATUSES)} or all.")
    return sorted(wanted)


def dumps_key(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":")).encode()


def encode_cursor(value: dict[str, Any]) -> str:
    return base64.urlsafe_b64encode(json.dumps(value, separators=(",", ":")).encode()).decode().rstrip("=")


def decode_cursor(cursor: str | None, kind: str) -> dict[str, Any] | None:
    if cursor in (None, ""):
        return None
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        value = json.loads(base64.urlsafe_b64decode(padded.encode()))
    except (ValueError, TypeError, RecursionError):
        value = None
    if not isinstance(value, dict) or value.get("k") != kind:
        raise Invalid("This cursor does not belong to this listing; start again without a cursor.")
    return value


def clamp(limit: Any, default: int, maximum: int) -> int:
    if limit is None:
        return default
    if isinstance(limit, bool) or not isinstance(limit, int):
        raise Invalid("limit must be a whole number.")
    return max(1, min(limit, maximum))


def effective_status(status: str, superseded: int) -> str:
    """A page's status: its latest lifecycle event, or superseded when a live `supersedes` points at it."""
    if status != "active":
        return status
    return "superseded" if superseded > 0 else "active"


def source_refs_shown(refs: list[dict[str, Any]]) -> list[SourceRef]:
    """Source refs as read: a locator is always a JSON object. One an older pcp stored as text (or any other
    non-object) is shown as {"value": ...}, so every read matches the contract and the MCP outputSchema."""
    out: list[SourceRef] = []
    for ref in refs:
        if "locator" in ref and not isinstance(ref["locator"], dict):
            ref = {**ref, "locator": {"value": ref["locator"]}}
        out.append(ref)  # type: ignore[arg-type]
    return out


class RelationRow(NamedTuple):
    """A relation row selected with RELATION_COLUMNS (aliases `r`, `fp` and `tp`: the relation and its ends)."""

    relation_id: str
    relation_type: str
    from_page_id: str
    from_revision_id: str
    to_page_id: str
    to_revision_id: str
    created_at: str
    actor_type: str
    actor_id: str


RELATION_COLUMNS = (
    "r.relation_id, r.relation_type, fp.page_id AS from_page_id, r.from_revision_id, tp.page_id AS to_page_id, "
    "r.to_revision_id, r.created_at, r.actor_type, r.actor_id"
)


def relation_dict(r: RelationRow) -> Relation:
    return {"relation_id": r.relation_id, "relation_type": r.relation_type, "from_page_id": r.from_page_id,
            "from_revision_id": r.from_revision_id, "to_page_id": r.to_page_id, "to_revision_id": r.to_revision_id,
            "created_at": r.created_at, "created_by": {"actor_type": r.actor_type, "actor_id": r.actor_id}}


class _KeyRow(NamedTuple):
    """A page's place in a listing: its sort key (sort_time or title) and its row id."""

    key: str | None
    id: int


class _SummaryRow(NamedTuple):
    id: int
    page_id: str
    head_revision_id: str
    namespace: str
    title: str
    status: str
    superseded: int
    media_type: str | None
    actor_type: str
    sort_time: str
    created_at: str
    updated_at: str


class ReadOps(Part):
    """Reading: envelopes, read_pages, scopes, page lists, capabilities, doctor and the audit log."""

    # --- envelopes ---

    def _envelope(self, rev: Any, page: Any, namespace: str, visibility: str, with_content: bool = True) -> Revision:
        status = effective_status(page.status, page.superseded) if rev.id == page.head else "superseded"
        payload: Payload | None = None
        if rev.media_type is not None:
            payload = {"media_type": rev.media_type}
            if with_content:
                payload["content"] = rev.content
        return {
            "page_id": page.page_id,
            "revision_id": rev.revision_id,
            "previous_revision_id": rev.previous_revision_id,
            "owner_id": self.owner_id,
            "namespace": namespace,
            "visibility": visibility,
            "lifecycle_status": status,
            "created_at": rev.created_at,
            "observed_at": rev.observed_at,
            "valid_from": rev.valid_from,
            "valid_to": rev.valid_to,
            "created_by": {"actor_type": rev.actor_type, "actor_id": rev.actor_id},
            "payload": payload,
            "source_refs": source_refs_shown(json.loads(rev.source_refs)),
            "facets": json.loads(rev.facets),
            "provenance": self._visible_provenance(json.loads(rev.provenance)),
            "content_digest": rev.content_digest,
        }

    def _visible_provenance(self, events: list[ProvenanceEvent]) -> list[ProvenanceEvent]:
        """Strip inputs this session may not see; mark inputs that were erased (input_deleted, owner only)."""
        wanted = {i for e in events for i in e.get("input_revision_ids", [])}
        if not wanted:
            return events
        m = self._m
        visible: set[str] = set()
        rows = (
            m.Revision.select(m.Revision.revision_id, m.Scope.namespace, m.Page.status)
            .join(m.Page, on=(m.Revision.page == m.Page.id))
            .switch(m.Revision)
            .join(m.Scope, on=(m.Revision.scope == m.Scope.id))
            .where(m.Revision.revision_id.in_(list(wanted)))
            .tuples()
        )
        for rev_id, ns, status in rows:
            if self.session.allows("read", ns) and (status != "tombstoned" or self.session.allows("audit", ns)):
                visible.add(rev_id)
        # An erased input keeps no scope to test a grant against, so only the owner sees it (and its
        # receipt); for a model client it is stripped like any input it may not see, deleted or not.
        deleted: dict[str, str] = {}
        if self.session.is_owner:
            deleted = dict(
                m.DeletedRevision.select(m.DeletedRevision.revision_id, m.DeletedRevision.receipt_id)
                .where(m.DeletedRevision.revision_id.in_(list(wanted - visible)))
                .tuples()
            )
        out: list[ProvenanceEvent] = []
        for event in events:
            event = event.copy()
            inputs = event.get("input_revision_ids", [])
            event["input_revision_ids"] = [i for i in inputs if i in visible or i in deleted]
            gone = {i: deleted[i] for i in inputs if i in deleted}
            if gone:
                event["input_deleted"] = gone
            out.append(event)
        return out

    # --- read_pages ---

    @operation("read_pages")
    def read_pages(self, call: Call, ids_: list[str] | str, projections: Any = ("manifest", "payload"),
                   max_chars: int | None = None, offset: int | None = None) -> ReadResult:
        """Read pages (their current revision) or exact revisions, within one shared character budget.

        `offset` (one id only) starts the content there; a result whose content the budget cut says where the
        rest starts (`next_offset`), so long content is read in parts and never taken for the whole."""
        requested = [ids_] if isinstance(ids_, str) else list(ids_ or [])
        if not requested:
            raise Invalid("Give at least one page or revision id to read.")
        if len(requested) > LIMITS["max_ids_per_read"]:
            raise LimitExceeded(f"Read at most {LIMITS['max_ids_per_read']} ids per call; you gave {len(requested)}.")
        if offset is not None:
            if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
                raise Invalid("offset must be a whole number of characters, 0 or more.")
            if len(requested) != 1:
                raise Invalid(f"offset reads one id at a time; you gave {len(requested)} ids.")
        wanted = self._projections(projections)
        budget = clamp(max_chars, LIMITS["max_chars_per_read"], LIMITS["max_chars_per_read"]) if max_chars != 0 else 0
        if not self.session.may_anywhere("read"):
            raise Forbidden("This session has no read permission.")
        results: list[ReadItem] = []
        readable = 0
        for ident in requested:
            try:
                page, rev = self._resolve_revision(str(ident), call)
                scope = page.scope
            except PcpError as exc:
                results.append({"requested_id": ident, "error": exc.to_dict()})
                continue
            readable += 1
            env = self._envelope(rev, page, scope.namespace, scope.visibility, with_content="payload" in wanted)
            truncated = False
            part: tuple[int, int | None, int] | None = None
            if env["payload"] is not None and "content" in env["payload"]:
                text = env["payload"]["content"] or ""
                start = offset or 0
                if start > len(text):
                    raise Invalid(f"offset {start:,} is past the end of this content ({len(text):,} characters).")
                end = min(len(text), start + budget)
                env["payload"]["content"] = text[start:end] if (start, end) != (0, len(text)) else text
                truncated = end < len(text)
                budget -= end - start
                part = (start, end if truncated else None, len(text))
            result: ReadItem = {"requested_id": ident, "title": shown_title(rev.title), "revision": env,
                                "current_revision_id": page.head_revision_id, "truncated": truncated}
            if part is not None:
                result["offset"], result["next_offset"], result["content_chars"] = part
            if "relations" in wanted:
                result["relations"] = self._relations_of(page)
            if "history" in wanted:
                result["history"] = self._history(page)
            if "source_spans" in wanted:
                result["source_spans"] = env["source_refs"]
            if "facets" in wanted:
                result["facets"] = env["facets"]
            if "lifecycle" in wanted:
                result["lifecycle"] = self._lifecycle_of(page)
            conflict = self._db.execute_sql("SELECT revision_ids FROM sync_conflict WHERE page_id = ?", (page.id,)).fetchone()
            if conflict:  # concurrent revisions from another of the owner's stores (store/sync)
                result["conflict_revision_ids"] = json.loads(conflict[0])
            results.append(result)
        call.counts["read"] = readable
        if readable == 0:
            first = results[0]["error"]
            raise NotFound(first["message"] if len(results) == 1 else "None of the requested ids exist or are visible to this session.")
        return {"results": results}

    def _projections(self, projections: Any) -> set[str]:
        if isinstance(projections, str):
            projections = [p.strip() for p in projections.split(",") if p.strip()]
        wanted = set(projections or ("manifest", "payload"))
        unknown = sorted(wanted - set(PROJECTIONS))
        if unknown:
            raise Unsupported(f"Projection {', '.join(unknown)} is not supported; use {', '.join(PROJECTIONS)}.")
        return wanted

    def _relations_of(self, page: Any) -> Relations:
        """Live relations of a page whose other end this session may read."""
        out: Relations = {"outgoing": [], "incoming": []}
        read_sql, read_params = self._scope_filter("read")
        audit_sql, audit_params = self._scope_filter("audit")
        for direction, mine, other in DIRECTIONS:
            sql = (
                f"SELECT {RELATION_COLUMNS} FROM relation r "
                "JOIN page fp ON fp.id = r.from_page_id JOIN page tp ON tp.id = r.to_page_id "
                f"JOIN page op ON op.id = r.{other} JOIN scope s ON s.id = op.scope_id "
                f"WHERE r.{mine} = ? AND r.retracted = 0 AND {read_sql} "
                f"AND (op.status != 'tombstoned' OR {audit_sql}) ORDER BY r.id LIMIT ?"
            )
            cursor = self._db.execute_sql(sql, (page.id, *read_params, *audit_params, MAX_RELATIONS_PER_DIRECTION))
            out[direction] = [relation_dict(r) for r in named_rows(cursor, RelationRow)]
        return out

    def _lifecycle_of(self, page: Any) -> PageLifecycle:
        """Lifecycle steps with their reasons, and suppressions: the owner sees every one (a client's context
        ids qualified by its identity, as stored); a client sees only its own contexts."""
        events: list[LifecycleStep] = [
            {"from_status": r[0], "to_status": r[1], "reason": r[2], "created_at": r[3],
             "created_by": {"actor_type": r[4], "actor_id": r[5]}}
            for r in self._db.execute_sql(
                "SELECT from_status, to_status, reason, created_at, actor_type, actor_id FROM lifecycle_event "
                "WHERE page_id = ? ORDER BY id DESC LIMIT ?", (page.id, MAX_LIFECYCLE_NOTES)).fetchall()]
        mine = self._context_key("")  # "" for the owner; "<principal>/" for a client: its own contexts
        suppressions: list[SuppressionNote] = []
        for r in self._db.execute_sql(
                "SELECT context_id, reason, expires_at, created_at, actor_type, actor_id FROM suppression "
                "WHERE page_id = ? AND (expires_at IS NULL OR expires_at > ?) ORDER BY id DESC LIMIT ?",
                (page.id, ids.now(), MAX_LIFECYCLE_NOTES)).fetchall():
            context = r[0]
            if mine and not context.startswith(mine):
                continue
            suppressions.append({"context_id": context[len(mine):], "reason": r[1], "expires_at": r[2],
                                 "created_at": r[3], "created_by": {"actor_type": r[4], "actor_id": r[5]}})
        return {"events": events, "suppressions": suppressions}

    def _history(self, page: Any) -> list[HistoryEntry]:
        m = self._m
        rows = (
            m.Revision.select(m.Revision.id, m.Revision.revision_id, m.Revision.created_at, m.Revision.actor_type,
                              m.Revision.actor_id, m.Revision.content_digest)
            .where(m.Revision.page == page.id).order_by(m.Revision.seq.desc()).limit(MAX_HISTORY)
        )
        return [
            {"revision_id": r.revision_id, "created_at": r.created_at,
             "created_by": {"actor_type": r.actor_type, "actor_id": r.actor_id}, "content_digest": r.content_digest,
             "lifecycle_status": effective_status(page.status, page.superseded) if r.id == page.head else "superseded"}
            for r in rows
        ]

    # --- scopes ---

    @operation("list_scopes")
    def list_scopes(self, call: Call, query: str | None = None, limit: int | None = None, cursor: str | None = None) -> ScopeList:
        """Scopes visible to this session, with page counts and last activity (payloads never read)."""
        self._require_somewhere("list_scopes")
        size = clamp(limit, LIMITS["default_hits"], LIMITS["max_list"])
        after = decode_cursor(cursor, "scopes")
        where, params = self._scope_filter("list_scopes")
        sql = f"SELECT s.id FROM scope s WHERE {where}"
        if query:
            sql += " AND (instr(pcp_fold(s.namespace), pcp_fold(?)) > 0 OR instr(pcp_fold(s.display_name), pcp_fold(?)) > 0)"
            params += [query, query]
        if after:
            sql += " AND s.namespace > ?"
            params.append(after["ns"])
        sql += " ORDER BY s.namespace LIMIT ?"
        params.append(size + 1)
        scope_ids = [r[0] for r in self._db.execute_sql(sql, params).fetchall()]
        more = len(scope_ids) > size
        stats: dict[int, tuple[int, str | None]] | None = None
        if not more and after is None and not query:
            # Every scope the session sees: one pass over the page table beats an index walk per scope
            # (MAX(updated_at) reads every row either way; 1.4 s against 4-6 s on a million pages).
            stats = {scope_id: (count, last) for scope_id, count, last in self._db.execute_sql(
                "SELECT scope_id, COUNT(*), MAX(updated_at) FROM page NOT INDEXED WHERE status != 'tombstoned' "
                "GROUP BY scope_id").fetchall()}
        scopes: list[Scope] = []
        rows = list(self._m.Scope.select().where(self._m.Scope.id.in_(scope_ids[:size])).order_by(self._m.Scope.namespace))
        titles = live_titles(self._db, [(s.id, s.namespace) for s in rows
                                        if "read" in self.session.permissions_in(s.namespace)])
        owners = self._owner_ids()
        for scope in rows:
            if stats is not None:
                count, last = stats.get(scope.id, (0, None))
            else:
                count, last = self._db.execute_sql(
                    "SELECT COUNT(*), MAX(updated_at) FROM page WHERE scope_id = ? AND status != 'tombstoned'",
                    (scope.id,)).fetchone()
            scopes.append(self._scope_dict(scope, count, max(filter(None, (last, scope.updated_at))), owners))
            if scope.id in titles:
                scopes[-1]["title"] = titles[scope.id]
            call.scopes.add(scope.namespace)
        call.counts["scopes"] = len(scopes)
        return {"scopes": scopes, "next_cursor": encode_cursor({"k": "scopes", "ns": scopes[-1]["namespace"]}) if more else None}

    # --- list_pages: keyset paging over page heads, for browsing (never reads payloads) ---

    @operation("list_pages")
    def list_pages(self, call: Call, scopes: Any = None, status: Any = None, order: str = "recent",
                   after: str | None = None, limit: int | None = None, actor_types: Any = None) -> PageList:
        """Page heads in recency (sort_time, id) or title order, keyset-paged; authorization in the SQL."""
        if order not in LIST_ORDERS:
            raise Unsupported(f"Order {shown(order)} is not supported; use {' or '.join(LIST_ORDERS)}.")
        self._require_somewhere("search")
        named = self._named_scopes(call, scopes, "search")
        statuses = _list_statuses(status)
        actors = sorted({actor_types} if isinstance(actor_types, str) else set(actor_types or ()))
        size = clamp(limit, LIMITS["default_hits"], LIMITS["max_list"])
        fingerprint = hashlib.sha256(dumps_key([sorted(named), statuses, order, actors])).hexdigest()[:16]
        state = decode_cursor(after, "pages")
        if state is not None and state.get("f") != fingerprint:
            raise Invalid("This cursor belongs to another listing; list again without a cursor.")
        auth_sql, auth_params = self._scope_filter("search")
        audit_sql, audit_params = self._scope_filter("audit")
        where = [auth_sql, f"(p.status != 'tombstoned' OR {audit_sql})",
                 "(" + " OR ".join(STATUS_PARTS[s] for s in statuses) + ")"]
        params: list[Any] = [*auth_params, *audit_params]
        if actors:
            where.append("p.actor_type IN (" + ",".join("?" * len(actors)) + ")")
            params += actors
        key_col = "p.title COLLATE NOCASE" if order == "title" else "p.sort_time"
        if state is not None:
            where.append(f"({key_col}, p.id) {'<' if order == 'recent' else '>'} (?, ?)")
            params += [state["t"], state["i"]]
        direction = "DESC" if order == "recent" else "ASC"
        scope_ids = self._list_partitions(named, order)
        raw = sorted({STATUS_RAW[s] for s in statuses}) if order != "title" else [None]
        runs = []
        # One indexed query per (scope, raw status) partition, merged: each walks an index in order.
        for scope_id in scope_ids:
            for raw_status in raw:
                extra, extra_params = [], []
                if scope_id is not None:
                    extra.append("p.scope_id = ?")
                    extra_params.append(scope_id)
                if raw_status is not None:
                    extra.append("p.status = ?")
                    extra_params.append(raw_status)
                sql = (f"SELECT {key_col} AS key, p.id FROM page p JOIN scope s ON s.id = p.scope_id "
                       f"WHERE {' AND '.join(extra + where)} ORDER BY {key_col} {direction}, p.id {direction} LIMIT ?")
                runs.append(named_rows(self._db.execute_sql(sql, [*extra_params, *params, size + 1]), _KeyRow))
        table = _ASCII_FOLD if order == "title" else None  # the title order folds case as NOCASE does

        def merge_key(r: _KeyRow) -> tuple[str, int]:
            key = r.key or ""
            return (key.translate(table) if table else key, r.id)

        merged = list(heapq.merge(*runs, key=merge_key, reverse=order == "recent"))[: size + 1]
        more = len(merged) > size
        rows = self._page_summaries([r.id for r in merged[:size]])
        call.counts["pages"] = len(rows)
        call.scopes.update(r["namespace"] for r in rows)
        cursor = None
        if more:
            last = merged[size - 1]
            cursor = encode_cursor({"k": "pages", "t": last.key, "i": last.id, "f": fingerprint})
        return {"pages": rows, "next_cursor": cursor}

    @operation("count_pages")
    def count_pages(self, call: Call, scopes: Any = None, status: Any = None, actor_types: Any = None) -> PageCount:
        """How many pages list_pages would list with these filters (the readable ones only): {"pages": N}."""
        self._require_somewhere("search")
        named = self._named_scopes(call, scopes, "search")
        statuses = _list_statuses(status)
        actors = sorted({actor_types} if isinstance(actor_types, str) else set(actor_types or ()))
        auth_sql, auth_params = self._scope_filter("search")
        audit_sql, audit_params = self._scope_filter("audit")
        where = [auth_sql, f"(p.status != 'tombstoned' OR {audit_sql})",
                 "(" + " OR ".join(STATUS_PARTS[s] for s in statuses) + ")"]
        params: list[Any] = [*auth_params, *audit_params]
        if actors:
            where.append("p.actor_type IN (" + ",".join("?" * len(actors)) + ")")
            params += actors
        if named:
            where.append("s.namespace IN (" + ",".join("?" * len(named)) + ")")
            params += named
        (count,) = self._db.execute_sql(
            f"SELECT COUNT(*) FROM page p JOIN scope s ON s.id = p.scope_id WHERE {' AND '.join(where)}",
            params).fetchone()
        call.counts["pages"] = count
        return {"pages": count}

    def _list_partitions(self, named: list[str], order: str) -> list[Any]:
        """Scope ids to walk one by one (None: one walk over every scope)."""
        if named:
            found = self._db.execute_sql(
                "SELECT id FROM scope WHERE namespace IN (" + ",".join("?" * len(named)) + ")", named).fetchall()
            return [r[0] for r in found] or [-1]
        if order == "title":  # the title index starts with the scope: walk each scope when there are few
            sql, params = self._scope_filter("search")
            found = self._db.execute_sql(f"SELECT s.id FROM scope s WHERE {sql} LIMIT 65", params).fetchall()
            if len(found) <= 64:
                return [r[0] for r in found] or [-1]
        return [None]

    def _page_summaries(self, pks: list[int]) -> list[PageSummary]:
        if not pks:
            return []
        cursor = self._db.execute_sql(
            "SELECT p.id, p.page_id, p.head_revision_id, s.namespace, p.title, p.status, p.superseded, p.media_type, "
            "p.actor_type, p.sort_time, p.created_at, p.updated_at FROM page p JOIN scope s ON s.id = p.scope_id "
            f"WHERE p.id IN ({','.join('?' * len(pks))})", pks)
        by_pk = {r.id: r for r in named_rows(cursor, _SummaryRow)}
        return [
            {"page_id": r.page_id, "revision_id": r.head_revision_id, "namespace": r.namespace, "title": r.title,
             "lifecycle_status": effective_status(r.status, r.superseded), "media_type": r.media_type,
             "actor_type": r.actor_type, "sort_time": r.sort_time, "created_at": r.created_at,
             "updated_at": r.updated_at}
            for r in (by_pk[pk] for pk in pks)
        ]

    # --- capabilities, doctor, audit ---

    @operation("describe_capabilities")
    def describe_capabilities(self, call: Call) -> Capabilities:
        """What this store supports; every advertised mode and projection works."""
        return {
            "protocol_version": PROTOCOL_VERSION,
            "search_modes": list(SEARCH_MODES),
            "projections": list(PROJECTIONS),
            "limits": LIMITS.copy(),
            "relation_types": list(RECOMMENDED_RELATION_TYPES),
            "relation_types_open": True,
            "lifecycle_statuses": list(LIFECYCLE_STATUSES),
            "concurrent_revisions": CONCURRENT_REVISIONS_RULE,
            "flags": {
                "event_ingest": True,
                "revision_conflicts": True,
                "sync": True,
                "durable_deletion": True,
                "suppression": True,
                "access_sessions": True,
                "audit_log": True,
            },
        }

    @operation("doctor")
    def doctor(self, call: Call) -> DoctorReport:
        """Integrity check, counts, SQLite version and full-text index state (the owner's: store-wide facts)."""
        if not self.session.is_owner:
            raise Forbidden("Only the owner may run doctor: it reports on the whole store.")
        db = self._db
        integrity = db.execute_sql("PRAGMA quick_check").fetchone()[0]
        counts = {}
        for table in ("scope", "page", "revision", "relation", "lifecycle_event", "suppression", "deletion_receipt", "audit_event"):
            counts[table] = db.execute_sql(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
        try:
            db.execute_sql(f"INSERT INTO {FTS_TABLE}({FTS_TABLE}, rank) VALUES('integrity-check', 0)")
            fts_state = "ok"
        except Exception as exc:  # reported, not raised: doctor describes damage
            fts_state = f"damaged: {exc}"
        fts_rows = db.execute_sql(f"SELECT COUNT(*) FROM {FTS_TABLE}").fetchone()[0]
        report: DoctorReport = {
            "integrity": integrity,
            "sqlite_version": db.execute_sql("SELECT sqlite_version()").fetchone()[0],
            "schema_version": SCHEMA_VERSION,
            "path": str(self.path),
            "owner_id": self.owner_id,
            "counts": counts,
            "fts": {"state": fts_state, "rows": fts_rows, "tokenizer": "unicode61 + CJK per-character segmentation",
                    "secure_delete": True},
            "journal_mode": db.execute_sql("PRAGMA journal_mode").fetchone()[0],
            "warnings": folder_warnings(self.path),
            # Deletions whose erased text may remain in the WAL until a reader lets go of its snapshot.
            "pending_erasures": pending_erasures(db),
            # Scopes made before the namespace rules whose names a new scope could not have now: reported,
            # never renamed (their pages and grants keep working).
            "scope_names": names.refused_scopes(row[0] for row in db.execute_sql("SELECT namespace FROM scope")),
            # Whether the file is encrypted and where the key that unwraps its key lives (no secret).
            "encryption": encryption.status(self.path),
        }
        restore = unfinished(db)
        if restore is not None:  # a grouped `pcp import export` that stopped part way (run it again to complete it)
            report["unfinished_restore"] = restore
        return report

    @operation("audit_log")
    def audit_log(self, call: Call, decision: str | None = None, operation: str | None = None,
                  principal: str | None = None, limit: int | None = None, cursor: str | None = None) -> AuditLog:
        """Audit events, newest first (metadata only)."""
        self._require_somewhere("audit")
        if decision is not None and decision not in ("allowed", "denied", "failed"):
            raise Invalid("decision must be allowed, denied or failed.")
        size = clamp(limit, LIMITS["default_hits"], LIMITS["max_list"])
        after = decode_cursor(cursor, "audit")
        m = self._m
        query = m.AuditEvent.select()
        if not self.session.is_owner:  # a model client with audit sees its own trail only
            query = query.where((m.AuditEvent.principal_type == self.session.principal_type)
                                & (m.AuditEvent.principal_id == self.session.principal_id))
        if decision:
            query = query.where(m.AuditEvent.decision == decision)
        if operation:
            query = query.where(m.AuditEvent.operation == operation)
        if principal and self.session.is_owner and principal in self._owner_ids():
            # The owner named by any of its ids (this store's, or a joined store's alias): its events, whichever
            # store's id it held then (they are recorded as principal `user`; a model client may not pose as it).
            query = query.where(m.AuditEvent.principal_type == "user")
        elif principal:
            query = query.where(m.AuditEvent.principal_id == principal)
        if after:
            query = query.where(m.AuditEvent.id < after["id"])
        rows = list(query.order_by(m.AuditEvent.id.desc()).limit(size + 1))
        more = len(rows) > size
        events: list[AuditEvent] = []
        for r in rows[:size]:
            event: AuditEvent = {
                "event_id": r.event_id, "time": r.time, "principal_type": r.principal_type,
                "principal_id": r.principal_id, "operation": r.operation, "scopes": json.loads(r.scopes),
                "decision": r.decision, "counts": json.loads(r.counts), "duration_ms": r.duration_ms,
                "error_code": r.error_code}
            if r.receipt_id:  # a bulk deletion's events name its receipt
                event["receipt_id"] = r.receipt_id
            events.append(event)
        return {"events": events, "next_cursor": encode_cursor({"k": "audit", "id": rows[size - 1].id}) if more else None}
