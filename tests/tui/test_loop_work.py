"""Less work on the event loop (issue 13, item 15): what the app skips or defers, and that nothing shown changes.

The figures are bench/tui_bench.py's; these tests pin the mechanisms: the inspector's hidden tabs are mounted
after first paint (and at once when opened first), the footer composes its keys again only when they change.
"""

from __future__ import annotations

import asyncio
from functools import partial

import pytest

from helpers import open_in_tab, page_list, select_page, settle, until
from rich.cells import cell_len
from pcp_tui.widgets import inspector as inspector_module
from pcp_tui.widgets.inspector import TABS, Inspector
from pcp_tui.widgets.revisions import RevisionsView
from textual.widgets._footer import FooterKey

SIZE = (120, 40)


async def test_hidden_tabs_are_mounted_after_first_paint_one_by_one(demo_store, make_app, monkeypatch):
    store, refs = demo_store
    monkeypatch.setattr(inspector_module, "LAZY_TABS_AFTER", 3600)  # the test starts them itself
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        inspector = app.screen.query_one(Inspector)
        assert inspector.tab_ready("content")
        assert not any(inspector.tab_ready(t) for t in TABS[1:])  # first paint: the Content tab only
        assert not app.screen.query(RevisionsView)
        app.collector.input()  # a key just now, while the app starts: mounted all the same
        await inspector._mount_next_tab()  # what the timer runs: one tab, then the next one a frame later
        assert [t for t in TABS if inspector.tab_ready(t)] == ["content", "revisions"]
        inspector._mounted_at -= inspector_module.LAZY_TAB_STARTING  # started a while ago
        app.collector.input()  # a key just now: the next mount waits for a pause
        await inspector._mount_next_tab()
        assert not inspector.tab_ready("provenance")
        app.collector.last_input -= inspector_module.LAZY_TAB_QUIET
        await inspector._mount_next_tab()
        assert [t for t in TABS if inspector.tab_ready(t)] == ["content", "revisions", "provenance"]
        await until(pilot, lambda: all(inspector.tab_ready(t) for t in TABS), "every tab mounted")
        await pilot.press("2")  # mounted while the page was shown: drawn when opened
        await settle(app, pilot)
        assert app.screen.query_one("#history").option_count == len(inspector.page["full"]["history"])


async def test_a_tab_opened_before_it_is_mounted_shows_the_page(demo_store, make_app, monkeypatch):
    store, refs = demo_store
    monkeypatch.setattr(inspector_module, "LAZY_TABS_AFTER", 3600)  # none mounted yet when the key comes
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        inspector = app.screen.query_one(Inspector)
        assert not inspector.tab_ready("raw")
        await pilot.press("6")
        await settle(app, pilot)
        assert inspector.tab_ready("raw")
        assert inspector.page["page_id"] in app.screen.query_one("#raw-text").text
        await pilot.press("v")  # the diff layout toggle before the Revisions tab was ever mounted
        await settle(app, pilot)
        assert inspector.active_tab == "revisions" and inspector.tab_ready("revisions")


async def test_a_cleared_inspector_before_its_tabs_exist_and_after(demo_store, make_app, monkeypatch):
    store, refs = demo_store
    monkeypatch.setattr(inspector_module, "LAZY_TABS_AFTER", 3600)
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        inspector = app.screen.query_one(Inspector)
        inspector.show(None)  # nothing selected, no tab mounted but Content
        await pilot.press("4")
        await settle(app, pilot)
        assert inspector.tab_ready("relations") and inspector.page is None
        assert "No page selected" in str(app.screen.query_one("#inspector-title").render())


async def test_the_footer_composes_its_keys_again_only_when_they_change(demo_store, make_app):
    store, refs = demo_store
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        page_list(app).focus()
        await settle(app, pilot)
        keys = list(app.screen.query(FooterKey))
        assert "Basket" in [k.description for k in keys]
        app.screen.refresh_bindings()  # what every focus change and selection does: nothing shown changes
        await settle(app, pilot)
        assert list(app.screen.query(FooterKey)) == keys  # the same widgets: not composed again
        before = [(k.key, k.description) for k in keys]
        await pilot.press("ctrl+s")  # the scope tree takes space (expand): Basket leaves the footer
        await settle(app, pilot)
        now = list(app.screen.query(FooterKey))
        assert [(k.key, k.description) for k in now] == [kd for kd in before if kd[1] != "Basket"]
        assert now[0] is keys[0]  # changed in place, not composed again
        page_list(app).focus()
        await settle(app, pilot)
        keys = list(app.screen.query(FooterKey))
        assert [(k.key, k.description) for k in keys] == before  # and back, the key added again
        assert all(k.display for k in keys[:4]) and all(k.size.width > 0 for k in keys[:4])
        await pilot.press("m")  # a selection: "Clear selection" joins the footer
        await settle(app, pilot)
        assert any("Clear selection" in k.description for k in app.screen.query(FooterKey))


async def test_a_long_page_is_rendered_off_the_loop_and_drawn_by_the_window(demo_store, make_app):
    from pcp_tui.widgets import document

    store, refs = demo_store
    body = "# Long page\n\n" + "\n\n".join(f"Paragraph {i} of the long page." for i in range(3000)) + "\n\nThe end."
    assert len(body) > document.INLINE_LIMIT
    long_id = store.write_page("user:me", content=body, media_type="text/markdown")["page_id"]
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        view = app.screen.query_one("#content-view", document.Document)
        short = view.drawn_lines
        assert short  # a short page: rendered at once
        view.show(partial(inspector_module.markdown, body), body)
        assert view.rendering and view._strips == []  # the loop did not render it, and nothing old stays
        await settle(app, pilot)
        assert not view.rendering
        lines = view.drawn_lines
        assert "Long page" in lines[0] and lines[-1] == "The end." and len(lines) > 3000
        assert view.virtual_size.height == len(lines) and view.size.height < len(lines)
        assert view.show_vertical_scrollbar  # the scrollbar came with the long text (no layout pass otherwise)
        view.focus()
        await pilot.press("end")  # the keyboard scrolls it, as it did the scroll container before
        await until(pilot, lambda: "The end." in view.render_line(view.size.height - 1).text, "the last line drawn")
        # End at the end of the inspector's page (the newest: this long one, past one read's limit) reads the rest
        # of it off the loop, and the inspector extends the view with it: let that land first (under load it
        # landed after the short text below and drew the long page over it)
        await settle(app, pilot)
        # a newer page shown while the long one is still rendering: the late render is dropped
        view.show(partial(inspector_module.markdown, body), body)
        view.show("A short one.", "A short one.")
        await settle(app, pilot)
        assert view.drawn_lines == ["A short one."]
        await until(pilot, lambda: not view.show_vertical_scrollbar and view.virtual_size.height == 1,
                    "the scrollbar gone with the long text")
        del long_id


async def test_the_document_renders_again_at_its_new_width(demo_store, make_app):
    from pcp_tui.widgets import document

    store, refs = demo_store
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        view = app.screen.query_one("#content-view", document.Document)
        text = " ".join(f"word{i}" for i in range(200))
        view.show(text, text)
        await settle(app, pilot)
        wide = len(view._strips)
        await pilot.resize_terminal(80, 24)
        await settle(app, pilot)
        assert len(view._strips) > wide  # narrower: more lines, each within the new width
        assert max(s.cell_length for s in view._strips) <= view.scrollable_content_region.width


async def test_the_diff_sides_are_chosen_with_keys_on_the_history(demo_store, make_app):
    """From and To are one line of text (no selects: a page shown restyled eight widgets): each page shows the
    newest revision against the one before; `f` / `t` on a revision of the list choose the sides."""
    from pcp_tui.widgets.diff import DiffView

    store, refs = demo_store
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await open_in_tab(app, pilot, refs["alpha-outline"], "2")
        view = app.screen.query_one(RevisionsView)
        history = view.history
        assert len(history) == 3 and view.sides == (history[1]["revision_id"], history[0]["revision_id"])
        line = str(app.screen.query_one("#diff-controls").render())
        assert line.startswith("From #2") and "To #3" in line  # (with the ids when there is room: test_browse)
        listing = app.screen.query_one("#history")
        listing.focus()
        listing.highlighted = 2  # the oldest
        await pilot.press("f")
        await settle(app, pilot)
        assert view.sides == (history[2]["revision_id"], history[0]["revision_id"])
        assert "From #1" in str(app.screen.query_one("#diff-controls").render())
        diff = app.screen.query_one(DiffView).drawn_text
        assert "drafting" in diff and "附录" in diff  # the oldest against the newest
        listing.highlighted = 1
        await pilot.press("t")
        await settle(app, pilot)
        assert view.sides == (history[2]["revision_id"], history[1]["revision_id"])
        await select_page(app, pilot, refs["alpha-proof"])  # another page: its own newest against the one before
        await settle(app, pilot)
        assert view.sides is not None and view.sides[1] == view.history[0]["revision_id"]


async def test_markdown_the_renderer_cannot_draw_is_shown_as_its_text(demo_store, make_app):
    from pcp_tui.widgets import document

    store, refs = demo_store
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        view = app.screen.query_one("#content-view", document.Document)
        for deep in ("> " * 1500 + "deep inline", "> " * 4000 + "deep in a worker"):  # both sides of INLINE_LIMIT
            view.show(partial(inspector_module.markdown, deep), deep)
            await settle(app, pilot)
            assert "deep" in " ".join(view.drawn_lines)  # Markdown nested that deep draws nothing: the text instead


async def test_page_list_lines_are_drawn_once_and_again_when_they_change(demo_store, make_app, monkeypatch):
    """A repaint that changes no row builds no row again; a changed row, a mark, the cursor or a theme does."""
    from pcp_tui.widgets.page_list import PageList

    store, refs = demo_store
    built: list[str] = []
    title_pieces = PageList._title_pieces

    def counting(self, row, *args):
        built.append(row["page_id"])
        return title_pieces(self, row, *args)

    monkeypatch.setattr(PageList, "_title_pieces", counting)
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        pages = page_list(app)
        assert built
        first = pages.rows[0]
        built.clear()
        pages.refresh()  # a repaint of the whole list (a window landing, a layout pass): nothing rebuilt
        await settle(app, pilot)
        assert built == []
        pages.update_row(first["page_id"], title="Renamed in place")
        await settle(app, pilot)
        assert first["page_id"] in built
        assert "Renamed in place" in pages.render_line(0).text
        built.clear()
        pages.marked = {first["page_id"]}
        pages.refresh()
        await settle(app, pilot)
        assert built == [first["page_id"]] and pages.render_line(0).text.startswith("◆")
        built.clear()
        app.theme = "pcp-light"
        await settle(app, pilot)
        assert built  # new colours: drawn again


async def test_page_list_lines_fill_the_width_in_the_list_styles(demo_store, make_app):
    """Each line is exactly as wide as the list; the meta line is muted (its own colour, not the base's) and
    cut with "…"; a search match keeps its mark on the cursor row."""
    store, refs = demo_store
    app = make_app(store)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        pages = page_list(app)
        width = pages.scrollable_content_region.width
        for y in range(pages.size.height):
            assert pages.render_line(y).cell_length == width
        meta = pages._style("page-list--meta")
        base = pages._style("base")
        assert meta.color != base.color
        styles = {seg.style.color for seg in pages.render_line(3) if seg.text.strip()}  # row 1's meta line
        assert styles == {(base + meta).color}
        long_meta = [y for y in range(1, pages.size.height, 2) if pages.render_line(y).text.rstrip().endswith("…")]
        assert long_meta  # the demo's conversation scopes are wider than the list at 80x24
        search = app.screen.query_one("#search")
        search.focus()
        search.value = "Tychonoff"
        await pilot.press("enter")
        await settle(app, pilot)
        pages.focus()
        await settle(app, pilot)
        assert pages.search_query and pages.rows and pages.cursor == 0
        match = pages._style("page-list--match")
        marked = [seg for seg in pages.render_line(1) if "tychonoff" in seg.text.lower()]  # the snippet
        assert marked and all(seg.style.bgcolor == (base + match).bgcolor for seg in marked)


@pytest.mark.parametrize("way", ["key", "click"])
async def test_a_tab_is_drawn_for_the_page_before_it_shows(demo_store, make_app, monkeypatch, way):
    """A key that opens a tab, or a click on its header, draws the current page into it while still hidden,
    so its first frame shows this page (not the one it showed last), in one layout pass."""
    store, refs = demo_store
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        inspector = app.screen.query_one(Inspector)
        await until(pilot, lambda: all(inspector.tab_ready(t) for t in TABS), "every tab mounted")
        seen: list[tuple[str, str]] = []
        show = RevisionsView.show

        def spying(self, history, observed_at=None, conflicts=None):
            seen.append((inspector.active_tab, inspector.page["page_id"]))
            return show(self, history, observed_at, conflicts)

        monkeypatch.setattr(RevisionsView, "show", spying)
        pages = page_list(app)
        pages.focus()
        await pilot.press("down")
        await settle(app, pilot)
        if way == "key":
            await pilot.press("2")
        else:
            await pilot.click("#--content-tab-revisions")
        await settle(app, pilot)
        assert seen == [("content", pages.current["page_id"])]  # drawn once, while Content was still shown
        assert inspector.active_tab == "revisions"


async def test_the_side_by_side_diff_fits_a_narrow_inspector(demo_store, make_app):
    """At 80x24 the inspector is under 40 cells: the two columns are built for the width shown (a line wider
    than the view would wrap and break the columns), and again at the new width after a resize."""
    from pcp_tui.widgets.diff import DiffView

    store, refs = demo_store
    app = make_app(store)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await open_in_tab(app, pilot, refs["alpha-outline"], "2")
        await pilot.press("v")
        await settle(app, pilot)
        diff = app.screen.query_one(DiffView)
        for size in ((80, 24), (160, 48)):
            await pilot.resize_terminal(*size)
            await settle(app, pilot)
            width = diff.scrollable_content_region.width
            lines = diff.drawn_text.splitlines()
            assert diff.layout_mode == "side-by-side" and len(lines) > 3
            assert all("│" in line for line in lines), (width, lines[:6])  # no row wrapped onto a second line
            assert len({cell_len(line[:line.index("│")]) for line in lines}) == 1 and all(cell_len(line) <= width for line in lines)


def test_a_title_marks_the_words_asked_for_not_letters_of_function_words():
    """Found in tmux: the question "how did the tychonoff proof go" lit up "The" at the start of "Thesis"."""
    from pcp_tui.widgets.page_list import title_marks

    def marked(title: str, query: str) -> list[str]:
        return [title[a:b] for a, b in title_marks(title, query)]

    assert marked("Thesis outline", "how did the tychonoff proof go") == []
    assert marked("Thesis proof", "the proofs") == ["proof"]  # stemmed as the index stems
    assert marked("The proof", "the") == ["The"]  # a query of function words only: those are what it asks
    assert marked("Decision: SQLite over JSON files", "why sqlite, json?") == ["SQLite", "JSON"]
    assert "".join(marked("有限乘积保持紧致性的证明", "紧致性")) == "紧致性"


@pytest.mark.parametrize("tab", ["2", "4"])
async def test_the_relations_and_revisions_lists_lay_nothing_out_for_a_page(demo_store, make_app, monkeypatch, tab):
    """A page shown in the Revisions or Relations tab is a repaint of its lists: no layout pass of the screen
    unless a list's scrollbar comes or goes (Textual's OptionList asked for one at each set of options, and
    the relation list's height followed the number of relations)."""
    from textual.widget import Widget

    from pcp_tui.widgets.graph import GraphView
    from pcp_tui.widgets.relations import RelationList
    from pcp_tui.widgets.revisions import HistoryList

    store, refs = demo_store
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await open_in_tab(app, pilot, refs["chat-conv"], tab)
        lists = [app.screen.query_one(kind) for kind in (HistoryList, RelationList, GraphView)]
        asked: list[str] = []
        refresh = Widget.refresh

        def spying(self, *regions, **kwargs):
            if kwargs.get("layout") and self in lists:
                asked.append(type(self).__name__)
            return refresh(self, *regions, **kwargs)

        monkeypatch.setattr(Widget, "refresh", spying)
        scrollbars = [(w.show_vertical_scrollbar, w.show_horizontal_scrollbar) for w in lists]
        toggles = 0
        pages = page_list(app)
        pages.focus()
        for key in ["down"] * 6 + ["up"] * 3:
            await pilot.press(key)
            await settle(app, pilot)
            now = [(w.show_vertical_scrollbar, w.show_horizontal_scrollbar) for w in lists]
            toggles += sum(a != b for a, b in zip(now, scrollbars, strict=True))
            scrollbars = now
        assert len(asked) <= toggles, asked


async def test_a_page_list_window_lays_nothing_out_unless_its_scrollbar_changes(demo_store, make_app, monkeypatch):
    """A search typed key by key lands a page-list window per key: each is a repaint of the list, not a layout
    pass of the whole screen (its virtual size was a layout reactive), unless the scrollbar comes or goes. And
    no horizontal scrollbar ever (it came with the vertical one and took the list's last row)."""
    from textual.widget import Widget

    from helpers import type_into

    store, refs = demo_store
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        pages = page_list(app)
        asked: list[int] = []
        refresh = Widget.refresh

        def spying(self, *regions, **kwargs):
            if kwargs.get("layout") and self is pages:
                asked.append(len(pages.rows))
            return refresh(self, *regions, **kwargs)

        monkeypatch.setattr(Widget, "refresh", spying)
        scrollbar, toggles, sizes = pages.show_vertical_scrollbar, 0, set()
        for query in ("product of compact spaces", "soil moisture"):
            await type_into(app, pilot, "#search", "")
            for n, ch in enumerate(query, 1):
                await pilot.press(ch)
                typed = query[:n].strip()  # each key's search lands (after the debounce) before the next key
                await until(pilot, lambda typed=typed: (pages.search_query or "") == typed, "the search as typed")
                await settle(app, pilot)
                sizes.add(pages.virtual_size.height)
                toggles += pages.show_vertical_scrollbar != scrollbar
                scrollbar = pages.show_vertical_scrollbar
        assert len(sizes) > 2  # the windows changed the list's length
        assert len(asked) <= toggles, asked
        assert not pages.show_horizontal_scrollbar  # lines are drawn at the list's width (it came with the vertical)


@pytest.mark.parametrize("size", [(80, 24), (120, 40), (160, 48)])
async def test_every_inspector_tab_is_in_sight_and_switching_never_scrolls_the_tab_bar(demo_store, make_app, size):
    """Six titles wider than the tab bar scrolled it sideways at each switch (a tab out of sight at 80x24, and
    each scroll a repaint of the whole screen)."""
    store, _ = demo_store
    app = make_app(store)
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        inspector = app.screen.query_one(Inspector)
        bar = inspector.query_one("#tabs-scroll")
        page_list(app).focus()
        for key in "2461351":
            await pilot.press(key)
            await settle(app, pilot)
            assert bar.scroll_x == 0 and bar.max_scroll_x == 0, (size, key)
            for tab in TABS:
                header = inspector.query_one(f"#--content-tab-{tab}")
                assert bar.region.contains_region(header.region), (size, tab, header.region, bar.region)
        titles = [str(inspector.query_one(f"#--content-tab-{tab}").label) for tab in TABS]
        assert (titles[1] == "Revisions") == (size[0] >= 160), titles  # full titles where they fit


@pytest.mark.parametrize("tab", TABS[1:])
async def test_quitting_while_a_hidden_tab_is_mounted_raises_nothing(demo_store, make_app, monkeypatch, tab):
    """The app closing while a tab's widgets are mounted (a fast `q` in the first second) ends cleanly: a
    view's own mount once its children are gone found none and failed the exit (seen in CI)."""
    store, refs = demo_store
    monkeypatch.setattr(inspector_module, "LAZY_TABS_AFTER", 3600)
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        inspector = app.screen.query_one(Inspector)
        mounting = asyncio.ensure_future(inspector._mount_tab(tab))  # under way as the app closes
    assert mounting.done() and app.return_code in (0, None)
