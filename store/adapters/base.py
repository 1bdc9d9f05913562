"""What every importer shares: reading export files, time conversion, the report."""

from __future__ import annotations

import json
import re
import zipfile
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterator

from ..constants import LIMITS
from ..constants import Progress as Progress  # the one progress callback type, re-exported for the importers
from ..errors import Invalid, LimitExceeded, PcpError
from ..ids import format_time, now, parse_time
from ..jsonsafe import loads
from ..types import ImportSummary, SkippedItem


# The version of the chat and agent importers' rules, named in the provenance of what they write
# ("pcp-import-chatgpt/2"); a page an older version wrote is revised under newer rules only when
# its text, facets or refs really change, and that revision names the upgrade. Version 1 is main
# before issue 15 (it named no version); bump this when a rule change alters what is stored.
IMPORT_RULES = 2

# The coding-agent importers' rules (Claude Code, Codex, Gemini CLI), versioned apart from the chat
# importers'. Version 3 (issue 29): a split message is a page once any of its records has text, the
# parent chain runs through every record, text the CLI injected is no message (pages older rules
# made of it are tombstoned on re-import, their stale `responds_to` links retracted).
AGENT_RULES = 3


def unicode_safe(text: str) -> str:
    """`text` with any lone surrogate (a `\\ud800` escape in the export's JSON: not Unicode, SQLite cannot store it)
    written as that escape, so that an id or a quoted title can be stored and shown."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


@dataclass
class ImportReport:
    """The summary an import ends with."""

    source: str
    conversations: int = 0
    messages: int = 0
    notes: int = 0
    events: int = 0
    created: int = 0
    unchanged: int = 0
    revised: int = 0
    relations: int = 0
    hidden_skipped: int = 0
    empty_skipped: int = 0
    skipped: list[SkippedItem] = field(default_factory=list)
    path: str | None = None  # what the import was given
    entries: list[dict[str, Any]] = field(default_factory=list)  # the kept report's lines
    import_id: str | None = None  # set once the report is kept
    started_at: str = field(default_factory=now)

    def add(self, counts: dict[str, Any]) -> None:
        for key in ("created", "unchanged", "revised", "relations"):
            setattr(self, key, getattr(self, key) + counts.get(key, 0))

    def skip(self, item: str, reason: str, file: str | None = None, page_id: str | None = None) -> None:
        item, reason = unicode_safe(item), unicode_safe(reason)  # (a title quoted from the export may not be)
        self.skipped.append({"item": item, "reason": reason})
        self.entries.append({"file": file, "item": item, "page_id": page_id, "outcome": "skipped", "reason": reason})

    def wrote(self, file: str | None, source_key: str, page: Any, counts: dict[str, int]) -> None:
        """A conversation or session that came in: its page (a PageRef) and its unit's counts."""
        outcome = page.outcome
        if outcome == "unchanged" and (counts.get("created") or counts.get("revised")):
            outcome = "revised"  # the conversation page is the same, some of its messages are new or changed
        self.entries.append({"file": file, "item": unicode_safe(source_key), "page_id": page.page_id, "outcome": outcome,
                             "counts": {k: n for k, n in counts.items() if k in ("created", "unchanged", "revised")}})

    def keep(self, store: Any) -> ImportReport:
        """Keep this report in the store (its own table; `pcp import-report`)."""
        kept = store.record_import(self.to_dict(), self.entries, path=self.path, started_at=self.started_at)
        self.import_id = kept["import_id"]
        return self

    def to_dict(self) -> ImportSummary:
        out: ImportSummary = {
            "source": self.source, "conversations": self.conversations, "messages": self.messages,
            "notes": self.notes, "events": self.events, "created": self.created, "unchanged": self.unchanged,
            "revised": self.revised, "relations": self.relations, "hidden_skipped": self.hidden_skipped,
            "empty_skipped": self.empty_skipped,
            "skipped": list(self.skipped),
        }
        if self.import_id:
            out["import_id"] = self.import_id
        return out


def read_json_export(path: str | Path, member: str = "conversations.json") -> tuple[Any, str]:
    """Parse a JSON export file, or `member` inside an export .zip; (data, display name)."""
    text, label = read_json_text(path, member)
    return parse_json_text(text, label), label


def parse_json_text(text: str, label: str) -> Any:
    """The JSON of an export's text (Invalid, in one line, when it is not JSON)."""
    try:
        return loads(text, label)
    except json.JSONDecodeError as exc:
        raise Invalid(f"{label}: malformed JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}.") from None


class NotAnArray(ValueError):
    """A JSON text that is not one array (it may still be JSON of another shape: parse it whole)."""


_WS = re.compile(r"[ \t\n\r]*")  # JSON's whitespace, as json.decoder skips it
decode_at = json.JSONDecoder().raw_decode  # (value, end) of the JSON value starting at an offset: json.loads's decoder


def _skip(text: str, pos: int) -> int:
    """Past the whitespace at `pos`."""
    match = _WS.match(text, pos)
    return match.end() if match is not None else pos  # (a pattern of `*` always matches)


def array_items(text: str) -> Iterator[tuple[int, Any]]:
    """(where it starts, its value) of each item of a JSON text that is one array, read one at a time, so that a
    reader may stop, or seek to an item whose start it was told (`decode_at`). The values are json.loads's (one
    decoder); where json.loads refuses the text this raises ValueError (JSONDecodeError) or RecursionError, when
    it comes to that place: a text is JSON only once this has ended. NotAnArray first for JSON of another shape."""
    pos = _skip(text, 0)
    if not text.startswith("[", pos):
        raise NotAnArray("not an array")
    pos = _skip(text, pos + 1)
    if text.startswith("]", pos):
        pos += 1
    else:
        while True:
            value, end = decode_at(text, pos)
            yield pos, value
            pos = _skip(text, end)
            if text.startswith(",", pos):
                pos = _skip(text, pos + 1)
            elif text.startswith("]", pos):
                pos += 1
                break
            else:
                raise ValueError("not JSON: no , or ] after an item")
    if _skip(text, pos) != len(text):
        raise ValueError("not JSON: more after the array")


def read_json_text(path: str | Path, member: str = "conversations.json") -> tuple[str, str]:
    """The text of a JSON export file, or of `member` inside an export .zip; (text, display name)."""
    p = Path(path)
    if not p.exists():
        raise Invalid(f"{p}: no such file.")
    try:
        if zipfile.is_zipfile(p):
            with zipfile.ZipFile(p) as zf:
                names = [n for n in zf.namelist() if n.rsplit("/", 1)[-1] == member]
                if not names:
                    raise Invalid(f"{p}: the archive has no {member}; is it a chat export?")
                name = sorted(names, key=len)[0]
                label = f"{p.name}!{name}"
                info = zf.getinfo(name)
                refuse_oversize(label, info.file_size)  # checked before inflating a byte
                with zf.open(info) as fh:
                    raw = _read_capped(fh, label)
        else:
            label = p.name
            refuse_oversize(label, p.stat().st_size)
            with open(p, "rb") as fh:
                raw = _read_capped(fh, label)
    except OSError as exc:
        raise Invalid(f"{p}: cannot read ({exc.strerror or exc}).") from None
    except zipfile.BadZipFile as exc:
        raise Invalid(f"{p}: damaged zip archive ({exc}).") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise Invalid(f"{label}: not UTF-8 text (byte {exc.start}).") from None
    return text, label


def json_object(value: Any) -> dict[str, Any]:
    """`value` when it is a JSON object, else an empty one (exports leave fields out or give other types)."""
    return value if isinstance(value, dict) else {}


def json_text(value: Any) -> str:
    """`value` when it is a string, else empty text."""
    return value if isinstance(value, str) else ""


def refuse_oversize(label: str, size: int) -> None:
    """Refuse (LimitExceeded) an input over the import limit, before a byte of it is read."""
    limit = LIMITS["max_import_bytes"]
    if size > limit:
        raise LimitExceeded(f"{label} is {size:,} bytes unpacked; the import limit is {limit:,} bytes; nothing was imported.")


def _read_capped(fh: Any, label: str) -> bytes:
    """Read in chunks, never more than the import limit (a size in a zip header can lie)."""
    limit = LIMITS["max_import_bytes"]
    parts: list[bytes] = []
    total = 0
    while True:
        chunk = fh.read(1 << 20)
        if not chunk:
            return b"".join(parts)
        total += len(chunk)
        if total > limit:
            refuse_oversize(label, total)
        parts.append(chunk)


def epoch_to_time(value: Any) -> str | None:
    """Export times (epoch seconds, or ISO strings) as RFC 3339 UTC with milliseconds."""
    if value is None or value == "":
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        try:
            return format_time(datetime.fromtimestamp(float(value), tz=timezone.utc))
        except (OverflowError, OSError, ValueError):
            return None
    if isinstance(value, str):
        try:
            return parse_time(value)
        except PcpError:
            return None
    return None
