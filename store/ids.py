"""Identifiers (prefix + ULID) and RFC 3339 timestamps."""

from __future__ import annotations

import os
import re
import threading
import time
from datetime import datetime, timezone

from .errors import Invalid, shown

_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
_ULID_RE = re.compile(r"[0-9A-HJKMNP-TV-Z]{26}\Z")
PREFIXES = ("pg", "rev", "rel", "evt", "del", "hnd", "usr", "rec", "imp")
_lock = threading.Lock()
_last_ms = 0
_last_rand = 0


_PAIRS = [a + b for a in _CROCKFORD for b in _CROCKFORD]  # every 10-bit group as two digits
_HEAD_SHIFTS = tuple(range(90, -1, -10))
_RAND_MASK = (1 << 80) - 1
_head_key = -1
_head = ""


def _encode(ms: int, rand: int) -> str:
    """ULID text of (48-bit ms time, 80 random bits): 130 bits (two leading zeros) as 13 groups of 10
    bits, two digits each. Ids made in a row differ in their last groups only, so the first 20
    digits are kept from the previous id while they stay the same."""
    global _head_key, _head
    key = (ms << 50) | (rand >> 30)
    if key != _head_key:
        _head_key, _head = key, "".join([_PAIRS[(key >> shift) & 1023] for shift in _HEAD_SHIFTS])
    return _head + _PAIRS[(rand >> 20) & 1023] + _PAIRS[(rand >> 10) & 1023] + _PAIRS[rand & 1023]


def ulid() -> str:
    """A monotonic ULID: 48-bit millisecond time + 80 random bits, sortable by creation."""
    global _last_ms, _last_rand
    with _lock:
        ms = int(time.time() * 1000)
        if ms <= _last_ms:
            ms = _last_ms
            rand = (_last_rand + 1) & _RAND_MASK
        else:
            rand = int.from_bytes(os.urandom(10), "big")
        _last_ms, _last_rand = ms, rand
        return _encode(ms, rand)


def new_id(prefix: str) -> str:
    return f"{prefix}_{ulid()}"


def new_ids(prefix: str, count: int) -> list[str]:
    """`count` fresh ids under one lock (an import unit's relations)."""
    global _last_ms, _last_rand
    head = prefix + "_"
    out = []
    with _lock:
        ms = max(int(time.time() * 1000), _last_ms)
        rand = _last_rand if ms == _last_ms else int.from_bytes(os.urandom(10), "big")
        for _ in range(count):
            rand = (rand + 1) & _RAND_MASK
            out.append(head + _encode(ms, rand))
        _last_ms, _last_rand = ms, rand
    return out


def new_id_pairs(first: str, second: str, count: int) -> list[tuple[str, str]]:
    """`count` pairs of fresh ids (e.g. page and revision) under one lock: a bulk load's ids."""
    global _last_ms, _last_rand
    a, b = first + "_", second + "_"
    out = []
    with _lock:
        ms = max(int(time.time() * 1000), _last_ms)
        rand = _last_rand if ms == _last_ms else int.from_bytes(os.urandom(10), "big")
        for _ in range(count):
            r1 = (rand + 1) & _RAND_MASK
            rand = (r1 + 1) & _RAND_MASK
            out.append((a + _encode(ms, r1), b + _encode(ms, rand)))
        _last_ms, _last_rand = ms, rand
    return out


def id_kind(ident: str) -> str | None:
    """The prefix of a well-formed id (`pg`, `rev`, ...), else None."""
    if not isinstance(ident, str) or "_" not in ident:
        return None
    prefix, _, rest = ident.partition("_")
    if prefix in PREFIXES and _ULID_RE.match(rest):
        return prefix
    return None


def now() -> str:
    """Store time: RFC 3339 UTC with milliseconds and Z."""
    return format_time(datetime.now(timezone.utc))


def format_time(moment: datetime) -> str:
    moment = moment.astimezone(timezone.utc)
    # Four-digit years whatever the platform's strftime does, so stored times sort as text.
    return (f"{moment.year:04d}-{moment.month:02d}-{moment.day:02d}T{moment.hour:02d}:{moment.minute:02d}:"
            f"{moment.second:02d}.{moment.microsecond // 1000:03d}Z")


_CANONICAL = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z\Z")


def parse_time(value: object, field: str = "timestamp") -> str:
    """Validate an RFC 3339 timestamp and normalise it to UTC milliseconds with Z."""
    if isinstance(value, str) and _CANONICAL.match(value):
        # Already the store's form (most imported times are): only check that it is a real date and time.
        try:
            datetime.fromisoformat(value[:-1])
        except ValueError:
            raise Invalid(f"{field} {shown(value)} is not a valid date and time.") from None
        return value
    if not isinstance(value, str) or not value.strip():
        raise Invalid(f"{field} must be an RFC 3339 timestamp such as 2026-01-31T09:30:00Z.")
    text = value.strip()
    # RFC 3339: a full date, or a full date-time with seconds and an offset (Z or +hh:mm).
    if not re.match(r"\d{4}-\d{2}-\d{2}([Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2}))?\Z", text):
        raise Invalid(f"{field} {shown(value)} is not an RFC 3339 timestamp (e.g. 2026-01-31T09:30:00Z).")
    if text[-1] in "zZ":
        text = text[:-1] + "+00:00"
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise Invalid(f"{field} {shown(value)} is not a valid date and time.") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    try:
        return format_time(moment)
    except OverflowError:
        raise Invalid(f"{field} {shown(value)} is outside the years 1 to 9999 once converted to UTC.") from None
