"""Shared helpers for the importer tests (imported as a top-level module, like tests/store's helpers)."""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

# The sample exports vendored from shared/data/exports (tests/data/exports/SOURCES.md).
EXPORTS = Path(__file__).resolve().parents[1] / "data" / "exports"
VAULT = EXPORTS / "vault-mfarragher-obsidiantools-vault-stub"
VAULT_NAME = VAULT.name


def hits(store, scopes: Iterable[str] = (), query: str = "", mode: str = "temporal") -> list[dict]:
    """Every hit of a search, all pages of results."""
    out, cursor = [], None
    while True:
        res = store.search_pages(query, scopes=list(scopes), mode=mode, limit=50, cursor=cursor)
        out.extend(res["hits"])
        cursor = res["next_cursor"]
        if not cursor:
            return out


def read(store, ids: Iterable[str], projections=("manifest", "relations")) -> list[dict]:
    """read_pages results for any number of ids (20 per call), errors not expected."""
    ids = list(ids)
    out = []
    for i in range(0, len(ids), 20):
        res = store.read_pages(ids[i:i + 20], projections=list(projections))["results"]
        for r in res:
            assert "error" not in r, r
        out.extend(res)
    return out


def pages(store, scopes: Iterable[str] = (), projections=("manifest", "relations")) -> list[dict]:
    """Every active page in the scopes (all scopes when none given), read with the projections."""
    return read(store, [hit["page_id"] for hit in hits(store, scopes)], projections)


def page_count(store) -> int:
    return store.doctor()["counts"]["page"]


def scopes(store) -> dict[str, dict]:
    out, cursor = {}, None
    while True:
        res = store.list_scopes(limit=100, cursor=cursor)
        out.update({s["namespace"]: s for s in res["scopes"]})
        cursor = res["next_cursor"]
        if not cursor:
            return out


def outgoing(result: dict, relation_type: str | None = None) -> list[str]:
    return [r["to_page_id"] for r in result["relations"]["outgoing"]
            if relation_type is None or r["relation_type"] == relation_type]


def incoming(result: dict, relation_type: str | None = None) -> list[str]:
    return [r["from_page_id"] for r in result["relations"]["incoming"]
            if relation_type is None or r["relation_type"] == relation_type]


def all_relation_types(results: list[dict]) -> set[str]:
    return {r["relation_type"] for res in results for d in ("outgoing", "incoming") for r in res["relations"][d]}
