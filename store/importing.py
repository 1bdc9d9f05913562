"""The adapter write path: pages found by source id, changes found by content digest, one transaction per unit.

A unit (a conversation, a note) is one transaction. New pages and their relations are
gathered in memory with keys reserved up front and written with one `executemany` per
table when the unit closes, or, inside `bulk_loading`, when its group of units commits
(store/import_groups.py); an existing page is looked up with one query. Only the rare
paths (a changed page gets a revision; a derivation or `supersedes` link needs its cycle
check and counter) go through the general, checked code, after the gathered rows landed.
A page's checks and encodings that need no store are `import_pages.prepare` (a helper process may make them,
store/import_helper.py); a conversation planned there whose pages are all new lands in one pass (`land_new`).

Long because: an import unit's look-ups, its landing of pages (one by one and in one pass), its relations and
its part in a group's rows share the unit's state (keys, pages seen, relations made, permissions checked).
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from contextlib import contextmanager
from collections import Counter
from dataclasses import dataclass
from typing import Any, Callable, Iterator

from . import ids, index
from . import names
from . import validate as v
from .constants import DERIVATION_TYPES
from .core import Call, Part, StoreContext, dumps
from . import bulkwrite, import_helper, stops
from .bulkwrite import RowWriter
from .errors import Invalid
from .import_groups import (BULK_GC_THRESHOLD, IMPORT_GC_THRESHOLD, GroupRows, Held, UnitGroups, fewer_collections,
                            write_scope_times)
from .import_pages import Prepared, payload_json, prepare
from .types import SourceScope
from .writes import WriteOps

__all__ = ["BATCH_SECONDS", "BULK_GC_THRESHOLD", "IMPORT_GC_THRESHOLD", "ImportOps", "ImportUnit", "PageRef", "Prepared", "fewer_collections", "payload_json", "prepare"]


BATCH_SECONDS = 0.5  # inside bulk_loading, units are committed in groups of about this long
_PLAIN_RELATIONS = frozenset({"contains", "responds_to"})  # what importers draw most: known valid


@dataclass(frozen=True)
class PageRef:
    """A page an import touched, and what happened to it."""

    page_id: str
    revision_id: str
    pk: int
    outcome: str  # created | unchanged | revised


class ImportUnit:
    """One all-or-nothing slice of an import (a conversation, a note): pages and relations."""

    def __init__(self, store: WriteOps, call: Call, tool: str, rules: int | None = None,
                 group: GroupRows | None = None) -> None:
        self._store = store
        self._call = call
        self.actor = ("tool", tool)
        self._tool_type, self._tool = self.actor
        self.rules = rules  # the version of the importer's rules (None: an importer that does not say)
        self.counts = {"created": 0, "unchanged": 0, "revised": 0, "relations": 0}
        self._stamp = ids.now()  # one store time for the whole unit: it is one transaction
        self._provenance = dumps([{"operation": "import", "actor_type": "tool", "actor_id": tool,
                                   "timestamp": self._stamp, "input_revision_ids": [],
                                   **({"tool_or_model": f"{tool}/{rules}"} if rules else {})}])
        self._scopes: dict[str, int] = {}  # namespace -> scope pk, permissions checked
        self._names: dict[str, str] = {}  # namespace asked for -> the scope's namespace (its NFC twin, or itself)
        self._pages: dict[int, tuple[str, str]] = {}  # page pk -> (namespace, head revision id)
        self._fresh: set[int] = set()  # pages created in this unit (they have no relations yet)
        self._linked: set[tuple[int, int, str]] = set()
        self._allowed: set[tuple[str, str]] = set()
        # Rows gathered for the unit's transaction: inside a group, added to the group's rows (from `_mark` on).
        self._group = group
        self._writer = group.writer if group is not None else RowWriter(store._db, store._salt)
        self._mark = group.mark() if group is not None else ({}, 0, 0, 0)
        self._held: Held | None = None
        self._created: dict[str, tuple[Any, ...]] = {}  # source key -> its row, for the pages this unit created
        self._known: dict[str, tuple[Any, ...] | None] = {}  # prefetched source ids (None: not in the store)

    # --- scopes and permissions ---

    def ensure_scope(self, namespace: str, display_name: str | None = None, parent: str | None = None) -> str:
        """Create the scope if it does not exist yet (an existing one keeps the user's names); returns the
        namespace the unit writes to for it (`namespace`, or its NFC form when only that exists or is new).
        A name with a refused character is Invalid; a look-alike of another scope is names.LookAlike."""
        ns = v.namespace(namespace)
        self._scope_pk(ns, display_name, parent)
        return self._names.get(ns, ns)

    def exists(self, namespace: str) -> bool:
        """Whether a scope is named exactly `namespace` (one this session may see: never a hidden one)."""
        ns = v.namespace(namespace)
        session = self._store.session
        if not (session.allows("ingest", ns) or session.allows("read", ns)):
            return False
        return self._store._db.execute_sql("SELECT 1 FROM scope WHERE namespace = ?", (ns,)).fetchone() is not None

    def _scope_pk(self, ns: str, display_name: str | None = None, parent: str | None = None) -> int:
        pk = self._scopes.get(ns)
        if pk is None:
            st = self._store
            st._require(self._call, "ingest", ns)
            used = ns
            row = st._db.execute_sql("SELECT id FROM scope WHERE namespace = ?", (ns,)).fetchone()
            if row is None and names.nfc(ns) != ns:  # written to its NFC twin, never beside it
                used = names.nfc(ns)
                st._require(self._call, "ingest", used)
                row = st._db.execute_sql("SELECT id FROM scope WHERE namespace = ?", (used,)).fetchone()
            if row is None:
                st._require(self._call, "manage_scope", used)
                used = st._creatable(used)
                cursor = st._db.execute_sql(
                    "INSERT INTO scope (namespace, owner_id, visibility, display_name, description, parent, "
                    "created_at, updated_at) VALUES (?, ?, 'private', ?, NULL, ?, ?, ?)",
                    (used, st.owner_id, display_name or used, parent, self._stamp, self._stamp))
                pk = cursor.lastrowid
            else:
                pk = row[0]
            self._scopes[ns] = pk
            self._names[ns] = used
        return pk

    def prefetch(self, source_keys: list[str]) -> None:
        """Look up many source ids in one query (a conversation's messages) before upserting them."""
        for part in range(0, len(source_keys), 500):
            keys = source_keys[part:part + 500]
            rows = self._store._db.execute_sql(
                "SELECT sp.source_key, sp.body_digest, p.id, p.page_id, p.head_revision_id, s.namespace "
                "FROM source_page sp JOIN page p ON p.id = sp.page_id JOIN scope s ON s.id = p.scope_id "
                f"WHERE sp.source_key IN ({','.join('?' * len(keys))})", keys).fetchall()
            found = {r[0]: r[1:] for r in rows}
            held = self._group.sources if self._group is not None else {}
            for key in keys:
                self._known[key] = held.get(key) or found.get(key)

    def _allow(self, permission: str, ns: str) -> None:
        if (permission, ns) not in self._allowed:
            self._store._require(self._call, permission, ns)
            self._allowed.add((permission, ns))

    # --- pages ---

    def upsert(self, source_key: str, namespace: str, *, payload: dict[str, Any] | None = None, source_refs: list[Any] | None = None,
               facets: dict[str, Any] | None = None, observed_at: str | None = None, change_key: Any = None) -> PageRef:
        """Create the page for `source_key`, or revise it when its content changed, or leave it.

        `change_key` replaces the source refs in the change digest: a ref naming the export
        file a message came from must not make the same message look changed in a newer file.
        """
        return self.land(source_key, namespace, prepare(payload, source_refs, facets, observed_at, change_key))

    def all_new(self, source_keys: list[str]) -> bool:
        """Whether none of these (prefetched) source ids has a page yet: pages prepared elsewhere with their index
        text (`Prepared.ready`) and counted together are then all created."""
        known = self._known
        return all(key in known and known[key] is None for key in source_keys)

    def land(self, source_key: str, namespace: str, page: Prepared, counted_elsewhere: bool = False) -> PageRef:
        """`upsert` of a page checked and encoded already (`prepare`, here or in a helper process). With
        `counted_elsewhere` its statistics keys come with its unit's (`index_ready`), not from here."""
        row = self._known.pop(source_key) if source_key in self._known else self._lookup(source_key)
        if row is not None and not self._may_see(row[-1]):
            # The source id belongs to a page outside this session's grants. The session gets a
            # page of its own under a key of its own, exactly as if that page did not exist: no
            # outcome, count or error depends on hidden content or names a hidden scope.
            source_key = self._own_key(source_key, v.namespace(namespace))
            row = self._lookup(source_key)
        if row is not None and not page.whole:
            raise ValueError("a page prepared for creation only met a page in the store")  # (chats plans again)
        if row is not None:
            known_digest, pk, page_id, head, ns = row
            self._call.scopes.add(ns)
            if known_digest == page.digest:
                self._pages[pk] = (ns, head)
                self.counts["unchanged"] += 1
                return PageRef(page_id, head, pk, "unchanged")
            rev_id = self._revise(source_key, pk, ns, page.payload, page.refs, page.facets, page.observed, page.digest)
            return PageRef(page_id, rev_id, pk, "revised")
        ns = v.namespace(namespace)
        body_payload = page.payload
        if body_payload is None and page.refs_json == "[]":  # (no source ref)
            raise Invalid(f"{source_key}: a page needs a payload or at least one source ref.")
        scope_pk = self._scope_pk(ns)
        ns = self._names[ns]
        page_pk, rev_pk = self._writer.reserve()
        page_id, rev_id = ids.new_id("pg"), ids.new_id("rev")
        title = page.title
        media = body_payload["media_type"] if body_payload else None
        content = body_payload["content"] if body_payload else None
        tool_type, tool = self.actor
        stamp = self._stamp
        observed = page.observed
        w = self._writer
        ready = page.ready if counted_elsewhere else None
        w.add("page", (page_pk, page_id, scope_pk, rev_pk, rev_id, "active", 0, title, media, tool_type, stamp, stamp,
                       observed or stamp))
        w.add("revision", (rev_pk, rev_id, page_pk, 1, None, scope_pk, stamp, observed, None, None, tool_type, tool,
                           media, content, page.content_digest if ready is not None else v.content_digest(content),
                           title, page.facet_json, page.refs_json, self._provenance))
        if ready is not None and observed is not None:  # (its dates were read against observed_at: so here)
            w.fts.append((rev_pk, ready[0], ready[1], ready[2], index.fts_scope(scope_pk, ready[3])))
        else:
            w.analyse(rev_pk, scope_pk, title, content, page.facets, observed or stamp)
        w.add("source_page", (source_key, page_pk, page.digest))
        self._pages[page_pk] = (ns, rev_id)
        self._fresh.add(page_pk)
        if self._group is not None:
            self._created[source_key] = (page.digest, page_pk, page_id, rev_id, ns)
        self._call.scopes.add(ns)
        self.counts["created"] += 1
        return PageRef(page_id, rev_id, page_pk, "created")

    def land_new(self, namespace: str, pages: list[tuple[str, Prepared]], relations: list[tuple[int, str, int]],
                 df: Counter[str], docs: int, terms: int) -> list[PageRef]:
        """`land` of pages none of which is in the store (`all_new`), whose index text and statistics were made
        elsewhere (`df`, `docs`, `terms`: of those with `ready`), and `relate` of them by their places in `pages`
        (from, `contains` or `responds_to`, to): the same rows, ids and counts as one by one, made in one pass."""
        ns = v.namespace(namespace)
        if any(page.payload is None and page.refs_json == "[]" for _, page in pages):
            raise ValueError("a page without payload or source ref is landed one by one (it is refused)")
        scope_pk = self._scope_pk(ns)
        ns = self._names[ns]
        w = self._writer
        first_page, first_rev = w.reserve_many(len(pages), len(pages))
        tool_type, tool = self.actor
        stamp, provenance = self._stamp, self._provenance
        page_rows, rev_rows, source_rows, fts_rows = w.rows["page"], w.rows["revision"], w.rows["source_page"], w.fts
        created = self._created if self._group is not None else None
        out = []
        minted = ids.new_id_pairs("pg", "rev", len(pages))
        for n, ((key, page), (page_id, rev_id)) in enumerate(zip(pages, minted, strict=True)):
            page_pk, rev_pk = first_page + n, first_rev + n
            body, observed, title, ready = page.payload, page.observed, page.title, page.ready
            media, content = (body["media_type"], body["content"]) if body else (None, None)
            page_rows.append((page_pk, page_id, scope_pk, rev_pk, rev_id, "active", 0, title, media, tool_type, stamp,
                              stamp, observed or stamp))
            made_elsewhere = ready is not None and observed is not None  # (its dates read against observed_at)
            rev_rows.append((rev_pk, rev_id, page_pk, 1, None, scope_pk, stamp, observed, None, None, tool_type, tool,
                             media, content, page.content_digest if made_elsewhere else v.content_digest(content),
                             title, page.facet_json, page.refs_json, provenance))
            if ready is not None and made_elsewhere:
                fts_rows.append((rev_pk, ready[0], ready[1], ready[2], index.fts_scope(scope_pk, ready[3])))
            else:
                w.analyse(rev_pk, scope_pk, title, content, page.facets, observed or stamp)
            source_rows.append((key, page_pk, page.digest))
            self._pages[page_pk] = (ns, rev_id)
            self._fresh.add(page_pk)
            if created is not None:
                created[key] = (page.digest, page_pk, page_id, rev_id, ns)
            out.append(PageRef(page_id, rev_id, page_pk, "created"))
        self._call.scopes.add(ns)
        self.counts["created"] += len(pages)
        self.index_ready(namespace, df, docs, terms)
        relation_rows, linked = w.rows["relation"], self._linked
        relation_ids = iter(ids.new_ids("rel", len(relations)))  # (one lock for all: ids of links not made go unused)
        for source, rtype, target in relations:
            a, b = out[source], out[target]
            key3 = (a.pk, b.pk, rtype)
            if key3 in linked:
                continue
            if ("link", ns) not in self._allowed:
                self._allow("link", ns)
            if ("read", ns) not in self._allowed:
                self._allow("read", ns)
            linked.add(key3)
            relation_rows.append((next(relation_ids), rtype, a.pk, a.revision_id, b.pk, b.revision_id, stamp, tool_type,
                                  tool, 0))
            self.counts["relations"] += 1
        return out

    def index_ready(self, namespace: str, df: Counter[str], docs: int, terms: int) -> None:
        """The statistics of pages this unit landed with their index text made elsewhere (`Prepared.ready`), all
        created in the scope of `namespace`: how many hold each key, how many they are, their term total."""
        if docs:
            self._writer.counted.append((self._scopes[v.namespace(namespace)], df, docs, terms))

    def _lookup(self, source_key: str) -> tuple[Any, ...] | None:
        if self._group is not None and source_key in self._group.sources:
            return self._group.sources[source_key]
        row: tuple[Any, ...] | None = self._store._db.execute_sql(
            "SELECT sp.body_digest, p.id, p.page_id, p.head_revision_id, s.namespace FROM source_page sp "
            "JOIN page p ON p.id = sp.page_id JOIN scope s ON s.id = p.scope_id WHERE sp.source_key = ?",
            (source_key,),
        ).fetchone()
        return row

    def _may_see(self, namespace: str) -> bool:
        session = self._store.session
        return session.allows("ingest", namespace) or session.allows("read", namespace)

    @staticmethod
    def _own_key(source_key: str, namespace: str) -> str:
        """The key a session keeps its copy under when another scope's page holds `source_key`."""
        return f"{source_key}\x1f{namespace}"

    def _revise(self, source_key: str, pk: int, ns: str, payload: dict[str, Any] | None, refs: list[Any], facets: dict[str, Any],
                observed: str | None, digest: str) -> str:
        """The checked path: a new revision of a page whose source content changed."""
        self.flush()
        st, m = self._store, self._store._m
        st._require(self._call, "ingest", ns)
        page = m.Page.select(m.Page, m.Scope).join(m.Scope).where(m.Page.id == pk).first()
        previous = m.Revision.get_by_id(page.head)
        rev = st._insert_revision(
            page, page.scope, previous, previous.seq + 1, self._stamp, payload, refs, facets,
            [{"operation": "import", "input_revision_ids": [previous.revision_id],
              "tool_or_model": self._revised_by(previous)}],
            [(previous.revision_id, page.id)], *self.actor, observed or previous.observed_at,
            previous.valid_from, previous.valid_to,
        )
        m.Page.update(head=rev.id, head_revision_id=rev.revision_id, title=rev.title, media_type=rev.media_type,
                      updated_at=self._stamp, sort_time=rev.observed_at or self._stamp).where(m.Page.id == pk).execute()
        m.SourcePage.update(body_digest=digest).where(m.SourcePage.source_key == source_key).execute()
        self._pages[pk] = (ns, rev.revision_id)
        self.counts["revised"] += 1
        return str(rev.revision_id)

    def _revised_by(self, previous: Any) -> str | None:
        """Who wrote a revision: the importer and its rules version, and, when the page was written
        under older rules, the importer upgrade that changed it."""
        if not self.rules:
            return None
        tool = self.actor[1]
        mine = f"{tool}/{self.rules}"
        events = previous.provenance if isinstance(previous.provenance, list) else json.loads(previous.provenance or "[]")
        before = 1  # written before importers named their rules
        for event in events:
            named = event.get("tool_or_model") if isinstance(event, dict) else None
            if isinstance(named, str) and named.startswith(f"{tool}/"):
                version = named[len(tool) + 1:].split(":", 1)[0]
                before = int(version) if version.isdecimal() else before  # "²" is a digit int() refuses
        if before < self.rules:
            return f"{mine}: importer upgrade from {tool}/{before}"
        return mine

    # --- relations ---

    def relate(self, source: PageRef, relation_type: str, target: PageRef) -> bool:
        """Link two pages of this import unless that live relation already exists; True when created."""
        rtype = relation_type if relation_type in _PLAIN_RELATIONS else v.relation_type(relation_type)
        key = (source.pk, target.pk, rtype)
        if source.pk == target.pk:
            raise Invalid(f"A page never relates to itself: {source.page_id} {rtype} {target.page_id}.")
        if key in self._linked:
            return False
        held = self._group
        pages = self._pages
        for ref in (source, target):
            if ref.pk in pages:
                continue
            if held is not None and ref.pk in held.pages:
                pages[ref.pk] = held.pages[ref.pk]  # written by an earlier unit of this group
                continue
            # a page an earlier unit of the same import wrote
            row = self._store._db.execute_sql(
                "SELECT s.namespace, p.head_revision_id FROM page p JOIN scope s ON s.id = p.scope_id "
                "WHERE p.id = ?", (ref.pk,)).fetchone()
            if row is None:
                raise Invalid(f"Page {ref.page_id} is gone; it cannot be linked.")
            pages[ref.pk] = (row[0], row[1])
        if held is not None and key in held.linked:
            self._linked.add(key)
            return False
        if source.pk not in self._fresh and target.pk not in self._fresh:
            exists = self._store._db.execute_sql(
                "SELECT 1 FROM relation WHERE from_page_id = ? AND to_page_id = ? AND relation_type = ? "
                "AND retracted = 0 LIMIT 1", key).fetchone()
            if exists:
                self._linked.add(key)
                return False
        self._linked.add(key)
        if rtype in DERIVATION_TYPES or rtype == "supersedes":
            self._relate_checked(source, rtype, target)
        else:
            (from_ns, from_head), (to_ns, to_head) = pages[source.pk], pages[target.pk]
            if ("link", from_ns) not in self._allowed:
                self._allow("link", from_ns)
            if ("read", to_ns) not in self._allowed:
                self._allow("read", to_ns)
            self._writer.rows["relation"].append((ids.new_id("rel"), rtype, source.pk, from_head, target.pk, to_head,
                                                  self._stamp, self._tool_type, self._tool, 0))
        self.counts["relations"] += 1
        return True

    def _relate_checked(self, source: PageRef, rtype: str, target: PageRef) -> None:
        """Derivation links need the cycle check, `supersedes` its counter: the general path."""
        self.flush()
        st, m = self._store, self._store._m
        page = m.Page.select(m.Page, m.Scope).join(m.Scope).where(m.Page.id == source.pk).first()
        st._link(self._call, page, m.Revision.get_by_id(page.head), rtype, target.page_id, actor=self.actor)

    # --- landing ---

    def flush(self) -> None:
        """Write the gathered rows now (inside the unit's transaction): the unit's, and inside a group the
        rows of the group's earlier units too (kept, to be written again should this unit fail)."""
        group = self._group
        if group is None:
            self._writer.flush()  # one executemany per table, then the index (store/bulkwrite.py)
            write_scope_times(self._store._db, {pk: self._stamp for pk in self._scopes.values()})
            return
        if self._held is None:
            rows, docs, scopes, fts, counted = group.take()
            counts, ndocs, nfts, ncounted = self._mark
            self._held = ({table: rows[table][:counts.get(table, 0)] for table in rows}, docs[:ndocs], scopes,
                          fts[:nfts], counted[:ncounted])
        group.flush()
        self._mark = group.mark()
        write_scope_times(self._store._db, {pk: self._stamp for pk in self._scopes.values()})

    def close(self) -> None:
        """The unit's work is done: write it (alone), or hand it to its group. A unit that met pages already in
        the store (a re-import) lands at once, so the importer's own checks after it read a current store."""
        group = self._group
        if group is None:
            self.flush()
            return
        group.sources.update(self._created)
        group.pages.update({pk: self._pages[pk] for pk in self._fresh})
        group.linked.update(self._linked)
        for pk in self._scopes.values():
            group.scopes[pk] = self._stamp
        if self.counts["unchanged"] or self.counts["revised"]:
            self.flush()

    def abandon(self) -> None:
        """The unit failed and its savepoint was rolled back: its rows go; the group's rows written inside it
        are written again."""
        group = self._group
        if group is None:
            return
        group.drop_since(self._mark)
        if self._held is not None and self._store._db.in_transaction():
            group.put_back(self._held, self._store._salt)
            self._held = None


def _both(first: Callable[[], None] | None, then: Callable[[], None]) -> Callable[[], None]:
    if first is None:
        return then

    def both() -> None:
        first()
        then()
    return both


class ImportOps(Part):
    """The adapters' write path: import units over the checked write path of `writes`."""

    def __init__(self, ctx: StoreContext, writes: WriteOps) -> None:
        super().__init__(ctx)
        self._writes = writes
        # Per thread (the app shares one Store between worker threads, each with its own connection):
        # how many bulk_loading() blocks are open, and the transaction that groups their units.
        self._bulk = threading.local()

    @contextmanager
    def bulk_loading(self, settle: Callable[[], None] | None = None) -> Iterator[None]:
        """Many import units in a row (an import of many sessions). `settle`, if given, is called before the first
        group commits (what it raises rolls that group back: an import that reads its file as it goes).

        The units are grouped into transactions of about BATCH_SECONDS each (bulkwrite.Groups; a unit
        is then a savepoint: one that fails still leaves nothing, and a stop leaves whole units only),
        and their rows are written once per group (import_groups.GroupRows), so the full-text index
        writes its segments once per group instead of once per unit; the WAL is checkpointed less
        often meanwhile and folded back after each group. Other writers wait at most about one group
        for the store. The garbage collector runs less often meanwhile (IMPORT_GC_THRESHOLD)."""
        bulk = self._bulk
        depth = getattr(bulk, "depth", 0)
        bulk.depth = depth + 1
        if depth == 0:
            bulk.state = UnitGroups(self._db, self._salt, BATCH_SECONDS, settle)
        elif settle is not None:  # inside another bulk load: its next commit waits for this one's settle too
            bulk.state.settle = _both(bulk.state.settle, settle)
        try:
            with bulkwrite.loading(self._db) if depth == 0 else contextlib.nullcontext(), \
                    fewer_collections(IMPORT_GC_THRESHOLD):
                try:
                    yield
                except BaseException:
                    if depth == 0:
                        bulk.state.end(commit=False)
                    raise
                else:
                    if depth == 0:
                        bulk.state.end(commit=True)
        finally:
            bulk.depth = depth
            if depth == 0:
                bulk.state = None

    @contextmanager
    def import_unit(self, tool: str, operation: str = "import", rules: int | None = None) -> Iterator[ImportUnit]:
        """One transaction for one unit of an import: everything in it lands, or nothing does.
        `rules` is the version of the importer's rules, named in the provenance it writes.
        Inside bulk_loading the unit is a savepoint of the group's transaction, and its rows are
        written with the group's."""
        call = Call(operation)
        started = time.perf_counter()
        state: UnitGroups | None = getattr(self._bulk, "state", None)
        group = state.begin_unit() if state is not None else None
        unit: ImportUnit | None = None
        if state is not None and group is None and state.unit is not None:
            state.unit.flush()  # a unit inside a unit of a group takes its keys from the store: land the group's first
        # A group's unit that fails: its audit event goes with the group's rows after the unit's own are dropped, so
        # the events keep the order of the units (the allowed events of the units before it are written at the flush).
        failed: list[tuple[Any, ...]] | None = [] if group is not None else None
        try:
            with self._failures_audited(call, started, failed), self._db.atomic("IMMEDIATE"):
                unit = ImportUnit(self._writes, call, tool, rules, group)
                if state is not None and group is not None:
                    state.unit = unit
                yield unit
                unit.close()
                stops.reached("import-unit")  # tests stop here: the unit written (or handed to its group), not committed
                call.counts.update({k: n for k, n in unit.counts.items() if n})
                if group is not None:  # with the group's rows: one executemany a group, not a statement a unit
                    group.writer.add("audit_event", self._audit_row(call, "allowed", started))
                else:
                    self._append_audit(call, "allowed", started)
        except BaseException:
            if unit is not None:
                unit.abandon()
            if failed and group is not None:
                group.writer.rows["audit_event"].extend(failed)
            raise
        finally:
            if state is not None:
                state.unit_done(group is not None, BATCH_SECONDS)

    def import_helper(self, module: str, size: int) -> import_helper.ImportHelper | None:
        """A helper process to plan the conversations of an export file of `size` bytes with `module`'s
        `helper_items` and `helper_plan` (store/import_helper.py; its `ask` gives it the text), when one may pay
        (a core free, a large export); None: plan here. The caller closes it."""
        return import_helper.start(module, self._salt, size)

    def _settled(self, source_key: str) -> None:
        """Before reading the store for a source id: write this thread's group if it holds that page."""
        state: UnitGroups | None = getattr(self._bulk, "state", None)
        if state is not None and state.rows is not None and source_key in state.rows.sources:
            if state.unit is not None:
                state.unit.flush()  # inside a unit: written again should that unit fail
            else:
                state.rows.flush()

    def source_page_id(self, source_key: str) -> str | None:
        """The page id an adapter created for a source id, if any."""
        self._settled(source_key)
        row = self._db.execute_sql(
            "SELECT p.page_id FROM source_page sp JOIN page p ON p.id = sp.page_id WHERE sp.source_key = ?",
            (source_key,),
        ).fetchone()
        return row[0] if row else None

    def source_scope(self, source_key: str) -> SourceScope | None:
        """Where the page an adapter made for `source_key` lives: {namespace, parent, cwd} (its scope, that
        scope's parent, the page's `cwd` facet), or None when there is none this session may see."""
        self._settled(source_key)
        row = self._db.execute_sql(
            "SELECT s.namespace, s.parent, r.facets FROM source_page sp JOIN page p ON p.id = sp.page_id "
            "JOIN scope s ON s.id = p.scope_id JOIN revision r ON r.id = p.head WHERE sp.source_key = ?",
            (source_key,),
        ).fetchone()
        if row is None or not (self.session.allows("ingest", row[0]) or self.session.allows("read", row[0])):
            return None
        facets = json.loads(row[2] or "{}")
        cwd = facets.get("cwd") if isinstance(facets, dict) else None
        return {"namespace": row[0], "parent": row[1], "cwd": cwd if isinstance(cwd, str) else None}
