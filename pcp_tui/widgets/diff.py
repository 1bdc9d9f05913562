"""A diff between two revisions (difflib), unified or side by side, coloured from theme variables."""

from __future__ import annotations

import difflib

from textual.content import Content, Span
from textual.widgets import Static

ADDED = "$diff-added on $diff-added-background"
REMOVED = "$diff-removed on $diff-removed-background"
HEADER = "bold $diff-header"


def unified(old: str, new: str, old_name: str, new_name: str) -> Content:
    """The unified diff of two texts as styled content."""
    lines = list(difflib.unified_diff(old.splitlines(), new.splitlines(), old_name, new_name, lineterm="", n=3))
    if not lines:
        return Content("The two revisions have the same content.")
    out: list[Content] = []
    for line in lines:
        if line.startswith(("+++", "---", "@@")):
            style = HEADER
        elif line.startswith("+"):
            style = ADDED
        elif line.startswith("-"):
            style = REMOVED
        else:
            style = ""
        out.append(Content.styled(line, style) if style else Content(line))
    return Content("\n").join(out)


def side_by_side(old: str, new: str, width: int, old_name: str, new_name: str) -> Content:
    """Old on the left, new on the right, changed lines aligned by difflib opcodes."""
    half = max(10, (width - 3) // 2)
    a, b = old.splitlines(), new.splitlines()
    rows: list[tuple[str, str, str, str]] = []  # left text, left style, right text, right style
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            rows += [(a[i], "", b[j], "") for i, j in zip(range(i1, i2), range(j1, j2), strict=True)]
            continue
        left, right = a[i1:i2], b[j1:j2]
        for k in range(max(len(left), len(right))):
            rows.append((left[k] if k < len(left) else "", REMOVED if k < len(left) else "",
                         right[k] if k < len(right) else "", ADDED if k < len(right) else ""))

    def cell(text: str) -> str:
        text = text.expandtabs(4)
        return (text[: half - 1] + "…") if len(text) > half else text.ljust(half)

    out = [Content.styled(cell(old_name) + " │ " + cell(new_name), HEADER)]
    for lt, ls, rt, rs in rows:
        left_cell, right_cell = cell(lt), cell(rt)
        spans = []
        if ls:
            spans.append(Span(0, half, ls))
        if rs:
            spans.append(Span(half + 3, half * 2 + 3, rs))
        out.append(Content(left_cell + " │ " + right_cell, spans=spans))
    return Content("\n").join(out)


class DiffView(Static):
    """Shows the diff of two revision texts; `layout` is unified or side by side."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("Choose two revisions to compare.", id=id, expand=True)
        self.layout_mode = "unified"
        self._texts: tuple[str, str, str, str] | None = None

    def show(self, old: str, new: str, old_name: str, new_name: str) -> None:
        self._texts = (old, new, old_name, new_name)
        self._draw()

    def clear(self) -> None:
        self._texts = None
        self.update("Choose two revisions to compare.")

    def toggle(self) -> str:
        self.layout_mode = "side-by-side" if self.layout_mode == "unified" else "unified"
        self._draw()
        return self.layout_mode

    def on_resize(self) -> None:
        if self.layout_mode == "side-by-side":
            self._draw()

    def _draw(self) -> None:
        if self._texts is None:
            return
        old, new, old_name, new_name = self._texts
        if self.layout_mode == "unified":
            self.update(unified(old, new, old_name, new_name))
        else:
            self.update(side_by_side(old, new, max(40, self.size.width or 80), old_name, new_name))
