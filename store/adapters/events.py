"""Events as JSON Lines: one event per line, each through `ingest_event` (idempotent by its key).

    {"idempotency_key": "...", "namespace": "...", "content": "..." | "source_refs": [...],
     "media_type"?: "...", "observed_at"?: "...", "facets"?: {...}, "actor_id"?: "..."}

The whole file is parsed before anything is written: malformed JSON on any line fails
the import with the file, line and column, and leaves the store as it was. An event
the store rejects (or one without a key or namespace) is reported with its line
number; the other events still go in.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..errors import Invalid, PcpError
from ..jsonsafe import loads
from .base import ImportReport, Progress, refuse_oversize
from .formats import check_file

TOOL = "pcp-import-events"


def import_events(store: Any, path: str | Path, namespace: str | None = None,
                  progress: Progress | None = None) -> ImportReport:
    """Ingest every event of a JSON Lines file; a replayed event (same key, same body) adds nothing."""
    p = Path(path).expanduser()
    check_file(p, "events")
    events = read_events(p)
    report = ImportReport(source="events")
    total = len(events)
    for done, (line_no, event) in enumerate(events, 1):
        item = f"{p.name} line {line_no}"
        try:
            if not isinstance(event, dict):
                raise Invalid("an event must be a JSON object")
            body = {k: v for k, v in event.items() if k not in ("idempotency_key", "namespace")}
            key = event.get("idempotency_key")
            if key in (None, ""):
                raise Invalid("the event has no idempotency_key")
            ns = event.get("namespace", namespace)
            if ns in (None, ""):
                raise Invalid("the event has no namespace and none was given for the file")
            result = store.ingest_event(body, ns, key, tool=TOOL)
        except PcpError as exc:
            report.skipped.append({"item": item, "reason": exc.message, "line": line_no})
        except UnicodeEncodeError:  # a field the store does not check itself held a lone surrogate
            report.skipped.append({"item": item, "reason": "the event holds text that is not valid Unicode",
                                   "line": line_no})
        else:
            report.events += 1
            if result.get("created"):
                report.created += 1
            else:
                report.unchanged += 1
        if progress:
            progress(done, total, "events")
    return report


def read_events(path: Path) -> list[tuple[int, Any]]:
    """(line number, parsed JSON) for every non-blank line; Invalid at the first malformed line."""
    try:
        refuse_oversize(path.name, path.stat().st_size)
        raw = path.read_bytes()
    except FileNotFoundError:
        raise Invalid(f"{path}: no such file.") from None
    except IsADirectoryError:
        raise Invalid(f"{path}: a folder, not a JSON Lines file.") from None
    except OSError as exc:
        raise Invalid(f"{path}: cannot read ({exc.strerror or exc}).") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        bad_line = raw[: exc.start].count(b"\n") + 1
        raise Invalid(f"{path.name}: not UTF-8 text at line {bad_line} (byte {exc.start}).") from None
    out: list[tuple[int, Any]] = []
    for line_no, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        try:
            out.append((line_no, loads(line, f"{path.name} line {line_no}")))
        except json.JSONDecodeError as exc:
            raise Invalid(
                f"{path.name}: malformed JSON at line {line_no}, column {exc.colno}: {exc.msg}; nothing was imported."
            ) from None
    return out
