"""`pcp read --offset` (cli.md): a 950,000-character page read whole, part by part, to `next_offset: null`."""

from __future__ import annotations

import json

import pytest

import store
from pcp_tui import cli

CHARS = 950_000


def page_text() -> str:
    return "".join(f"{i:07d} 紧致性 compact tube lemma\n" for i in range(40_000))[:CHARS]


@pytest.fixture
def long_page(tmp_path):
    db = tmp_path / "s.db"
    text = page_text()
    with store.Store.open(db) as st:
        page = st.write_page("project:long", content=text, facets={"title": "Long"})
    return db, page, text


def run(capsys, *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    status = cli.main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def test_pcp_read_offset_pages_through_to_next_offset_null(long_page, capsys):
    db, page, text = long_page
    parts, offset, reads = [], None, 0
    while True:
        extra = [] if offset is None else ["--offset", str(offset)]
        status, out, _ = run(capsys, "--db", str(db), "--json", "read", page["revision_id"], *extra)
        assert status == 0
        item = json.loads(out)["results"][0]
        parts.append(item["revision"]["payload"]["content"])
        reads += 1
        assert item["content_chars"] == CHARS and item["offset"] == (offset or 0)
        offset = item["next_offset"]
        if offset is None:
            assert item["truncated"] is False
            break
    assert "".join(parts) == text and reads == 15


def test_the_human_output_says_where_it_is_and_how_to_read_on(long_page, capsys):
    db, page, _ = long_page
    status, out, _ = run(capsys, "--db", str(db), "read", page["page_id"], "--offset", "64000")
    flat = " ".join(out.split())
    assert status == 0 and "characters 64,000 to 128,000 of 950,000" in flat
    assert f"read on: pcp read {page['revision_id']} --offset 128000\n" in out


def test_offset_takes_one_id(long_page, capsys):
    db, page, _ = long_page
    status, out, _ = run(capsys, "--db", str(db), "--json", "read", page["page_id"], page["revision_id"],
                         "--offset", "5")
    assert status == 1 and json.loads(out)["error"]["code"] == "invalid"
    status, _, err = run(capsys, "--db", str(db), "read", page["page_id"], "--offset", "-1")
    assert status == 1 and "--offset must be at least 0" in err
