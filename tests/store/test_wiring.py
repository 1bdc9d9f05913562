"""The Store is wired explicitly (store/facade.py): erasure and export reach every declared participant.

Deletion is given its erasers (the export files, the handoff ledger) and export its record
sources (the ledger). If the wiring dropped one, these tests fail: a deleted page would
survive in a handoff copy, or a plan would stop naming the export files that hold it, or
an export would leave the ledger behind.
"""

from __future__ import annotations

import json

import pytest

from store import Store
from store.deletion import DeletionOps, ExportFiles
from store.export import ExportOps
from store.handoff_ledger import LedgerOps

SECRET = "wiring-check zebra-quartz-9137 stays only in this page"


def _page_copied_and_exported(store, tmp_path):
    page = store.write_page("project:wiring", content=SECRET)
    other = store.write_page("project:wiring", content="a neighbour that stays")
    copied = store.copy([page["page_id"], other["page_id"]], label="Chat: wiring")
    out = tmp_path / "before.jsonl"
    store.export(out)
    return page, copied, out


def test_the_store_declares_the_erasers_and_record_sources(store):
    parts = {type(p): p for p in store.parts}
    deletion, exports, ledger = parts[DeletionOps], parts[ExportOps], parts[LedgerOps]
    assert ledger in deletion._erasers
    assert any(isinstance(e, ExportFiles) for e in deletion._erasers)
    assert ledger in exports._sources


def test_a_delete_plan_names_the_export_files_and_handoffs_holding_the_page(store, tmp_path):
    page, copied, out = _page_copied_and_exported(store, tmp_path)
    plan = store.plan_delete(page["page_id"])
    assert [f["path"] for f in plan["export_files"]] == [str(out.resolve())]
    assert [(h["handoff_id"], h["entry"]) for h in plan["handoffs"]] == [(copied["handoff_id"], 1)]
    scope_plan = store.plan_delete_scope("project:wiring")
    assert [h["handoff_id"] for h in scope_plan["handoffs"]] == [copied["handoff_id"]] * 2


@pytest.mark.encrypted
def test_erasure_rewrites_the_handoff_copy_and_counts_it(store, tmp_path):
    page, copied, _ = _page_copied_and_exported(store, tmp_path)
    # read back through pcp: an encrypted store's copy is sealed under its key (store/sealed.py)
    assert SECRET in store.handoff_copy_text(copied["handoff_id"])
    receipt = store.delete_page(page["page_id"], "wiring check")
    assert receipt["counts"]["handoff_entries"] == 1
    text = store.handoff_copy_text(copied["handoff_id"])
    assert SECRET not in text and "a neighbour that stays" in text
    listed = store.handoffs()["handoffs"][0]
    assert listed["handoff_id"] == copied["handoff_id"]
    assert [e["page_id"] for e in listed["entries"]][0] is None


def test_a_whole_store_export_carries_the_ledger_and_its_import_restores_it(store, tmp_path):
    _, copied, out = _page_copied_and_exported(store, tmp_path)
    kinds = [json.loads(line)["kind"] for line in out.read_text(encoding="utf-8").splitlines()]
    assert kinds.count("handoff") == 1
    fresh_dir = tmp_path / "fresh"
    fresh_dir.mkdir()
    with Store.open(fresh_dir / "s.db") as fresh:
        report = fresh.import_export(out)
        assert report["added"]["handoff"] == 1
        assert [h["handoff_id"] for h in fresh.handoffs()["handoffs"]] == [copied["handoff_id"]]
        assert (fresh_dir / "handoffs" / f"{copied['handoff_id']}.md").exists()


def test_every_part_shares_one_context_so_an_adopted_owner_is_seen_everywhere(store, tmp_path):
    _, _, out = _page_copied_and_exported(store, tmp_path)
    fresh_dir = tmp_path / "other"
    fresh_dir.mkdir()
    with Store.open(fresh_dir / "s.db") as fresh:
        assert fresh.owner_id != store.owner_id
        fresh.import_export(out)
        assert fresh.owner_id == store.owner_id
        assert {p.owner_id for p in fresh.parts} == {store.owner_id}
        hit = fresh.search_pages("neighbour")["hits"][0]
        assert hit["owner_id"] == store.owner_id


def test_the_title_rule_is_one_and_every_result_carries_it(store):
    from store import UNTITLED, page_title, shown_title

    heading = store.write_page("project:titles", content="# Thesis outline\n\nchapters one to three")
    faceted = store.write_page("project:titles", content="body text", facets={"title": "Given title"})
    blank = store.write_page("project:titles", content="   \n#\n")
    read = {r["requested_id"]: r["title"] for r in store.read_pages(
        [heading["page_id"], faceted["page_id"], blank["page_id"]], projections=("manifest",))["results"]}
    assert read == {heading["page_id"]: "Thesis outline", faceted["page_id"]: "Given title", blank["page_id"]: UNTITLED}
    hit = store.search_pages("chapters")["hits"][0]
    assert hit["title"] == read[heading["page_id"]]
    listed = {p["page_id"]: p["title"] for p in store.list_pages()["pages"]}
    assert listed[heading["page_id"]] == "Thesis outline"
    assert page_title({}, {"media_type": "text/markdown", "content": "## Two\nthree"}, []) == "Two"
    assert shown_title("") == UNTITLED and shown_title("x") == "x"
