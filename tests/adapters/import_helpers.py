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


def kill_mid_import(db: Path, module: str, function: str, source: Path, namespace_like: str,
                    sessions_first: int = 3) -> dict[str, int]:
    """Run `store.adapters.<module>.<function>(Store.open(db), source)` in a child process, SIGKILL it once
    `sessions_first` sessions have landed, and return the pages per session scope left behind."""
    import os
    import signal
    import subprocess
    import sys
    import time

    repo = Path(__file__).resolve().parents[2]
    code = (f"from store import Store; from store.adapters.{module} import {function}\n"
            f"st = Store.open({str(db)!r}); {function}(st, {str(source)!r})")
    proc = subprocess.Popen([sys.executable, "-c", code], cwd=repo, env={**os.environ, "PYTHONPATH": str(repo)})
    deadline = time.monotonic() + 120
    try:
        while time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.02)
            if len(pages_per_scope(db, namespace_like)) >= sessions_first:
                proc.send_signal(signal.SIGKILL)
                break
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
    return pages_per_scope(db, namespace_like)


def pages_per_scope(db: Path, namespace_like: str) -> dict[str, int]:
    """Pages per scope whose namespace is LIKE `namespace_like`, read from another process's store."""
    import sqlite3  # a store in another process only: in this one the store's own SQLite must be used

    if not db.exists():
        return {}
    try:
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
        rows = con.execute("SELECT s.namespace, COUNT(*) FROM page p JOIN scope s ON s.id = p.scope_id "
                           "WHERE s.namespace LIKE ? GROUP BY s.namespace", (namespace_like,)).fetchall()
        con.close()
    except sqlite3.Error:
        return {}
    return dict(rows)
