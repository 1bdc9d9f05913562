"""An imported page checked and encoded without the store (`prepare`): the part of an import's upsert that a helper
process can do (store/import_helper.py), and its plain form for the pipe (`Prepared.wire`)."""

from __future__ import annotations

import contextvars
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from json.encoder import encode_basestring as _json_text  # what core.dumps encodes text with
from typing import Any

from . import index
from . import validate as v
from .core import dumps
from .titles import page_title

__all__ = ["Prepared", "cleaning", "cleaning_on", "payload_json", "prepare"]

Cleaner = Callable[[dict[str, Any] | None, dict[str, Any] | None], tuple[dict[str, Any] | None, dict[str, Any] | None]]
# What every imported page's payload and facets go through before they are checked, while a capture runs
# (store/capture.py: secrets redacted, pasted bundles left out). Here, where every import path checks its pages
# (upsert, a planned conversation or session, page by page or in one pass), so no path can land a page uncleaned.
_CLEANING: contextvars.ContextVar[Cleaner | None] = contextvars.ContextVar("pcp_import_cleaning", default=None)


@contextmanager
def cleaning(clean: Cleaner) -> Iterator[None]:
    """Within this block (this thread), every page prepared for an import is cleaned by `clean` first."""
    token = _CLEANING.set(clean)
    try:
        yield
    finally:
        _CLEANING.reset(token)


def cleaning_on() -> bool:
    """Whether pages are cleaned now: an import's helper process would plan them uncleaned, so none is started."""
    return _CLEANING.get() is not None


def payload_json(payload: dict[str, Any] | None) -> str:
    """`dumps` of a checked payload (exactly its two keys, in sorted order), its content encoded once."""
    if payload is None:
        return "null"
    return '{"content":' + _json_text(payload["content"]) + ',"media_type":' + _json_text(payload["media_type"]) + "}"


@dataclass(slots=True)
class Prepared:
    """A page checked and encoded for `ImportUnit.land`: everything about it that needs no store. `ready` (made
    only where asked, e.g. in an import's helper process): its index text (title, body, meta), date tokens and
    term count, read against `observed`."""

    payload: dict[str, Any] | None
    refs: list[Any]
    refs_json: str
    facets: dict[str, Any]
    facet_json: str
    observed: str | None
    digest: str
    title: str
    content_digest: str | None = None
    ready: tuple[str, str, str, tuple[str, ...], int] | None = None
    whole: bool = True  # False: made from `wire()`, without the source refs (and facets, when `ready`): new pages only

    def wire(self) -> tuple[Any, ...]:
        """What a new page needs of this, as plain values (a helper's answer: pickled and read back cheaply)."""
        body = self.payload
        return (body["media_type"] if body else None, body["content"] if body else None, self.refs_json,
                None if self.ready is not None else self.facets, self.facet_json, self.observed, self.digest,
                self.title, self.content_digest, self.ready)

    @classmethod
    def from_wire(cls, wire: tuple[Any, ...]) -> Prepared:
        media, content, refs_json, facets, facet_json, observed, digest, title, content_digest, ready = wire
        return cls(None if media is None else {"media_type": media, "content": content}, [], refs_json,
                   facets if facets is not None else {}, facet_json, observed, digest, title, content_digest, ready,
                   False)


def prepare(payload: dict[str, Any] | None = None, source_refs: list[Any] | None = None,
            facets: dict[str, Any] | None = None, observed_at: str | None = None, change_key: Any = None,
            salt: bytes | None = None, df: Counter[str] | None = None) -> Prepared:
    """The checks and encodings of an upserted page (Invalid, LimitExceeded as `upsert` raises them). With `salt`
    and `df` (a helper preparing new pages) also its content digest and index text, its keys counted in `df`."""
    clean = _CLEANING.get()
    if clean is not None:
        payload, facets = clean(payload, facets)
    body_payload = v.payload(payload) if payload is not None else None
    (refs, refs_json), (facet_map, facet_json) = v.source_refs_with_json(source_refs), v.facets_with_json(facets)
    observed = v.optional_time(observed_at, "observed_at")
    digest = v.body_digest_of({"payload": payload_json(body_payload), "facets": facet_json,
                               "source_refs": refs_json if change_key is None else
                               "[]" if change_key == [] else dumps(change_key)})
    page = Prepared(body_payload, refs, refs_json, facet_map, facet_json, observed, digest,
                    page_title(facet_map, body_payload, refs))
    if salt is not None and df is not None and observed is not None and (body_payload is not None or refs):
        content = body_payload["content"] if body_payload else None
        doc = index.analyse(page.title, content, facet_map, salt, observed)
        index.count_keys(df, doc)
        page.content_digest = v.content_digest(content)
        page.ready = (" ".join(doc.title), " ".join(doc.body), " ".join(doc.meta), doc.dates, doc.count)
    return page
