"""The Provenance tab: from this revision back through its input revisions to the source refs, one level per expand."""

from __future__ import annotations

from rich.text import Text
from textual import on, work
from textual.widgets import Tree
from textual.widgets.tree import NodeID, TreeNode
from textual.worker import get_current_worker

from store.bundle import locator_text

from .. import reading
from ..messages import ProvenanceLoaded, StoreWorkers
from ..text import printable


class ProvenanceTree(StoreWorkers, Tree[dict]):
    """Expanding an input revision reads its provenance (lazily, like Textual's DirectoryTree)."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("Provenance", data={"kind": "none"}, id=id)

    def show(self, envelope: dict, title: str, input_titles: dict[str, str]) -> None:
        """Start from a revision envelope already read (no store call for the first level)."""
        self.reset(Text(f"{title}  ({envelope['revision_id']})"), {"kind": "revision", "id": envelope["revision_id"],
                                                                     "loaded": True})
        self._add_level(self.root, envelope, input_titles)
        self.root.expand()

    def clear_page(self) -> None:
        """No page: an empty tree (answers still in flight find no node and are dropped)."""
        self.reset("Provenance", {"kind": "none"})

    def _add_level(self, node: TreeNode, envelope: dict, input_titles: dict[str, str]) -> None:
        for event in envelope.get("provenance", []):
            who = f"{event.get('actor_type', '?')}:{event.get('actor_id', '?')}"
            label = Text(f"{event.get('operation', '?')} by {who} at {(event.get('timestamp') or '')[:19]}")
            if event.get("tool_or_model"):
                label.append(f" via {event['tool_or_model']}", style="dim")
            inputs = event.get("input_revision_ids", [])
            erased = event.get("input_deleted", {})
            if not inputs and not erased:
                node.add_leaf(label, data={"kind": "event"})
                continue
            branch = node.add(label, data={"kind": "event"}, expand=True)
            for rev in inputs:
                if rev in erased:
                    continue
                name = input_titles.get(rev, "input revision")
                branch.add(Text(f"{name}  ({rev})"), data={"kind": "revision", "id": rev, "loaded": False})
            for rev, receipt in erased.items():
                branch.add_leaf(Text(f"erased input {rev} (receipt {receipt})", style="italic"), data={"kind": "erased"})
        for ref in envelope.get("source_refs", []):
            label = Text(f"source: {ref.get('uri', '?')}")
            if ref.get("locator"):
                label.append(f"  {printable(locator_text(ref['locator']))}", style="dim")
            node.add_leaf(label, data={"kind": "source", "uri": ref.get("uri")})
        if not node.children:
            node.add_leaf(Text("no recorded inputs or sources", style="dim"), data={"kind": "none"})

    def on_tree_node_expanded(self, event: Tree.NodeExpanded) -> None:
        event.stop()
        data = event.node.data or {}
        if data.get("kind") == "revision" and not data.get("loaded"):
            data["loaded"] = True
            self._expand(event.node.id, data["id"])

    # Not exclusive: expanding two nodes in a row must load both (each result goes to its own node).
    @work(thread=True, exclusive=False, exit_on_error=False, group="provenance")
    def _expand(self, node_id: NodeID, revision_id: str) -> None:
        level = reading.provenance_children(self.app.store, revision_id)
        if not get_current_worker().is_cancelled:
            self.post_message(ProvenanceLoaded(node_id, level))

    @on(ProvenanceLoaded)
    def _level_loaded(self, message: ProvenanceLoaded) -> None:
        message.stop()
        try:
            node = self.get_node_by_id(message.node_id)
        except Exception:  # noqa: BLE001 - the tree was rebuilt for another page meanwhile
            return
        self._add_level(node, message.level["revision"], message.level["input_titles"])
