"""The Revisions tab: a page's history and the diff between any two of its revisions."""

from __future__ import annotations

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Label, OptionList, Select, Static
from textual.widgets.option_list import Option
from textual.worker import get_current_worker

from ..messages import DiffLoaded, StoreWorkers
from .diff import DiffView
from .steady import update_rows


def revision_label(n: int, rev: dict) -> str:
    """`#2 stored 2026-03-01 10:00 user …ABC123`: revisions carry the time they were stored."""
    who = rev.get("created_by", {})
    return (f"#{n} stored {rev['created_at'][:16].replace('T', ' ')} {who.get('actor_type', '?')} "
            f"…{rev['revision_id'][-6:]}")


def dates_note(history: list[dict], observed_at: str | None) -> str:
    """Which date is which: the list's date is when it happened (observed), else when it was stored."""
    if not history:
        return ""
    if observed_at:
        return (f"The list shows when it happened: {observed_at[:10]} (observed). "
                "Revisions below show when each was stored.")
    return f"The list shows when it was stored: {history[0]['created_at'][:10]} (no observed time)."


class RevisionSelect(Select[str]):
    """A Select whose options can be replaced together with the value to show.

    Textual's `set_options` first empties the selection and the caller then sets a value: the Select's
    `-has-value` class goes off and on again, and each time its widgets are styled again (4 restyles per page
    shown, most of the Revisions tab's cost per cursor move). `set_options_with` sets the new value at once.
    It relies on Textual's `Select._init_selected_option` (re-check on a Textual upgrade).
    """

    _next_value: object = Select.NULL

    def set_options_with(self, options: list[tuple[str, str]], value: object) -> None:
        self._next_value = value
        try:
            self.set_options(options)
        finally:
            self._next_value = Select.NULL

    def _init_selected_option(self, hint: object = Select.NULL) -> None:
        if hint == Select.NULL and self._next_value in {v for _, v in self._options}:
            hint = self._next_value
        super()._init_selected_option(hint)  # type: ignore[arg-type]


class RevisionsView(StoreWorkers, Vertical):
    """History newest first; choose From and To (Enter on a revision compares it with the one before)."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.history: list[dict] = []
        self._setting = False
        self._mode_shown = ""

    def compose(self) -> ComposeResult:
        yield Static("", id="dates-note", classes="detail")
        yield OptionList(id="history")
        with Horizontal(id="diff-controls"):
            yield Label("From ")
            yield RevisionSelect([], id="rev-from", compact=True, allow_blank=True, prompt="revision")
            yield Label(" To ")
            yield RevisionSelect([], id="rev-to", compact=True, allow_blank=True, prompt="revision")
            yield Label("", id="diff-mode")
        yield DiffView(id="diff")

    def show(self, history: list[dict], observed_at: str | None = None) -> None:
        self.history = history
        update_rows(self.query_one("#dates-note", Static), dates_note(history, observed_at))
        total = len(history)
        listing = self.query_one("#history", OptionList)
        listing.clear_options()
        listing.add_options([
            Option(Text(revision_label(total - i, rev) + f"  {rev['lifecycle_status']}"), id=rev["revision_id"])
            for i, rev in enumerate(history)
        ])
        choices = [(revision_label(total - i, rev), rev["revision_id"]) for i, rev in enumerate(history)]
        old = (history[1]["revision_id"] if total > 1 else history[0]["revision_id"]) if history else Select.NULL
        new = history[0]["revision_id"] if history else Select.NULL
        self._setting = True
        self.query_one("#rev-from", RevisionSelect).set_options_with(choices, old)
        self.query_one("#rev-to", RevisionSelect).set_options_with(choices, new)
        self._setting = False
        self._show_mode(self.query_one(DiffView).layout_mode)
        if history:
            self.compare(str(old), str(new))

    def clear(self) -> None:
        """No page: no history, no choices, no diff."""
        self.history = []
        update_rows(self.query_one("#dates-note", Static), "")
        self.query_one("#history", OptionList).clear_options()
        self._setting = True
        for sel_id in ("#rev-from", "#rev-to"):
            self.query_one(sel_id, Select).set_options([])
        self._setting = False
        self.query_one(DiffView).clear()

    def compare(self, old: str, new: str) -> None:
        """Select From/To and load the diff."""
        self._setting = True
        self.query_one("#rev-from", Select).value = old
        self.query_one("#rev-to", Select).value = new
        self._setting = False
        self._diff(old, new)

    def toggle_layout(self) -> None:
        self._show_mode(self.query_one(DiffView).toggle())

    def _show_mode(self, mode: str) -> None:
        if mode != self._mode_shown:  # the same words again would lay the screen out again
            self._mode_shown = mode
            self.query_one("#diff-mode", Label).update(f"  {mode}")

    def on_select_changed(self, event: Select.Changed) -> None:
        event.stop()
        if self._setting:
            return
        old, new = self.query_one("#rev-from", Select).value, self.query_one("#rev-to", Select).value
        if isinstance(old, str) and isinstance(new, str):
            self._diff(old, new)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        ids = [r["revision_id"] for r in self.history]
        index = ids.index(event.option.id)
        self.compare(ids[min(index + 1, len(ids) - 1)], ids[index])

    @work(thread=True, exclusive=True, exit_on_error=False, group="diff")
    def _diff(self, old: str, new: str) -> None:
        results = self.app.store.read_pages([old, new], projections=("payload",))["results"]
        texts = [((r.get("revision") or {}).get("payload") or {}).get("content") or "" for r in results]
        if not get_current_worker().is_cancelled:
            self.post_message(DiffLoaded(texts[0], texts[1], old, new))

    @on(DiffLoaded)
    def _show_diff(self, message: DiffLoaded) -> None:
        message.stop()
        if not {message.old_id, message.new_id} <= {r["revision_id"] for r in self.history}:
            return  # an answer for a page no longer shown
        self.query_one(DiffView).show_diff(message.old_text, message.new_text, f"…{message.old_id[-6:]}",
                                      f"…{message.new_id[-6:]}")
