"""Text helpers every front end shares (the app, the CLI's renderer): counts with their noun, stored text made
safe to draw, paths on one line. Imports Rich's cell measure only, never Textual."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import os
from pathlib import Path

from rich.cells import cell_len


def counted(n: int, singular: str, plural: str | None = None) -> str:
    """`1 page`, `2 pages`, `1 entry`, `3 entries`: a count with its noun in the right number."""
    return f"{n:,} {singular if n == 1 else plural or singular + 's'}"


def already_gone(receipt: Mapping[str, Any]) -> str:
    """For a bulk deletion's receipt: how many of the pages it dealt with it erased itself, when some were
    already gone (erased another way meanwhile, e.g. by a second deletion while this one was stopped)."""
    done = int(receipt.get("pages_done") or 0)
    erased = int((receipt.get("counts") or {}).get("pages", done))
    if erased >= done:
        return ""
    return f" ({erased:,} erased by this deletion, {done - erased:,} already gone)"


# Control characters other than tab and newline (C0, DEL, C1) shown as the Unicode control pictures: stored
# text (an import, a model's write) must never reach the terminal as an escape sequence (ESC ] 2 set the
# window title, ESC ] 52 writes the clipboard, ESC [ 2 J clears the screen). Rich and Textual strip only a few.
_PICTURES = {c: 0x2400 + c for c in range(0x20) if c not in (9, 10)} | {0x7F: 0x2421} | \
    {c: 0xFFFD for c in range(0x80, 0xA0)}


def printable(text: str) -> str:
    """`text` safe to draw: its control characters (but tab and newline) as visible symbols (ESC as ␛)."""
    return text.translate(_PICTURES)


def one_line(text: str) -> str:
    """`text` on one line (every run of white space, newlines too, as one space), safe to draw (`printable`): a
    label in a list or tree, where a newline would break the line and a stored escape sequence reach the
    terminal (relation types are any text a writer chose)."""
    return printable(" ".join(str(text).split()))


def cut_cells(text: str, width: int) -> str:
    """`text` in at most `width` cells, "…" right after the last whole character where it was cut (a wide
    character that does not fit whole is left out, never padded: `紧致性的…`, not `紧致性的 …`)."""
    if cell_len(text) <= width:
        return text
    if width <= 0:
        return ""
    kept, used = [], 0
    for ch in text:
        size = cell_len(ch)
        if used + size > width - 1:
            break
        kept.append(ch)
        used += size
    return "".join(kept) + "…"


def shown_path(path: Path | str, width: int = 0) -> str:
    """A store's path to show on one line: the home folder as `~`, and when it is wider than `width` cells
    (0: any width) folders left out from its middle, whole: `~/…/pcp/demo.db`, then `…/pcp/demo.db`, at the
    least `…demo.db` (the file name always). A cut inside a folder's name (`…are/pcp/demo.db`) read as nothing."""
    text = str(path)
    home = str(Path.home())
    if home not in ("", "/") and (text == home or text.startswith(home + os.sep)):
        text = "~" + text[len(home):]
    text = printable(text)
    if width <= 0 or cell_len(text) <= width:
        return text
    parts = text.split(os.sep)
    head = parts[0] + os.sep if parts[0] else os.sep  # "~/" or "/" (or a relative path's first folder)
    for keep in range(len(parts) - 2, 0, -1):  # the most folders that fit, nearest the file first, from home if room
        for start in (head + "…" + os.sep, "…" + os.sep):
            shown = start + os.sep.join(parts[-keep:])
            if cell_len(shown) <= width:
                return shown
    return "…" + parts[-1]


def when(stamp: str | None) -> str:
    """`2026-04-01 12:00` (UTC) or `never`."""
    return stamp[:16].replace("T", " ") if stamp else "never"
