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
                    stop_unit: int = 6) -> dict[str, int]:
    """Run `store.adapters.<module>.<function>(Store.open(db), source)` in a child process that SIGKILLs itself
    half-way through its `stop_unit`-th import unit (a stop point: no race with the child); return the pages per
    session scope left behind.

    The child commits every unit on its own (BATCH_SECONDS = 0), so exactly the units before the stop point are
    in (an agent import's first units make the source's scope, then each new project's scope before its first
    session: with one project, unit 6 is the fourth session)."""
    import os
    import subprocess
    import sys

    repo = Path(__file__).resolve().parents[2]
    code = (f"import store.importing; store.importing.BATCH_SECONDS = 0\n"
            f"from store import Store; from store.adapters.{module} import {function}\n"
            f"st = Store.open({str(db)!r}); {function}(st, {str(source)!r})")
    stop = f"import-unit:{stop_unit}"
    proc = subprocess.run([sys.executable, "-c", code], cwd=repo, capture_output=True, timeout=600,
                          env={**os.environ, "PYTHONPATH": str(repo), "PCP_TEST_STOP": stop})
    assert proc.returncode == -9, proc.stderr.decode()  # stopped by its own SIGKILL, not finished
    return pages_per_scope(db, namespace_like)


def import_in_one_group_killed(db: Path, module: str, function: str, source: Path, namespace_like: str,
                               at_unit: int = 6) -> dict[str, int]:
    """The same import with its default grouping of units into transactions, SIGKILLed at the `at_unit`-th unit,
    all of them in the first group (BATCH_SECONDS large): nothing of the group is left."""
    import os
    import subprocess
    import sys

    repo = Path(__file__).resolve().parents[2]
    code = (f"import store.importing; store.importing.BATCH_SECONDS = 3600\n"
            f"from store import Store; from store.adapters.{module} import {function}\n"
            f"st = Store.open({str(db)!r}); {function}(st, {str(source)!r})")
    proc = subprocess.run([sys.executable, "-c", code], cwd=repo, capture_output=True, timeout=600,
                          env={**os.environ, "PYTHONPATH": str(repo), "PCP_TEST_STOP": f"import-unit:{at_unit}"})
    assert proc.returncode == -9, proc.stderr.decode()
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
