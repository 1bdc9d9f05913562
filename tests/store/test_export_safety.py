"""Hardening of export and import (issue 12, items 11-15): files stay in the store's folder, records are checked."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from store import Invalid, Store


def _records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _rewrite(path: Path, records: list[dict]) -> Path:
    """Write `records` (header .. end) back with a recomputed closing digest, as an attacker would."""
    body = b"".join((json.dumps(r, ensure_ascii=False, sort_keys=True, separators=(",", ":")) + "\n").encode("utf-8")
                    for r in records[:-1])
    end = {"kind": "pcp.export.end", "sha256": hashlib.sha256(body).hexdigest()}
    path.write_bytes(body + (json.dumps(end) + "\n").encode("utf-8"))
    return path


def _store_with_a_handoff(tmp_path: Path) -> tuple[Store, Path]:
    (tmp_path / "a").mkdir()
    st = Store.open(tmp_path / "a" / "s.db")
    page = st.write_page("project:alpha", content="A note worth handing off.")
    st.copy([page["page_id"]], label="chat", clipboard=lambda text: None)
    out = tmp_path / "all.jsonl"
    st.export(out)
    return st, out


def test_import_refuses_a_handoff_id_that_is_a_path(tmp_path):
    st, out = _store_with_a_handoff(tmp_path)
    st.close()
    records = _records(out)
    for r in records:
        if r["kind"] == "handoff":
            r["handoff_id"] = "../../../AGENTS"
    _rewrite(out, records)
    target = tmp_path / "b" / "deep" / "er"
    target.mkdir(parents=True)
    other = Store.open(target / "s.db")
    try:
        with pytest.raises(Invalid, match="not a hnd id"):
            other.import_export(out)
        assert not (tmp_path / "AGENTS.md").exists() and not (tmp_path / "b" / "AGENTS.md").exists()
        assert other.list_pages()["pages"] == []  # refused before anything was written
    finally:
        other.close()


@pytest.mark.parametrize("field,value", [("page_id", "pg_../../x"), ("revision_id", "notarev"),
                                         ("previous_revision_id", "rel_01J00000000000000000000000")])
def test_import_refuses_ids_of_the_wrong_shape(tmp_path, field, value):
    st, out = _store_with_a_handoff(tmp_path)
    st.close()
    records = _records(out)
    next(r for r in records if r["kind"] == "revision")[field] = value
    _rewrite(out, records)
    (tmp_path / "b").mkdir()
    other = Store.open(tmp_path / "b" / "s.db")
    try:
        with pytest.raises(Invalid, match=field):
            other.import_export(out)
        assert other.list_pages()["pages"] == []
    finally:
        other.close()


@pytest.mark.parametrize("suffix", ["", "-wal", "-shm", "-journal"])
def test_export_refuses_to_write_over_the_store_or_its_side_files(tmp_path, suffix):
    st = Store.open(tmp_path / "s.db")
    st.write_page("project:alpha", content="Precious.")
    target = tmp_path / f"s.db{suffix}"
    before = target.read_bytes() if target.exists() else None
    with pytest.raises(Invalid, match="the store itself"):
        st.export(target)
    with pytest.raises(Invalid, match="the store itself"):
        st.export(tmp_path / "x" / ".." / f"s.db{suffix}", format="markdown")
    if before is not None:
        assert target.read_bytes()[:16] == before[:16]
    assert st.search_pages("Precious")["hits"]
    st.close()


def test_export_refuses_a_symlink_to_the_store(tmp_path):
    st = Store.open(tmp_path / "s.db")
    st.write_page("project:alpha", content="Precious.")
    (tmp_path / "link.jsonl").symlink_to(tmp_path / "s.db")
    with pytest.raises(Invalid, match="the store itself"):
        st.export(tmp_path / "link.jsonl")
    assert st.search_pages("Precious")["hits"]
    st.close()


def test_a_failed_export_leaves_no_temporary_file(tmp_path, monkeypatch):
    import store.export as export_mod

    st = Store.open(tmp_path / "s.db")
    st.write_page("project:alpha", content="secret diary line")

    def broken(*args, **kwargs):
        yield {"kind": "scope", "namespace": "project:alpha"}
        raise RuntimeError("interrupted")

    monkeypatch.setattr(export_mod.ExportOps, "_export_lines", broken)
    with pytest.raises(RuntimeError):
        st.export(tmp_path / "out.jsonl")
    assert sorted(p.name for p in tmp_path.iterdir() if "out.jsonl" in p.name) == []
    page = st.list_pages()["pages"][0]
    assert st.plan_delete(page["page_id"])["export_files"] == []
    st.close()


def test_a_killed_exports_temporary_file_is_planned_and_erased(tmp_path):
    import subprocess
    import sys

    st = Store.open(tmp_path / "s.db")
    page = st.write_page("project:alpha", content="secret diary line")
    st.close()
    # A child process exports and is killed (os._exit) after the temporary file is full, before it is renamed.
    code = (
        "import os, sys\n"
        "import store.export as e\n"
        "from store import Store\n"
        "e.os.replace = lambda *a: os._exit(9)\n"
        f"Store.open({str(tmp_path / 's.db')!r}).export({str(tmp_path / 'out.jsonl')!r})\n"
    )
    assert subprocess.run([sys.executable, "-c", code]).returncode == 9
    leftovers = [p for p in tmp_path.iterdir() if p.name.startswith(".out.jsonl.")]
    assert len(leftovers) == 1 and b"secret diary line" in leftovers[0].read_bytes()
    st = Store.open(tmp_path / "s.db")
    plan = st.plan_delete(page["page_id"])
    assert str(leftovers[0]) in [f["path"] for f in plan["export_files"] if f.get("incomplete")]
    assert st.plan_delete_scope("project:alpha")["export_files"] == plan["export_files"]
    receipt = st.delete_page(page["page_id"], "erase it")
    assert receipt["counts"]["export_temp_files"] == 1 and not leftovers[0].exists()
    st.close()


def _digest(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def _with_nul(r):
    r["payload"]["content"] = "bad \x00 byte"
    r["content_digest"] = _digest(r["payload"]["content"])


def _oversized(r):
    r["payload"]["content"] = "x" * 2000
    r["content_digest"] = _digest(r["payload"]["content"])


def _god(r):
    r["created_by"]["actor_type"] = "god"


def _wrong_digest(r):
    r["payload"]["content"] = "quietly edited"


def _huge_title(r):
    r["facets"] = {"title": "t" * 5000}


@pytest.mark.parametrize("edit,message", [(_with_nul, "NUL"), (_oversized, "limit is 1,000"), (_god, "god"),
                                          (_wrong_digest, "content_digest does not match"),
                                          (_huge_title, "The title has 5,000 characters")])
def test_import_validates_every_record_as_the_write_path_and_writes_nothing(tmp_path, monkeypatch, edit, message):
    from store import PcpError
    from store.core import LIMITS

    (tmp_path / "a").mkdir()
    st = Store.open(tmp_path / "a" / "s.db")
    st.write_page("project:alpha", content="first page")
    st.write_page("project:alpha", content="second page")
    out = tmp_path / "all.jsonl"
    st.export(out)
    st.close()
    records = _records(out)
    edit([r for r in records if r["kind"] == "revision"][-1])  # the last revision: a late line, after others
    _rewrite(out, records)
    monkeypatch.setitem(LIMITS, "max_payload_chars", 1000)
    (tmp_path / "b").mkdir()
    other = Store.open(tmp_path / "b" / "s.db")
    try:
        with pytest.raises(PcpError, match=message) as caught:
            other.import_export(out)
        assert "line" in caught.value.message and "nothing was imported" in caught.value.message
        assert other.list_pages()["pages"] == [] and other.list_scopes()["scopes"] == []
    finally:
        other.close()


def _markdown_store(tmp_path: Path) -> Store:
    (tmp_path / "a").mkdir()
    st = Store.open(tmp_path / "a" / "s.db")
    st.write_page("project:alpha", content="Private notes of project alpha.", facets={"title": "Alpha notes"})
    return st


def _tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_markdown_export_refuses_a_symlinked_folder_inside_out(tmp_path):
    """Issue 30: a link planted inside --out (here where a scope's folder goes) is never written through."""
    st = _markdown_store(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "keep.txt").write_bytes(b"untouched")
    out = tmp_path / "md"
    out.mkdir()
    (out / "project_alpha").symlink_to(elsewhere, target_is_directory=True)
    with pytest.raises(Invalid, match="is a link"):
        st.export(out, format="markdown")
    assert _tree(elsewhere) == {"keep.txt": b"untouched"}
    assert sorted(p.name for p in out.iterdir()) == ["project_alpha"]  # nothing else written either


def test_markdown_export_replaces_linked_files_and_never_writes_through_them(tmp_path):
    """A file of an earlier export swapped for a link (or a hard link) to a file elsewhere is replaced, its target kept."""
    st = _markdown_store(tmp_path)
    out = tmp_path / "md"
    first = st.export(out, format="markdown")
    [note] = list((out / "project_alpha").iterdir())
    victim, hard = tmp_path / "victim.txt", tmp_path / "hard.txt"
    victim.write_bytes(b"victim")
    hard.write_bytes(b"hard")
    note.unlink()
    note.symlink_to(victim)
    st.export(out, format="markdown")
    assert victim.read_bytes() == b"victim" and not note.is_symlink()
    assert "Private notes of project alpha." in note.read_text(encoding="utf-8")
    note.unlink()
    os.link(hard, note)
    st.export(out, format="markdown")
    assert hard.read_bytes() == b"hard" and note.stat().st_nlink == 1
    assert first["files"] == 1 and [p.name for p in (out / "project_alpha").iterdir()] == [note.name]
    assert oct(note.stat().st_mode & 0o777) == "0o600"


def test_jsonl_export_never_writes_through_a_link_at_its_temporary_name(tmp_path, monkeypatch):
    """The temporary file beside --out is created new: a link planted at its name is refused, its target kept."""
    import store.export as export_module

    st = _markdown_store(tmp_path)
    victim = tmp_path / "victim.txt"
    victim.write_bytes(b"victim")
    planted = tmp_path / ".out.jsonl.planted.tmp"
    planted.symlink_to(victim)
    monkeypatch.setattr(export_module, "_temp_beside", lambda out: planted)
    with pytest.raises(Invalid, match="Cannot write the export"):
        st.export(tmp_path / "out.jsonl")
    assert victim.read_bytes() == b"victim" and not (tmp_path / "out.jsonl").exists()
