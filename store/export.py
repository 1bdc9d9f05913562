"""The user's right to take everything out (pcp-core.md section 7): a streamed JSON Lines export,
its import (ids kept verbatim, idempotent), and a human-readable Markdown folder.

Long because: the JSON Lines export and its import read and write one format symmetrically; the Markdown folder
writer is the piece to carve out next."""

from __future__ import annotations

import errno
import hashlib
import json
import os
import re
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator, NamedTuple, Protocol, Sequence, TypeVar


from . import conversation_markdown as cmd
from . import crypt, ids, sealed
from .constants import Progress
from .db import unmapped
from .core import Call, Part, StoreContext, dumps, named_rows, operation
from .errors import Conflict, Forbidden, Invalid
from .export_check import header_aliases
from .reads import RELATION_COLUMNS, RelationRow, effective_status, relation_dict
from .files import ExportFolder, make_private_dirs, open_private, refuse_store_target, temp_beside
from .restore import Restore
from .restore_file import END_KIND, EXPORT_KIND, Helpers, check_file
from .types import ExportCounts, ExportResult, ImportExportResult

STREAM_BATCH = 1000
Row = TypeVar("Row", bound=tuple[Any, ...])  # a NamedTuple whose first field is the keyset key


# Rows of the export's SELECTs, by the names of their columns (checked by core.named_rows).
class _PageRow(NamedTuple):
    page_id: str
    namespace: str
    created_at: str
    updated_at: str
    status: str
    head_revision_id: str
    actor_type: str


class _RevisionRow(NamedTuple):
    page_id: str
    seq: int
    revision_id: str
    previous_revision_id: str | None
    namespace: str
    visibility: str
    created_at: str
    observed_at: str | None
    valid_from: str | None
    valid_to: str | None
    actor_type: str
    actor_id: str
    media_type: str | None
    content: str | None
    source_refs: str
    facets: str
    provenance: str
    content_digest: str | None
    status: str
    superseded: int
    at_head: int


class _RetractionRow(NamedTuple):
    event_id: str
    relation_id: str
    actor_type: str
    actor_id: str
    reason: str
    created_at: str


class _LifecycleRow(NamedTuple):
    event_id: str
    page_id: str
    from_status: str
    to_status: str
    actor_type: str
    actor_id: str
    reason: str
    created_at: str


class _SuppressionRow(NamedTuple):
    key: str
    page_id: str
    context_id: str
    reason: str | None
    expires_at: str | None
    actor_type: str
    actor_id: str
    created_at: str


class _RecommendationRow(NamedTuple):
    recommendation_id: str
    page_id: str
    action: str
    reason: str
    actor_type: str
    actor_id: str
    status: str
    created_at: str


class _SourcePageRow(NamedTuple):
    source_key: str
    page_id: str
    body_digest: str


class _ReceiptRow(NamedTuple):
    receipt_id: str
    namespace: str | None
    page_ids: str
    revision_ids: str
    counts: str
    actor_type: str
    actor_id: str
    reason: str
    created_at: str


class _MarkdownRow(NamedTuple):
    page_id: str
    namespace: str
    status: str
    superseded: int
    revision_id: str
    created_at: str
    observed_at: str | None
    media_type: str | None
    content: str | None
    title: str
    source_refs: str
    facets: str
    pk: int


def _line(obj: dict[str, Any]) -> bytes:
    return (dumps(obj) + "\n").encode("utf-8")


class RecordSource(Protocol):
    """Records kept outside the page tables (the handoff ledger) that an export carries and its import restores."""

    def export_records(self, in_scopes: str, full: bool) -> Iterator[dict[str, Any]]:
        """Export lines of this source (`in_scopes` is the export's page filter, `full` a whole-store export)."""
        ...

    def record_importers(self) -> dict[str, Callable[[dict[str, Any]], bool]]:
        """Line kind -> its importer (True when the record was added, False when already present)."""
        ...


class ExportOps(Part):
    """Export (JSON Lines, Markdown) and its import; `sources` add the records kept outside the page tables."""

    def __init__(self, ctx: StoreContext, sources: Sequence[RecordSource]) -> None:
        super().__init__(ctx)
        self._sources = tuple(sources)
        self._source_importers = {kind: fn for source in self._sources for kind, fn in source.record_importers().items()}

    # --- what goes out ---

    def _export_scopes(self, call: Call, scopes: Any) -> list[Any]:
        if not self.session.is_owner:
            raise Forbidden("Only the owner may export the store.")
        m = self._m
        rows = list(m.Scope.select().order_by(m.Scope.namespace))
        if scopes:
            wanted = {scopes} if isinstance(scopes, str) else set(scopes)
            missing = sorted(wanted - {s.namespace for s in rows})
            if missing:
                raise Invalid(f"No scope named {', '.join(missing)}; `pcp scopes` lists them.")
            rows = [s for s in rows if s.namespace in wanted]
        call.scopes.update(s.namespace for s in rows)
        return rows

    def _iter_rows(self, sql: str, params: tuple[Any, ...], row: Callable[..., Row]) -> Iterator[Row]:
        """Stream rows (as `row`, keyed by its first column) in keyset batches so memory stays flat."""
        last = ""
        while True:
            rows = named_rows(self._db.execute_sql(sql, (*params, last, STREAM_BATCH)), row)
            if not rows:
                return
            yield from rows
            last = rows[-1][0]

    def _export_lines(self, scope_rows: list[Any], full: bool, counts: ExportCounts) -> Iterator[dict[str, Any]]:
        scope_ids = [s.id for s in scope_rows]
        in_scopes = "1" if full else f"p.scope_id IN ({','.join(str(i) for i in scope_ids) or 'NULL'})"
        for s in scope_rows:
            yield {"kind": "scope", "namespace": s.namespace, "display_name": s.display_name,
                   "description": s.description, "parent": s.parent, "visibility": s.visibility,
                   "owner_id": s.owner_id, "created_at": s.created_at, "updated_at": s.updated_at}
        for p in self._iter_rows(
            "SELECT p.page_id, s.namespace, p.created_at, p.updated_at, p.status, p.head_revision_id, p.actor_type "
            f"FROM page p JOIN scope s ON s.id = p.scope_id WHERE {in_scopes} AND p.page_id > ? ORDER BY p.page_id LIMIT ?",
            (), _PageRow,
        ):
            yield {"kind": "page", **p._asdict()}
        yield from self._revision_lines(in_scopes)
        both_ends = "1" if full else (
            f"r.from_page_id IN (SELECT p.id FROM page p WHERE {in_scopes}) AND "
            f"r.to_page_id IN (SELECT p.id FROM page p WHERE {in_scopes})"
        )
        for rel in self._iter_rows(
            f"SELECT {RELATION_COLUMNS} FROM relation r JOIN page fp ON fp.id = r.from_page_id "
            f"JOIN page tp ON tp.id = r.to_page_id WHERE {both_ends} AND r.relation_id > ? ORDER BY r.relation_id LIMIT ?",
            (), RelationRow,
        ):
            yield {"kind": "relation", **relation_dict(rel)}
        for t in self._iter_rows(
            "SELECT x.event_id, r.relation_id, x.actor_type, x.actor_id, x.reason, x.created_at FROM retraction x "
            f"JOIN relation r ON r.id = x.relation_id WHERE {both_ends} AND x.event_id > ? ORDER BY x.event_id LIMIT ?",
            (), _RetractionRow,
        ):
            yield {"kind": "retraction", "event_id": t.event_id, "relation_id": t.relation_id,
                   "actor": {"actor_type": t.actor_type, "actor_id": t.actor_id}, "reason": t.reason,
                   "created_at": t.created_at}
        for e in self._iter_rows(
            "SELECT e.event_id, p.page_id, e.from_status, e.to_status, e.actor_type, e.actor_id, e.reason, e.created_at "
            f"FROM lifecycle_event e JOIN page p ON p.id = e.page_id WHERE {in_scopes} AND e.event_id > ? "
            "ORDER BY e.event_id LIMIT ?", (), _LifecycleRow,
        ):
            yield {"kind": "lifecycle_event", "event_id": e.event_id, "page_id": e.page_id, "from": e.from_status,
                   "to": e.to_status, "actor": {"actor_type": e.actor_type, "actor_id": e.actor_id},
                   "reason": e.reason, "created_at": e.created_at}
        for sup in self._iter_rows(
            "SELECT x.context_id || ' ' || p.page_id AS key, p.page_id, x.context_id, x.reason, x.expires_at, "
            f"x.actor_type, x.actor_id, x.created_at FROM suppression x JOIN page p ON p.id = x.page_id WHERE {in_scopes} "
            "AND x.context_id || ' ' || p.page_id > ? ORDER BY x.context_id || ' ' || p.page_id LIMIT ?", (),
            _SuppressionRow,
        ):
            yield {"kind": "suppression", "page_id": sup.page_id, "context_id": sup.context_id, "reason": sup.reason,
                   "expires_at": sup.expires_at, "actor": {"actor_type": sup.actor_type, "actor_id": sup.actor_id},
                   "created_at": sup.created_at}
        for rec in self._iter_rows(
            "SELECT x.recommendation_id, p.page_id, x.action, x.reason, x.actor_type, x.actor_id, x.status, x.created_at "
            f"FROM recommendation x JOIN page p ON p.id = x.page_id WHERE {in_scopes} AND x.recommendation_id > ? "
            "ORDER BY x.recommendation_id LIMIT ?", (), _RecommendationRow,
        ):
            yield {"kind": "recommendation", "recommendation_id": rec.recommendation_id, "page_id": rec.page_id,
                   "action": rec.action, "reason": rec.reason,
                   "actor": {"actor_type": rec.actor_type, "actor_id": rec.actor_id}, "status": rec.status,
                   "created_at": rec.created_at}
        for sp in self._iter_rows(
            "SELECT x.source_key, p.page_id, x.body_digest FROM source_page x JOIN page p ON p.id = x.page_id "
            f"WHERE {in_scopes} AND x.source_key > ? ORDER BY x.source_key LIMIT ?", (), _SourcePageRow,
        ):
            yield {"kind": "source_page", **sp._asdict()}
        if full:
            for d in self._iter_rows(
                "SELECT receipt_id, namespace, page_ids, revision_ids, counts, actor_type, actor_id, reason, created_at "
                "FROM deletion_receipt WHERE receipt_id > ? ORDER BY receipt_id LIMIT ?", (), _ReceiptRow,
            ):
                yield {"kind": "receipt", "receipt_id": d.receipt_id, "namespace": d.namespace,
                       "page_ids": json.loads(d.page_ids), "revision_ids": json.loads(d.revision_ids),
                       "counts": json.loads(d.counts), "actor": {"actor_type": d.actor_type, "actor_id": d.actor_id},
                       "reason": d.reason, "created_at": d.created_at}
        yield from self._extra_export_lines(in_scopes, full)

    def _extra_export_lines(self, in_scopes: str, full: bool) -> Iterator[dict[str, Any]]:
        """The records of every declared source (the handoff ledger), in their declared order."""
        for source in self._sources:
            yield from source.export_records(in_scopes, full)

    def _importer(self, kind: Any) -> Callable[[dict[str, Any]], bool] | None:
        """The reader of one export line kind: this part's own `_in_<kind>`, else a declared source's."""
        own: Callable[[dict[str, Any]], bool] | None = getattr(self, f"_in_{kind}", None)
        return own if own is not None else self._source_importers.get(kind)

    def _revision_lines(self, in_scopes: str) -> Iterator[dict[str, Any]]:
        """Revisions by (page_id, seq): pages walked in id order by their index, a batch at a time."""
        last_page = ""
        while True:
            pages = self._db.execute_sql(
                f"SELECT p.id, p.page_id FROM page p WHERE {in_scopes} AND p.page_id > ? ORDER BY p.page_id LIMIT ?",
                (last_page, STREAM_BATCH),
            ).fetchall()
            if not pages:
                return
            marks = ",".join("?" * len(pages))
            rows = named_rows(self._db.execute_sql(
                "SELECT p.page_id, r.seq, r.revision_id, r.previous_revision_id, s.namespace, s.visibility, "
                "r.created_at, r.observed_at, r.valid_from, r.valid_to, r.actor_type, r.actor_id, r.media_type, "
                "r.content, r.source_refs, r.facets, r.provenance, r.content_digest, p.status, p.superseded, "
                "p.head = r.id AS at_head FROM revision r JOIN page p ON p.id = r.page_id JOIN scope s ON s.id = r.scope_id "
                f"WHERE r.page_id IN ({marks})", [pk for pk, _ in pages],
            ), _RevisionRow)
            rows.sort(key=lambda r: (r.page_id, r.seq))
            for r in rows:
                payload = None if r.media_type is None else {"media_type": r.media_type, "content": r.content}
                yield {
                    "kind": "revision", "page_id": r.page_id, "revision_id": r.revision_id,
                    "previous_revision_id": r.previous_revision_id, "owner_id": self.owner_id,
                    "namespace": r.namespace, "visibility": r.visibility,
                    "lifecycle_status": effective_status(r.status, r.superseded) if r.at_head else "superseded",
                    "created_at": r.created_at, "observed_at": r.observed_at, "valid_from": r.valid_from,
                    "valid_to": r.valid_to, "created_by": {"actor_type": r.actor_type, "actor_id": r.actor_id},
                    "payload": payload, "source_refs": json.loads(r.source_refs), "facets": json.loads(r.facets),
                    "provenance": json.loads(r.provenance), "content_digest": r.content_digest,
                }
            last_page = pages[-1][1]

    def _export_counts(self, scope_rows: list[Any], full: bool) -> ExportCounts:
        db = self._db
        in_scopes = "1" if full else f"scope_id IN ({','.join(str(s.id) for s in scope_rows) or 'NULL'})"
        return {
            "scopes": len(scope_rows),
            "pages": db.execute_sql(f"SELECT COUNT(*) FROM page WHERE {in_scopes}").fetchone()[0],
            "revisions": db.execute_sql(
                f"SELECT COUNT(*) FROM revision WHERE page_id IN (SELECT id FROM page WHERE {in_scopes})").fetchone()[0],
        }

    def export(self, out: str | os.PathLike[str], scopes: Any = None, progress: Progress | None = None,
               format: str = "jsonl", passphrase: str | None = None) -> ExportResult:
        """Write everything (or chosen scopes) to `out`; returns {path, lines, sha256, counts}.

        With a passphrase the JSON Lines file is sealed as it is written (store/sealed.py), its temporary
        file too: no plain byte of it reaches the disk."""
        if format not in ("jsonl", "markdown"):
            raise Invalid("Export format must be jsonl or markdown.")
        if passphrase is not None and format != "jsonl":
            raise Invalid("An encrypted export is a JSON Lines file; drop --format markdown or --encrypt.")
        refuse_store_target(Path(out), self.path)
        writer = self._export_markdown if format == "markdown" else self._export_jsonl
        # Remembered before writing, so that plan_delete and erasure find the export files that hold a page,
        # and the temporary file of an export killed half way (files are not rewritten).
        record = None
        if self.session.is_owner:
            wanted = None if not scopes else sorted({scopes} if isinstance(scopes, str) else set(scopes))
            with self._db.atomic("IMMEDIATE"):
                record = self._m.ExportRecord.create(path=str(Path(out).resolve()), format=format,
                                                     scopes=dumps(wanted), created_at=ids.now())
        try:
            with unmapped(self._db):  # one pass over everything: the map would only grow this process's RSS
                if format == "jsonl":
                    return self._export_jsonl(Path(out), scopes, progress, passphrase)
                return writer(Path(out), scopes, progress)
        except BaseException:
            if record is not None and not Path(out).exists():
                with self._db.atomic("IMMEDIATE"):
                    self._m.ExportRecord.delete().where(self._m.ExportRecord.id == record.id).execute()
            raise

    @operation("export", always_audit=True)
    def _export_jsonl(self, call: Call, out: Path, scopes: Any, progress: Progress | None,
                      passphrase: str | None = None) -> ExportResult:
        scope_rows = self._export_scopes(call, scopes)
        full = not scopes
        counts = self._export_counts(scope_rows, full)
        header: dict[str, Any] = {"kind": EXPORT_KIND, "owner_id": self.owner_id, "exported_at": ids.now(), "counts": counts,
                                  "scopes": None if full else [s.namespace for s in scope_rows]}
        from .owners import aliases

        joined = [a for a in aliases(self._db) if a.get("owner") == self.owner_id]
        if joined:  # owner ids of stores that joined with their history: the same owner (pcp-core section 2)
            header["owner_aliases"] = [{"alias": a["alias"], "owner": a["owner"]} for a in joined]
        digest = hashlib.sha256()
        tmp = _temp_beside(out)
        lines = 0
        try:
            with open_private(tmp, fresh=True) as raw:
                fh: Any = raw if passphrase is None else sealed.Sealer(raw, passphrase=passphrase)
                data = _line(header)
                fh.write(data)
                digest.update(data)
                lines += 1
                total = counts["pages"] + counts["revisions"]
                done = 0
                for obj in self._export_lines(scope_rows, full, counts):
                    data = _line(obj)
                    fh.write(data)
                    digest.update(data)
                    lines += 1
                    if obj["kind"] in ("page", "revision"):
                        done += 1
                        if progress and done % 500 == 0:
                            progress(done, total, "records")
                fh.write(_line({"kind": END_KIND, "sha256": digest.hexdigest()}))
                if passphrase is not None:
                    fh.close()  # the last chunk, sealed and flagged last
            os.replace(tmp, out)
        except OSError as exc:
            _remove(tmp)
            if exc.errno == errno.ENOSPC:
                raise Invalid(f"The disk is full and nothing was written to {out}; free some space and try again.") from None
            raise Invalid(f"Cannot write the export to {out}: {exc.strerror or exc}.") from None
        except BaseException:
            _remove(tmp)  # a failed or interrupted export leaves no full-content file behind
            raise
        if progress:
            progress(counts["pages"] + counts["revisions"], counts["pages"] + counts["revisions"], "records")
        call.counts.update(lines=lines + 1, scopes=counts["scopes"], pages=counts["pages"], revisions=counts["revisions"])
        return {"path": str(out), "format": "jsonl", "lines": lines + 1, "sha256": digest.hexdigest(),
                "counts": counts, "scopes": header["scopes"], "encrypted": passphrase is not None}

    @operation("export", always_audit=True)
    def _export_markdown(self, call: Call, out: Path, scopes: Any, progress: Progress | None) -> ExportResult:
        scope_rows = self._export_scopes(call, scopes)
        full = not scopes
        counts = self._export_counts(scope_rows, full)
        try:
            make_private_dirs(out)
        except OSError as exc:
            raise Invalid(f"Cannot create the export folder {out}: {exc.strerror or exc}.") from None
        in_scopes = "1" if full else f"p.scope_id IN ({','.join(str(s.id) for s in scope_rows) or 'NULL'})"
        written = 0
        in_conversation = cmd.message_pages(self._db, in_scopes)  # written inside their conversation's file
        by_conversation: dict[int, set[int]] = {}
        for message_pk, conversation_pk in in_conversation.items():
            by_conversation.setdefault(conversation_pk, set()).add(message_pk)
        files = 0
        exported_scopes = None if full else {s.id for s in scope_rows}

        def file_name(page_id: str, title: str) -> str:
            return f"{_safe_name(title or 'untitled')[:80]}--{page_id[-10:]}.md"

        def file_of(page_id: str, ns: str, title: str) -> str | None:
            row = self._db.execute_sql(
                "SELECT p.id, p.scope_id, COALESCE(r.title, '') FROM page p JOIN revision r ON r.id = p.head "
                "WHERE p.page_id = ?", (page_id,)).fetchone()
            if row is None or (exported_scopes is not None and row[1] not in exported_scopes):
                return None
            conv = in_conversation.get(row[0])
            if conv is not None:
                c = self._db.execute_sql(
                    "SELECT p.page_id, s.namespace, COALESCE(r.title, '') FROM page p JOIN scope s ON s.id = p.scope_id "
                    "JOIN revision r ON r.id = p.head WHERE p.id = ?", (conv,)).fetchone()
                return f"<../{_safe_name(c[1])}/{file_name(c[0], c[2])}#{page_id}>"
            return f"<../{_safe_name(ns)}/{file_name(page_id, row[2])}>"

        try:
            folder = ExportFolder(out)
        except OSError as exc:
            raise Invalid(f"Cannot open the export folder {out}: {exc.strerror or exc}.") from None
        try:
            for r in self._iter_rows(
                "SELECT p.page_id, s.namespace, p.status, p.superseded, r.revision_id, r.created_at, r.observed_at, "
                "r.media_type, r.content, r.title, r.source_refs, r.facets, p.id AS pk FROM page p JOIN scope s ON s.id = p.scope_id "
                f"JOIN revision r ON r.id = p.head WHERE {in_scopes} AND p.page_id > ? ORDER BY p.page_id LIMIT ?", (),
                _MarkdownRow,
            ):
                if r.pk in in_conversation:
                    continue
                front = {"page_id": r.page_id, "revision_id": r.revision_id, "namespace": r.namespace,
                         "lifecycle_status": effective_status(r.status, r.superseded), "created_at": r.created_at,
                         "observed_at": r.observed_at, "media_type": r.media_type,
                         "source_refs": json.loads(r.source_refs), "facets": json.loads(r.facets)}
                body = r.content if r.content is not None else ""
                if r.media_type and r.media_type != "text/markdown" and body:
                    body = f"```\n{body}\n```\n"
                members = by_conversation.get(r.pk)
                if members:
                    messages = cmd.messages_of(self._db, r.pk, members)
                    front["messages"] = len(messages)
                    body = cmd.conversation_body(self._db, r.pk, body, messages, file_of)
                    written += len(messages)
                text = cmd.front_matter(front) + body
                name = file_name(r.page_id, r.title)
                try:
                    folder.write(_safe_name(r.namespace), name, text)
                except OSError as exc:
                    raise Invalid(f"Cannot write {out / _safe_name(r.namespace) / name}: {exc.strerror or exc}.") from None
                written += 1
                files += 1
                if progress and files % 200 == 0:
                    progress(written, counts["pages"], "pages")
        finally:
            folder.close()
        if progress:
            progress(written, counts["pages"], "pages")
        call.counts["pages"] = written
        return {"path": str(out), "format": "markdown", "files": files, "counts": counts,
                "scopes": None if full else [s.namespace for s in scope_rows]}

    # --- and back in ---

    def import_export(self, path: str | os.PathLike[str], progress: Progress | None = None,
                      passphrase: str | None = None, confirm_lookalike: bool = False) -> ImportExportResult:
        """Load a `pcp export` file (plain, or sealed by `pcp export --encrypt`): ids, times and counters
        copied verbatim; idempotent.

        Every record is checked before anything is written; then whole units are written through the
        bulk path (store/restore.py), in groups when the store was empty and the file plain (a stopped run
        is completed by running it again); a sealed file is read unsealed in memory, in one pass, and
        written in one transaction. A new scope whose name reads like one of this store's is refused
        (names.LookAlike) unless the owner confirms it (`confirm_lookalike`)."""
        from .adapters.formats import check_file as check_format

        p = Path(path)
        check_format(p, "export")  # a chat export or an events file is refused naming its importer
        opener = None
        if sealed.is_sealed(p):
            if passphrase is None:
                passphrase = crypt.ask_passphrase(p)
                if passphrase is None:
                    raise Invalid(f"{p} is an encrypted export: set PCP_PASSPHRASE_FILE or run pcp at a terminal.")
            secret = passphrase

            def opener() -> Any:
                return _export_lines(p, secret)
        helpers = Helpers.start(p, self._salt, opener)  # (they load while the file is checked)
        try:
            plan = check_file(p, opener, helpers)
            added = Restore(self, p, plan, progress, opener, confirm_lookalike, helpers).run()
        finally:
            if helpers is not None:
                helpers.close()
        return {"path": str(p), "added": added, "owner_id": self.owner_id}

    def _adopt_owner(self, header: dict[str, Any]) -> None:
        m = self._m
        owner: Any = header.get("owner_id")
        from .owners import owner_ids

        if owner in owner_ids(self._db, self.owner_id):
            return  # this owner's own id, or one of a store that joined with its history (one owner)
        theirs = header_aliases(header)
        if self.owner_id in theirs:
            return  # an export of the store this one joined: this store's id is one of its owner's
        empty = not m.Page.select().exists() and not m.Scope.select().exists() and not m.DeletionReceipt.select().exists()
        if not empty:
            raise Conflict(f"This export belongs to owner {owner}, and this store (owner {self.owner_id}) is not empty.")
        if ids.id_kind(owner) != "usr":
            raise Invalid("The export header has no valid owner id.")
        m.Meta.update(value=owner).where(m.Meta.key == "owner_id").execute()
        self.owner_id = owner
        if theirs:
            from .sync.identity import save

            save(self._db, found_aliases=[{"alias": a, "owner": owner, "store": None, "at": None} for a in theirs])

    def _same_or_conflict(self, what: str, ident: str, existing: dict[str, Any], incoming: dict[str, Any]) -> bool:
        if existing != incoming:
            raise Conflict(f"{what} {ident} already exists here with different content; nothing was imported.")
        return False

    def _in_scope(self, obj: dict[str, Any]) -> bool:
        m = self._m
        fields = {k: obj[k] for k in ("display_name", "description", "parent", "visibility", "owner_id", "created_at", "updated_at")}
        row = m.Scope.get_or_none(m.Scope.namespace == obj["namespace"])
        if row is not None:
            return self._same_or_conflict("Scope", obj["namespace"], {k: getattr(row, k) for k in fields}, fields)
        m.Scope.create(namespace=obj["namespace"], **fields)
        return True

    def _in_relation(self, obj: dict[str, Any]) -> bool:
        m = self._m
        existing = m.Relation.get_or_none(m.Relation.relation_id == obj["relation_id"])
        if existing is not None:
            return self._same_or_conflict("Relation", obj["relation_id"],
                                          {"type": existing.relation_type, "to": existing.to_revision_id},
                                          {"type": obj["relation_type"], "to": obj["to_revision_id"]})
        m.Relation.create(
            relation_id=obj["relation_id"], relation_type=obj["relation_type"],
            from_page=m.Page.get(m.Page.page_id == obj["from_page_id"]).id, from_revision_id=obj["from_revision_id"],
            to_page=m.Page.get(m.Page.page_id == obj["to_page_id"]).id, to_revision_id=obj["to_revision_id"],
            created_at=obj["created_at"], actor_type=obj["created_by"]["actor_type"],
            actor_id=obj["created_by"]["actor_id"],
        )
        return True

    def _in_retraction(self, obj: dict[str, Any]) -> bool:
        m = self._m
        if m.Retraction.select().where(m.Retraction.event_id == obj["event_id"]).exists():
            return False
        rel = m.Relation.get(m.Relation.relation_id == obj["relation_id"])
        m.Retraction.create(event_id=obj["event_id"], relation=rel.id, actor_type=obj["actor"]["actor_type"],
                            actor_id=obj["actor"]["actor_id"], reason=obj["reason"], created_at=obj["created_at"])
        m.Relation.update(retracted=1).where(m.Relation.id == rel.id).execute()
        return True

    def _in_lifecycle_event(self, obj: dict[str, Any]) -> bool:
        m = self._m
        if m.LifecycleEvent.select().where(m.LifecycleEvent.event_id == obj["event_id"]).exists():
            return False
        m.LifecycleEvent.create(event_id=obj["event_id"], page=m.Page.get(m.Page.page_id == obj["page_id"]).id,
                                from_status=obj["from"], to_status=obj["to"], actor_type=obj["actor"]["actor_type"],
                                actor_id=obj["actor"]["actor_id"], reason=obj["reason"], created_at=obj["created_at"])
        return True

    def _in_suppression(self, obj: dict[str, Any]) -> bool:
        m = self._m
        page = m.Page.get(m.Page.page_id == obj["page_id"])
        if m.Suppression.select().where((m.Suppression.page == page.id) & (m.Suppression.context_id == obj["context_id"])).exists():
            return False
        m.Suppression.create(page=page.id, context_id=obj["context_id"], reason=obj["reason"],
                             expires_at=obj["expires_at"], actor_type=obj["actor"]["actor_type"],
                             actor_id=obj["actor"]["actor_id"], created_at=obj["created_at"])
        return True

    def _in_recommendation(self, obj: dict[str, Any]) -> bool:
        m = self._m
        if m.Recommendation.select().where(m.Recommendation.recommendation_id == obj["recommendation_id"]).exists():
            return False
        m.Recommendation.create(recommendation_id=obj["recommendation_id"],
                                page=m.Page.get(m.Page.page_id == obj["page_id"]).id, action=obj["action"],
                                reason=obj["reason"], actor_type=obj["actor"]["actor_type"],
                                actor_id=obj["actor"]["actor_id"], status=obj["status"], created_at=obj["created_at"])
        return True

    def _in_source_page(self, obj: dict[str, Any]) -> bool:
        m = self._m
        if m.SourcePage.select().where(m.SourcePage.source_key == obj["source_key"]).exists():
            return False
        m.SourcePage.create(source_key=obj["source_key"], page=m.Page.get(m.Page.page_id == obj["page_id"]).id,
                            body_digest=obj["body_digest"])
        return True

    def _in_receipt(self, obj: dict[str, Any]) -> bool:
        m = self._m
        if m.DeletionReceipt.select().where(m.DeletionReceipt.receipt_id == obj["receipt_id"]).exists():
            return False
        m.DeletionReceipt.create(receipt_id=obj["receipt_id"], namespace=obj["namespace"],
                                 page_ids=dumps(obj["page_ids"]), revision_ids=dumps(obj["revision_ids"]),
                                 counts=dumps(obj["counts"]), actor_type=obj["actor"]["actor_type"],
                                 actor_id=obj["actor"]["actor_id"], reason=obj["reason"], created_at=obj["created_at"])
        for rev_id in obj["revision_ids"]:
            m.DeletedRevision.insert(revision_id=rev_id, page_id="", receipt_id=obj["receipt_id"]).on_conflict_ignore().execute()
        return True

@contextmanager
def _export_lines(p: Path, passphrase: str | None) -> Iterator[Iterator[bytes]]:
    """The export's lines (newline kept), from the plain file or unsealed chunk by chunk in memory."""
    with open(p, "rb") as fh:
        if passphrase is None or not sealed.is_sealed(p):
            yield iter(fh)
            return

        def lines() -> Iterator[bytes]:
            pending = b""
            for chunk in sealed.unseal(fh, passphrase=passphrase):
                pending += chunk
                *complete, pending = pending.split(b"\n")
                for line in complete:
                    yield line + b"\n"
            if pending:
                yield pending

        yield lines()


def _temp_beside(out: Path) -> Path:
    return temp_beside(out)


def _remove(path: Path) -> None:
    try:
        path.unlink()
    except OSError:
        pass


def _safe_name(text: str) -> str:
    cleaned = re.sub(r"[^\w\-. ]+", "_", text, flags=re.UNICODE).strip(" .")
    return cleaned or "untitled"
