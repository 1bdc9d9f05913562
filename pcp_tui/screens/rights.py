"""Your rights: export everything (or chosen scopes), delete a whole scope, read the audit log and receipts."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pathlib import Path

from textual import on, work
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.content import Content
from textual.screen import Screen
from textual.widgets import (Button, DataTable, Label, ProgressBar, Select, SelectionList, Static, TabbedContent,
                             TabPane)
from textual.worker import Worker, WorkerState

from .. import commands
from ..messages import (AuditLoaded, Exported, Progress, ReceiptsLoaded, ScopeDeleted, ScopePlanned, ScopesLoaded,
                        StoreChanged, StoreWorkers)
from ..widgets.ticks import TickList
from ..widgets.fields import Field
from ..widgets.footer import FitFooter
from ..widgets.tabs import show_tab
from .confirm import ConfirmScreen
from ..text import counted
from .typed import after_typing

if TYPE_CHECKING:
    from store.types import BulkDeleteReceipt
    from store.types import AuditEvent, ScopeDeletePlan, StoppedBulkDeletion

AUDIT_PAGE = 50


class Form(VerticalScroll, can_focus=False):
    """A tab's form: it scrolls to the focused field, so it takes no focus itself (Tab goes from the tab bar
    straight to the first field, also on a short screen where the form overflows)."""


def default_export_path(db_path: Path, fmt: str) -> str:
    """<db folder>/exports/pcp-export-<time>.jsonl (a folder for markdown)."""
    from store import ids

    stamp = ids.now()[:19].replace("-", "").replace(":", "").replace("T", "-")
    return str(db_path.parent / "exports" / (f"pcp-export-{stamp}" + (".jsonl" if fmt == "jsonl" else "")))


def missing_folders(path: Path) -> list[Path]:
    """The folders that writing `path` would have to create, outermost first (none when its parent exists)."""
    missing: list[Path] = []
    folder = path.parent
    while not folder.exists() and folder != folder.parent:
        missing.append(folder)
        folder = folder.parent
    return missing[::-1]


class RightsScreen(StoreWorkers, Screen[Any]):
    """Every right of pcp-core sections 6-7 with a keyboard path."""

    COMMAND_SCOPE = "rights"
    BINDINGS = commands.bindings("rights")

    def __init__(self) -> None:
        super().__init__()
        self.audit_cursor: str | None = None
        self.stopped: dict[str, StoppedBulkDeletion] = {}  # bulk deletions stopped before the end, by receipt id
        self.audit_events: list[AuditEvent] = []  # the rows of the audit table, in order
        self.receipt_rows: list[dict[str, str]] = []  # the receipts table's rows in full, in order (its detail line)
        self.scope_plan: ScopeDeletePlan | None = None

    def compose(self) -> ComposeResult:
        yield Static(Content.styled("Your rights: take everything out, erase a whole scope, see who did what", "bold"),
                     id="rights-title")
        with TabbedContent(initial="export", id="rights-tabs"):
            with TabPane("1 Export", id="export"):
                with Form():
                    yield Label("Scopes to export (choose none for everything)")
                    yield TickList(id="export-scopes")
                    yield Label("Format")
                    yield Select([("JSON Lines (complete, re-importable)", "jsonl"),
                                  ("Markdown folder (for reading)", "markdown")], value="jsonl", allow_blank=False,
                                 id="export-format")
                    yield Label("Write to")
                    yield Field(id="export-path")
                    yield Button("Export", id="export-run", variant="primary")
                    yield ProgressBar(id="export-progress", show_eta=False)
                    yield Static("", id="export-result")
            with TabPane("2 Delete a scope", id="delete-scope"):
                with Form():
                    yield Label("Scope to erase, with every page in it")
                    yield Select([], id="scope-choice", prompt="choose a scope")
                    yield Static("", id="scope-plan")
                    yield Label("Type the scope's namespace to confirm")
                    yield Field(id="scope-typed")
                    yield Label("Reason (kept in the receipt)")
                    yield Field(value="erased in the pcp app", id="scope-reason")
                    yield Button("Delete this scope for good", id="scope-run", variant="error", disabled=True)
                    yield ProgressBar(id="scope-progress", show_eta=False)
                    yield Static("", id="scope-result")
            with TabPane("3 Audit log", id="audit"):
                yield DataTable(id="audit-table", cursor_type="row", zebra_stripes=True)
                yield Static("", id="audit-detail", classes="detail")  # the highlighted event in full
                yield Static("", id="audit-note")
            with TabPane("4 Receipts", id="receipts"):
                yield Static("", id="stopped-deletions")  # bulk deletions not finished (shown when any)
                yield DataTable(id="receipts-table", cursor_type="row")
                yield Static("", id="receipt-detail", classes="detail")  # the highlighted receipt in full
        yield FitFooter(compact=True)

    def on_mount(self) -> None:
        for bar in self.query(ProgressBar):
            bar.display = False
        self.query_one("#export-path", Field).value = default_export_path(self.app.opened_store.path, "jsonl")
        self.query_one("#audit-table", DataTable).add_columns("time", "decision", "operation", "principal", "scopes",
                                                              "counts", "ms")  # (decision in sight at 80x24)
        self.query_one("#receipts-table", DataTable).add_columns("receipt", "time", "scope", "pages", "revisions",
                                                                 "WAL erasure", "reason")
        self._load_scopes()
        self._load_audit(None)
        self._load_receipts()
        self.app.subscribe_store_changes(self)

    @on(StoreChanged)
    def _store_changed(self, message: StoreChanged) -> None:
        """The audit log always starts over from the newest event; scopes and receipts when content changed."""
        message.stop()
        self._load_audit(None)
        if not message.audit_only:
            self._load_scopes()
            self._load_receipts()

    # --- loading ---

    @work(thread=True, exclusive=True, exit_on_error=False, group="rights-scopes")
    def _load_scopes(self) -> None:
        scopes, cursor = [], None
        while True:
            page = self.app.opened_store.list_scopes(limit=100, cursor=cursor)
            scopes += page["scopes"]
            if not (cursor := page["next_cursor"]):
                break
        self.post_message(ScopesLoaded(scopes))

    @work(thread=True, exclusive=True, exit_on_error=False, group="rights-audit")
    def _load_audit(self, cursor: str | None) -> None:
        self.post_message(AuditLoaded(self.app.opened_store.audit_log(limit=AUDIT_PAGE, cursor=cursor), first=cursor is None))

    @work(thread=True, exclusive=True, exit_on_error=False, group="rights-receipts")
    def _load_receipts(self) -> None:
        self.post_message(ReceiptsLoaded(self.app.opened_store.list_receipts()["receipts"],
                                         self.app.opened_store.stopped_bulk_deletions()["deletions"]))

    @on(ScopesLoaded)
    def _show_scopes(self, message: ScopesLoaded) -> None:
        message.stop()
        scopes = message.scopes
        choices = [(f"{s['namespace']}  ({counted(s['page_count'], 'page')})", s["namespace"]) for s in scopes]
        listing = self.query_one("#export-scopes", SelectionList)
        chosen = set(listing.selected)
        listing.clear_options()
        listing.add_options([(label, ns, ns in chosen) for label, ns in choices])
        select = self.query_one("#scope-choice", Select)
        picked = select.value
        # The scope counts leave tombstoned pages out, and erasing the scope erases them too (its plan counts
        # them): the picker says which pages its count is, the plan below says every page erased.
        select.set_options([(f"{s['namespace']}  ({counted(s['page_count'], 'page')}, tombstoned not counted)",
                             s["namespace"]) for s in scopes])
        if isinstance(picked, str) and any(ns == picked for _, ns in choices):
            with select.prevent(Select.Changed):
                select.value = picked  # still there: keep the choice and its plan

    @on(AuditLoaded)
    def _show_audit(self, message: AuditLoaded) -> None:
        message.stop()
        page = message.page
        table = self.query_one("#audit-table", DataTable)
        if message.first:
            table.clear()
            self.audit_events = []
        self.audit_events += page["events"]
        for e in page["events"]:
            counts = ", ".join(f"{k} {v}" for k, v in e["counts"].items())
            table.add_row(e["time"][:19], e["decision"] + (f" ({e['error_code']})" if e["error_code"] else ""),
                          e["operation"], f"{e['principal_type']}:{e['principal_id']}", ", ".join(e["scopes"]),
                          counts, f"{e['duration_ms']:.1f}")
        self.audit_cursor = page["next_cursor"]
        self.refresh_bindings()  # (^n More audit only while there is more)
        more = f"; {self.app.key_display('rights.more')} loads more" if self.audit_cursor else "; that is all"
        self.query_one("#audit-note", Static).update(f"{counted(table.row_count, 'event')}, newest first{more}.")

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        """An audit event in full under the table: its columns cut long scope lists and counts."""
        if event.data_table.id == "receipts-table":
            event.stop()
            self._receipt_detail(event.cursor_row)
            return
        if event.data_table.id != "audit-table":
            return
        event.stop()
        index = event.cursor_row
        detail = self.query_one("#audit-detail", Static)
        if not 0 <= index < len(self.audit_events):
            detail.update("")
            return
        e = self.audit_events[index]
        counts = ", ".join(f"{k} {v}" for k, v in e["counts"].items()) or "none"
        decision = e["decision"] + (f" ({e['error_code']})" if e["error_code"] else "")
        detail.update(Content.assemble(
            (e["operation"], "bold"), f" by {e['principal_type']}:{e['principal_id']} at {e['time'][:19]}: {decision}, "
            f"{e['duration_ms']:.1f} ms\nscopes: {', '.join(e['scopes']) or 'none'}\ncounts: {counts}"))

    def _receipt_detail(self, index: int) -> None:
        """The highlighted receipt in full under the table (report 21: at 80 columns the table cut its WAL
        erasure and reason columns, and Enter on a row showed nothing)."""
        detail = self.query_one("#receipt-detail", Static)
        rows = self.receipt_rows
        if not 0 <= index < len(rows):
            detail.update("")
            return
        r = rows[index]
        detail.update(Content.assemble((r["receipt_id"], "bold"), f" at {r['time']}: ", r["what"],
                                       f"\nWAL erasure: {r['wal']} · reason: “{r['reason']}”"))

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        if event.data_table.id == "receipts-table":  # Enter: the same line, for the row Enter was pressed on
            event.stop()
            self._receipt_detail(event.cursor_row)

    @on(ReceiptsLoaded)
    def _show_receipts(self, message: ReceiptsLoaded) -> None:
        message.stop()
        receipts = message.receipts
        self.receipt_rows = [
            {"receipt_id": d["receipt_id"], "time": d["updated_at"][:19].replace("T", " "),
             "what": f"stopped after {d['pages_done']:,} of {d['pages']:,} pages", "wal": "stopped",
             "reason": d["reason"]} for d in message.stopped] + [
            {"receipt_id": r["receipt_id"], "time": r["created_at"][:19].replace("T", " "),
             "what": (f"{counted(len(r['page_ids']), 'page')}, {counted(len(r['revision_ids']), 'revision')}"
                      + (f" of {r['namespace']}" if r.get("namespace") else "")),
             "wal": r.get("wal_erasure", "done"), "reason": r["reason"]} for r in receipts]
        table = self.query_one("#receipts-table", DataTable)
        table.clear()
        self.stopped = {d["receipt_id"]: d for d in message.stopped}
        resume = self.app.key_display("rights.resume")
        for d in message.stopped:  # a row each, first: r resumes the highlighted one
            table.add_row(d["receipt_id"], d["updated_at"][:19], "", f"{d['pages_done']:,} of {d['pages']:,}", "",
                          "stopped", d["reason"], key=d["receipt_id"])
        for r in receipts:
            table.add_row(r["receipt_id"], r["created_at"][:19], r.get("namespace") or "", len(r["page_ids"]),
                          len(r["revision_ids"]), r.get("wal_erasure", "done"), r["reason"])
        lines = [Content.assemble(("Stopped before the end: ", "bold $warning"), f"{d['receipt_id']}, "
                                  f"{d['pages_done']:,} of {d['pages']:,} pages erased (last batch "
                                  f"{d['updated_at'][:16].replace('T', ' ')}). {resume} on its row resumes it (or "
                                  f"`pcp delete --resume {d['receipt_id']}`).")
                 for d in message.stopped]
        self.refresh_bindings()
        stopped = self.query_one("#stopped-deletions", Static)
        stopped.update(Content("\n").join(lines) if lines else "")
        stopped.display = bool(lines)
        self._receipt_detail(table.cursor_row if table.row_count else -1)

    # --- export ---

    def on_select_changed(self, event: Select.Changed) -> None:
        if event.select.id == "export-format" and isinstance(event.value, str):
            self.query_one("#export-path", Field).value = default_export_path(self.app.opened_store.path, event.value)
        elif event.select.id == "scope-choice" and isinstance(event.value, str):
            self.scope_plan = None
            self.query_one("#scope-plan", Static).update("Planning…")
            self._plan_scope(event.value)
            self._check_scope_ready()

    @after_typing
    def action_export(self) -> None:
        self.query_one(TabbedContent).active = "export"
        path = self.query_one("#export-path", Field).value.strip()
        if not path:
            self.notify("Give the path to write the export to.", severity="warning")
            return
        target = Path(path).expanduser()
        missing = missing_folders(target)
        # The default folder (<store folder>/exports) is made without asking; any other missing folder is asked
        # about first, so a typo never quietly creates folders somewhere else (at the filesystem root, say).
        if missing and target.parent != self.app.opened_store.path.parent / "exports":
            many = f" (and {len(missing) - 1} folder{'s' if len(missing) > 2 else ''} above it)" if len(missing) > 1 else ""
            self.app.push_screen(ConfirmScreen(
                "Create the folder?",
                f"The folder {target.parent} does not exist{many}. Create it and write the export there?\n\n"
                f"The first new folder would be {missing[0]}.",
                confirm_label="Create and export", danger=False),
                lambda yes: self._start_export(target, create=True) if yes else self.query_one(
                    "#export-result", Static).update("Not exported: the folder does not exist. Check the path."))
            return
        markdown = self.query_one("#export-format", Select).value == "markdown"
        # An earlier export (or anything else) is never replaced without asking. (A folder where a JSON Lines
        # file should go is not replaced at all: the export fails and says so.)
        if target.is_file() or (markdown and target.is_dir() and any(target.iterdir())):
            what = "folder" if target.is_dir() else "file"
            self.app.push_screen(ConfirmScreen(
                f"Replace the {what}?",
                f"{target} already exists. Write this export over it?" + (
                    "\n\nFiles in it with the names the export writes are replaced." if what == "folder" else ""),
                confirm_label="Replace", danger=True),
                lambda yes: self._start_export(target, create=False) if yes else self.query_one(
                    "#export-result", Static).update(f"Not exported: {target} is left as it was. Choose another path."))
            return
        self._start_export(target, create=bool(missing))

    def _start_export(self, target: Path, create: bool) -> None:
        scopes = list(self.query_one("#export-scopes", SelectionList).selected) or None
        fmt = str(self.query_one("#export-format", Select).value)
        bar = self.query_one("#export-progress", ProgressBar)
        bar.display = True
        bar.update(total=None, progress=0)
        self.query_one("#export-result", Static).update("Exporting…")
        self._export(target, scopes, fmt, create)

    @work(thread=True, exclusive=True, exit_on_error=False, group="export")
    def _export(self, path: Path, scopes: list[str] | None, fmt: str, create: bool) -> None:
        if create:  # every folder made here is the owner's only (0700), as the store's own folders are
            for folder in missing_folders(path):
                folder.mkdir(mode=0o700, exist_ok=True)
        def progress(done: int, total: int | None, what: str = "", /) -> None:
            self.post_message(Progress("export", done, total))

        result = self.app.opened_store.export(path, scopes=scopes, format=fmt, progress=progress)
        self.post_message(Exported(result))

    @on(Worker.StateChanged)
    def _work_failed(self, event: Worker.StateChanged) -> None:
        """A failed export or scope delete stops its progress bar and says so where the result would be."""
        if event.state != WorkerState.ERROR or event.worker.group not in ("export", "delete-scope"):
            return
        error = event.worker.error
        why = getattr(error, "message", None) or f"{type(error).__name__}: {error}"
        if event.worker.group == "export":
            self.query_one("#export-progress", ProgressBar).display = False
            self.query_one("#export-result", Static).update(Content.assemble(("Export failed: ", "bold $error"), why))
        else:
            self.query_one("#scope-progress", ProgressBar).display = False
            self.query_one("#scope-result", Static).update(Content.assemble(("Not deleted: ", "bold $error"), why))
            self._check_scope_ready()

    @on(Exported)
    def _show_export_done(self, message: Exported) -> None:
        message.stop()
        result = message.result
        counts = result.get("counts", {})
        what = f"{counted(result['lines'], 'line')}, sha256 {result['sha256'][:16]}…" if result.get("format") == "jsonl" \
            else counted(result.get('files', 0), 'file')
        self.query_one("#export-result", Static).update(Content.assemble(
            ("Exported ", "bold"), f"{counted(counts.get('pages', 0), 'page')}, {counted(counts.get('revisions', 0), 'revision')} ({what}) to\n",
            (result["path"], "bold")))
        self.query_one("#export-progress", ProgressBar).display = False
        self.notify(f"Exported to {result['path']}", title="Export")
        self.app.announce_change(audit_only=True)

    def on_progress(self, message: Progress) -> None:
        bar_id = {"export": "#export-progress", "delete-scope": "#scope-progress"}[message.task]
        self.query_one(bar_id, ProgressBar).update(total=message.total, progress=message.done)

    # --- delete a scope ---

    @work(thread=True, exclusive=True, exit_on_error=False, group="scope-plan")
    def _plan_scope(self, namespace: str) -> None:
        self.post_message(ScopePlanned(self.app.opened_store.plan_delete_scope(namespace)))

    @on(ScopePlanned)
    def _show_scope_plan(self, message: ScopePlanned) -> None:
        message.stop()
        plan = message.plan
        self.scope_plan = plan
        derived = plan.get("derived_pages", [])
        text = (f"Erases scope {plan['namespace']}: {counted(plan['pages'], 'page')}, "
                f"{counted(plan['revisions'], 'revision')}, {counted(plan['relations'], 'relation')}, "
                f"{counted(plan['suppressions'], 'suppression')}, {counted(plan['bytes'], 'byte')}, "
                "and the scope itself. A receipt without content is kept.")
        if derived:
            text += f"\n{counted(len(derived), 'page')} in other scopes derive{'s' if len(derived) == 1 else ''} from it; they keep their own content."
        self.query_one("#scope-plan", Static).update(Content(text))
        self._check_scope_ready()

    def on_input_changed(self, event: Field.Changed) -> None:
        if event.input.id in ("scope-typed", "scope-reason"):
            self._check_scope_ready()

    def _check_scope_ready(self) -> None:
        plan = self.scope_plan
        typed = self.query_one("#scope-typed", Field).value.strip()
        reason = self.query_one("#scope-reason", Field).value.strip()
        self.query_one("#scope-run", Button).disabled = not (plan and typed == plan["namespace"] and reason)

    @work(thread=True, exclusive=True, exit_on_error=False, group="delete-scope")
    def _delete_scope(self, namespace: str, reason: str) -> None:
        def progress(done: int, total: int | None, what: str = "", /) -> None:
            self.post_message(Progress("delete-scope", done, total))

        receipt = self.app.opened_store.delete_scope(namespace, reason, progress=progress)
        self.post_message(ScopeDeleted(receipt))

    @on(ScopeDeleted)
    def _show_scope_deleted(self, message: ScopeDeleted) -> None:
        message.stop()
        receipt = message.receipt
        counts = receipt.get("counts", {})
        self.query_one("#scope-result", Static).update(Content.assemble(
            ("Deleted. ", "bold"), f"Receipt {receipt['receipt_id']}: {counted(counts.get('pages', 0), 'page')}, "
            f"{counted(counts.get('revisions', 0), 'revision')} erased from {receipt.get('namespace')}."))
        self.scope_plan = None
        self.app.forget_pages(receipt.get("page_ids", []))
        self.query_one("#scope-typed", Field).value = ""
        self.query_one("#scope-plan", Static).update("")
        self.app.announce_change(None, removed=True)  # this screen's scopes, receipts and audit log reload through it

    # --- actions ---

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "export-run":
            self.action_export()
        elif event.button.id == "scope-run" and self.scope_plan:
            self._confirm_scope_delete(self.scope_plan)

    def _confirm_scope_delete(self, plan: ScopeDeletePlan) -> None:
        """The second step, as for a page: the typed namespace opened the button, this asks once more (on Cancel)."""
        namespace = plan["namespace"]
        pages = plan["pages"]
        screen = ConfirmScreen(
            f"Erase the scope {namespace} for good?",
            f"{counted(pages, 'page')} and {counted(plan['revisions'], 'revision')} in {namespace} are erased with the scope itself. "
            "This cannot be undone; a receipt without content is kept.",
            confirm_label="Erase the scope")

        def answered(yes: bool | None) -> None:
            if yes and self.scope_plan is plan:
                self.query_one("#scope-run", Button).disabled = True
                self.query_one("#scope-progress", ProgressBar).display = True
                self._delete_scope(namespace, self.query_one("#scope-reason", Field).value.strip())

        self.app.push_screen(screen, answered)

    def action_show_tab(self, tab: str) -> None:
        """Show one of the four tabs (keys 1-4) with the keys in it: its first field, list or table."""
        show_tab(self.query_one("#rights-tabs", TabbedContent), tab, focus_into=True)

    TAB_ACTIONS = {"export": "export", "more_audit": "audit", "resume_deletion": "receipts"}  # a tab's own keys: shown and working on it only

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        tab = self.TAB_ACTIONS.get(action)
        if action == "more_audit" and not self.audit_cursor:
            return False  # ("that is all": no key for more)
        if action == "resume_deletion" and not self.stopped:
            return False
        tabs = self.query("#rights-tabs")  # (none before the screen is composed)
        return tab is None or not tabs or tabs.first(TabbedContent).active == tab

    @on(TabbedContent.TabActivated, "#rights-tabs")
    def _tab_shown(self) -> None:
        self.refresh_bindings()  # the footer shows the keys of this tab

    def action_resume_deletion(self) -> None:
        """The highlighted stopped deletion goes on in the bulk-delete dialog: its recorded set, not a filter."""
        from .bulk_delete import BulkDeleteScreen

        table = self.query_one("#receipts-table", DataTable)
        if not self.stopped or table.row_count == 0:
            return
        row = str(table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value)
        if row not in self.stopped:
            self.notify(f"Highlight a stopped deletion first (a “stopped” row), then "
                        f"{self.app.key_display('rights.resume')}.", title="Resume", severity="warning")
            return

        def erased(receipt: BulkDeleteReceipt, finished: bool) -> None:
            if finished:
                done = receipt["page_ids"][:receipt["pages_done"]]
                self.app.forget_pages(done)
                self.app.announce_change(None, removed=True)  # every view, and this tab, follow

        self.app.push_screen(BulkDeleteScreen.resuming(row, follow=erased))

    def action_more_audit(self) -> None:
        if self.audit_cursor:
            self._load_audit(self.audit_cursor)

    def action_back(self) -> None:
        self.app.pop_screen()
