"""Scroll views that leave their scrollbars alone when a layout pass changed nothing about them.

Textual's ScrollView compares the container size the compositor gives it with one it derives itself
(minus the gutter), so every layout pass of the screen (a page shown in the inspector, a keystroke in
the search box) "resizes" every scroll view: its scrollbars repaint and, worse, the region repainted in
that frame then spans from the scope tree at the left edge to the inspector at the right one, so
everything between is drawn again (bench/tui_bench.py: a third of a cursor move's drawing). The page
list and the scope tree override `_size_updated` with `unchanged` first.
"""

from __future__ import annotations

from textual.content import Content
from textual.geometry import Size
from textual.widget import Widget
from textual.widgets import Static


def unchanged(widget: Widget, size: Size, container_size: Size) -> bool:
    """True when nothing a scroll view's scrollbars depend on changed since its last layout."""
    styles = widget.styles
    key = (size, container_size, widget.virtual_size, styles.scrollbar_size_vertical,
           styles.scrollbar_size_horizontal, styles.overflow_x, styles.overflow_y)
    if key == getattr(widget, "_steady_key", None):
        return True
    setattr(widget, "_steady_key", key)  # noqa: B010 (an attribute of the widget's own, set once per layout)
    return False


def update_rows(widget: Static, text: str | Content, max_rows: int | None = None) -> None:
    """`Static.update` asking for a layout pass (the whole screen) only when the rows the text takes (up to
    `max_rows`, its height's limit) change: a height-auto line shown again for each page or each page-list
    window is otherwise a repaint."""
    content = text if isinstance(text, Content) else Content(text)
    width = widget.content_size.width
    rows = len(content.wrap(width)) if width > 0 and content.plain else 0
    if max_rows is not None:
        rows = min(rows, max_rows)
    same = width > 0 and rows == getattr(widget, "_steady_rows", None)
    setattr(widget, "_steady_rows", rows)  # noqa: B010 (the widget's own, as above)
    widget.update(content, layout=not same)
