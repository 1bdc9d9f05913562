"""Deleting a page for good: the plan, a typed confirmation (the page's short id), then the receipt on screen."""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, TypeVar

from textual import on, work
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Checkbox, Label, Static

from .. import commands, reading
from ..messages import DeletePlanned, PageDeleted, StoreWorkers
from ..widgets.ticks import Tick
from ..widgets.fields import Field
from .confirm import key_hint
from ..text import counted

if TYPE_CHECKING:
    from store.types import DeletePlan, Receipt


def short_id(page_id: str) -> str:
    """The last 6 characters of a page id: what the user types to confirm a delete."""
    return page_id[-6:]


def plan_text(plan: DeletePlan, titles: dict[str, str]) -> Content:
    """What plan_delete says will be erased, in sentences."""
    counts = plan.get("counts", {})
    lines = [
        f"Erases {counted(counts.get('pages', len(plan.get('pages', []))), 'page')}: "
        f"{counted(counts.get('revisions', len(plan.get('revisions', []))), 'revision')}, "
        f"{counted(counts.get('relations', len(plan.get('relations', []))), 'relation')}, "
        f"{counted(plan.get('suppressions', 0), 'suppression')}, "
        f"{counted(plan.get('bytes', 0), 'byte')} of content.",
        "Nothing of it stays in the database, its WAL, its index or the handoff copies; a receipt without content is kept.",
    ]
    # What decides the question first (at 80x24 the body shows six rows): the pages, what derives from them,
    # the handoffs and export files that hold them; the revision ids last.
    pages = plan.get("pages", [])
    if len(pages) > 1:
        lines.append("Pages: " + ", ".join(titles.get(p, p) for p in pages[:12])
                     + (f", and {len(pages) - 12:,} more" if len(pages) > 12 else ""))
    derived = plan.get("derived_pages", [])
    if derived:
        lines.append(f"{counted(len(derived), 'page')} derived from it stay{'s' if len(derived) == 1 else ''} unless you cascade (ctrl+k): "
                     + ", ".join(titles.get(p, p) for p in derived[:8])
                     + (f", and {len(derived) - 8:,} more" if len(derived) > 8 else ""))
    handoffs = plan.get("handoffs", [])
    if handoffs:
        chats = sorted({h["label"] for h in handoffs})
        lines.append(f"Handoffs touched: {len(handoffs)} entr{'y' if len(handoffs) == 1 else 'ies'} in "
                     f"{', '.join(chats)} (their stored copies are rewritten to say 'erased').")
    for export in plan.get("export_files", []):
        lines.append(f"Your export file {export['path']} holds it; it is your file and is not rewritten.")
    revisions = plan.get("revisions", [])
    for rev in revisions[:8]:
        lines.append(f"  revision {rev}")
    if len(revisions) > 8:
        lines.append(f"  … and {len(revisions) - 8} more revisions")
    return Content("\n".join(lines))


COUNTS_ORDER = ("pages", "revisions", "relations", "suppressions", "lifecycle_events", "handoff_entries", "bytes")


def counts_text(counts: dict[str, int]) -> str:
    """A receipt's counts in words, each noun in the right number: `1 page, 2 revisions, 1 handoff entry`."""
    words = []
    first = {key: i for i, key in enumerate(COUNTS_ORDER)}  # (a receipt read back has its counts sorted by name)
    for key, n in sorted(counts.items(), key=lambda item: first.get(item[0], len(first))):
        if not n:
            continue
        plural = key.replace("_", " ")
        singular = plural[:-3] + "y" if plural.endswith("ies") else plural.removesuffix("s")
        words.append(counted(n, singular, plural))
    return ", ".join(words)


def receipt_text(receipt: Receipt) -> Content:
    parts = counts_text(receipt.get("counts", {}))
    return Content.assemble(
        ("Deleted. ", "bold"), f"Receipt {receipt['receipt_id']} at {receipt['created_at']}\n",
        f"Pages: {', '.join(receipt.get('page_ids', []))}\n", f"Counts: {parts or 'none'}\n",
        f"Reason: {receipt.get('reason', '')}\n", "The receipt holds ids and counts only, never content.")


ResultT = TypeVar("ResultT")  # what the dialog dismisses with (a receipt, or None)


class TypedThenReason(ModalScreen[ResultT]):
    """A deletion's two fields: what must be typed (#typed), then the reason (#reason). Enter in the first
    moves to the reason; in the reason it presses #confirm when the dialog is ready, else says what is
    missing (`not_ready`). Subclasses keep #confirm's state with `_check_ready`."""

    def not_ready(self) -> str:
        raise NotImplementedError

    def _check_ready(self) -> None:
        raise NotImplementedError

    def on_input_changed(self, event: Field.Changed) -> None:
        self._check_ready()

    def on_input_submitted(self, event: Field.Submitted) -> None:
        event.stop()
        if event.input.id == "typed":
            self.query_one("#reason", Field).focus()
            return
        confirm = self.query_one("#confirm", Button)
        if confirm.disabled:
            self.notify(self.not_ready(), severity="warning")
        else:
            confirm.press()


class DeleteScreen(StoreWorkers, TypedThenReason["Receipt | None"]):
    """Dismisses with the deletion receipt, or None when nothing was erased."""

    COMMAND_SCOPE = "delete"
    BINDINGS = commands.bindings("delete")

    def __init__(self, page_id: str, title: str, follow: Callable[[list[str], Receipt | None], None] | None = None) -> None:
        super().__init__()
        self.page_id, self.page_title = page_id, title
        # Told the pages about to go (no receipt yet) and then the receipt: the screen under the dialog lets go
        # of them before they go (a change noticed meanwhile would read an erased page back: a failed read in
        # the audit log) and shows what is true while the receipt is up.
        self.follow = follow
        self.plan: DeletePlan | None = None
        self.receipt: Receipt | None = None

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog", classes="dialog wide plan"):
            yield Static(Content.styled(f"Delete “{self.page_title}” for good", "bold"), classes="dialog-title",
                         id="delete-title")
            with VerticalScroll(id="delete-body"):
                yield Static("Planning…", id="plan")
            yield Tick("Also erase the pages derived from it (cascade)", id="cascade", disabled=True)
            yield Static(f"Type the page's short id to confirm: the last 6 characters of {self.page_id}",
                         id="typed-label")  # a Static wraps, so the id is never cut off
            yield Field(placeholder="6 characters", id="typed", max_length=6)
            yield Label("Reason (kept in the receipt):")
            yield Field(value="erased in the pcp app", id="reason")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Cancel", id="cancel", variant="default")
                yield Button("Delete for good", id="confirm", variant="error", disabled=True)
            yield Static(self._keys(cascade=False), classes="dialog-keys", id="delete-keys")

    def _keys(self, cascade: bool) -> Content:
        """The dialog's key line; ctrl+k is there only when the plan has pages to cascade to."""
        pairs = [("delete.cascade", "Cascade")] if cascade else []
        return (key_hint(self.app, [*pairs, ("delete.cancel", "Cancel"), ("help", "Keys")])
                + Content.styled(" · Enter in the reason deletes once the id is typed", "dim"))

    def on_mount(self) -> None:
        self.query_one("#typed", Field).focus()  # typing starts in the field, never on a button
        self._plan(False)

    @work(thread=True, exclusive=True, exit_on_error=False, group="delete-plan")
    def _plan(self, cascade: bool) -> None:
        plan = self.app.opened_store.plan_delete(self.page_id, cascade=cascade)
        names = reading.titles(self.app.opened_store, plan.get("pages", [])[:12] + plan.get("derived_pages", [])[:8])
        self.post_message(DeletePlanned(plan, names))

    @work(thread=True, exclusive=True, exit_on_error=False, group="delete")
    def _delete(self, reason: str, cascade: bool) -> None:
        self.post_message(PageDeleted(self.app.opened_store.delete_page(self.page_id, reason, cascade=cascade)))

    @on(DeletePlanned)
    def _show_plan(self, message: DeletePlanned) -> None:
        message.stop()
        self.plan = plan = message.plan
        self.query_one("#plan", Static).update(plan_text(plan, message.titles))
        cascade = self.query_one("#cascade", Checkbox)
        cascade.disabled = not (plan.get("derived_pages") or plan.get("cascade"))
        self.query_one("#delete-keys", Static).update(self._keys(cascade=not cascade.disabled))
        self._check_ready()

    @on(PageDeleted)
    def _show_receipt(self, message: PageDeleted) -> None:
        message.stop()
        self.receipt = receipt = message.receipt
        if self.follow is not None:
            self.follow(list(receipt.get("page_ids", [])), receipt)
        self.query_one("#plan", Static).update(receipt_text(receipt))
        for selector in ("#cascade", "#typed-label", "#typed", "#confirm", "Label"):
            for widget in self.query(selector):
                widget.display = False
        self.query_one("#reason").display = False
        self.query_one("#delete-title", Static).update(Content.styled(f"Deleted “{self.page_title}”", "bold"))
        self.query_one("#delete-keys", Static).update(key_hint(self.app, [("delete.cancel", "Close"), ("help", "Keys")]))
        button = self.query_one("#cancel", Button)
        button.label = "Close"
        button.focus()

    def not_ready(self) -> str:
        return f"Type the last 6 characters of {self.page_id} and a reason first."

    def _check_ready(self) -> None:
        typed = self.query_one("#typed", Field).value.strip().upper()  # ids are upper case; typing need not be
        reason = self.query_one("#reason", Field).value.strip()
        self.query_one("#confirm", Button).disabled = not (
            self.plan is not None and typed == short_id(self.page_id).upper() and reason and self.receipt is None)

    def on_checkbox_changed(self, event: Checkbox.Changed) -> None:
        event.stop()
        self.plan = None
        self._check_ready()
        self.query_one("#plan", Static).update("Planning…")
        self._plan(event.value)

    def action_toggle_cascade(self) -> None:
        box = self.query_one("#cascade", Checkbox)
        if self.receipt is not None or self.plan is None:
            return  # (after the deed, or while the plan is being made: the box is not there to toggle)
        if box.disabled:
            self.app.notify("Nothing is derived from this page: there is nothing to cascade to.")
        else:
            box.toggle()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "confirm" and not event.button.disabled:
            event.button.disabled = True
            if self.follow is not None:
                self.follow(list(self.plan.get("pages", [self.page_id]) if self.plan else [self.page_id]), None)
            self._delete(self.query_one("#reason", Field).value.strip(), self.query_one("#cascade", Checkbox).value)
        elif event.button.id == "cancel":
            self.action_cancel()

    def action_cancel(self) -> None:
        self.dismiss(self.receipt)
