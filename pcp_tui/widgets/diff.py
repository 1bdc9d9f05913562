"""A diff between two revisions (difflib), unified or side by side, coloured from theme variables."""

from __future__ import annotations

import difflib
import re

from rich.cells import cell_len
from textual.content import Content

from .document import AtWidth, Document
from ..text import printable

ADDED = "$diff-added on $diff-added-background"
REMOVED = "$diff-removed on $diff-removed-background"
HEADER = "bold $diff-header"


_RUNS = re.compile(r"\s+|\S+")
SAME = "The two revisions have the same content."
ITSELF = "From and To are the same revision: f and t in the history choose others."
ONLY_ONE = "This page has one revision: nothing to compare yet."


def cut_cells(text: str, width: int) -> list[str]:
    """`text` cut into pieces of at most `width` terminal cells (a CJK character takes two), never empty."""
    width = max(2, width)
    pieces: list[str] = []
    piece: list[str] = []
    used = 0
    for ch in text:
        w = cell_len(ch)
        if used + w > width and piece:
            pieces.append("".join(piece))
            piece, used = [], 0
        piece.append(ch)
        used += w
    pieces.append("".join(piece))
    return pieces


def wrap_cells(text: str, width: int) -> list[str]:
    """`text` in lines of at most `width` cells, broken between words; a word wider than a line is cut.

    Spaces stay where they are (a diff shows them): the ones at a break end the line before it, so every
    continuation starts with a word, never with the tail of one cut in two.
    """
    text = text.expandtabs(4)
    width = max(2, width)
    lines: list[str] = []
    line, used = "", 0
    for run in _RUNS.findall(text):
        w = cell_len(run)
        if used + w <= width:
            line, used = line + run, used + w
        elif run.isspace():  # spaces at a break: as many as fit end this line, the rest are dropped
            fit = cut_cells(run, width - used)[0] if used < width else ""
            lines.append(line + fit)
            line, used = "", 0
        else:
            if line:
                lines.append(line)
            *whole, line = cut_cells(run, width)
            lines += whole
            used = cell_len(line)
    if line or not lines:
        lines.append(line)
    return lines


def pad_cells(text: str, width: int) -> str:
    """`text` padded with spaces to exactly `width` cells (it is never wider: wrap_cells made it fit)."""
    return text + " " * max(0, width - cell_len(text))


def unified(old: str, new: str, old_name: str, new_name: str, width: int | None = None) -> Content:
    """The unified diff of two texts as styled content; with `width`, long lines wrap and keep their marker."""
    lines = list(difflib.unified_diff(old.splitlines(), new.splitlines(), old_name, new_name, lineterm="", n=3))
    if not lines:
        return Content(SAME)
    out: list[Content] = []
    for line in lines:
        if line.startswith(("+++", "---", "@@")):
            out.append(Content.styled(line, HEADER))
            continue
        style = ADDED if line.startswith("+") else REMOVED if line.startswith("-") else ""
        marker, body = line[:1] or " ", line[1:]
        pieces = wrap_cells(body, width - 1) if width else [body]
        for piece in pieces:  # every wrapped piece starts with the line's own + / - / space
            text = marker + piece
            out.append(Content.styled(pad_cells(text, width) if width and style else text, style) if style
                       else Content(text))
    return Content("\n").join(out)


def side_by_side(old: str, new: str, width: int, old_name: str, new_name: str) -> Content:
    """Old on the left, new on the right, changed lines aligned by difflib opcodes.

    Columns are measured in terminal cells (CJK text takes two per character), and long lines wrap inside
    their column instead of being cut, each piece keeping its - / + marker, so no change is hidden.
    """
    half = max(10, (width - 3) // 2)
    a, b = old.splitlines(), new.splitlines()
    if a == b:  # (as the unified diff says it: two copies of the same text side by side say nothing)
        return Content(SAME)
    rows: list[tuple[str, str, str, str]] = []  # left text, left style, right text, right style
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            rows += [(a[i], "", b[j], "") for i, j in zip(range(i1, i2), range(j1, j2), strict=True)]
            continue
        left, right = a[i1:i2], b[j1:j2]
        for k in range(max(len(left), len(right))):
            rows.append((left[k] if k < len(left) else "", REMOVED if k < len(left) else "",
                         right[k] if k < len(right) else "", ADDED if k < len(right) else ""))

    def head(name: str) -> str:
        return pad_cells(cut_cells(name, half - 1)[0] + ("…" if cell_len(name) > half - 1 else ""), half)

    out = [Content.styled(head(old_name) + " │ " + head(new_name), HEADER)]
    for lt, ls, rt, rs in rows:
        left = wrap_cells(lt, half - 2) if ls or lt else [""]
        right = wrap_cells(rt, half - 2) if rs or rt else [""]
        lmark = "- " if ls else "  "
        rmark = "+ " if rs else "  "
        for k in range(max(len(left), len(right))):
            lcell = pad_cells(lmark + left[k], half) if k < len(left) else " " * half
            rcell = pad_cells(rmark + right[k], half) if k < len(right) else " " * half
            line = Content(lcell + " │ ") + (Content.styled(rcell, rs) if rs and k < len(right) else Content(rcell))
            if ls and k < len(left):
                line = Content.styled(lcell, ls) + Content(" │ ") + line[len(lcell) + 3:]
            out.append(line)
    return Content("\n").join(out)


class DiffView(Document):
    """Shows the diff of two revision texts; `layout_mode` is unified or side by side.

    A Document (document.py): the diff is built at the view's width where it is rendered (in a worker thread
    when the revisions are long) and only the lines in view are drawn; a new page's diff is a repaint, not a
    layout pass of the whole screen.
    """

    EMPTY = "Choose two revisions to compare."

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.layout_mode = "unified"
        self._texts: tuple[str, str, str, str] | None = None

    def on_mount(self) -> None:
        self.clear()

    def show_itself(self, only: bool = False) -> None:
        """One revision against itself (f and t on the same one, or Enter on the first one; `only`: the page has
        no other)."""
        self._texts = None
        said = ONLY_ONE if only else ITSELF
        self.show(Content(said), said)

    def show_diff(self, old: str, new: str, old_name: str, new_name: str) -> None:
        self._texts = (printable(old), printable(new), old_name, new_name)
        self._draw_diff()

    def clear(self, said: str = EMPTY) -> None:
        self._texts = None
        self.show(Content(said), said)

    def toggle(self) -> str:
        self.layout_mode = "side-by-side" if self.layout_mode == "unified" else "unified"
        self._draw_diff()
        return self.layout_mode

    def _draw_diff(self) -> None:
        if self._texts is None:
            return
        old, new, old_name, new_name = self._texts
        if self.layout_mode == "unified":
            def build(width: int) -> Content:
                return unified(old, new, old_name, new_name, max(4, width))
        else:
            def build(width: int) -> Content:
                return side_by_side(old, new, width, old_name, new_name)  # never wider than the view
        # The plain text (shown if the diff could not be drawn; its length decides where it is built) is
        # both revisions.
        self.show(AtWidth(build), f"{old_name}\n{old}\n{new_name}\n{new}")
