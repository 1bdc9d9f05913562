"""Checks of an export's records before any of it is written (pcp-core.md section 7)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from . import ids
from .errors import Invalid

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


def _where(p: Path, number: int, kind: str) -> str:
    return f"{p}: line {number} ({kind})"


def _check_id(value: Any, want: str, field: str, where: str) -> None:
    many, want = want.startswith("*"), want.lstrip("*")
    optional, want = want.endswith("?"), want.rstrip("?")
    if optional and value is None:
        return
    values = value if many else [value]
    if many and not isinstance(value, list):
        raise Invalid(f"{where}: {field} must be a list of {want} ids; nothing was imported.")
    for item in values:
        if ids.id_kind(item) != want:
            shown = str(item)[:40]
            raise Invalid(f"{where}: {field} {shown!r} is not a {want} id; nothing was imported.")


def check_record(obj: dict, p: Path, number: int) -> None:
    """Refuse a record whose ids are not of the shape they claim (an id may become a file name)."""
    kind = obj.get("kind")
    fields = ID_FIELDS.get(kind) if isinstance(kind, str) else None
    if fields is None:
        raise Invalid(f"{p}: line {number} has an unknown kind {str(kind)[:40]!r}; nothing was imported.")
    where = _where(p, number, kind)
    for field, want in fields.items():
        _check_id(obj.get(field), want, field, where)
    if kind == "revision":
        for event in obj.get("provenance") or []:
            if isinstance(event, dict):
                _check_id(event.get("input_revision_ids", []), "*rev", "input_revision_ids", where)
    if kind == "handoff":
        for entry in obj.get("entries") or []:
            if not isinstance(entry, dict):
                raise Invalid(f"{where}: every handoff entry must be an object; nothing was imported.")
            _check_id(entry.get("page_id"), "pg?", "entry page_id", where)
            _check_id(entry.get("revision_id"), "rev?", "entry revision_id", where)
