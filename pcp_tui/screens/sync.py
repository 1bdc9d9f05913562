"""The sync dialog: this store among the owner's stores (last sync, peers), pages with conflicts, sync now.

A sync runs through the folder remembered in config.toml (`sync_folder`, asked the first time), in a worker
with a progress bar; afterwards every view reloads (StoreChanged). The demo store never syncs.

Long because: the sync dialog's states (first folder, pairing, unpairing, conflicts, running) are one dialog.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual import on, work
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.message import Message
from textual.screen import ModalScreen
from textual.widget import AwaitMount
from textual.widgets import DataTable, ProgressBar, Static
from textual.worker import get_current_worker

from .. import commands, config, reading
from ..messages import OpenPage, PairOffered, Progress, StoreChanged, StoreWorkers, Synced, SyncFailed, SyncStateLoaded
from .confirm import ConfirmScreen, FormScreen, key_hint, key_of
from ..text import counted, cut_cells, when
from .typed import after_typing
from rich.cells import cell_len

if TYPE_CHECKING:
    from store import Store


def load_state(store: Store) -> tuple[dict[str, Any], dict[str, tuple[str, str]]]:
    """sync_status, and the title and scope of each page in conflict (runs in a worker)."""
    from store import NotFound

    status: dict[str, Any] = dict(store.sync_status())
    pages: dict[str, tuple[str, str]] = {}
    for batch in reading.chunks(list(status["conflicts"])):
        try:
            results = store.read_pages(batch, projections=("manifest",))["results"]
        except NotFound:  # every page of the batch was erased meanwhile
            continue
        for res in results:
            if "revision" in res:
                env = res["revision"]
                pages[env["page_id"]] = (res.get("title") or reading.title_of(env), env["namespace"])
    status["conflicts"] = [p for p in status["conflicts"] if p in pages]
    return status, pages


def summary(result: dict[str, Any]) -> str:
    """What one folder sync did, in a sentence or two."""
    taken = sum(r["added"].get("page", 0) for r in result["read"])
    revisions = sum(r["added"].get("revision", 0) for r in result["read"])
    stores = sum(1 for r in result["read"] if r["files"])
    parts = [f"Took in {counted(taken, 'new page')} and {counted(revisions, 'revision')} "
             f"from {counted(stores, 'store')}"]
    parts.append("wrote this store's changes" if result["wrote"] else "nothing new of this store's to write")
    if result["erased_pages"]:
        parts.append(f"{counted(len(result['erased_pages']), 'page')} erased (deleted on another store)")
    if result["deleted_while_revised"]:
        parts.append(f"{counted(len(result['deleted_while_revised']), 'page')} you revised here was deleted "
                     "on another store: the delete wins")
    if result["conflicts"]:
        parts.append(f"{counted(result['conflicts'], 'page')} now in conflict (both revisions kept)")
    if result["refused"]:
        parts.append(f"{counted(len(result['refused']), 'file')} refused: {result['refused'][0]['reason']}")
    return "; ".join(parts) + "."


def folder_problem(text: str) -> str | None:
    """What is wrong with a path typed as the sync folder (said in the form, which stays open), or None.

    A folder that does not exist yet is no problem here when its parent does: the dialog asks before creating it."""
    path = Path(text).expanduser()
    if path.is_dir():
        return None
    if path.exists():
        return f"{path} is a file, not a folder: type the folder your stores share."
    parent = path.parent
    if parent.exists() and not parent.is_dir():
        return f"No folder {path}: {parent} is a file, not a folder. Check the path."
    if not parent.exists():
        return f"No folder {path}, and {parent} does not exist either: check the path (is the drive plugged in?)"
    return None


def pairing_state(status: dict[str, Any], *, offer_taken: bool, joined: bool) -> str:
    """How this store stands among the owner's stores, after its id on the state line.

    The store says only whether it holds a folder key ("paired"), which an offer gives it as well as a join; with
    no peer yet, the dialog tells them apart by what it did itself, and otherwise takes it for an offer."""
    if not status["paired"]:
        return "not paired yet"
    peers = status["peers"]
    active = [p for p in peers if not p["revoked"]]
    if active:
        return f"paired with {counted(len(active), 'store')}"
    if peers:
        return "paired, but the one store it knew is unpaired" if len(peers) == 1 else \
            f"paired, but the {len(peers)} stores it knew are unpaired"
    if joined:
        return "paired with a code; the other store has written no changes yet"
    if offer_taken:
        return "a store took the code; it is listed here once it has synced and this store has"
    return "offered a code, no store has joined yet"


@dataclass
class OfferTaken(Message):
    """The offer file of the code on screen is gone from the folder: a store joined with it (it works once)."""

    offer: str  # its path


@dataclass
class Joined(Message):
    """sync_join answered (the sync goes on in the same worker)."""

    result: dict[str, Any]


@dataclass
class JoinAsk(Message):
    """The typed code belongs to a store of another owner and this store holds history: ask before merging."""

    folder: str
    code: str
    plan: dict[str, Any]


def merge_text(plan: dict[str, Any]) -> str:
    """What a join merges, as the CLI's prompt says it: scopes and page counts, shared namespaces and labels."""
    lines = [f"This store holds history of its own; joining merges it with {plan['paired_with']}'s: one owner "
             "from then on. Scopes here:"]
    shared = set(plan["shared_namespaces"])
    lines += [f"  {s['namespace']}: {counted(s['pages'], 'page')}" +
              (" (also on the other store: one scope, the stricter visibility)" if s["namespace"] in shared else "")
              for s in plan["scopes"][:12]]
    if len(plan["scopes"]) > 12:
        lines.append(f"  and {len(plan['scopes']) - 12} more")
    lines += [f"Chat label {old!r} is used on both: they stay two chats, this store's becomes {new!r}."
              for old, new in plan["relabel"].items()]
    return "\n".join(lines)


@dataclass
class JoinRefused(Message):
    """sync_join refused the typed code: the prompt opens again with it, and says why."""

    folder: str
    code: str
    problem: str


class ConflictTable(DataTable[Any]):
    """The pages with conflicts; Enter on an empty table goes on to the dialog's Open (which says there is none)."""

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "select_cursor" and not self.row_count:
            return False
        return super().check_action(action, parameters)


class SyncScreen(StoreWorkers, ModalScreen[None]):
    """Sync state, the pages with conflicts (Enter opens one), sync now, pick the folder, pair.

    Text that names a key reads it from the bindings in use (a user keymap changes it)."""

    COMMAND_SCOPE = "sync"
    BINDINGS = commands.bindings("sync")
    DEFAULT_CSS = """
    SyncScreen #sync-state { height: auto; max-height: 8; margin-bottom: 1; }
    SyncScreen #sync-running { height: auto; margin-bottom: 1; }
    SyncScreen #sync-code { height: auto; margin-bottom: 1; }
    SyncScreen #sync-bar Bar { width: 1fr; }
    SyncScreen #sync-conflicts { height: 1fr; min-height: 3; }
    SyncScreen .dialog-keys { dock: bottom; }
    SyncScreen.-short #sync-state { max-height: 6; margin-bottom: 0; }
    SyncScreen.-short #sync-running, SyncScreen.-short #sync-code { margin-bottom: 0; }
    """

    def __init__(self) -> None:
        super().__init__()
        self.status: dict[str, Any] | None = None
        self.rows: list[tuple[str, str, str]] = []  # page id, title, namespace of each page in conflict
        self.running = False
        self.took_pages = False  # a sync brought pages in (an empty store's welcome screen gives way to the pages)
        self.offer: dict[str, Any] | None = None  # the pairing code on screen: code, offer (its file), folder, peers before it
        self.offer_taken = False  # a store joined with the last code shown (its offer file went)
        self.joined = False  # this dialog paired the store with a typed code
        self.paired_note = ""  # what the join said, for the notice of the sync that follows it

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog", classes="dialog full"):
            yield Static(Content.styled("Sync with your other stores", "bold"), classes="dialog-title")
            yield Static(Content(
                "Your stores exchange sealed change files through a folder they share (a USB stick, or a folder a "
                "sync tool already syncs); nothing in it is readable. Pair a second store once: offer a code "
                f"here ({self._key('sync.pair')}) and type it there ({self._key('sync.join')}, or "
                "`pcp sync DIR --join CODE`)."), classes="dialog-body")
            yield Static("Reading the sync state…", id="sync-state")
            yield Static("", id="sync-code")
            with Vertical(id="sync-running"):
                yield Static("", id="sync-phase")
                yield ProgressBar(id="sync-bar", show_eta=False)
            yield Static("", id="sync-conflicts-title")
            yield ConflictTable(id="sync-conflicts", cursor_type="row")
            yield Static(key_hint(self.app, [("sync.run", "Sync now"), ("sync.folder", "Folder"),
                                             ("sync.pair", "Offer pairing"), ("sync.join", "Type a code"),
                                             ("sync.open", "Open"), ("sync.back", "Close"), ("help", "Keys")]),
                         classes="dialog-keys")

    def _key(self, command_id: str) -> str:
        return key_of(self.app, command_id)

    def on_mount(self) -> None:
        self.app.subscribe_store_changes(self)
        self.query_one("#sync-running").display = False
        self.query_one("#sync-code").display = False
        self._columns_for = 0  # the table width its columns were laid out for
        self._load()

    def on_resize(self) -> None:
        self._fill_table()

    def _fill_table(self) -> None:
        """The conflict rows in columns that fit the table's width: the page id whole (it is what `pcp` takes),
        the scope cut where it and the titles do not both fit (it keeps a third at least), the title in the rest (at 80 columns the scope was cut and the
        id was off the right edge)."""
        table = self.query_one(DataTable)
        width = table.scrollable_content_region.width or table.size.width
        if width <= 0:
            return
        self._columns_for = width
        pad = 2 * table.cell_padding
        ident = max([len("page id"), *(len(pid) for pid, _, _ in self.rows)])
        left = max(16, width - table.styles.scrollbar_size_vertical - 3 * pad - ident)
        need_title = max([len("page with a conflict"), *(cell_len(t) for _, t, _ in self.rows)])
        need_scope = max([len("scope"), *(cell_len(ns) for _, _, ns in self.rows)])
        scope = min(need_scope, max(left // 3, left - need_title))  # a third at least, more if the titles are short
        title = max(8, left - scope)
        cursor = table.cursor_row
        table.clear(columns=True)
        table.add_column("page with a conflict", width=title)
        table.add_column("scope", width=scope)
        table.add_column("page id", width=ident)
        for pid, page_title, namespace in self.rows:
            table.add_row(cut_cells(page_title, title), cut_cells(namespace, scope), pid)
        if self.rows:
            table.move_cursor(row=min(cursor, len(self.rows) - 1))

    @property
    def folder(self) -> str | None:
        return config.load_settings(self.app.config_folder).sync_folder

    # --- the state ---

    @work(thread=True, exclusive=True, exit_on_error=False, group="sync-state")
    def _load(self) -> None:
        offer = self.offer  # (only read here)
        status, pages = load_state(self.app.opened_store)
        if get_current_worker().is_cancelled:
            return  # a newer load is on its way: this state may be older than what the screen shows
        if offer is not None and not os.path.exists(offer["offer"]):  # a join takes the offer file away
            self.post_message(OfferTaken(offer["offer"]))
        self.post_message(SyncStateLoaded(status, pages))

    @on(OfferTaken)
    def _offer_taken(self, message: OfferTaken) -> None:
        message.stop()
        if self.offer is not None and self.offer["offer"] == message.offer:
            self._clear_code(taken=True)

    def _clear_code(self, taken: bool = False) -> None:
        """The code on screen no longer pairs anything (used, or offered through another folder): it goes."""
        self.offer = None
        self.offer_taken = taken
        code = self.query_one("#sync-code", Static)
        code.update("")
        code.display = False

    @on(SyncStateLoaded)
    def _state_loaded(self, message: SyncStateLoaded) -> None:
        message.stop()
        self.status = status = message.status
        folder = self.folder
        if self.offer is not None:
            if folder != self.offer["folder"]:
                self._clear_code()
            elif {p["store_id"] for p in status["peers"]} - self.offer["peers"]:
                self._clear_code(taken=True)  # a store new since the offer: it joined with the code
        lines = [Content.assemble(("Folder: ", "bold"), folder or f"none yet ({self._key('sync.run')} asks for it)"),
                 Content.assemble(("This store: ", "bold"),
                                  status["store_id"] or "no id yet (given at its first sync or pairing)",
                                  " · ", pairing_state(status, offer_taken=self.offer_taken, joined=self.joined)),
                 Content.assemble(("Last sync: ", "bold"), when(status["last_sync"]))]
        peers = status["peers"]
        room = 3 if self.has_class("-short") else 5  # peer lines that fit (#sync-state's max-height less 3)
        shown = peers if len(peers) <= room else peers[:room - 1]
        for peer in shown:
            state = "unpaired" if peer["revoked"] else f"last taken in {when(peer['last_sync'])}"
            lines.append(Content.assemble("  ", (peer["store_id"], "dim"), f"  {state}"))
        if len(shown) < len(peers):
            lines.append(Content(f"  … and {counted(len(peers) - len(shown), 'other store')} "
                                 "(`pcp sync --status` lists them all)"))
        for a, b in status.get("disputes") or []:  # (first: the line the owner must act on)
            lines.insert(2, Content.assemble((f"{a} and {b} unpaired each other", "bold $error"),
                                             ": both are held until you confirm the lost one with "
                                             "`pcp sync DIR --unpair ITS_ID`"))
        self.query_one("#sync-state", Static).update(Content("\n").join(lines))
        self.rows = [(pid, *message.pages[pid]) for pid in status["conflicts"]]
        count = len(self.rows)
        more = "+" if count >= 1000 else ""
        self.query_one("#sync-conflicts-title", Static).update(
            Content.assemble((f"Pages with conflicts: {count:,}{more}", "bold"),
                             " (both revisions kept; Enter opens one, revising it keeps one head)" if count
                             else " (none)"))
        table = self.query_one(DataTable)
        self._fill_table()
        if not self.running:
            table.focus()

    @on(StoreChanged)
    def _store_changed(self, message: StoreChanged) -> None:
        message.stop()
        if not message.audit_only:
            self._load()

    # --- syncing ---

    @after_typing
    def action_run_sync(self) -> None:
        if self.running:
            self.notify("A sync is under way.", title="Sync")
            return
        if self.app.demo_mode:
            self.notify("The demo store does not sync with your stores.", title="Sync", severity="warning")
            return
        folder = self.folder
        if folder:
            self._start(folder)
        else:
            self.action_choose_folder(then_sync=True)

    @after_typing
    def action_choose_folder(self, then_sync: bool = False) -> None:
        if self.app.demo_mode:
            self.notify("The demo store does not sync with your stores.", title="Sync", severity="warning")
            return
        self._ask_folder(
            "The folder your stores share: a USB stick, or a folder Syncthing, Dropbox or the like already syncs. "
            "This store writes only its own sealed change files there. It is remembered in config.toml.",
            "Sync" if then_sync else "Use it", self.folder or "",
            self._start if then_sync else lambda chosen: self._load())

    def _ask_folder(self, body: str, confirm_label: str, typed: str, then: Any) -> None:
        """Ask for the sync folder; a file or a path whose parent is missing is refused in the form, a folder not
        there yet is created once the user says so; then remember it and run then(folder)."""
        screen = FormScreen("The sync folder", body, confirm_label=confirm_label, danger=False,
                            fields=[("folder", "Folder", typed)],
                            check=lambda answers: folder_problem(answers["folder"].strip()))

        def use(chosen: str) -> None:
            problem = config.save_sync_folder(self.app.config_folder, chosen)
            if problem:
                self.notify(problem, title="Sync", severity="warning")
            then(chosen)

        def answered(yes: bool | None) -> None:
            if not yes:
                return
            chosen = screen.answers["folder"].strip()
            path = Path(chosen).expanduser()
            if path.is_dir():
                use(chosen)
                return

            def create(yes: bool | None) -> None:
                if not yes:  # back to the form with what was typed (a typo is fixed there)
                    self._ask_folder(body, confirm_label, chosen, then)
                    return
                try:
                    path.mkdir(mode=0o700, exist_ok=True)
                except OSError as exc:
                    self.notify(f"The folder {path} could not be created ({exc.strerror or exc}).", title="Sync",
                                severity="error")
                    return
                use(chosen)

            self.app.push_screen(ConfirmScreen(
                "Create the folder?", f"Create the folder {path}? It does not exist yet; {path.parent} does.",
                confirm_label="Create it", danger=False), create)

        self.app.push_screen(screen, answered)

    # --- pairing ---

    def _with_folder(self, then: Any) -> None:
        """Run then(folder) with the remembered folder, asking for it first when there is none."""
        if self.app.demo_mode:
            self.notify("The demo store does not sync with your stores.", title="Sync", severity="warning")
            return
        folder = self.folder
        if folder:
            then(folder)
            return
        self._ask_folder("The folder your stores share; it is remembered in config.toml.", "Use it", "", then)

    def action_pair(self) -> None:
        if not self.running:
            self._with_folder(self._pair)

    @work(thread=True, exclusive=True, exit_on_error=False, group="sync-pair")
    def _pair(self, folder: str) -> None:
        offer = dict(self.app.opened_store.sync_pair(folder))
        # The stores known now: one that shows up later joined with this code (which then pairs nothing more).
        peers = {p["store_id"] for p in self.app.opened_store.sync_status()["peers"]}
        self.post_message(PairOffered({**offer, "folder": folder, "peers": peers}))

    @on(PairOffered)
    def _offered(self, message: PairOffered) -> None:
        message.stop()
        self.offer, self.offer_taken = message.offer, False
        code = self.query_one("#sync-code", Static)
        code.update(Content.assemble(("Pairing code: ", "bold"), (message.offer["code"], "bold $accent"),
                                     f"\nType it on the other machine ({self._key('sync')}, then "
                                     f"{self._key('sync.join')}; or `pcp sync DIR --join CODE`). "
                                     "It works once and is not written to the folder; sync here afterwards."))
        code.display = True
        self._load()

    @after_typing
    def action_join(self) -> None:
        if self.running:
            return
        self._with_folder(self._ask_code)

    def _ask_code(self, folder: str, typed: str = "") -> AwaitMount:
        screen = FormScreen(
            "Pair with another store",
            f"Type the code your other store showed ({self._key('sync')}, {self._key('sync.pair')} there; or "
            f"`pcp sync DIR --pair`). Folder: "
            f"{folder}. An empty store takes the other store's owner; then this store syncs.",
            confirm_label="Pair and sync", danger=False, fields=[("code", "Code", typed)])

        def answered(yes: bool | None) -> None:
            if yes:
                self._start(folder, code=screen.answers["code"].strip())

        return self.app.push_screen(screen, answered)

    @on(Joined)
    def _joined(self, message: Joined) -> None:
        message.stop()
        joined = message.result
        self.joined = True
        # (The CLI's sentence; the sync's own follows it in one notice, which a second one would replace.)
        self.paired_note = f"Paired with {joined['paired_with']}" + (
            " (this store took its owner)." if joined["adopted_owner"] else ".")
        self.notify(f"{self.paired_note} Syncing…", title="Paired")
        self._load()

    @on(JoinRefused)
    async def _join_refused(self, message: JoinRefused) -> None:
        """The prompt again with the code as typed, saying why it did not pair (a typo is fixed there)."""
        message.stop()
        self._finished()
        await self._ask_code(message.folder, message.code)  # mounted: the notice goes above its keys
        self.app.notify(message.problem, title="Not paired", severity="error")

    # --- the sync itself ---

    @on(JoinAsk)
    def _join_ask(self, message: JoinAsk) -> None:
        message.stop()
        self._finished()

        def answered(yes: bool | None) -> None:
            if yes:
                self._start(message.folder, code=message.code, merge=True)

        self.app.push_screen(ConfirmScreen("Join and merge?", merge_text(message.plan), confirm_label="Join and merge",
                                           danger=False), answered)

    def _start(self, folder: str, code: str | None = None, merge: bool = False) -> None:
        if code is None and self.status is not None and not self.status["paired"]:
            # (The store's own sentence names the command line; here the keys of this dialog do it.)
            self.notify(f"This store is not paired yet: offer a code here ({self._key('sync.pair')}) and type it on "
                        f"your other machine ({self._key('sync.join')} there), or type here ({self._key('sync.join')}) "
                        "the code your other machine offers.", title="Not paired", severity="warning")
            return
        self.running = True
        self.query_one("#sync-running").display = True
        self.query_one("#sync-phase", Static).update(f"Syncing through {folder}…")
        self.query_one(ProgressBar).update(total=None, progress=0)
        self._sync(folder, code, merge)

    @work(thread=True, exclusive=True, exit_on_error=False, group="sync-run")
    def _sync(self, folder: str, code: str | None = None, merge: bool = False) -> None:
        def report(done: int, total: int | None, what: str = "", /) -> None:
            self.post_message(Progress("sync", done, total, what))

        from store import PcpError

        try:
            if code is not None:
                try:
                    plan = None if merge else dict(self.app.opened_store.sync_join_plan(folder, code))
                    if plan is not None and plan["merge"]:  # history of its own here: asked first
                        self.post_message(JoinAsk(folder, code, plan))
                        return
                    joined = self.app.opened_store.sync_join(folder, code, merge=merge)
                except PcpError as exc:  # a wrong or used code: said in the prompt, typed again there
                    self.post_message(JoinRefused(folder, code, exc.message))
                    return
                self.post_message(Joined(dict(joined)))
            result = self.app.opened_store.sync_folder(folder, progress=report)
        except Exception:
            self.post_message(SyncFailed())
            raise
        self.post_message(Synced(dict(result)))

    @on(Progress)
    def _progress(self, message: Progress) -> None:
        if message.task != "sync":
            return
        message.stop()
        total = message.total or None  # 0: not known (writing this store's changes)
        self.query_one("#sync-phase", Static).update(
            f"{message.unit.capitalize()}: {message.done:,} of {message.total:,} kB" if total else
            f"{message.unit.capitalize()}…")
        self.query_one(ProgressBar).update(total=total, progress=message.done)

    @on(Synced)
    def _synced(self, message: Synced) -> None:
        message.stop()
        self._finished()
        result = message.result
        self.took_pages = self.took_pages or any(r["added"].get("page") for r in result["read"])
        title = "Paired and synced" if self.paired_note else "Synced"
        said, self.paired_note = f"{self.paired_note} {summary(result)}".lstrip(), ""
        self.notify(said, title=title, timeout=8,
                    severity="warning" if result["deleted_while_revised"] or result["refused"] else "information")
        # Every view reloads (the list shows the other stores' pages); this dialog too, through it.
        self.app.announce_change(removed=bool(result["erased_pages"]))
        if result["erased_pages"]:
            self.app.forget_pages(result["erased_pages"])

    @on(SyncFailed)
    def _failed(self, message: SyncFailed) -> None:
        message.stop()
        self._finished()
        self._load()  # the folder just chosen is remembered even when it could not sync: say so

    def _finished(self) -> None:
        self.running = False
        self.query_one("#sync-running").display = False
        self.query_one(DataTable).focus()

    # --- the conflicts ---

    def action_open(self) -> None:
        row = self.query_one(DataTable).cursor_row
        if not 0 <= row < len(self.rows):
            self.notify("No pages with conflicts to open.", title="Sync")
            return
        page_id = self.rows[row][0]
        self._leave()
        self.app.screen.post_message(OpenPage(page_id))

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.action_open()

    def action_back(self) -> None:
        if self.running:  # its answer (and the reload of every view) belongs to this dialog
            self.notify("A sync is under way; the dialog closes when it is done.", title="Sync")
            return
        self._leave()

    def _leave(self) -> None:
        """Close; on an empty store's welcome screen, a sync that brought pages in opens the pages instead."""
        self.app.close_sync(self, self.took_pages)
