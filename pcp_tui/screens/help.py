"""The help screen: every command of the current screen and of the app, with the keys in force now."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.cells import cell_len
from rich.text import Text
from textual import getters
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import DataTable, Static

from .. import commands
from .confirm import key_hint

if TYPE_CHECKING:
    from ..app import PcpApp

TITLES = {"app": "Everywhere", "main": "Pages", "search": "Search box", "confirm": "Confirmations", "form": "Form dialogs", "delete": "Delete",
          "bulk_delete": "Delete many",
          "revise": "Revise", "link": "Link", "rights": "Your rights", "handoff": "Handoff",
          "reviews": "Reviews", "welcome": "Import", "sync": "Sync", "help": "Help"}


class HelpScreen(ModalScreen[None]):
    """Keys and commands; the ids are what keymap.toml remaps (id = "keys")."""

    if TYPE_CHECKING:  # the app's own type for the checker; at run time the app imports this screen, not back
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
            named = self.dialog_title or TITLES.get(self.scope or "", self.scope) or "this one"
            title = f"Keys of this dialog: {named}" if self.dialog else "Keys"
            yield Static(Content.styled(title, "bold"), classes="dialog-title")
            yield Static(self.preamble(wide=True), classes="dialog-body", id="help-preamble")
            yield DataTable(id="keys", cursor_type="row", zebra_stripes=True)
            yield Static(key_hint(self.app, [("help.close", "Close")]), classes="dialog-keys")

    def preamble(self, wide: bool) -> Content:
        """What holds for every key; on a narrow screen in fewer words (the table keeps its rows). The Revisions
        tab's history keys only where they apply: the pages, not a dialog."""
        if wide:
            text = ("Every action is also in the command palette. Remap a key in keymap.toml beside config.toml, e.g. "
                    "revise = \"ctrl+e\" (the id is the last column). Lists: ↑/↓ or j/k, PageUp/PageDown, Home/End, "
                    "Enter opens; Tab moves between panes.")
        else:
            text = ("Every action is in the palette too. keymap.toml (beside config.toml) remaps one: "
                    "id = \"keys\", with the id each row ends with. Lists: ↑/↓ j/k, PgUp/PgDn, Home/End, Enter.")
        if not self.dialog:
            text += (" In the Revisions tab's history, Enter compares a revision with the one before it, f and t make "
                     "it the diff's From and To." if wide else " Revisions history: Enter compares, f/t pick From/To.")
        return Content(text)

    def on_mount(self) -> None:
        self.call_after_refresh(self._fill)  # once the table has its width: the descriptions wrap to it

    def _fill(self) -> None:
        """One row per command; "What it does" takes the width the other columns leave and wraps in it (cut
        mid-word at 80x24 before). The Id column (what keymap.toml remaps) goes when that would leave it under
        24 cells; F1's intro says so."""
        table = self.query_one(DataTable)
        shown = [self.scope] if self.scope and self.scope != "help" else []
        others = [] if self.dialog and shown else [w for w in TITLES if w not in ("app", *shown)]
        # In a dialog only the app's keys that reach it are listed (priority ones: help, the palette, quit); f2
        # and the like do nothing there.
        rows = [(TITLES.get(where, where), self.app.key_display(cmd.id), cmd.title, cmd.help, cmd.id)
                for where in [*shown, "app", *others] for cmd in commands.COMMANDS if cmd.where == where
                and not (self.dialog and where == "app" and not cmd.priority)]
        pad = 2 * table.cell_padding
        widths = [max(cell_len(str(r[i])) for r in [("Where", "Keys", "Command", "", "Id"), *rows]) for i in range(5)]
        room = max(0, table.content_region.width - table.styles.scrollbar_size_vertical)  # (room for its scrollbar)
        what = room - sum(widths[i] + pad for i in (0, 1, 2, 4)) - pad
        with_ids = what >= 24
        if not with_ids:
            what = room - sum(widths[i] + pad for i in (0, 1, 2)) - pad
        what = max(what, 16)
        self.query_one("#help-preamble", Static).update(self.preamble(with_ids))
        table.clear(columns=True)
        table.add_column("Where", width=widths[0])
        table.add_column("Keys", width=widths[1])
        table.add_column("Command", width=widths[2])
        table.add_column("What it does", width=what)
        if with_ids:
            table.add_column("Id", width=widths[4])
        for where, keys, title, text, ident in rows:
            # A narrow screen has no Id column: each description ends with its id (what keymap.toml remaps).
            described = Text(text, overflow="fold") if with_ids else Text.assemble(text, (f" · id {ident}", "dim"),
                                                                                   overflow="fold")
            cells = [where, keys, title, described] + ([ident] if with_ids else [])
            table.add_row(*cells, height=None)
        table.focus()

    def on_resize(self) -> None:
        if self.is_mounted:
            self.call_after_refresh(self._fill)

    def action_close(self) -> None:
        self.dismiss(None)
