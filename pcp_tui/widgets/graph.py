"""The 1-3 hop neighbourhood of a page drawn in the terminal: a spanning tree with typed, directed edges.

Each line is an option, so Enter on a node follows it; edges outside the spanning tree are listed
after it. Colours come from $graph-root, $graph-node and $graph-edge.
"""

from __future__ import annotations

from collections import deque

from textual.content import Content
from textual.message import Message
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from .steady import SteadyOptionList
from ..text import one_line

ROOT, NODE, EDGE = "bold $graph-root", "$graph-node", "$graph-edge"


def graph_lines(graph: dict, root: str, empty: str = "") -> list[tuple[Content, str | None]]:
    """(line, page id to follow or None) for a neighbourhood from reading.neighbourhood; `empty` is said
    under the root when no relation was drawn (e.g. `No “contains” within 2 hops.`)."""
    nodes, edges = graph["nodes"], graph["edges"]
    adjacent: dict[str, list[tuple[str, str, str, str]]] = {}
    for rid, frm, rtype, to in edges:
        adjacent.setdefault(frm, []).append((rid, rtype, to, "out"))
        adjacent.setdefault(to, []).append((rid, rtype, frm, "in"))
    children: dict[str, list[tuple[str, str, str, str]]] = {}
    seen, used, queue = {root}, set(), deque([root])
    while queue:
        here = queue.popleft()
        for rid, rtype, other, way in sorted(adjacent.get(here, []), key=lambda e: (e[1], nodes[e[2]]["title"])):
            if other not in seen:
                seen.add(other)
                used.add(rid)
                children.setdefault(here, []).append((rid, rtype, other, way))
                queue.append(other)
    def title(page: str) -> str:
        return one_line(nodes[page]["title"])

    lines: list[tuple[Content, str | None]] = [(Content.styled("◉ " + title(root), ROOT), None)]

    def walk(page: str, indent: str) -> None:
        kids = children.get(page, [])
        for k, (_rid, rtype, other, way) in enumerate(kids):
            last = k == len(kids) - 1
            edge = f"─{one_line(rtype)}─▶ " if way == "out" else f"◀─{one_line(rtype)}── "
            line = Content.assemble((indent + ("└─" if last else "├─"), EDGE), (edge, EDGE),
                                    (title(other), NODE))
            lines.append((line, other))
            walk(other, indent + ("   " if last else "│  "))

    walk(root, "")
    if not edges and empty:
        lines.append((Content.styled(empty, "dim"), None))
    extra = [e for e in edges if e[0] not in used]
    if extra:
        lines.append((Content.styled("also linked:", EDGE), None))
        for _rid, frm, rtype, to in extra:
            lines.append((Content.assemble(("  " + title(frm), NODE), (f" ─{one_line(rtype)}─▶ ", EDGE),
                                           (title(to), NODE)), to))
    if graph.get("truncated"):
        lines.append((Content.styled(f"(only the nearest {len(nodes)} pages are drawn)", EDGE), None))
    return lines


class GraphView(SteadyOptionList):
    """The neighbourhood graph; Enter on a node follows it."""

    class Follow(Message):
        def __init__(self, page_id: str) -> None:
            super().__init__()
            self.page_id = page_id

    def show_graph(self, graph: dict, root: str, empty: str = "") -> None:
        options = []
        for n, (line, target) in enumerate(graph_lines(graph, root, empty)):
            options.append(Option(line, id=f"g{n}:{target}" if target else None, disabled=target is None))
        self.replace_options(options)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option.id:
            self.post_message(self.Follow(event.option.id.split(":", 1)[1]))
