"""What travels between the owner's stores: change records read from one store's tables since a mark.

The records have the shape of the export lines (store/export.py), so the receiving store reads most of
them back with the export's own readers; a few kinds exist only here (idempotency records, lifted
suppressions). A mark is, per table, the largest rowid already taken in: every change the stores make
is a new row (a revision, a lifecycle event, a retraction, a receipt), so "rows after the mark" are
exactly the changes since. The only rows changed in place are scopes (their `updated_at`), sent whole
every time (there are few), and page columns derived from the rows that travel (head, status, ...).
"""

from __future__ import annotations

import json
from typing import Any, Iterator, Sequence

import peewee as pw

# table -> the record kind its rows travel as, in the order a receiver applies them: receipts first, so
# that nothing of an erased page is written only to be erased again.
TABLES = (
    ("deletion_receipt", "receipt"), ("page", "page"), ("revision", "revision"), ("relation", "relation"),
    ("retraction", "retraction"), ("lifecycle_event", "lifecycle_event"), ("suppression", "suppression"),
    ("sync_unsuppress", "unsuppress"), ("recommendation", "recommendation"), ("source_page", "source_page"),
    ("idempotency", "idempotency"), ("handoff", "handoff"),
)
BATCH = 2000
REUSE = "sync_reuse"


def top_marks(db: pw.SqliteDatabase) -> dict[str, int]:
    """The largest rowid of every travelling table now (the mark a complete read reaches), and under
    REUSE the last entry of the log of deletes that lowered a table's top rowid (store/db.py sync_reuse)."""
    marks = {t: db.execute_sql(f"SELECT COALESCE(MAX(rowid), 0) FROM {t}").fetchone()[0] for t, _ in TABLES}
    marks[REUSE] = db.execute_sql("SELECT COALESCE(MAX(n), 0) FROM sync_reuse").fetchone()[0]
    return marks


def lowered(db: pw.SqliteDatabase, since: dict[str, int]) -> dict[str, int]:
    """`since`, each table's mark lowered to where a delete after it made rowids free to be given again."""
    out = dict(since)
    for tbl, floor in db.execute_sql("SELECT tbl, MIN(floor) FROM sync_reuse WHERE n > ? GROUP BY tbl",
                                     (since.get(REUSE, 0),)).fetchall():
        if tbl in out:
            out[tbl] = min(out[tbl], floor)
    return out


def _rows(db: pw.SqliteDatabase, sql: str, low: int, high: int,
          skip: Sequence[tuple[int, int]] = ()) -> Iterator[tuple[Any, ...]]:
    """Rows of `sql` (whose first column is the rowid, filtered by `WHERE {k}`) in (low, high] and outside the
    `skip` ranges, in batches."""
    last = low
    inside = [(a, b) for a, b in skip if b > low and a < high]
    where = "x.rowid > ? AND x.rowid <= ?" + "".join(f" AND NOT (x.rowid > {int(a)} AND x.rowid <= {int(b)})" for a, b in inside)
    while True:
        rows = db.execute_sql(sql.format(k=where) + " ORDER BY x.rowid LIMIT ?", (last, high, BATCH)).fetchall()
        if not rows:
            return
        yield from rows
        last = rows[-1][0]


def _page(r: tuple[Any, ...]) -> dict[str, Any]:
    return {"kind": "page", "page_id": r[1], "namespace": r[2], "created_at": r[3], "updated_at": r[4],
            "status": r[5], "head_revision_id": r[6], "actor_type": r[7]}


def _actor(t: str, i: str) -> dict[str, str]:
    return {"actor_type": t, "actor_id": i}


def changes(db: pw.SqliteDatabase, owner_id: str, since: dict[str, int], upto: dict[str, int],
            skip: dict[str, list[tuple[int, int]]] | None = None) -> Iterator[dict[str, Any]]:
    """Every record of the changes in (since, upto] (leaving out the `skip` rowid ranges of each table: rows
    that came from other stores, when they can read those stores' own files), all scopes among them."""
    def span(table: str) -> tuple[int, int, list[tuple[int, int]]]:
        return since.get(table, 0), upto[table], (skip or {}).get(table, [])

    for r in _rows(db, "SELECT x.rowid, receipt_id, namespace, page_ids, revision_ids, counts, actor_type, actor_id, "
                   "reason, created_at FROM deletion_receipt x WHERE {k}", *span("deletion_receipt")):
        yield {"kind": "receipt", "receipt_id": r[1], "namespace": r[2], "page_ids": json.loads(r[3]),
               "revision_ids": json.loads(r[4]), "counts": json.loads(r[5]), "actor": _actor(r[6], r[7]),
               "reason": r[8], "created_at": r[9]}
    for r in db.execute_sql("SELECT namespace, display_name, description, parent, visibility, owner_id, created_at, "
                            "updated_at FROM scope ORDER BY namespace").fetchall():
        yield {"kind": "scope", "namespace": r[0], "display_name": r[1], "description": r[2], "parent": r[3],
               "visibility": r[4], "owner_id": r[5], "created_at": r[6], "updated_at": r[7]}
    # Each new page travels just before its first revision here, the rest of the pages in their order: a
    # receiver writes a page with its head (it parks a page until then), so it parks one page at a time.
    pages = _rows(db, "SELECT x.rowid, x.page_id, s.namespace, x.created_at, x.updated_at, x.status, x.head_revision_id, "
                  "x.actor_type FROM page x JOIN scope s ON s.id = x.scope_id WHERE {k}", *span("page"))
    page = next(pages, None)
    for r in _rows(db, "SELECT x.rowid, p.page_id, x.revision_id, x.previous_revision_id, s.namespace, x.created_at, "
                   "x.observed_at, x.valid_from, x.valid_to, x.actor_type, x.actor_id, x.media_type, x.content, "
                   "x.source_refs, x.facets, x.provenance, x.content_digest, x.page_id FROM revision x "
                   "JOIN page p ON p.id = x.page_id JOIN scope s ON s.id = x.scope_id WHERE {k}", *span("revision")):
        while page is not None and page[0] <= r[17]:
            yield _page(page)
            page = next(pages, None)
        yield {"kind": "revision", "page_id": r[1], "revision_id": r[2], "previous_revision_id": r[3], "owner_id": owner_id,
               "namespace": r[4], "created_at": r[5], "observed_at": r[6], "valid_from": r[7], "valid_to": r[8],
               "created_by": _actor(r[9], r[10]),
               "payload": None if r[11] is None else {"media_type": r[11], "content": r[12]},
               "source_refs": json.loads(r[13]), "facets": json.loads(r[14]), "provenance": json.loads(r[15]),
               "content_digest": r[16]}
    while page is not None:
        yield _page(page)
        page = next(pages, None)
    for r in _rows(db, "SELECT x.rowid, x.relation_id, x.relation_type, fp.page_id, x.from_revision_id, tp.page_id, "
                   "x.to_revision_id, x.created_at, x.actor_type, x.actor_id FROM relation x "
                   "JOIN page fp ON fp.id = x.from_page_id JOIN page tp ON tp.id = x.to_page_id WHERE {k}", *span("relation")):
        yield {"kind": "relation", "relation_id": r[1], "relation_type": r[2], "from_page_id": r[3],
               "from_revision_id": r[4], "to_page_id": r[5], "to_revision_id": r[6], "created_at": r[7],
               "created_by": _actor(r[8], r[9])}
    for r in _rows(db, "SELECT x.rowid, x.event_id, rl.relation_id, x.actor_type, x.actor_id, x.reason, x.created_at, "
                   "fp.page_id, tp.page_id FROM retraction x JOIN relation rl ON rl.id = x.relation_id "
                   "JOIN page fp ON fp.id = rl.from_page_id JOIN page tp ON tp.id = rl.to_page_id WHERE {k}",
                   *span("retraction")):
        yield {"kind": "retraction", "event_id": r[1], "relation_id": r[2], "actor": _actor(r[3], r[4]),
               "reason": r[5], "created_at": r[6], "from_page_id": r[7], "to_page_id": r[8]}
    for r in _rows(db, "SELECT x.rowid, x.event_id, p.page_id, x.from_status, x.to_status, x.actor_type, x.actor_id, "
                   "x.reason, x.created_at FROM lifecycle_event x JOIN page p ON p.id = x.page_id WHERE {k}",
                   *span("lifecycle_event")):
        yield {"kind": "lifecycle_event", "event_id": r[1], "page_id": r[2], "from": r[3], "to": r[4],
               "actor": _actor(r[5], r[6]), "reason": r[7], "created_at": r[8]}
    for r in _rows(db, "SELECT x.rowid, p.page_id, x.context_id, x.reason, x.expires_at, x.actor_type, x.actor_id, "
                   "x.created_at FROM suppression x JOIN page p ON p.id = x.page_id WHERE {k}", *span("suppression")):
        yield {"kind": "suppression", "page_id": r[1], "context_id": r[2], "reason": r[3], "expires_at": r[4],
               "actor": _actor(r[5], r[6]), "created_at": r[7]}
    for r in _rows(db, "SELECT x.rowid, x.page_id, x.context_id, x.lifted_at FROM sync_unsuppress x WHERE {k}",
                   *span("sync_unsuppress")):
        yield {"kind": "unsuppress", "page_id": r[1], "context_id": r[2], "lifted_at": r[3]}
    for r in _rows(db, "SELECT x.rowid, x.recommendation_id, p.page_id, x.action, x.reason, x.actor_type, x.actor_id, "
                   "x.status, x.created_at FROM recommendation x JOIN page p ON p.id = x.page_id WHERE {k}",
                   *span("recommendation")):
        yield {"kind": "recommendation", "recommendation_id": r[1], "page_id": r[2], "action": r[3], "reason": r[4],
               "actor": _actor(r[5], r[6]), "status": r[7], "created_at": r[8]}
    for r in _rows(db, "SELECT x.rowid, x.source_key, p.page_id, x.body_digest FROM source_page x "
                   "JOIN page p ON p.id = x.page_id WHERE {k}", *span("source_page")):
        yield {"kind": "source_page", "source_key": r[1], "page_id": r[2], "body_digest": r[3]}
    for r in _rows(db, "SELECT x.rowid, x.principal, x.operation, x.key, x.body_digest, x.result, p.page_id, x.created_at "
                   "FROM idempotency x LEFT JOIN page p ON p.id = x.page_id WHERE {k}", *span("idempotency")):
        yield {"kind": "idempotency", "principal": r[1], "operation": r[2], "key": r[3], "body_digest": r[4],
               "result": r[5], "page_id": r[6], "created_at": r[7]}
    yield from _handoffs(db, *span("handoff"))


def _handoffs(db: pw.SqliteDatabase, low: int, high: int, skip: Sequence[tuple[int, int]]) -> Iterator[dict[str, Any]]:
    """Ledger records, in the export's shape (store/handoff_ledger.py export_records), for rows in (low, high]."""
    cols = ("id, handoff_id, label, created_at, kind, digest, continuation_of, previous, first_handed_at, "
            "preamble_bytes, base_entries, header, new_scopes, scopes, pack, delta, bytes, tokens, clipboard")
    for h in _rows(db, f"SELECT x.rowid, {cols} FROM handoff x WHERE {{k}}", low, high, skip):
        previous = None
        if h[8] is not None:
            row = db.execute_sql("SELECT handoff_id FROM handoff WHERE id = ?", (h[8],)).fetchone()
            previous = row[0] if row else None
        entries = [
            {"n": e[0], "page_id": e[1], "revision_id": e[2], "namespace": e[3], "status": e[4], "at_head": e[5],
             "detail": e[6], "bytes": e[7], "tokens": e[8], "new": e[9], "live": e[10]}
            for e in db.execute_sql("SELECT n, page_id, revision_id, namespace, status, at_head, detail, bytes, tokens, "
                                    "new, live FROM handoff_entry WHERE handoff_id = ? ORDER BY n", (h[1],)).fetchall()
        ]
        yield {"kind": "handoff", "handoff_id": h[2], "label": h[3], "created_at": h[4], "handoff_kind": h[5],
               "digest": h[6], "continuation_of": h[7], "previous_handoff_id": previous, "first_handed_at": h[9],
               "preamble_bytes": h[10], "base_entries": h[11], "header": json.loads(h[12]),
               "new_scopes": json.loads(h[13]), "scopes": json.loads(h[14]), "pack": h[15], "delta": h[16],
               "bytes": h[17], "tokens": h[18], "clipboard": h[19], "entries": entries}


def page_ids_of(record: dict[str, Any]) -> list[str]:
    """The pages a record belongs to (what an erasure of those pages takes out of a change file)."""
    kind = record["kind"]
    if kind in ("relation", "retraction"):
        return [record["from_page_id"], record["to_page_id"]]
    if kind == "handoff":
        return [e["page_id"] for e in record["entries"] if e["page_id"]]
    page = record.get("page_id")
    return [page] if isinstance(page, str) and kind != "receipt" else []
