"""Scopes as a tree: all scopes, then namespace prefixes (project, conversation...), then scopes under parents.

Every node counts what choosing it lists: the pages of every scope in its subtree (the basis of the list's
"of N" figure, MainScreen._scope_count), so the children of a node add up to it and the groups to the root.
The line under the tree (ScopePane) shows the highlighted node in full: its name, count and newest activity.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.message import Message
from textual.widgets import Static, Tree
from textual.widgets.tree import TreeNode

from .steady import SteadyScrollbars, update_rows
from ..text import counted, one_line, printable


def prefix_of(namespace: str) -> str:
    return namespace.split(":", 1)[0] if ":" in namespace else "other"


def scope_label(name: str, count: int, title: str | None = None) -> Text:
    """`project:alpha  11`: the full namespace and the pages choosing it lists (its date is in the detail line).
    An imported conversation's scope shows its conversation page's title (read live) between them."""
    shown = (f"  {one_line(title)[:80]}", "italic") if title else ""
    return Text.assemble(printable(name), shown, (f"  {count:,}", "dim"), no_wrap=True, overflow="ellipsis")


def newest(*dates: str | None) -> str:
    return max((d for d in dates if d), default="")


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
        super().__init__("All scopes", data={"kind": "all", "count": 0, "newest": "", "scopes": 0}, id=id)
        self.show_root = True
        self.auto_expand = False  # Enter shows a scope's pages and leaves the tree as it is; space folds
        self.guide_depth = 2
        self.scopes: list[dict] = []

    def show_scopes(self, scopes: list[dict], selected: list[str] | None = None) -> None:
        """Rebuild the tree from list_scopes rows."""
        self.scopes = scopes
        self.clear()
        known = {s["namespace"] for s in scopes}
        children: dict[str, list[dict]] = {}
        tops: list[dict] = []
        for scope in scopes:
            parent = scope.get("parent")
            if parent and parent in known and parent != scope["namespace"]:
                children.setdefault(parent, []).append(scope)
            else:
                tops.append(scope)
        placed: set[str] = set()

        def subtree(scope: dict) -> dict:
            """The scope, the subtrees under it, and what they hold together."""
            placed.add(scope["namespace"])
            kids = []
            for kid in children.get(scope["namespace"], []):
                if kid["namespace"] not in placed:  # (a cycle of parents is cut where it closes)
                    kids.append(subtree(kid))
            return {"scope": scope, "kids": kids,
                    "count": scope.get("page_count", 0) + sum(k["count"] for k in kids),
                    "newest": newest(scope.get("last_activity"), *(k["newest"] for k in kids)),
                    "scopes": 1 + sum(k["scopes"] for k in kids)}

        groups: dict[str, list[dict]] = {}
        for scope in tops:
            groups.setdefault(prefix_of(scope["namespace"]), []).append(subtree(scope))
        for scope in scopes:  # scopes whose parents form a cycle hang under no top scope: each cycle enters once
            if scope["namespace"] not in placed:
                groups.setdefault(prefix_of(scope["namespace"]), []).append(subtree(scope))

        def add(node: TreeNode, tree: dict) -> None:
            scope = tree["scope"]
            data = {"kind": "scope", "namespace": scope["namespace"], "own": scope.get("page_count", 0),
                    "title": scope.get("title"), **{k: tree[k] for k in ("count", "newest", "scopes")}}
            label = scope_label(scope["namespace"], tree["count"], scope.get("title"))
            if tree["kids"]:
                branch = node.add(label, data=data, expand=True)
                for kid in tree["kids"]:
                    add(branch, kid)
            else:
                node.add_leaf(label, data=data)

        for prefix in sorted(groups):
            members = groups[prefix]
            data = {"kind": "prefix", "prefix": prefix, "count": sum(t["count"] for t in members),
                    "newest": newest(*(t["newest"] for t in members)), "scopes": sum(t["scopes"] for t in members)}
            group = self.root.add(scope_label(prefix, data["count"]), data=data, expand=True)
            for tree in members:
                add(group, tree)
        total = sum(s.get("page_count", 0) for s in scopes)
        self.root.set_label(Text.assemble("All scopes", (f"  {total:,}", "dim")))
        self.root.data = {"kind": "all", "count": total, "newest": newest(*(s.get("last_activity") for s in scopes)),
                          "scopes": len(scopes)}
        self.root.expand()
        self.post_message(self.Highlighted(None))  # the tree changed under its cursor: the detail line follows

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

    class Highlighted(Message):
        """The cursor moved (or the tree was rebuilt under it): the detail line shows `node` (None: the cursor's)."""

        def __init__(self, node: TreeNode | None) -> None:
            super().__init__()
            self.node = node

    def on_tree_node_highlighted(self, event: Tree.NodeHighlighted) -> None:
        event.stop()
        self.post_message(self.Highlighted(event.node))


def detail(data: dict) -> Content:
    """The highlighted node in full, in three lines: what it is, what choosing it lists, its last activity."""
    kind, count = data.get("kind"), data.get("count", 0)
    scopes = data.get("scopes", 0)
    if kind == "all":
        name, note = f"All scopes ({scopes:,})", ""
    elif kind == "prefix":
        name, note = f"{data['prefix']}:* ({counted(scopes, 'scope')})", ""
    else:
        name = data["namespace"]
        note = f" ({data['own']:,} its own)" if scopes > 1 else ""
    when = (data.get("newest") or "")[:10]
    title = [("\n" + one_line(data["title"]), "italic")] if data.get("title") else []
    return Content.assemble((printable(name), "bold"), *title, f"\n{counted(count, 'page')}{note}",
                            f"\nlast active {when}" if when else "\nno activity yet")


DETAIL_ROWS = 6  # the detail line's rows at most (app.tcss: #scope-detail's max-height 7 is its border and these)


class ScopePane(Vertical):
    """The scope tree, and under it the highlighted node in full (a label the tree's width cuts)."""

    def compose(self) -> ComposeResult:
        yield ScopeTree(id="scopes")
        yield Static("", id="scope-detail", classes="detail")

    def on_scope_tree_highlighted(self, message: ScopeTree.Highlighted) -> None:
        message.stop()
        self.show_detail(message.node)

    def on_resize(self) -> None:
        self.call_after_refresh(self.show_detail)  # (shown again at the new width: its rows as wrapped there)

    def show_detail(self, node: TreeNode | None = None) -> None:
        """The detail line shows `node` (by default the cursor's node, or the root)."""
        tree = self.query_one(ScopeTree)
        node = node or tree.cursor_node or tree.root
        shown = self.query_one("#scope-detail", Static)
        text = detail(node.data or {})
        # Four rows for every node whose name takes two at most: a cursor move repaints the line and lays
        # nothing out (update_rows); a longer name takes the rows it needs (up to DETAIL_ROWS).
        if (width := shown.content_size.width) > 0:
            text = text + "\n" * max(0, 4 - len(text.wrap(width)))
        update_rows(shown, text, max_rows=DETAIL_ROWS)
