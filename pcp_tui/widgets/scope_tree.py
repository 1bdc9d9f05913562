"""Scopes as a tree: all scopes, then namespace prefixes (project, conversation...), then scopes under parents.

Every node counts what choosing it lists: the pages of every scope in its subtree (the basis of the list's
"of N" figure, MainScreen._scope_count), so the children of a node add up to it and the groups to the root.
The line under the tree (ScopePane) shows the highlighted node in full: its name, count and newest activity.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.message import Message
from textual.widgets import Static, Tree
from textual.widgets.tree import NodeID, TreeNode, UnknownNodeID

from store.scope_titles import source_name, title_page_key

from .steady import SteadyScrollbars, update_rows
from ..text import counted, one_line, printable

if TYPE_CHECKING:
    from store.types import Scope


def prefix_of(namespace: str) -> str:
    return namespace.split(":", 1)[0] if ":" in namespace else "other"


def scope_label(name: str, count: int, title: str | None = None) -> Text:
    """`project:alpha  11`: the scope's name in the tree (the full namespace, or a shorter name among its
    siblings) and the pages choosing it lists (its date is in the detail line)."""
    shown = (f"  {one_line(title)[:80]}", "italic") if title else ""
    return Text.assemble(printable(name), shown, (f"  {count:,}", "dim"), no_wrap=True, overflow="ellipsis")


def imported_kind(namespace: str) -> str | None:
    """"conversation" (a chat import's `conversation:<source>:<id>`), "session" (a coding agent's
    `agent:<source>:<project>:<session>`), "project" (`agent:<source>:<project>`), "agent" (`agent:<source>`),
    or None for any other scope."""
    found = title_page_key(namespace)
    if found is not None:
        return found[1]
    parts = namespace.split(":")
    if parts[0] == "agent" and all(parts[1:]):
        return {2: "agent", 3: "project"}.get(len(parts))
    return None


def newest(*dates: str | None) -> str:
    return max((d for d in dates if d), default="")


def day_of(scope: dict[str, Any]) -> str:
    """The day an imported conversation or session began, from its neutral stored name ("" when undated)."""
    found = re.search(r"(\d{4}-\d{2}-\d{2})$", scope.get("display_name") or "")
    return found.group(1) if found else ""


def distinct_tails(paths: list[str]) -> list[str]:
    """The shortest ending of each path (in whole `/` parts) that no other path of the list ends with, so that
    sibling rows never read (or get cut) alike: `…/Projects/entire-graph`, `…/wks/test-cli/cli`."""
    parts = [p.strip("/").split("/") for p in paths]
    out = []
    for i, mine in enumerate(parts):
        n = 1
        while n < len(mine) and any(j != i and other[-n:] == mine[-n:] for j, other in enumerate(parts)):
            n += 1
        tail = "/".join(mine[-n:])
        out.append(tail if n == len(mine) else "…/" + tail)
    return [short_id(t) if "/" not in t else t for t in out]


def short_id(text: str, keep: int = 12) -> str:
    """A long opaque id (a session uuid, a folder digest) cut to its first characters."""
    return text if len(text) <= keep + 1 else text[:keep] + "…"


def distinct_names(names: list[str], ids: list[str]) -> list[str]:
    """Sibling names that read apart within their first characters (a narrow tree cuts the rest): a name two
    siblings share starts with their short ids; a long beginning shared with a sibling is elided to its first
    word, from the word where they part: `I'd like to word the Gemini CLI…` beside `I'd like to word the
    Gemini hook…` reads `I'd…Gemini CLI…` and `I'd…Gemini hook…`."""
    seen: dict[str, int] = {}
    for name in names:
        seen[name] = seen.get(name, 0) + 1
    names = [f"{short_id(i, 6).rstrip('…')} · {name}" if seen[name] > 1 else name
             for name, i in zip(names, ids, strict=True)]
    # The longest beginning a name shares with any sibling is the one it shares with a neighbour in sorted
    # order (n log n: a project may hold a thousand sessions, and this runs on the loop).
    order = sorted(range(len(names)), key=names.__getitem__)
    longest = [0] * len(names)
    for a, b in zip(order, order[1:], strict=False):
        n = common_prefix(names[a], names[b])
        longest[a], longest[b] = max(longest[a], n), max(longest[b], n)
    out = []
    for i, name in enumerate(names):
        shared = longest[i]
        if shared <= SHARED_KEPT:
            out.append(name)
            continue
        part = name.rfind(" ", 0, shared + 1) + 1  # from the start of the word where they part
        if part <= SHARED_KEPT // 2:
            part = shared - 2
        first = name.split(" ", 1)[0][:SHARED_KEPT // 2]
        out.append(f"{first}…{name[part:]}")
    return out


def common_prefix(a: str, b: str) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


SHARED_KEPT = 12  # a shared beginning longer than this is elided (the tree shows 14 characters at depth 4, 80x24)


FOLDED_OVER = 20  # a node with more rows under it than this starts folded (a month of chats, a busy project)


def walk(node: TreeNode[Any]) -> list[TreeNode[Any]]:
    """The node and every node under it."""
    out, stack = [], [node]
    while stack:
        node = stack.pop()
        out.append(node)
        stack += list(node.children)
    return out


def node_key(node: TreeNode[Any]) -> str:
    """What names a node across rebuilds of the tree (its scope, or its group and where it hangs)."""
    key: str = (node.data or {}).get("key", "")
    return key


def arrange(parent: str | None, trees: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Sibling subtrees as the tree shows them, each with the name its row shows.

    Imported conversations are grouped by month (and, when they hang under no import scope of their source,
    by source first), newest first; a conversation or session row shows its conversation page's title as the
    store reads it now (else its short id); a coding agent's project shows the end of its path that tells it
    from its siblings. Sibling rows never read alike, so a narrow tree never cuts them to one same prefix."""
    chats = [t for t in trees if imported_kind(t["scope"]["namespace"]) == "conversation"]
    rest = [t for t in trees if imported_kind(t["scope"]["namespace"]) != "conversation"]
    out = name_rows(parent, rest)
    if not chats:
        return out
    by_source: dict[str, list[dict[str, Any]]] = {}
    for tree in chats:
        by_source.setdefault(tree["scope"]["namespace"].split(":")[1], []).append(tree)
    if parent is None:  # the `conversation` group: a row for each source, its months under it
        for source in sorted(by_source, key=source_name):
            months = by_month(f"{source_name(source)} chats", by_source[source])
            out.append(group_of(source_name(source) + " chats", f"{source_name(source)} chats", months))
    else:
        out += by_month(parent, chats, prefix=len(by_source) > 1)
    return out


def by_month(where: str, chats: list[dict[str, Any]], prefix: bool = False) -> list[dict[str, Any]]:
    """Conversations in a group a month (by the day each began), newest month first, newest first in each."""
    months: dict[str, list[dict[str, Any]]] = {}
    for tree in chats:
        day = day_of(tree["scope"])
        source = source_name(tree["scope"]["namespace"].split(":")[1]) + " " if prefix else ""
        months.setdefault(f"{source}{day[:7] or 'undated'}", []).append(tree)
    groups = []
    for month, members in months.items():
        members.sort(key=lambda t: (day_of(t["scope"]), t["scope"]["namespace"]), reverse=True)
        groups.append(group_of(month, f"{where} › {month}", name_rows(None, members, titled=True)))
    # the newest month first (within each source), undated last
    return sorted(groups, key=lambda g: (g["name"].endswith("undated"), g["name"].rsplit(" ", 1)[0] if prefix else "",
                                         invert(g["name"].rsplit(" ", 1)[-1])))


def invert(text: str) -> str:
    """A key that sorts `YYYY-MM` strings newest first."""
    return "".join(chr(0x10FFFF - ord(c)) for c in text)


def group_of(name: str, label: str, kids: list[dict[str, Any]]) -> dict[str, Any]:
    return {"group": True, "name": name, "label": label, "kids": kids, "count": sum(k["count"] for k in kids),
            "newest": newest(*(k["newest"] for k in kids)), "scopes": sum(k["scopes"] for k in kids)}


def name_rows(parent: str | None, trees: list[dict[str, Any]], titled: bool = False) -> list[dict[str, Any]]:
    """Each scope subtree with the name its row shows (see arrange)."""
    kinds = [imported_kind(t["scope"]["namespace"]) for t in trees]
    projects = [i for i, k in enumerate(kinds) if k == "project" and parent and
                t_parent(trees[i]) == parent]
    tails = dict(zip(projects, distinct_tails([trees[i]["scope"]["namespace"].split(":")[2] for i in projects]), strict=True))
    names: list[str] = []
    beside: list[str | None] = []
    for i, (tree, kind) in enumerate(zip(trees, kinds, strict=True)):
        scope = tree["scope"]
        namespace, title = scope["namespace"], scope.get("title")
        if kind in ("conversation", "session") and (titled or parent):
            names.append(one_line(title)[:80] if title else short_id(namespace.rsplit(":", 1)[-1]))
        elif kind == "project" and i in tails:
            names.append(tails[i])
        elif kind == "agent" and parent is None:
            names.append(f"{source_name(namespace.split(':')[1])} sessions")
        else:
            names.append(namespace)
            beside.append(title)
            continue
        beside.append(None)
    names = distinct_names(names, [t["scope"]["namespace"].rsplit(":", 1)[-1] for t in trees])
    shown = [{**tree, "name": name, "beside": b} for tree, name, b in zip(trees, names, beside, strict=True)]
    if any(k == "session" for k in kinds):  # sessions newest first
        shown.sort(key=lambda t: (day_of(t["scope"]), t["name"]), reverse=True)
    return shown


def t_parent(tree: dict[str, Any]) -> str | None:
    scope: Scope = tree["scope"]
    return scope.get("parent")


class ScopeTree(SteadyScrollbars, Tree[dict[str, Any]]):
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
        self.scopes: list[Scope] = []

    def show_scopes(self, scopes: list[Scope], selected: list[str] | None = None) -> None:
        """Rebuild the tree from list_scopes rows (the folds the user made and the cursor's node are kept)."""
        folds = {node_key(n): n.is_expanded for n in walk(self.root) if n.children and n is not self.root}
        at = node_key(self.cursor_node) if self.cursor_node is not None and self.cursor_line >= 0 else None
        self.scopes = scopes
        self.clear()
        known = {s["namespace"] for s in scopes}
        children: dict[str, list[Scope]] = {}
        tops: list[Scope] = []
        for scope in scopes:
            parent = scope.get("parent")
            if parent and parent in known and parent != scope["namespace"]:
                children.setdefault(parent, []).append(scope)
            else:
                tops.append(scope)
        placed: set[str] = set()

        def subtree(scope: Scope) -> dict[str, Any]:
            """The scope, the subtrees under it, and what they hold together."""
            placed.add(scope["namespace"])
            kids: list[dict[str, Any]] = []
            for kid in children.get(scope["namespace"], []):
                if kid["namespace"] not in placed:  # (a cycle of parents is cut where it closes)
                    kids.append(subtree(kid))
            return {"scope": scope, "kids": arrange(scope["namespace"], kids),
                    "count": scope.get("page_count", 0) + sum(k["count"] for k in kids),
                    "newest": newest(scope.get("last_activity"), *(k["newest"] for k in kids)),
                    "scopes": 1 + sum(k["scopes"] for k in kids)}

        groups: dict[str, list[dict[str, Any]]] = {}
        for scope in tops:
            groups.setdefault(prefix_of(scope["namespace"]), []).append(subtree(scope))
        for scope in scopes:  # scopes whose parents form a cycle hang under no top scope: each cycle enters once
            if scope["namespace"] not in placed:
                groups.setdefault(prefix_of(scope["namespace"]), []).append(subtree(scope))

        def add(node: TreeNode[Any], tree: dict[str, Any], where: str) -> None:
            key = f"{where}/{tree['name']}"
            if "group" in tree:
                data = {"kind": "group", "label": tree["label"], "key": key,
                        **{k: tree[k] for k in ("count", "newest", "scopes")}}
            else:
                scope = tree["scope"]
                key = f"scope:{scope['namespace']}"
                data = {"kind": "scope", "namespace": scope["namespace"], "own": scope.get("page_count", 0),
                        "title": scope.get("title"), "key": key, **{k: tree[k] for k in ("count", "newest", "scopes")}}
            label = scope_label(tree["name"], tree["count"], tree.get("beside"))
            if tree["kids"]:
                branch = node.add(label, data=data, expand=folds.get(key, len(tree["kids"]) <= FOLDED_OVER))
                for kid in tree["kids"]:
                    add(branch, kid, key)
            else:
                node.add_leaf(label, data=data)

        for prefix in sorted(groups):
            members = arrange(None, groups[prefix])
            key = f"prefix:{prefix}"
            data = {"kind": "prefix", "prefix": prefix, "key": key, "count": sum(t["count"] for t in members),
                    "newest": newest(*(t["newest"] for t in members)), "scopes": sum(t["scopes"] for t in members)}
            group = self.root.add(scope_label(prefix, data["count"]), data=data, expand=folds.get(key, True))
            for tree in members:
                add(group, tree, key)
        total = sum(s.get("page_count", 0) for s in scopes)
        self.root.set_label(Text.assemble("All scopes", (f"  {total:,}", "dim")))
        self.root.data = {"kind": "all", "key": "all", "count": total,
                          "newest": newest(*(s.get("last_activity") for s in scopes)), "scopes": len(scopes)}
        self.root.expand()
        if at is not None:
            found = next((n for n in walk(self.root) if node_key(n) == at), None)
            if found is not None:
                self.call_after_refresh(self._back_to, found.id)
        self.post_message(self.Highlighted(None))  # the tree changed under its cursor: the detail line follows

    def _back_to(self, node_id: NodeID) -> None:
        """The cursor goes back to the node it was on before the tree was built again (when it is drawn)."""
        try:
            node = self.get_node_by_id(node_id)
        except UnknownNodeID:
            return  # built again meanwhile
        if node.line >= 0:
            self.move_cursor(node)

    def namespaces_under(self, node: TreeNode[Any]) -> list[str]:
        """Every scope namespace in this node's subtree."""
        out = []
        if node.data and node.data.get("kind") == "scope":
            out.append(node.data["namespace"])
        for child in node.children:
            out += self.namespaces_under(child)
        return out

    def on_tree_node_selected(self, event: Tree.NodeSelected[Any]) -> None:
        event.stop()
        data = event.node.data or {}
        if data.get("kind") == "all":
            self.post_message(self.ScopesChosen(None, "all scopes"))
        elif data.get("kind") == "prefix":
            self.post_message(self.ScopesChosen(self.namespaces_under(event.node), f"{data['prefix']}:*"))
        elif data.get("kind") == "group":
            self.post_message(self.ScopesChosen(self.namespaces_under(event.node), data["label"]))
        elif data.get("kind") == "scope":
            names = self.namespaces_under(event.node)
            label = data["namespace"] + (f" (+{len(names) - 1})" if len(names) > 1 else "")
            self.post_message(self.ScopesChosen(names, label))

    class Highlighted(Message):
        """The cursor moved (or the tree was rebuilt under it): the detail line shows `node` (None: the cursor's)."""

        def __init__(self, node: TreeNode[Any] | None) -> None:
            super().__init__()
            self.node = node

    def on_tree_node_highlighted(self, event: Tree.NodeHighlighted[Any]) -> None:
        event.stop()
        self.post_message(self.Highlighted(event.node))


def detail(data: dict[str, Any]) -> Content:
    """The highlighted node in full, in three lines: what it is, what choosing it lists, its last activity."""
    kind, count = data.get("kind"), data.get("count", 0)
    scopes = data.get("scopes", 0)
    if kind == "all":
        name, note = f"All scopes ({scopes:,})", ""
    elif kind == "prefix":
        name, note = f"{data['prefix']}:* ({counted(scopes, 'scope')})", ""
    elif kind == "group":
        name, note = f"{data['label']} ({counted(scopes, 'scope')})", ""
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

    def show_detail(self, node: TreeNode[Any] | None = None) -> None:
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
