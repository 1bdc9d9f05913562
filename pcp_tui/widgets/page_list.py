"""A page list that scrolls through millions of pages by fetching keyset windows as you go.

Long because: the window cache, keyset paging from either end (Home, End), the cursor, selection marks and
drawing are one widget's state, read together on every key.

Line API (render_line): only visible lines are drawn; rows arrive a window at a time from a
fetch function run in a worker thread. Rows far above the cursor are dropped so memory stays
bounded however far one scrolls (Home starts again from the top).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from rich.cells import cell_len, set_cell_size
from rich.segment import Segment
from rich.style import Style
from textual import events, work
from textual.binding import Binding
from textual.content import Content
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.worker import get_current_worker

from store import analysis

from ..messages import StoreWorkers
from .steady import SteadyScrollbars, set_virtual_size
from ..text import cut_cells, printable

# A window of rows: listed pages (store PageSummary) or search hits (store Hit); the list keeps its own copies, to
# which it adds what it caches per row (the one-line snippet), so a row on screen is a plain dict.
Row = dict[str, Any]
Fetch = Callable[[str | None], tuple[Sequence[Mapping[str, Any]], str | None]]
Piece = tuple[str, Style | None, bool]  # text, its own style (None: the base), a search match
MAX_ROWS = 20_000  # rows kept in memory; older ones are dropped from the top
DROP = 5_000
PREFETCH = 40  # fetch the next window when the cursor or the view gets this close to the end
STATUS_GLYPH = {"active": "●", "superseded": "◌", "archived": "▣", "tombstoned": "✝"}


def short_date(row: dict[str, Any]) -> str:
    """A row's day: a search hit's `date`, a listed page's sort time (both observed, else created)."""
    stamp = row.get("date") or row.get("sort_time") or row.get("observed_at") or row.get("created_at") or ""
    return stamp[:10]


_SPACES = re.compile(r"\s+")
_SHRINKS = re.compile(r"^\s+|\s{2,}")  # the runs that move what follows them (a single space stays put)


def marked_snippet(snippet: str, highlights: list[Any] | None, query: str) -> tuple[str, list[tuple[int, int]]]:
    """The snippet on one line (runs of whitespace become one space) and its marks moved along with it.

    Marks are the hit's `highlights` ([start, end] within the snippet, from the store); a hit without
    them (an older store) falls back to where the query's words occur.
    """
    text = printable(_SPACES.sub(" ", snippet).strip())  # one character for one: the marks stay where they were
    if highlights is None:
        return text, match_spans(text, query)
    runs = [m.span() for m in _SHRINKS.finditer(snippet)]
    starts = [start for start, _ in runs]
    removed = [0]  # removed[j]: characters the runs before run j took out (a leading run goes whole)
    for start, end in runs:
        removed.append(removed[-1] + (end - start) - (0 if start == 0 else 1))

    def where(i: int) -> int:  # the index in the one-line text of snippet[i]
        j = bisect_right(starts, i) - 1
        if j >= 0 and i < runs[j][1]:  # inside a run of whitespace: its one space (or 0, leading)
            return 0 if runs[j][0] == 0 else runs[j][0] - removed[j]
        return i - removed[j + 1]

    spans = []
    for pair in highlights:
        if not (isinstance(pair, (list, tuple)) and len(pair) == 2):
            continue
        start, end = max(0, int(pair[0])), min(len(snippet), int(pair[1]))
        if start < end:
            spans.append((where(start), min(len(text), where(end - 1) + 1)))
    return text, sorted(spans)


def title_marks(title: str, query: str) -> list[tuple[int, int]]:
    """The words of a title the query asked for, as the index reads both (folded, stemmed: "proofs" marks
    "proof"; a CJK character of the query marks that character); the query's function words mark nothing
    unless they are all it has ("the" does not light up "The" or the start of "Thesis")."""
    asked = list(analysis.tokens(query, b""))
    terms = {t.term for t in asked if t.cjk or not analysis.is_stop(t.term)} or {t.term for t in asked}
    return [(t.start, t.end) for t in analysis.tokens(title, b"") if t.term in terms]


def match_spans(text: str, query: str) -> list[tuple[int, int]]:
    """Where the query (or its words) occurs in text, case-insensitively."""
    terms = sorted({t for t in re.findall(r"[^\W_]+", query or "")} | {query.strip()}, key=len, reverse=True)
    spans: list[tuple[int, int]] = []
    for term in filter(None, terms):
        for m in re.finditer(re.escape(term), text, re.IGNORECASE):
            if not any(s < m.end() and m.start() < e for s, e in spans):
                spans.append((m.start(), m.end()))
    return sorted(spans)


def note_lines(note: str, width: int) -> list[str]:
    """A note wrapped at word ends to `width` cells (a word longer than that is cut into pieces)."""
    return [line.plain.rstrip() for line in Content(note).wrap(max(width, 1))] or [""]


class PageList(StoreWorkers, SteadyScrollbars, ScrollView, can_focus=True):
    """Pages (or search hits) in keyset order; the cursor row is what the inspector shows."""

    COMPONENT_CLASSES = {
        "page-list--cursor", "page-list--cursor-blurred", "page-list--meta", "page-list--match", "page-list--mark",
        "page-list--selected",
        "page-list--snippet", "page-list--note", "page-list--active", "page-list--superseded",
        "page-list--archived", "page-list--tombstoned",
    }
    BINDINGS = [
        Binding("up,k", "cursor(-1)", "Up", show=False, id="page_list.up"),
        Binding("down,j", "cursor(1)", "Down", show=False, id="page_list.down"),
        Binding("pageup", "page(-1)", "Page up", show=False, id="page_list.page_up"),
        Binding("pagedown", "page(1)", "Page down", show=False, id="page_list.page_down"),
        Binding("home", "home", "Top", show=False, id="page_list.home"),
        Binding("end", "end", "End of loaded", show=False, id="page_list.end"),
        Binding("enter", "choose", "Open", show=False, id="page_list.open"),
    ]
    cursor = reactive(0, init=False)

    class Highlighted(Message):
        """The cursor moved onto a row (None when the list is empty)."""

        def __init__(self, row: dict[str, Any] | None) -> None:
            super().__init__()
            self.row = row

    class Chosen(Message):
        def __init__(self, row: dict[str, Any]) -> None:
            super().__init__()
            self.row = row

    class Listed(Message):
        """A window landed: `count` rows so far (dropped ones included), `complete` when that is all of them."""

        def __init__(self, count: int, complete: bool) -> None:
            super().__init__()
            self.count, self.complete = count, complete

    class Window(Message):
        def __init__(self, generation: int, rows: list[dict[str, Any]], next_cursor: str | None, first: bool,
                     tail: bool = False) -> None:
            super().__init__()
            self.generation, self.rows, self.next_cursor, self.first = generation, rows, next_cursor, first
            self.tail = tail  # a window of the listing read from its other end (End): shown above what is held

    class Ranked(Message):
        """End in a ranked search: the cursor is on the last hit loaded, `count` hits ranked so far."""

        def __init__(self, count: int, more: bool) -> None:
            super().__init__()
            self.count, self.more = count, more

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.rows: list[dict[str, Any]] = []
        self.marked: set[str] = set()  # in the handoff basket (◆)
        # The selection for a bulk deletion (✓), its own column while there is one; `select_all`: every row
        # listed is selected (the selection is "everything matching the current search and filters").
        self.selected: set[str] = set()
        self.select_all = False
        self.search_query = ""
        self.row_height = 2
        self.dropped = 0
        self.empty_note = "No pages here."
        self._fetch: Fetch | None = None
        self._reverse: Fetch | None = None  # the same listing from its other end (End jumps there by keyset)
        self.tail = False  # the rows held are the listing's end, read backwards; more are above (`_prev`)
        self._prev: str | None = None  # in tail mode: the reverse listing's cursor for the rows above
        self._next: str | None = None
        self._loading = False
        self._generation = 0
        self._keep: str | None = None
        self._keep_index: int | None = None  # a quiet reload's fallback cursor when its page is gone
        self._replace = False  # a quiet reload: the next first window replaces the rows on screen
        self._styles: dict[str, Any] = {}
        self._lines: dict[tuple[Any, ...], Strip] = {}  # drawn lines by (row identity, line, width, cursor, marks)

    # --- loading ---

    def load(self, fetch: Fetch, *, query: str = "", row_height: int = 2, keep_page: str | None = None,
             empty_note: str = "No pages here.", quiet: bool = False, reverse: Fetch | None = None) -> None:
        """Start over with a new source of rows (a listing or a search).

        `quiet` (the store changed under the same listing): the rows on screen stay until the new first
        window replaces them, and the cursor stays on the same page, else at the same place.
        """
        self._generation += 1
        self._forget_lines()
        self._fetch, self.search_query, self.row_height, self.empty_note = fetch, query, row_height, empty_note
        self._reverse = reverse
        if quiet and self.tail and reverse is not None:  # the store changed while the end is shown: read it again
            current = self.current
            self._keep, self._keep_index, self._replace = (current["page_id"] if current else keep_page), \
                len(self.rows) - 1 - self.cursor, True
            self._fetch_window(self._generation, reverse, None, True)
            return
        self.tail, self._prev = False, None
        if quiet and self.rows:
            current = self.current
            self._keep = current["page_id"] if current else keep_page
            self._keep_index = self.cursor
            self._replace = True
            self._fetch_window(self._generation, fetch, None)
            return
        self._keep, self._keep_index, self._replace = keep_page, None, False
        self.rows, self._next, self.dropped = [], None, 0
        self._loading = True
        self.set_reactive(PageList.cursor, 0)
        # The virtual size (and so the scrollbar) stays until the first window lands: a search typed key by
        # key would hide the scrollbar and show it again each time, two layout passes of the whole screen.
        self.scroll_to(0, 0, animate=False)
        self.refresh()
        self._fetch_window(self._generation, fetch, None)

    @work(thread=True, exclusive=True, exit_on_error=False, group="page-window")
    def _fetch_window(self, generation: int, fetch: Fetch, after: str | None, tail: bool = False) -> None:
        from ..reads import Superseded

        try:
            window, next_cursor = fetch(after)
            rows = [dict(row) for row in window]
        except Superseded:  # a newer window was asked for (the next keystroke's search): this one is dropped
            return
        if not get_current_worker().is_cancelled:
            self.post_message(self.Window(generation, rows, next_cursor, after is None, tail))

    def _tail_window(self, message: Window) -> None:
        """A window read from the listing's end: the first one replaces the rows (cursor on the last row, or kept
        on its page), the next ones go above what is held (the view stays where it was)."""
        rows = list(reversed(message.rows))
        self._prev, self._next = message.next_cursor, None
        if message.first:
            keep, from_end = self._keep, self._keep_index
            self.rows, self.dropped, self.tail, self._replace = rows, 0, True, False
            self._keep, self._keep_index = None, None
            self._forget_lines()
            self._update_size()
            index = len(rows) - 1 - min(from_end or 0, max(0, len(rows) - 1))
            if keep is not None:
                index = next((i for i, r in enumerate(rows) if r["page_id"] == keep), index)
            self.set_reactive(PageList.cursor, max(0, index))
            self._cursor_visible()
            self.refresh()
            self.post_message(self.Highlighted(self.current))
        else:
            self.rows[:0] = rows
            self._forget_lines()
            self._update_size()
            self.set_reactive(PageList.cursor, self.cursor + len(rows))
            self.scroll_to(y=self.scroll_y + len(rows) * self.row_height, animate=False)
            self.refresh()
        self.post_message(self.Listed(len(self.rows), self._prev is None))
        self._maybe_more()

    def on_page_list_window(self, message: Window) -> None:
        message.stop()
        if message.generation != self._generation:
            return  # a window of a listing that has been replaced
        self._loading = False
        if message.tail:
            self._tail_window(message)
            return
        if message.first and self._replace:
            self.rows, self.dropped, self._replace = [], 0, False
            self._forget_lines()
        self.rows.extend(message.rows)
        self._next = message.next_cursor
        if len(self.rows) > MAX_ROWS:
            del self.rows[:DROP]
            self._forget_lines()
            self.dropped += DROP
            self.set_reactive(PageList.cursor, max(0, self.cursor - DROP))
            self.scroll_to(y=max(0, self.scroll_y - DROP * self.row_height), animate=False)
        self._update_size()
        self.refresh()
        self.post_message(self.Listed(self.dropped + len(self.rows), self._next is None))
        if message.first:
            index, kept = 0, self._keep if self._keep_index is not None else None
            if self._keep is not None:
                fallback = min(self._keep_index, max(0, len(self.rows) - 1)) if self._keep_index is not None else 0
                index = next((i for i, r in enumerate(self.rows) if r["page_id"] == self._keep), fallback)
                self._keep, self._keep_index = None, None
            self.set_reactive(PageList.cursor, index)
            self._cursor_visible()
            if kept is None or (self.current or {}).get("page_id") != kept:
                self.post_message(self.Highlighted(self.current))
        self._maybe_more()

    def _maybe_more(self) -> None:
        if self.tail:
            first_visible = self.scroll_y // max(1, self.row_height)
            if not self._loading and self._prev is not None and self._reverse is not None \
                    and min(self.cursor, first_visible) <= PREFETCH:
                self._loading = True
                self._fetch_window(self._generation, self._reverse, self._prev, True)
            return
        if self._loading or self._next is None or self._fetch is None:
            return
        last_visible = (self.scroll_y + self.size.height) // max(1, self.row_height)
        if max(self.cursor, last_visible) >= len(self.rows) - PREFETCH:
            self._loading = True
            self._fetch_window(self._generation, self._fetch, self._next)

    @property
    def more(self) -> bool:
        return self._next is not None

    @property
    def current(self) -> dict[str, Any] | None:
        return self.rows[self.cursor] if 0 <= self.cursor < len(self.rows) else None

    def update_row(self, page_id: str, **changes: Any) -> None:
        """Change a loaded row in place (after archive, revise...) without reloading the list."""
        for row in self.rows:
            if row["page_id"] == page_id:
                row.update(changes)
        self._forget_lines()
        self.refresh()

    def remove_row(self, page_id: str) -> None:
        self.rows = [r for r in self.rows if r["page_id"] != page_id]
        self._forget_lines()
        self.set_reactive(PageList.cursor, min(self.cursor, max(0, len(self.rows) - 1)))
        self._update_size()
        self.refresh()
        self.post_message(self.Highlighted(self.current))

    # --- cursor and scrolling ---

    def _update_size(self) -> None:
        below = (self._next is not None or self._loading) and not self.tail  # ("loading more…"; the tail loads above)
        lines = len(self.rows) * self.row_height + (1 if below else 0)
        # Not a layout pass of the screen for each window (a search typed key by key lands one per key):
        # only a scrollbar that comes or goes lays out (steady.py).
        set_virtual_size(self, Size(self.scrollable_content_region.width, max(lines, 1)))

    def watch_cursor(self, old: int, new: int) -> None:
        before = self.scroll_offset.y
        self._cursor_visible()
        if self.scroll_offset.y == before:  # only the two rows that changed are drawn again
            for index in (old, new):
                self.refresh_lines(index * self.row_height - before, self.row_height)
        else:
            self.refresh()
        self.post_message(self.Highlighted(self.current))
        self._maybe_more()

    def _cursor_visible(self) -> None:
        region = Region(0, self.cursor * self.row_height, self.size.width, self.row_height)
        self.scroll_to_region(region, animate=False, force=True)

    def action_cursor(self, delta: int) -> None:
        if self.rows:
            self.cursor = max(0, min(len(self.rows) - 1, self.cursor + delta))

    def action_page(self, direction: int) -> None:
        self.action_cursor(direction * max(1, self.size.height // self.row_height - 1))

    def action_home(self) -> None:
        """The first row: at once when it is held, else the listing read again from its start (keyset)."""
        if (self.dropped or (self.tail and self._prev is not None)) and self._fetch is not None:
            self.load(self._fetch, query=self.search_query, row_height=self.row_height, empty_note=self.empty_note,
                      reverse=self._reverse)
        elif self.rows:
            self.cursor = 0

    def action_end(self) -> None:
        """The last row: at once when every row is held; in a listing, read from its other end by keyset (the
        rows above load as you go up); in a ranked search, the last hit loaded, and how many are ranked."""
        if self._next is not None and self._reverse is not None and not self.tail:
            self._generation += 1
            self._loading, self._keep, self._keep_index = True, None, None
            self._fetch_window(self._generation, self._reverse, None, True)
            return
        if self.rows:
            self.cursor = len(self.rows) - 1
            if self.search_query:
                self.post_message(self.Ranked(len(self.rows) + self.dropped, self._next is not None))

    def action_choose(self) -> None:
        if self.current is not None:
            self.post_message(self.Chosen(self.current))

    def on_click(self, event: events.Click) -> None:
        index = (event.y + self.scroll_offset.y) // self.row_height
        if 0 <= index < len(self.rows):
            self.cursor = index

    def on_resize(self) -> None:
        self._update_size()

    def on_focus(self) -> None:
        self.refresh()

    def on_blur(self) -> None:
        self.refresh()

    # --- drawing ---
    #
    # A row's lines are built as segments directly (no Rich Text layout: render_line runs for every visible
    # line on every repaint, and a new search result repaints all of them on the event loop), and kept until
    # a row, the styles or the listing change, so a repaint that changes nothing here draws nothing again.

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        line = y + self.scroll_offset.y
        index, sub = divmod(line, self.row_height)
        if index >= len(self.rows):
            if not self.rows:  # the note on as many lines as it takes (a hint cut at 80x24 hid its key)
                note = note_lines("Loading…" if self._loading else self.empty_note, width - 1)
                if line < len(note):
                    return self._line([(" " + note[line], self._style("page-list--note"), False)], width, None, True)
            if index == len(self.rows) and sub == 0 and (self._next is not None or self._loading) and not self.tail:
                self.call_later(self._maybe_more)
                return self._line([(" loading more…", self._style("page-list--note"), False)], width, None, True)
            return Strip.blank(width, self._style("base"))
        row = self.rows[index]
        at_cursor = index == self.cursor
        marked, chosen = row["page_id"] in self.marked, self.select_all or row["page_id"] in self.selected
        choosing = self.select_all or bool(self.selected)
        key = (id(row), sub, width, at_cursor, at_cursor and self.has_focus, marked, chosen, choosing)
        strip = self._lines.get(key)
        if strip is None:
            cursor = None
            if at_cursor:
                cursor = self._style("page-list--cursor" if self.has_focus else "page-list--cursor-blurred")
            if sub == 0:
                strip = self._line(self._title_pieces(row, width, marked, chosen, choosing), width, cursor, False)
            elif self.search_query:
                strip = self._line(self._snippet_pieces(row), width, cursor, False)
            else:
                strip = self._line(self._meta_pieces(row), width, cursor, True)
            if len(self._lines) > 4_096:
                self._lines.clear()
            self._lines[key] = strip
        return strip

    def _forget_lines(self) -> None:
        """Drawn lines are kept by row identity: forgotten whenever a row changes or leaves the list."""
        self._lines.clear()

    def _style(self, name: str) -> Any:
        """Component and base styles, cached until the styles or the theme change (render_line is hot)."""
        style = self._styles.get(name)
        if style is None:
            style = self.rich_style if name == "base" else self.get_component_rich_style(name)
            self._styles[name] = style
        return style

    def notify_style_update(self) -> None:
        self._styles = {}
        self._forget_lines()
        super().notify_style_update()

    def _line(self, pieces: list[Piece], width: int, cursor: Style | None, ellipsis: bool) -> Strip:
        """One line of `width` cells: each piece over the widget's base style, then the cursor's, then a
        search match's (matches stay marked on the cursor row); cut at the width (with "…" if `ellipsis`)."""
        base, match = self._style("base"), self._style("page-list--match")
        segments: list[Segment] = []
        room = width
        for text, style, is_match in pieces:
            if room <= 0:
                break
            if not text:
                continue
            combined = base + style if style is not None else base
            if cursor is not None:
                combined += cursor
            if is_match:
                combined += match
            cells = cell_len(text)
            if cells > room:
                # (the "…" right after the last whole character: a wide one cut in half was a space before it)
                text = cut_cells(text, room) if ellipsis and room > 1 else set_cell_size(text, room)
                cells = cell_len(text)
            segments.append(Segment(text, combined))
            room -= cells
        if room > 0:
            segments.append(Segment(" " * room, base + cursor if cursor is not None else base))
        return Strip(segments, width)

    def _title_pieces(self, row: dict[str, Any], width: int, marked: bool, chosen: bool, choosing: bool) -> list[Piece]:
        status = row.get("lifecycle_status", "active")
        date = f" {short_date(row)} "
        title = printable(" ".join((row.get("title") or row["page_id"]).split()))
        room = max(4, width - 3 - cell_len(date) - (1 if choosing else 0))
        if cell_len(title) > room:
            title = cut_cells(title, room)  # `紧致性的…`, not `紧致性的 …` (the pad goes after it)
        pieces: list[Piece] = []
        if choosing:
            pieces.append(("✓" if chosen else " ", self._style("page-list--selected"), False))
        pieces.append(("◆" if marked else " ", self._style("page-list--mark"), False))
        pieces.append((STATUS_GLYPH.get(status, "?") + " ", self._style(f"page-list--{status}"), False))
        pieces.extend(split_marked(title, title_marks(title, self.search_query) if self.search_query else [], None))
        pieces.append((" " * max(0, room - cell_len(title)), None, False))
        pieces.append((date, self._style("page-list--meta"), False))
        return pieces

    def _meta_pieces(self, row: dict[str, Any]) -> list[Piece]:
        parts = [row.get("namespace", "")]
        if row.get("actor_type"):
            parts.append(f"by {row['actor_type']}")
        if row.get("lifecycle_status", "active") != "active":
            parts.append(row["lifecycle_status"])
        return [("    " + printable(" · ".join(parts)), self._style("page-list--meta"), False)]

    def _snippet_pieces(self, row: dict[str, Any]) -> list[Piece]:
        # The one-line snippet and its marks, worked out once per row and query.
        cached = row.get("_one_line")
        if cached is None or cached[0] != self.search_query:
            cached = (self.search_query, marked_snippet(row.get("snippet") or "", row.get("highlights"), self.search_query))
            row["_one_line"] = cached
        snippet, spans = cached[1]
        if spans and spans[0][0] > 20:
            cut = spans[0][0] - 20
            snippet = "…" + snippet[cut:]
            spans = [(s - cut + 1, e - cut + 1) for s, e in spans]
        return split_marked("    " + snippet, [(s + 4, e + 4) for s, e in spans], self._style("page-list--snippet"))


def split_marked(text: str, spans: list[tuple[int, int]], style: Style | None) -> list[Piece]:
    """`text` as pieces in `style`, the parts inside `spans` (sorted, maybe overlapping) flagged as matches."""
    pieces: list[Piece] = []
    at = 0
    for start, end in spans:
        start, end = max(start, at), min(end, len(text))
        if start >= end:
            continue
        if start > at:
            pieces.append((text[at:start], style, False))
        pieces.append((text[start:end], style, True))
        at = end
    if at < len(text):
        pieces.append((text[at:], style, False))
    return pieces
