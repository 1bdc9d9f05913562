"""Browsing: scopes, the page list (sort, status and author filters, search), and the inspector tabs."""

from __future__ import annotations

import pytest
from helpers import open_in_tab, page_list, prompts, select_page, settle, until
from pcp_tui.widgets.diff import ITSELF, SAME, DiffView, side_by_side, unified
from pcp_tui.widgets.graph import GraphView
from pcp_tui.widgets.inspector import Inspector
from pcp_tui.widgets.provenance import ProvenanceTree
from pcp_tui.widgets.relations import RelationList
from pcp_tui.widgets.scope_tree import ScopeTree

SIZE = (120, 40)


def titles(app):
    return [r["title"] for r in page_list(app).rows]


async def test_opens_on_the_pages_with_the_newest_first_and_inspects_it(demo_store, make_app):
    store, refs = demo_store
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        rows = page_list(app).rows
        assert rows[0]["page_id"] == refs["alpha-outline"]  # observed last
        assert "Lemma: every product" not in titles(app)  # tombstoned pages are not listed by default
        assert "Old to-do list" not in titles(app)  # nor archived ones
        inspector = app.screen.query_one(Inspector)
        assert inspector.page["page_id"] == refs["alpha-outline"]
        assert "Thesis outline" in str(app.screen.query_one("#inspector-title").render())
        tree = app.screen.query_one(ScopeTree)
        labels = [str(n.label) for n in tree.root.children]
        assert any(label.startswith("project") for label in labels)
        scope_nodes = [str(n.label).split()[0] for g in tree.root.children for n in g.children]
        assert "project:alpha" in scope_nodes and "user:me" in scope_nodes
        # conversation scopes sit under their parent project
        alpha = next(n for g in tree.root.children for n in g.children if str(n.label).startswith("project:alpha"))
        assert [str(c.label).split()[0] for c in alpha.children] == ["conversation:chatgpt-tychonoff"]


async def test_scope_selection_sort_status_and_author_filters(demo_store, make_app):
    store, refs = demo_store
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        tree = app.screen.query_one(ScopeTree)
        garden = next(n for g in tree.root.children for n in g.children if str(n.label).startswith("project:garden"))
        await pilot.press("ctrl+s")  # focus the scopes
        tree.move_cursor(garden)
        expanded = garden.is_expanded
        await pilot.press("enter")
        await settle(app, pilot)
        assert {r["namespace"] for r in page_list(app).rows} == {"project:garden", "conversation:claude-watering"}
        assert garden.is_expanded == expanded  # Enter shows the pages; it does not fold the node (space does)
        await pilot.press("ctrl+l", "o", "o")  # sort by title (after oldest first)
        await settle(app, pilot)
        assert titles(app) == sorted(titles(app), key=str.lower)  # case does not split the order
        await pilot.press("0", "f")  # every scope, status: all (but tombstoned)
        await settle(app, pilot)
        assert "Old to-do list" in titles(app) and "Thesis outline (first draft)" in titles(app)
        await pilot.press("f")  # archived only
        await settle(app, pilot)
        assert titles(app) == ["Old to-do list"]
        await pilot.press("f", "f")  # tombstoned
        await settle(app, pilot)
        assert [r["page_id"] for r in page_list(app).rows] == [refs["alpha-wrong-lemma"]]
        await pilot.press("f", "w", "w")  # active again; written by a model
        await settle(app, pilot)
        assert {r["page_id"] for r in page_list(app).rows} == {refs["alpha-summary"], refs["garden-idea"]}
        await pilot.press("w", "w")  # by a tool, then by the system: none, and the hint names that filter
        await settle(app, pilot)
        assert app.screen.actor == "system" and not page_list(app).rows
        assert page_list(app).empty_note == "No pages here (try the Author filter: w)."


@pytest.mark.encrypted
async def test_search_is_debounced_and_highlights_the_match(demo_store, make_app):
    store, refs = demo_store
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("slash")
        assert app.focused.id == "search"
        await pilot.press(*"紧致性")
        await until(pilot, lambda: page_list(app).search_query == "紧致性", "the search after its debounce")
        await settle(app, pilot)
        rows = page_list(app).rows
        assert refs["alpha-proof"] in {r["page_id"] for r in rows}
        assert all("snippet" in r for r in rows)
        assert page_list(app).search_query == "紧致性"
        line = page_list(app).render_line(0)
        assert "紧致性" in line.text or "紧" in line.text
        await pilot.press("ctrl+t", "ctrl+t")  # auto -> text -> exact
        await settle(app, pilot)
        assert "(exact)" in str(app.screen.query_one("#list-status").render())
        assert refs["alpha-proof"] in {r["page_id"] for r in page_list(app).rows}


async def test_revisions_tab_diffs_any_two_revisions(demo_store, make_app):
    store, refs = demo_store
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await open_in_tab(app, pilot, refs["alpha-outline"], "2")
        diff = app.screen.query_one(DiffView)
        text = diff.drawn_text
        assert "+6. 附录" in text and "-4. Tychonoff's theorem (finite case first)" in text
        await pilot.press("v")
        await settle(app, pilot)
        assert diff.layout_mode == "side-by-side" and " │ " in diff.drawn_text
        history = app.screen.query_one("#history")
        history.focus()
        history.highlighted = 2  # the oldest revision: compare it with itself (no earlier one)
        await pilot.press("enter")
        await settle(app, pilot)
        assert " ".join(diff.drawn_text.split()) == ITSELF  # not two copies of it, and not "two revisions"
        await pilot.press("v")  # back to unified
        await settle(app, pilot)
        assert diff.layout_mode == "unified" and " ".join(diff.drawn_text.split()) == ITSELF
        assert side_by_side("a\nb", "a\nb", 60, "#1", "#2").plain == unified("a\nb", "a\nb", "#1", "#2").plain == SAME


async def test_provenance_expands_lazily_back_to_the_sources(demo_store, make_app):
    store, refs = demo_store
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await open_in_tab(app, pilot, refs["alpha-proof"], "3")
        tree = app.screen.query_one(ProvenanceTree)
        derive = next(n for n in tree.root.children if str(n.label).startswith("derive"))
        notes = derive.children[0]
        assert "紧致性 reading notes" in str(notes.label) and not notes.children
        tree.focus()
        tree.move_cursor(notes)
        await pilot.press("space")  # expand: one store read for this level
        await settle(app, pilot)
        assert notes.children and str(notes.children[0].label).startswith("write by user:owner")


async def test_relations_follow_and_graph(demo_store, make_app):
    store, refs = demo_store
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await open_in_tab(app, pilot, refs["chat-conv"], "4")
        relations = app.screen.query_one(RelationList)
        listed = prompts(relations)
        assert listed[0].startswith("outgoing · contains (3)")
        graph = app.screen.query_one(GraphView)
        lines = prompts(graph)
        assert lines[0].startswith("◉ ChatGPT")
        assert any("─contains─▶" in line for line in lines)
        assert any("responds_to" in line for line in lines)  # two hops out
        relations.focus()
        relations.highlighted = 1
        await pilot.press("enter")  # follow the first relation
        await settle(app, pilot)
        inspector = app.screen.query_one(Inspector)
        assert inspector.page["page_id"] in {refs["chat-q"], refs["chat-a"], refs["chat-q2"]}


async def test_facets_and_raw_tabs(demo_store, make_app):
    import json

    store, refs = demo_store
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await open_in_tab(app, pilot, refs["garden-schedule"], "5")
        assert "plan_week" in app.screen.query_one("#facets-text").text
        await pilot.press("6")
        await settle(app, pilot)
        raw = app.screen.query_one("#raw-text").text
        assert json.loads(raw) == store.read_pages([refs["garden-schedule"]])  # the same JSON as `pcp read --json`
        await pilot.press("1")
        await settle(app, pilot)
        content = app.screen.query_one("#content-view").text
        assert "def needs_water" in content  # code is shown as code, not as Markdown


async def test_graph_depth_and_type_are_keys(demo_store, make_app):
    """`h` draws the graph one hop deeper (3, then back to 1), `g` for one relation type at a time (the page's
    own types first), then every type again; the line above the graph says what is drawn. The keys work from
    the page list and open the Relations tab."""
    store, refs = demo_store
    app = make_app(store)

    def drawn() -> tuple[str, set[str]]:
        graph = app.screen.query_one(GraphView)
        options = [graph.get_option_at_index(i) for i in range(graph.option_count)]
        controls = str(app.screen.query_one("#graph-controls").render())
        return controls, {o.id.split(":", 1)[1] for o in options if o.id}

    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await open_in_tab(app, pilot, refs["chat-conv"], "1")
        page_list(app).focus()
        await pilot.press("h")  # from the Content tab: opens Relations, 3 hops
        await settle(app, pilot)
        inspector = app.screen.query_one(Inspector)
        assert inspector.active_tab == "relations"
        controls, nodes = drawn()
        assert "3 hops (h)" in controls and "every type (g)" in controls
        assert {refs["alpha-proof"], refs["alpha-bib"]} <= nodes  # chat-a ◀ inspired_by ─ alpha-proof ─ uses ▶
        await pilot.press("h")
        await settle(app, pilot)
        controls, nodes = drawn()
        assert "1 hop (h)" in controls and nodes == {refs["chat-q"], refs["chat-a"], refs["chat-q2"]}
        await pilot.press("h")
        await settle(app, pilot)
        controls, nodes = drawn()
        assert "2 hops (h)" in controls and refs["alpha-proof"] in nodes and refs["alpha-bib"] not in nodes
        await pilot.press("g")  # the page's own type first
        await settle(app, pilot)
        controls, nodes = drawn()
        assert "contains (g)" in controls and nodes == {refs["chat-q"], refs["chat-a"], refs["chat-q2"]}
        view = app.screen.query_one("RelationsView")
        for _ in view.types:
            await pilot.press("g")
        await settle(app, pilot)
        controls, nodes = drawn()
        assert "every type (g)" in controls and refs["alpha-proof"] in nodes  # round again
        await pilot.click("#graph-controls", offset=(8, 0))  # a click on the depth: as `h`
        await settle(app, pilot)
        assert "3 hops (h)" in drawn()[0]
        await pilot.click("#graph-controls", offset=(len("Graph 3 hops (h) · ") + 2, 0))  # on the type: as `g`
        await settle(app, pilot)
        assert "contains (g)" in drawn()[0]
        await select_page(app, pilot, refs["alpha-bib"])  # no "contains" here: its whole graph, not an empty one
        await settle(app, pilot)
        controls, nodes = drawn()
        assert "3 hops (h) · every type (g)" in controls and refs["alpha-proof"] in nodes


async def test_a_hostile_relation_type_is_drawn_as_text_on_one_line(demo_store, make_app):
    """Relation types are any text a writer chose: markup stays literal, an escape sequence is drawn as
    symbols, a newline does not break the list, the graph or the graph's line."""
    store, refs = demo_store
    bad = "x\x1b]0;owned\x07[b]y[/b][@click=app.quit]z\nnl"
    store.link_pages(refs["chat-conv"], bad, refs["alpha-bib"])
    shown = "x␛]0;owned␇[b]y[/b][@click=app.quit]z nl"
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await open_in_tab(app, pilot, refs["chat-conv"], "4")
        relations = app.screen.query_one(RelationList)
        listed = prompts(relations)
        assert f"outgoing · {shown} (1)" in listed
        graph = app.screen.query_one(GraphView)
        lines = prompts(graph)
        assert any(f"─{shown}─▶ Bibliography" in line for line in lines)
        await pilot.press("g")  # the page's own types first: contains, then this one
        await pilot.press("g")
        await settle(app, pilot)
        controls = app.screen.query_one("#graph-controls").render().plain
        assert f"· {shown} (g)" in controls and app.is_running
        for text in listed + lines + [controls]:
            assert "\x1b" not in text and "\n" not in text


async def test_the_diff_line_keeps_its_keys_in_a_narrow_inspector(demo_store, make_app):
    """At 80x24 the line over the diff shows the revision numbers without their ids (the diff's header names
    them), in its short form in either mode (side-by-side cut the keys), so the mode and the keys stay visible;
    wider, the ids come back."""
    store, refs = demo_store
    app = make_app(store)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await open_in_tab(app, pilot, refs["alpha-outline"], "2")
        controls = app.screen.query_one("#diff-controls")
        text = controls.render().plain
        assert text == "From #2 To #3 · unified (v) · f/t"
        assert len(text) <= controls.content_size.width
        await pilot.press("v")
        await settle(app, pilot)
        text = controls.render().plain
        assert text == "From #2 To #3 · side (v) · f/t" and len(text) <= controls.content_size.width
        await pilot.press("v")
        await settle(app, pilot)
        await pilot.resize_terminal(160, 48)
        await settle(app, pilot)
        text = controls.render().plain
        assert text.startswith("From #2 …") and "To #3 …" in text and text.endswith("unified (v) · f/t")


async def test_a_tab_key_works_with_the_focus_inside_another_tab(demo_store, make_app):
    """With the Revisions history focused, `3` and `4` left the inspector on Revisions (the hidden pane's focus
    moved to its next widget, and a pane with focus in it makes itself the active tab again). The new tab shows
    and takes the focus."""
    from pcp_tui.widgets.provenance import ProvenanceTree
    from pcp_tui.widgets.revisions import HistoryList

    store, refs = demo_store
    app = make_app(store)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        await open_in_tab(app, pilot, refs["alpha-outline"], "2")
        app.screen.query_one(HistoryList).focus()
        await settle(app, pilot)
        inspector = app.screen.query_one(Inspector)
        await pilot.press("3")
        await settle(app, pilot)
        assert inspector.active_tab == "provenance" and isinstance(app.focused, ProvenanceTree)
        await pilot.press("4")
        await settle(app, pilot)
        assert inspector.active_tab == "relations" and isinstance(app.focused, RelationList)


async def test_a_graph_of_a_type_the_page_has_none_of_says_so_and_no_page_has_no_graph_line(demo_store, make_app):
    store, refs = demo_store
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await open_in_tab(app, pilot, refs["chat-conv"], "4")
        view = app.screen.query_one("RelationsView")
        relations = store.read_pages([refs["chat-conv"]], projections=("relations",))["results"][0]["relations"]
        found = {r["relation_type"] for d in ("outgoing", "incoming") for r in relations[d]}
        missing = next(t for t in view.types if t not in found)
        page_list(app).focus()
        while view.kind != missing:
            await pilot.press("g")
        await settle(app, pilot)
        lines = prompts(app.screen.query_one(GraphView))
        assert lines[0].startswith("◉ ChatGPT") and lines[1:] == [f"No “{missing}” within 2 hops."], lines
        controls = app.screen.query_one("#graph-controls")
        assert "2 hops (h)" in str(controls.render())
        await pilot.press("w", "w", "w", "w")  # written by the system: no page, nothing selected
        await settle(app, pilot)
        assert not page_list(app).rows and app.screen.query_one(Inspector).page is None
        assert str(controls.render()).strip() == "" and not prompts(app.screen.query_one(GraphView))
        await pilot.press("w")  # every author again: the first page is shown, and its graph line with it
        await settle(app, pilot)
        assert page_list(app).rows and "2 hops (h)" in str(controls.render())
