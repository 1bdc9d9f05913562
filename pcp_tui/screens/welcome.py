"""The welcome screen of an empty store, and the import screen (F5): import history (with progress), or open the demo.

An empty store (the first run, or one emptied since) is welcomed ("Welcome to pcp"); a store with pages
gets the same screen titled for what it is then, an import into it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from textual import on, work
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Button, Label, ProgressBar, Select, Static

from store.adapters import IMPORTERS

from .. import commands
from ..messages import (
    ImportFailed, Imported, ImportReportLoaded, LookAlikeNamespace, Progress, StoreEmptiness, StoreWorkers,
)
from .confirm import ConfirmScreen
from ..widgets.fields import Field
from ..widgets.footer import FitFooter
from ..text import counted, one_line
from .typed import after_typing

if TYPE_CHECKING:
    from store.types import ImportExportResult, ImportReportResult, ImportSummary

# The store's importers (a memory import needs whose memory it is: `pcp import memory --from`), and a pcp export.
SOURCES = [(i.label, name) for name, i in IMPORTERS.items() if i.kind != "memory"] + [("A pcp export (.jsonl)", "export")]
PATH_HINTS = {"chatgpt": "e.g. ~/Downloads/chatgpt-export.zip", "claude": "e.g. ~/Downloads/claude-export.zip",
              "claude-code": "empty: ~/.claude/projects", "codex": "empty: ~/.codex", "gemini": "empty: ~/.gemini/tmp",
              "markdown": "e.g. ~/notes", "events": "e.g. ~/events.jsonl", "export": "e.g. pcp-export.jsonl"}


NAMESPACE_HINTS = {"chatgpt": "empty: a scope for each conversation", "claude": "empty: a scope for each conversation",
                   "markdown": "empty: notes:<the folder's name>", "events": "empty: each event's own namespace",
                   "export": "empty: the scopes the export names"}


def namespace_hint(source: str) -> str:
    """The namespace field's hint for an importer (agent sessions take none)."""
    return NAMESPACE_HINTS.get(source, "leave empty: each session goes to its project's scope")


# Agent sessions: the path may be left empty (their own folder), and each session goes to its project's scope.
AGENTS = frozenset(name for name, i in IMPORTERS.items() if i.kind == "agent")
REPORT_LINES = 200  # lines of the kept report shown; `pcp import-report ID` prints them all
WELCOME, IMPORT = "Welcome to pcp", "Import"  # the title: an empty store, a store with pages


def report_lines(report: ImportReportResult) -> str:
    """The kept report, one line per conversation, session or skipped item."""
    entries = report.get("entries", [])
    lines = [f"Report {report['import_id']} ({report['source']}): {len(entries):,} "
             f"line{'s' if len(entries) != 1 else ''}"]
    for e in entries[:REPORT_LINES]:
        where = f"{e['file']}: " if e.get("file") else ""
        page = f" → {e.get('title') or ''} ({e['page_id']})" if e.get("page_id") else ""
        counts = ", ".join(counted(v, "page") + f" {k}" for k, v in (e.get("counts") or {}).items() if v)
        why = f" — {e['reason']}" if e.get("reason") else ""
        lines.append(f"  {e['outcome']:<9} {where}{e['item']}{page}{f' [{counts}]' if counts else ''}{why}")
    if len(entries) > REPORT_LINES:
        lines.append(f"  … and {len(entries) - REPORT_LINES:,} more: pcp import-report {report['import_id']}")
    return "\n".join(lines)


# What an import counted, each with its noun (`1 conversation`, `21 pages created`), in the order shown.
COUNTS = (("conversations", "conversation", ""), ("messages", "message", ""), ("notes", "note", ""),
          ("events", "event", ""), ("created", "page", " created"), ("unchanged", "page", " unchanged"),
          ("revised", "page", " revised"), ("relations", "relation", ""))


def _records(added: dict[str, int]) -> str:
    """A pcp export's records added, by kind: `1 page, 3 revisions, 2 lifecycle events`."""
    def plural(kind: str) -> str:
        return kind[:-1] + "ies" if kind.endswith("y") else kind + "s"

    return ", ".join(counted(n, kind.replace("_", " "), plural(kind.replace("_", " ")))
                     for kind, n in sorted(added.items()) if n)


def report_text(report: Mapping[str, Any]) -> str:
    if "added" in report:  # a pcp export: records by kind, not conversations
        return f"Imported {report.get('path', 'the export')}: {_records(report['added']) or 'nothing new'}."
    counts = ", ".join(counted(report[k], noun) + after for k, noun, after in COUNTS if report.get(k))
    skipped = report.get("skipped") or []
    more = f"; skipped {len(skipped)}: " + "; ".join(f"{s['item']} ({s['reason']})" for s in skipped[:3]) if skipped else ""
    kept = f"\nThe full report (per file and conversation): pcp import-report {report['import_id']}" \
        if report.get("import_id") else ""
    return f"Imported: {counts or 'nothing new'}{more}.{kept}"


def failure(error: BaseException) -> str:
    """An import's error as the one line the screen shows (the store's own sentence where it has one)."""
    from store import PcpError

    text = error.message if isinstance(error, PcpError) else f"{type(error).__name__}: {error}"
    return one_line(text)


class WelcomeScreen(StoreWorkers, Screen[Any]):
    """First run (or F5): bring history in, or look at the demo first."""

    COMMAND_SCOPE = "welcome"
    NOTICE_ABOVE = ".dialog-buttons"  # drawn like a dialog: a message is a line above its buttons (app.notify)
    BINDINGS = commands.bindings("welcome")

    def __init__(self, first_run: bool = True) -> None:
        super().__init__()
        self.first_run = first_run
        self.imported = False

    def _intro(self, empty: bool) -> tuple[Content, Content]:
        """The title and the intro: a welcome for an empty store, an import for one with pages."""
        path = self.app.opened_store.path if self.app.store is not None else ""
        if getattr(self.app, "demo_mode", False):  # (no "look around the demo": this is it)
            return Content.styled(IMPORT, "bold"), Content(
                f"Import into the demo store: {path}\nTry an import here; your own store is not touched (`pcp` "
                "opens it).")
        if empty:
            return Content.styled(WELCOME, "bold"), Content(
                f"This store is empty: {path}\nBring your chat history and notes in, or look around the demo store "
                "first (your store is left alone).")
        return Content.styled(IMPORT, "bold"), Content(
            f"Import into this store: {path}\nBring more chat history and notes in, or look around the demo store "
            "(your store is left alone).")

    def compose(self) -> ComposeResult:
        title, intro = self._intro(self.first_run)
        with Vertical(id="welcome"):
            yield Static(title, classes="dialog-title", id="welcome-title")
            yield Static(intro, classes="dialog-body", id="welcome-intro")
            yield Label("Import from")
            yield Select(SOURCES, value="chatgpt", allow_blank=False, id="source")
            yield Label("Path")
            yield Field(placeholder=PATH_HINTS["chatgpt"], id="path")
            yield Label("Namespace (optional: put everything into this one scope)")
            yield Field(placeholder=namespace_hint("chatgpt"), id="namespace")
            yield ProgressBar(id="progress", show_eta=False)
            yield Static("", id="result")
            with VerticalScroll(id="report-lines"):
                yield Static("", id="report-text")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Import", id="import", variant="primary")
                yield Button("Open the demo", id="demo")
                yield Button("Go to the pages", id="back", disabled=self.first_run)
        yield FitFooter(compact=True)

    def on_mount(self) -> None:
        self.query_one("#progress", ProgressBar).display = False
        self.query_one("#report-lines").display = False
        # The form from its top: what to import from, then (Tab) its path, then the namespace.
        self.query_one("#source", Select).focus()
        self.query_one("#demo", Button).display = not getattr(self.app, "demo_mode", False)
        if not self.first_run:  # F5: the store may have been emptied since it opened
            self._check_empty()

    @work(thread=True, exclusive=True, exit_on_error=False, group="welcome-empty")
    def _check_empty(self) -> None:
        from .. import demo

        self.post_message(StoreEmptiness(demo.is_empty(self.app.opened_store)))

    @on(StoreEmptiness)
    def _emptiness(self, message: StoreEmptiness) -> None:
        message.stop()
        title, intro = self._intro(message.empty)
        self.query_one("#welcome-title", Static).update(title)
        self.query_one("#welcome-intro", Static).update(intro)

    def _say(self, text: str) -> None:
        """Why nothing was imported, in the result line (a toast would cover the buttons at 80x24)."""
        self.query_one("#result", Static).update(Content.styled(f"⚠ {text}", "$warning"))
        self.call_after_refresh(self.query_one("#welcome").scroll_end, animate=False)

    @after_typing
    def action_run_import(self) -> None:
        path = self.query_one("#path", Field).value.strip()
        source = self.query_one("#source", Select).value
        namespace = self.query_one("#namespace", Field).value.strip() or None
        if not path and source not in AGENTS:
            self._say("Give the path of the file or folder to import.")
            return
        if namespace and source in AGENTS:
            self._say("Agent sessions go into their project's scope; leave the namespace empty.")
            return
        self.query_one("#report-lines").display = False
        bar = self.query_one("#progress", ProgressBar)
        bar.display = True
        bar.update(total=None, progress=0)
        self.query_one("#import", Button).disabled = True
        self.query_one("#result", Static).update("Importing…")
        self._import(str(source), path, namespace)

    @on(LookAlikeNamespace)
    def _look_alike(self, message: LookAlikeNamespace) -> None:
        """The namespace typed reads like an existing scope's: the owner confirms it, or nothing is imported."""
        message.stop()

        def answer(yes: bool | None) -> None:
            if yes:
                self._import(message.source, message.path, message.name, confirmed=True)
            else:
                self.post_message(ImportFailed(f"{message.shown} reads like the existing scope {message.existing}; "
                                               "nothing was imported" + (": choose another namespace."
                                                                        if message.source != "export" else ".")))

        self.app.push_screen(ConfirmScreen(
            "Create a look-alike scope?",
            f"The namespace {message.shown} reads like the existing scope {message.existing}{message.odd}: in lists "
            "the two look the same. Create it and import into it?", confirm_label="Create and import", danger=True),
            answer)

    @work(thread=True, exclusive=True, exit_on_error=False, group="import")
    def _import(self, source: str, path: str, namespace: str | None, confirmed: bool = False) -> None:
        from store.names import LookAlike, codepoint, shown

        def progress(done: int, total: int | None = None, *what: object) -> None:
            self.post_message(Progress("import", done, total))

        store = self.app.opened_store
        try:
            if confirmed and namespace and source != "export":  # the owner said yes to a look-alike name
                store.create_scope(namespace, confirm_lookalike=True)
            import_id: str | None = None  # an importer's kept report (an export keeps none)
            report: ImportExportResult | ImportSummary
            if source == "export":
                report = store.import_export(path, progress=progress, confirm_lookalike=confirmed)
            elif source in AGENTS:
                summary: ImportSummary = IMPORTERS[source].run(store, path or None, progress=progress).to_dict()
                report, import_id = summary, summary.get("import_id")
            else:
                if source not in IMPORTERS:
                    raise RuntimeError(f"This pcp has no {source} importer.")
                summary = IMPORTERS[source].run(store, path, namespace=namespace, progress=progress).to_dict()
                report, import_id = summary, summary.get("import_id")
        except LookAlike as error:
            name = namespace or error.namespace  # typed in the form, or a scope of the export file
            if name and error.existing:
                odd = sorted({codepoint(ch) for ch in name if not ch.isascii()})
                self.post_message(LookAlikeNamespace(source, path, name, shown(name), shown(error.existing),
                                                     f" ({', '.join(odd)})" if odd else ""))
            else:
                self.post_message(ImportFailed(failure(error)))
            return
        except Exception as error:  # said on the screen, in the result (a toast would cover the buttons)
            self.post_message(ImportFailed(failure(error)))
            return
        except BaseException as error:
            self.post_message(ImportFailed(failure(error)))
            raise
        self.post_message(Imported(report))
        if import_id:
            self.post_message(ImportReportLoaded(store.import_report(import_id)))

    def on_progress(self, message: Progress) -> None:
        self.query_one("#progress", ProgressBar).update(total=message.total, progress=message.done)

    @on(ImportFailed)
    def _import_failed(self, message: ImportFailed) -> None:
        message.stop()
        self.query_one("#import", Button).disabled = False
        self.query_one("#progress", ProgressBar).display = False  # nothing runs any more
        self.query_one("#result", Static).update(Content.assemble(("The import failed: ", "bold"),
                                                                  (message.error, "$error")))
        # The message may take a few rows: on a short screen, keep the buttons in view below it.
        self.call_after_refresh(self.query_one("#welcome").scroll_end, animate=False)

    @on(Imported)
    def _imported(self, message: Imported) -> None:
        message.stop()
        self.query_one("#import", Button).disabled = False
        self.imported = True
        self.app.announce_change()
        self.query_one("#result", Static).update(Content(report_text(message.report)))
        bar = self.query_one("#progress", ProgressBar)
        bar.update(total=bar.total or 1, progress=bar.total or 1)  # done: a full bar, whatever the last report said
        back = self.query_one("#back", Button)
        back.disabled = False
        back.focus()

    @on(ImportReportLoaded)
    def _report_loaded(self, message: ImportReportLoaded) -> None:
        message.stop()
        self.query_one("#report-text", Static).update(Content(report_lines(message.report)))
        self.query_one("#report-lines").display = True
        # The report pushed the buttons down: on a short screen, keep the way on (focused) in view.
        self.call_after_refresh(self.query_one("#welcome").scroll_end, animate=False)

    def on_select_changed(self, event: Select.Changed) -> None:
        """The hints follow the importer chosen (a hint says "e.g.": it never reads as a value typed)."""
        if event.select.id == "source" and isinstance(event.value, str):
            self.query_one("#path", Field).placeholder = PATH_HINTS.get(event.value, "")
            self.query_one("#namespace", Field).placeholder = namespace_hint(event.value)

    def action_back(self) -> None:
        if not (self.imported or not self.first_run):
            return
        if self.first_run:
            self.app.show_pages()
            return
        self.app.pop_screen()
        if self.imported:  # the imported pages, not the search or scope that was on before
            self.app.show_everything()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "import":
            self.action_run_import()
        elif event.button.id == "demo":
            self.app.action_demo()
        elif event.button.id == "back":
            self.action_back()
