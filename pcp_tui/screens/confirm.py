"""A typed confirmation dialog: it says what will happen, focus starts on Cancel, y / n / escape answer."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Label, Static

from .. import commands
from ..widgets.fields import Field


class ConfirmScreen(ModalScreen[bool]):
    """Dismisses with True only on an explicit yes; `values` holds what was typed in the fields."""

    COMMAND_SCOPE = "confirm"
    BINDINGS = commands.bindings("confirm")

    def __init__(self, title: str, body: str | Content, *, confirm_label: str = "Yes", danger: bool = True,
                 fields: list[tuple[str, str, str]] | None = None) -> None:
        super().__init__()
        self.title_text, self.body = title, body
        self.confirm_label, self.danger = confirm_label, danger
        self.fields = fields or []  # (name, label, default value)
        self.answers: dict[str, str] = {}  # the fields' values when the dialog closed

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog", classes="dialog"):
            yield Static(Content.styled(self.title_text, "bold"), classes="dialog-title")
            yield Static(self.body if isinstance(self.body, Content) else Content(self.body), classes="dialog-body")
            for name, label, default in self.fields:
                yield Label(label)
                yield Field(value=default, id=f"field-{name}")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Cancel", id="cancel", variant="default")
                yield Button(self.confirm_label, id="confirm", variant="error" if self.danger else "primary")

    def on_mount(self) -> None:
        self.query_one("#cancel", Button).focus()

    @property
    def values(self) -> dict[str, str]:
        return {name: self.query_one(f"#field-{name}", Field).value for name, _, _ in self.fields}

    def action_answer(self, yes: bool) -> None:
        self.answers = self.values
        if yes and any(not v.strip() for v in self.answers.values()):
            self.notify("Fill in every field first.", severity="warning")
            return
        self.dismiss(yes)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.action_answer(event.button.id == "confirm")
