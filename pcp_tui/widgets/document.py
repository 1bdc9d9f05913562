"""A scrollable document drawn through the line API: rendered once (off the loop when long), drawn by the window.

The inspector used a Static inside a VerticalScroll for a page's content, its facets and its raw JSON. A
Static renders all of its text on the event loop, every time it changes, and changes its own height, which
lays the screen out again: a 15,000-character page blocked the loop for 100 ms, a 150,000-character one for
over 350 ms (issue 13, item 15). A Document renders its source into lines once (the same Textual path as a
Static: `visualize` then `Visual.to_strips`), in a worker thread when the text is long, and draws only the
lines in view. Its own size never changes with its text, so a new page is a repaint, not a layout pass.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from textual import work
from textual.content import Content
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.visual import Visual, visualize
from textual.worker import get_current_worker

from .steady import SteadyScrollbars, set_virtual_size

INLINE_LIMIT = 4_000  # characters rendered on the loop at once; longer texts are rendered in a worker thread


class AtWidth:
    """A source built for the width it is drawn at (a diff whose lines wrap in their columns)."""

    def __init__(self, build: Callable[[int], Any]) -> None:
        self.build = build


class Document(SteadyScrollbars, ScrollView, can_focus=True):
    """Shows one renderable (Markdown, Content, text); `text` is its plain text (what tests and checks read)."""

    DEFAULT_CSS = """
    Document { height: 1fr; scrollbar-gutter: stable; scrollbar-size-vertical: 1; overflow-x: hidden; overflow-y: auto; }
    """

    class Drawn(Message):
        def __init__(self, generation: int, width: int, strips: list[Strip]) -> None:
            super().__init__()
            self.generation, self.width, self.strips = generation, width, strips

    class AtEnd(Message):
        """The view reached its last line (`whole`: by End, which asks for everything that is left)."""

        def __init__(self, document: Document, whole: bool) -> None:
            super().__init__()
            self.document, self.whole = document, whole

        @property
        def control(self) -> Document:
            return self.document

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.source: Any = ""
        self.text = ""
        self.rendering = False  # a worker is rendering the current source
        self._strips: list[Strip] = []
        self._generation = 0
        self._width = 0
        self._then_end = False  # once drawn, go to the last line (more text arrived after End)
        self._end_key = False  # the last scroll to the end came from End

    def show(self, source: Any, text: str) -> None:
        """Show `source` from its top: anything a Static takes, or a function that makes it (called where the
        rendering happens, so parsing Markdown or highlighting code is off the loop too); `text` is its plain text."""
        self.source, self.text = source, text
        self._then_end = False
        self._strips = []  # what was shown goes at once (an erased page must not stay on screen)
        self.scroll_to(0, 0, animate=False)
        self._draw()

    def extend(self, source: Any, text: str, to_end: bool) -> None:
        """Show `source`, which continues what is shown (more of the same page): the lines in view stay where they
        are while it renders; `to_end` goes to its last line once it is drawn."""
        self.source, self.text = source, text
        self._then_end = to_end
        self._draw(keep=True)

    def action_scroll_end(self) -> None:
        self._end_key = True
        super().action_scroll_end()
        if self.max_scroll_y == 0 or self.scroll_y >= self.max_scroll_y:  # already there: no scroll to watch
            self._at_end()

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        if self._strips and new_value >= self.max_scroll_y and new_value > old_value:
            self._at_end()

    def _at_end(self) -> None:
        whole, self._end_key = self._end_key, False
        if self._strips and not self.rendering:
            self.post_message(self.AtEnd(self, whole))

    @property
    def drawn_lines(self) -> list[str]:
        """The lines as drawn (what the renderer made of the source; none while it renders)."""
        return [strip.text.rstrip() for strip in self._strips]

    @property
    def drawn_text(self) -> str:
        return "\n".join(self.drawn_lines)

    def _content_width(self) -> int:
        return self.scrollable_content_region.width

    def _draw(self, keep: bool = False) -> None:
        self._generation += 1
        width = self._content_width()
        self._width = width
        if width <= 0:  # not laid out yet: on_resize draws it
            self._set([])
            return
        if len(self.text) <= INLINE_LIMIT:
            self.rendering = False
            self._set(self._lines(self.source, width))
        else:
            self.rendering = True
            if not keep:
                self._set([])
            self._render_later(self._generation, self.source, width)

    def _lines(self, source: Any, width: int) -> list[Strip]:
        """The source's lines; its plain text when the renderer fails on it or draws none of it (Markdown
        nested thousands deep renders as nothing): the text is never hidden."""
        try:
            strips = self._render_source(source, width)
        except Exception:  # noqa: BLE001 - a renderer that fails on this text (RecursionError included)
            strips = []
        if self.text.strip() and not any(strip.text.strip() for strip in strips):
            strips = self._render_source(Content(self.text), width)
        return strips

    def _render_source(self, source: Any, width: int) -> list[Strip]:
        if isinstance(source, AtWidth):
            source = source.build(width)
        elif callable(source):
            source = source()
        if isinstance(source, str) and not source or source is None:
            return []
        return Visual.to_strips(self, visualize(self, source, markup=False), width, None, self.visual_style)

    @work(thread=True, exclusive=True, exit_on_error=False, group="document")
    def _render_later(self, generation: int, source: Any, width: int) -> None:
        # Textual renders a Rich renderable with the active app's console (a context variable of the loop's
        # context; a worker thread starts without it). Textual's own `_context` module: re-check on upgrade.
        from textual._context import active_app

        active_app.set(self.app)
        strips = self._lines(source, width)
        if not get_current_worker().is_cancelled:
            self.post_message(self.Drawn(generation, width, strips))

    def on_document_drawn(self, message: Drawn) -> None:
        message.stop()
        if message.generation == self._generation and message.width == self._width:
            self.rendering = False
            self._set(message.strips)

    def _set(self, strips: list[Strip]) -> None:
        self._strips = strips
        set_virtual_size(self, Size(max(0, self._width), len(strips)))  # (steady.py: no layout pass)
        self.refresh()
        if strips and self._then_end:
            self._then_end = False
            self.scroll_to(y=max(0, len(strips) - self.scrollable_content_region.height), animate=False)

    def on_resize(self) -> None:
        if self._content_width() != self._width:
            self._draw()

    def render_line(self, y: int) -> Strip:
        index = self.scroll_offset.y + y
        width = self._content_width()
        style = self.visual_style.rich_style
        if 0 <= index < len(self._strips):
            return self._strips[index].crop_extend(0, width, style)
        return Strip.blank(width, style)
