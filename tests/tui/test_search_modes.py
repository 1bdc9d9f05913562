"""The search box: auto, text and exact to pick from, each hit's date, and the store's highlights drawn as marks."""

from __future__ import annotations

from helpers import page_list, settle, type_into
from pcp_tui.widgets.page_list import marked_snippet

SIZE = (120, 40)


def test_marks_follow_the_snippet_onto_one_line():
    snippet = "line one\n\n  the  tube lemma\tagain"
    tube, lemma = snippet.index("tube"), snippet.index("lemma")
    text, spans = marked_snippet(snippet, [[tube, tube + 4], [lemma, lemma + 5]], "ignored")
    assert text == "line one the tube lemma again"
    assert [text[s:e] for s, e in spans] == ["tube", "lemma"]
    assert marked_snippet("a tube", None, "tube")[1] == [(2, 6)]  # no highlights: the query's words


async def test_auto_is_the_default_and_the_modes_cycle_and_can_be_picked(demo_store, make_app):
    store, refs = demo_store
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        query = "why compactness tube"
        await type_into(app, pilot, "#search", query)
        await pilot.press("enter")
        await settle(app, pilot)
        status = lambda: str(app.screen.query_one("#list-status").render())  # noqa: E731
        assert "(auto)" in status()
        auto = [r["page_id"] for r in page_list(app).rows]
        expected = [h["page_id"] for h in store.search_pages(query, mode="auto", limit=50)["hits"]]
        assert auto == expected and auto, "auto: relevance over any of the words"
        await pilot.press("ctrl+t")
        await settle(app, pilot)
        assert "(text)" in status()
        assert [r["page_id"] for r in page_list(app).rows] == [
            h["page_id"] for h in store.search_pages(query, mode="text", limit=50)["hits"]]
        await pilot.press("ctrl+t")
        await settle(app, pilot)
        assert "(exact)" in status()
        titles = {c.title for c in app.get_system_commands(app.screen)}
        assert {"Search mode: auto", "Search mode: text", "Search mode: exact"} <= titles
        app.screen.set_search_mode("auto")
        await settle(app, pilot)
        assert "(auto)" in status() and [r["page_id"] for r in page_list(app).rows] == auto


async def test_a_hit_shows_its_date_and_its_highlights(demo_store, make_app):
    store, refs = demo_store
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await type_into(app, pilot, "#search", "tube lemma")
        await pilot.press("enter")
        await settle(app, pilot)
        listing = page_list(app)
        hit = listing.rows[0]
        assert hit["date"] and hit["highlights"]
        assert hit["date"][:10] in listing.render_line(0).text
        segments = list(listing.render_line(1))  # the snippet line under the first hit

        def style_of(word: str):
            return next(seg.style for seg in segments if word in seg.text)

        words = {hit["snippet"][s:e].lower() for s, e in hit["highlights"]}
        assert words == {"tube", "lemma"}
        plain = next(w for w in hit["snippet"].split() if w.isalpha() and w.lower() not in words)
        assert style_of("tube") == style_of("lemma") != style_of(plain)


async def test_a_long_question_leaves_the_search_mode_visible_at_80x24(demo_store, make_app):
    """The list status said `search “…” (text)`: at 80x24 a long question pushed the mode off the pane. The mode
    comes before the words now, and what is cut (if anything) is the question, which the search box shows."""
    store, refs = demo_store
    app = make_app(store)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await type_into(app, pilot, "#search", "why is the tube lemma needed for products of compact spaces")
        await pilot.press("enter", "ctrl+t")
        await settle(app, pilot)
        status = app.screen.query_one("#list-status")
        wrapped = status.render().wrap(status.content_size.width)[: status.size.height]
        shown = " ".join(line.plain for line in wrapped)
        assert "search (text)" in shown, shown
