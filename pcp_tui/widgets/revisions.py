"""The Revisions tab: a page's history and the diff between any two of its revisions."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.message import Message
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option
from textual.worker import get_current_worker

from ..messages import DiffLoaded, StoreWorkers
from .diff import DiffView
from .. import reading
from .steady import SteadyOptionList, update_rows

if TYPE_CHECKING:
    from store.types import HistoryEntry


def revision_label(n: int, rev: HistoryEntry, status: str = "", width: int = 0) -> str:
    """`#2 stored 2026-03-01 10:00 user …ABC123  active`: revisions carry the time they were stored. Where that
    does not fit in `width` cells it is two lines of its own, `#2 …ABC123  active` over `stored 2026-03-01 10:00
    user` (wrapped where it happened to, the id and the status were cut apart)."""
    who = rev["created_by"]
    number, stored = f"#{n}", f"stored {rev['created_at'][:16].replace('T', ' ')} {who.get('actor_type') or '?'}"
    ident = f"…{rev['revision_id'][-6:]}" + (f"  {status}" if status else "")
    line = f"{number} {stored} {ident}"
    if width <= 0 or len(line) <= width:
        return line
    return f"{number} {ident}\n{' ' * len(number)} {stored}"


def dates_note(history: list[HistoryEntry], observed_at: str | None, width: int = 0) -> str:
    """Which date is which: the list's date is when it happened (observed), else when it was stored. With a
    `width` the sentence would take more than two rows of (a short screen: 80x24), a short form."""
    if not history:
        return ""
    if observed_at:
        note = (f"The list shows when it happened: {observed_at[:10]} (observed). "
                "Revisions below show when each was stored.")
        short = f"List date {observed_at[:10]}: observed. Below: when each was stored."
    else:
        note = f"The list shows when it was stored: {history[0]['created_at'][:10]} (no observed time)."
        short = f"List date {history[0]['created_at'][:10]}: stored (no observed time)."
    return note if width <= 0 or len(note) <= 2 * width else short


COMPACT_MODES = {"side-by-side": "side"}  # the diff modes' words in the narrowest line over the diff


class HistoryList(SteadyOptionList):
    """The page's revisions, newest first: Enter compares one with the one before it, `f` and `t` make it
    the From or the To side of the diff."""

    BINDINGS = [
        Binding("f", "pick('from')", "Diff from", id="revisions.from"),
        Binding("t", "pick('to')", "Diff to", id="revisions.to"),
    ]

    class Picked(Message):
        def __init__(self, side: str, revision_id: str) -> None:
            super().__init__()
            self.side, self.revision_id = side, revision_id

    def action_pick(self, side: str) -> None:
        option = self.highlighted_option
        if option is not None and option.id is not None:
            self.post_message(self.Picked(side, option.id))
        elif self.option_count:  # (nothing highlighted yet: the key would do nothing, silently)
            self.app.notify(f"Highlight a revision first (↑/↓), then {'f' if side == 'from' else 't'} makes it the "
                            f"{'From' if side == 'from' else 'To'} side.")


class RevisionsView(StoreWorkers, Vertical):
    """History newest first and the diff between two of its revisions (Enter on a revision compares it with
    the one before; `f` / `t` choose From and To). The two sides are one line of text, not two selects: a
    page shown here was a layout pass and a restyle of eight widgets (issue 13, item 15)."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.history: list[HistoryEntry] = []
        self.sides: tuple[str, str] | None = None  # (from, to) revision ids of the diff shown
        self.observed_at: str | None = None
        self.conflicts: set[str] = set()
        self._drawn_width = 0  # the width the history's labels and the dates note were laid out for

    def compose(self) -> ComposeResult:
        yield Static("", id="dates-note", classes="detail")
        yield HistoryList(id="history")
        yield Static("", id="diff-controls")
        yield DiffView(id="diff")

    def show(self, history: list[HistoryEntry], observed_at: str | None = None, conflicts: list[str] | None = None) -> None:
        """`conflicts`: revisions another of the owner's stores made beside the head (sync); they are labelled
        `conflict`, not `superseded` (nothing superseded them: they wait for a revise to resolve them)."""
        self.history, self.observed_at, self.conflicts = history, observed_at, set(conflicts or ())
        self._draw_history()
        if history:
            old = history[1]["revision_id"] if len(history) > 1 else history[0]["revision_id"]
            self.compare(old, history[0]["revision_id"])
        else:
            self.sides = None
            self._show_controls()

    def _draw_history(self, keep_highlight: bool = False) -> None:
        """The dates note and one option a revision, each laid out for the pane's width (see revision_label)."""
        history, history_list = self.history, self.query_one(HistoryList)
        width = self._drawn_width = history_list.scrollable_content_region.width
        # (laid out as if the scrollbar showed: one that comes with more revisions must not wrap them again)
        label_width = width - (0 if history_list.show_vertical_scrollbar else history_list.styles.scrollbar_size_vertical)
        note = self.query_one("#dates-note", Static)
        short = self.screen.has_class("-short")  # (rows are what a short screen lacks; a tall one keeps the sentence)
        update_rows(note, dates_note(history, self.observed_at, note.content_size.width if short else 0))
        total = len(history)
        highlighted = history_list.highlighted
        history_list.replace_options([
            Option(Text(revision_label(total - i, rev, "conflict" if rev["revision_id"] in self.conflicts
                                       else rev["lifecycle_status"], label_width)), id=rev["revision_id"])
            for i, rev in enumerate(history)
        ])
        if keep_highlight and highlighted is not None and highlighted < history_list.option_count:
            history_list.highlighted = highlighted

    def clear(self) -> None:
        """No page: no history, no choices, no diff."""
        self.history = []
        self.sides = None
        update_rows(self.query_one("#dates-note", Static), "")
        self.query_one(HistoryList).replace_options([])
        self._show_controls()
        self.query_one(DiffView).clear("No page selected.")

    def compare(self, old: str, new: str) -> None:
        """Show the diff from `old` to `new` (revision ids of the page shown)."""
        self.sides = (old, new)
        self._show_controls()
        self._diff(old, new)

    def _label(self, revision_id: str, short: bool = False) -> str:
        ids = [r["revision_id"] for r in self.history]
        if revision_id not in ids:
            return "?"
        number = f"#{len(ids) - ids.index(revision_id)}"
        return number if short else f"{number} …{revision_id[-6:]}"

    def _show_controls(self) -> None:
        mode = self.query_one(DiffView).layout_mode
        keys = "/".join(b.key for b in HistoryList.BINDINGS if isinstance(b, Binding))  # (f/t in the list)
        controls = self.query_one("#diff-controls", Static)
        sides = self.sides

        def line(form: str, mode: str) -> Content:
            """`ids`: `From #2 …ABC123  To #3 …DEF456  unified (v) · f/t`; `numbers`: without the ids (the diff's
            header names them); `compact`: `From #2 To #3 · side (v) · f/t`."""
            if sides is None:
                return Content("")
            old, new = (self._label(side, short=form != "ids") for side in sides)
            if form == "compact":
                return Content.assemble("From ", (old, "bold"), " To ", (new, "bold"),
                                        (f" · {COMPACT_MODES.get(mode, mode)} (v) · {keys}", "dim"))
            return Content.assemble("From ", (old, "bold"), "  To ", (new, "bold"), (f"  {mode} (v) · {keys}", "dim"))

        width = controls.content_size.width
        # The form that fits in either mode, so `v` changes the mode's word only, never the line's shape.
        form = next((f for f in ("ids", "numbers") if width <= 0 or
                     max(line(f, m).cell_length for m in ("unified", "side-by-side")) <= width), "compact")
        controls.update(line(form, mode), layout=False)  # one row, always

    def on_resize(self) -> None:
        self._show_controls()
        if self.history and self.query_one(HistoryList).scrollable_content_region.width != self._drawn_width:
            self._draw_history(keep_highlight=True)

    def toggle_layout(self) -> None:
        self.query_one(DiffView).toggle()
        self._show_controls()

    def on_history_list_picked(self, event: HistoryList.Picked) -> None:
        event.stop()
        if self.sides is not None:
            old, new = self.sides
            if event.side == "from":
                self.compare(event.revision_id, new)
            else:
                self.compare(old, event.revision_id)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        ids = [r["revision_id"] for r in self.history]
        if event.option.id not in ids:  # every option is a revision of the history shown
            return
        index = ids.index(event.option.id)
        self.compare(ids[min(index + 1, len(ids) - 1)], ids[index])

    @work(thread=True, exclusive=True, exit_on_error=False, group="diff")
    def _diff(self, old: str, new: str) -> None:
        results = self.app.opened_store.read_pages([old, new], projections=("payload",))["results"]
        texts = [reading.content_of(r) for r in results]
        if not get_current_worker().is_cancelled:
            self.post_message(DiffLoaded(texts[0], texts[1], old, new))

    @on(DiffLoaded)
    def _show_diff(self, message: DiffLoaded) -> None:
        message.stop()
        if not {message.old_id, message.new_id} <= {r["revision_id"] for r in self.history}:
            return  # an answer for a page no longer shown
        if message.old_id == message.new_id:
            self.query_one(DiffView).show_itself(only=len(self.history) == 1)
            return
        self.query_one(DiffView).show_diff(message.old_text, message.new_text, f"…{message.old_id[-6:]}",
                                      f"…{message.new_id[-6:]}")
