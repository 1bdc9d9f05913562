"""Handing context to a chat (shared spec handoff.md): bundles, copies, continuations, the handoff ledger.

The owner selects pages; `bundle` renders them (store/bundle.py), `copy` records what
was handed to which chat (label) with the body's ctxpack pack, writes the copied text
to `handoffs/<id>.md` beside the database and passes it to a clipboard function the
caller supplies (the store never draws and never touches a terminal). `copy_continue`
hands over only what changed and `verify` checks pasted text back. The ledger's
listing, erasure and export live in store/handoff_ledger.py.

Long because: bundle, copy, continue and verify share one selection and the ledger records they write.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Callable, Iterator, NamedTuple

from ctxpack import ContextPack, ContextPackDelta, ContextPackError

from . import bundle as bd
from . import ids as idmod
from .constants import chunks as _chunks
from .core import Call, StoreContext, dumps, named_rows, operation
from .errors import Conflict, Invalid, LimitExceeded, NotFound, not_found, shown
from .handoff_ledger import HandoffPart, chat_label, quoted_label, write_private
from . import validate as v
from .reads import effective_status
from .search import SearchOps
from .types import BundleCut, BundleResult, BundleWarning, CopyResult, VerifiedEntry, VerifyResult

MAX_ENTRIES = 1000  # ids per bundle
MAX_QUERY_PAGES = 100  # pages a query or scope selection adds
CLIPBOARD_PATHS = ("pyperclip", "osc52", "file-only")
Clipboard = Callable[[str], str]
_TRAILER_TOKENS = bd.estimate_tokens(bd.trailer("sha256:" + "0" * 64))
_CONTINUATION_TRAILER_TOKENS = bd.estimate_tokens(bd.trailer("sha256:" + "0" * 64, "sha256:" + "0" * 64))


@dataclass(frozen=True)
class Selected:
    """A revision chosen for a bundle, and whether it was the page's head when chosen."""

    source: bd.EntrySource
    at_head: bool
    thread: tuple[str, str] | None = None  # (namespace, conversation id) of a chat or agent page
    opens_thread: bool = False  # the conversation (or session) page itself, not one of its messages


def in_reading_order(selected: list[Selected]) -> list[Selected]:
    """A conversation reads in order: its entries gather where the first of them stands, the conversation
    page first, then its messages oldest first; every other entry keeps its place."""
    threads: dict[tuple[str, str], list[Selected]] = {}
    for sel in selected:
        if sel.thread is not None:
            threads.setdefault(sel.thread, []).append(sel)
    out: list[Selected] = []
    for sel in selected:
        if sel.thread is None:
            out.append(sel)
        elif sel.thread in threads:
            out += sorted(threads.pop(sel.thread),
                          key=lambda s: (not s.opens_thread, s.source.date or "", s.source.page_id, s.source.revision_id))
    return out


@dataclass(frozen=True)
class Composed:
    """A rendered bundle or continuation before it is recorded."""

    body: str
    pack: ContextPack
    text: str
    entries: list[bd.RenderedEntry]
    cut: list[BundleCut]
    warnings: list[BundleWarning]


class _RevisionRow(NamedTuple):
    """A revision as a bundle entry needs it (HandoffOps._COLUMNS)."""

    page_id: str
    revision_id: str
    namespace: str
    status: str
    superseded: int
    at_head: int
    title: str | None
    observed_at: str | None
    created_at: str
    source_refs: str | None
    content: str | None
    facets: str | None


def _max_tokens(value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise Invalid("max_tokens must be a whole number of at least 1.")
    return value


def _id_list(values: Any) -> list[str]:
    if values is None:
        return []
    if isinstance(values, str):
        values = [values]
    out = [str(v).strip() for v in values if str(v).strip()]
    if len(out) > MAX_ENTRIES:
        raise LimitExceeded(f"A bundle holds at most {MAX_ENTRIES} entries; you gave {len(out)} ids.")
    return out


class HandoffOps(HandoffPart):
    """Bundles, copies, continuations and verify; selection by query goes through `search`."""

    def __init__(self, ctx: StoreContext, search: SearchOps) -> None:
        super().__init__(ctx)
        self._search = search

    # --- selection ---

    _COLUMNS = ("SELECT p.page_id, r.revision_id, s.namespace, p.status, p.superseded, p.head = r.id AS at_head, r.title, "
                "r.observed_at, r.created_at, r.source_refs, r.content, r.facets FROM page p "
                "JOIN scope s ON s.id = p.scope_id ")

    def _load_revisions(self, call: Call, idents: list[str]) -> list[Selected]:
        """Page ids (their head) or revision ids, in the order given, checked for the export permission."""
        by_page = [i for i in idents if idmod.id_kind(i) == "pg"]
        by_rev = [i for i in idents if idmod.id_kind(i) == "rev"]
        found: dict[str, _RevisionRow] = {}
        for part in _chunks(sorted(set(by_page))):
            sql = self._COLUMNS + f"JOIN revision r ON r.id = p.head WHERE p.page_id IN ({','.join('?' * len(part))})"
            for row in named_rows(self._db.execute_sql(sql, part), _RevisionRow):
                found[row.page_id] = row
        for part in _chunks(sorted(set(by_rev))):
            sql = self._COLUMNS + (f"JOIN revision r ON r.page_id = p.id "
                                   f"WHERE r.revision_id IN ({','.join('?' * len(part))})")
            for row in named_rows(self._db.execute_sql(sql, part), _RevisionRow):
                found[row.revision_id] = row
        out: list[Selected] = []
        for ident in idents:
            chosen = found.get(ident)
            if chosen is None:
                raise not_found("page", ident)
            ns = chosen.namespace
            if not (self.session.allows("read", ns) or self.session.allows("export", ns)) or (
                    chosen.status == "tombstoned" and not self.session.allows("audit", ns)):
                raise not_found("page", ident)
            self._require(call, "export", ns)
            out.append(self._selected(chosen))
        return out

    @staticmethod
    def _selected(row: _RevisionRow) -> Selected:
        sources = []
        for ref in json.loads(row.source_refs or "[]"):
            uri = str(ref.get("uri", ""))
            sources.append(f"{uri} ({bd.locator_text(ref['locator'])})" if ref.get("locator") else uri)
        summary = json.loads(row.facets or "{}").get("summary")
        src = bd.EntrySource(
            page_id=row.page_id, revision_id=row.revision_id, namespace=row.namespace,
            status=effective_status(row.status, row.superseded) if row.at_head else "superseded", title=row.title or "",
            date_kind="observed" if row.observed_at else "created", date=row.observed_at or row.created_at,
            sources=tuple(sources), content=row.content,
            summary=summary if isinstance(summary, str) and summary.strip() else None,
        )
        facets = json.loads(row.facets or "{}")
        facets = facets if isinstance(facets, dict) else {}
        thread = None
        if "role" in facets or "conversation_id" in facets:
            thread = (row.namespace, str(facets.get("conversation_id") or ""))
        return Selected(src, bool(row.at_head), thread, thread is not None and "role" not in facets)

    def _query_revisions(self, call: Call, query: str | None, scopes: Any) -> list[str]:
        """Revision ids a search adds (mode auto, active pages only, at most MAX_QUERY_PAGES)."""
        if not (query and query.strip()) and not scopes:
            return []
        self._require_somewhere("search")
        named = self._named_scopes(call, scopes, "search")
        selection = self._search.page_query(named, None)
        q = v.query(query)
        if q.strip():
            # A bundle takes the pages that hold every word of the query (ranked), else the substring.
            rows = (self._search.ranked("text", q, selection, MAX_QUERY_PAGES)
                    or self._search.matching("exact", q, selection, MAX_QUERY_PAGES, 0, call))
        else:
            rows = self._search.matching("temporal", q, selection, MAX_QUERY_PAGES, 0, call)
        pks = [r[0] for r in rows]
        if not pks:
            return []
        names = dict(self._db.execute_sql(
            f"SELECT id, revision_id FROM revision WHERE id IN ({','.join('?' * len(pks))})", pks).fetchall())
        return [names[pk] for pk in pks]

    def _select(self, call: Call, ids_: Any, query: str | None, scopes: Any) -> list[Selected]:
        """The user's ids in their order, then what the query or scopes add; each revision once."""
        idents = _id_list(ids_)
        for ident in idents:
            if idmod.id_kind(ident) not in ("pg", "rev"):
                raise Invalid(f"{shown(ident)} is not a page or revision id (pg_... or rev_...).")
        chosen = self._load_revisions(call, idents)
        chosen += self._load_revisions(call, self._query_revisions(call, query, scopes))
        seen: set[str] = set()
        out = []
        for sel in chosen:
            if sel.source.revision_id not in seen:
                seen.add(sel.source.revision_id)
                out.append(sel)
        if len(out) > MAX_ENTRIES:
            raise LimitExceeded(f"A bundle holds at most {MAX_ENTRIES} entries; this selection has {len(out)}.")
        return in_reading_order(out)

    # --- composing ---

    @staticmethod
    def _fit(sources: list[bd.EntrySource], first_n: int, max_tokens: int | None,
             fixed: int) -> tuple[list[bd.RenderedEntry], list[BundleCut]]:
        try:
            return bd.fit_entries(sources, first_n, max_tokens, fixed)
        except bd.BudgetTooSmall as exc:
            raise LimitExceeded(
                f"A budget of {exc.budget:,} token{'s' if exc.budget != 1 else ''} cannot hold even a reference "
                + (f"line for each of the {len(sources):,} entries" if len(sources) != 1 else "line for its entry")
                + f"; it needs at least {exc.needed:,}."
            ) from None

    def _compose_first(self, selected: list[Selected], handed_at: str, max_tokens: int | None) -> tuple[str, Composed]:
        sources = [s.source for s in selected]
        preamble = bd.render_preamble(self.owner_id, handed_at, {s.namespace for s in sources})
        fixed = bd.estimate_tokens(preamble) + _TRAILER_TOKENS
        entries, cut = self._fit(sources, 1, max_tokens, fixed)
        body = preamble + "".join(e.text for e in entries)
        pack = ContextPack.from_content(body)
        warnings: list[BundleWarning] = []
        mix = bd.scope_mix_warning(s.namespace for s in sources)
        if mix:
            warnings.append(mix)
        warnings += bd.secret_warnings(entries)
        return preamble, Composed(body, pack, body + bd.trailer(pack.digest), entries, cut, warnings)

    @staticmethod
    def _empty_selection() -> Invalid:
        return Invalid("Nothing to bundle: give page or revision ids, or a --query / --scope that matches active pages.")

    @staticmethod
    def _refuse_if_strict(strict: bool, warnings: list[BundleWarning]) -> None:
        if strict and warnings:
            listed = "; ".join(w["message"] for w in warnings)
            raise Invalid(f"Refused under --strict, nothing was copied or recorded: {listed}")

    # --- public operations ---

    @operation("bundle", always_audit=True)
    def bundle(self, call: Call, ids: Any = (), query: str | None = None, scopes: Any = (),
               max_tokens: int | None = None) -> BundleResult:
        """Render selected pages as one bundle text (nothing is recorded): text, digest, sizes, cuts, warnings."""
        self._require_export()
        budget = _max_tokens(max_tokens)
        selected = self._select(call, ids, query, scopes)
        if not selected:
            raise self._empty_selection()
        _, comp = self._compose_first(selected, idmod.now(), budget)
        call.counts.update({"entries": len(comp.entries), "bytes": len(comp.text.encode("utf-8"))})
        return {"text": comp.text, "digest": comp.pack.digest, "bytes": len(comp.text.encode("utf-8")),
                "tokens": bd.estimate_tokens(comp.text), "tokens_exact": False,
                "entries": [e.to_dict() for e in comp.entries], "cut": comp.cut, "warnings": comp.warnings}

    @operation("copy", write=True)
    def copy(self, call: Call, ids: Any = (), query: str | None = None, scopes: Any = (), label: str | None = None,
             max_tokens: int | None = None, strict: bool = False, clipboard: Clipboard | None = None) -> CopyResult:
        """Hand a new bundle to the chat `label`: record it, write handoffs/<id>.md, pass it to `clipboard`."""
        self._require_export()
        name = chat_label(label)
        budget = _max_tokens(max_tokens)
        m = self._m
        earlier = m.Handoff.select(m.Handoff.handoff_id).where(m.Handoff.label == name).first()
        if earlier is not None:
            raise Conflict(f"The chat {quoted_label(name)} already has handoffs (latest {earlier.handoff_id}); "
                           "continue it with --continue, or give a new label.")
        selected = self._select(call, ids, query, scopes)
        if not selected:
            raise self._empty_selection()
        stamp = idmod.now()
        preamble, comp = self._compose_first(selected, stamp, budget)
        self._refuse_if_strict(strict, comp.warnings)
        scopes_seen = sorted({s.source.namespace for s in selected})
        row = dict(kind="bundle", digest=comp.pack.digest, continuation_of=None, previous=None,
                   first_handed_at=stamp, preamble_bytes=len(preamble.encode("utf-8")), base_entries=0,
                   header="[]", new_scopes="[]", scopes=dumps(scopes_seen), delta=None)
        entry_rows = [self._entry_row(e, sel.at_head, new=1, live=1) for e, sel in zip(comp.entries, selected, strict=False)]
        return self._record(call, name, stamp, row, entry_rows, comp, comp.entries, clipboard)

    @operation("copy_continue", write=True)
    def copy_continue(self, call: Call, label: str, ids: Any = (), max_tokens: int | None = None,
                      strict: bool = False, clipboard: Clipboard | None = None) -> CopyResult:
        """Hand the chat `label` only what changed since its last copy (a continuation)."""
        self._require_export()
        name = chat_label(label)
        budget = _max_tokens(max_tokens)
        m = self._m
        prev = m.Handoff.select().where(m.Handoff.label == name).order_by(m.Handoff.id.desc()).first()
        if prev is None:
            raise NotFound(f"No chat is labelled {quoted_label(name)}; start one with pcp copy --label.")
        old_pack = ContextPack.from_bytes(prev.pack.encode("utf-8"))
        old_body = old_pack.content
        rows = list(m.HandoffEntry.select().where(m.HandoffEntry.handoff == prev.id).order_by(m.HandoffEntry.n))
        live = {r.n: r.live for r in rows}
        disregard, added, replaces = self._changes(call, rows, live)
        given = self._load_revisions(call, [i for i in _id_list(ids) if self._is_id(i)])
        held = {r.revision_id for r in rows if live[r.n] and r.revision_id} | {s.source.revision_id for s in added}
        for sel in given:
            if sel.source.revision_id not in held:
                held.add(sel.source.revision_id)
                added.append(sel)
        if not added and not disregard:
            raise Invalid(f"Nothing new for {quoted_label(name)} since its last copy {prev.handoff_id}: no new ids, and no "
                          "page it holds was revised, withdrawn or erased.")
        first_n = max(r.n for r in rows) + 1
        for item in disregard:
            if item["n"] in replaces:
                item["replaced_by"] = first_n + replaces[item["n"]]
        known = json.loads(prev.scopes)
        new_scopes = sorted({s.source.namespace for s in added} - set(known))
        header = bd.continuation_header(prev.digest, disregard, new_scopes, appended=bool(added))
        fixed = bd.estimate_tokens(header) + _CONTINUATION_TRAILER_TOKENS
        entries, cut = self._fit([s.source for s in added], first_n, budget, fixed)
        body = old_body + "".join(e.text for e in entries)
        pack = ContextPack.from_content(body)
        text = header + body[len(old_body):] + bd.trailer(pack.digest, prev.digest)
        warnings: list[BundleWarning] = []
        mix = bd.scope_mix_warning([*known, *new_scopes]) if new_scopes else None
        if mix:
            warnings.append(mix)
        warnings += bd.secret_warnings(entries)
        self._refuse_if_strict(strict, warnings)
        comp = Composed(body, pack, text, entries, cut, warnings)
        delta = ContextPackDelta.between(old_pack, pack)
        row = dict(kind="continuation", digest=pack.digest, continuation_of=prev.digest, previous=prev.id,
                   first_handed_at=prev.first_handed_at, preamble_bytes=prev.preamble_bytes, base_entries=len(rows),
                   header=dumps(disregard), new_scopes=dumps(new_scopes), scopes=dumps(sorted({*known, *new_scopes})),
                   delta=delta.to_json())
        entry_rows = [
            {"n": r.n, "page_id": r.page_id, "revision_id": r.revision_id, "namespace": r.namespace,
             "status": r.status, "at_head": r.at_head, "detail": r.detail, "bytes": r.bytes, "tokens": r.tokens,
             "new": 0, "live": live[r.n]}
            for r in rows
        ]
        entry_rows += [self._entry_row(e, sel.at_head, new=1, live=1) for e, sel in zip(entries, added, strict=False)]
        stamp = idmod.now()
        return self._record(call, name, stamp, row, entry_rows, comp, entries, clipboard)

    @staticmethod
    def _is_id(ident: str) -> bool:
        if idmod.id_kind(ident) not in ("pg", "rev"):
            raise Invalid(f"{shown(ident)} is not a page or revision id (pg_... or rev_...).")
        return True

    def _changes(self, call: Call, rows: list[Any], live: dict[int, int]) -> tuple[list[dict[str, Any]], list[Selected], dict[int, int]]:
        """What a continuation must tell the chat: entries to disregard, and revised pages' new heads."""
        states = {}
        page_ids = sorted({r.page_id for r in rows if live[r.n] and r.page_id})
        for part in _chunks(page_ids):
            for pid, status, head in self._db.execute_sql(
                    f"SELECT page_id, status, head_revision_id FROM page WHERE page_id IN ({','.join('?' * len(part))})",
                    part):
                states[pid] = (status, head)
        disregard: list[dict[str, Any]] = []
        heads: list[str] = []
        replaces: dict[int, int] = {}
        for r in rows:
            if not live[r.n]:
                continue
            state = states.get(r.page_id) if r.page_id else None
            if r.detail == "erased" or state is None:
                disregard.append({"n": r.n, "page_id": None, "revision_id": None, "reason": "erased"})
                live[r.n] = 0
                continue
            status, head = state
            if status in ("tombstoned", "archived") and status != r.status:
                disregard.append({"n": r.n, "page_id": r.page_id, "revision_id": r.revision_id, "reason": status})
                live[r.n] = 0
            elif r.at_head and head != r.revision_id:
                disregard.append({"n": r.n, "page_id": r.page_id, "revision_id": r.revision_id, "reason": "revised"})
                live[r.n] = 0
                if head not in heads:
                    heads.append(head)
                replaces[r.n] = heads.index(head)
        added = self._load_revisions(call, heads) if heads else []
        return disregard, added, replaces

    @staticmethod
    def _entry_row(e: bd.RenderedEntry, at_head: bool, new: int, live: int) -> dict[str, Any]:
        return {"n": e.n, "page_id": e.source.page_id, "revision_id": e.source.revision_id,
                "namespace": e.source.namespace, "status": e.source.status, "at_head": int(at_head),
                "detail": e.detail, "bytes": e.bytes, "tokens": e.tokens, "new": new, "live": live}

    def _record(self, call: Call, label: str, stamp: str, row: dict[str, Any], entry_rows: list[dict[str, Any]], comp: Composed,
                carried: list[bd.RenderedEntry], clipboard: Clipboard | None) -> CopyResult:
        """Write the ledger rows and the file, then hand the text to the clipboard function."""
        m = self._m
        handoff_id = idmod.new_id("hnd")
        path = self._handoff_dir() / f"{handoff_id}.md"
        size = len(comp.text.encode("utf-8"))
        tokens = bd.estimate_tokens(comp.text)
        h = m.Handoff.create(handoff_id=handoff_id, label=label, created_at=stamp, pack=comp.pack.to_json(),
                             bytes=size, tokens=tokens, file=str(path), clipboard="file-only", **row)
        for part in _chunks(entry_rows):
            m.HandoffEntry.insert_many([{**r, "handoff": h.id} for r in part]).execute()
        try:
            write_private(path, comp.text, self._copy_key())
        except OSError as exc:
            raise Invalid(f"Cannot write the handoff copy {path}: {exc.strerror or exc}.") from None
        used = "file-only"
        if clipboard is not None:
            try:
                used = clipboard(comp.text)
            except Exception:  # a clipboard that fails is a clipboard that did not copy
                used = "file-only"
            if used not in CLIPBOARD_PATHS:
                used = "file-only"
            if used != "file-only":
                m.Handoff.update(clipboard=used).where(m.Handoff.id == h.id).execute()
        call.counts.update({"entries": len(carried), "bytes": size})
        return {"handoff_id": handoff_id, "label": label, "digest": comp.pack.digest,
                "continuation_of": row["continuation_of"], "text": comp.text, "file": str(path), "clipboard": used,
                "bytes": size, "tokens": tokens, "entries": [e.to_dict() for e in carried],
                "warnings": comp.warnings, "cut": comp.cut, "tokens_exact": False}

    # --- the ledger ---

    @operation("verify", always_audit=True)
    def verify(self, call: Call, text: str) -> VerifyResult:
        """Check pasted text: its digests (a continuation is rebuilt from the ledger) and each entry's state now."""
        self._require_export()
        if not isinstance(text, str):
            raise Invalid("verify takes the pasted text.")
        pasted = bd.parse_pasted(text)
        if pasted is None:
            raise Invalid("This text has no pcp-bundle trailer line; paste the whole bundle, including its last line.")
        ok, body = self._check_pasted(pasted)
        if not ok and "\r\n" in text:  # a paste that went through CRLF line ends
            retry = bd.parse_pasted(text.replace("\r\n", "\n"))
            if retry is not None:
                ok2, body2 = self._check_pasted(retry)
                if ok2:
                    pasted, ok, body = retry, ok2, body2
        origin = "unknown"
        mine = self._ledger_copies(pasted)
        if ok and mine:
            origin = "this_store"
        elif not ok:
            # A copy pcp itself rewrote after an erasure keeps its trailer; its text is what the ledger holds now.
            for h in mine:
                pack = self._pack_or_none(h.pack)
                if pack is not None and text.strip() == self._copied_text(h, pack.content).strip():
                    ok, body, origin = True, pack.content, "this_store"
                    break
        entries = self._entry_states(bd.entry_ids(body))
        call.counts.update({"entries": len(entries), "digest_ok": int(ok)})
        return {"digest_ok": ok, "digest": pasted.digest, "origin": origin, "kind": pasted.kind, "entries": entries}

    def _ledger_copies(self, pasted: bd.Pasted) -> list[Any]:
        """The copies this store's ledger recorded with the pasted trailer's digest (and, for a continuation, base).

        Unlike the digest, which anyone can recompute, the ledger is this store's own record of what it handed out."""
        m = self._m
        query = m.Handoff.select().where(m.Handoff.digest == pasted.digest)
        if pasted.kind == "continuation":
            query = query.where(m.Handoff.continuation_of == pasted.continues)
        else:
            query = query.where(m.Handoff.kind == "bundle")
        return list(query.order_by(m.Handoff.id))

    def _check_pasted(self, pasted: bd.Pasted) -> tuple[bool, str]:
        """(digests match, the full body to report entries of)."""
        if pasted.kind == "bundle":
            return pasted.trailer_base is None and bd.body_digest(pasted.body) == pasted.digest, pasted.body
        bases = list(self._continuation_bases(pasted))
        if pasted.trailer_base != pasted.continues or not bases:
            return False, bases[0] + pasted.body if bases else pasted.body
        for base in bases:
            full = base + pasted.body
            if bd.body_digest(full) == pasted.digest:
                return True, full
        return False, bases[0] + pasted.body

    def _continuation_bases(self, pasted: bd.Pasted) -> Iterator[str]:
        """Bodies a continuation may extend: the earlier copy it names, as the ledger holds it.

        A copy whose pack an erasure rewrote no longer has its original digest; a
        continuation made after that erasure extends the rewritten body, which the
        ledger finds through the continuation's own record.
        """
        m = self._m
        for row in m.Handoff.select(m.Handoff.pack).where(m.Handoff.digest == pasted.continues).order_by(m.Handoff.id):
            pack = self._pack_or_none(row.pack)
            if pack is not None and pack.digest == pasted.continues:
                yield pack.content
                break
        own = (m.Handoff.select(m.Handoff.previous)
               .where((m.Handoff.digest == pasted.digest) & (m.Handoff.continuation_of == pasted.continues)
                      & m.Handoff.previous.is_null(False)).order_by(m.Handoff.id))
        for row in own:
            pack = self._pack_or_none(m.Handoff.get_by_id(row.previous).pack)
            if pack is not None:
                yield pack.content

    @staticmethod
    def _pack_or_none(data: str) -> ContextPack | None:
        try:
            return ContextPack.from_bytes(data.encode("utf-8"))
        except ContextPackError:
            return None

    def _entry_states(self, items: list[dict[str, Any]]) -> list[VerifiedEntry]:
        revs = sorted({i["revision_id"] for i in items if i["revision_id"]})
        known: dict[str, tuple[str, str]] = {}
        deleted: set[str] = set()
        for part in _chunks(revs):
            marks = ",".join("?" * len(part))
            for rev_id, status, head in self._db.execute_sql(
                    f"SELECT r.revision_id, p.status, p.head_revision_id FROM revision r JOIN page p ON p.id = r.page_id "
                    f"WHERE r.revision_id IN ({marks})", part):
                known[rev_id] = (status, head)
            deleted.update(r[0] for r in self._db.execute_sql(
                f"SELECT revision_id FROM deleted_revision WHERE revision_id IN ({marks})", part))
        out: list[VerifiedEntry] = []
        for item in items:
            rev = item["revision_id"]
            if rev is None or rev in deleted and rev not in known:
                state = "deleted"
            elif rev not in known:
                state = "unknown"
            else:
                status, head = known[rev]
                state = status if status in ("tombstoned", "archived") else "current" if head == rev else "newer_revision"
            out.append({"n": item["n"], "page_id": item["page_id"], "revision_id": rev, "state": state})
        return out
