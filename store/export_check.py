"""Checks of an export's records before any of it is written (pcp-core.md section 7)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ctxpack import ContextPack, ContextPackDelta

from . import ids
from .constants import LIMITS
from . import validate as v
from .errors import Invalid, PcpError

# For each record kind: the fields that hold an id, and the id kind each must be.
# A trailing "?" allows null, a leading "*" means a list of ids.
ID_FIELDS: dict[str, dict[str, str]] = {
    "scope": {},
    "page": {"page_id": "pg", "head_revision_id": "rev"},
    "revision": {"page_id": "pg", "revision_id": "rev", "previous_revision_id": "rev?"},
    "relation": {"relation_id": "rel", "from_page_id": "pg", "to_page_id": "pg", "from_revision_id": "rev",
                 "to_revision_id": "rev"},
    "retraction": {"event_id": "evt", "relation_id": "rel"},
    "lifecycle_event": {"event_id": "evt", "page_id": "pg"},
    "suppression": {"page_id": "pg"},
    "recommendation": {"recommendation_id": "rec", "page_id": "pg"},
    "source_page": {"page_id": "pg"},
    "receipt": {"receipt_id": "del", "page_ids": "*pg", "revision_ids": "*rev"},
    "handoff": {"handoff_id": "hnd", "previous_handoff_id": "hnd?"},
}


class _Where:
    """Where a record is, formatted only when an error names it (a restore checks millions of records)."""

    __slots__ = ("p", "number", "kind")

    def __init__(self, p: Path, number: int, kind: str) -> None:
        self.p, self.number, self.kind = p, number, kind

    def __str__(self) -> str:
        return f"{self.p}: line {self.number} ({self.kind})"


# ID_FIELDS parsed once: kind -> [(field, id kind, null allowed, a list of ids)].
_ID_SPECS = {kind: [(field, want.strip("*?"), want.endswith("?"), want.startswith("*")) for field, want in fields.items()]
             for kind, fields in ID_FIELDS.items()}


def _check_id(value: Any, want: str, optional: bool, many: bool, field: str, where: _Where) -> None:
    if optional and value is None:
        return
    if many and not isinstance(value, list):
        raise Invalid(f"{where}: {field} must be a list of {want} ids; nothing was imported.")
    for item in value if many else (value,):
        if ids.id_kind(item) != want:
            shown = str(item)[:40]
            raise Invalid(f"{where}: {field} {shown!r} is not a {want} id; nothing was imported.")


def header_aliases(header: Any) -> list[str]:
    """The owner ids an export's header lists as its owner's (stores that joined with their history), at most 1,000."""
    theirs = header.get("owner_aliases") if isinstance(header, dict) else None
    if not isinstance(theirs, list):
        return []
    return [a["alias"] for a in theirs if isinstance(a, dict) and a.get("owner") == header.get("owner_id")
            and isinstance(a.get("alias"), str) and ids.id_kind(a["alias"]) == "usr"][:1000]


def header_owners(header: Any) -> set[str]:
    """Every owner id of an export's one owner: its header's and the aliases it lists (empty: no valid owner)."""
    owner = header.get("owner_id") if isinstance(header, dict) else None
    return {owner, *header_aliases(header)} if isinstance(owner, str) and ids.id_kind(owner) == "usr" else set()


def check_record(obj: dict, p: Path, number: int) -> None:
    """Refuse a record the write path would refuse: ids of the wrong shape (an id may become a file name),
    text over a limit, NUL or lone surrogates, unknown actor types or statuses, a digest that does not match."""
    kind = obj.get("kind")
    specs = _ID_SPECS.get(kind) if isinstance(kind, str) else None
    if specs is None or not isinstance(kind, str):
        raise Invalid(f"{p}: line {number} has an unknown kind {str(kind)[:40]!r}; nothing was imported.")
    where = _Where(p, number, kind)
    for field, want, optional, many in specs:
        _check_id(obj.get(field), want, optional, many, field, where)
    if kind == "revision":
        for event in obj.get("provenance") or []:
            if isinstance(event, dict):
                _check_id(event.get("input_revision_ids", []), "rev", False, True, "input_revision_ids", where)
    if kind == "handoff":
        for entry in obj.get("entries") or []:
            if not isinstance(entry, dict):
                raise Invalid(f"{where}: every handoff entry must be an object; nothing was imported.")
            _check_id(entry.get("page_id"), "pg", True, False, "entry page_id", where)
            _check_id(entry.get("revision_id"), "rev", True, False, "entry revision_id", where)
    try:
        CHECKS[kind](obj)
    except PcpError as exc:
        raise type(exc)(f"{where}: {exc.message.rstrip('.')}; nothing was imported.") from None
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise Invalid(f"{where} is malformed ({type(exc).__name__}: {str(exc)[:80]}); nothing was imported.") from None


PAGE_STATUSES = ("active", "archived", "tombstoned")


def _text(value: Any, what: str, limit: int = 200, optional: bool = False) -> None:
    if value is None and optional:
        return
    if not isinstance(value, str):
        raise Invalid(f"{what} must be text")
    if len(value) > limit:
        raise Invalid(f"{what} has {len(value):,} characters; the limit is {limit:,}")
    if "\x00" in value:
        raise Invalid(f"{what} may not contain NUL characters")
    v.unicode_text(value, what)


def _time(value: Any, what: str, optional: bool = False) -> None:
    if value is None and optional:
        return
    ids.parse_time(value, what)


def _actor(actor: Any, what: str = "actor") -> None:
    if not isinstance(actor, dict):
        raise Invalid(f"{what} must be an object with actor_type and actor_id")
    if actor.get("actor_type") not in v.ACTOR_TYPES:
        raise Invalid(f"{what} actor_type {str(actor.get('actor_type'))[:40]!r} is not one of {', '.join(v.ACTOR_TYPES)}")
    _text(actor.get("actor_id"), f"{what} actor_id")


def _scope(obj: dict) -> None:
    v.namespace(obj["namespace"])
    if obj.get("parent") is not None:
        v.namespace(obj["parent"])
    if obj.get("visibility") not in ("private", "shared"):
        raise Invalid("visibility must be private or shared")
    _text(obj.get("display_name"), "display_name", optional=True)
    _text(obj.get("description"), "description", limit=LIMITS["max_summary_chars"], optional=True)
    if ids.id_kind(obj.get("owner_id")) != "usr":
        raise Invalid("owner_id is not a usr id")
    _time(obj["created_at"], "created_at")
    _time(obj["updated_at"], "updated_at")


def _page(obj: dict) -> None:
    v.namespace(obj["namespace"])
    if obj.get("status") not in PAGE_STATUSES:
        raise Invalid(f"status must be one of {', '.join(PAGE_STATUSES)}")
    if obj.get("actor_type") is not None and obj["actor_type"] not in v.ACTOR_TYPES:
        raise Invalid(f"actor_type must be one of {', '.join(v.ACTOR_TYPES)}")
    _time(obj["created_at"], "created_at")
    _time(obj["updated_at"], "updated_at")


def _revision(obj: dict) -> None:
    v.namespace(obj["namespace"])
    payload = v.payload(obj["payload"]) if obj.get("payload") is not None else None
    v.source_refs(obj["source_refs"], stored=True)
    v.facets(obj["facets"])
    if obj.get("content_digest") != v.content_digest(payload["content"] if payload else None):
        raise Invalid("its content_digest does not match its content")
    _actor(obj["created_by"], "created_by")
    events = obj["provenance"]
    v.provenance(events)
    for event in events:
        if "actor_type" in event and event["actor_type"] not in v.ACTOR_TYPES:
            raise Invalid(f"a provenance actor_type must be one of {', '.join(v.ACTOR_TYPES)}")
        if "actor_id" in event:
            _text(event["actor_id"], "a provenance actor_id")
        if "timestamp" in event:
            _time(event["timestamp"], "a provenance timestamp")
    _time(obj["created_at"], "created_at")
    for key in ("observed_at", "valid_from", "valid_to"):
        _time(obj.get(key), key, optional=True)


def _relation(obj: dict) -> None:
    v.relation_type(obj["relation_type"])
    _actor(obj["created_by"], "created_by")
    _time(obj["created_at"], "created_at")


def _event(obj: dict) -> None:
    _actor(obj["actor"])
    v.reason(obj["reason"])
    _time(obj["created_at"], "created_at")


def _lifecycle_event(obj: dict) -> None:
    for key in ("from", "to"):
        if obj.get(key) not in PAGE_STATUSES:
            raise Invalid(f"{key} must be one of {', '.join(PAGE_STATUSES)}")
    _event(obj)


def _suppression(obj: dict) -> None:
    _text(obj["context_id"], "context_id")
    v.optional_reason(obj.get("reason"))
    _time(obj.get("expires_at"), "expires_at", optional=True)
    _actor(obj["actor"])
    _time(obj["created_at"], "created_at")


def _recommendation(obj: dict) -> None:
    _text(obj["action"], "action", limit=40)
    _text(obj["status"], "status", limit=40)
    _event(obj)


def _source_page(obj: dict) -> None:
    _text(obj["source_key"], "source_key", limit=2000)
    _text(obj["body_digest"], "body_digest", limit=200)


def _receipt(obj: dict) -> None:
    if obj.get("namespace") is not None:
        v.namespace(obj["namespace"])
    if not isinstance(obj["counts"], dict):
        raise Invalid("counts must be an object")
    _event(obj)


def _handoff(obj: dict) -> None:
    _text(obj["label"], "label")
    _time(obj["created_at"], "created_at")
    ContextPack.from_bytes(obj["pack"].encode("utf-8"))
    if obj["delta"] is not None:
        ContextPackDelta.from_bytes(obj["delta"].encode("utf-8"))
    if obj.get("handoff_kind") not in ("bundle", "continuation"):
        raise Invalid("handoff_kind must be bundle or continuation")
    if not isinstance(obj["entries"], list):
        raise Invalid("entries must be a list")


CHECKS = {"scope": _scope, "page": _page, "revision": _revision, "relation": _relation, "retraction": _event,
          "lifecycle_event": _lifecycle_event, "suppression": _suppression, "recommendation": _recommendation,
          "source_page": _source_page, "receipt": _receipt, "handoff": _handoff}
