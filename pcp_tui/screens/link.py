"""Linking the selected page to another one, picked by search, with a relation type."""

from __future__ import annotations

from typing import Any

from textual import on, work
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Label, OptionList, Select, Static
from textual.widgets.option_list import Option
from textual.timer import Timer
from textual.worker import get_current_worker

from .. import commands
from ..messages import LinkCandidates, Linked, StoreWorkers
from ..widgets.fields import Field
from .confirm import key_hint
from .typed import after_typing


class LinkScreen(StoreWorkers, ModalScreen[dict[str, Any] | None]):
    """Dismisses with link_pages' answer, or None when cancelled."""

    COMMAND_SCOPE = "link"
    BINDINGS = commands.bindings("link")

    def __init__(self, page_id: str, title: str) -> None:
        super().__init__()
        self.page_id, self.page_title = page_id, title
        self.target: tuple[str, str] | None = None
        self._timer: Timer | None = None

    def compose(self) -> ComposeResult:
        from store import RECOMMENDED_RELATION_TYPES

        with Vertical(id="dialog", classes="dialog wide"):
            yield Static(Content.assemble(("Link ", "bold"), (self.page_title, "bold"), " to another page"),
                         classes="dialog-title")
            yield Label("Relation type (this page → the other)")
            yield Select([(t, t) for t in RECOMMENDED_RELATION_TYPES], value="related_to", allow_blank=False,
                         id="relation-type")
            yield Label("Find the other page")
            yield Field(placeholder="type to search; Enter to pick from the results", id="find")
            yield OptionList(id="hits")
            yield Static("No page chosen yet.", id="chosen")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Cancel", id="cancel")
                yield Button("Link", id="save", variant="primary", disabled=True)
            yield Static(key_hint(self.app, [("link.find", "Find"), ("link.save", "Link"), ("link.cancel", "Cancel"),
                                             ("help", "Keys")])
                         + Content.styled(" · Enter in the results picks a page", "dim"), classes="dialog-keys")

    def on_mount(self) -> None:
        self.query_one("#find", Field).focus()

    @after_typing
    def action_find(self) -> None:
        self.query_one("#find", Field).focus()

    def on_input_changed(self, event: Field.Changed) -> None:
        if self._timer is not None:
            self._timer.stop()
        self._timer = self.set_timer(0.25, lambda: self._search(event.value))

    def on_input_submitted(self, event: Field.Submitted) -> None:
        if self._timer is not None:
            self._timer.stop()  # Enter searches now; the pending debounced search would clear the picks
        self._search(event.value)
        self.query_one("#hits", OptionList).focus()

    @work(thread=True, exclusive=True, exit_on_error=False, group="link-search")
    def _search(self, query: str) -> None:
        if not query.strip():
            return
        hits = self.app.opened_store.search_pages(query, limit=20)["hits"]
        if not get_current_worker().is_cancelled:
            self.post_message(LinkCandidates([h for h in hits if h["page_id"] != self.page_id]))

    @work(thread=True, exclusive=True, exit_on_error=False, group="link")
    def _link(self, relation_type: str, target: str) -> None:
        self.post_message(Linked(self.app.opened_store.link_pages(self.page_id, relation_type, target)))

    @on(LinkCandidates)
    def _show_candidates(self, message: LinkCandidates) -> None:
        message.stop()
        hits = self.query_one("#hits", OptionList)
        hits.clear_options()
        hits.add_options([Option(Content.assemble(h["title"] or h["page_id"], (f"  {h['namespace']}", "dim")),
                                 id=h["page_id"]) for h in message.hits] or [Option("No pages found.",
                                                                                    disabled=True)])
        if message.hits:  # the first result is the one Enter picks (as the keys line says), no Down needed first
            hits.highlighted = 0

    @on(Linked)
    def _linked(self, message: Linked) -> None:
        message.stop()
        to_title = self.target[1] if self.target and self.target[0] == message.relation["to_page_id"] else None
        self.dismiss({**message.relation, "from_title": self.page_title, "to_title": to_title})

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option.id:
            title = str(event.option.prompt).split("  ")[0]
            self.target = (event.option.id, title)
            self.query_one("#chosen", Static).update(Content.assemble("Link to: ", (title, "bold"),
                                                                      f"  ({event.option.id})"))
            self.query_one("#save", Button).disabled = False
            self.query_one("#save", Button).focus()

    @after_typing
    def action_save(self) -> None:
        kind = self.query_one("#relation-type", Select).value
        if self.target is None or not isinstance(kind, str):
            self.notify("Pick the page to link to first (search, then Enter).", severity="warning")
            return
        self._link(kind, self.target[0])

    def action_cancel(self) -> None:
        self.dismiss(None)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "save":
            self.action_save()
        else:
            self.action_cancel()
