"""Handing context to a chat: the basket, the bundle preview, copy with a chat label, continue a chat, the ledger."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from textual import on, work
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import Screen
from textual.widgets import DataTable, Label, OptionList, Static, TabbedContent, TabPane
from textual.widgets.option_list import Option

from .. import commands
from ..messages import BasketChanged, BundleBuilt, Copied, LedgerLoaded, NothingNew, StoreChanged, StoreWorkers
from ..widgets.fields import Field
from ..widgets.footer import FitFooter
from ..widgets.tabs import show_tab
from .confirm import ConfirmScreen
from ..text import counted

if TYPE_CHECKING:
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


class HandoffScreen(StoreWorkers, Screen[Any]):
    """The basket on the left; preview and ledger on the right."""

    COMMAND_SCOPE = "handoff"
    BINDINGS = commands.bindings("handoff")

    def __init__(self) -> None:
        super().__init__()
        self.preview: BundleResult | None = None
        self.ledger_page: str | None = None  # the basket page the ledger is filtered on (None: every handoff)

    def compose(self) -> ComposeResult:
        yield Static(Content.styled("Handoff: carry pages into a chat", "bold"), id="handoff-title")
        with Horizontal(id="handoff-panes"):
            with Vertical(id="basket-pane"):
                yield Label("Basket (space adds a page)", id="basket-label")
                yield OptionList(id="basket")
                yield Label("Chat label")
                yield Field(placeholder="Claude: thesis chapter 3", id="label")
                yield Label("Token budget (optional)")
                yield Field(placeholder="e.g. 4000", id="budget", restrict=r"[0-9]*")
                with VerticalScroll(id="copy-scroll"):  # a long result scrolls; the basket keeps its rows
                    yield Static("", id="copy-result")
            with TabbedContent(initial="preview", id="handoff-tabs"):
                with TabPane("1 Preview", id="preview"):
                    with VerticalScroll():
                        yield Static("Preview the bundle to see its size, tokens, warnings and cuts.",
                                     id="preview-summary")
                        yield Static("", id="preview-text")
                with TabPane("2 Ledger", id="ledger"):
                    yield Static("", id="ledger-note")
                    yield DataTable(id="ledger-table", cursor_type="row")
        yield FitFooter(compact=True)

    def on_mount(self) -> None:
        self.query_one("#ledger-table", DataTable).add_columns("when", "chat", "handoff", "kind", "new entries", "tokens")  # (a continuation carries only what changed)
        self._show_basket()
        self._ledger(None)
        self.app.subscribe_store_changes(self)

    @on(StoreChanged)
    def _store_changed(self, message: StoreChanged) -> None:
        message.stop()
        if not message.audit_only:  # the app checks the basket itself and then sends BasketChanged
            self._ledger(self.ledger_page if self.ledger_page in self.ids else None)

    @on(BasketChanged)
    def _basket_changed(self, message: BasketChanged) -> None:
        message.stop()
        self.preview = None
        self._show_basket()
        if self.ledger_page not in self.ids:
            self._ledger(None)

    # --- the basket ---

    @property
    def ids(self) -> list[str]:
        return [b["page_id"] for b in self.app.basket]

    def _show_basket(self) -> None:
        listing = self.query_one("#basket", OptionList)
        listing.clear_options()
        listing.add_options([Option(Content.assemble(f"{n}. ", b["title"], (f"  {b['namespace']}", "dim")),
                                    id=b["page_id"]) for n, b in enumerate(self.app.basket, 1)]
                            or [Option("The basket is empty.", disabled=True)])

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        if event.option.id:
            self._ledger(event.option.id)

    def action_remove(self) -> None:
        listing = self.query_one("#basket", OptionList)
        if listing.highlighted is None or not self.app.basket:
            return
        del self.app.basket[listing.highlighted]
        self.preview = None
        self._show_basket()
        if self.ledger_page not in self.ids:
            self._ledger(None)

    def action_clear(self) -> None:
        self.app.basket.clear()
        self.preview = None
        self._show_basket()
        self._ledger(None)

    def _budget(self) -> int | None:
        text = self.query_one("#budget", Field).value.strip()
        return int(text) if text else None

    def _label(self) -> str | None:
        label = self.query_one("#label", Field).value.strip()
        if not label:
            self.notify("Name the chat first (the label), e.g. “Claude: thesis chapter 3”.", severity="warning")
            self.query_one("#label", Field).focus()
            return None
        return label

    # --- preview, copy, continue ---

    def action_preview(self) -> None:
        if not self.ids:
            self.notify("The basket is empty: mark pages with space on the page list.", severity="warning")
            return
        self.query_one(TabbedContent).active = "preview"
        self._bundle(self.ids, self._budget())

    @work(thread=True, exclusive=True, exit_on_error=False, group="bundle")
    def _bundle(self, ids: list[str], budget: int | None) -> None:
        self.post_message(BundleBuilt(self.app.opened_store.bundle(ids=ids, max_tokens=budget)))

    def action_copy(self) -> None:
        label = self._label()
        if label is None or not self.ids:
            if not self.ids:
                self.notify("The basket is empty.", severity="warning")
            return
        warnings = self.preview["warnings"] if self.preview is not None else []
        if self.preview is None or warnings:
            body = "\n".join(f"⚠ {w.get('message', w)}" for w in warnings) or "No preview was made yet."
            screen = ConfirmScreen(f"Copy {counted(len(self.ids), 'page')} to “{label}”?",
                                   body + "\n\nThe bundle goes to the clipboard and to a file beside the store; the "
                                   "ledger records it for this chat.", confirm_label="Copy", danger=bool(warnings))

            def answered(yes: bool | None) -> None:
                if yes:
                    self._copy(label, self.ids, self._budget(), False)

            self.app.push_screen(screen, answered)
            return
        self._copy(label, self.ids, self._budget(), False)

    def action_continue_chat(self) -> None:
        label = self._label()
        if label is not None:
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

    @on(BundleBuilt)
    def _show_bundle(self, message: BundleBuilt) -> None:
        message.stop()
        self.preview = message.bundle
        self.query_one("#preview-summary", Static).update(summary(message.bundle, "Bundle"))
        self.query_one("#preview-text", Static).update(Content(message.bundle["text"]))

    @on(Copied)
    def _show_copied(self, message: Copied) -> None:
        message.stop()
        result = message.result
        kind = "Continuation" if result.get("continuation_of") else "Bundle"
        self.query_one("#copy-result", Static).update(summary(result, f"{kind} {result['handoff_id']}"))
        self.query_one("#preview-text", Static).update(Content(result["text"]))
        self.notify(f"For “{result['label']}”: {copy_sentence(result['clipboard'])} File: {result.get('file')}",
                    title="Handoff", timeout=8)
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
        self.query_one("#ledger-note", Static).update(Content(note))
        table = self.query_one("#ledger-table", DataTable)
        table.clear()
        for h in ledger["handoffs"]:
            table.add_row(h["created_at"][:16], h["label"], h["handoff_id"],
                          "continuation" if h.get("continuation_of") else "bundle", len(h["entries"]), h["tokens"])

    def action_show_tab(self, tab: str) -> None:
        """Show the Preview or the Ledger tab (keys 1 and 2) with the focus in it."""
        show_tab(self.query_one("#handoff-tabs", TabbedContent), tab, focus_into=True)

    def action_back(self) -> None:
        self.app.pop_screen()
