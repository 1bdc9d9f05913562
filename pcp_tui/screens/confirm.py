"""Confirmation dialogs that say what will happen.

`ConfirmScreen` is a pure yes/no question: focus starts on Cancel, and y / n / escape answer.
`FormScreen` asks for text too (a reason, a context id): focus starts in its first field and it binds
no bare letters, so typing can never trigger an action; ctrl+s confirms, escape cancels, and Enter in
a field moves to the next field (in the last one it confirms, never cancels).
"""

from __future__ import annotations

from collections.abc import Callable

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Label, Static

from .. import commands
from ..widgets.fields import Choices, Field
from .typed import after_typing


def key_of(app: object, command_id: str) -> str:
    """The keys a command answers to now (the user's keymap applied), as help and hints show them."""
    key_display = getattr(app, "key_display", None)
    return str(key_display(command_id)) if key_display else commands.by_id(command_id).keys


def key_hint(app: object, pairs: list[tuple[str, str]]) -> Content:
    """A dialog's own keys as one dim line: `ctrl+s Archive · esc Cancel`."""
    parts = []
    for command_id, label in pairs:
        parts.append(Content.assemble((key_of(app, command_id), "bold"), f" {label}"))
    return Content(" · ").join(parts).stylize("dim")


class ConfirmScreen(ModalScreen[bool]):
    """Dismisses with True only on an explicit yes; `values` holds what was typed in the fields."""

    COMMAND_SCOPE = "confirm"
    BINDINGS = commands.bindings("confirm")
    YES, NO = "confirm.yes", "confirm.no"

    def __init__(self, title: str, body: str | Content, *, confirm_label: str = "Yes", danger: bool = True,
                 fields: list[tuple[str, str, str]] | None = None, optional: bool = False,
                 check: Callable[[dict[str, str]], str | None] | None = None,
                 suggest: dict[str, list[str]] | None = None) -> None:
        super().__init__()
        self.suggest = suggest or {}  # field name -> values it completes from (→ takes the completion)
        self.optional = optional  # fields may be left empty (a filter with no limit)
        self.check = check  # what is wrong with the answers (said in the dialog, which stays open), or None
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
                yield Field(value=default, id=f"field-{name}",
                            suggester=Choices(self.suggest[name]) if self.suggest.get(name) else None)
            with Horizontal(classes="dialog-buttons"):
                yield Button("Cancel", id="cancel", variant="default")
                yield Button(self.confirm_label, id="confirm", variant="error" if self.danger else "primary")
            yield Static(key_hint(self.app, [(self.YES, self.confirm_label), (self.NO, "Cancel"), ("help", "Keys")]),
                         classes="dialog-keys")

    def on_mount(self) -> None:
        self.initial_focus()

    def initial_focus(self) -> None:
        """Where focus starts: the safe button (Textual calls on_mount along the MRO, so subclasses override this)."""
        self.query_one("#cancel", Button).focus()

    @property
    def values(self) -> dict[str, str]:
        return {name: self.query_one(f"#field-{name}", Field).value for name, _, _ in self.fields}

    @after_typing
    def action_answer(self, yes: bool) -> None:
        self.answers = self.values
        if yes and not self.optional and any(not v.strip() for v in self.answers.values()):
            self.notify("Fill in the field first." if len(self.fields) == 1 else "Fill in every field first.",
                        severity="warning")
            return
        problem = self.check(self.answers) if yes and self.check is not None else None
        if problem:
            self.notify(problem, severity="warning")
            return
        self.dismiss(yes)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.action_answer(event.button.id == "confirm")


class FormScreen(ConfirmScreen):
    """A confirmation that takes text: focus in the first field, ctrl+s / escape, no bare letters."""

    COMMAND_SCOPE = "form"
    BINDINGS = commands.bindings("form")
    YES, NO = "form.confirm", "form.cancel"

    def initial_focus(self) -> None:
        fields = list(self.query(Field))
        if fields:
            fields[0].focus()
        else:
            super().initial_focus()

    def on_input_submitted(self, event: Field.Submitted) -> None:
        """Enter moves to the next field; in the last field it is the confirm button (never Cancel)."""
        event.stop()
        fields = list(self.query(Field))
        if event.input in fields and event.input is not fields[-1]:
            fields[fields.index(event.input) + 1].focus()
        else:
            self.action_answer(True)
