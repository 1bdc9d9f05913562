"""Restoring an export in groups (pcp-core.md section 7, issue 31): a stopped run leaves whole units,
`doctor` names it, and the same import again completes it; the result is the export, line for line."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from store import Store


def _build(path: Path) -> Store:
    """A store of 900 pages over three scopes; some revised twice, some linked, one archived, one tombstoned,
    one derived from another page, an erased page (its receipt travels)."""
    st = Store.open(path)
    for s in range(3):
        st.write_pages_bulk(({"content": f"page {i} of scope {s} on harbour {i % 13} logistics",
                              "facets": {"keywords": [f"k{i % 5}"]}} for i in range(300)), f"project:s{s}")
    pids = [r[0] for r in st._db.execute_sql("SELECT page_id FROM page ORDER BY id").fetchall()]
    for n, pid in enumerate(pids[::37]):
        head = st.read_pages([pid], projections=["manifest"])["results"][0]["current_revision_id"]
        again = st.revise_page(pid, head, content=f"revised {n} once")
        st.revise_page(pid, again["revision_id"], content=f"revised {n} twice", observed_at="2025-01-02T03:04:05Z")
    for a, b in zip(pids[1::50], pids[2::50], strict=True):
        st.link_pages(a, "supersedes", b)
    st.write_page("project:s0", content="derived from another", provenance=[
        {"operation": "derive", "input_revision_ids": [pids[-1]]}])
    st.archive_page(pids[3], "old")
    st.tombstone_page(pids[4], "wrong")
    gone = st.write_page("project:s1", content="erase me")
    st.delete_page(gone["page_id"], "test erase")
    return st


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def _whole_units(st: Store, original: Path) -> int:
    """Every page present has its head and all its revisions (as many as in the export); returns the pages."""
    expected: dict[str, int] = {}
    for line in _lines(original):
        rec = json.loads(line)
        if rec["kind"] == "revision":
            expected[rec["page_id"]] = expected.get(rec["page_id"], 0) + 1
    rows = st._db.execute_sql(
        "SELECT p.page_id, p.head, p.title, (SELECT COUNT(*) FROM revision r WHERE r.page_id = p.id) FROM page p").fetchall()
    for page_id, head, title, revisions in rows:
        assert head is not None and title, page_id
        assert revisions == expected[page_id], page_id
    return len(rows)


class Stop(Exception):
    pass


def test_a_restore_stopped_between_groups_leaves_whole_pages_and_the_same_import_completes_it(tmp_path, exported):
    (tmp_path / "b").mkdir()
    calls = []

    def stop_after_first_group(done: int, total: int, what: str) -> None:
        calls.append(done)
        raise Stop  # between groups: the first group is committed, nothing after it

    with Store.open(tmp_path / "b" / "s.db") as st:
        with pytest.raises(Stop):
            st.import_export(exported, progress=stop_after_first_group)
        assert len(calls) == 1
        partial = _whole_units(st, exported)
        assert 0 < partial < 901
        unfinished = st.doctor()["unfinished_restore"]
        assert unfinished["path"] == str(exported.resolve()) and unfinished["lines"] == len(_lines(exported))
        result = st.import_export(exported)
        assert result["added"]["page"] == 901 - partial
        assert "unfinished_restore" not in st.doctor()
        assert _whole_units(st, exported) == 901
        st.export(tmp_path / "again.jsonl")
    assert _lines(tmp_path / "again.jsonl")[1:-1] == _lines(exported)[1:-1]


def test_a_killed_restore_leaves_whole_pages_and_doctor_says_so(tmp_path, exported):
    """The process dies (os._exit, no cleanup) right after its first group committed."""
    (tmp_path / "b").mkdir()
    db = tmp_path / "b" / "s.db"
    code = textwrap.dedent(f"""
        import os
        from store import Store
        seen = []
        def progress(done, total, what):
            seen.append(done)
            if len(seen) == 1:
                os._exit(9)
        Store.open({str(db)!r}).import_export({str(exported)!r}, progress=progress)
    """)
    assert subprocess.run([sys.executable, "-c", code], cwd=Path(__file__).parents[2]).returncode == 9
    with Store.open(db) as st:
        assert 0 < _whole_units(st, exported) < 901
        assert st.doctor()["unfinished_restore"]["sha256"]
        st.import_export(exported)
        assert "unfinished_restore" not in st.doctor() and _whole_units(st, exported) == 901
        assert st.search_pages("harbour logistics")["hits"]
        st.export(tmp_path / "again.jsonl")
    assert _lines(tmp_path / "again.jsonl")[1:-1] == _lines(exported)[1:-1]


def test_pcp_doctor_names_an_unfinished_restore(tmp_path, exported, capsys):
    from pcp_tui.cli import main

    db = tmp_path / "b.db"
    with Store.open(db) as st:
        with pytest.raises(Stop):
            st.import_export(exported, progress=lambda *a: (_ for _ in ()).throw(Stop()))
    assert main(["--db", str(db), "doctor"]) == 0
    out = capsys.readouterr().out
    assert "stopped part way" in out and str(exported.resolve()) in out.replace("\n", "")


def test_a_restore_lets_another_writer_in_between_groups(tmp_path, exported):
    """Another connection writes a page between two groups; the restore goes on and both are there."""
    (tmp_path / "b").mkdir()
    db = tmp_path / "b" / "s.db"
    other = Store.open(db)
    other._db.execute_sql("PRAGMA busy_timeout = 2000")  # (a restore holding the lock throughout fails it)
    written = []

    def write_between(done: int, total: int, what: str) -> None:
        if done < total and not written:
            written.append(other.write_page("notes:other", content="written while the restore ran"))

    with Store.open(db) as st:
        st.import_export(exported, progress=write_between)
        assert written and st._db.execute_sql("SELECT COUNT(*) FROM page WHERE head IS NOT NULL").fetchone()[0] == 902
        page = st.read_pages([written[0]["page_id"]])["results"][0]["revision"]
        assert page["payload"]["content"] == "written while the restore ran"
    other.close()


def test_another_import_leaves_the_unfinished_restore_named(tmp_path, exported):
    """A different export imported meanwhile (one transaction: the store is not empty) does not hide the
    stopped restore; running the stopped one again still completes it."""
    (tmp_path / "b").mkdir()
    with Store.open(tmp_path / "b" / "s.db") as st:
        with pytest.raises(Stop):
            st.import_export(exported, progress=lambda *a: (_ for _ in ()).throw(Stop()))
        st.export(tmp_path / "partial.jsonl", scopes=["project:s0"])
        st.import_export(tmp_path / "partial.jsonl")
        assert st.doctor()["unfinished_restore"]["sha256"]
        st.import_export(exported)
        assert "unfinished_restore" not in st.doctor() and _whole_units(st, exported) == 901
