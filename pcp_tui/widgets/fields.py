"""Input and TextArea that follow the app's cursor-blink setting (snapshots turn blinking off)."""

from __future__ import annotations

from textual.geometry import Size
from textual.reactive import Reactive
from textual.suggester import Suggester
from textual.widgets import Input, TextArea


class Choices(Suggester):
    """Completes a field from known values, in their order (the first that starts with what was typed)."""

    def __init__(self, values: list[str]) -> None:
        super().__init__(use_cache=False, case_sensitive=True)
        self.values = values

    async def get_suggestion(self, value: str) -> str | None:
        typed = value.casefold()
        return next((v for v in self.values if typed and v.casefold().startswith(typed) and v != value), None)


class Field(Input):
    """A one-line input.

    Its virtual size (the text's width, which Input sets on every keystroke) asks for no layout pass: an
    input shows no scrollbar, so a layout of the whole screen per key changed nothing on it (the search
    box at a million pages: a layout pass per character typed).
    """

    virtual_size = Reactive(Size(0, 0), layout=False)

    def on_mount(self) -> None:
        self.cursor_blink = getattr(self.app, "blink_cursor", True)


class Editor(TextArea):
    """A multi-line editor for page content."""

    def on_mount(self) -> None:
        self.cursor_blink = getattr(self.app, "blink_cursor", True)
