"""The main screen: scopes on the left, pages (or search hits) in the middle, the inspector on the right.

Long because: the main screen's own state (scopes, filters, search, status line) and its actions; its window
fetchers are the piece to move to a data module."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from textual import on, work
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from rich.cells import cell_len
from textual.content import Content
from textual.widgets import Static
from textual.timer import Timer
from textual.worker import Worker, get_current_worker

from .. import commands, reading
from ..messages import (BasketChanged, OpenPage, PagesCounted, ReviewsCounted, ScopesLoaded, SelectionChecked,
                        SemanticSwitched, SelectionCounted, StoreChanged, SyncNoted)
from ..widgets.fields import Field
from ..widgets.graph import GraphView
from ..widgets.inspector import Inspector
from ..widgets.page_list import Fetch, PageList
from ..widgets.relations import RelationList
from ..widgets.scope_tree import ScopePane, ScopeTree
from ..widgets.steady import update_rows
from ..widgets.footer import FitFooter
from .curate import CurateActions
from ..shared import ACTOR_TYPES, LIFECYCLE_STATUSES, search_filters
from ..text import counted, printable, shown_path, when

if TYPE_CHECKING:
    from store.types import BulkDeleteReceipt

    from ..reads import StoreReader

ORDERS = ("recent", "oldest", "title")
REVERSED = {"recent": "oldest", "oldest": "recent"}  # (the store has no title order from Z to A)
ORDER_WORDS = {"recent": "by recent", "oldest": "oldest first", "title": "by title"}
COUNT_SHOWN_AFTER = 0.05  # seconds a count may take before the header says "counting…"
STATUSES = ("active", "all", *sorted(set(LIFECYCLE_STATUSES) - {"active"}))  # the order the filter cycles
# What a status filter asks the store for: "all" is every status, tombstoned pages included (the store's own
# "all" leaves them out), so "status all" lists every page the scope counts hold and the tombstoned ones.
STATUS_SETS: dict[str, list[str]] = {"all": list(LIFECYCLE_STATUSES)}
ACTORS = (None, *ACTOR_TYPES)
MODES = ("auto", "text", "exact")
MODE_HELP = {"auto": "ranked by relevance over any of the words", "text": "every word must occur",
             "exact": "the exact text, as a substring"}
WINDOW = 100  # rows per list window (the store's maximum list size)
SEARCH_WINDOW = 50  # hits per search window (the store's maximum)
DEBOUNCE = 0.15  # seconds of quiet typing before a search; results must land within 300 ms
DEFERRED_LOADS = 1.0  # seconds the scope counts, reviews and sync state wait at most for the first window


class SearchField(Field):
    """The search box: esc or Down leaves it for the results, as in other terminal apps (a letter typed after
    that is a key of the list, not more words of the query)."""

    BINDINGS = commands.bindings("search")

    def action_leave(self) -> None:
        screen = self.screen
        if isinstance(screen, MainScreen):
            screen.leave_search(self.value)


def statuses_of(status: str) -> list[str]:
    return STATUS_SETS.get(status, [status])


def list_fetch(reader: StoreReader, scopes: list[str] | None, status: str, order: str,
               actor: str | None) -> Fetch:
    """A page-list window fetcher over list_pages (runs in the list's worker; `reader` is PcpApp.reader's)."""
    def fetch(after: str | None) -> tuple[Sequence[Mapping[str, Any]], str | None]:
        r = reader.list_pages(scopes=scopes, status=statuses_of(status), order=order, after=after,
                 limit=WINDOW, actor_types=[actor] if actor else None)
        return r["pages"], r["next_cursor"]

    return fetch


def search_fetch(reader: StoreReader, query: str, mode: str, scopes: list[str] | None, status: str, actor: str | None,
                 dates: tuple[str, str] = ("", "")) -> Fetch:
    """A page-list window fetcher over search_pages (an empty query with a date filter lists by date)."""
    after_day, before_day = dates
    filters = search_filters(lifecycle_status=statuses_of(status), actor_types=[actor] if actor else None,
                             observed_after=after_day, observed_before=before_day)
    if not query.strip():
        mode = "temporal"  # no words: newest first, within the dates

    def fetch(after: str | None) -> tuple[Sequence[Mapping[str, Any]], str | None]:
        r = reader.search_pages(query, scopes=scopes or (), mode=mode, filters=filters,
                 limit=SEARCH_WINDOW, cursor=after)
        return r["hits"], r["next_cursor"]

    return fetch


def date_problem(after_day: str, before_day: str) -> str | None:
    """What is wrong with a date filter's two days (the store's own sentence), or None."""
    from store import ids
    from store.errors import PcpError

    try:
        for value in (after_day, before_day):
            if value.strip():
                ids.parse_time(value.strip(), "date")
    except PcpError as error:
        return error.message
    return None


class MainScreen(CurateActions):
    """Browse and curate."""

    COMMAND_SCOPE = "main"
    BINDINGS = commands.bindings("main")

    def __init__(self) -> None:
        super().__init__()
        self.scopes: list[str] | None = None
        self.scope_label = "all scopes"
        self.order, self.status, self.mode = "recent", "active", "auto"
        self.actor: str | None = None
        self.query_text = ""
        self.dates: tuple[str, str] = ("", "")  # when it happened (observed, else stored): on or after, before
        self.reviews = 0
        self.sync_state: dict[str, Any] | None = None  # sync_status, for the status line (F7 opens the sync dialog)
        self.listed: tuple[int, bool] | None = None  # rows in the list, and whether that is all of them
        self.total: tuple[tuple[Any, ...], int] | None = None  # (listing key, pages) counted by the store for the list
        self.counting = False  # a count is on its way and took long enough to say so
        self._count_timer: Timer | None = None
        self._timer: Timer | None = None
        self._deferred: Timer | None = None  # the loads that wait for the first window (on_mount)
        self._shown_status: Content | None = None
        self._status_rows = 2  # rows the list status may take (a third when the short form needs it)
        self._status_remeasure = False  # a measure once the list status is laid out is asked for
        self._shown_bottom: str | None = None  # the status line's text on screen
        # The selection for deleting many pages at once (apart from the handoff basket): pages marked one by
        # one (id -> title, in the order marked), or every page matching the search and filters of `matching`.
        self.selection: dict[str, str] = {}
        self.matching: SelectionCounted | None = None
        self._delete_when_counted = False  # Delete pressed while "select matching" was still counting
        self._first_count: Worker[None] | None = None
        self._erasing = False  # this app's bulk deletion is erasing the selection now

    def compose(self) -> ComposeResult:
        with Horizontal(id="panes"):
            yield ScopePane(id="scope-pane")  # the tree (#scopes) and the highlighted node in full
            with Vertical(id="pages-pane"):
                yield SearchField(placeholder="Search (/) · auto", id="search")
                yield Static("", id="list-status").with_tooltip(
                    "The scope tree counts every page that is not tombstoned (active, superseded and archived); "
                    "the Status filter (f) chooses which of them the list shows.")
                yield PageList(id="pages")
            yield Inspector(id="inspector")
        yield Static("", id="status-line")
        yield FitFooter(compact=True)

    def on_mount(self) -> None:
        self.app.subscribe_store_changes(self)
        # The first window of pages first (first paint); the scope counts, reviews and sync state after it
        # lands (on_page_list_listed), or a moment later if it is slow, so they never compete with it.
        self._deferred = self.set_timer(DEFERRED_LOADS, self._load_the_rest)
        self.reload_pages()
        self.query_one(PageList).focus()

    def _load_the_rest(self) -> None:
        if self._deferred is None:
            return
        self._deferred.stop()
        self._deferred = None
        self._load_scopes()
        self._load_reviews()
        self._load_sync()
        self.app.start_reads()

    # --- loading ---

    @work(thread=True, exclusive=True, exit_on_error=False, group="sync-note")
    def _load_sync(self) -> None:
        self.post_message(SyncNoted(dict(self.app.opened_store.sync_status())))

    @on(SyncNoted)
    def _sync_noted(self, message: SyncNoted) -> None:
        message.stop()
        self.sync_state = message.status
        self._show_status()

    @work(thread=True, exclusive=True, exit_on_error=False, group="scopes")
    def _load_scopes(self) -> None:
        from ..reads import Superseded, reader

        try:  # scopes are few; a store with thousands still lists them a page at a time (reads.all_scopes)
            scopes = reader(self.app, "scopes").all_scopes()
        except Superseded:
            return
        if not get_current_worker().is_cancelled:
            self.post_message(ScopesLoaded(scopes))

    @work(thread=True, exclusive=True, exit_on_error=False, group="reviews")
    def _load_reviews(self) -> None:
        from store import NotFound


        store = self.app.opened_store
        pending = {r["page_id"] for r in store.list_recommendations()["recommendations"]}
        waiting = 0  # a recommendation for a page already tombstoned waits for nothing
        for batch in reading.chunks(sorted(pending)):
            try:
                results = store.read_pages(batch, projections=("manifest",))["results"]
            except NotFound:  # every page of the batch was erased
                continue
            for res in results:
                if "revision" in res and res["revision"]["lifecycle_status"] != "tombstoned":
                    waiting += 1
        self.post_message(ReviewsCounted(waiting))

    def reload_pages(self, keep_page: str | None = None, quiet: bool = False) -> None:
        from ..reads import reader

        window_reader = reader(self.app, "page-window")
        page_list = self.query_one(PageList)
        page_list.marked = {b["page_id"] for b in self.app.basket}
        if self.matching is not None and self.matching.key != self._listing_key():
            self._set_matching(None)  # "every page matching" meant the search and filters then on screen
        if not quiet:
            self.listed = None
        if self.query_text.strip() or any(self.dates):
            fetch = search_fetch(window_reader, self.query_text, self.mode, self.scopes, self.status, self.actor, self.dates)
            page_list.load(fetch, query=self.query_text, keep_page=keep_page,
                           empty_note="No pages match.", quiet=quiet)
        else:
            self._count(quiet)
            fetch = list_fetch(window_reader, self.scopes, self.status, self.order, self.actor)
            other_end = REVERSED.get(self.order)  # End reads the listing from its other end (keyset, no offset)
            reverse = list_fetch(window_reader, self.scopes, self.status, other_end, self.actor) if other_end else None
            hint = (f"the Author filter: {self.app.key_display('actor_filter')}" if self.actor
                    else f"the Status filter: {self.app.key_display('status_filter')}")
            page_list.load(fetch, keep_page=keep_page, empty_note=f"No pages here (try {hint}).", quiet=quiet,
                           reverse=reverse)
        self._show_status()

    def _count_key(self) -> tuple[Any, ...]:
        return (tuple(self.scopes) if self.scopes is not None else None, self.status, self.actor)

    def _count(self, quiet: bool) -> None:
        """The list's real length, counted by the store off the loop; a count that takes over 50 ms shows
        "counting…" until it lands (a quiet reload keeps the last number meanwhile)."""
        key = self._count_key()
        if self.total is not None and self.total[0] != key:
            self.total = None
        if not quiet or self.total is None:
            if self._count_timer is not None:
                self._count_timer.stop()
            self._count_timer = self.set_timer(COUNT_SHOWN_AFTER, self._say_counting)
        self._count_pages(key)

    def _say_counting(self) -> None:
        if self.total is None or self.total[0] != self._count_key():
            self.counting = True
            self._show_status()

    @work(thread=True, exclusive=True, exit_on_error=False, group="count")
    def _count_pages(self, key: tuple[Any, ...]) -> None:
        scopes, status, actor = key
        counted = self.app.opened_store.count_pages(scopes=list(scopes) if scopes is not None else None,
                                             status=statuses_of(status), actor_types=[actor] if actor else None)
        if not get_current_worker().is_cancelled:
            self.post_message(PagesCounted(key, counted["pages"]))

    @on(PagesCounted)
    def _pages_counted(self, message: PagesCounted) -> None:
        message.stop()
        if message.key != self._count_key():
            return  # the scope or a filter changed meanwhile
        if self._count_timer is not None:
            self._count_timer.stop()
        self.total, self.counting = (message.key, message.pages), False
        self._show_status()

    def on_resize(self) -> None:
        self.call_after_refresh(self._show_status)  # the status line's path fits the new width

    def _show_status(self) -> None:
        # The count first, then the filters, the search words last: on a narrow pane the line wraps (two rows,
        # three when even the short form needs them), and what is cut (if anything) is the query, which the
        # search box shows anyway.
        status = self.query_one("#list-status", Static)
        width = status.content_size.width
        if width <= 0 and not self._status_remeasure:  # not laid out yet: measured again once it is (the
            self._status_remeasure = True  # form depends on the width, and the same state must read the same)
            self.call_after_refresh(self._remeasure_status)
        line, rows = self._status_line(compact=False), 2
        # The search words may be cut (the search box shows them); when what comes before them takes more than
        # the two rows, the short form, so the filters and the order stay in sight, in a third row if need be.
        if width > 0 and len(self._status_line(compact=False, words=False).wrap(width)) > 2:
            line = self._status_line(compact=True)
            rows = 3 if len(self._status_line(compact=True, words=False).wrap(width)) > 2 else 2
        if rows != self._status_rows:
            self._status_rows = rows
            status.styles.max_height = rows
            self._shown_status = None
        if line != self._shown_status:  # each page-list window reports its count: repaint only what changed
            self._shown_status = line
            update_rows(status, line, max_rows=rows)  # a layout pass only when its rows change
        basket = len(self.app.basket)
        parts = [f"basket {basket} ({self.app.key_display('handoff')})"]
        sync = self.sync_state
        if sync and (sync["paired"] or sync["peers"] or sync["conflicts"]):  # a store that syncs
            conflicts = len(sync["conflicts"])
            parts.append(f"synced {when(sync['last_sync'])}"
                         + (f", {conflicts:,}{'+' if conflicts >= 1000 else ''} in conflict" if conflicts else "")
                         + f" ({self.app.key_display('sync')})")
        if self.reviews:
            parts.append(f"{self.reviews} tombstone recommendation{'s' if self.reviews != 1 else ''} "
                         f"({self.app.key_display('recommendations')})")
        parts.append(f"help {self.app.key_display('help')}")
        bar = self.query_one("#status-line", Static)
        width, demo = bar.content_size.width, "  (demo)" if self.app.demo_mode else ""
        shortest = cell_len(shown_path(self.app.opened_store.path, 1)) + len(demo)  # "…" and the file name
        if width > 0 and shortest + cell_len("  ·  " + "  ·  ".join(parts)) > width:
            parts.pop()  # help (F1 and the palette work anyway) before the basket or the recommendations
        rest = "  ·  " + "  ·  ".join(parts)
        where = shown_path(self.app.opened_store.path, width - cell_len(rest) - len(demo))
        bottom = where + demo + rest
        if bottom != self._shown_bottom:  # a repaint at the bottom as well as the top re-renders all between
            self._shown_bottom = bottom
            bar.update(Content(bottom), layout=False)  # one line

    def _remeasure_status(self) -> None:
        self._status_remeasure = False
        if self.query_one("#list-status", Static).content_size.width > 0:
            self._shown_status = None
            self._show_status()

    def _status_line(self, *, compact: bool, words: bool = True) -> Content:
        """The scope, the count, the filters, the order or the search. Compact (when the full form takes more
        than the two rows the line has): only the filters that are set (no "status active", no "by anyone"),
        and the tombstoned count shorter."""
        parts = []
        listing = not (self.query_text.strip() or any(self.dates))
        total = self.total[1] if listing and self.total is not None and self.total[0] == self._count_key() else None
        if total is None and listing and self.counting:
            parts.append(" · counting…")
        elif self.listed is not None or total is not None:
            count, complete = (total, True) if total is not None else (self.listed or (0, False))
            held = self._scope_count()
            if not complete:
                parts.append(f" · {count:,}+ pages")
            elif held is not None and self.status == "active" and count < held:
                parts.append(f" · {count:,} of {held:,} pages")  # the others are archived or superseded
            elif held is not None and self.status == "all" and count > held:
                parts.append(f" · {count:,} pages, {count - held:,} tombstoned" if compact
                             else f" · {count:,} pages ({held:,} + {count - held:,} tombstoned)")
            else:
                parts.append(f" · {counted(count, 'page')}")
        if not compact or self.status != "active":  # the short form names only the filters that are set
            parts.append(f" · status {self.status}")
        if self.actor or not compact:
            parts.append(f" · by {self.actor or 'anyone'}")
        after_day, before_day = self.dates
        if any(self.dates):
            parts.append(" · " + (f"from {after_day}" if after_day else "") + (" " if all(self.dates) else "")
                         + (f"before {before_day}" if before_day else ""))
        if self.query_text.strip():
            parts.append(f" · search ({self._matched_by()}) “{self.query_text if words else ''}”")  # the query is cut, not the mode
        else:
            parts.append(" · newest first" if any(self.dates) else f" · {ORDER_WORDS[self.order]}")
        chosen, picked = self.selected_count(), ""
        if chosen:  # before the filters: on a narrow pane it is the search words that are cut, never this
            keys = f"{self.app.key_display('delete')} deletes, {self.app.key_display('clear_selection')} clears"
            what = "every match" if self.matching is not None else "selected"
            picked = f" · ✓ {chosen:,} {what}" + ("" if compact else f" ({keys})")  # (the footer has the keys)
        return Content.assemble((printable(self.scope_label), "bold"), *([(picked, "bold")] if picked else []),
                                *parts)

    def _matched_by(self) -> str:
        """The search's mode as its hits say it: `auto+semantic` when the store re-ordered them by meaning (the
        owner's `ctrl+g`, an English question), else the mode asked for."""
        rows = self.query_one(PageList).rows
        semantic = self.mode == "auto" and bool(rows) and rows[0].get("matched_by") == "auto+semantic"
        return "auto+semantic" if semantic else self.mode  # (auto's fallback to a substring match says auto)

    def _scope_count(self) -> int | None:
        """What the scope tree counts for the listing's scopes, when the list is comparable (no search, filter)."""
        if self.query_text.strip() or any(self.dates) or self.actor:
            return None
        scopes = self.query_one(ScopeTree).scopes
        wanted = None if self.scopes is None else set(self.scopes)
        return sum(s.get("page_count", 0) for s in scopes if wanted is None or s["namespace"] in wanted)

    def on_page_list_listed(self, message: PageList.Listed) -> None:
        self.listed = (message.count, message.complete)
        self._show_status()
        if self._deferred is not None:
            self.call_after_refresh(self._load_the_rest)  # once the first window is drawn

    @on(ScopesLoaded)
    def _scopes_loaded(self, message: ScopesLoaded) -> None:
        message.stop()
        self.query_one(ScopeTree).show_scopes(message.scopes)
        self._show_status()  # the counts compared with the list's

    @on(ReviewsCounted)
    def _reviews_counted(self, message: ReviewsCounted) -> None:
        message.stop()
        self.reviews = message.count
        self._show_status()

    # --- events from the panes ---

    def on_page_list_highlighted(self, message: PageList.Highlighted) -> None:
        self.list_highlighted = message.row["page_id"] if message.row else None
        self.query_one(Inspector).show(self.list_highlighted)

    def on_page_list_ranked(self, message: PageList.Ranked) -> None:
        more = "; more are ranked as you go down" if message.more else ", every one that matches"
        self.notify(f"The last of {counted(message.count, 'hit')} ranked so far{more}.", title="Search",
                    timeout=4)

    def on_page_list_chosen(self, message: PageList.Chosen) -> None:
        self.query_one(Inspector).open()

    def on_scope_tree_scopes_chosen(self, message: ScopeTree.ScopesChosen) -> None:
        self.scopes, self.scope_label = message.namespaces, message.label
        self.reload_pages()

    def on_input_changed(self, event: Field.Changed) -> None:
        if event.input.id != "search":
            return
        if self._timer is not None:
            self._timer.stop()
        self._timer = self.set_timer(DEBOUNCE, lambda: self._search(event.value))

    def on_input_submitted(self, event: Field.Submitted) -> None:
        if event.input.id == "search":
            if self._timer is not None:
                self._timer.stop()
            self._search(event.value)
            self.query_one(PageList).focus()

    def leave_search(self, text: str) -> None:
        """From the search box to the list; what was typed is searched now (no debounce left to wait for)."""
        if self._timer is not None:
            self._timer.stop()
        self._search(text)
        self.query_one(PageList).focus()

    def action_clear_search(self) -> None:
        self.query_one("#search", Field).value = ""
        if self._timer is not None:
            self._timer.stop()
        self._search("")
        self.refresh_bindings()

    def _search(self, text: str) -> None:
        if text != self.query_text:
            had = bool(self.query_text)
            self.query_text = text
            self.reload_pages()
            if had != bool(text):
                self.refresh_bindings()  # "esc Clear search" comes and goes with a search

    def on_relation_list_follow(self, message: RelationList.Follow) -> None:
        self.post_message(OpenPage(message.page_id))

    def on_graph_view_follow(self, message: GraphView.Follow) -> None:
        self.post_message(OpenPage(message.page_id))

    def on_open_page(self, message: OpenPage) -> None:
        self.query_one(Inspector).show(message.page_id)

    @on(StoreChanged)
    def _store_changed(self, message: StoreChanged) -> None:
        """Scopes, counts, the list (cursor kept on its page) and the inspector's page, as the store has them now."""
        message.stop()
        if message.audit_only:
            return
        self._load_scopes()
        self._load_reviews()
        self._load_sync()
        self.reload_pages(quiet=True)
        self.query_one(Inspector).reload()  # an erased page clears it
        if self.matching is not None:  # a page written or erased elsewhere may match: the ✓ count follows
            self._count_matching(self.matching.filters, self.matching.label, self.matching.key, True)
        # A page selected one by one may have been erased elsewhere: it leaves the selection. (Not while this
        # app's bulk deletion runs: it takes its pages out itself, and would read erased pages back.)
        if self.selection and not self._erasing:
            self._check_selection(list(self.selection))

    @work(thread=True, exclusive=True, exit_on_error=False, group="selection-check")
    def _check_selection(self, page_ids: list[str]) -> None:
        from store import NotFound

        found: set[str] = set()
        for batch in reading.chunks(page_ids):
            try:
                results = self.app.opened_store.read_pages(batch, projections=("manifest",))["results"]
            except NotFound:  # every page of the batch was erased
                continue
            found |= {res["revision"]["page_id"] for res in results if "revision" in res}
        self.post_message(SelectionChecked(page_ids, found))

    @on(SelectionChecked)
    def _selection_checked(self, message: SelectionChecked) -> None:
        message.stop()
        gone = [page_id for page_id in message.checked if page_id in self.selection and page_id not in message.found]
        for page_id in gone:
            del self.selection[page_id]
        if gone:
            self._show_selection()

    @on(BasketChanged)
    def _basket_changed(self, message: BasketChanged) -> None:
        message.stop()
        page_list = self.query_one(PageList)
        page_list.marked = {b["page_id"] for b in self.app.basket}
        page_list.refresh()
        self._show_status()

    def on_screen_resume(self) -> None:
        if getattr(self.app, "store", None) is not None:
            self.query_one(PageList).marked = {b["page_id"] for b in self.app.basket}
            self.query_one(PageList).refresh()
            self._show_status()

    # --- actions (declared in commands.py) ---

    def action_focus_search(self) -> None:
        self.query_one("#search", Field).focus()

    def action_focus_scopes(self) -> None:
        if not self.query_one(ScopeTree).display:
            self._show_sidebar(True)
        self.query_one(ScopeTree).focus()

    def action_toggle_sidebar(self) -> None:
        self._show_sidebar(not self.query_one(ScopeTree).display)

    def _show_sidebar(self, shown: bool) -> None:
        """The user's choice wins over the width rule (app.tcss) until the app ends."""
        self.set_class(shown, "-sidebar-shown")
        self.set_class(not shown, "-sidebar-hidden")
        tree = self.query_one(ScopeTree)
        if not shown and tree.has_focus:
            self.query_one(PageList).focus()
        self.call_after_refresh(self._remeasure_status)  # the list's pane changed width: its status line too

    def action_focus_pages(self) -> None:
        self.query_one(PageList).focus()

    def show_everything(self) -> None:
        """Every scope, no search (after an import: its pages are listed, not the search that was on)."""
        search = self.query_one("#search", Field)
        if self._timer is not None:
            self._timer.stop()
        search.value = ""
        self.query_text = ""
        self.refresh_bindings()
        self.action_all_scopes()

    def action_all_scopes(self) -> None:
        self.scopes, self.scope_label = None, "all scopes"
        self.reload_pages()

    def action_cycle_order(self) -> None:
        if self.query_text.strip() or any(self.dates):  # (the order the status line says: it would not change)
            what = "Search results are ranked by relevance" if self.query_text.strip() else \
                "With a date filter the pages are listed newest first"
            self.notify(f"{what}; the order (o) applies to the page list without them.")
            return
        self.order = ORDERS[(ORDERS.index(self.order) + 1) % len(ORDERS)]
        self.reload_pages()

    def action_cycle_status(self) -> None:
        self.status = STATUSES[(STATUSES.index(self.status) + 1) % len(STATUSES)]
        self._cycle_hint("Status", list(STATUSES), self.status, "status_filter")
        self.reload_pages()

    def action_cycle_actor(self) -> None:
        self.actor = ACTORS[(ACTORS.index(self.actor) + 1) % len(ACTORS)]
        self._cycle_hint("Author", [a or "anyone" for a in ACTORS], self.actor or "anyone", "actor_filter")
        self.reload_pages()

    def _cycle_hint(self, what: str, states: list[str], now: str, command_id: str) -> None:
        """`Status: active → all → [archived] → superseded → tombstoned (f steps on)`: a key that cycles says
        every state, where it is and what comes next (report 21: five states, no hint of the next)."""
        cycle = " → ".join(f"[{s}]" if s == now else s for s in states)
        self.notify(f"{what}: {cycle} ({self.app.key_display(command_id)} steps on)", timeout=3)

    def action_dates(self) -> None:
        """Filter by when it happened (the source's time when known, else when it was stored)."""
        from .confirm import FormScreen

        screen = FormScreen(
            "Filter by date",
            "When it happened: the time the source gives (observed), else when it was stored; the dates in the "
            "list are these. Days as YYYY-MM-DD (or a full RFC 3339 time); leave a field empty for no limit, "
            "both empty to show every date.",
            confirm_label="Filter", danger=False, optional=True,
            fields=[("after", "On or after", self.dates[0]), ("before", "Before", self.dates[1])],
            check=lambda answers: date_problem(answers["after"], answers["before"]))

        def answered(yes: bool | None) -> None:
            if yes:
                self.set_dates(screen.answers["after"], screen.answers["before"])

        self.app.push_screen(screen, answered)

    def set_dates(self, after_day: str, before_day: str) -> bool:
        """Check and apply a date filter; False (and a message) when a date is not one."""
        problem = date_problem(after_day, before_day)
        if problem:
            self.notify(problem, title="Dates", severity="warning")
            return False
        self.dates = (after_day.strip(), before_day.strip())
        self.reload_pages()
        return True

    def action_cycle_search_mode(self) -> None:
        self.set_search_mode(MODES[(MODES.index(self.mode) + 1) % len(MODES)])

    def set_search_mode(self, mode: str) -> None:
        """auto (relevance over any word), text (every word) or exact (substring); the palette picks one directly."""
        if mode not in MODES:
            return
        self.mode = mode
        self.query_one("#search", Field).placeholder = f"Search (/) · {mode}"
        if self.query_text.strip():
            self.notify(f"Search mode {mode}: {MODE_HELP[mode]}.", title="Search", timeout=3)
        self.reload_pages()

    def action_toggle_semantic(self) -> None:
        self._toggle_semantic()

    @work(thread=True, exclusive=True, exit_on_error=False, group="semantic")
    def _toggle_semantic(self) -> None:
        store = self.app.opened_store  # refused in one line (not installed, a bad model file): the worker's error
        self.post_message(SemanticSwitched(dict(store.set_semantic(not store.semantic_status()["on"]))))

    @on(SemanticSwitched)
    def _semantic_switched(self, message: SemanticSwitched) -> None:
        message.stop()
        if message.status.get("on"):
            self.notify("On: auto search re-orders its first 50 word matches by meaning (English questions).",
                        title="Meaning", timeout=4)
        else:
            self.notify("Off: auto search ranks by the words alone.", title="Meaning", timeout=4)
        current = self.query_one(PageList).current
        self.reload_pages(keep_page=current["page_id"] if current else None)  # the list shows the new order

    def action_refresh(self) -> None:
        current = self.query_one(PageList).current
        self._load_scopes()
        self._load_reviews()
        self.reload_pages(keep_page=current["page_id"] if current else None)

    def action_toggle_basket(self) -> None:
        row = self.query_one(PageList).current
        if row is None:
            return
        basket = self.app.basket
        if any(b["page_id"] == row["page_id"] for b in basket):
            basket[:] = [b for b in basket if b["page_id"] != row["page_id"]]
        elif row.get("lifecycle_status") == "tombstoned":
            self.notify("A tombstoned page is withdrawn from handoff bundles; bring it back first "
                        f"({self.app.key_display('tombstone')}).", severity="warning", title="Basket")
            return
        else:
            basket.append({"page_id": row["page_id"], "title": row.get("title") or row["page_id"],
                           "namespace": row.get("namespace", "")})
        page_list = self.query_one(PageList)
        page_list.marked = {b["page_id"] for b in basket}
        page_list.refresh()
        self._show_status()
        page_list.action_cursor(1)

    # --- the selection for deleting many pages at once ---

    def selected_count(self) -> int:
        return self.matching.pages if self.matching is not None else len(self.selection)

    def _listing_key(self) -> tuple[Any, ...]:
        """What the list shows: a "select every match" holds while this stays the same."""
        return (tuple(self.scopes) if self.scopes is not None else None, self.status, self.actor,
                self.query_text.strip(), self.mode, self.dates)

    def _show_selection(self) -> None:
        page_list = self.query_one(PageList)
        page_list.selected = set(self.selection)
        page_list.select_all = self.matching is not None
        page_list.refresh()
        self._show_status()
        self.refresh_bindings()  # the footer shows "Clear selection" only while there is one

    def _set_matching(self, matching: SelectionCounted | None) -> None:
        self.matching = matching
        self._show_selection()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "clear_selection":
            return bool(self.selection) or self.matching is not None
        if action == "clear_search":
            return bool(self.query_text) and not (self.selection or self.matching is not None)
        return True

    def footer_pins(self) -> set[str]:
        """Footer keys kept at any width besides help and quit: what acts on the selection, or on the search."""
        if self.selection or self.matching is not None:
            return {"delete", "clear_selection"}
        return {"clear_search"}

    def action_toggle_select(self) -> None:
        page_list = self.query_one(PageList)
        row = page_list.current
        if row is None:
            return
        if self.matching is not None:
            self.notify(f"Every match is selected; {self.app.key_display('clear_selection')} clears that, then "
                        f"{self.app.key_display('select')} selects pages one by one.", severity="warning")
            return
        if row["page_id"] in self.selection:
            del self.selection[row["page_id"]]
        else:
            self.selection[row["page_id"]] = row.get("title") or row["page_id"]
        self._show_selection()
        page_list.action_cursor(1)

    def action_clear_selection(self) -> None:
        self.selection.clear()
        self._set_matching(None)

    def matching_filters(self) -> tuple[dict[str, Any] | None, str]:
        """The bulk-deletion filter of the current search and filters, and a label (None and why not)."""
        query = self.query_text.strip()
        if query and self.mode == "auto":
            return None, (f"Deleting selects with search mode text or exact (auto ranks any word and has no edge); "
                          f"{self.app.key_display('search_mode')} switches it.")
        filters: dict[str, Any] = {"lifecycle_status": statuses_of(self.status)}
        words = []
        if self.scopes is not None:
            filters["scopes"] = list(self.scopes)
            words.append(f"in {self.scope_label}")
        if query:
            filters["query"], filters["mode"] = query, self.mode
            words.insert(0, f"matching “{query}” ({self.mode}, any revision)")
        if self.actor:
            filters["actor_types"] = [self.actor]
            words.append(f"by {self.actor}")
        after_day, before_day = self.dates
        if after_day:
            filters["observed_after"] = after_day
            words.append(f"from {after_day}")
        if before_day:
            filters["observed_before"] = before_day
            words.append(f"before {before_day}")
        if len(filters) == 1:
            return None, ("Choose a scope, a search or a filter first: deleting never selects every page of the "
                          "store at once.")
        words.append(f"status {self.status}")
        return filters, "every page " + ", ".join(words)

    def action_select_matching(self) -> None:
        filters, label = self.matching_filters()
        if filters is None:
            self.notify(label, title="Select", severity="warning")
            return
        self._delete_when_counted = False
        self._first_count = self._count_matching(filters, label, self._listing_key())

    def _counting_matches(self) -> bool:
        return self._first_count is not None and not self._first_count.is_finished

    @work(thread=True, exclusive=True, exit_on_error=False, group="select-matching")
    def _count_matching(self, filters: dict[str, Any], label: str, key: tuple[Any, ...], again: bool = False) -> None:
        plan = self.app.opened_store.plan_bulk_delete(filters)
        self.post_message(SelectionCounted(filters, label, plan["pages"], key, again))

    @on(SelectionCounted)
    def _matching_counted(self, message: SelectionCounted) -> None:
        message.stop()
        delete, self._delete_when_counted = self._delete_when_counted and not message.again, False
        if not message.again:
            self._first_count = None  # (counted: the worker may not have ended yet)
        if message.key != self._listing_key():
            return  # the search or filters changed meanwhile
        if message.again:  # the store changed: "every match" is counted again (pages came or went)
            if self.matching is not None:
                self._set_matching(message if message.pages else None)
            return
        if message.pages == 0:
            self.notify("Nothing matches; nothing is selected.", title="Select", severity="warning")
            return
        self.selection.clear()
        self._set_matching(message)
        self.notify(f"Selected {counted(message.pages, 'page')}: {message.label}.", title="Select")
        if delete:
            self.action_delete()

    def action_delete(self) -> None:
        if self._counting_matches():  # (M then D at once: the delete is of the matches, once they are counted)
            self._delete_when_counted = True
            return
        if not (self.selection or self.matching is not None):
            super().action_delete()
            return
        from .bulk_delete import BulkDeleteScreen

        if self.matching is not None:
            screen = BulkDeleteScreen(dict(self.matching.filters), self.matching.label, follow=self._bulk_erasing)
        else:
            label = f"{counted(len(self.selection), 'page')} selected one by one"
            screen = BulkDeleteScreen({"page_ids": list(self.selection)}, label, dict(self.selection),
                                      follow=self._bulk_erasing)
        self.app.push_screen(screen, self._after_bulk_delete)

    def _bulk_erasing(self, receipt: BulkDeleteReceipt, finished: bool) -> None:
        """While the bulk-delete dialog is up. Erasing starts: no page of the set is shown in the inspector until
        it ends (read back once erased, each would leave a failed read in the audit log). It ends or stops: the erased
        pages leave the selection, the list, the basket and every view (StoreChanged), under the receipt."""
        inspector = self.query_one(Inspector)
        self._erasing = not finished
        if not finished:
            inspector.withhold(set(receipt["page_ids"][receipt["pages_done"]:]))
            return
        erased = receipt["page_ids"][:receipt["pages_done"]]
        # Still withheld: the erased pages (each row removed below makes the list highlight its next row, which
        # may be one of them until its own turn); after a stop, the pages left are shown again.
        inspector.withhold(set(erased))
        page_list = self.query_one(PageList)
        gone = set(erased)
        for page_id in gone & {r["page_id"] for r in page_list.rows}:
            page_list.remove_row(page_id)
        for page_id in erased:
            self.selection.pop(page_id, None)
        self.matching = None  # what is left of it (after a stop) is recorded in the receipt, for a resume
        self._show_selection()
        self.app.forget_pages(erased)  # (the inspector let go of them above: withhold)
        if erased:
            self.app.announce_change(None, removed=True)

    def _after_bulk_delete(self, receipt: BulkDeleteReceipt | None) -> None:
        """The dialog closed: what it did, in a toast (the views followed it while it was up)."""
        self._erasing = False  # (an erasure that failed never said it finished)
        self.query_one(Inspector).withhold(set())  # (an erasure that failed: its pages are shown again)
        if not receipt:
            return
        erased = receipt["page_ids"][:receipt["pages_done"]]
        if receipt["state"] == "complete":
            self.notify(f"Erased {counted(len(erased), 'page')}; receipt {receipt['receipt_id']}.",
                        title="Deleted")
        else:
            self.notify(f"Stopped after {len(erased):,} of {receipt['pages']:,} pages; `pcp delete --resume "
                        f"{receipt['receipt_id']}` continues it.", title="Deleted", severity="warning", timeout=10)

    def action_tab(self, tab: str) -> None:
        self.query_one(Inspector).switch_tab(tab)

    async def action_toggle_diff(self) -> None:
        await self.query_one(Inspector).toggle_diff()

    async def action_graph_hops(self) -> None:
        await self.query_one(Inspector).graph("hops")

    async def action_graph_type(self) -> None:
        await self.query_one(Inspector).graph("type")
