"""The bulk write path and the single-page path give the same store (issue 31): the same input written both
ways exports the same lines once minted ids and store times are mapped; and a restore gives back its export."""

from __future__ import annotations

from export_helpers import mapped_export_lines as _mapped
from store import Store

ITEMS = [
    {"content": "# Harbour log\nThe tide came in at six.", "observed_at": "2025-03-04T05:06:07Z"},
    {"content": "plain note about lanterns", "facets": {"title": "Lanterns", "keywords": ["light", "oil"]}},
    {"content": "{\"a\": 1}", "media_type": "application/json"},
    {"content": "有限乘积保持紧致性 — a CJK line", "facets": {"summary": "a summary", "anchors": ["x"]}},
    {"content": "tombstone candidate\nsecond line", "observed_at": "2024-12-31T23:59:59.999Z"},
    {"content": "Yesterday the harbour master counted the lanterns.", "observed_at": "2025-06-10T09:00:00Z"},
] * 3


def test_write_pages_bulk_and_write_page_export_the_same_lines(tmp_path):
    with Store.open(tmp_path / "bulk.db") as st:
        assert st.write_pages_bulk(iter(ITEMS), "project:eq", batch_size=4)["created"] == len(ITEMS)
        st.export(tmp_path / "bulk.jsonl")
    with Store.open(tmp_path / "one.db") as st:
        for item in ITEMS:
            st.write_page("project:eq", **item)
        st.export(tmp_path / "one.jsonl")
    bulk, one = _mapped(tmp_path / "bulk.jsonl"), _mapped(tmp_path / "one.jsonl")
    assert len(bulk) == 1 + 2 * len(ITEMS)
    assert bulk == one


def test_a_restore_in_groups_and_one_in_a_single_transaction_give_the_same_store(tmp_path):
    """Into an empty store a restore commits in groups; into one that already holds pages it is one
    transaction: the store comes out the same either way."""
    with Store.open(tmp_path / "src.db") as st:
        st.write_pages_bulk(({"content": f"page {i} about tides {i % 9}"} for i in range(700)), "project:a")
        st.write_pages_bulk(iter(ITEMS), "project:b")
        pid = st.list_pages("project:b")["pages"][0]["page_id"]
        head = st.read_pages([pid], projections=["manifest"])["results"][0]["current_revision_id"]
        st.revise_page(pid, head, content="revised")
        st.export(tmp_path / "all.jsonl")
        st.export(tmp_path / "b.jsonl", scopes=["project:b"])
    with Store.open(tmp_path / "grouped.db") as st:
        st.import_export(tmp_path / "all.jsonl")
        st.export(tmp_path / "grouped.jsonl")
    with Store.open(tmp_path / "whole.db") as st:
        st.import_export(tmp_path / "b.jsonl")  # the owner adopted, and pages already here
        st.import_export(tmp_path / "all.jsonl")
        st.export(tmp_path / "whole.jsonl")
    source = (tmp_path / "all.jsonl").read_text(encoding="utf-8").splitlines()[1:-1]
    assert (tmp_path / "grouped.jsonl").read_text(encoding="utf-8").splitlines()[1:-1] == source
    assert (tmp_path / "whole.jsonl").read_text(encoding="utf-8").splitlines()[1:-1] == source
