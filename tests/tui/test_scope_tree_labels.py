"""Issue 13: what the scope tree and the page list say can be read in full at 160x48 and at 80x24."""

from __future__ import annotations

from helpers import page_list, settle, until
from textual.geometry import Region

from pcp_tui.text import counted
from pcp_tui.widgets.inspector import TABS, Inspector
from pcp_tui.widgets.scope_tree import ScopeTree


def every_node(tree) -> list:
    stack, out = [tree.root], []
    while stack:
        node = stack.pop()
        out.append(node)
        stack += reversed(list(node.children))
    return out


def drawn(widget) -> list[str]:
    """The lines a widget draws now, as text."""
    return [strip.text.rstrip() for strip in widget.render_lines(Region(0, 0, *widget.outer_size))]


async def test_the_highlighted_scope_is_shown_in_full_under_the_tree(demo_store, make_app):
    """Labels were cut at both sizes: "│ │ └ conversation:chatgpt-ty" at 160x48, "conversation:chatgp" and
    "user:me  2 · 2026-12-" at 80x24. The line under the tree shows the highlighted node's full name, count and
    last activity; at 160 columns the sidebar is wide enough for the demo's labels themselves."""
    store, refs = demo_store
    scopes = {s["namespace"]: s for s in store.list_scopes(limit=100)["scopes"]}
    for size in ((160, 48), (80, 24)):
        app = make_app(store)
        async with app.run_test(size=size) as pilot:
            await settle(app, pilot)
            await pilot.press("ctrl+s")  # at 80x24 this shows the folded sidebar too
            await settle(app, pilot)
            tree = app.screen.query_one(ScopeTree)
            detail = app.screen.query_one("#scope-detail")
            screen = app.screen.region
            assert tree.has_focus and screen.contains_region(detail.region) and detail.region.height >= 4
            for node in every_node(tree):
                tree.move_cursor(node)
                await settle(app, pilot)
                data = node.data
                text = "".join(line.strip() for line in drawn(detail))  # (a long name wraps: its pieces follow each other)
                if data["kind"] == "scope":
                    name, newest = data["namespace"], scopes[data["namespace"]]["last_activity"]
                elif data["kind"] == "prefix":
                    name = f"{data['prefix']}:*"
                    newest = max(s["last_activity"] for n, s in scopes.items() if n in tree.namespaces_under(node))
                else:
                    name, newest = "All scopes", max(s["last_activity"] for s in scopes.values())
                count = str(node.label).rsplit(maxsplit=1)[1]
                assert name in text and f"{counted(int(count), 'page')}" in text, (size, text)
                assert newest[:10] in text, (size, text)
            alpha = next(n for n in every_node(tree) if n.data.get("namespace") == "project:alpha")
            tree.move_cursor(alpha)
            await settle(app, pilot)
            assert "11 pages (7 its own)" in "".join(drawn(detail))  # its pages and those of the scope under it
            if size == (160, 48):
                lines = drawn(tree)
                for y, node in enumerate(every_node(tree)):  # every label drawn whole, with its count
                    assert lines[y].endswith(str(node.label)), (lines[y], str(node.label))


def count_layouts(screen, monkeypatch) -> list:
    """One entry for each layout pass of the screen from now on."""
    layouts, original = [], screen._refresh_layout

    def counted(*args, **kwargs):
        layouts.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(screen, "_refresh_layout", counted)
    return layouts


async def test_moving_in_the_tree_is_no_layout_pass_of_the_screen(demo_store, make_app, monkeypatch):
    """The detail line keeps its rows from node to node (names that fit): a cursor move repaints it, and lays
    nothing out (steady.update_rows)."""
    store, refs = demo_store
    for size in ((160, 48), (120, 40), (80, 24)):  # (at 120 and 80 columns the conversation scopes' names take
        # two rows; at 80 ctrl+s shows the folded sidebar: the line is drawn again at its width)
        app = make_app(store)
        async with app.run_test(size=size) as pilot:
            await settle(app, pilot)
            await pilot.press("ctrl+s")
            inspector = app.screen.query_one(Inspector)  # its hidden tabs are mounted lazily, on timers: each mount
            # lays the screen out (under load the last ones came after the count had started)
            await until(pilot, lambda i=inspector: all(i.tab_ready(tab) for tab in TABS), "every inspector tab mounted")
            await settle(app, pilot)
            layouts = count_layouts(app.screen, monkeypatch)
            detail = app.screen.query_one("#scope-detail")
            seen = set()
            for _ in range(9):
                await pilot.press("down")
                await settle(app, pilot)
                seen.add(str(detail.render()))
                assert any(line.strip().startswith("last active") for line in drawn(detail))  # the date in sight
            assert len(seen) == 9 and layouts == [], size


async def test_the_empty_list_hint_is_read_in_full_at_80x24(demo_store, make_app):
    """The hint of an empty list was cut: "No pages here (try the Author filter: …" (it ends ": w).")."""
    store, refs = demo_store
    app = make_app(store)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        page_list(app).focus()
        await pilot.press("w", "w", "w", "w")  # the author filter: system, who wrote no page
        await settle(app, pilot)
        pages = page_list(app)
        assert pages.rows == [] and app.screen.actor == "system"
        hint = f"No pages here (try the Author filter: {app.key_display('actor_filter')})."
        lines = drawn(pages)
        assert " ".join(" ".join(lines).split()) == hint and len([line for line in lines if line]) >= 2, lines
