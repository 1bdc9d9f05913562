"""The Relations tab: incoming and outgoing relations grouped by type, and the neighbourhood graph."""

from __future__ import annotations

from textual import on, work
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.markup import escape
from textual.message import Message
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option
from textual.worker import get_current_worker

from .. import reading
from ..messages import GraphLoaded, StoreWorkers
from .graph import EDGE, NODE, GraphView
from .steady import SteadyOptionList, update_rows
from ..text import one_line

HOPS = (1, 2, 3)  # how deep the graph is drawn; 2 to start with


class RelationList(SteadyOptionList):
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
        self.relations = {}
        options: list[Option] = []
        n = 0
        for direction, other_key, arrow in (("outgoing", "to_page_id", "─▶"), ("incoming", "from_page_id", "◀─")):
            groups: dict[str, list[dict]] = {}
            for rel in relations.get(direction, []):
                groups.setdefault(rel["relation_type"], []).append(rel)
            for rtype in sorted(groups):
                options.append(Option(Content.styled(f"{direction} · {one_line(rtype)} ({len(groups[rtype])})", "bold"),
                                      disabled=True))
                for rel in groups[rtype]:
                    other = rel[other_key]
                    n += 1
                    self.relations[f"r{n}:{other}"] = {**rel, "other_title": titles.get(other, other)}
                    options.append(Option(Content.assemble((f"  {arrow} ", EDGE), (one_line(titles.get(other, other)), NODE),
                                                           (f"  {other[-6:]}", "dim")), id=f"r{n}:{other}"))
        if not options:
            options.append(Option("No relations.", disabled=True))
        self.replace_options(options)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option.id:
            self.post_message(self.Follow(event.option.id.split(":", 1)[1]))


class RelationsView(StoreWorkers, Vertical):
    """Relations list on top; below it the 1-3 hop graph, drawn for one relation type or every type.

    The graph's depth and type are one line of text, changed with `h` and `g` (or a click on them): two
    selects here made each page shown a layout pass and a restyle of a dozen widgets (issue 13, item 15)."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.page_id: str | None = None
        self.types: list[str] = []  # the types `g` goes through: those of this page, then the recommended ones
        self.hops = 2
        self.kind: str | None = None  # the one relation type drawn, or None for every type
        self._controls = ""  # the graph line as shown

    def compose(self) -> ComposeResult:
        yield RelationList(id="relation-list")
        self._controls = ""  # no page yet: no graph, so no line about it (show draws it)
        yield Static("", id="graph-controls")
        yield GraphView(id="graph")
        yield Static("", id="relation-detail", classes="detail")  # the highlighted line in full

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        event.stop()
        prompt = event.option.prompt
        update_rows(self.query_one("#relation-detail", Static),
                    Content((prompt.plain if isinstance(prompt, Content) else str(prompt)).strip()))

    def show(self, page_id: str, relations: dict, titles: dict[str, str]) -> None:
        if page_id != self.page_id:  # the line shown in full was another page's: it goes with that page
            update_rows(self.query_one("#relation-detail", Static), "")
        self.page_id = page_id
        self.query_one(RelationList).show_relations(relations, titles)
        found = sorted({r["relation_type"] for d in ("outgoing", "incoming") for r in relations.get(d, [])})
        from store import RECOMMENDED_RELATION_TYPES

        self.types = found + sorted(set(RECOMMENDED_RELATION_TYPES) - set(found))
        if self.kind is not None and self.kind not in found:
            self.kind = None  # (a page without that type: its whole graph, not an empty one)
        self._show_controls()
        self.reload_graph()

    def clear(self) -> None:
        """No page: no relations, no graph (a graph answer in flight is for another page and is dropped)."""
        self.page_id = None
        self.query_one(RelationList).replace_options([])
        self.query_one(RelationList).relations = {}
        self.query_one(GraphView).replace_options([])
        update_rows(self.query_one("#relation-detail", Static), "")
        self._controls = ""  # (no graph, so no line about it: the next page draws it again)
        self.query_one("#graph-controls", Static).update("", layout=False)

    def next_hops(self) -> None:
        """`h`: the graph one hop deeper, from the deepest back to one."""
        self.hops = HOPS[(HOPS.index(self.hops) + 1) % len(HOPS)]
        self._show_controls()
        self.reload_graph()

    def next_type(self) -> None:
        """`g`: the graph drawn for the next relation type (this page's types first), then every type again."""
        choices: list[str | None] = [None, *self.types]
        self.kind = choices[(choices.index(self.kind) + 1) % len(choices)] if self.kind in choices else None
        self._show_controls()
        self.reload_graph()

    def _controls_markup(self) -> str:
        hops = f"{self.hops} hop" + ("" if self.hops == 1 else "s")
        kind = escape(one_line(self.kind) if self.kind else "every type")
        return (f"Graph [@click=screen.graph_hops][b]{hops}[/b] [dim](h)[/dim][/] · "
                f"[@click=screen.graph_type][b]{kind}[/b] [dim](g)[/dim][/]")

    def _show_controls(self) -> None:
        markup = self._controls_markup()
        if markup != self._controls:  # (the same line for most pages: nothing to draw again)
            self._controls = markup
            self.query_one("#graph-controls", Static).update(Content.from_markup(markup), layout=False)  # one row

    def reload_graph(self) -> None:
        if self.page_id is None:
            return
        self._graph(self.page_id, self.hops, {self.kind} if self.kind else None)

    @work(thread=True, exclusive=True, exit_on_error=False, group="graph")
    def _graph(self, page_id: str, hops: int, types: set[str] | None) -> None:
        graph = reading.neighbourhood(self.app.store, page_id, hops, types)
        kinds = " ".join(f"“{one_line(t)}”" for t in sorted(types or ()))
        # (short: the graph is 37 columns wide at 80x24; a type drawn alone is followed from this page only)
        empty = f"No {kinds or 'relations'} within {hops} hop{'' if hops == 1 else 's'}."
        if not get_current_worker().is_cancelled:
            self.post_message(GraphLoaded(page_id, graph, empty))

    @on(GraphLoaded)
    def _graph_loaded(self, message: GraphLoaded) -> None:
        if message.page_id == self.page_id:
            message.stop()
            self.query_one(GraphView).show_graph(message.graph, message.page_id, message.empty)
