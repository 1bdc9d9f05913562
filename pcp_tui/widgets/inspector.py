"""The inspector: one page in tabs (Content, Revisions, Provenance, Relations, Facets, Raw)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import asyncio
import json
import time
from collections.abc import Callable
from functools import partial

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.highlight import highlight
from textual.widget import Widget
from textual.widgets import Static, TabbedContent, TabPane, Tabs, Tree
from textual.widgets.tabbed_content import ContentTab
from textual.worker import get_current_worker

from store import LIMITS

from .. import reading
from ..messages import ContentMore, PageGone, PageLoaded, StoreWorkers
from .document import Document
from .page_text import code_language, lifecycle_notes, markdown
from .provenance import ProvenanceTree
from .relations import RelationsView
from .revisions import RevisionsView
from .tabs import show_tab
from ..text import printable

if TYPE_CHECKING:
    from store.types import ReadItem, Revision

TABS = ("content", "revisions", "provenance", "relations", "facets", "raw")
TAB_TITLES = {"content": "Content", "revisions": "Revisions", "provenance": "Provenance", "relations": "Relations",
              "facets": "Facets", "raw": "Raw"}
# Where the six titles do not fit, the three long ones are shortened, and where those do not fit either, the tabs
# lose a cell of padding (the `-tight-tabs` class): every tab stays in sight, and the tab bar never scrolls
# sideways (each of its scrolls was a repaint of the whole screen, 40 ms at a million pages).
SHORT_TITLES = {"revisions": "Revs", "provenance": "Prov", "relations": "Rels"}
TAB_PADDING = 2  # cells of padding around each title (Textual's Tab: padding 0 1)
LAZY_TABS_AFTER = 0.2  # seconds after mount the hidden tabs' widgets start to be mounted (after first paint)
LAZY_TAB_GAP = 0.05  # seconds between two of them (each its own frame)
LAZY_TAB_STARTING = 3.0  # seconds after mount during which they are mounted whatever the keys (the app starting)
LAZY_TAB_QUIET = 0.5
MARKDOWN_LIMIT = 200_000  # content characters drawn as Markdown (or highlighted code); longer: plain text  # later, seconds without input before the next one is mounted


class InspectorTabs(TabbedContent):
    """The inspector's tabs; one opened by a click on its header is drawn for the page before it shows (a key
    does the same through `Inspector.switch_tab`): never a frame of the page it showed last time."""

    def __init__(self, before_show: Callable[[str], None], *, initial: str, id: str) -> None:
        super().__init__(initial=initial, id=id)
        self._before_show = before_show

    def _on_tabs_tab_activated(self, event: Tabs.TabActivated) -> None:
        # Called before TabbedContent's handler of the same name, which shows the pane (Textual calls the
        # handler of each class of the widget's, subclass first).
        if getattr(event.tabs, "tabbed_content", None) is self and event.tab.id:
            self._before_show(ContentTab.sans_prefix(event.tab.id))


class NotesBox(VerticalScroll):
    """The page's lifecycle notes: a few lines high, scrolled when a long reason needs more.

    It takes focus (tab, then the arrow keys scroll it) only while it has more than it shows, so it is no
    extra tab stop on a page whose note fits.
    """

    def allow_focus(self) -> bool:
        return self.max_scroll_y > 0


class Inspector(StoreWorkers, Vertical):
    """Shows whatever page `show` was last given; every read runs in a worker."""

    # Back from a page opened with Enter (or reached with Tab): to the list, the search kept; the screen's esc (clear
    # the search) is for the list itself.
    BINDINGS = [Binding("escape", "screen.focus_pages", "To the list", id="inspector.back")]

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.page_id: str | None = None
        self.withheld: set[str] = set()  # pages a deletion under way is erasing (withhold)
        self.page: reading.LoadedPage | None = None  # the last load_page result
        self._stale: set[str] = set()  # tabs not yet drawn for this page
        self._held: dict[str, str] = {}  # tab -> the page whose text it holds (a stale tab: an earlier page's)
        self._mounted: set[str] = {"content"}  # tabs whose widgets are mounted (see compose)
        self._mounting: dict[str, asyncio.Event] = {}  # tabs being mounted: set once they are
        self._tab_form = "full"  # the tab titles as drawn: full, short, or short with less padding (tight)
        # A long page's content is read in parts: the text read so far, where the next part starts (None: all
        # read), the whole length, and whether a part is being read.
        self._content = ""
        self._next_offset: int | None = None
        self._content_chars = 0
        self._reading_more = False

    def compose(self) -> ComposeResult:
        yield Static("No page selected.", id="inspector-title")
        with NotesBox(id="inspector-notes"):  # why it has its status, where it is suppressed (shown when any)
            yield Static("", id="inspector-notes-text")
        with InspectorTabs(self._draw_tab, initial="content", id="tabs"):
            with TabPane("Content", id="content"):
                yield Document(id="content-view")
            # The other tabs' widgets are mounted after first paint, one tab per frame (or at once when the
            # tab is opened first): styling and laying out all of them in the first frame blocked the loop.
            for tab in TABS[1:]:
                yield TabPane(TAB_TITLES[tab], id=tab)

    def on_mount(self) -> None:
        self._mounted_at = time.monotonic()
        self._fit_tab_titles()
        self.set_timer(LAZY_TABS_AFTER, self._mount_next_tab)

    def on_resize(self) -> None:
        self._fit_tab_titles()

    def _fit_tab_titles(self) -> None:
        width = self.size.width
        if width <= 0:
            return
        full = sum(len(title) + TAB_PADDING for title in TAB_TITLES.values())
        short = {tab: SHORT_TITLES.get(tab, title) for tab, title in TAB_TITLES.items()}
        form = "full" if width >= full else "short" if width >= sum(len(t) + TAB_PADDING for t in short.values()) \
            else "tight"
        if form == self._tab_form:
            return
        self._tab_form = form
        tabs = self.query_one(TabbedContent)
        for tab in TABS:
            tabs.get_tab(tab).label = TAB_TITLES[tab] if form == "full" else short[tab]
        self.set_class(form == "tight", "-tight-tabs")

    @staticmethod
    def _tab_widgets(tab: str) -> list[Widget]:
        if tab == "revisions":
            return [RevisionsView(id="revisions-view")]
        if tab == "provenance":
            return [ProvenanceTree(id="provenance-tree"),
                    Static("", id="provenance-detail", classes="detail")]  # the highlighted line in full
        if tab == "relations":
            return [RelationsView(id="relations-view")]
        return [Document(id=f"{tab}-text")]  # facets, raw

    def tab_ready(self, tab: str) -> bool:
        """True when the tab's widgets are mounted (they are mounted lazily, see compose)."""
        return tab in self._mounted

    async def _mount_tab(self, tab: str) -> None:
        if tab in self._mounted:
            return
        if tab in self._mounting:  # (a key for a tab the app is mounting: its widgets once they are there)
            await self._mounting[tab].wait()
            return
        self._mounting[tab] = done = asyncio.Event()
        try:
            await self.query_one(f"TabPane#{tab}", TabPane).mount_all(self._tab_widgets(tab))
            self._mounted.add(tab)
        finally:
            del self._mounting[tab]
            done.set()
        if tab == self.active_tab:  # opened before it was mounted; the others are drawn when opened
            self._draw_tab(tab)

    async def _mount_next_tab(self) -> None:
        """Mount the next tab not mounted yet, then the one after it in a later frame. While the app starts
        they follow each other whatever the keys (done within the first second, before the user's work and
        not in it); a tab still not mounted later waits for a pause in the keys (a mount lays the screen out
        again: it would land on a keystroke)."""
        tab = next((t for t in TABS if t not in self._mounted and t not in self._mounting), None)
        if tab is None:
            return
        collector = getattr(self.app, "collector", None)
        starting = time.monotonic() - self._mounted_at < LAZY_TAB_STARTING
        if not starting and collector is not None and collector.idle_for() < LAZY_TAB_QUIET:
            self.set_timer(LAZY_TAB_QUIET, self._mount_next_tab)
            return
        await self._mount_tab(tab)
        self.set_timer(LAZY_TAB_GAP, self._mount_next_tab)

    def open(self) -> None:
        """Enter on a hit: the keys go to the page shown, in its open tab (the Content tab's text scrolls with the
        arrows), else to the tab bar; esc goes back to the list."""
        tabs = self.query_one("#tabs", TabbedContent)
        pane = tabs.active_pane
        inside = [w for w in pane.query("*") if w.focusable] if pane is not None else []
        (inside[0] if inside else tabs.query_one(Tabs)).focus()

    # --- loading ---

    def show(self, page_id: str | None) -> None:
        if page_id in self.withheld:
            page_id = None  # being erased: not read (it could only fail once gone, and each failure is audited)
        self.page_id = page_id
        if page_id is None:
            self.clear()
            return
        self._load(page_id)

    def clear(self) -> None:
        """Nothing selected: every tab forgets the last page (an erased page must not stay on screen)."""
        self.page_id, self.page = None, None
        self._stale = set()
        self.query_one("#inspector-title", Static).update("No page selected.")
        self._show_notes(None)
        for tab in TABS:
            self._clear_tab(tab)

    def _clear_tab(self, tab: str) -> None:
        self._held.pop(tab, None)
        if tab == "content":
            self.query_one("#content-view", Document).show(Content.styled("No page selected.", "dim"),
                                                           "No page selected.")
        elif tab not in self._mounted:
            return
        elif tab == "revisions":
            self.query_one(RevisionsView).clear()
        elif tab == "provenance":
            self.query_one(ProvenanceTree).clear_page()
            self.query_one("#provenance-detail", Static).update("")
        elif tab == "relations":
            self.query_one(RelationsView).clear()
        else:
            self.query_one(f"#{tab}-text", Document).show("", "")

    def withhold(self, page_ids: set[str]) -> None:
        """Pages a deletion is erasing: none of them is shown or read until its dialog closes (withhold(set()))."""
        self.withheld = set(page_ids)
        self.forget(self.withheld)

    def forget(self, page_ids: set[str]) -> None:
        """Pages erased here: if this is one of them, nothing is read back (the read could only fail, and each
        failure would be one more line in the owner's audit log); the inspector clears."""
        if self.page_id in page_ids:
            self.clear()

    def reload(self) -> None:
        """The store changed: the page is read again, and a hidden tab still holding an earlier page's text
        (drawn before the cursor moved on; it is redrawn only when opened) forgets it now. This read is not
        cancelled by the cursor moving on: if the page was erased, the tabs not opened since still hold its
        text, and only this read can say so (under load the cursor's move came first)."""
        for tab, held in list(self._held.items()):
            if held != self.page_id:
                self._clear_tab(tab)
        if self.page_id:
            self._load(self.page_id, "inspector-again", None)

    def _load(self, page_id: str, group: str = "inspector", lane: str | None = "inspector") -> None:
        self.run_worker(partial(self._read_page, page_id, lane), thread=True, exclusive=True, exit_on_error=False,
                        group=group)

    def _read_page(self, page_id: str, lane: str | None) -> None:
        from store import NotFound

        from ..reads import Superseded, reader

        try:
            data = reader(self.app, lane).load_page(page_id)
        except Superseded:  # another page was asked for meanwhile
            return
        except NotFound:
            self.post_message(PageGone(page_id))
            return
        if not get_current_worker().is_cancelled:
            self.post_message(PageLoaded(page_id, data))

    @on(PageGone)
    def _page_gone(self, message: PageGone) -> None:
        message.stop()
        if message.page_id == self.page_id:
            self.clear()
            return
        for tab, held in list(self._held.items()):  # the cursor had moved on: hidden tabs may still hold it
            if held == message.page_id:
                self._clear_tab(tab)

    @on(PageLoaded)
    def _page_loaded(self, message: PageLoaded) -> None:
        message.stop()
        if message.page_id != self.page_id:
            return
        self.page = message.data
        full = message.data["full"]
        payload = full["revision"].get("payload")
        self._content = (payload.get("content") if payload else None) or ""
        self._next_offset, self._content_chars = full.get("next_offset"), full.get("content_chars", 0)
        self._reading_more = False
        self._fill(message.data)

    # --- drawing ---

    def _fill(self, data: reading.LoadedPage) -> None:
        env = data["full"]["revision"]
        who = env["created_by"]
        head = Content.assemble(
            (reading.title_of(env), "bold"), "\n",
            (f"{env['page_id']}  {env['namespace']}  ", "dim"),
            (env["lifecycle_status"], f"$lifecycle-{env['lifecycle_status']}"),
            (f"  {who['actor_type']}:{who['actor_id']}  {(env.get('observed_at') or env['created_at'])[:16]}", "dim"),
        )
        self.query_one("#inspector-title", Static).update(head, layout=False)  # fixed height: no relayout
        self._show_notes(data["full"])
        # Only the visible tab is drawn now; the others when they are opened (cursor moves stay cheap).
        self._stale = set(TABS)
        self._draw_tab(self.active_tab)

    def on_tree_node_highlighted(self, event: Tree.NodeHighlighted[Any]) -> None:
        """The provenance line under the cursor, wrapped in full (the tree cuts long ones at its edge)."""
        if isinstance(event.control, ProvenanceTree):
            event.stop()
            label = event.node.label
            self.query_one("#provenance-detail", Static).update(
                Content(label.plain if hasattr(label, "plain") else str(label)))

    def _show_notes(self, full: ReadItem | None) -> None:
        """The reason for a non-active status (the newest lifecycle step) and the contexts that suppress it."""
        notes = lifecycle_notes(full) if full else None
        box = self.query_one(NotesBox)
        if notes is None:
            if box.display:
                box.display = False
            return
        self.query_one("#inspector-notes-text", Static).update(notes)
        box.scroll_home(animate=False)
        box.display = True

    def on_tabbed_content_tab_activated(self, event: TabbedContent.TabActivated) -> None:
        event.stop()
        self._draw_tab(self.active_tab)

    def _draw_tab(self, tab: str) -> None:
        if tab not in self._mounted:
            self.call_later(self._mount_tab, tab)  # drawn once mounted
            return
        if self.page is None or tab not in self._stale:
            return
        self._stale.discard(tab)
        full = self.page["full"]
        env = full["revision"]
        self._held[tab] = env["page_id"]
        if tab == "content":
            self._show_content(env)
        elif tab == "revisions":
            self.query_one(RevisionsView).show(full.get("history", []), env.get("observed_at"),
                                               full.get("conflict_revision_ids"))
        elif tab == "provenance":
            self.query_one(ProvenanceTree).show(env, reading.title_of(env), self.page["input_titles"])
        elif tab == "relations":
            self.query_one(RelationsView).show(env["page_id"], full.get("relations") or {"outgoing": [], "incoming": []},
                                                self.page["titles"])
        elif tab == "facets":
            facets = full.get("facets") or {}
            text = json.dumps(facets, ensure_ascii=False, indent=2) if facets else "No facets."
            self.query_one("#facets-text", Document).show(partial(highlight, text, language="json") if facets else text,
                                                          text)
        elif tab == "raw":
            raw = json.dumps(self.page["raw"], ensure_ascii=False, indent=2)
            self.query_one("#raw-text", Document).show(partial(highlight, raw, language="json"), raw)

    def _show_content(self, env: Revision, to_end: bool | None = None) -> None:
        """The content read so far; `to_end` (more of it arrived): keep the view where it is, or go to its end."""
        payload = env.get("payload")
        view = self.query_one("#content-view", Document)
        if payload is None or payload.get("content") is None:
            refs = printable("\n".join(r.get("uri", "") for r in env.get("source_refs", [])))
            plain = f"No payload; the page points to its sources:\n{refs}"
            view.show(partial(Content, plain), plain)
            return
        text = printable(self._content)
        media = payload.get("media_type")
        note = ""
        if self._next_offset is not None:  # where you are in a long page
            note = (f"\n\n── characters 1 to {self._next_offset:,} of {self._content_chars:,} shown: scroll to the end "
                    f"for the next {min(LIMITS['max_chars_per_read'], self._content_chars - self._next_offset):,}, "
                    "or press End for all of it ──")
        language = code_language(media)
        if media == "text/markdown" and len(text) <= MARKDOWN_LIMIT:
            source: object = partial(markdown, text + note)
        elif language and len(text) <= MARKDOWN_LIMIT:
            source = partial(highlight, text + note, language=language)
        else:  # a very long page as plain text: Markdown or highlighting would take seconds of its worker
            source = partial(Content, text + note)
        if to_end is None:
            view.show(source, text + note)
        else:
            view.extend(source, text + note, to_end)

    @on(Document.AtEnd, "#content-view")
    def _content_at_end(self, message: Document.AtEnd) -> None:
        """The Content tab reached its end: read the next part (End: all that is left), off the loop."""
        message.stop()
        if self.page is None or self._next_offset is None or self._reading_more:
            return
        self._reading_more = True
        env = self.page["full"]["revision"]
        self._read_more(env["page_id"], env["revision_id"], self._next_offset, message.whole)

    @work(thread=True, exclusive=True, exit_on_error=False, group="content-more")
    def _read_more(self, page_id: str, revision_id: str, offset: int, whole: bool) -> None:
        parts, start = [], offset
        next_offset: int | None = offset
        while next_offset is not None:
            item = self.app.opened_store.read_pages([revision_id], projections=("payload",),
                                             offset=next_offset)["results"][0]
            parts.append(reading.content_of(item))
            next_offset = item.get("next_offset")
            if not whole or get_current_worker().is_cancelled:
                break
        if not get_current_worker().is_cancelled:
            self.post_message(ContentMore(page_id, revision_id, start, "".join(parts), next_offset, whole))

    @on(ContentMore)
    def _content_more(self, message: ContentMore) -> None:
        message.stop()
        page = self.page
        if page is None or page["full"]["revision"]["revision_id"] != message.revision_id \
                or message.offset != self._next_offset:
            return  # another page (or revision) is shown now
        self._reading_more = False
        self._content += message.text
        self._next_offset = message.next_offset
        self._show_content(page["full"]["revision"], to_end=message.to_end)

    def switch_tab(self, tab: str) -> None:
        if tab in TABS:
            if tab in self._mounted:
                # Drawn for the current page before it shows: the switch is then one frame (one layout pass
                # and one render of the pane), and the pane never shows, even for a frame, the page it
                # showed last time.
                self._draw_tab(tab)
            show_tab(self.query_one(TabbedContent), tab)

    async def toggle_diff(self) -> None:
        """The Revisions tab, its diff switched between side by side and unified."""
        self.switch_tab("revisions")
        await self._mount_tab("revisions")
        self.query_one(RevisionsView).toggle_layout()

    async def graph(self, change: str) -> None:
        """The Relations tab, its graph drawn one hop deeper (`hops`) or for the next relation type (`type`)."""
        self.switch_tab("relations")
        await self._mount_tab("relations")
        view = self.query_one(RelationsView)
        if change == "hops":
            view.next_hops()
        else:
            view.next_type()

    @property
    def active_tab(self) -> str:
        return str(self.query_one(TabbedContent).active)
