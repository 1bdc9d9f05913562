"""Scopes as a tree: all scopes, then namespace prefixes (project, conversation...), then scopes under parents."""

from __future__ import annotations

from rich.text import Text
from textual.binding import Binding
from textual.message import Message
from textual.widgets import Tree
from textual.widgets.tree import TreeNode

from ..reading import printable
from .steady import SteadyScrollbars


def prefix_of(namespace: str) -> str:
    return namespace.split(":", 1)[0] if ":" in namespace else "other"


def scope_label(scope: dict) -> Text:
    """`project:alpha  12 · 2026-03-23`: the full namespace, its page count and last activity."""
    text = Text(printable(scope["namespace"]), no_wrap=True, overflow="ellipsis")
    when = (scope.get("last_activity") or "")[:10]
    text.append(f"  {scope.get('page_count', 0)}" + (f" · {when}" if when else ""), style="dim")
    return text


class ScopeTree(SteadyScrollbars, Tree[dict]):
    """Selecting a node asks for its pages: one scope (and its child scopes), a prefix group, or everything."""

    BINDINGS = [
        Binding("enter", "select_cursor", "Show pages", show=False, id="scope_tree.select"),
        Binding("space", "toggle_node", "Expand", show=False, id="scope_tree.toggle"),
    ]

    class ScopesChosen(Message):
        """The pages of these namespaces (None: every scope) should be listed; `label` says what was chosen."""

        def __init__(self, namespaces: list[str] | None, label: str) -> None:
            super().__init__()
            self.namespaces, self.label = namespaces, label

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("All scopes", data={"kind": "all"}, id=id)
        self.show_root = True
        self.auto_expand = False  # Enter shows a scope's pages and leaves the tree as it is; space folds
        self.guide_depth = 2
        self.scopes: list[dict] = []

    def show_scopes(self, scopes: list[dict], selected: list[str] | None = None) -> None:
        """Rebuild the tree from list_scopes rows."""
        self.scopes = scopes
        total = sum(s.get("page_count", 0) for s in scopes)
        self.clear()
        self.root.set_label(Text.assemble("All scopes", (f"  {total}", "dim")))
        self.root.data = {"kind": "all"}
        known = {s["namespace"] for s in scopes}
        children: dict[str, list[dict]] = {}
        groups: dict[str, list[dict]] = {}
        for scope in scopes:
            parent = scope.get("parent")
            if parent and parent in known and parent != scope["namespace"]:
                children.setdefault(parent, []).append(scope)
            else:
                groups.setdefault(prefix_of(scope["namespace"]), []).append(scope)

        def add(node: TreeNode, scope: dict, seen: frozenset[str]) -> None:
            kids = [k for k in children.get(scope["namespace"], []) if k["namespace"] not in seen]
            if kids:
                branch = node.add(scope_label(scope), data={"kind": "scope", "namespace": scope["namespace"]},
                                  expand=True)
                for kid in kids:
                    add(branch, kid, seen | {scope["namespace"]})
            else:
                node.add_leaf(scope_label(scope), data={"kind": "scope", "namespace": scope["namespace"]})

        for prefix in sorted(groups):
            members = groups[prefix]
            count = sum(s.get("page_count", 0) for s in members)
            group = self.root.add(Text.assemble(printable(prefix), (f"  {count}", "dim")),
                                  data={"kind": "prefix", "prefix": prefix}, expand=True)
            for scope in members:
                add(group, scope, frozenset())
        self.root.expand()

    def namespaces_under(self, node: TreeNode) -> list[str]:
        """Every scope namespace in this node's subtree."""
        out = []
        if node.data and node.data.get("kind") == "scope":
            out.append(node.data["namespace"])
        for child in node.children:
            out += self.namespaces_under(child)
        return out

    def on_tree_node_selected(self, event: Tree.NodeSelected) -> None:
        event.stop()
        data = event.node.data or {}
        if data.get("kind") == "all":
            self.post_message(self.ScopesChosen(None, "all scopes"))
        elif data.get("kind") == "prefix":
            self.post_message(self.ScopesChosen(self.namespaces_under(event.node), f"{data['prefix']}:*"))
        elif data.get("kind") == "scope":
            names = self.namespaces_under(event.node)
            label = data["namespace"] + (f" (+{len(names) - 1})" if len(names) > 1 else "")
            self.post_message(self.ScopesChosen(names, label))
