"""The welcome screen of an empty store: import history (with progress), or open the demo."""

from __future__ import annotations

from textual import on, work
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Button, Label, ProgressBar, Select, Static

from .. import commands
from ..messages import ImportFailed, Imported, Progress, StoreWorkers
from ..widgets.fields import Field
from ..widgets.footer import FitFooter

SOURCES = [
    ("ChatGPT export (.zip or conversations.json)", "chatgpt"),
    ("Claude export (.zip or conversations.json)", "claude"),
    ("A folder of Markdown notes", "markdown"),
    ("Events, one JSON object per line (.jsonl)", "events"),
    ("A pcp export (.jsonl)", "export"),
]


def report_text(report: dict) -> str:
    keys = ("conversations", "messages", "notes", "events", "created", "unchanged", "revised", "relations")
    counts = ", ".join(f"{report[k]} {k}" for k in keys if report.get(k))
    skipped = report.get("skipped") or []
    more = f"; skipped {len(skipped)}: " + "; ".join(f"{s['item']} ({s['reason']})" for s in skipped[:3]) if skipped else ""
    kept = f"\nThe full report (per file and conversation): pcp import-report {report['import_id']}" \
        if report.get("import_id") else ""
    return f"Imported: {counts or 'nothing new'}{more}.{kept}"


class WelcomeScreen(StoreWorkers, Screen):
    """First run (or F5): bring history in, or look at the demo first."""

    COMMAND_SCOPE = "welcome"
    BINDINGS = commands.bindings("welcome")

    def __init__(self, first_run: bool = True) -> None:
        super().__init__()
        self.first_run = first_run
        self.imported = False

    def compose(self) -> ComposeResult:
        path = getattr(self.app.store, "path", "")
        intro = ("This store is empty" if self.first_run else "Import into this store") + f": {path}\n" + (
            "Bring your chat history and notes in, or look around the demo store first (your store is left alone).")
        with Vertical(id="welcome"):
            yield Static(Content.styled("Welcome to pcp", "bold"), classes="dialog-title")
            yield Static(Content(intro), classes="dialog-body")
            yield Label("Import from")
            yield Select(SOURCES, value="chatgpt", allow_blank=False, id="source")
            yield Label("Path")
            yield Field(placeholder="~/Downloads/chatgpt-export.zip", id="path")
            yield Label("Namespace (optional: put everything into this one scope)")
            yield Field(placeholder="e.g. import:chatgpt", id="namespace")
            yield ProgressBar(id="progress", show_eta=False)
            yield Static("", id="result")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Import", id="import", variant="primary")
                yield Button("Open the demo", id="demo")
                yield Button("Go to the pages", id="back", disabled=self.first_run)
        yield FitFooter(compact=True)

    def on_mount(self) -> None:
        self.query_one("#progress", ProgressBar).display = False
        self.query_one("#path", Field).focus()

    def action_run_import(self) -> None:
        path = self.query_one("#path", Field).value.strip()
        if not path:
            self.notify("Give the path of the file or folder to import.", severity="warning")
            return
        source = self.query_one("#source", Select).value
        namespace = self.query_one("#namespace", Field).value.strip() or None
        bar = self.query_one("#progress", ProgressBar)
        bar.display = True
        bar.update(total=None, progress=0)
        self.query_one("#import", Button).disabled = True
        self.query_one("#result", Static).update("Importing…")
        self._import(str(source), path, namespace)

    @work(thread=True, exclusive=True, exit_on_error=False, group="import")
    def _import(self, source: str, path: str, namespace: str | None) -> None:
        from store import adapters

        def progress(done: int, total: int | None = None, *what: object) -> None:
            self.post_message(Progress("import", done, total))

        store = self.app.store
        try:
            if source == "export":
                report = store.import_export(path, progress=progress)
            else:
                importer = getattr(adapters, f"import_{source}", None)
                if importer is None:
                    raise RuntimeError(f"This pcp has no {source} importer.")
                report = importer(store, path, namespace=namespace, progress=progress).to_dict()
        except BaseException:
            self.post_message(ImportFailed())
            raise  # reported by the Worker.StateChanged handler
        self.post_message(Imported(report))

    def on_progress(self, message: Progress) -> None:
        self.query_one("#progress", ProgressBar).update(total=message.total, progress=message.done)

    @on(ImportFailed)
    def _import_failed(self, message: ImportFailed) -> None:
        message.stop()
        self.query_one("#import", Button).disabled = False
        self.query_one("#result", Static).update("The import did not finish; see the message.")

    @on(Imported)
    def _imported(self, message: Imported) -> None:
        message.stop()
        self.query_one("#import", Button).disabled = False
        self.imported = True
        self.app.announce_change()
        self.query_one("#result", Static).update(Content(report_text(message.report)))
        back = self.query_one("#back", Button)
        back.disabled = False
        back.focus()

    def action_back(self) -> None:
        if not (self.imported or not self.first_run):
            return
        from .main import MainScreen

        if self.first_run:
            self.app.switch_screen(MainScreen())
        else:
            self.app.pop_screen()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "import":
            self.action_run_import()
        elif event.button.id == "demo":
            self.app.action_demo()
        elif event.button.id == "back":
            self.action_back()
