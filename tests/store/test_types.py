"""Typed results (store/types.py): every Store result is declared, and the declarations match what comes back.

Results stay plain dicts; these tests hold the TypedDicts to the run-time results, key by key and
level by level, so a key added to a result without its type (or the reverse) fails here.
"""

from __future__ import annotations

import types as pytypes
import typing
from typing import Any, Union, get_args, get_origin, get_type_hints, is_typeddict

import pytest

import store as store_pkg
from store import Store, UNTITLED
from store.core import named_rows
from store.import_helper import ImportHelper
from store.importing import ImportUnit

# Public Store operations that do not return a result dict.
NOT_DICTS = {"import_unit": typing.Iterator[ImportUnit], "bulk_loading": typing.Iterator[None], "source_page_id": str | None,
             "index_upgrade_status": store_pkg.UpgradeStatus | None, "source_scope": store_pkg.SourceScope | None,
             "handoff_copy_text": str,  # a handoff copy read back (unsealed when the store is encrypted)
             "import_helper": ImportHelper | None}  # a chat import's planning helper process (store/import_helper.py)


def _public_operations(st: Store) -> dict[str, Any]:
    return {name: getattr(st, name) for name in vars(st) if not name.startswith("_") and callable(getattr(st, name))}


def test_every_public_store_operation_declares_its_result_type(store):
    ops = _public_operations(store)
    assert len(ops) >= 36  # every operation store/facade.py binds
    for name, method in ops.items():
        returns = get_type_hints(method)["return"]
        if name in NOT_DICTS:
            assert returns == NOT_DICTS[name], name
        else:
            assert is_typeddict(returns), f"Store.{name} returns {returns}, not a TypedDict"
            assert getattr(store_pkg, returns.__name__) is returns, f"{returns.__name__} is not exported from store"


def _check(value: Any, expected: Any, where: str) -> None:
    """`value` is of the declared type `expected` (TypedDicts checked key by key, recursively)."""
    origin = get_origin(expected)
    if expected is Any:
        return
    if origin in (Union, pytypes.UnionType):
        options = get_args(expected)
        if value is None and type(None) in options:
            return
        others = [o for o in options if o is not type(None)]
        assert len(others) == 1, f"{where}: ambiguous union {expected}"
        _check(value, others[0], where)
        return
    if is_typeddict(expected):
        assert isinstance(value, dict), f"{where}: {type(value).__name__}, expected {expected.__name__}"
        hints = get_type_hints(expected)
        missing = expected.__required_keys__ - set(value)
        extra = set(value) - set(hints)
        assert not missing, f"{where}: {expected.__name__} misses {sorted(missing)}"
        assert not extra, f"{where}: {expected.__name__} does not declare {sorted(extra)}"
        for key, item in value.items():
            _check(item, hints[key], f"{where}.{key}")
        return
    if origin is list:
        assert isinstance(value, list), f"{where}: {type(value).__name__}, expected a list"
        (inner,) = get_args(expected)
        for i, item in enumerate(value):
            _check(item, inner, f"{where}[{i}]")
        return
    if origin is dict:
        assert isinstance(value, dict), f"{where}: {type(value).__name__}, expected a dict"
        _, inner = get_args(expected)
        for key, item in value.items():
            _check(item, inner, f"{where}.{key}")
        return
    if expected is float:
        assert isinstance(value, (int, float)) and not isinstance(value, bool), f"{where}: {value!r} is not a number"
        return
    assert isinstance(value, expected), f"{where}: {value!r} is not {expected}"


def _conforms(value: Any, st: Store, operation: str) -> None:
    _check(value, get_type_hints(getattr(st, operation))["return"], operation)


def test_results_match_their_declared_types(store, tmp_path):
    st = store
    scope = st.create_scope("project:typed", display_name="Typed", description="types")
    _conforms(scope, st, "create_scope")
    a = st.write_page("project:typed", content="# Alpha\n\nthe alpha page about compactness",
                      source_refs=[{"uri": "file:///a.md", "locator": {"line": 1}}], facets={"keywords": ["k"]},
                      observed_at="2026-01-02T03:04:05.000Z")
    _conforms(a, st, "write_page")
    b = st.write_page("project:typed", content="beta page", provenance=[
        {"operation": "derive", "input_revision_ids": [a["revision_id"]], "tool_or_model": "m"}])
    revised = st.revise_page(a["page_id"], a["revision_id"], content="# Alpha\n\nrevised compactness text")
    _conforms(revised, st, "revise_page")
    _conforms(st.ingest_event({"content": "an event"}, "project:typed", "evt-1"), st, "ingest_event")
    link = st.link_pages(b["page_id"], "supports", a["page_id"])
    _conforms(link, st, "link_pages")
    other = st.link_pages(b["page_id"], "related_to", a["page_id"])
    _conforms(st.unlink(other["relation_id"], "not related"), st, "unlink")
    _conforms(st.write_pages_bulk([{"content": "bulk one"}], "project:typed"), st, "write_pages_bulk")
    blank = st.write_page("project:typed", content="   \n#\n")

    read = st.read_pages([a["page_id"], b["revision_id"], "pg_01NOTAPAGE0000000000000000"],
                         projections=["manifest", "payload", "relations", "history", "source_spans", "facets"])
    _conforms(read, st, "read_pages")
    assert "error" in read["results"][2] and "revision" in read["results"][1]
    noted = st.write_page("project:typed", content="lifecycle notes")
    st.archive_page(noted["page_id"], "typed reason")
    st.suppress_pages([noted["page_id"]], "ctx:typed", reason="typed")
    lifecycle = st.read_pages([noted["page_id"]], projections=["manifest", "lifecycle"])
    _conforms(lifecycle, st, "read_pages")
    assert lifecycle["results"][0]["lifecycle"]["events"] and lifecycle["results"][0]["lifecycle"]["suppressions"]
    _conforms(st.list_scopes(), st, "list_scopes")
    _conforms(st.list_pages(), st, "list_pages")
    _conforms(st.describe_capabilities(), st, "describe_capabilities")
    _conforms(st.doctor(), st, "doctor")
    for mode, query in (("auto", "compactness"), ("text", "compactness"), ("exact", "beta"), ("temporal", ""),
                        ("graph", a["page_id"])):
        found = st.search_pages(query, mode=mode)
        assert found["hits"], mode
        _conforms(found, st, "search_pages")

    _conforms(st.archive_page(b["page_id"], "done"), st, "archive_page")
    _conforms(st.restore_page(b["page_id"], "back"), st, "restore_page")
    _conforms(st.recommend_tombstone(b["page_id"], "stale"), st, "recommend_tombstone")
    _conforms(st.list_recommendations(), st, "list_recommendations")
    _conforms(st.suppress_pages([b["page_id"]], "task:1", reason="noise"), st, "suppress_pages")
    _conforms(st.suppression_contexts(), st, "suppression_contexts")
    _conforms(st.unsuppress_pages([b["page_id"]], "task:1"), st, "unsuppress_pages")
    _conforms(st.tombstone_page(b["page_id"], "withdrawn"), st, "tombstone_page")
    _conforms(st.untombstone_page(b["page_id"], "undo"), st, "untombstone_page")

    _conforms(st.bundle([a["page_id"], b["page_id"]], max_tokens=400), st, "bundle")
    copied = st.copy([a["page_id"], b["page_id"]], label="Chat: typed")
    _conforms(copied, st, "copy")
    extra = st.write_page("project:typed", content="a later page api_key=sk-abcdefghijklmnopqrstuvwx")
    _conforms(st.copy_continue("Chat: typed", ids=[extra["page_id"]]), st, "copy_continue")
    _conforms(st.verify(copied["text"]), st, "verify")
    _conforms(st.handoffs(), st, "handoffs")

    out = tmp_path / "typed.jsonl"
    _conforms(st.export(out), st, "export")
    _conforms(st.export(tmp_path / "md", format="markdown"), st, "export")
    kept = st.record_import({"source": "typed"}, [
        {"file": "f.json", "item": "typed:1", "page_id": a["page_id"], "outcome": "created", "counts": {"created": 1}},
        {"item": "typed:2", "outcome": "skipped", "reason": "nothing in it"}])
    _conforms(kept, st, "record_import")
    _conforms(st.import_report(kept["import_id"]), st, "import_report")
    _conforms(st.plan_delete(a["page_id"], cascade=True), st, "plan_delete")
    _conforms(st.plan_delete_scope("project:typed"), st, "plan_delete_scope")
    _conforms(st.delete_page(blank["page_id"], "gone"), st, "delete_page")
    _conforms(st.list_receipts(), st, "list_receipts")
    for i in range(3):
        st.write_page("project:typed", content=f"bulk victim {i}")
    flt = {"scopes": ["project:typed"], "query": "bulk victim", "mode": "exact"}
    bulk_plan = st.plan_bulk_delete(flt)
    _conforms(bulk_plan, st, "plan_bulk_delete")
    started = st.begin_bulk_delete(flt, "bulk", bulk_plan["digest"], batch_size=2)
    _conforms(started, st, "begin_bulk_delete")
    _conforms(st.bulk_deletion(started["receipt_id"]), st, "bulk_deletion")
    stopped = st.stopped_bulk_deletions()
    _conforms(stopped, st, "stopped_bulk_deletions")
    assert [d["receipt_id"] for d in stopped["deletions"]] == [started["receipt_id"]]
    _conforms(st.resume_bulk_delete(started["receipt_id"]), st, "resume_bulk_delete")
    st.write_page("project:typed", content="bulk victim again")
    _conforms(st.bulk_delete(flt, "bulk", st.plan_bulk_delete(flt)["digest"]), st, "bulk_delete")
    _conforms(st.audit_log(), st, "audit_log")
    assert any("receipt_id" in e for e in st.audit_log()["events"])
    with Store.open(tmp_path / "copy.db") as fresh:
        _conforms(fresh.import_export(out), fresh, "import_export")
    _conforms(st.delete_scope("project:typed", "all gone"), st, "delete_scope")


def test_search_hits_carry_the_shown_title_like_reads(store):
    heading = store.write_page("project:shown", content="# Thesis outline\n\nchapters")
    blank = store.write_page("project:shown", content="   \n#\n")
    read = {r["requested_id"]: r["title"] for r in store.read_pages(
        [heading["page_id"], blank["page_id"]], projections=("manifest",))["results"]}
    hits = {h["page_id"]: h["title"] for h in store.search_pages("", scopes=["project:shown"])["hits"]}
    assert hits == read == {heading["page_id"]: "Thesis outline", blank["page_id"]: UNTITLED}


def test_named_rows_refuse_a_select_that_does_not_match_the_row_type(store):
    class Pair(typing.NamedTuple):
        page_id: str
        title: str

    store.write_page("project:rows", content="# Named\n\nrow")
    rows = named_rows(store._db.execute_sql("SELECT page_id, title FROM page"), Pair)
    assert [(r.page_id.startswith("pg_"), r.title) for r in rows] == [(True, "Named")]
    with pytest.raises(TypeError, match="do not match"):
        named_rows(store._db.execute_sql("SELECT title, page_id FROM page"), Pair)


def test_the_types_module_declares_what_it_exports():
    from store import types as t

    declared = {n for n, v in vars(t).items() if is_typeddict(v) and getattr(v, "__module__", "") == t.__name__}
    assert declared == set(t.__all__)


def test_the_package_offers_each_name_from_the_module_its_type_checked_import_names():
    """store/__init__.py loads names on first use: the table it loads them by, the imports type checkers read and
    __all__ name the same names, each from the same module, and each resolves to what that module defines."""
    import ast
    import importlib
    from pathlib import Path

    source = (Path(store_pkg.__file__)).read_text()
    checked = ast.parse(source).body
    guarded = next(n for n in checked if isinstance(n, ast.If) and ast.unparse(n.test) == "TYPE_CHECKING")
    imported = {a.asname or a.name: node.module for node in guarded.body if isinstance(node, ast.ImportFrom)
                for a in node.names}
    assert imported == store_pkg._WHERE
    assert set(store_pkg.__all__) == set(imported)
    for name, module in imported.items():
        assert getattr(store_pkg, name) is getattr(importlib.import_module(f"store.{module}"), name), name
