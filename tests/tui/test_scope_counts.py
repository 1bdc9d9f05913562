"""Issue 13: the scope tree's counts add up, and the scope picker of the rights screen says what it counts."""

from __future__ import annotations

import re

from helpers import page_list, settle

from pcp_tui.widgets.scope_tree import ScopeTree

SIZE = (120, 40)
KEPT = ["active", "superseded", "archived"]  # what the scope counts hold: every page but the tombstoned ones


def shown_count(node) -> int:
    return int(str(node.label).rsplit(maxsplit=1)[1].replace(",", ""))


def every_node(tree) -> list:
    stack, out = [tree.root], []
    while stack:
        node = stack.pop()
        out.append(node)
        stack += reversed(list(node.children))
    return out


def pages_in(store, scopes, status) -> list[dict]:
    """Every page the store lists for these scopes (None: all), window by window."""
    pages, cursor = [], None
    while True:
        r = store.list_pages(scopes=scopes, status=status, after=cursor, limit=100)
        pages += r["pages"]
        if not (cursor := r["next_cursor"]):
            return pages


async def test_every_node_counts_what_choosing_it_lists(demo_store, make_app):
    """The group and parent nodes left out the conversation scopes drawn under them: "project 12" listed 18
    pages, "project:alpha 7" listed 11; the groups (12 + 1 + 2) did not add up to "All scopes 21"."""
    store, refs = demo_store
    own = {s["namespace"]: s["page_count"] for s in store.list_scopes(limit=100)["scopes"]}
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("ctrl+s")  # the tree takes the keys
        tree = app.screen.query_one(ScopeTree)
        nodes = every_node(tree)
        assert len(nodes) == 1 + 3 + len(own)  # the root, the groups project, task and user, every scope once
        for node in nodes:
            count = shown_count(node)
            data = node.data
            # children add up to their parent, and a scope adds its own pages to those of the scopes under it
            mine = own[data["namespace"]] if data["kind"] == "scope" else 0
            assert count == mine + sum(shown_count(c) for c in node.children), str(node.label)
            tree.move_cursor(node)
            await pilot.press("enter")
            await settle(app, pilot)
            # the count is what choosing the node lists (every status but tombstoned), from the store itself
            chosen = app.screen.scopes
            assert count == len(pages_in(store, chosen, KEPT)), str(node.label)
            status = str(app.screen.query_one("#list-status").render())
            listed = len(page_list(app).rows)
            assert listed == len(pages_in(store, chosen, ["active"]))
            assert (f"{listed:,} of {count:,} pages" if listed < count else f"· {count:,} page") in status, status
        labels = {str(n.label).rsplit(maxsplit=1)[0]: shown_count(n) for n in nodes}
        assert labels["All scopes"] == 21 and labels["project"] == 18 and labels["project:alpha"] == 11
        assert labels["project"] + labels["task"] + labels["user"] == labels["All scopes"]


async def test_a_scope_tree_whose_parents_form_a_cycle_still_shows_every_scope_once(demo_store, make_app):
    """Scopes whose parents point at each other hang under no top scope; they are drawn once, and counted."""
    store, refs = demo_store
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        tree = app.screen.query_one(ScopeTree)
        rows = [dict(s) for s in tree.scopes] + [
            {"namespace": "loop:a", "parent": "loop:b", "page_count": 2, "last_activity": "2026-01-02T00:00:00Z"},
            {"namespace": "loop:b", "parent": "loop:a", "page_count": 3, "last_activity": "2026-01-03T00:00:00Z"}]
        tree.show_scopes(rows)
        await settle(app, pilot)
        names = [n.data["namespace"] for n in every_node(tree) if n.data["kind"] == "scope"]
        assert sorted(names) == sorted(r["namespace"] for r in rows)
        assert shown_count(tree.root) == 26 == sum(shown_count(g) for g in tree.root.children)
        loop = next(g for g in tree.root.children if g.data.get("prefix") == "loop")
        assert shown_count(loop) == 5 and len(loop.children) == 1 and len(loop.children[0].children) == 1


async def test_the_scope_picker_says_what_its_count_leaves_out(demo_store, make_app):
    """The picker said "project:alpha (7 pages)" and the plan erased 8 (the eighth tombstoned); after a
    tombstone, "task:weekly-review (0 pages)" erased 1 page. The scope counts have no tombstoned pages."""
    store, refs = demo_store
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        page_list(app).focus()
        weekly = next(r["page_id"] for r in page_list(app).rows if r["namespace"] == "task:weekly-review")
        store.tombstone_page(weekly, "no longer needed")
        await pilot.press("f2")
        await settle(app, pilot)
        await pilot.press("2")
        await settle(app, pilot)
        select = app.screen.query_one("#scope-choice")
        labels = {value: str(prompt) for prompt, value in select._options if isinstance(value, str)}
        for namespace in ("project:alpha", "task:weekly-review", "user:me"):
            label = labels[namespace]
            said = re.search(r"\((\d+) pages?, tombstoned not counted\)", label)
            assert said, label
            select.value = namespace
            await settle(app, pilot)
            plan = str(app.screen.query_one("#scope-plan").render())
            erased = int(re.search(r"(\d+) pages?\b", plan).group(1))
            tombstoned = len(pages_in(store, [namespace], ["tombstoned"]))
            assert erased == int(said.group(1)) + tombstoned == app.screen.scope_plan["pages"], (label, plan)
        assert labels["task:weekly-review"].startswith("task:weekly-review  (0 pages")
        assert "project:alpha  (7 pages" in labels["project:alpha"]
