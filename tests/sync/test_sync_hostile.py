"""`pcp sync` against what a careless or hostile hand puts in the shared folder: one clear refusal, nothing lost."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from store import Invalid, Store
from store.sync import folder as folder_mod


def _pair_fresh(stores, folder: Path) -> tuple[Path, Path, str]:
    a, b = stores(2)
    with Store.open(a) as st:
        st.create_scope("notes:a")
        gone = st.write_page("notes:a", content="erased before the pairing")
        st.delete_page(gone["page_id"], "old")  # the key has moved on past epoch 0
        st.write_page("notes:a", content="kept page of a")
        code = st.sync_pair(folder)["code"]
    return a, b, code


def _count_reads(monkeypatch) -> list[int]:
    """Every size the sync folder code asks a file's read() for (-1: the whole file)."""
    asked: list[int] = []
    real_open = open

    def watched_open(*args, **kwargs):
        handle = real_open(*args, **kwargs)
        read = handle.read

        def counted(size=-1):
            asked.append(size)
            return read(size)

        handle.read = counted
        return handle

    monkeypatch.setattr(folder_mod, "open", watched_open, raising=False)
    return asked


def test_a_store_joined_before_the_first_store_ever_synced_syncs_without_an_internal_error(stores, tmp_path):
    folder = tmp_path / "f"
    a, b, code = _pair_fresh(stores, folder)
    with Store.open(b) as st:
        st.sync_join(folder, code)
        first = st.sync_folder(folder)  # a has written nothing there yet: nothing to take, nothing to lose
    assert first["read"] == [] and first["refused"] == []
    with Store.open(a) as st:
        st.sync_folder(folder)
    with Store.open(b) as st:
        st.sync_folder(folder)
        hits = st.search_pages("kept page", mode="exact")["hits"]
    assert len(hits) == 1
    with Store.open(a) as st:  # and b's own files, written once it caught up, open on a
        assert st.sync_folder(folder)["refused"] == []


@pytest.mark.parametrize("garbage", [
    b"[]\nxxxx",  # a header that is not an object
    b'{"version": "9"}\nxxxx',  # a version that is not a number
    b'{"version": 1, "salt": 12}\n' + b"x" * 40,  # a salt that is not hex text
    b"[" * 100_000 + b"\nxx",  # nested past the parser's depth
    b"\xff\xfe\n\x00",  # not text
    b"",  # empty
], ids=["list", "version-text", "salt-number", "deep", "binary", "empty"])
def test_a_garbage_offer_in_the_folder_does_not_stop_pairing(stores, tmp_path, garbage):
    folder = tmp_path / "f"
    a, b, code = _pair_fresh(stores, folder)
    (folder / "offers" / "00000000000000000000000000.offer").write_bytes(garbage)  # sorts first
    with Store.open(b) as st:
        joined = st.sync_join(folder, code)
    assert joined["adopted_owner"]


def test_a_huge_offer_is_not_read_into_memory(stores, tmp_path, monkeypatch):
    folder = tmp_path / "f"
    a, b, code = _pair_fresh(stores, folder)
    with open(folder / "offers" / "00000000000000000000000000.offer", "wb") as fh:
        fh.truncate(64 << 20)  # sparse: 64 MiB of zeros
    asked = _count_reads(monkeypatch)
    monkeypatch.setattr(Path, "read_bytes", lambda self: (_ for _ in ()).throw(AssertionError(f"whole read of {self}")))
    with Store.open(b) as st:
        assert st.sync_join(folder, code)["adopted_owner"]
    assert asked and all(0 <= n <= folder_mod.MAX_OFFER + 1 for n in asked)


def test_a_change_file_declaring_a_giant_chunk_is_refused_before_it_is_read(stores, tmp_path, monkeypatch):
    folder = tmp_path / "f"
    a, b, code = _pair_fresh(stores, folder)
    with Store.open(b) as st:
        st.sync_join(folder, code)
    with Store.open(a) as st:
        st.sync_folder(folder)
    own = next(p for p in folder.iterdir() if p.name.startswith("sto_"))
    real = sorted(own.glob("*.pcs"))[-1]
    head = real.read_bytes().split(b"\n", 1)[0]
    header = json.loads(head)
    header["seq"] += 1
    header["base"] = False  # as a next file says
    forged = json.dumps(header, separators=(",", ":")).encode()
    with open(own / f"{header['seq']:08d}.pcs", "wb") as fh:  # a next file, its first chunk "4 GiB"
        fh.write(forged + b"\n" + (0xFFFFFFFF).to_bytes(4, "big") + b"\0" * 12)
        fh.truncate(len(forged) + 17 + (8 << 20))
    asked = _count_reads(monkeypatch)
    with Store.open(b) as st:
        result = st.sync_folder(folder)
    assert [Path(r["file"]).name for r in result["refused"]] == [f"{header['seq']:08d}.pcs"], result
    assert max(asked, default=0) <= folder_mod.MAX_SEALED
    with Store.open(b) as st:
        assert len(st.search_pages("kept page", mode="exact")["hits"]) == 1


def test_a_folder_that_is_a_file_is_named_as_such(stores, tmp_path):
    a, _ = stores(2)
    not_a_folder = tmp_path / "notes.txt"
    not_a_folder.write_text("mine")
    with Store.open(a) as st:
        with pytest.raises(Invalid) as err:
            st.sync_pair(not_a_folder)
        assert "not a folder" in str(err.value)
        with pytest.raises(Invalid) as err:
            st.sync_folder(not_a_folder)
        assert "not a folder" in str(err.value)
    assert not_a_folder.read_text() == "mine"


def test_a_store_folder_swapped_for_a_link_out_of_the_folder_is_refused_and_nothing_outside_goes(stores, tmp_path):
    folder = tmp_path / "f"
    a, b, code = _pair_fresh(stores, folder)
    with Store.open(a) as st:
        st.sync_folder(folder)
        mine = st.sync_status()["store_id"]
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "00000001.pcs").write_text("precious")  # named like a change file, but the user's
    (folder / mine).rename(folder / f"{mine}.moved")
    (folder / mine).symlink_to(outside, target_is_directory=True)
    with Store.open(a) as st:
        gone = st.write_page("notes:a", content="erased now")
        st.delete_page(gone["page_id"], "now")  # the next file is a rewrite that drops the older ones
        with pytest.raises(Invalid) as err:
            st.sync_folder(folder)
    assert "link" in str(err.value) and "\n" not in str(err.value)
    assert sorted(p.name for p in outside.iterdir()) == ["00000001.pcs"]
    assert (outside / "00000001.pcs").read_text() == "precious"


def test_an_offers_folder_that_is_a_link_out_of_the_folder_is_refused(stores, tmp_path):
    folder = tmp_path / "f"
    folder.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    (folder / "offers").symlink_to(outside, target_is_directory=True)
    a, _ = stores(2)
    with Store.open(a) as st, pytest.raises(Invalid) as err:
        st.sync_pair(folder)
    assert "link" in str(err.value)
    assert list(outside.iterdir()) == []
