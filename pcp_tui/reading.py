"""Store reads the app composes from several calls (run inside worker threads, never on the event loop)."""

from __future__ import annotations

from typing import Any, Iterable

from store import LIMITS
from store import chunks as _chunks

from .shared import PROJECTIONS
from .text import printable

MAX_GRAPH_NODES = 40


def chunks(items: list, size: int = LIMITS["max_ids_per_read"]) -> Iterable[list]:
    """`items` in batches one read_pages call accepts."""
    return _chunks(items, size)


def title_of(envelope: dict) -> str:
    """A page's title as the store derives it: the title facet, else the first content line (printable)."""
    facets = envelope.get("facets") or {}
    if facets.get("title"):
        return printable(str(facets["title"]))
    content = ((envelope.get("payload") or {}).get("content") or "").strip()
    for line in content.splitlines():
        line = line.strip().lstrip("#").strip()
        if line:
            return printable(line[:120])
    refs = envelope.get("source_refs") or []
    return printable(refs[0]["uri"] if refs else envelope.get("page_id", ""))


def titles(store: Any, page_ids: Iterable[str], *, marked: bool = False) -> dict[str, str]:
    """Titles of pages (those the session may see; others are left out). `marked`: a page that is not active
    says so after its title (`… (tombstoned)`), as the relation list and the graph show them."""
    wanted = list(dict.fromkeys(page_ids))
    out: dict[str, str] = {}
    status: dict[str, str] = {}
    for batch in chunks(wanted):
        try:
            results = store.read_pages(batch, projections=("manifest",))["results"]
        except Exception:  # noqa: BLE001 - none of the batch is visible any more
            continue
        for res in results:
            if "revision" in res:
                env = res["revision"]
                out[env["page_id"]] = title_of(env)
                status[env["page_id"]] = env.get("lifecycle_status", "active")
    for pid in [p for p in wanted if p in out and not out[p]]:
        env = store.read_pages([pid], max_chars=200)["results"][0].get("revision", {})
        out[pid] = title_of(env)
    if marked:
        for pid, state in status.items():
            if state != "active":
                out[pid] = f"{out[pid]} ({state})"
    return out


def whole_content(store: Any, revision_id: str) -> str:
    """A revision's whole content, read part by part (`offset`); checked against its digest, so that a cut text
    can never pass for the whole (it would be written back by a revise). Run in a worker thread."""
    from store import Conflict
    from store.validate import content_digest

    parts: list[str] = []
    offset: int | None = None
    digest = None
    while True:
        item = store.read_pages([revision_id], projections=("manifest", "payload"),
                                **({} if offset is None else {"offset": offset}))["results"][0]
        revision = item["revision"]
        digest = revision.get("content_digest")
        parts.append(((revision.get("payload") or {}).get("content")) or "")
        offset = item.get("next_offset")
        if offset is None:
            break
    text = "".join(parts)
    if digest is not None and content_digest(text) != digest:
        raise Conflict("The page's text could not be read whole; nothing was opened for editing. Try again.")
    return text


def load_page(store: Any, page_id: str) -> dict:
    """Everything the inspector shows for one page, in two reads plus relation-end titles."""
    full = store.read_pages([page_id], projections=PROJECTIONS)["results"][0]
    raw = store.read_pages([page_id])  # exactly what `pcp read --json ID` prints
    relations = full.get("relations") or {"outgoing": [], "incoming": []}
    others = [r["to_page_id"] for r in relations["outgoing"]] + [r["from_page_id"] for r in relations["incoming"]]
    inputs = [i for e in full["revision"].get("provenance", []) for i in e.get("input_revision_ids", [])]
    return {"page_id": page_id, "full": full, "raw": raw, "titles": titles(store, others, marked=True),
            "input_titles": revision_titles(store, inputs)}


def revision_titles(store: Any, revision_ids: Iterable[str]) -> dict[str, str]:
    """Titles of revisions (erased or hidden ones are left out)."""
    names: dict[str, str] = {}
    for batch in chunks(list(dict.fromkeys(revision_ids))):
        try:
            for r in store.read_pages(batch, projections=("manifest",))["results"]:
                if "revision" in r:
                    names[r["revision"]["revision_id"]] = title_of(r["revision"])
        except Exception:  # noqa: BLE001 - none of them can be read any more
            pass
    return names


def neighbourhood(store: Any, root: str, hops: int, types: set[str] | None = None) -> dict:
    """Pages within `hops` relations of `root` (either direction), optionally only some relation types.

    Returns {"nodes": {page_id: {"hop", "title"}}, "edges": [(relation_id, from, type, to)], "truncated"}.
    """
    nodes: dict[str, dict] = {root: {"hop": 0}}
    edges: dict[str, tuple[str, str, str, str]] = {}
    frontier, truncated = [root], False
    for hop in range(1, hops + 1):
        following: list[str] = []
        for batch in chunks(frontier):
            for res in store.read_pages(batch, projections=("manifest", "relations"))["results"]:
                rels = res.get("relations") or {}
                for rel in rels.get("outgoing", []) + rels.get("incoming", []):
                    if types and rel["relation_type"] not in types:
                        continue
                    edges[rel["relation_id"]] = (rel["relation_id"], rel["from_page_id"], rel["relation_type"],
                                                 rel["to_page_id"])
                    for other in (rel["from_page_id"], rel["to_page_id"]):
                        if other in nodes:
                            continue
                        if len(nodes) >= MAX_GRAPH_NODES:
                            truncated = True
                            continue
                        nodes[other] = {"hop": hop}
                        following.append(other)
        frontier = following
        if not frontier:
            break
    kept = [e for e in edges.values() if e[1] in nodes and e[3] in nodes]
    names = titles(store, list(nodes), marked=True)
    for pid, node in nodes.items():
        node["title"] = names.get(pid, pid)
    return {"nodes": nodes, "edges": kept, "truncated": truncated}


def provenance_children(store: Any, revision_id: str) -> dict:
    """One level of a revision's provenance: its events' input revisions and its source refs."""
    res = store.read_pages([revision_id], projections=("manifest",))["results"][0]
    env = res["revision"]
    inputs = [i for e in env.get("provenance", []) for i in e.get("input_revision_ids", [])]
    return {"revision": env, "input_titles": revision_titles(store, inputs)}
