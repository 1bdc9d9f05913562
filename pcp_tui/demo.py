"""The demo store: filling it from the demo world shipped in pcp_tui/data/demo.jsonl (its path: store.paths.demo_path).

The file is a list of operations (scope, write, revise, import, link, archive, tombstone, suppress,
recommend_tombstone) replayed through ordinary Store methods, so the demo exercises the same paths
as real use. Runs in a worker thread; never touches the user's own store.
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any, Callable, Iterator

from .shared import LIFECYCLE_STATUSES

MODEL_PERMISSIONS = {"search", "read", "write", "manage_scope", "revise", "link", "suppress", "tombstone"}


def demo_operations() -> Iterator[dict]:
    """The shipped demo operations, in order (the first line is a header)."""
    text = resources.files("pcp_tui").joinpath("data/demo.jsonl").read_text(encoding="utf-8")
    for number, line in enumerate(text.splitlines(), 1):
        if line.strip() and number > 1:
            yield json.loads(line)


def is_empty(store: Any) -> bool:
    """True when the store holds no page at all (of any status) and no scope."""
    # The page first: list_scopes counts the pages of the scopes it lists (slow on a big store).
    if store.list_pages(status=list(LIFECYCLE_STATUSES), limit=1)["pages"]:
        return False
    return not store.list_scopes(limit=1)["scopes"]


def fill(store: Any, progress: Callable[[int, int], None] | None = None) -> dict[str, str]:
    """Replay the demo world into `store`; returns the demo refs -> page ids."""
    from store import AccessSession

    ops = list(demo_operations())
    refs: dict[str, str] = {}
    heads: dict[str, str] = {}

    def session(op: dict) -> Any:
        actor = op.get("actor")
        if not actor:
            return store
        _, _, client = actor.partition(":")
        return store.with_session(AccessSession.model_client(client, {"*": MODEL_PERMISSIONS}))

    for done, op in enumerate(ops, 1):
        kind = op["op"]
        if kind == "scope":
            store.create_scope(op["namespace"], display_name=op.get("display_name"),
                               description=op.get("description"), parent=op.get("parent"))
        elif kind == "write":
            inputs = [heads[r] for r in op.get("derived_from", [])]
            provenance = [{"operation": "derive", "input_revision_ids": inputs}] if inputs else None
            result = session(op).write_page(
                op["namespace"], content=op["content"], media_type=op.get("media_type", "text/markdown"),
                facets=op.get("facets"), observed_at=op.get("observed_at"), source_refs=op.get("source_refs"),
                provenance=provenance)
            refs[op["ref"]], heads[op["ref"]] = result["page_id"], result["revision_id"]
        elif kind == "revise":
            result = session(op).revise_page(refs[op["ref"]], heads[op["ref"]], content=op["content"],
                                             observed_at=op.get("observed_at"))
            heads[op["ref"]] = result["revision_id"]
        elif kind == "import":
            with store.import_unit(op["tool"]) as unit:
                ref = unit.upsert(op["source"], op["namespace"], payload={"media_type": "text/markdown",
                                  "content": op["content"]}, source_refs=op.get("source_refs"),
                                  facets=op.get("facets"), observed_at=op.get("observed_at"))
            refs[op["ref"]], heads[op["ref"]] = ref.page_id, ref.revision_id
        elif kind == "link":
            store.link_pages(refs[op["from"]], op["type"], refs[op["to"]])
        elif kind in ("archive", "tombstone"):
            getattr(store, f"{kind}_page")(refs[op["ref"]], op["reason"])
        elif kind == "suppress":
            store.suppress_pages([refs[op["ref"]]], op["context"], reason=op.get("reason"))
        elif kind == "recommend_tombstone":
            session(op).recommend_tombstone(refs[op["ref"]], op["reason"])
        if progress:
            progress(done, len(ops))
    return refs
