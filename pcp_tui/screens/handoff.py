"""Handing context to a chat: the basket, the bundle preview, copy with a chat label, continue a chat, the ledger.

Long because: one screen, one flow (basket, label with known chats, budget tried as typed, preview, copy,
continue, ledger), each step reading the state the others leave; the remembered chat is at the end.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import Screen
from textual.suggester import Suggester
from textual.timer import Timer
from textual.worker import get_current_worker
from textual.widgets import DataTable, Label, OptionList, Static, TabbedContent, TabPane
from textual.widgets.option_list import Option

from .. import commands
from ..messages import (BasketChanged, BudgetChecked, BundleBuilt, ChatsKnown, Copied, LedgerLoaded, NothingNew,
                        StoreChanged, StoreWorkers)
from ..widgets.fields import Field
from ..widgets.footer import FitFooter
from ..widgets.tabs import show_tab
from .confirm import ConfirmScreen
from ..text import counted
from .typed import after_typing

if TYPE_CHECKING:
    from ..app import PcpApp
    from store.types import BundleResult


def tui_clipboard(app: Any, use_pyperclip: bool = True) -> Callable[[str], str]:
    """The clipboard function Store.copy calls (in a worker): pyperclip first, and always OSC 52 via the app.

    App.copy_to_clipboard also keeps the text in `app.clipboard`. The answer names the path that
    worked: "pyperclip", else "osc52" (sent to the terminal; delivery cannot be confirmed).
    """
    from ..clipboard import pyperclip_copy

    def copy(text: str) -> str:
        ok = pyperclip_copy(text)[0] if use_pyperclip else False
        app.call_from_thread(app.copy_to_clipboard, text)
        return "pyperclip" if ok else "osc52"

    return copy


def summary(result: Mapping[str, Any], what: str) -> Content:
    # (a bundle or a copy: the copy adds where it went)
    """Size, tokens, entries, warnings and cuts of a bundle or copy result."""
    exact = "" if result.get("tokens_exact") else " (estimated)"
    lines: list[Content] = [Content.assemble(
        (what, "bold"), f": {result['bytes']:,} bytes, {result['tokens']:,} tokens{exact}, "
        f"{len(result['entries'])} entr{'y' if len(result['entries']) == 1 else 'ies'}")]
    for e in result["entries"]:
        lines.append(Content(f"  #{e['n']} {e['page_id']} {e.get('namespace', '')} {e['detail']} · "
                             f"{e['tokens']} tokens"))
    for w in result.get("warnings", []):
        lines.append(Content.styled(f"⚠ {w.get('message', w)}", "$warning"))
    for c in result.get("cut", []):
        lines.append(Content.styled(f"✂ {c.get('message') or c}", "$warning"))
    if result.get("file"):
        lines.append(Content(f"{copy_sentence(result['clipboard'])} The text is also in the file {result['file']}"))
    return Content("\n").join(lines)


def copy_sentence(path: str) -> str:
    """What happened to the text, and no more: OSC 52 is only sent, nothing confirms a clipboard took it."""
    if path == "pyperclip":
        return "Copied to the clipboard (pyperclip read it back)."
    if path == "osc52":
        return ("Sent to the terminal (OSC 52): it lands on the clipboard if the terminal allows OSC 52; "
                "nothing confirms it did.")
    return "Not copied to a clipboard."


class KnownChats(Suggester):
    """Completes the chat label from the ledger's chats, newest first (→ or End takes the suggestion)."""

    def __init__(self, screen: "HandoffScreen") -> None:
        super().__init__(use_cache=False, case_sensitive=True)
        self.screen = screen

    async def get_suggestion(self, value: str) -> str | None:
        typed = value.casefold()
        return next((c for c in self.screen.chats if typed and c.casefold().startswith(typed) and c != value), None)


def normal_label(text: str) -> str:
    """A label as the store keeps it (runs of spaces made one)."""
    return " ".join(text.split())


class HandoffScreen(StoreWorkers, Screen[Any]):
    """The basket on the left; preview and ledger on the right."""

    COMMAND_SCOPE = "handoff"
    BINDINGS = commands.bindings("handoff")

    def __init__(self) -> None:
        super().__init__()
        self.preview: BundleResult | None = None
        self.ledger_page: str | None = None  # the basket page the ledger is filtered on (None: every handoff)
        self.chats: list[str] = []  # the ledger's chats, newest first
        self.chats_known = False
        self.previewing = False  # a preview was asked for (or shown): it is built again when the basket changes
        self.generation = 0  # the basket state a preview is built for: an older answer is dropped
        self.budget_problem: tuple[str, str] | None = None  # (budget as typed, why it cannot hold the bundle)
        self.budget_checked: str | None = None  # the budget (as typed) the last check was for
        self._then: tuple[str, str] | None = None  # ("copy", label): copy once the preview is built
        self._budget_timer: Timer | None = None
        self._ledger_labels: dict[str, str] = {}  # ledger row (handoff id) -> its chat's label
        self.copied: set[str] = set()  # the pages the copy result on screen names

    def compose(self) -> ComposeResult:
        yield Static(Content.styled("Handoff: carry pages into a chat", "bold"), id="handoff-title")
        with Horizontal(id="handoff-panes"):
            with Vertical(id="basket-pane"):
                yield Label("Basket (space adds a page)", id="basket-label")
                yield OptionList(id="basket")
                yield Label(f"Chat label ({self.app.key_display('handoff.label')})", id="label-label")
                yield Field(placeholder="e.g. Claude: thesis chapter 3", id="label", suggester=KnownChats(self))
                yield Static("", id="chat-hint").set_styles("display: none;")
                yield Label("Token budget (optional)")
                yield Field(placeholder="no limit", id="budget", restrict=r"[0-9]*")
                yield Static("", id="budget-note").set_styles("display: none;")
                with VerticalScroll(id="copy-scroll"):  # a long result scrolls; the basket keeps its rows
                    yield Static("", id="copy-result")
            with TabbedContent(initial="preview", id="handoff-tabs"):
                with TabPane("1 Preview", id="preview"):
                    with VerticalScroll():
                        yield Static(PREVIEW_HINT, id="preview-summary")
                        yield Static("", id="preview-text")
                with TabPane("2 Ledger", id="ledger"):
                    yield Static("", id="ledger-note")
                    yield DataTable(id="ledger-table", cursor_type="row")
        yield FitFooter(compact=True)

    def on_mount(self) -> None:
        self.query_one("#ledger-table", DataTable).add_columns("when", "chat", "handoff", "kind", "new entries", "tokens")  # (a continuation carries only what changed)
        self._show_basket()
        self._ledger(None)
        self._fetch_chats()
        self.app.subscribe_store_changes(self)
        remembered = last_chat_of(self.app)
        label = self.query_one("#label", Field)
        if remembered:
            label.value = remembered
        # Focus where the next action is: naming the chat when there are pages to hand and no chat yet.
        if self.app.basket and not remembered:
            label.focus()
        else:
            self.query_one("#basket", OptionList).focus()
        self._hint()

    @on(StoreChanged)
    def _store_changed(self, message: StoreChanged) -> None:
        message.stop()
        if message.audit_only:
            return
        # the app checks the basket itself and then sends BasketChanged
        self._ledger(self.ledger_page if self.ledger_page in self.ids else None)
        self._fetch_chats()
        if message.external or message.page_id in self.ids:
            # Another process (or this app) changed or erased a page: what the preview shows may be gone. It
            # leaves the screen now, and is built again from the store as it is.
            self._drop_preview()

    @on(BasketChanged)
    def _basket_changed(self, message: BasketChanged) -> None:
        message.stop()
        self._show_basket()
        self._drop_preview()
        if self.copied - set(self.ids):  # the copy result names a page that left the basket (erased): it goes too
            self.copied = set()
            self.query_one("#copy-result", Static).update("")
        if self.ledger_page not in self.ids:
            self._ledger(None)

    def _drop_preview(self) -> None:
        """Nothing shown of the old basket stays: the preview (and a copy's text) are cleared, then built again
        when one was asked for."""
        self.generation += 1
        self.preview = None
        self.query_one("#preview-text", Static).update("")
        rebuild = self.previewing and bool(self.ids)
        self.query_one("#preview-summary", Static).update("Building the preview again…" if rebuild else PREVIEW_HINT)
        self.budget_checked = None
        if rebuild:
            self._bundle(self.ids, self._budget(), self._budget_text(), self.generation)
        elif self._budget_text():
            self._check_budget()

    # --- the basket ---

    @property
    def ids(self) -> list[str]:
        return [b["page_id"] for b in self.app.basket]

    def _show_basket(self) -> None:
        listing = self.query_one("#basket", OptionList)
        listing.clear_options()
        listing.add_options([Option(Content.assemble(f"{n}. ", b["title"], (f"  {b['namespace']}", "dim")),
                                    id=b["page_id"]) for n, b in enumerate(self.app.basket, 1)]
                            or [Option(Content.assemble(
                                "The basket is empty.", (f"\n{self.app.key_display('basket')} on a page adds it. A basket lasts "
                                "until you quit; the last chat is what is remembered.", "dim")), disabled=True)])

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        if event.option.id:
            self._ledger(event.option.id)

    def action_remove(self) -> None:
        listing = self.query_one("#basket", OptionList)
        if listing.highlighted is None or not self.app.basket:
            return
        del self.app.basket[listing.highlighted]
        self._show_basket()
        self._drop_preview()
        if self.ledger_page not in self.ids:
            self._ledger(None)

    def action_clear(self) -> None:
        self.app.basket.clear()
        self._show_basket()
        self._drop_preview()
        self._ledger(None)

    # --- the label and the budget ---

    def action_focus_label(self) -> None:
        self.query_one("#label", Field).focus()

    def _budget_text(self) -> str:
        return self.query_one("#budget", Field).value.strip()

    def _budget(self) -> int | None:
        text = self._budget_text()
        return int(text) if text else None

    def _label(self) -> str | None:
        label = normal_label(self.query_one("#label", Field).value)
        if not label:
            self.notify(f"Name the chat first: type its label ({self.app.key_display('handoff.label')}), or pick "
                        "a chat in the Ledger (2, Enter).", severity="warning")
            self.query_one("#label", Field).focus()
            return None
        return label

    def on_input_changed(self, event: Field.Changed) -> None:
        if event.input.id == "label":
            self._hint()
        elif event.input.id == "budget":
            self.budget_problem, self.budget_checked = None, None
            self.query_one("#budget-note", Static).update("")
            self.query_one("#budget-note", Static).display = False
            if self._budget_timer is not None:
                self._budget_timer.stop()
            self._budget_timer = self.set_timer(BUDGET_DEBOUNCE, self._check_budget)

    def _hint(self) -> None:
        """Under the label: the known chats that match what is typed, and what ^y / ^o will do with it."""
        typed = normal_label(self.query_one("#label", Field).value)
        known = self.chats
        copy, go_on = self.app.key_display("handoff.copy"), self.app.key_display("handoff.continue")
        if typed and typed in known:
            hint = Content.assemble(("Known chat: ", "bold"), f"{go_on} continues it")
        else:
            matching = [c for c in known if typed.casefold() in c.casefold()][:3]
            if matching:
                hint = Content.assemble(("Known chats: ", "dim"), " · ".join(matching),
                                        ("  (→ completes)" if typed else "  (Ledger 2, Enter picks)", "dim"))
            else:
                hint = Content.styled(f"A new chat: {copy} copies the bundle to it." if typed else "", "dim")
        shown = self.query_one("#chat-hint", Static)
        shown.update(hint)
        shown.display = bool(hint.plain)  # (no empty row under the label)

    def _check_budget(self) -> None:
        """Try the typed budget on the basket (the store's own check, off the loop), before any confirmation."""
        text = self._budget_text()
        if not text or not self.ids:
            return
        self.previewing = True  # the check builds the bundle: it shows as the preview
        self._bundle(self.ids, self._budget(), text, self.generation)

    # --- preview, copy, continue ---

    @after_typing
    def action_preview(self) -> None:
        if not self.ids:
            self.notify("The basket is empty: mark pages with space on the page list.", severity="warning")
            return
        self.previewing = True
        self.query_one(TabbedContent).active = "preview"
        self._bundle(self.ids, self._budget(), self._budget_text(), self.generation)

    @work(thread=True, exclusive=True, exit_on_error=False, group="bundle")
    def _bundle(self, ids: list[str], budget: int | None, budget_text: str, generation: int) -> None:
        from store import Invalid, LimitExceeded, NotFound

        store = self.app.opened_store
        try:
            bundle = store.bundle(ids=ids, max_tokens=budget)
        except (Invalid, LimitExceeded) as error:
            if budget is None:
                raise
            store.bundle(ids=ids)  # without the budget: when this fails too, the budget is not what is wrong
            self.post_message(BudgetChecked(budget_text, error.message))
            return
        except NotFound:
            return  # a basket page was erased meanwhile: the basket check drops it, and the preview is built again
        if not get_current_worker().is_cancelled:
            self.post_message(BudgetChecked(budget_text, None))
            self.post_message(BundleBuilt(bundle, generation))

    @on(BudgetChecked)
    def _budget_checked(self, message: BudgetChecked) -> None:
        message.stop()
        if message.budget != self._budget_text():
            return  # the budget was typed on meanwhile
        self.budget_checked = message.budget
        self.budget_problem = (message.budget, message.problem) if message.problem else None
        note = self.query_one("#budget-note", Static)
        note.update(Content.styled(f"⚠ {message.problem}", "$error") if message.problem else "")
        note.display = bool(message.problem)
        if message.problem and self._then is not None:
            self._then = None
            self.notify(message.problem, title="Token budget", severity="warning")
            self.query_one("#budget", Field).focus()

    def _refuse_budget(self) -> bool:
        """A budget already known not to hold the bundle stops a copy before any question."""
        if self.budget_problem is not None and self.budget_problem[0] == self._budget_text():
            self.notify(self.budget_problem[1], title="Token budget", severity="warning")
            self.query_one("#budget", Field).focus()
            return True
        return False

    @after_typing
    def action_copy(self) -> None:
        if not self.ids:
            self.notify("The basket is empty.", severity="warning")
            return
        label = self._label()
        if label is None or self._refuse_budget():
            return
        if label in self.chats:  # (the store refuses a second first copy with the CLI's words)
            self.notify(f"“{label}” already has handoffs: {self.app.key_display('handoff.continue')} continues it "
                        "with what is new, or give a new label.", title="Copy", severity="warning")
            return
        self._then = ("copy", label)  # the bundle is built (and the budget tried) first; then ask or copy
        self.previewing = True
        self._bundle(self.ids, self._budget(), self._budget_text(), self.generation)

    def _copy_after_preview(self, label: str) -> None:
        warnings = self.preview["warnings"] if self.preview is not None else []
        if warnings:
            body = "\n".join(f"⚠ {w.get('message', w)}" for w in warnings)
            screen = ConfirmScreen(f"Copy {counted(len(self.ids), 'page')} to “{label}”?",
                                   body + "\n\nThe bundle goes to the clipboard and to a file beside the store; the "
                                   "ledger records it for this chat.", confirm_label="Copy", danger=True)

            def answered(yes: bool | None) -> None:
                if yes:
                    self._copy(label, self.ids, self._budget(), False)

            self.app.push_screen(screen, answered)
            return
        self._copy(label, self.ids, self._budget(), False)

    @after_typing
    def action_continue_chat(self) -> None:
        label = self._label()
        if label is None or self._refuse_budget():
            return
        if self.chats_known and label not in self.chats:
            self.notify(f"No chat is labelled “{label}” yet: {self.app.key_display('handoff.copy')} starts it.",
                        title="Continue chat", severity="warning")
            return
        self._copy(label, self.ids, self._budget(), True)

    @work(thread=True, exclusive=True, exit_on_error=False, group="copy")
    def _copy(self, label: str, ids: list[str], budget: int | None, continuing: bool) -> None:
        store, clip = self.app.opened_store, tui_clipboard(self.app, getattr(self.app, "use_pyperclip", True))
        if continuing:
            from store import Invalid

            try:
                result = store.copy_continue(label, ids=ids, max_tokens=budget, clipboard=clip)
            except Invalid as error:
                if not error.message.startswith("Nothing new"):
                    raise
                self.post_message(NothingNew(error.message))  # news about the chat, not an invalid request
                return
        else:
            result = store.copy(ids=ids, label=label, max_tokens=budget, clipboard=clip)
        self.post_message(Copied(result))

    def _ledger(self, page_id: str | None) -> None:
        self.ledger_page = page_id
        self._fetch_ledger(page_id)

    @work(thread=True, exclusive=True, exit_on_error=False, group="ledger")
    def _fetch_ledger(self, page_id: str | None) -> None:
        self.post_message(LedgerLoaded(self.app.opened_store.handoffs(page_id=page_id, limit=50), page_id))

    @work(thread=True, exclusive=True, exit_on_error=False, group="chats")
    def _fetch_chats(self) -> None:
        """The ledger's chats, newest first, each once (the newest 100 handoffs name them)."""
        labels: list[str] = []
        for h in self.app.opened_store.handoffs(limit=100)["handoffs"]:
            if h["label"] not in labels:
                labels.append(h["label"])
        self.post_message(ChatsKnown(labels))

    @on(ChatsKnown)
    def _chats_known(self, message: ChatsKnown) -> None:
        message.stop()
        self.chats, self.chats_known = message.labels, True
        self._hint()

    @on(BundleBuilt)
    def _show_bundle(self, message: BundleBuilt) -> None:
        message.stop()
        if message.generation != self.generation:
            return  # built for a basket (or a store) that has changed since: a newer one is on its way
        self.preview = message.bundle
        self.query_one("#preview-summary", Static).update(summary(message.bundle, "Bundle"))
        self.query_one("#preview-text", Static).update(Content(message.bundle["text"]))
        then, self._then = self._then, None
        if then is not None:
            self._copy_after_preview(then[1])

    @on(Copied)
    def _show_copied(self, message: Copied) -> None:
        message.stop()
        result = message.result
        kind = "Continuation" if result.get("continuation_of") else "Bundle"
        self.query_one("#copy-result", Static).update(summary(result, f"{kind} {result['handoff_id']}"))
        self.copied = {e["page_id"] for e in result["entries"] if e["page_id"] is not None}
        self.query_one("#preview-text", Static).update(Content(result["text"]))
        self.notify(f"For “{result['label']}”: {copy_sentence(result['clipboard'])} File: {result.get('file')}",
                    title="Handoff", timeout=8)
        problem = remember_chat(self.app, result["label"])
        if problem:
            self.notify(problem, title="Handoff", severity="warning")
        if result["label"] not in self.chats:
            self.chats.insert(0, result["label"])
            self._hint()
        self.app.announce_change()  # the ledger (here and wherever it shows) reloads through it

    @on(NothingNew)
    def _show_nothing_new(self, message: NothingNew) -> None:
        message.stop()  # the copy result shown (if any) stays: it is still what the chat was handed
        self.notify(message.sentence, title="Continue chat", severity="information")

    @on(LedgerLoaded)
    def _show_ledger(self, message: LedgerLoaded) -> None:
        message.stop()
        ledger, page_id = message.ledger, message.page_id
        if page_id != self.ledger_page:
            return  # an answer for a filter no longer asked for
        title = next((b["title"] for b in self.app.basket if b["page_id"] == page_id), page_id)
        chats = sorted({h["label"] for h in ledger["handoffs"]})
        note = (f"Chats that saw “{title}”: {', '.join(chats) or 'none yet'}" if page_id
                else f"Every handoff, newest first ({len(ledger['handoffs'])} shown)")
        self.query_one("#ledger-note", Static).update(Content(note + " · Enter picks a row's chat"))
        table = self.query_one("#ledger-table", DataTable)
        table.clear()
        self._ledger_labels = {}
        for h in ledger["handoffs"]:
            self._ledger_labels[h["handoff_id"]] = h["label"]
            table.add_row(h["created_at"][:16], Text(h["label"], no_wrap=True, end=""), h["handoff_id"],
                          "continuation" if h.get("continuation_of") else "bundle", len(h["entries"]), h["tokens"],
                          key=h["handoff_id"])

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        """Enter on a ledger row picks its chat: the label takes it, and ^o continues that chat."""
        label = self._ledger_labels.get(str(event.row_key.value))
        if label is None:
            return
        field = self.query_one("#label", Field)
        field.value = label
        field.cursor_position = len(label)
        self.notify(f"Chat “{label}”: {self.app.key_display('handoff.continue')} continues it.", title="Handoff",
                    timeout=4)

    def action_show_tab(self, tab: str) -> None:
        """Show the Preview or the Ledger tab (keys 1 and 2) with the focus in it."""
        show_tab(self.query_one("#handoff-tabs", TabbedContent), tab, focus_into=True)

    def action_back(self) -> None:
        self.app.pop_screen()


PREVIEW_HINT = "Preview the bundle to see its size, tokens, warnings and cuts."
BUDGET_DEBOUNCE = 0.3  # seconds of quiet typing before a budget is tried on the basket


def last_chat_of(app: PcpApp) -> str | None:
    """The chat this store last handed context to: this run's, else the one remembered in the config."""
    from .. import config

    path = str(app.opened_store.path)
    if path in app.last_chats:
        return app.last_chats[path]
    if app.demo_mode:
        return None
    return config.last_chat(app.config_folder, app.opened_store.path)


def remember_chat(app: Any, label: str) -> str | None:
    """Remember the chat for this store (the demo only for this run: its visits write no config)."""
    from .. import config

    app.last_chats[str(app.store.path)] = label
    if app.demo_mode:
        return None
    return config.save_last_chat(app.config_folder, app.store.path, label)
