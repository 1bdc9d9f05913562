"""The pcp Textual app: browse, inspect, curate, exercise delete/export rights, and hand off context.

Long because: the app owns what every screen shares (the store, its watcher, the basket and its check, the
last chats, themes, key display, error reporting); each is a few lines, and splitting them would spread one state.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable

from textual import events, on, work
from textual.app import App, ComposeResult, SystemCommand
from textual.markup import escape
from textual.dom import DOMNode
from textual.notifications import SeverityLevel
from textual.screen import ModalScreen, Screen
from textual.signal import Signal
from textual.timer import Timer
from textual.content import Content
from textual.widget import Widget
from textual.widgets import Static
from textual.worker import Worker, get_current_worker

from . import commands, config, reading, theming
from .collector import TICK, IdleCollector
from .palette import PcpCommands
from .messages import BasketChanged, BasketChecked, Progress, StoreActivity, StoreChanged, StoreReady, StoreWorkers
from .text import printable

if TYPE_CHECKING:
    from store import Store
    from .reads import Reads

WATCH_INTERVAL = 1.0  # seconds between looks at the store's newest audit event (changes by other processes)
# Operations that write nothing but their audit event: when only these appear, only the audit log changed.
READ_OPERATIONS = frozenset({
    "read_pages", "list_scopes", "list_pages", "count_pages", "describe_capabilities", "doctor", "audit_log", "handoffs",
    "search_pages", "export", "plan_delete", "plan_delete_scope", "list_receipts", "list_recommendations", "bundle",
    "verify", "plan_bulk_delete", "bulk_deletion", "stopped_bulk_deletions"})
DIALOG_NOTICE_SECONDS = 6.0  # at least this long a message stays in a dialog


class DialogNotice(Static):
    """One message in a dialog (see dialog_notice)."""

    timer: Timer | None = None
    gone = False  # being removed (a key was pressed): a new message takes a new line


def notice_anchor(screen: Screen[Any]) -> Widget | None:
    """What a message on this screen goes above, if it is drawn like a dialog: a dialog's keys line, or what a
    full screen drawn like one names in NOTICE_ABOVE (the import screen: its buttons). None: a toast."""
    selector = getattr(screen, "NOTICE_ABOVE", ".dialog-keys" if isinstance(screen, ModalScreen) else None)
    found = screen.query(selector) if selector else None
    return found.first() if found else None


def dialog_notice(keys: Widget, message: str, title: str, severity: SeverityLevel, seconds: float) -> None:
    """A message for the open dialog, in a line of its own just above its keys, for `seconds` (a newer one
    replaces it): what a toast would say, without covering the dialog."""
    parent = keys.parent
    assert isinstance(parent, Widget)
    mark = {"warning": "⚠ ", "error": "✗ "}.get(severity, "")
    text = Content.assemble((f"{mark}{title}: " if title else mark, "bold"), message)
    line = next((n for n in parent.query_children(DialogNotice) if not n.gone), None)
    if line is None:
        line = DialogNotice(text)
        parent.mount(line, before=keys)
    else:
        line.update(text)
        if line.timer is not None:
            line.timer.stop()
    line.set_classes(f"dialog-notice -{severity}")
    line.timer = line.set_timer(seconds, line.remove)
    line.call_after_refresh(line.scroll_visible, animate=False)  # (a dialog scrolled up at 80x24: in sight)


class PcpApp(StoreWorkers, App[int]):
    """One store, seen by its owner."""

    TITLE = "pcp"
    CSS_PATH = "app.tcss"
    BINDINGS = commands.bindings("app")
    ENABLE_COMMAND_PALETTE = True
    COMMANDS = {PcpCommands}  # finds a command by what it does too, not only by its title (palette.py)
    # Screens get these classes by size (app.tcss): below 110 columns the scope tree folds away
    # (ctrl+b shows it), below 34 rows dialogs take the whole height and scroll what they explain.
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (110, "-wide")]
    VERTICAL_BREAKPOINTS = [(0, "-short"), (34, "-tall")]

    def __init__(self, db: str | Path | None = None, *, demo: bool = False, config_folder: Path | None = None,
                 theme: str | None = None, cursor_blink: bool = True, store: Store | None = None,
                 use_pyperclip: bool = True, watch_interval: float = WATCH_INTERVAL) -> None:
        super().__init__()
        self.watch_interval = watch_interval  # 0 turns the watcher off
        self.store_changes: Signal[StoreChanged] = Signal(self, "store-changed")
        self.db_path = Path(db).expanduser() if db is not None else None
        self.demo_mode = demo
        self.config_folder = config_folder or config.config_dir()
        self.forced_theme = theme  # tests and snapshots pin a theme; it is not saved
        self.blink_cursor = cursor_blink
        self.use_pyperclip = use_pyperclip  # tests keep the desktop clipboard out of it
        self.store: Store | None = store  # None until open_store has opened it
        self.last_chats: dict[str, str] = {}  # store path -> the chat it last handed context to (this run)
        self.basket: list[dict[str, Any]] = []  # pages chosen for a handoff: {page_id, title, namespace}
        self.user_keymap: dict[str, str] = {}
        self._theme_ready = False
        self.theme_names: list[str] = []
        self.index_progress: tuple[int, int | None] | None = None  # the last index upgrade report shown
        self.reads: Reads | None = None  # reads.Reads: the heavy reads in a child process (reads.py), once the store is open
        self.reads_min_bytes: int | None = None  # tests and the bench choose when a child is used
        self.collector = IdleCollector()  # full garbage collections in the user's pauses (collector.py)
        self._collector_timer: Timer | None = None

    # --- theme variables, themes, keymap ---

    def get_theme_variable_defaults(self) -> dict[str, str]:
        return dict(theming.VARIABLE_DEFAULTS)

    def compose(self) -> ComposeResult:
        yield Static("Opening the store…", id="opening")

    def on_mount(self) -> None:
        problems: list[str] = []
        for loaded in (theming.shipped_themes(), theming.user_themes(self.config_folder)):
            for theme in loaded.themes:
                self.register_theme(theme)
                self.theme_names.append(theme.name)
            problems += loaded.problems
        settings = config.load_settings(self.config_folder)
        problems += settings.problems
        wanted = self.forced_theme or settings.theme or theming.DEFAULT_THEME
        if wanted not in self.available_themes:
            problems.append(f"The theme {wanted!r} is not installed; using {theming.DEFAULT_THEME}.")
            wanted = theming.DEFAULT_THEME if theming.DEFAULT_THEME in self.available_themes else "textual-dark"
        self.theme = wanted
        self._theme_ready = True
        keymap, keymap_problems = config.load_keymap(self.config_folder)
        problems += keymap_problems
        if keymap:
            self.user_keymap = keymap
            self.set_keymap(keymap)
        for problem in problems:
            self.notify(problem, title="Settings", severity="warning", timeout=8)
        self.open_store()
        self._freeze_heap()  # the themes and styles; again once the main screen is up

    def watch_theme(self, theme: str) -> None:
        # The demo is a visit: a theme tried there is not remembered (the user's config is never written).
        if self._theme_ready and self.forced_theme is None and not self.demo_mode:
            problem = config.save_theme(self.config_folder, theme)
            if problem:
                self.notify(problem, severity="warning")

    def notify(self, message: str, *, title: str = "", severity: SeverityLevel = "information",
               timeout: float | None = None, markup: bool = True) -> None:
        """Every notification as plain text: messages carry titles, relation types and paths a writer chose (a
        title holding `[@click=app.quit]` would be a live link in the toast, a stored escape sequence would
        reach the terminal). `markup` is ignored (Widget.notify passes it on; no message here uses it)."""
        message, title = printable(str(message)), printable(str(title))
        keys = notice_anchor(self.screen)
        if keys is not None:  # in a dialog: a toast would cover its buttons and keys (at 80x24 it fills the screen)
            dialog_notice(keys, message, title, severity,
                          max(DIALOG_NOTICE_SECONDS, timeout or self.NOTIFICATION_TIMEOUT))
            return
        super().notify(message, title=title, severity=severity, timeout=timeout, markup=False)

    def clear_notifications(self) -> None:
        """The toasts and a message in the open dialog."""
        super().clear_notifications()
        for notice in self.screen.query(DialogNotice):
            notice.remove()

    def key_display(self, command_id: str) -> str:
        """The keys a command answers to now (the user's keymap applied), for help and labels."""
        from textual.binding import Binding

        cmd = commands.by_id(command_id)
        keys = self.user_keymap.get(command_id, cmd.keys)
        return ", ".join(self.get_key_display(Binding(k, cmd.action, key_display=cmd.key_display
                                                      if k == cmd.keys else None)) for k in keys.split(","))

    # --- the store ---

    @work(thread=True, exclusive=True, exit_on_error=False, group="open")
    def open_store(self) -> None:
        """Open (and for the demo, fill) the store off the event loop."""
        from store import Store

        from . import demo

        store = self.store
        if store is None:
            from store import paths

            path = paths.chosen_path(self.db_path)
            new = paths.require_store(path, create=True)  # a file that is no pcp store is refused untouched
            store = Store.open(path)
            if new and not self.demo_mode:
                self.call_from_thread(self.notify, f"Creating a new store at {path} (there was none).",
                                      title="New store", timeout=12)
        if store.index_upgrade_status() is not None:  # a store written by an older pcp: re-index it first
            def report(done: int, total: int | None, what: str = "revisions", /) -> None:
                self.post_message(Progress("index", done, total or 0))

            store.upgrade_index(progress=report)
        empty = demo.is_empty(store)
        if empty and self.demo_mode:
            demo.fill(store)
            empty = False
        self.post_message(StoreReady(store, empty, self.demo_mode))

    @on(Worker.StateChanged)
    def _show_open_failure(self, event: Worker.StateChanged) -> None:
        # StoreWorkers.on_worker_state_changed reports the error (Textual calls it along the MRO).
        if event.worker.group == "open" and event.worker.error is not None and not self.screen_stack[1:]:
            self.query_one("#opening", Static).update(
                f"The store could not be opened: {getattr(event.worker.error, 'message', event.worker.error)}\n"
                f"Quit with {self.key_display('quit')} and choose another with --db.")

    def on_progress(self, message: Progress) -> None:
        if message.task == "index" and not self.screen_stack[1:]:
            self.index_progress = (message.done, message.total)
            self.query_one("#opening", Static).update(
                f"Upgrading the search index of this store: {message.done:,} of {message.total or 0:,} revisions…")

    def on_store_ready(self, message: StoreReady) -> None:
        self.store = message.store
        if self.watch_interval > 0:
            self.watch_store(message.store)
        from .screens.main import MainScreen
        from .screens.welcome import WelcomeScreen

        self.sub_title = str(self.store.path) + ("  (demo)" if self.demo_mode else "")
        screen: Screen[Any] = WelcomeScreen() if message.empty else MainScreen()
        if len(self.screen_stack) > 1:
            self.switch_screen(screen)
        else:
            self.push_screen(screen)
        self.call_after_refresh(self._freeze_heap)

    def _freeze_heap(self) -> None:
        """What the app has built by now (widgets, styles, modules) lives as long as it: out of the collector's
        sight, and full collections wait for a pause in the input (collector.py)."""
        self.collector.start()
        if self._collector_timer is None:
            self._collector_timer = self.set_interval(TICK, self.collector.tick)

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, (events.Key, events.MouseDown, events.MouseScrollDown, events.MouseScrollUp)):
            self.collector.input()
        if isinstance(event, (events.Key, events.MouseDown)) and notice_anchor(self.screen) is not None:
            # A dialog's message is about what was done last: the next key or click starts afresh (a
            # pairing that worked must not stand under "not paired" until a timer ends).
            for notice in self.screen.query(DialogNotice):
                notice.gone = True
                notice.remove()
        await super().on_event(event)

    def start_reads(self) -> None:
        """The child process for heavy reads (reads.py), once per store; the main screen asks for it after its
        first window is on screen (the child's start would compete with first paint for the two cores)."""
        store = self.store
        if store is not None and (self.reads is None or self.reads.store is not store):
            self._start_reads(store)

    @work(thread=True, exclusive=True, exit_on_error=False, group="reads")
    def _start_reads(self, store: Store) -> None:
        """The child process for heavy reads (reads.py); until it is ready they run in worker threads."""
        from .reads import MIN_BYTES, Reads

        if self.reads is not None and self.reads.store is store:
            return
        reads = Reads(store, min_bytes=MIN_BYTES if self.reads_min_bytes is None else self.reads_min_bytes)
        old, self.reads = self.reads, reads
        if old is not None:
            old.close()
        reads.start()

    @property
    def opened_store(self) -> Store:
        """The open store, for code that runs only once it is open (screens, their workers)."""
        if self.store is None:
            raise RuntimeError("no store is open")
        return self.store

    def on_unmount(self) -> None:
        self.collector.stop()
        if self.reads is not None:
            self.reads.close()

    def switch_store(self, path: Path, *, demo: bool) -> None:
        """Open another store file (the demo from the welcome screen)."""
        if self.reads is not None:
            self.reads.close()
            self.reads = None
        old, self.store = self.store, None
        if old is not None:
            old.close()
        self.db_path, self.demo_mode = path, demo
        self.basket.clear()
        self.open_store()

    # --- store changes: one message for the app's own writes and for other processes' ---

    def subscribe_store_changes(self, node: DOMNode) -> None:
        """Deliver every StoreChanged to `node` (a screen or widget, once mounted) as a message of its own."""
        self.store_changes.subscribe(node, lambda message: node.post_message(message.copy()), immediate=True)

    def announce_change(self, page_id: str | None = None, removed: bool = False, *, external: bool = False,
                        audit_only: bool = False) -> None:
        """Tell every subscriber that the store changed (after a write here, or seen by the watcher)."""
        self.store_changes.publish(StoreChanged(page_id, removed, external=external, audit_only=audit_only))
        if not audit_only and self.basket:
            self._check_basket([b["page_id"] for b in self.basket])

    @work(thread=True, exclusive=True, exit_on_error=False, group="watch")
    def watch_store(self, store: Store) -> None:
        """About once a second, look at the newest audit events: every write by any process records one."""
        import time

        worker = get_current_worker()
        last = None
        while not worker.is_cancelled and store is self.store:
            try:
                events = store.audit_log(limit=50)["events"]
            except Exception:  # noqa: BLE001 - busy, or the store was closed (switch_store): look again later
                events = None
            if events is not None:
                ids = [e["event_id"] for e in events]
                if last is not None and ids[:1] != [last]:
                    fresh = events[:ids.index(last)] if last in ids else events
                    content = last not in ids or any(
                        e["decision"] == "allowed" and e["operation"] not in READ_OPERATIONS for e in fresh)
                    self.post_message(StoreActivity(content))
                last = ids[0] if ids else ""
            deadline = time.monotonic() + self.watch_interval
            while time.monotonic() < deadline and not worker.is_cancelled:
                time.sleep(min(0.05, self.watch_interval))

    @on(StoreActivity)
    def _store_activity(self, message: StoreActivity) -> None:
        self.announce_change(external=True, audit_only=not message.content)

    @work(thread=True, exclusive=True, exit_on_error=False, group="basket")
    def _check_basket(self, page_ids: list[str]) -> None:
        from store import NotFound

        found: dict[str, tuple[str, str]] = {}
        for batch in reading.chunks(page_ids):
            try:
                results = self.opened_store.read_pages(batch, projections=("manifest",))["results"]
            except NotFound:  # every page of the batch was erased
                continue
            for res in results:
                # A tombstoned page is withdrawn from every handoff bundle (the tombstone dialog says so): it
                # leaves the basket as an erased one does.
                if "revision" in res and res["revision"].get("lifecycle_status") != "tombstoned":
                    env = res["revision"]
                    found[env["page_id"]] = (reading.title_of(env), env["namespace"])
        self.post_message(BasketChecked(found))

    @on(BasketChecked)
    def _basket_checked(self, message: BasketChecked) -> None:
        found, changed = message.found, False
        kept, left = [], []
        for item in self.basket:
            if item["page_id"] not in found:
                changed = True
                left.append(item["title"])
                continue
            title, namespace = found[item["page_id"]]
            if (item["title"], item["namespace"]) != (title, namespace):
                item.update(title=title, namespace=namespace)
                changed = True
            kept.append(item)
        if changed:
            self.basket[:] = kept
            for screen in self.screen_stack:
                screen.post_message(BasketChanged())
        if left:
            self.notify(f"Left the basket (erased or tombstoned): {', '.join(left[:3])}"
                        + (f" and {len(left) - 3:,} more" if len(left) > 3 else "") + ".", title="Basket")

    def forget_pages(self, page_ids: Iterable[str]) -> None:
        """Erased pages leave the basket (nothing erased stays on screen)."""
        gone = set(page_ids)
        self.basket[:] = [b for b in self.basket if b["page_id"] not in gone]

    def report_error(self, error: BaseException) -> None:
        """One place where failures of store calls become a sentence on screen."""
        from store import PcpError

        if isinstance(error, PcpError):
            self.notify(error.message, title=error.code.replace("_", " ").capitalize(), severity="error", timeout=8)
        else:
            self.notify(f"{type(error).__name__}: {error}", title="Unexpected error", severity="error", timeout=8)

    # --- app-wide actions ---

    def action_help(self) -> None:
        from textual.screen import ModalScreen

        from .screens.help import HelpScreen

        if isinstance(self.screen, HelpScreen):  # F1 again closes the help
            self.screen.dismiss(None)
            return
        from textual.command import CommandPalette

        title = "Command palette" if isinstance(self.screen, CommandPalette) else getattr(self.screen, "title_text",
                                                                                           None)
        self.push_screen(HelpScreen(getattr(self.screen, "COMMAND_SCOPE", None), dialog=isinstance(self.screen, ModalScreen),
                                    dialog_title=printable(title) if isinstance(title, str) else None))

    def action_rights(self) -> None:
        from .screens.rights import RightsScreen

        if self.store is not None and not isinstance(self.screen, RightsScreen):
            self.push_screen(RightsScreen())

    def action_handoff(self) -> None:
        from .screens.handoff import HandoffScreen

        if self.store is not None and not isinstance(self.screen, HandoffScreen):
            self.push_screen(HandoffScreen())

    def action_recommendations(self) -> None:
        from .screens.recommendations import RecommendationsScreen

        if self.store is not None:
            self.push_screen(RecommendationsScreen())

    def action_import(self) -> None:
        from .screens.welcome import WelcomeScreen

        if self.store is not None and not isinstance(self.screen, WelcomeScreen):
            self.push_screen(WelcomeScreen(first_run=False))

    def show_pages(self) -> None:
        """Replace the current screen (an empty store's welcome) with the pages."""
        from .screens.main import MainScreen

        self.switch_screen(MainScreen())

    def show_everything(self) -> None:
        """The pages screen, when it is the one shown, lists every scope with no search (after an import)."""
        from .screens.main import MainScreen

        if isinstance(self.screen, MainScreen):
            self.screen.show_everything()

    def close_sync(self, dialog: Screen[Any], took_pages: bool) -> None:
        """Close the sync dialog; on an empty store's welcome screen, a sync that brought pages in opens the pages
        instead (the app decides where to go, so the dialog needs neither screen)."""
        from .screens.welcome import WelcomeScreen

        below = self.screen_stack[-2] if len(self.screen_stack) > 1 else None
        dialog.dismiss(None)
        if took_pages and isinstance(below, WelcomeScreen) and below.first_run:
            self.show_pages()

    def action_sync(self) -> None:
        from .screens.sync import SyncScreen

        if self.demo_mode:
            self.notify("The demo store does not sync with your stores; open your own store to sync.", title="Sync",
                        severity="warning")
            return
        if self.store is not None and not isinstance(self.screen, SyncScreen):
            self.push_screen(SyncScreen())

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "demo" and self.demo_mode:
            return False  # (in the demo: no "^d Demo" in the footer; the palette still finds it and says why)
        return True

    def action_demo(self) -> None:
        from store import paths

        if self.demo_mode:
            self.notify("This is the demo store already; `pcp` opens your own.", title="Demo")
            return
        self.notify("Opening the demo store; your own store is not touched.", title="Demo")
        self.switch_store(paths.demo_path(), demo=True)

    # --- the command palette: every command of this screen and the app, plus themes ---

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        scope = getattr(screen, "COMMAND_SCOPE", None)
        for cmd in commands.for_screen(scope):
            if cmd.id == "command_palette":
                continue
            target = self if cmd.where == "app" else screen
            yield SystemCommand(cmd.title, escape(f"{cmd.help} · {self.key_display(cmd.id)}"),
                                partial(self._run_command, target, cmd.action))
        if hasattr(screen, "set_search_mode"):
            from .screens.main import MODE_HELP

            for mode, what in MODE_HELP.items():
                yield SystemCommand(f"Search mode: {mode}", f"Search {what}", partial(screen.set_search_mode, mode))
        for name in sorted(set(self.theme_names)):
            remembered = "for this visit: the demo remembers nothing" if self.demo_mode else "remembered"
            yield SystemCommand(f"Theme: {name}", f"Use this theme ({remembered})", partial(setattr, self, "theme", name))

    async def _run_command(self, target: Any, action: str) -> None:
        await target.run_action(action)
