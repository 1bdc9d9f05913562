"""Scroll views that leave their scrollbars alone when a layout pass changed nothing about them.

Textual's ScrollView compares the container size the compositor gives it with one it derives itself
(minus the gutter), so every layout pass of the screen (a page shown in the inspector, a keystroke in
the search box) "resizes" every scroll view: its scrollbars repaint and, worse, the region repainted in
that frame then spans from the scope tree at the left edge to the inspector at the right one, so
everything between is drawn again (bench/tui_bench.py: a third of a cursor move's drawing). The page
list, the scope tree, the document and `SteadyOptionList` take `SteadyScrollbars` first among their bases.
"""

from __future__ import annotations

from typing import cast

from textual.content import Content
from textual.geometry import Size
from textual.reactive import Reactive
from textual.widget import Widget
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from ..compat import SizeUpdateHook, scroll_update


def unchanged(widget: Widget, size: Size, container_size: Size) -> bool:
    """True when nothing a scroll view's scrollbars depend on changed since its last layout."""
    styles = widget.styles
    key = (size, container_size, widget.virtual_size, styles.scrollbar_size_vertical,
           styles.scrollbar_size_horizontal, styles.overflow_x, styles.overflow_y)
    if key == getattr(widget, "_steady_key", None):
        return True
    setattr(widget, "_steady_key", key)  # noqa: B010 (an attribute of the widget's own, set once per layout)
    return False


class SteadyScrollbars(SizeUpdateHook):
    """Put before a scroll view among a widget's bases: a layout pass that changed nothing about it leaves its
    scrollbars alone (`unchanged`). A plain mixin, not a Widget: Textual merges the component classes and CSS
    of the Widget classes among the bases, and one more there hid the Tree's."""

    def size_unchanged(self, size: Size, container_size: Size) -> bool:
        return unchanged(cast(Widget, self), size, container_size)


def set_virtual_size(widget: Widget, size: Size) -> None:
    """A scroll view's virtual size becomes `size` without a layout pass of the screen (Textual's reactive asks
    for one at each change): its scrollbars are updated, and only a scrollbar that comes or goes asks for a
    layout pass (Textual's `Widget._scroll_update`). For views whose own size does not follow their content
    (not height-auto)."""
    if size != widget.virtual_size:
        widget.set_reactive(Widget.virtual_size, size)
        scroll_update(widget, size)


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


class SteadyOptionList(SteadyScrollbars, OptionList):
    """An OptionList given new options for each page without laying the whole screen out.

    Textual's OptionList asks for a layout pass of the screen whenever its options change (its virtual size
    is a layout reactive). Here the virtual size only updates the scrollbars; a scrollbar that comes or goes
    still asks for one (Textual's `_scroll_update`). For lists with a height of their own: a height-auto list
    still asks for a layout pass for each set of options (Textual's `add_options`). Used by the Relations and
    Revisions tabs (issue 13, item 15)."""

    virtual_size = Reactive(Size(0, 0), layout=False)

    def replace_options(self, options: list[Option]) -> None:
        """The list's options become `options` (at the top, nothing highlighted)."""
        if options:
            self.set_options(options)
        else:
            self.clear_options()  # (set_options with none leaves the old virtual size)
