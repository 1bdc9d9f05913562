"""Import reports (issue 15, point 6): kept per import, per file and conversation; titles read live;
deleting a page removes its entries and the delete plan counts them; an older store gains the table."""

from __future__ import annotations

import shutil
from peewee import sqlite3  # the store's SQLite: two libraries in one process break each other's locks
from pathlib import Path

import pytest

import import_helpers as h
from store import NotFound, Store
from store.adapters import import_chatgpt, import_codex
from store.db import SCHEMA_VERSION

DATA = Path(__file__).resolve().parents[1] / "data"
LIBRECHAT3 = DATA / "exports" / "chatgpt-danny-avila-LibreChat-3.json"
OLD_STORE = DATA / "stores" / "main-69a0c76.db"


def test_the_report_is_kept_per_conversation_with_live_titles(store):
    summary = import_chatgpt(store, LIBRECHAT3).to_dict()
    kept = store.import_report(summary["import_id"])
    assert kept == store.import_report()  # the last one
    assert kept["source"] == "chatgpt" and kept["path"] == str(LIBRECHAT3)
    assert kept["summary"]["created"] == summary["created"] == 9
    written = [e for e in kept["entries"] if e["outcome"] == "created"]
    assert len(written) == 3 and all(e["file"] == LIBRECHAT3.name and e["page_id"] for e in written)
    assert sum(e["counts"]["created"] for e in written) == 9
    empty = next(e for e in kept["entries"] if e["outcome"] == "skipped")
    assert "kept as an empty conversation page" in empty["reason"] and empty["title"] == "Corrupted entry"
    page = written[0]["page_id"]
    head = h.read(store, [page], projections=("manifest", "facets"))[0]["revision"]
    store.revise_page(page, head["revision_id"], facets={**head["facets"], "title": "Renamed by me"})
    assert next(e for e in store.import_report()["entries"] if e["page_id"] == page)["title"] == "Renamed by me"
    again = store.import_report(import_chatgpt(store, LIBRECHAT3).import_id)
    assert {e["outcome"] for e in again["entries"] if e["outcome"] != "skipped"} == {"unchanged"}


def test_deleting_a_page_removes_its_entries_and_the_plan_counts_them(store):
    first = import_chatgpt(store, LIBRECHAT3).import_id
    second = import_chatgpt(store, LIBRECHAT3).import_id
    page = next(e["page_id"] for e in store.import_report(first)["entries"] if e["outcome"] == "created")
    plan = store.plan_delete(page)
    assert plan["import_report_entries"] == 2  # one line in each report
    receipt = store.delete_page(page, "not wanted")
    assert receipt["counts"]["import_report_entries"] == 2
    for import_id in (first, second):
        assert page not in {e["page_id"] for e in store.import_report(import_id)["entries"]}
    other = next(e["page_id"] for e in store.import_report(first)["entries"] if e["page_id"])
    ns = h.read(store, [other], projections=("manifest",))[0]["revision"]["namespace"]
    in_scope = {p["revision"]["page_id"] for p in h.pages(store, [ns], projections=("manifest",))}
    lines = [e for i in (first, second) for e in store.import_report(i)["entries"] if e["page_id"] in in_scope]
    assert store.plan_delete_scope(ns)["import_report_entries"] == len(lines) >= 2


def test_an_entry_whose_page_is_gone_shows_as_erased(store):
    kept = store.record_import({"source": "test"}, [
        {"file": "f.json", "item": "test:1", "page_id": "pg_01JZZZZZZZZZZZZZZZZZZZZZZZ", "outcome": "created"}])
    entry = store.import_report(kept["import_id"])["entries"][0]
    assert (entry["title"], entry["erased"]) == ("(erased)", True)
    with pytest.raises(NotFound):
        store.import_report("imp_01JZZZZZZZZZZZZZZZZZZZZZZZ")


def test_agent_imports_keep_a_report_per_session(store):
    home = DATA / "agents" / "codex" / "codemie-code"
    report = import_codex(store, home)
    kept = store.import_report(report.import_id)
    sessions = [e for e in kept["entries"] if e["outcome"] == "created"]
    assert len(sessions) == 3 and {e["item"].split(":")[0] for e in sessions} == {"codex"}
    assert any(e["title"] == "show tools" for e in sessions)
    assert any("scaffolding" in e["item"] for e in kept["entries"] if e["outcome"] == "skipped")


def test_a_store_main_wrote_gains_the_report_tables(tmp_path):
    db = tmp_path / "old.db"
    shutil.copy(OLD_STORE, db)
    con = sqlite3.connect(db)
    assert con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0] == "2"
    assert "import_run" not in {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    con.close()
    with Store.open(db) as st:
        pages = h.page_count(st)
        report = import_chatgpt(st, LIBRECHAT3)
        assert st.import_report()["import_id"] == report.import_id
        assert h.page_count(st) == pages + 1  # the empty conversation, now kept
    con = sqlite3.connect(db)
    assert con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0] == str(SCHEMA_VERSION)
    con.close()
