"""The Relations tab: incoming and outgoing relations grouped by type, and the neighbourhood graph."""

from __future__ import annotations

from textual import on, work
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.message import Message
from textual.widgets import Label, OptionList, Select, Static
from textual.widgets.option_list import Option
from textual.worker import get_current_worker

from .. import reading
from ..messages import GraphLoaded, StoreWorkers
from .graph import EDGE, NODE, GraphView
from .steady import update_rows

HOPS = [("1 hop", 1), ("2 hops", 2), ("3 hops", 3)]


class RelationList(OptionList):
    """Relations of one page; Enter follows the relation to its other end."""

    class Follow(Message):
        def __init__(self, page_id: str) -> None:
            super().__init__()
            self.page_id = page_id

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.relations: dict[str, dict] = {}  # option id -> the relation it shows

    @property
    def highlighted_relation(self) -> dict | None:
        """The relation under the cursor (None on a heading or an empty list)."""
        if self.highlighted is None:
            return None
        return self.relations.get(self.get_option_at_index(self.highlighted).id or "")

    def show_relations(self, relations: dict, titles: dict[str, str]) -> None:
        self.clear_options()
        self.relations = {}
        options: list[Option] = []
        n = 0
        for direction, other_key, arrow in (("outgoing", "to_page_id", "─▶"), ("incoming", "from_page_id", "◀─")):
            groups: dict[str, list[dict]] = {}
            for rel in relations.get(direction, []):
                groups.setdefault(rel["relation_type"], []).append(rel)
            for rtype in sorted(groups):
                options.append(Option(Content.styled(f"{direction} · {rtype} ({len(groups[rtype])})", "bold"),
                                      disabled=True))
                for rel in groups[rtype]:
                    other = rel[other_key]
                    n += 1
                    self.relations[f"r{n}:{other}"] = {**rel, "other_title": titles.get(other, other)}
                    options.append(Option(Content.assemble((f"  {arrow} ", EDGE), (titles.get(other, other), NODE),
                                                           (f"  {other[-6:]}", "dim")), id=f"r{n}:{other}"))
        if not options:
            options.append(Option("No relations.", disabled=True))
        self.add_options(options)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option.id:
            self.post_message(self.Follow(event.option.id.split(":", 1)[1]))


class RelationsView(StoreWorkers, Vertical):
    """Relations list on top; below it the 1-3 hop graph with a relation type filter."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.page_id: str | None = None
        self.types: list[str] = []

    def compose(self) -> ComposeResult:
        yield RelationList(id="relation-list")
        with Horizontal(id="graph-controls"):
            yield Label("Graph ")
            yield Select(HOPS, value=2, allow_blank=False, id="graph-hops", compact=True)
            yield Select([], prompt="every type", id="graph-type", compact=True)
        yield GraphView(id="graph")
        yield Static("", id="relation-detail", classes="detail")  # the highlighted line in full

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        event.stop()
        prompt = event.option.prompt
        update_rows(self.query_one("#relation-detail", Static),
                    Content((prompt.plain if isinstance(prompt, Content) else str(prompt)).strip()))

    def show(self, page_id: str, relations: dict, titles: dict[str, str]) -> None:
        self.page_id = page_id
        self.query_one(RelationList).show_relations(relations, titles)
        found = sorted({r["relation_type"] for d in ("outgoing", "incoming") for r in relations.get(d, [])})
        from store import RECOMMENDED_RELATION_TYPES

        types = sorted(set(found) | set(RECOMMENDED_RELATION_TYPES))
        if types != self.types:
            self.types = types
            self.query_one("#graph-type", Select).set_options([(t, t) for t in types])
        self.reload_graph()

    def clear(self) -> None:
        """No page: no relations, no graph (a graph answer in flight is for another page and is dropped)."""
        self.page_id = None
        self.query_one(RelationList).clear_options()
        self.query_one(RelationList).relations = {}
        self.query_one(GraphView).clear_options()
        update_rows(self.query_one("#relation-detail", Static), "")

    def reload_graph(self) -> None:
        if self.page_id is None:
            return
        hops = self.query_one("#graph-hops", Select).value
        kind = self.query_one("#graph-type", Select).value
        types = {kind} if isinstance(kind, str) else None
        self._graph(self.page_id, int(hops) if isinstance(hops, int) else 2, types)

    @work(thread=True, exclusive=True, exit_on_error=False, group="graph")
    def _graph(self, page_id: str, hops: int, types: set[str] | None) -> None:
        graph = reading.neighbourhood(self.app.store, page_id, hops, types)
        if not get_current_worker().is_cancelled:
            self.post_message(GraphLoaded(page_id, graph))

    @on(GraphLoaded)
    def _graph_loaded(self, message: GraphLoaded) -> None:
        if message.page_id == self.page_id:
            message.stop()
            self.query_one(GraphView).show_graph(message.graph, message.page_id)

    def on_select_changed(self, event: Select.Changed) -> None:
        event.stop()
        self.reload_graph()
