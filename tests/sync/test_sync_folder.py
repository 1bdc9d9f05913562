"""`pcp sync DIR`: change files in a shared folder, sealed with keys only the paired stores hold."""

from __future__ import annotations

import itertools
import json
import shutil
from pathlib import Path

import pytest

import pcpstore_helpers as h
from sync_helpers import export_lines, killed_mid_sync
from store import Conflict, Invalid, NotFound, Store
from store.sync.folder import Folder

ROOT = Path(__file__).resolve().parents[2]
SECRET = "Wombat-5529 cellar inventory: the safe opens with 8812-4471-0093"


def paired(stores, folder: Path, n: int = 3) -> list[Path]:
    """n empty stores paired through `folder` (each joins with its own one-time code)."""
    paths = stores(n)
    with Store.open(paths[0]) as st:
        codes = [st.sync_pair(folder)["code"] for _ in paths[1:]]
    for path, code in zip(paths[1:], codes, strict=True):
        with Store.open(path) as st:
            joined = st.sync_join(folder, code)
            assert joined["adopted_owner"]
    return paths


def run(path: Path, folder: Path) -> dict:
    with Store.open(path) as st:
        return st.sync_folder(folder)


def seed(path: Path, tag: str) -> dict[str, str]:
    with Store.open(path) as st:
        ns = f"notes:{tag}"
        st.create_scope(ns)
        st.write_pages_bulk(({"content": f"{tag} folder page {i}"} for i in range(10)), ns)
        a = st.write_page(ns, content=f"{tag}: revised in the folder test")
        st.revise_page(a["page_id"], a["revision_id"], content=f"{tag}: revised once")
        b = st.write_page(ns, content=f"{tag}: archived")
        st.archive_page(b["page_id"], "old")
        st.link_pages(a["page_id"], "references", b["page_id"])
        st.suppress_pages([b["page_id"]], "task:x")
        return {"a": a["page_id"], "b": b["page_id"]}


def opened_text(path: Path, folder: Path) -> bytes:
    """Everything this store can still open in the folder, as plain bytes (what a paired store could read)."""
    out = b""
    with Store.open(path) as st:
        view = Folder(st.sync, folder)
        keys = view.keys()
        for f in sorted(folder.glob("sto_*/*.pcs")):
            got = view._open(f, f.parent.name, int(f.stem), keys)
            if not isinstance(got, str):
                out += b"".join(json.dumps(json.loads(x), ensure_ascii=False).encode() for x in got[1].splitlines())
    return out


def test_three_stores_through_a_folder_in_every_order_end_identical(stores, tmp_path):
    finals = []
    for n, order in enumerate(itertools.permutations(range(3))):
        folder = tmp_path / f"folder{n}"
        paths = paired(lambda k, n=n: stores(k, f"o{n}-"), folder)
        for path, tag in zip(paths, "ABC", strict=True):
            seed(path, tag)
        for _ in range(2):
            for i in order:
                run(paths[i], folder)
        lines = [export_lines(p, tmp_path / "e.jsonl") for p in paths]
        assert lines[0] == lines[1] == lines[2], order
        assert len([x for x in lines[0] if '"kind":"page"' in x]) == 36
        finals.append(len(lines[0]))
        again = run(paths[order[0]], folder)  # nothing new anywhere: nothing read, nothing written
        assert again["wrote"] is None and all(r["files"] == 0 for r in again["read"])
    assert len(set(finals)) == 1


def test_files_hold_nothing_readable_and_the_code_is_never_written(stores, tmp_path):
    folder = tmp_path / "f"
    a, b = stores(2)
    with Store.open(a) as st:
        offer = st.sync_pair(folder)
    with Store.open(b) as st:
        st.sync_join(folder, offer["code"])
        with pytest.raises(Invalid):
            st.sync_join(folder, offer["code"])  # one time: the offer is gone
    with Store.open(a) as st:
        st.create_scope("s")
        st.write_page("s", content=SECRET)
    run(a, folder)
    run(b, folder)
    blob = b"".join(p.read_bytes() for p in folder.rglob("*") if p.is_file())
    raw = offer["code"].replace("-", "")
    assert raw.encode() not in blob and offer["code"].encode() not in blob
    assert h.find_residue(sorted(p for p in folder.rglob("*") if p.is_file()), h.windows(SECRET.encode())) == []
    with Store.open(b) as st:
        assert any(x["page_id"] for x in st.search_pages("Wombat cellar")["hits"])


def test_concurrent_revisions_through_the_folder(stores, tmp_path, clock):
    folder = tmp_path / "f"
    a, b = paired(stores, folder, 2)
    with Store.open(a) as st:
        st.create_scope("s")
        w = st.write_page("s", content="base text")
    run(a, folder)
    run(b, folder)
    clock.advance()
    with Store.open(a) as st:
        ra = st.revise_page(w["page_id"], w["revision_id"], content="A's text")
    with Store.open(b) as st:
        rb = st.revise_page(w["page_id"], w["revision_id"], content="B's text")
    assert run(a, folder)["conflicts"] == 0
    assert run(b, folder)["conflicts"] == 1
    run(a, folder)
    winner, loser = sorted([ra["revision_id"], rb["revision_id"]], reverse=True)
    for p in (a, b):
        with Store.open(p) as st:
            item = h.read1(st, w["page_id"])
            assert item["current_revision_id"] == winner and item["conflict_revision_ids"] == [loser]


def test_delete_leaves_no_residue_in_stores_or_folder_and_old_copies_cannot_be_opened(stores, tmp_path):
    folder = tmp_path / "f"
    a, b, c = paired(stores, folder)
    with Store.open(a) as st:
        st.create_scope("s")
        keep = st.write_page("s", content="this page stays, about river stones")
        gone = st.write_page("s", content=SECRET)
    for p in (a, b, c):
        run(p, folder)
    history = tmp_path / "history"  # what a sync tool's version history would keep
    shutil.copytree(folder, history)
    with Store.open(b) as st:
        st.delete_page(gone["page_id"], "never keep this")
    for p in (b, a, c):
        res = run(p, folder)
        assert res["compacted"]
    erased = h.windows(SECRET.encode()) - h.windows(b"this page stays, about river stones")
    files = sorted(x for x in folder.rglob("*") if x.is_file())
    for p in (a, b, c):
        with Store.open(p) as st:
            with pytest.raises(NotFound):
                st.read_pages([gone["page_id"]])
            assert h.read1(st, keep["page_id"])
        assert h.find_residue(h.files_beside(p), erased) == [], p
        assert SECRET.encode() not in opened_text(p, folder)  # even decrypted, the folder no longer has it
    assert h.find_residue(files, erased) == []
    for p in (a, b, c):  # a second round: every store has seen every other move on, and forgets the old key
        run(p, folder)
    for p in (a, b, c):
        assert SECRET.encode() not in opened_text(p, history), p
        with Store.open(p) as st:
            view = Folder(st.sync, folder)
            old = sorted(history.glob("sto_*/*.pcs"))[0]
            assert "forgotten" in view._open(old, old.parent.name, int(old.stem), view.keys())


def test_tampered_foreign_revoked_newer_and_half_written_files_are_refused(stores, tmp_path):
    folder = tmp_path / "f"
    a, b, c = paired(stores, folder)
    with Store.open(a) as st:
        st.create_scope("s")
        st.write_page("s", content="from A")
    run(a, folder)
    (f1,) = sorted((folder / _sid(a)).glob("*.pcs"))
    good = f1.read_bytes()
    for where in (len(good) - 1, len(good) // 2, 5):  # one byte changed: in the seal, the body, the header
        bad = bytearray(good)
        bad[where] ^= 0x01
        f1.write_bytes(bytes(bad))
        res = run(b, folder)
        assert [r["file"] for r in res["refused"]] == [str(f1)] and "\n" not in res["refused"][0]["reason"]
        assert res["read"][0]["files"] == 0
    f1.write_bytes(good[: len(good) // 2])  # half written by a sync tool: refused, then retried
    assert run(b, folder)["refused"]
    f1.write_bytes(good)
    (folder / _sid(a) / "00000001 (conflicted copy).pcs").write_bytes(good)
    res = run(b, folder)
    assert res["refused"] == [] and res["read"][0]["files"] == 1
    assert any("conflicted copy" in s for s in res["skipped"])
    # A newer format: refused in one line asking to upgrade.
    newer = good.replace(b'"version":2', b'"version":3', 1)
    nxt = folder / _sid(a) / "00000002.pcs"
    nxt.write_bytes(newer)
    reason = run(b, folder)["refused"][0]["reason"]
    assert "newer pcp" in reason and "upgrade" in reason and "\n" not in reason
    nxt.unlink()
    # Foreign: a store paired in another folder (another key) and of another owner.
    other_folder = tmp_path / "other"
    x, _ = paired(lambda k: stores(k, "foreign"), other_folder, 2)
    with Store.open(x) as st:
        st.create_scope("theirs")
        st.write_page("theirs", content="not yours")
    run(x, other_folder)
    shutil.copytree(other_folder / _sid(x), folder / _sid(x))
    res = run(b, folder)
    # (a store never seen in a verified file: its subfolder is left alone, named among the skipped)
    assert str(folder / _sid(x)) in res["skipped"] and not any(_sid(x) in r["file"] for r in res["refused"])
    with Store.open(b) as st:
        assert "theirs" not in {s["namespace"] for s in st.list_scopes()["scopes"]}
    # Revoked: C is unpaired on A; its later files are refused on A, and on B once B read A's file.
    with Store.open(a) as st:
        st.sync_unpair(folder, _sid(c))
    run(a, folder)
    with Store.open(c) as st:
        st.create_scope("lost laptop")
        st.write_page("lost laptop", content="written after the unpair")
    run(c, folder)
    for p in (a, b):
        res = run(p, folder)
        assert any(_sid(c) in r["file"] and "unpaired" in r["reason"] for r in res["refused"]), p
        with Store.open(p) as st:
            assert "lost laptop" not in {s["namespace"] for s in st.list_scopes()["scopes"]}


def test_join_refuses_a_store_of_another_owner(stores, tmp_path):
    folder = tmp_path / "f"
    a, b = stores(2)
    with Store.open(a) as st:
        code = st.sync_pair(folder)["code"]
    with Store.open(b) as st:
        st.create_scope("mine already")
        with pytest.raises(Conflict) as err:
            st.sync_join(folder, code)
    assert "\n" not in str(err.value)
    with Store.open(b) as st, pytest.raises(Invalid):
        st.sync_folder(folder)  # not paired


def test_crash_mid_folder_sync_then_rerun_gives_the_same_result(stores, tmp_path):
    folder = tmp_path / "f"
    a, b = paired(stores, folder, 2)
    seed(a, "A")
    seed(b, "B")
    run(a, folder)
    control_folder = tmp_path / "control"
    shutil.copytree(folder, control_folder)
    control = tmp_path / "control-b" / "context.db"
    control.parent.mkdir()
    shutil.copy(b, control)
    killed_mid_sync(b, "sync_folder", folder, after=25)
    run(b, folder)
    run(control, control_folder)
    assert export_lines(b, tmp_path / "1.jsonl") == export_lines(control, tmp_path / "2.jsonl")
    run(a, folder)
    assert export_lines(a, tmp_path / "3.jsonl") == export_lines(b, tmp_path / "1.jsonl")


def _sid(path: Path) -> str:
    with Store.open(path) as st:
        return st.sync.store_id


def test_large_files_are_sealed_in_chunks_and_a_cut_at_a_chunk_boundary_is_refused(stores, tmp_path, monkeypatch):
    from store.sync import folder as folder_mod

    monkeypatch.setattr(folder_mod, "CHUNK", 300)
    folder = tmp_path / "f"
    a, b = paired(stores, folder, 2)
    with Store.open(a) as st:
        st.create_scope("s")
        st.write_pages_bulk(({"content": f"chunked page {i} " * 5} for i in range(40)), "s")
    run(a, folder)
    (f1,) = sorted((folder / _sid(a)).glob("*.pcs"))
    data = f1.read_bytes()
    head_end = data.index(b"\n", data.index(b"\n") + 1) + 1  # the header line and its signature's
    bounds, pos = [], head_end
    while pos < len(data):
        pos += 4 + 12 + int.from_bytes(data[pos:pos + 4], "big") + 64  # length, nonce, sealed, signature
        bounds.append(pos)
    assert len(bounds) > 10
    f1.write_bytes(data[:bounds[len(bounds) // 2]])  # whole chunks, the last ones missing
    res = run(b, folder)
    assert res["refused"] and "not signed" in res["refused"][0]["reason"]  # (the last chunk's signature says "last")
    f1.write_bytes(data)
    assert run(b, folder)["read"][0]["added"]["page"] == 40


def test_a_rowid_freed_by_a_delete_and_given_again_still_travels_through_the_folder(stores, tmp_path):
    folder = tmp_path / "f"
    a, b = paired(stores, folder, 2)
    with Store.open(b) as st:
        st.create_scope("n")
        st.write_page("n", content="on b")
    run(b, folder)
    run(a, folder)  # a took b's page in: rowids of a foreign range
    with Store.open(a) as st:
        st.delete_page(st.list_pages()["pages"][0]["page_id"], "gone")
        mine = st.write_page("n", content="a's own page, in the freed rowid")
    run(a, folder)
    run(b, folder)
    with Store.open(b) as st:
        assert h.read1(st, mine["page_id"])
    assert export_lines(a, tmp_path / "1") == export_lines(b, tmp_path / "2")


def a_id(path: Path) -> str:
    with Store.open(path) as st:
        return st.sync.store_id


def _texts(path: Path) -> set[str]:
    with Store.open(path) as st:
        return {h.content_of(st, p["page_id"]) for p in st.list_pages(limit=100)["pages"]}


def test_another_folder_gets_the_whole_store_and_so_does_the_first_one_again(stores, tmp_path):
    """Switching folders (the app's ctrl+f) wrote only what was new since the last file, written in the other
    folder: a store paired in the new folder never got the pages written before the switch, and back in the
    first one a missing file stalled every reader there. A folder that lacks this store's last file gets all of
    it (a base file)."""
    x, y = tmp_path / "x", tmp_path / "y"
    a, b, c = stores(3)
    with Store.open(a) as st:
        for i in range(3):
            st.write_page("notes:n", content=f"before the switch {i}")
        code_x = st.sync_pair(x)["code"]
    assert run(a, x)["wrote"]
    with Store.open(a) as st:
        st.write_page("notes:n", content="after the switch")
        code_y = st.sync_pair(y)["code"]
    with Store.open(b) as st:
        st.sync_join(y, code_y)
    assert run(a, y)["wrote"]
    run(b, y)
    everything = {f"before the switch {i}" for i in range(3)} | {"after the switch"}
    assert _texts(b) == everything  # the new folder's peer has the pages from before the switch too
    with Store.open(c) as st:
        st.sync_join(x, code_x)
    assert run(a, x)["wrote"]  # back in the first folder: what went to the other one is written here too
    run(c, x)
    assert _texts(c) == everything
    assert run(a, x)["wrote"] is None  # nothing new: not written again
    assert sorted(f.name for f in (x / a_id(a)).iterdir()) == ["00000003.pcs"]  # the base replaced file 1


def _file_records(path: Path, folder: Path, store_dir: str) -> list[dict]:
    """The records of one store's change files in the folder, as `path`'s store opens them."""
    out: list[dict] = []
    with Store.open(path) as st:
        view = Folder(st.sync, folder)
        keys = view.keys()
        for f in sorted((folder / store_dir).glob("*.pcs")):
            got = view._open(f, store_dir, int(f.stem), keys)
            assert not isinstance(got, str), got
            out += [json.loads(x) for x in got[1].splitlines()]
    return out


def test_a_store_s_first_file_leaves_out_what_it_took_in_from_the_folder_and_later_stores_still_get_everything(
        stores, tmp_path):
    """A store's first file in a folder is a base file of all it holds but what that very sync took in from the
    folder's files (they hold it): its own pages, written before and after, travel as ever, and stores that read the
    folder later end identical, also after the store those records came from is unpaired (the rekey makes the next
    file of the store that unpaired it a base file of everything)."""
    folder = tmp_path / "folder"
    a, b, c = paired(stores, folder)
    seed(a, "A")
    run(a, folder)
    with Store.open(b) as st:
        st.write_page("notes:B", content="written in B before its first sync")
    b_id = run(b, folder)["store_id"]
    first = _file_records(b, folder, b_id)
    assert {r["namespace"] for r in first if r["kind"] == "revision"} == {"notes:B"}  # none of A's
    with Store.open(b) as st:
        st.write_page("notes:B", content="written in B after its first sync")
    run(b, folder)
    assert len([r for r in _file_records(b, folder, b_id) if r["kind"] == "revision"]) == 2
    run(a, folder)
    run(c, folder)
    want = export_lines(a, tmp_path / "a.jsonl")
    assert export_lines(b, tmp_path / "b.jsonl") == want
    assert export_lines(c, tmp_path / "c.jsonl") == want
    # A's machine is lost: B unpairs it (A's files are refused from now on), writes a base file of all it holds
    # under the new key, and pairs a new store, which takes A's records from that file.
    with Store.open(b) as st:
        st.sync_unpair(folder, _sid(a))
    assert run(b, folder)["compacted"]
    (d,) = stores(1, "later")
    with Store.open(b) as st:
        code = st.sync_pair(folder)["code"]
    with Store.open(d) as st:
        st.sync_join(folder, code)
    got = run(d, folder)
    assert any(_sid(a) in r["file"] for r in got["refused"]), got
    assert export_lines(d, tmp_path / "d.jsonl") == export_lines(b, tmp_path / "b.jsonl") == want
