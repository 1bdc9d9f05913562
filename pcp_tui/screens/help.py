"""The help screen: every command of the current screen and of the app, with the keys in force now."""

from __future__ import annotations

from textual import getters
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import DataTable, Static

from .. import commands
from ..app import PcpApp
from .confirm import key_hint

TITLES = {"app": "Everywhere", "main": "Pages", "confirm": "Confirmations", "form": "Dialogs with fields", "delete": "Delete",
          "bulk_delete": "Delete many",
          "revise": "Revise", "link": "Link", "rights": "Your rights", "handoff": "Handoff",
          "reviews": "Reviews", "welcome": "Welcome / import", "sync": "Sync", "help": "Help"}


class HelpScreen(ModalScreen[None]):
    """Keys and commands; the ids are what keymap.toml remaps (id = "keys")."""

    app = getters.app(PcpApp)
    COMMAND_SCOPE = "help"
    BINDINGS = commands.bindings("help")

    def __init__(self, scope: str | None, *, dialog: bool = False, dialog_title: str | None = None) -> None:
        super().__init__()
        self.scope = scope
        self.dialog = dialog  # opened from a dialog: only that dialog's keys (and the app's)
        self.dialog_title = dialog_title  # that dialog's own title, when it has one

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog", classes="dialog full"):
            named = self.dialog_title or TITLES.get(self.scope or "", self.scope)
            title = f"Keys of this dialog: {named}" if self.dialog else "Keys"
            yield Static(Content.styled(title, "bold"), classes="dialog-title")
            yield Static(Content(
                "Every action is also in the command palette. Remap a key in keymap.toml beside config.toml, e.g. "
                "revise = \"ctrl+e\" (the id is the last column). Lists: ↑/↓ or j/k, PageUp/PageDown, Home/End, "
                "Enter opens; Tab moves between panes. In the Revisions tab's history, Enter compares a revision "
                "with the one before it, f and t make it the diff's From and To."), classes="dialog-body")
            yield DataTable(id="keys", cursor_type="row", zebra_stripes=True)
            yield Static(key_hint(self.app, [("help.close", "Close")]), classes="dialog-keys")

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_columns("Where", "Keys", "Command", "What it does", "Id")
        shown = [self.scope] if self.scope and self.scope != "help" else []
        others = [] if self.dialog and shown else [w for w in TITLES if w not in ("app", *shown)]
        for where in [*shown, "app", *others]:
            for cmd in (c for c in commands.COMMANDS if c.where == where):
                table.add_row(TITLES.get(where, where), self.app.key_display(cmd.id), cmd.title, cmd.help, cmd.id)
        table.focus()

    def action_close(self) -> None:
        self.dismiss(None)
