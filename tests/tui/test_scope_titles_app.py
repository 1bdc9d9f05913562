"""Issue 28: the scope tree shows an imported conversation's title beside its scope, read live from the
conversation page (the scope's stored name is neutral), so erasing that page takes the title off the tree."""

from __future__ import annotations

from pathlib import Path

from helpers import drawn, settle, until

from pcp_tui.widgets.scope_tree import ScopeTree
from store.adapters import import_chatgpt

EXPORT = Path(__file__).resolve().parents[1] / "data" / "exports" / "chatgpt-danny-avila-LibreChat-1.json"


def scope_nodes(tree: ScopeTree) -> dict[str, object]:
    stack, out = [tree.root], {}
    while stack:
        node = stack.pop()
        if node.data and node.data.get("kind") == "scope":
            out[node.data["namespace"]] = node
        stack += list(node.children)
    return out


async def test_the_tree_shows_the_conversation_title_and_drops_it_with_its_page(empty_store, make_app):
    store = empty_store
    import_chatgpt(store, EXPORT)
    scopes = {s["namespace"]: s for s in store.list_scopes(limit=100)["scopes"] if s.get("title")}
    ns, scope = sorted(scopes.items())[0]
    title = scope["title"]
    conv = next(p for p in store.list_pages(scopes=[ns], limit=200)["pages"] if p["title"] == title)
    app = make_app(store)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        tree = app.screen.query_one(ScopeTree)
        node = scope_nodes(tree)[ns]
        # the row is the title (issue 35: rows that read apart); the namespace is in the line under the tree
        assert str(node.label).startswith(title) and ns not in str(node.label)
        tree.move_cursor(node)
        await settle(app, pilot)
        assert title in " ".join(drawn(app.screen.query_one("#scope-detail")).split())
        store.delete_page(conv["page_id"], "erase the conversation page")
        app.screen.action_refresh()
        await until(pilot, lambda: ns in scope_nodes(tree) and title not in str(scope_nodes(tree)[ns].label),
                    "the tree shows the scope without the erased title")
        assert scope["display_name"] in {s["display_name"] for s in store.list_scopes(limit=100)["scopes"]}
