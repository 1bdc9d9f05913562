"""Write, revise, ingest, link and unlink: every way new history enters the store.

Long because: every way history enters the store goes through one revision-writing path and its idempotency."""

from __future__ import annotations

import collections
import json
import time
from typing import Any, Callable, Iterable, Iterator, cast

from . import ids
from . import names
from . import validate as v
from .constants import DERIVATION_TYPES
from .core import Call, Part, dumps, operation
from . import index
from . import bulkwrite
from .analyst import Analyst, Made, Pending, Prepared, made_ready
from .bulkwrite import Groups, RowWriter, loading
from .import_groups import fewer_collections
from .errors import Conflict, Cycle, Forbidden, Invalid, NotFound, not_found, shown
from .titles import page_title
from .types import BulkWriteResult, LinkResult, Scope, UnlinkResult, WriteResult

BULK_FIRST_BATCH = 1000  # pages in write_pages_bulk's first batch; later ones are sized by the lock time they take
BULK_MAX_BATCH = 20_000


def counts_as_supersedes(relation_type: str, actor_type: str) -> bool:
    """Whether a live relation makes its target superseded: a model's never does by itself (pcp-core.md §5)."""
    return relation_type == "supersedes" and actor_type != "model"


class WriteOps(Part):
    """Writing: scopes, pages, revisions, events, relations and the bulk path."""

    # --- scopes ---

    @operation("create_scope", write=True)
    def create_scope(
        self, call: Call, namespace: str, display_name: str | None = None, description: str | None = None,
        parent: str | None = None, visibility: str = "private", confirm_lookalike: bool = False,
    ) -> Scope:
        """Create a scope (a namespace) with its display name, description and parent.

        The name is stored in NFC. A name that reads like an existing scope's is refused unless the
        owner confirms it (`confirm_lookalike`); a model client never can."""
        ns = v.namespace(namespace)
        name = names.nfc(ns)
        self._require(call, "manage_scope", name)
        if visibility not in ("private", "shared"):
            raise Invalid("Visibility must be private or shared.")
        if parent is not None:
            v.namespace(parent)
        if self._scope_row(name) is not None or self._scope_row(ns) is not None:
            raise Conflict(f"Scope {names.shown(name)} already exists.")
        scope = self._new_scope(self._creatable(name, confirm_lookalike), display_name, description, parent,
                                visibility)
        return self._scope_dict(scope, 0, None)

    def _creatable(self, name: str, confirmed: bool = False) -> str:
        """`name` (NFC) checked as a new scope's name: no refused character (invalid), and no look-alike of an
        existing scope (refused; the owner may confirm one, a model client never). The message to a model
        client names no other scope."""
        name = names.new_namespace(name)
        if confirmed and not self.session.is_owner:
            raise Forbidden("Only the owner may confirm a scope name that looks like another scope's.")
        if confirmed:
            return name
        other = self.ctx.skeletons.look_alike(self._db, name)
        if other is None:
            return name
        if not self.session.is_owner:
            raise names.LookAlike(f"The namespace {names.shown(name)} looks like another scope's name (a look-alike "
                                  "character); choose another name.", "")
        odd = sorted({names.codepoint(ch) for ch in name if not ch.isascii()} - {names.codepoint(ch) for ch in other})
        raise names.LookAlike(
            f"The namespace {names.shown(name)} looks like the existing scope {names.shown(other)}"
            + (f" ({', '.join(odd)})" if odd else "") + "; to create it anyway, confirm it "
            "(pcp scope create NS --confirm-lookalike).", other)

    def _new_scope(self, ns: str, display_name: str | None = None, description: str | None = None,
                   parent: str | None = None, visibility: str = "private") -> Any:
        stamp = ids.now()
        return self._m.Scope.create(
            namespace=ns, owner_id=self.owner_id, visibility=visibility, display_name=display_name or ns,
            description=description, parent=parent, created_at=stamp, updated_at=stamp,
        )

    def _scope_for_write(self, call: Call, ns: str, permission: str) -> Any:
        """The scope a write lands in: `ns` when it exists, else its NFC form (created if missing, checked)."""
        self._require(call, permission, ns)
        scope = self._scope_row(ns)
        if scope is None:
            name = names.nfc(ns)
            if name != ns:
                self._require(call, permission, name)
                scope = self._scope_row(name)
            if scope is None:
                self._require(call, "manage_scope", name)
                scope = self._new_scope(self._creatable(name))
        return scope

    # --- idempotency ---

    def _replay(self, call: Call, key: str | None, body: Any) -> dict[str, Any] | None:
        """The first result for this key and body; conflict when the body differs."""
        if key is None:
            return None
        m = self._m
        row = m.Idempotency.get_or_none(
            (m.Idempotency.principal == self._principal_key())
            & (m.Idempotency.operation == call.operation)
            & (m.Idempotency.key == key)
        )
        if row is None:
            return None
        if row.body_digest != v.body_digest(body):
            raise Conflict(f"Idempotency key {shown(key)} was already used for a different {call.operation} request.")
        result: dict[str, Any] = json.loads(row.result)
        result["created"] = False
        call.counts["replayed"] = 1
        return result

    def _remember(self, call: Call, key: str | None, body: Any, result: WriteResult | LinkResult, page_pk: int | None) -> None:
        if key is None:
            return
        self._m.Idempotency.create(
            principal=self._principal_key(), operation=call.operation, key=key, body_digest=v.body_digest(body),
            result=dumps(result), page=page_pk, created_at=ids.now(),
        )

    def _principal_key(self) -> str:
        return f"{self.session.principal_type}:{self.session.principal_id}"

    # --- the write path shared by write_page, ingest_event and importers ---

    def _create_page(
        self, call: Call, *, namespace: str, permission: str, payload: dict[str, Any] | None, source_refs: list[dict[str, Any]],
        facets: dict[str, Any], provenance: list[dict[str, Any]], default_operation: str, observed_at: str | None = None,
        valid_from: str | None = None, valid_to: str | None = None, relations: list[dict[str, Any]] | None = None,
        actor: tuple[str, str] | None = None,
    ) -> WriteResult:
        if payload is None and not source_refs:
            raise Invalid("A page needs a payload or at least one source ref.")
        scope = self._scope_for_write(call, namespace, permission)
        stamp = ids.now()
        actor_type, actor_id = actor or (self.session.actor_type, self.session.principal_id)
        inputs = self._check_inputs(call, provenance, scope.namespace, None)
        page = self._m.Page.create(
            page_id=ids.new_id("pg"), scope=scope, status="active", title="", actor_type=actor_type,
            created_at=stamp, updated_at=stamp, sort_time=observed_at or stamp,
        )
        events = provenance or [{"operation": default_operation, "input_revision_ids": [], "tool_or_model": None}]
        rev = self._insert_revision(
            page, scope, None, 1, stamp, payload, source_refs, facets, events, inputs, actor_type, actor_id,
            observed_at, valid_from, valid_to,
        )
        page.head, page.head_revision_id = rev.id, rev.revision_id
        page.title, page.media_type = rev.title, rev.media_type
        page.save()
        for rel in relations or []:
            self._link(call, page, rev, rel["relation_type"], rel["to"])
        scope.updated_at = stamp
        scope.save()
        call.counts["pages"] = call.counts.get("pages", 0) + 1
        return {"page_id": page.page_id, "revision_id": rev.revision_id, "created": True}

    def _insert_revision(
        self, page: Any, scope: Any, previous: Any, seq: int, stamp: str, payload: dict[str, Any] | None,
        source_refs: list[dict[str, Any]], facets: dict[str, Any], events: list[dict[str, Any]], inputs: list[tuple[str, int | None]],
        actor_type: str, actor_id: str, observed_at: str | None, valid_from: str | None, valid_to: str | None,
    ) -> Any:
        provenance = [
            {
                "operation": e["operation"],
                "actor_type": actor_type,
                "actor_id": actor_id,
                "timestamp": stamp,
                "input_revision_ids": e["input_revision_ids"],
                **({"tool_or_model": e["tool_or_model"]} if e.get("tool_or_model") else {}),
            }
            for e in events
        ]
        rev = self._m.Revision.create(
            revision_id=ids.new_id("rev"), page=page, seq=seq,
            previous_revision_id=previous.revision_id if previous is not None else None, scope=scope,
            created_at=stamp, observed_at=observed_at, valid_from=valid_from, valid_to=valid_to,
            actor_type=actor_type, actor_id=actor_id,
            media_type=payload["media_type"] if payload else None,
            content=payload["content"] if payload else None,
            content_digest=v.content_digest(payload["content"]) if payload else None,
            title=page_title(facets, payload, source_refs), facets=dumps(facets),
            source_refs=dumps(source_refs), provenance=dumps(provenance),
        )
        for input_id, input_page in inputs:
            self._m.ProvenanceInput.create(revision=rev, page=page, input_revision_id=input_id, input_page=input_page)
            if input_page is not None and input_page != page.id:
                self._refuse_cycle(input_page, page.id, f"Page {page.page_id} cannot be derived from {input_id}: "
                                   "that input is derived from this page.")
        index.add_revisions(self._db.cursor(), self._salt, [(rev.id, scope.id, rev.title, rev.content, facets,
                                                              rev.observed_at or rev.created_at)],
                            counted=page.status != "tombstoned")
        return rev

    def _check_inputs(self, call: Call, events: list[dict[str, Any]], namespace: str, page: Any) -> list[tuple[str, int | None]]:
        """Provenance inputs must be visible revisions; another scope needs derive_across_scopes."""
        out: list[tuple[str, int | None]] = []
        seen: set[str] = set()
        for event in events:
            resolved = []
            for ident in event["input_revision_ids"]:
                if ids.id_kind(ident) not in ("rev", "pg"):
                    raise Invalid(f"Provenance input {shown(ident)} is not a revision id.")
                src_page, src_rev = self._resolve_revision(ident, call)
                ns = src_page.scope.namespace
                if ns != namespace and not self.session.allows("derive_across_scopes", namespace):
                    raise Forbidden(
                        f"Deriving {namespace} from scope {ns} needs the derive_across_scopes permission on {namespace}."
                    )
                resolved.append(src_rev.revision_id)
                if src_rev.revision_id not in seen:
                    seen.add(src_rev.revision_id)
                    out.append((src_rev.revision_id, src_page.id))
            event["input_revision_ids"] = resolved
        return out

    def _refuse_cycle(self, start: int, goal: int, message: str) -> None:
        """Refuse an edge goal -> start that would close a derivation cycle, revealing nothing hidden.

        The derivation subgraph stays acyclic over every edge. A cycle the session can see is
        `cycle` (its message names only the two visible pages); one that would close only
        through pages the session may not read is `forbidden`, with a message that names no
        page and no path (README, "Relations and access").
        """
        if not self._reaches(start, goal):
            return
        if self.session.is_owner or self._reaches(start, goal, visible_only=True):
            raise Cycle(message)
        raise Forbidden("This session may not make this derivation.")

    def _reaches(self, start: int, goal: int, visible_only: bool = False) -> bool:
        """Whether page `start` is derived (transitively) from page `goal` in the derivation subgraph.

        With `visible_only`, only over edges whose both ends this session may read.
        """
        if start == goal:
            return True
        types = ",".join("?" * len(DERIVATION_TYPES))
        edges = (
            f"SELECT from_page_id AS src, to_page_id AS dst FROM relation WHERE retracted = 0 AND relation_type IN ({types})"
            " UNION ALL SELECT page_id AS src, input_page AS dst FROM provenance_input"
            " WHERE input_page IS NOT NULL AND input_page != page_id"
        )
        params: list[Any] = [start, *DERIVATION_TYPES]
        if visible_only:
            ends, end_params = [], []
            for alias in ("ss", "ds"):
                read_sql, read_params = self._scope_filter("read", f"{alias}.namespace")
                audit_sql, audit_params = self._scope_filter("audit", f"{alias}.namespace")
                ends.append(f"{read_sql} AND ({alias[0]}p.status != 'tombstoned' OR {audit_sql})")
                end_params += [*read_params, *audit_params]
            edges = (
                f"SELECT v.src, v.dst FROM ({edges}) v JOIN page sp ON sp.id = v.src JOIN scope ss ON ss.id = sp.scope_id "
                f"JOIN page dp ON dp.id = v.dst JOIN scope ds ON ds.id = dp.scope_id WHERE {ends[0]} AND {ends[1]}"
            )
            params += end_params
        sql = (
            f"WITH RECURSIVE reach(p) AS (SELECT ? UNION SELECT e.dst FROM reach JOIN ({edges}) e ON e.src = reach.p) "
            "SELECT 1 FROM reach WHERE p = ? LIMIT 1"
        )
        return self._db.execute_sql(sql, (*params, goal)).fetchone() is not None

    # --- public writes ---

    @operation("write_page", write=True)
    def write_page(
        self, call: Call, namespace: str, payload: dict[str, Any] | None = None, *, content: str | None = None,
        media_type: str | None = None, source_refs: list[Any] | None = None, facets: dict[str, Any] | None = None,
        relations: list[Any] | None = None, provenance: list[Any] | None = None, observed_at: str | None = None,
        valid_from: str | None = None, valid_to: str | None = None, idempotency_key: str | None = None,
    ) -> WriteResult:
        """Create a page with its first revision."""
        ns = v.namespace(namespace)
        body_payload = v.payload(payload, content, media_type)
        refs, facet_map = v.source_refs(source_refs), v.facets(facets)
        rels = self._relations_arg(relations)
        events = v.provenance(provenance)
        key = v.idempotency_key(idempotency_key)
        body = {"payload": body_payload, "source_refs": refs, "facets": facet_map, "namespace": ns, "relations": rels}
        replay = self._replay(call, key, body)
        if replay is not None:
            call.scopes.add(ns)
            return cast(WriteResult, replay)
        result = self._create_page(
            call, namespace=ns, permission="write", payload=body_payload, source_refs=refs, facets=facet_map,
            provenance=events, default_operation="write", observed_at=v.optional_time(observed_at, "observed_at"),
            valid_from=v.optional_time(valid_from, "valid_from"), valid_to=v.optional_time(valid_to, "valid_to"),
            relations=rels,
        )
        self._remember(call, key, body, result, self._m.Page.get(self._m.Page.page_id == result["page_id"]).id)
        return result

    def _relations_arg(self, relations: Any) -> list[dict[str, Any]]:
        if relations is None:
            return []
        if not isinstance(relations, list):
            raise Invalid("relations must be a list of {relation_type, to} objects.")
        out = []
        for rel in relations:
            if not isinstance(rel, dict) or not isinstance(rel.get("to"), str):
                raise Invalid("Every relation needs a relation_type and a target id in 'to'.")
            out.append({"relation_type": v.relation_type(rel.get("relation_type")), "to": rel["to"]})
        return out

    @operation("ingest_event", write=True)
    def ingest_event(self, call: Call, event: dict[str, Any], namespace: str, idempotency_key: str, *,
                     tool: str | None = None) -> WriteResult:
        """Turn a raw event (message, tool event, file change) into a source-backed page.

        `tool` names the importer when the owner runs one (actor type `tool`, pcp-core.md section 2).
        """
        ns = v.namespace(namespace)
        key = v.idempotency_key(idempotency_key, required=True)
        if not isinstance(event, dict):
            raise Invalid("An event must be an object with content or source_refs.")
        unknown = set(event) - {"content", "source_refs", "media_type", "observed_at", "facets", "actor_id"}
        if unknown:
            raise Invalid(f"Unknown event field {', '.join(sorted(unknown))}.")
        body_payload = v.payload(None, event.get("content"), event.get("media_type")) if "content" in event else None
        refs, facet_map = v.source_refs(event.get("source_refs")), v.facets(event.get("facets"))
        body = {"event": event, "namespace": ns}
        replay = self._replay(call, key, body)
        if replay is not None:
            call.scopes.add(ns)
            return cast(WriteResult, replay)
        actor_id = event.get("actor_id")
        if actor_id is not None and not isinstance(actor_id, str):
            raise Invalid("actor_id must be a string.")
        # Only the owner names who an event came from; any other session writes its own identity.
        if not self.session.is_owner:
            actor = (self.session.actor_type, self.session.principal_id)
        elif tool:
            actor = ("tool", tool)
        else:
            actor = (self.session.actor_type, actor_id or self.session.principal_id)
        result = self._create_page(
            call, namespace=ns, permission="ingest", payload=body_payload, source_refs=refs, facets=facet_map,
            provenance=[], default_operation="ingest", observed_at=v.optional_time(event.get("observed_at"), "observed_at"),
            actor=actor,
        )
        self._remember(call, key, body, result, self._m.Page.get(self._m.Page.page_id == result["page_id"]).id)
        return result

    @operation("revise_page", write=True)
    def revise_page(
        self, call: Call, page_id: str, expected_revision_id: str, payload: dict[str, Any] | None = None, *,
        content: str | None = None, media_type: str | None = None, source_refs: list[Any] | None = None,
        facets: dict[str, Any] | None = None, provenance: list[Any] | None = None, observed_at: str | None = None,
        idempotency_key: str | None = None,
    ) -> WriteResult:
        """Add a revision on top of `expected_revision_id`; a stale expectation is a conflict."""
        if not isinstance(expected_revision_id, str) or not expected_revision_id:
            raise Invalid("revise_page needs expected_revision_id (the revision you read).")
        key = v.idempotency_key(idempotency_key)
        page = self._page_row(page_id, call, "revise")
        previous = self._m.Revision.get_by_id(page.head)
        # After a sync, concurrent revisions (store/sync): either head may be revised, and the new revision resolves both.
        row = self._db.execute_sql("SELECT revision_ids FROM sync_conflict WHERE page_id = ?", (page.id,)).fetchone()
        others = json.loads(row[0]) if row else []
        if expected_revision_id in others:
            previous = self._m.Revision.get(self._m.Revision.revision_id == expected_revision_id)
            others = [page.head_revision_id, *[o for o in others if o != expected_revision_id]]
        # What is not given is carried over, the media type included.
        new_payload = v.payload(payload, content, media_type if media_type is not None or content is None
                                else (previous.media_type or "text/markdown"))
        if new_payload is None and media_type is not None and previous.content is not None:
            new_payload = v.payload(None, previous.content, media_type)
        refs = v.source_refs(source_refs) if source_refs is not None else None
        facet_map = v.facets(facets) if facets is not None else None
        events = v.provenance(provenance)
        body = {"page_id": page.page_id, "expected": expected_revision_id, "payload": new_payload,
                "source_refs": refs, "facets": facet_map, "observed_at": observed_at}
        replay = self._replay(call, key, body)
        if replay is not None:
            return cast(WriteResult, replay)
        if previous.revision_id != expected_revision_id:
            raise Conflict(
                f"Page {page.page_id} has moved on: you expected {expected_revision_id} but the current revision is "
                f"{page.head_revision_id}; read it and revise again."
            )
        if new_payload is None and previous.content is not None:
            new_payload = {"media_type": previous.media_type, "content": previous.content}
        refs = refs if refs is not None else json.loads(previous.source_refs)
        facet_map = facet_map if facet_map is not None else json.loads(previous.facets)
        if new_payload is None and not refs:
            raise Invalid("A revision needs a payload or at least one source ref.")
        stamp = ids.now()
        revise_event = {"operation": "revise", "input_revision_ids": [previous.revision_id, *others], "tool_or_model": None}
        ns = page.scope.namespace
        inputs = self._check_inputs(call, events, ns, page)
        inputs[0:0] = [(previous.revision_id, page.id), *[(o, page.id) for o in others]]
        observed = v.optional_time(observed_at, "observed_at") if observed_at is not None else previous.observed_at
        rev = self._insert_revision(
            page, page.scope, previous, previous.seq + 1, stamp, new_payload, refs, facet_map,
            [revise_event, *events], inputs, self.session.actor_type, self.session.principal_id,
            observed, previous.valid_from, previous.valid_to,
        )
        moved = (
            self._m.Page.update(
                head=rev.id, head_revision_id=rev.revision_id, title=rev.title, media_type=rev.media_type,
                updated_at=stamp, sort_time=observed or stamp,
            )
            .where((self._m.Page.id == page.id) & (self._m.Page.head_revision_id == page.head_revision_id))
            .execute()
        )
        if moved != 1:  # another writer moved the head inside our window: nothing of ours survives
            raise Conflict(f"Page {page.page_id} was revised concurrently; read it and revise again.")
        if others:
            self._db.execute_sql("DELETE FROM sync_conflict WHERE page_id = ?", (page.id,))
        call.counts["revisions"] = 1
        result: WriteResult = {"page_id": page.page_id, "revision_id": rev.revision_id, "created": True}
        self._remember(call, key, body, result, page.id)
        return result

    @operation("link_pages", write=True)
    def link_pages(self, call: Call, from_id: str, relation_type: str, to_id: str, idempotency_key: str | None = None) -> LinkResult:
        """Add a typed, directed relation between two revisions (page ids resolve to their heads)."""
        rtype = v.relation_type(relation_type)
        key = v.idempotency_key(idempotency_key)
        body = {"from": from_id, "relation_type": rtype, "to": to_id}
        replay = self._replay(call, key, body)
        if replay is not None:
            return cast(LinkResult, replay)
        from_page, from_rev = self._resolve_revision(from_id, call)
        result = self._link(call, from_page, from_rev, rtype, to_id)
        self._remember(call, key, body, result, from_page.id)
        return result

    def _link(self, call: Call, from_page: Any, from_rev: Any, rtype: str, to_id: str,
              actor: tuple[str, str] | None = None) -> LinkResult:
        self._require(call, "link", from_page.scope.namespace)
        to_page, to_rev = self._resolve_revision(to_id, call)
        if to_page.id == from_page.id:
            if rtype in DERIVATION_TYPES:
                raise Cycle(f"Linking {from_page.page_id} {rtype} {to_page.page_id} would make a page derived from itself.")
            raise Invalid(f"A page never relates to itself: {from_page.page_id} {rtype} {to_page.page_id}.")
        actor_type, actor_id = actor or (self.session.actor_type, self.session.principal_id)
        m = self._m
        same = m.Relation.get_or_none(
            (m.Relation.from_page == from_page.id) & (m.Relation.to_page == to_page.id)
            & (m.Relation.relation_type == rtype) & (m.Relation.retracted == 0)
            & (m.Relation.actor_type == actor_type) & (m.Relation.actor_id == actor_id)
        )
        if same is not None:  # a repeated identical relation: the one that exists
            call.counts["replayed"] = 1
            return {
                "relation_id": same.relation_id, "from_page_id": from_page.page_id,
                "from_revision_id": same.from_revision_id, "to_page_id": to_page.page_id,
                "to_revision_id": same.to_revision_id, "relation_type": rtype, "created": False,
            }
        if rtype in DERIVATION_TYPES:
            self._refuse_cycle(to_page.id, from_page.id,
                               f"Linking {from_page.page_id} {rtype} {to_page.page_id} would make a page derived from itself.")
        stamp = ids.now()
        rel = self._m.Relation.create(
            relation_id=ids.new_id("rel"), relation_type=rtype, from_page=from_page, from_revision_id=from_rev.revision_id,
            to_page=to_page, to_revision_id=to_rev.revision_id, created_at=stamp,
            actor_type=actor_type, actor_id=actor_id,
        )
        if counts_as_supersedes(rtype, actor_type):
            self._m.Page.update(superseded=self._m.Page.superseded + 1).where(self._m.Page.id == to_page.id).execute()
        call.counts["relations"] = call.counts.get("relations", 0) + 1
        return {
            "relation_id": rel.relation_id, "from_page_id": from_page.page_id, "from_revision_id": from_rev.revision_id,
            "to_page_id": to_page.page_id, "to_revision_id": to_rev.revision_id, "relation_type": rtype, "created": True,
        }

    @operation("unlink", write=True)
    def unlink(self, call: Call, relation_id: str, reason: str) -> UnlinkResult:
        """Retract a relation: recorded with who, when and why, and hidden from then on."""
        why = v.reason(reason)
        m = self._m
        rel = m.Relation.get_or_none(m.Relation.relation_id == relation_id) if ids.id_kind(relation_id) == "rel" else None
        if rel is None or rel.retracted:
            raise not_found("relation", relation_id)
        # A relation with an end this session may not see is answered like one that does not exist.
        try:
            self._page_row(rel.to_page.page_id, call, "read")
            from_page = self._page_row(rel.from_page.page_id, call, "link")
        except NotFound:
            raise not_found("relation", relation_id) from None
        event_id = ids.new_id("evt")
        m.Retraction.create(
            event_id=event_id, relation=rel, actor_type=self.session.actor_type, actor_id=self.session.principal_id,
            reason=why, created_at=ids.now(),
        )
        m.Relation.update(retracted=1).where(m.Relation.id == rel.id).execute()
        if counts_as_supersedes(rel.relation_type, rel.actor_type):
            m.Page.update(superseded=m.Page.superseded - 1).where(m.Page.id == rel.to_page_id).execute()
        call.scopes.add(from_page.scope.namespace)
        return {"relation_id": rel.relation_id, "retracted": True, "event_id": event_id}

    # --- bulk path (imports, benchmarks): one transaction and one audit event per batch ---

    def write_pages_bulk(
        self, items: Iterable[dict[str, Any]], namespace: str, batch_size: int | None = None,
        progress: Callable[[int, int | None], None] | None = None, total: int | None = None,
    ) -> BulkWriteResult:
        """Write many simple pages ({content, media_type?, facets?, observed_at?}) in batches.

        Each batch is made ready (checked, titled, its index terms analysed) before it takes the write
        lock, then written through the bulk path (store/bulkwrite.py) in a transaction of its own; a
        writer that waits for the lock gets it between two batches. Without `batch_size`, batches are
        sized to hold the lock about bulkwrite.GROUP_SECONDS (fewer commits, each folding more into the index).
        A long write makes the next batch ready in a helper process while this one is written, while a core is free
        (store/analyst.py, store/cores.py)."""
        ns = v.namespace(namespace)
        created = 0
        groups = Groups(self._db)
        size = batch_size or BULK_FIRST_BATCH
        analyst = Analyst(self._salt)
        # The batches given and not written yet, in order: each leaves once its write is done (or refused),
        # so a ^C that stops the write anywhere else (in the gap for other writers, mid-transaction, rolled
        # back) leaves it here to be written before the ^C is raised on.
        given: collections.deque[tuple[str, list[dict[str, Any]], Pending]] = collections.deque()
        refused = False
        ahead = _ReadAhead(items, lambda: 2 * size)

        def land_first() -> None:
            nonlocal created, size, refused
            stamp, items, pending = given[0]
            ready = pending.result()
            if ready is None:  # an item is refused: made ready again here, to raise why (audited)
                try:
                    with self._failures_audited(Call("write_pages_bulk"), time.perf_counter()):
                        ready = made_ready(self._salt, stamp, items)
                except Exception:
                    refused = True  # (nothing after it is written)
                    raise
            groups.wait_turn(ahead.fill)  # while the lock is let go, the caller's next items are read
            started = time.monotonic()
            try:
                done = self._bulk_write(ns, stamp, items, ready)  # its own transaction, with its audit event
            except Exception:
                refused = True  # (refused, or the store failed: nothing after it is written)
                raise
            given.popleft()
            took = time.monotonic() - started
            groups.released()
            created += done
            if not batch_size:
                size = bulkwrite.next_size(size, done, took, BULK_FIRST_BATCH // 4, BULK_MAX_BATCH)
            if progress:
                progress(created, total)

        # The WAL checkpointed every 20,000 pages meanwhile, and at the end; the collector run as seldom as in an
        # import (at the default threshold it ran every 700 objects a batch left: 2 % of the writer's CPU).
        with loading(self._db), fewer_collections():
            try:
                for batch in _batches(ahead, lambda: size):
                    stamp = ids.now()  # the batch's store time, taken before it is made ready
                    given.append((stamp, batch, analyst.submit(stamp, batch)))
                    if len(given) > 1:
                        land_first()  # the batch before, while this one is made ready (in the helper, if one runs)
                while given:
                    land_first()
            except (Exception, KeyboardInterrupt):  # the iterator failed, or a ^C: what it gave is written first
                while given and not refused:
                    land_first()
                raise
            finally:
                analyst.close()
        return {"created": created}

    @operation("write_pages_bulk", write=True)
    def _bulk_write(self, call: Call, ns: str, stamp: str, items: list[dict[str, Any]],
                    ready: tuple[list[Made], Prepared]) -> int:
        scope = self._scope_for_write(call, ns, "write")
        actor_type, actor_id = self.session.actor_type, self.session.principal_id
        writer = RowWriter(self._db, self._salt)
        # Every page of a batch shares one store time and actor, hence one provenance document.
        provenance = dumps([{"operation": "write", "actor_type": actor_type, "actor_id": actor_id,
                             "timestamp": stamp, "input_revision_ids": []}])
        made, (analysed, df) = ready
        id_pairs = ids.new_id_pairs("pg", "rev", len(items))
        scope_pk = scope.id
        pages, revisions, fts = writer.rows["page"], writer.rows["revision"], []
        fts_scope = index.fts_scope
        terms = 0
        first_page, first_rev = writer.reserve_many(len(items), len(items))
        for n, (item, (media_type, facets_json, observed, title, digest), (page_id, rev_id),
                (t_text, b_text, m_text, dates, count)) in enumerate(zip(items, made, id_pairs, analysed, strict=True)):
            page_pk, rev_pk = first_page + n, first_rev + n
            content = item["content"]  # (checked as it is: a payload is stored unchanged)
            pages.append((page_pk, page_id, scope_pk, rev_pk, rev_id, "active", 0, title, media_type,
                          actor_type, stamp, stamp, observed or stamp))
            revisions.append((rev_pk, rev_id, page_pk, 1, None, scope_pk, stamp, observed, None, None, actor_type,
                              actor_id, media_type, content, digest, title, facets_json, "[]", provenance))
            fts.append((rev_pk, t_text, b_text, m_text, fts_scope(scope_pk, dates)))
            terms += count
        writer.index_prepared(fts, scope_pk, df, terms)
        writer.flush()
        call.counts["pages"] = len(items)
        return len(items)


class _ReadAhead:
    """The items of a bulk write, some read ahead (`fill`) while the write lock is let go to other writers:
    a caller's iterator that does work per item (generating, parsing a file) does it in that gap instead of
    the bulk write sleeping through it. An error of the iterator met while reading ahead is raised where the
    item would have been, after every item it gave before."""

    def __init__(self, items: Iterable[dict[str, Any]], most: Callable[[], int]) -> None:
        self._source = iter(items)
        self._most = most
        self._ahead: collections.deque[dict[str, Any]] = collections.deque()
        self._end: BaseException | None = None  # StopIteration, or the iterator's error, once met ahead

    def fill(self) -> bool:
        """Read one item ahead; False when there is nothing more to read now (the end, an error, enough)."""
        if self._end is not None or len(self._ahead) >= self._most():
            return False
        try:
            self._ahead.append(next(self._source))
        except (Exception, KeyboardInterrupt) as exc:  # (StopIteration, ^C too: raised again in its place)
            self._end = exc
            return False
        return True

    def __iter__(self) -> Iterator[dict[str, Any]]:
        while True:
            if self._ahead:
                yield self._ahead.popleft()
            elif self._end is not None:
                if isinstance(self._end, StopIteration):
                    return
                raise self._end
            else:
                try:
                    item = next(self._source)
                except StopIteration:
                    return
                yield item


def _batches(items: Iterable[dict[str, Any]], size: Callable[[], int]) -> Iterator[list[dict[str, Any]]]:
    """`items` in lists of `size()` (read anew for each list), the last one shorter. Should the items'
    iterator fail, the list begun is given first and the error raised after it (what it gave is written)."""
    batch: list[dict[str, Any]] = []
    try:
        for item in items:
            batch.append(item)
            if len(batch) >= size():
                yield batch
                batch = []
    except (Exception, KeyboardInterrupt):  # (not GeneratorExit: a generator closed may not yield again)
        if batch:
            yield batch
        raise
    if batch:
        yield batch
