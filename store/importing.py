"""The adapter write path: pages found by source id, changes found by content digest, one transaction per unit."""

from __future__ import annotations

import time
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Iterator

import peewee as pw

from . import ids
from . import validate as v
from .core import Call, _storage_error
from .errors import PcpError
from .writes import WriteOps


@dataclass(frozen=True)
class PageRef:
    """A page an import touched, and what happened to it."""

    page_id: str
    revision_id: str
    pk: int
    outcome: str  # created | unchanged | revised


class ImportUnit:
    """One all-or-nothing slice of an import (a conversation, a note): pages and relations."""

    def __init__(self, store: "ImportOps", call: Call, tool: str) -> None:
        self._store = store
        self._call = call
        self.actor = ("tool", tool)
        self.counts = {"created": 0, "unchanged": 0, "revised": 0, "relations": 0}

    def upsert(self, source_key: str, namespace: str, *, payload: dict | None = None, source_refs: list | None = None,
               facets: dict | None = None, observed_at: str | None = None, change_key: Any = None) -> PageRef:
        """Create the page for `source_key`, or revise it when its content changed, or leave it.

        `change_key` replaces the source refs in the change digest: a ref naming the export
        file a message came from must not make the same message look changed in a newer file.
        """
        st, m = self._store, self._store._m
        body_payload = v.payload(payload) if payload is not None else None
        refs, facet_map = v.source_refs(source_refs), v.facets(facets)
        observed = v.optional_time(observed_at, "observed_at")
        digest = v.body_digest({"payload": body_payload, "facets": facet_map,
                                "source_refs": refs if change_key is None else change_key})
        known = m.SourcePage.get_or_none(m.SourcePage.source_key == source_key)
        if known is not None:
            page = m.Page.select(m.Page, m.Scope).join(m.Scope).where(m.Page.id == known.page_id).first()
            self._call.scopes.add(page.scope.namespace)
            if known.body_digest == digest:
                self.counts["unchanged"] += 1
                return PageRef(page.page_id, page.head_revision_id, page.id, "unchanged")
            st._require(self._call, "ingest", page.scope.namespace)
            previous = m.Revision.get_by_id(page.head)
            stamp = ids.now()
            rev = st._insert_revision(
                page, page.scope, previous, previous.seq + 1, stamp, body_payload, refs, facet_map,
                [{"operation": "import", "input_revision_ids": [previous.revision_id], "tool_or_model": None}],
                [(previous.revision_id, page.id)], *self.actor, observed or previous.observed_at,
                previous.valid_from, previous.valid_to,
            )
            m.Page.update(head=rev.id, head_revision_id=rev.revision_id, title=rev.title, media_type=rev.media_type,
                          updated_at=stamp, sort_time=rev.observed_at or stamp).where(m.Page.id == page.id).execute()
            m.SourcePage.update(body_digest=digest).where(m.SourcePage.source_key == source_key).execute()
            self.counts["revised"] += 1
            return PageRef(page.page_id, rev.revision_id, page.id, "revised")
        result = st._create_page(
            self._call, namespace=v.namespace(namespace), permission="ingest", payload=body_payload, source_refs=refs,
            facets=facet_map, provenance=[], default_operation="import", observed_at=observed, actor=self.actor,
        )
        page = m.Page.get(m.Page.page_id == result["page_id"])
        m.SourcePage.create(source_key=source_key, page=page.id, body_digest=digest)
        self.counts["created"] += 1
        return PageRef(page.page_id, result["revision_id"], page.id, "created")

    def ensure_scope(self, namespace: str, display_name: str | None = None, parent: str | None = None) -> None:
        """Create the scope if it does not exist yet (an existing one keeps the user's names)."""
        st = self._store
        ns = v.namespace(namespace)
        st._require(self._call, "ingest", ns)
        if st._scope_row(ns) is None:
            st._require(self._call, "manage_scope", ns)
            st._new_scope(ns, display_name, None, parent)

    def relate(self, source: PageRef, relation_type: str, target: PageRef) -> bool:
        """Link two imported pages unless that live relation already exists; True when created."""
        st, m = self._store, self._store._m
        exists = m.Relation.select(m.Relation.id).where(
            (m.Relation.from_page == source.pk) & (m.Relation.to_page == target.pk)
            & (m.Relation.relation_type == relation_type) & (m.Relation.retracted == 0)
        ).exists()
        if exists:
            return False
        page = m.Page.select(m.Page, m.Scope).join(m.Scope).where(m.Page.id == source.pk).first()
        rev = m.Revision.get_by_id(page.head)
        st._link(self._call, page, rev, v.relation_type(relation_type), target.page_id)
        self.counts["relations"] += 1
        return True


class ImportOps(WriteOps):
    @contextmanager
    def import_unit(self, tool: str, operation: str = "import") -> Iterator[ImportUnit]:
        """One transaction for one unit of an import: everything in it lands, or nothing does."""
        call = Call(operation)
        started = time.perf_counter()
        try:
            with self._db.atomic("IMMEDIATE"):
                unit = ImportUnit(self, call, tool)
                yield unit
                call.counts.update({k: n for k, n in unit.counts.items() if n})
                self._append_audit(call, "allowed", started)
        except PcpError as exc:
            self._audit_failure(call, exc, started)
            raise
        except pw.OperationalError as exc:
            err = _storage_error(exc)
            self._audit_failure(call, err, started)
            raise err from None

    def source_page_id(self, source_key: str) -> str | None:
        """The page id an adapter created for a source id, if any."""
        m = self._m
        row = (m.SourcePage.select(m.Page.page_id).join(m.Page, on=(m.SourcePage.page == m.Page.id))
               .where(m.SourcePage.source_key == source_key).tuples().first())
        return row[0] if row else None
