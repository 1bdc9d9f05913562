"""A full disk (issue 12 item 22): say so, and that nothing was written."""

from __future__ import annotations

import errno

import pytest

from store import Invalid, Store


def _fill_the_disk(st: Store) -> None:
    """SQLite's max_page_count makes the file full exactly as a full disk does (SQLITE_FULL)."""
    pages = st._db.execute_sql("PRAGMA page_count").fetchone()[0]
    st._db.execute_sql(f"PRAGMA max_page_count = {pages + 2}")


def test_a_write_on_a_full_disk_says_the_disk_is_full_and_nothing_was_written(tmp_path):
    st = Store.open(tmp_path / "s.db")
    st.write_page("project:a", content="before")
    _fill_the_disk(st)
    for _ in range(2):
        with pytest.raises(Invalid, match="The disk is full and nothing was written"):
            st.write_page("project:a", content="y" * 500_000)
    st._db.execute_sql("PRAGMA max_page_count = 1073741823")
    assert [p["title"] for p in st.list_pages()["pages"]] == ["before"]
    st.write_page("project:a", content="after")  # the store works again once there is room
    st.close()


def test_an_export_on_a_full_disk_says_so_and_leaves_no_file(tmp_path, monkeypatch):
    import store.files as files

    st = Store.open(tmp_path / "s.db")
    st.write_page("project:a", content="x")
    real = files.open_private

    def full(path, mode="wb", **kwargs):
        fh = real(path, mode, **kwargs)

        def write(data):
            raise OSError(errno.ENOSPC, "No space left on device")

        fh.write = write
        return fh

    monkeypatch.setattr("store.export.open_private", full)
    with pytest.raises(Invalid, match="The disk is full and nothing was written"):
        st.export(tmp_path / "out.jsonl")
    assert [p.name for p in tmp_path.iterdir() if "out.jsonl" in p.name] == []
    st.close()
