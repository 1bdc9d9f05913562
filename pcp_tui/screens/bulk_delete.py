"""Deleting many pages at once: one plan for the whole selection, the number of pages typed to confirm,
the erasure in batches with its progress (Escape stops between batches), then one receipt on screen.

The store records the exact planned set first (begin_bulk_delete, refused if the selection changed since
the plan) and erases it batch by batch (resume_bulk_delete). Stopped, whole pages only are gone and the
receipt keeps the rest: ctrl+r here (or `pcp delete --resume DEL_ID`) continues it.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any, Callable

from textual import on, work
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.widgets import Button, Label, ProgressBar, Static
from textual.worker import Worker, WorkerState

from .. import commands, reading
from ..messages import BulkFinished, BulkPlanned, BulkStarted, Progress, SelectionMoved, StoreWorkers
from ..widgets.fields import Field
from .confirm import key_hint
from .delete import TypedThenReason, counts_text
from ..text import already_gone, counted

if TYPE_CHECKING:
    from store.types import BulkDeletePlan, BulkDeleteReceipt

LISTED = 500  # pages named in the receipt on screen (the stored receipt lists them all)
FIRST = 12  # pages named in the plan (the store gives the first 20 by id)


class Stopped(Exception):
    """Raised from the progress callback between two batches: the user pressed Escape."""


def typed_count(text: str) -> int | None:
    """The number typed to confirm: digits, with thousands separators allowed (`1,234`)."""
    digits = text.strip().replace(",", "").replace("_", "").replace(" ", "")
    return int(digits) if digits.isdecimal() else None  # not isdigit(): "²" is a digit int() refuses


def bulk_plan_text(plan: BulkDeletePlan, label: str) -> Content:
    """What plan_bulk_delete says will be erased, in sentences."""
    pages = plan["pages"]
    lines = [
        f"Selection: {label}.",
        f"Erases {counted(pages, 'page')}: {counted(plan['revisions'], 'revision')}, "
        f"{counted(plan['relations'], 'relation')}, {counted(plan['suppressions'], 'suppression')}, "
        f"{counted(plan['bytes'], 'byte')} of content.",
    ]
    # Which pages first, then what touches them, then what holds for every deletion (at 80x24 the body shows
    # six rows: the pages must be among them).
    first = plan.get("first_pages", [])[:FIRST]
    if first:
        lines.append(f"First {len(first)} of {pages:,} by id:" if pages > len(first) else "Pages:")
        lines += [f"  {p['title'] or p['page_id']}  ({p['page_id']}, {p['namespace']})" for p in first]
    if plan.get("handoff_entries"):
        lines.append(f"Handoffs touched: {counted(plan['handoff_entries'], 'entry', 'entries')} in "
                     f"{counted(plan['handoffs'], 'handoff')} (their stored copies are rewritten to say "
                     "'erased').")
    for export in plan.get("export_files", []):
        lines.append(f"Your export file {export['path']} holds some of them; it is your file and is not rewritten.")
    if plan.get("derived_pages"):
        derived = plan["derived_pages"]
        lines.append(f"{counted(derived, 'page')} derived from them {'stays' if derived == 1 else 'stay'} "
                     "(not selected).")
    lines.append(f"Nothing of {'it' if pages == 1 else 'them'} stays in the database, its WAL, its index or the "
                 "handoff copies; one receipt without content is kept.")
    lines.append("Erased in batches: Esc stops after the current batch (whole pages only), and the rest can be "
                 "resumed.")
    return Content("\n".join(lines))


def bulk_receipt_text(receipt: BulkDeleteReceipt, titles: dict[str, str], stopped: bool) -> Content:
    """How far the deletion got, and the pages erased (by title where it was known before)."""
    done, total, rid = receipt["pages_done"], receipt["pages"], receipt["receipt_id"]
    parts = counts_text(receipt.get("counts", {}))
    if stopped:
        head = Content.assemble(
            ("Stopped. ", "bold"),
            f"{done:,} of {total:,} pages erased{already_gone(receipt)} (whole pages only); "
            f"receipt {rid}, completed {receipt['completed']}.\n"
            f"The other {total - done:,} are recorded in it: {commands.by_id('bulk_delete.resume').keys} resumes "
            f"here, or `pcp delete --resume {rid}`.\n")
    else:
        head = Content.assemble(("Deleted. ", "bold"),
                                f"{counted(done, 'page')}{already_gone(receipt)}; receipt {rid} at "
                                f"{receipt['updated_at']}.\n")
    erased = receipt.get("page_ids", [])[:done]
    lines = [f"  {titles[p]}  ({p})" if p in titles else f"  {p}" for p in erased[:LISTED]]
    if len(erased) > LISTED:
        lines.append(f"  … and {len(erased) - LISTED:,} more (`pcp --json delete --resume {rid}` lists them all)")
    return Content.assemble(
        head, f"Counts: {parts or 'none'}\n", f"Reason: {receipt.get('reason', '')}\n",
        "The receipt holds ids and counts only, never content.\n", "Erased:\n" if erased else "",
        "\n".join(lines))


class BulkDeleteScreen(StoreWorkers, TypedThenReason["BulkDeleteReceipt | None"]):
    """Dismisses with the bulk deletion's receipt (how far it got), or None when nothing was started."""

    COMMAND_SCOPE = "bulk_delete"
    BINDINGS = commands.bindings("bulk_delete")
    batch_size: int | None = None  # pages per batch; None: the store's own (tests make batches small)

    def __init__(self, filters: dict[str, Any], label: str, titles: dict[str, str] | None = None,
                 follow: Callable[[BulkDeleteReceipt, bool], None] | None = None) -> None:
        super().__init__()
        self.filters, self.label = filters, label
        # Told when the erasure starts (False) and when it ends or stops (True), with the receipt: the screen
        # under the dialog shows what is true while the receipt is still up.
        self.follow = follow
        self.titles: dict[str, str] = dict(titles or {})
        self.plan: BulkDeletePlan | None = None
        self.receipt: BulkDeleteReceipt | None = None  # once recorded: how far it got
        self.running = False
        self.moved_from: int | None = None  # the planned count, when the selection moved before erasing began
        self.stopped = False
        self._stop = threading.Event()
        self.resume_id: str | None = None  # a deletion stopped earlier, resumed when the dialog opens

    @classmethod
    def resuming(cls, receipt_id: str, follow: Callable[[BulkDeleteReceipt, bool], None] | None = None) -> BulkDeleteScreen:
        """The dialog for a deletion stopped earlier (its dialog closed since): it erases the rest of the recorded
        set at once (that set was confirmed when it began), with its progress; esc stops again."""
        screen = cls({}, f"the stopped deletion {receipt_id}", follow=follow)
        screen.resume_id = receipt_id
        return screen

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog", classes="dialog wide plan"):
            yield Static(Content.styled("Delete the selected pages for good", "bold"), classes="dialog-title",
                         id="bulk-title")
            with VerticalScroll(id="delete-body"):
                yield Static("Planning…", id="plan")
            yield ProgressBar(id="bulk-progress", show_eta=False)
            yield Static("", id="bulk-status")
            yield Static("Type the number of pages to confirm:", id="typed-label")
            yield Field(placeholder="number of pages", id="typed", max_length=16)
            yield Label("Reason (kept in the receipt):", id="reason-label")
            yield Field(value="erased in the pcp app", id="reason")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Cancel", id="cancel", variant="default")
                yield Button("Resume", id="resume", variant="warning")
                yield Button("Delete for good", id="confirm", variant="error", disabled=True)
            yield Static(self._keys("ready"), classes="dialog-keys", id="bulk-keys")

    def _keys(self, phase: str) -> Content:
        """The dialog's keys for what it is doing: ready to confirm, erasing, stopped, done."""
        cancel = {"ready": "Cancel", "running": "Stop after this batch", "stopped": "Close", "done": "Close"}[phase]
        pairs = [("bulk_delete.cancel", cancel)]
        if phase == "stopped":
            pairs.append(("bulk_delete.resume", "Resume"))
        hint = key_hint(self.app, [*pairs, ("help", "Keys")])
        if phase == "ready":
            hint += Content.styled(" · Enter in the reason deletes once the number is typed", "dim")
        return hint

    def on_mount(self) -> None:
        self.query_one("#bulk-progress").display = False
        self.query_one("#bulk-status").display = False
        self.query_one("#resume").display = False
        if self.resume_id is not None:
            self.query_one("#bulk-title", Static).update(Content.styled(f"Resuming {self.resume_id}", "bold"))
            self.query_one("#plan", Static).update("The rest of the set recorded when this deletion began.")
            self._begin()
            self._resume(self.resume_id)
            return
        self.query_one("#typed", Field).focus()  # typing starts in the field, never on a button
        self._plan()

    # --- workers ---

    @work(thread=True, exclusive=True, exit_on_error=False, group="bulk-plan")
    def _plan(self) -> None:
        self.post_message(BulkPlanned(self.app.opened_store.plan_bulk_delete(self.filters)))

    @work(thread=True, exclusive=True, exit_on_error=False, group="bulk-delete")
    def _erase(self, reason: str, digest: str) -> None:
        from store import Conflict

        store = self.app.opened_store
        sized = {} if self.batch_size is None else {"batch_size": self.batch_size}
        try:
            started = store.begin_bulk_delete(self.filters, reason, digest, **sized)
        except Conflict:  # the selection changed since the plan: planned again, said in the app's words
            self.post_message(SelectionMoved())
            return
        self._run(started, first=True)

    @work(thread=True, exclusive=True, exit_on_error=False, group="bulk-delete")
    def _resume(self, receipt_id: str) -> None:
        self._run(self.app.opened_store.bulk_deletion(receipt_id), first=False)

    def _run(self, started: BulkDeleteReceipt, first: bool) -> None:
        """Erase the recorded set (in the worker): titles first, while the pages still have them."""
        store = self.app.opened_store
        receipt_id = started["receipt_id"]
        missing = [p for p in started["page_ids"][started["pages_done"]:LISTED] if p not in self.titles]
        self.post_message(BulkStarted(started, reading.titles(store, missing) if missing else {}))

        def progress(done: int, total: int | None, unit: str = "pages", /) -> None:
            self.post_message(Progress("bulk_delete", done, total, unit))
            if self._stop.is_set() and total is not None and done < total:
                raise Stopped  # between two batches: the batch before is committed whole

        try:
            run = store.run_bulk_delete if first else store.resume_bulk_delete  # (a resume is audited as one)
            receipt = run(receipt_id, progress=progress)
        except Stopped:
            self.post_message(BulkFinished(store.bulk_deletion(receipt_id), True))
            return
        self.post_message(BulkFinished(receipt, False))

    @on(Worker.StateChanged)
    def _erase_failed(self, event: Worker.StateChanged) -> None:
        # The error itself reaches the user through StoreWorkers; the dialog says how far it got.
        if event.worker.group == "bulk-delete" and event.state == WorkerState.ERROR:
            self.running = False
            if self.receipt is not None:
                self._status_after_failure(self.receipt["receipt_id"])
            else:  # nothing recorded (the selection changed since the plan, say): plan again
                self._ready_again()

    @on(SelectionMoved)
    def _selection_moved(self, message: SelectionMoved) -> None:
        message.stop()
        self.moved_from = self.plan["pages"] if self.plan else None
        self.running = False
        self._ready_again()

    def _ready_again(self) -> None:
        self._stop.clear()
        for selector in ("#typed-label", "#typed", "#reason-label", "#reason", "#confirm"):
            self.query_one(selector).display = True
        self.query_one("#bulk-progress").display = False
        self.query_one("#bulk-status").display = False
        self.query_one("#bulk-keys", Static).update(self._keys("ready"))
        button = self.query_one("#cancel", Button)
        button.label, button.disabled = "Cancel", False
        self.plan = None
        self.query_one("#typed", Field).value = ""
        self.query_one("#plan", Static).update("Planning again: the selection changed since the plan…")
        self._check_ready()
        self.query_one("#typed", Field).focus()
        self._plan()

    @work(thread=True, exclusive=True, exit_on_error=False, group="bulk-status")
    def _status_after_failure(self, receipt_id: str) -> None:
        self.post_message(BulkFinished(self.app.opened_store.bulk_deletion(receipt_id), True))

    # --- answers ---

    @on(BulkPlanned)
    def _show_plan(self, message: BulkPlanned) -> None:
        message.stop()
        self.plan = plan = message.plan
        pages = plan["pages"]
        for page in plan.get("first_pages", []):
            self.titles.setdefault(page["page_id"], page["title"] or page["page_id"])
        self.query_one("#bulk-title", Static).update(
            Content.styled(f"Delete {counted(pages, 'page')} for good", "bold"))
        self.query_one("#plan", Static).update(bulk_plan_text(plan, self.label))
        self.query_one("#typed-label", Static).update(f"Type the number of pages ({pages:,}) to confirm:")
        self._check_ready()
        before, self.moved_from = self.moved_from, None
        if before is not None:
            change = pages - before
            what = (f"{counted(change, 'page')} matched since the plan" if change > 0 else
                    f"{counted(-change, 'page')} left the selection since the plan" if change < 0 else
                    "Other pages match now than when planned")
            self.notify(f"{what}; nothing was erased. The plan above now has {pages:,}: type {pages:,} to go on.",
                        title="The selection changed", severity="warning")

    @on(BulkStarted)
    def _started(self, message: BulkStarted) -> None:
        message.stop()
        self.receipt = message.receipt
        self.titles.update(message.titles)
        if self.follow is not None:
            self.follow(message.receipt, False)
        bar = self.query_one("#bulk-progress", ProgressBar)
        bar.update(total=message.receipt["pages"], progress=message.receipt["pages_done"])
        self._show_status(message.receipt["pages_done"], message.receipt["pages"])

    def on_progress(self, message: Progress) -> None:
        if message.task != "bulk_delete":
            return
        message.stop()
        self.query_one("#bulk-progress", ProgressBar).update(total=message.total, progress=message.done)
        self._show_status(message.done, message.total or 0)

    def _show_status(self, done: int, total: int) -> None:
        stopping = "stopping after this batch…" if self._stop.is_set() else \
            f"{self.app.key_display('bulk_delete.cancel')} stops after this batch"
        self.query_one("#bulk-status", Static).update(f"Erased {done:,} of {total:,} pages · {stopping}")

    @on(BulkFinished)
    def _finished(self, message: BulkFinished) -> None:
        message.stop()
        self.running = False
        self.receipt = receipt = message.receipt
        self.stopped = message.stopped and receipt["state"] != "complete"
        if self.follow is not None:
            self.follow(receipt, True)
        self._stop.clear()
        self.query_one("#plan", Static).update(bulk_receipt_text(receipt, self.titles, self.stopped))
        body = self.query_one("#delete-body", VerticalScroll)
        if self.has_class("-short"):  # the fields are gone: the receipt takes their room (title, bar, buttons, keys stay)
            body.styles.max_height = max(6, self.app.size.height - 8)
        body.scroll_home(animate=False)
        bar = self.query_one("#bulk-progress", ProgressBar)
        bar.update(total=receipt["pages"], progress=receipt["pages_done"])
        self.query_one("#bulk-status").display = False
        self.query_one("#bulk-title", Static).update(Content.styled(
            f"Stopped after {receipt['pages_done']:,} of {receipt['pages']:,} pages" if self.stopped
            else f"Deleted {counted(receipt['pages_done'], 'page')}", "bold"))
        self.query_one("#resume").display = self.stopped
        self.query_one("#bulk-keys", Static).update(self._keys("stopped" if self.stopped else "done"))
        button = self.query_one("#cancel", Button)
        button.label = "Close"
        button.disabled = False
        (self.query_one("#resume", Button) if self.stopped else button).focus()

    # --- input ---

    def not_ready(self) -> str:
        wanted = f" ({self.plan['pages']:,})" if self.plan else ""
        return f"Type the number of pages{wanted} and a reason first."

    def _check_ready(self) -> None:
        typed = typed_count(self.query_one("#typed", Field).value)
        reason = self.query_one("#reason", Field).value.strip()
        self.query_one("#confirm", Button).disabled = not (
            self.plan is not None and self.plan["pages"] > 0 and typed == self.plan["pages"] and reason
            and self.receipt is None and not self.running)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "confirm" and not event.button.disabled and self.plan is not None:
            self._begin()
            self._erase(self.query_one("#reason", Field).value.strip(), self.plan["digest"])
        elif event.button.id == "resume":
            self.action_resume()
        elif event.button.id == "cancel":
            self.action_cancel()

    def _begin(self) -> None:
        """The dialog while erasing: the progress, and one button that stops."""
        self.running = True
        self.stopped = False
        for selector in ("#typed-label", "#typed", "#reason-label", "#reason", "#confirm", "#resume"):
            self.query_one(selector).display = False
        self.query_one("#bulk-progress").display = True
        self.query_one("#bulk-status").display = True
        self.query_one("#bulk-status", Static).update("Recording the planned set…")
        self.query_one("#bulk-keys", Static).update(self._keys("running"))
        button = self.query_one("#cancel", Button)
        button.label = "Stop"
        button.focus()

    def action_resume(self) -> None:
        if self.stopped and not self.running and self.receipt is not None:
            self._begin()
            self._resume(self.receipt["receipt_id"])

    def action_cancel(self) -> None:
        if self.running:  # stop between batches; the dialog stays for the receipt
            if not self._stop.is_set():
                self._stop.set()
                self.query_one("#cancel", Button).disabled = True
                if self.receipt is not None:
                    bar = self.query_one("#bulk-progress", ProgressBar)
                    self._show_status(int(bar.progress), int(bar.total or 0))
            return
        self.dismiss(self.receipt)
