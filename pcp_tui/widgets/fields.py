"""Input and TextArea that follow the app's cursor-blink setting (snapshots turn blinking off)."""

from __future__ import annotations

from textual.widgets import Input, TextArea


class Field(Input):
    """A one-line input."""

    def on_mount(self) -> None:
        self.cursor_blink = getattr(self.app, "blink_cursor", True)


class Editor(TextArea):
    """A multi-line editor for page content."""

    def on_mount(self) -> None:
        self.cursor_blink = getattr(self.app, "blink_cursor", True)
