"""The handoff ledger (shared spec handoff.md): listing copies, erasing pages from them, export and import.

Every copy keeps its body's ctxpack pack and, for a continuation, the delta from the
previous copy's pack, with one row per entry of the full body. Deleting a page
rewrites every stored pack and `handoffs/<id>.md` file that carried it: the entry keeps
its number and "erased", later entries keep their bytes, so a chat's bodies stay
prefixes of one another and the deltas are computed again (pcp-core.md section 6).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

from ctxpack import ContextPack, ContextPackDelta

from . import bundle as bd
from . import crypt, sealed
from . import ids as idmod
from .constants import LIMITS
from .constants import chunks as _chunks
from .core import Call, Part, dumps, operation
from .errors import Forbidden, Invalid, shown
from .files import inside, make_private_dirs
from .reads import clamp, decode_cursor, encode_cursor
from .types import BundleEntry, EraserPlan, HandoffList, HandoffRef

MAX_LABEL_CHARS = 200


def write_private(path: Path, text: str, key: bytes | None = None) -> None:
    """Write a file only the user can read, atomically (a reader never sees half a bundle); sealed under the
    store's key when the store is encrypted (store/sealed.py), so the copy is no plainer than the store."""
    make_private_dirs(path.parent)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    data = text.encode("utf-8") if key is None else sealed.seal_bytes(text.encode("utf-8"), key)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.fchmod(fd, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
    os.replace(tmp, path)


def chat_label(value: Any) -> str:
    """A copy's label (the target chat), checked and on one line."""
    if not isinstance(value, str) or not value.strip():
        raise Invalid("A copy needs a label naming the target chat, e.g. --label \"Claude: thesis chapter 3\".")
    label = " ".join(value.split())
    if len(label) > MAX_LABEL_CHARS:
        raise Invalid(f"A label may have at most {MAX_LABEL_CHARS} characters.")
    return label


def quoted_label(label: str) -> str:
    """A chat label in a message, in curly quotes as the app writes titles and labels: `“Claude: thesis”` (a
    character that does not print is written as its escape, as repr() did)."""
    return "“" + "".join(c if c.isprintable() else repr(c)[1:-1] for c in label) + "”"


class HandoffPart(Part):
    """What the handoff operations and the ledger share: the export permission and the copies' folder."""

    def _require_export(self) -> None:
        if not self.session.may_anywhere("export"):
            raise Forbidden("Only the owner may bundle, copy or list handoffs (it takes the export permission).")

    def _handoff_dir(self) -> Path:
        return Path(self.path).parent / "handoffs"

    def _copy_key(self) -> bytes | None:
        """The key handoff copies are sealed with: the store's own when it is encrypted, else None (plain)."""
        return crypt.cached_key(Path(self.path)) if crypt.is_encrypted(Path(self.path)) else None

    def handoff_copy_text(self, handoff_id: str) -> str:
        """A handoff copy's file as text, unsealed through the store's key when the store is encrypted."""
        self._require_export()
        path = inside(self._handoff_dir(), f"{handoff_id}.md")
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise Invalid(f"The handoff copy {path.name} cannot be read ({exc.strerror or exc}).") from None
        key = self._copy_key()
        if data.startswith(sealed.MAGIC):
            if key is None:
                raise Invalid(f"The handoff copy {path.name} is sealed and this store has no key for it.")
            data = sealed.open_bytes(data, key)
        return data.decode("utf-8")

    def _copied_text(self, h: Any, body: str) -> str:
        """The text a copy handed over, rebuilt from its stored body (after an erasure, with markers)."""
        if h.kind == "bundle":
            return body + bd.trailer(h.digest)
        m = self._m
        sizes = [r.bytes for r in m.HandoffEntry.select(m.HandoffEntry.bytes)
                 .where(m.HandoffEntry.handoff == h.id).order_by(m.HandoffEntry.n)]
        offset = h.preamble_bytes + sum(sizes[: h.base_entries])
        appended = body.encode("utf-8")[offset:].decode("utf-8")
        header = bd.continuation_header(h.continuation_of, json.loads(h.header), json.loads(h.new_scopes),
                                        appended=len(sizes) > h.base_entries)
        return header + appended + bd.trailer(h.digest, h.continuation_of)


class LedgerOps(HandoffPart):
    """The ledger side of handoffs: listing; an eraser for deletion and a record source for export and import."""

    @operation("handoffs")
    def handoffs(self, call: Call, page_id: str | None = None, label: str | None = None, limit: int | None = None,
                 cursor: str | None = None) -> HandoffList:
        """Recorded copies, newest first; with page_id, the copies that carried that page (which chats saw it)."""
        self._require_export()
        m = self._m
        size = clamp(limit, LIMITS["default_hits"], LIMITS["max_list"])
        after = decode_cursor(cursor, "handoffs")
        query = m.Handoff.select()
        if label is not None:
            query = query.where(m.Handoff.label == chat_label(label))
        if page_id is not None:
            kind = idmod.id_kind(str(page_id))
            if kind not in ("pg", "rev"):
                raise Invalid(f"{shown(page_id)} is not a page or revision id (pg_... or rev_...).")
            column = m.HandoffEntry.page_id if kind == "pg" else m.HandoffEntry.revision_id
            query = query.where(m.Handoff.id.in_(
                m.HandoffEntry.select(m.HandoffEntry.handoff).where((column == page_id) & (m.HandoffEntry.new == 1))))
        if after:
            query = query.where(m.Handoff.id < after["id"])
        rows = list(query.order_by(m.Handoff.id.desc()).limit(size + 1))
        more = len(rows) > size
        rows = rows[:size]
        carried: dict[int, list[BundleEntry]] = {r.id: [] for r in rows}
        for part in _chunks([r.id for r in rows]):
            for e in (m.HandoffEntry.select().where(m.HandoffEntry.handoff.in_(part) & (m.HandoffEntry.new == 1))
                      .order_by(m.HandoffEntry.handoff, m.HandoffEntry.n)):
                carried[e.handoff_id].append(self._entry_dict(e))
        call.counts["handoffs"] = len(rows)
        return {
            "handoffs": [
                {"handoff_id": r.handoff_id, "label": r.label, "digest": r.digest, "continuation_of": r.continuation_of,
                 "created_at": r.created_at, "entries": carried[r.id], "bytes": r.bytes, "tokens": r.tokens}
                for r in rows
            ],
            "next_cursor": encode_cursor({"k": "handoffs", "id": rows[-1].id}) if more else None,
        }

    @staticmethod
    def _entry_dict(e: Any) -> BundleEntry:
        return {"n": e.n, "page_id": e.page_id, "revision_id": e.revision_id, "namespace": e.namespace,
                "detail": e.detail, "bytes": e.bytes, "tokens": e.tokens}

    # --- deletion: erase handed-over copies too (pcp-core.md section 6) ---

    def _page_ids_of(self, page_pks: Iterable[int]) -> list[str]:
        out: list[str] = []
        for part in _chunks(sorted(page_pks)):
            out += [r[0] for r in self._db.execute_sql(
                f"SELECT page_id FROM page WHERE id IN ({','.join('?' * len(part))})", part)]
        return out

    def plan_extra(self, page_pks: set[int]) -> EraserPlan:
        """The handoff copies that carried these pages (Eraser)."""
        m = self._m
        found: list[HandoffRef] = []
        for part in _chunks(self._page_ids_of(page_pks)):
            rows = (m.HandoffEntry.select(m.HandoffEntry.n, m.Handoff.handoff_id, m.Handoff.label)
                    .join(m.Handoff).where(m.HandoffEntry.page_id.in_(part))
                    .order_by(m.Handoff.id, m.HandoffEntry.n).tuples())
            found += [{"handoff_id": hid, "label": label, "entry": n} for n, hid, label in rows]
        return {"handoffs": found}

    def erase_extra(self, page_pks: list[int], counts: dict[str, int]) -> None:
        """Replace these pages in every stored copy by their erased marker (Eraser)."""
        counts.setdefault("handoff_entries", 0)
        m = self._m
        page_ids = self._page_ids_of(page_pks)
        if not page_ids:
            return
        hit: dict[int, set[int]] = {}
        for part in _chunks(page_ids):
            for handoff, n in (m.HandoffEntry.select(m.HandoffEntry.handoff, m.HandoffEntry.n)
                               .where(m.HandoffEntry.page_id.in_(part)).tuples()):
                hit.setdefault(handoff, set()).add(n)
        if not hit:
            return
        gone = set(page_ids)
        # Oldest first: a continuation's delta is recomputed against its already rewritten predecessor.
        for h in m.Handoff.select().where(m.Handoff.id.in_(sorted(hit))).order_by(m.Handoff.id):
            self._redact(h, hit[h.id], gone)
            counts["handoff_entries"] += len(hit[h.id])

    def _redact(self, h: Any, numbers: set[int], gone: set[str]) -> None:
        """Replace entries `numbers` of one stored copy by their erased marker: pack, delta, notes and file."""
        m = self._m
        data = ContextPack.from_bytes(h.pack.encode("utf-8")).content.encode("utf-8")
        rows = list(m.HandoffEntry.select().where(m.HandoffEntry.handoff == h.id).order_by(m.HandoffEntry.n))
        pos = h.preamble_bytes
        parts = [data[:pos]]
        for r in rows:
            block = data[pos : pos + r.bytes]
            pos += r.bytes
            if r.n in numbers:
                marker = bd.render_erased(r.n)
                block = marker.encode("utf-8")
                m.HandoffEntry.update(page_id=None, revision_id=None, namespace=None, status=None, detail="erased",
                                      bytes=len(block), tokens=bd.estimate_tokens(marker)).where(
                    m.HandoffEntry.id == r.id).execute()
            parts.append(block)
        parts.append(data[pos:])
        pack = ContextPack.from_content(b"".join(parts).decode("utf-8"))
        notes = json.loads(h.header)
        for item in notes:
            if item.get("page_id") in gone:
                item["page_id"] = item["revision_id"] = None
        delta = None
        if h.previous is not None:
            base = m.Handoff.get_by_id(h.previous)
            delta = ContextPackDelta.between(ContextPack.from_bytes(base.pack.encode("utf-8")), pack).to_json()
        m.Handoff.update(pack=pack.to_json(), delta=delta, header=dumps(notes)).where(m.Handoff.id == h.id).execute()
        h = m.Handoff.get_by_id(h.id)
        self._rewrite_file(h, pack.content)

    def _rewrite_file(self, h: Any, body: str) -> None:
        text = self._copied_text(h, body)
        for path in {Path(h.file), self._handoff_dir() / f"{h.handoff_id}.md"}:
            if path.exists():
                try:
                    write_private(path, text, self._copy_key())
                except OSError as exc:
                    raise Invalid(f"Cannot rewrite the handoff copy {path} to erase the page: "
                                  f"{exc.strerror or exc}; nothing was deleted.") from None

    # --- export and import of the ledger ---

    def export_records(self, in_scopes: str, full: bool) -> Iterator[dict[str, Any]]:
        """The ledger's export lines (RecordSource)."""
        if not full:
            return  # a copy may draw on several scopes: the ledger goes out with whole-store exports only
        m = self._m
        last = 0
        while True:
            batch = list(m.Handoff.select().where(m.Handoff.id > last).order_by(m.Handoff.id).limit(100))
            if not batch:
                return
            previous = {p.id: p.handoff_id for p in m.Handoff.select(m.Handoff.id, m.Handoff.handoff_id)
                        .where(m.Handoff.id.in_([h.previous for h in batch if h.previous]))}
            for h in batch:
                entries = [
                    {"n": e.n, "page_id": e.page_id, "revision_id": e.revision_id, "namespace": e.namespace,
                     "status": e.status, "at_head": e.at_head, "detail": e.detail, "bytes": e.bytes,
                     "tokens": e.tokens, "new": e.new, "live": e.live}
                    for e in m.HandoffEntry.select().where(m.HandoffEntry.handoff == h.id).order_by(m.HandoffEntry.n)
                ]
                yield {"kind": "handoff", "handoff_id": h.handoff_id, "label": h.label, "created_at": h.created_at,
                       "handoff_kind": h.kind, "digest": h.digest, "continuation_of": h.continuation_of,
                       "previous_handoff_id": previous.get(h.previous), "first_handed_at": h.first_handed_at,
                       "preamble_bytes": h.preamble_bytes, "base_entries": h.base_entries,
                       "header": json.loads(h.header), "new_scopes": json.loads(h.new_scopes),
                       "scopes": json.loads(h.scopes), "pack": h.pack, "delta": h.delta, "bytes": h.bytes,
                       "tokens": h.tokens, "clipboard": h.clipboard, "entries": entries}
            last = batch[-1].id

    def record_importers(self) -> dict[str, Callable[[dict[str, Any]], bool]]:
        """The export line kinds this source reads back in (RecordSource)."""
        return {"handoff": self._in_handoff}

    def _in_handoff(self, obj: dict[str, Any]) -> bool:
        """Import one ledger record (idempotent by handoff_id); its file is written again beside this store."""
        m = self._m
        if m.Handoff.select().where(m.Handoff.handoff_id == obj["handoff_id"]).exists():
            return False
        pack = ContextPack.from_bytes(obj["pack"].encode("utf-8"))
        if obj["delta"] is not None:
            ContextPackDelta.from_bytes(obj["delta"].encode("utf-8"))
        previous = None
        if obj["previous_handoff_id"]:
            previous = m.Handoff.get(m.Handoff.handoff_id == obj["previous_handoff_id"]).id
        if idmod.id_kind(obj["handoff_id"]) != "hnd":
            raise Invalid(f"{str(obj['handoff_id'])[:40]!r} is not a handoff id; nothing was imported.")
        path = inside(self._handoff_dir(), f"{obj['handoff_id']}.md")
        h = m.Handoff.create(
            handoff_id=obj["handoff_id"], label=obj["label"], created_at=obj["created_at"], kind=obj["handoff_kind"],
            digest=obj["digest"], continuation_of=obj["continuation_of"], previous=previous,
            first_handed_at=obj["first_handed_at"], preamble_bytes=obj["preamble_bytes"],
            base_entries=obj["base_entries"], header=dumps(obj["header"]), new_scopes=dumps(obj["new_scopes"]),
            scopes=dumps(obj["scopes"]), pack=obj["pack"], delta=obj["delta"], bytes=obj["bytes"],
            tokens=obj["tokens"], file=str(path), clipboard=obj["clipboard"],
        )
        keys = ("n", "page_id", "revision_id", "namespace", "status", "at_head", "detail", "bytes", "tokens", "new", "live")
        for part in _chunks(obj["entries"]):
            m.HandoffEntry.insert_many([{**{k: e[k] for k in keys}, "handoff": h.id} for e in part]).execute()
        try:
            write_private(path, self._copied_text(h, pack.content), self._copy_key())
        except OSError as exc:
            raise Invalid(f"Cannot write the handoff copy {path}: {exc.strerror or exc}.") from None
        return True
