"""Forged and broken change files (issue 30): verified before any costly work, each failure that file's
refusal (named), the sync going on with the other stores and writing this store's own file. Each bound is
tested at the bound and one past it."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

import pcpstore_helpers as h
from sync_helpers import forge
from store import Store, ids
from store.sync import folder as fm
from store.sync import records
from store.sync.folder import Folder
from test_sync_folder import _sid, opened_text, paired, run

SECRET = "Quokka-7731 locker code 5580-1192"
AHEAD, INFLATE, DEPTH = 64, 16 << 20, 64  # the bounds issue 30 sets (store/sync/folder.py MAX_*)


def test_the_bounds_are_the_ones_the_issue_sets():
    assert (fm.MAX_AHEAD, fm.MAX_INFLATE, fm.MAX_DEPTH) == (AHEAD, INFLATE, DEPTH)


def _ready(stores, folder: Path, n: int = 3) -> list[Path]:
    paths = paired(stores, folder, n)
    with Store.open(paths[0]) as st:
        st.create_scope("s")
        st.write_page("s", content="a page every store holds")
    for _ in range(2):
        for p in paths:
            run(p, folder)
    return paths


def _header_file(folder: Path, store: str, seq: int, version: int = 2, **fields) -> Path:
    head = json.dumps({"format": "pcp.sync", "version": version, "store": store, "seq": seq, **fields}).encode()
    path = folder / store / f"{seq:08d}.pcs"
    path.write_bytes(head + b"\n" + b"00" * 64 + b"\n")
    return path


@pytest.mark.parametrize("version", [1, 2])
def test_a_header_claiming_a_far_epoch_is_refused_before_any_key_is_stepped(stores, tmp_path, monkeypatch, version):
    """Before: a file whose header claimed epoch 10^12 stepped the key that many times (keys were stepped before
    anything was authenticated), hanging every sync."""
    folder = tmp_path / "f"
    a, b, c = _ready(stores, folder)
    nxt = max(int(p.stem) for p in (folder / _sid(a)).glob("*.pcs")) + 1
    with Store.open(b) as st:
        chain = Folder(st.sync, folder).keys()["chain"]
    bad = _header_file(folder, _sid(a), nxt, version=version, epoch=10**12, chain=chain, base=True)
    steps = []
    real = fm._step
    monkeypatch.setattr(fm, "_step", lambda key, frm, to: steps.append(to - frm) or real(key, frm, min(to, frm + 100)))
    res = run(b, folder)
    assert max(steps, default=0) <= AHEAD  # (stepped 10^12 times before: a hang, cut short here)
    reason = {r["file"]: r["reason"] for r in res["refused"]}[str(bad)]
    assert reason.startswith("not signed by" if version == 2 else "written by an older pcp"), reason
    assert res["wrote"] is not None or res["read"]


@pytest.mark.parametrize("ahead, taken", [(AHEAD, True), (AHEAD + 1, False)])
def test_a_signed_file_at_most_64_epochs_ahead_is_taken(stores, tmp_path, ahead, taken):
    folder = tmp_path / "f"
    a, b = _ready(stores, folder, 2)
    with Store.open(a) as st:
        epoch = Folder(st.sync, folder).keys()["epoch"]
    page = {"kind": "scope", "namespace": "far", "display_name": "far", "description": None, "parent": None,
            "visibility": "private", "owner_id": Store.open(a).owner_id, "created_at": "2026-01-01T00:00:00.000Z",
            "updated_at": "2026-01-01T00:00:00.000Z"}
    f = forge(a, folder, epoch=epoch + ahead, chunks=[json.dumps(page).encode() + b"\n"])
    res = run(b, folder)
    refused = {r["file"]: r["reason"] for r in res["refused"]}
    assert (str(f) not in refused) == taken, refused
    if not taken:
        assert "more than 64 ahead" in refused[str(f)]
    with Store.open(b) as st:
        assert ("far" in {s["namespace"] for s in st.list_scopes()["scopes"]}) == taken


def test_a_store_far_behind_takes_the_key_its_peer_sealed_to_it(stores, tmp_path):
    """More than 64 deletes on one store while another was away: the away store steps no key that far, it takes
    the key of the file's epoch that its peer sealed to it in the signed header."""
    folder = tmp_path / "f"
    a, b = _ready(stores, folder, 2)
    with Store.open(a) as st:
        for i in range(AHEAD + 2):
            gone = st.write_page("s", content=f"deleted page {i}")
            st.delete_page(gone["page_id"], "tidying")
        st.write_page("s", content="written after many deletes")
    run(a, folder)
    res = run(b, folder)
    assert res["refused"] == [], res["refused"]
    with Store.open(b) as st:
        assert st.search_pages("after many deletes", mode="exact")["hits"]


def test_an_unsigned_junk_header_does_not_keep_the_old_key_alive(stores, tmp_path):
    """Before: which keys to forget was decided from unauthenticated headers, so one junk header claiming
    epoch 0 kept the pre-delete key on every store and old copies in a sync tool's history stayed openable."""
    folder = tmp_path / "f"
    a, b, c = paired(stores, folder)
    with Store.open(a) as st:
        st.create_scope("s")
        st.write_page("s", content="this page stays")
        gone = st.write_page("s", content=SECRET)
    for p in (a, b, c):
        run(p, folder)
    history = tmp_path / "history"
    shutil.copytree(folder, history)
    chain = Folder(Store.open(a).sync, folder).keys()["chain"]
    fresh = "sto_" + ids.ulid()
    (folder / fresh).mkdir()
    for sid in (_sid(a), fresh):  # junk claiming the old epoch: in a store's folder, and as a store of its own
        _header_file(folder, sid, 99 if sid != fresh else 1, epoch=0, chain=chain, base=False)
    with Store.open(b) as st:
        st.delete_page(gone["page_id"], "gone")
    for _ in range(2):
        for p in (b, a, c):
            run(p, folder)
    for p in (a, b, c):
        assert SECRET.encode() not in opened_text(p, history), p


def test_a_fifo_named_like_a_change_file_is_skipped(stores, tmp_path):
    """Before: `pcp sync` opened a FIFO named like a change file and hung."""
    folder = tmp_path / "f"
    a, b, c = _ready(stores, folder)
    nxt = max(int(p.stem) for p in (folder / _sid(a)).glob("*.pcs")) + 1
    fifo = folder / _sid(a) / f"{nxt:08d}.pcs"
    os.mkfifo(fifo)
    offer_fifo = folder / "offers" / "0000000000000000000000000A.reply"
    os.mkfifo(offer_fifo)
    with Store.open(c) as st:
        st.write_page("s", content="c writes on")
    run(c, folder)
    res = run(b, folder)
    assert str(fifo) in res["skipped"]
    assert any(r["store_id"] == _sid(c) and r["files"] == 1 for r in res["read"])
    with Store.open(a) as st:
        assert st.sync_pair(folder)["code"]  # pairing walks offers/ past the FIFO too


@pytest.mark.parametrize("digits", [8, 9])
def test_a_store_numbers_its_files_from_its_own_sequence_and_any_digit_count_is_read(stores, tmp_path, digits):
    """Before: an empty `99999999.pcs` dropped in a store's folder made its next file `100000000.pcs` (nine
    digits), which no store read: the store was cut off for good."""
    folder = tmp_path / "f"
    a, b = _ready(stores, folder, 2)
    own = folder / _sid(a)
    if digits == 8:
        (own / "99999999.pcs").write_bytes(b"")  # not a file a wrote: it is ignored, not counted
    else:  # a store that really wrote 99,999,999 files: the next one has nine digits
        with Store.open(a) as st:
            out = json.loads(st._db.execute_sql("SELECT value FROM meta WHERE key = 'sync_out'").fetchone()[0])
            out["seq"] = 99999999
            with st._db.atomic():
                st._db.execute_sql("UPDATE meta SET value = ? WHERE key = 'sync_out'", (json.dumps(out),))
    with Store.open(a) as st:
        st.write_page("s", content=f"written after the junk, {digits} digits")
    wrote = Path(run(a, folder)["wrote"])
    assert len(wrote.stem) == digits
    if digits == 8:
        assert int(wrote.stem) < 99999999
    res = run(b, folder)
    with Store.open(b) as st:
        assert st.search_pages(f"{digits} digits", mode="exact")["hits"], res


@pytest.mark.parametrize("extra, taken", [(0, True), (1, False)])
def test_a_chunk_inflates_to_at_most_16_mib(stores, tmp_path, extra, taken):
    """Before: a sealed chunk inflated without bound (2.5 MB to 3 GiB: MemoryError)."""
    folder = tmp_path / "f"
    a, b, c = _ready(stores, folder)
    rec = json.dumps({"kind": "scope", "namespace": "inflated", "display_name": "inflated", "description": None,
                      "parent": None, "visibility": "private", "owner_id": Store.open(a).owner_id,
                      "created_at": "2026-01-01T00:00:00.000Z", "updated_at": "2026-01-01T00:00:00.000Z"}).encode()
    body = rec + b"\n" * (INFLATE - len(rec) + extra)  # empty lines: nothing but size
    f = forge(a, folder, chunks=[body])
    with Store.open(c) as st:
        st.write_page("s", content="c's page taken beside it")
    run(c, folder)
    res = run(b, folder)
    refused = {r["file"]: r["reason"] for r in res["refused"]}
    assert (str(f) not in refused) == taken
    if not taken:
        assert "16 MiB" in refused[str(f)]
    with Store.open(b) as st:
        assert ("inflated" in {s["namespace"] for s in st.list_scopes()["scopes"]}) == taken
        assert st.search_pages("taken beside", mode="exact")["hits"]  # the other store's file, taken all the same


@pytest.mark.parametrize("broken", ["deep", "bad-utf8", "not-an-object", "not-zlib", "unknown-kind", "bad-record"])
def test_a_broken_sealed_file_is_that_files_refusal_and_the_sync_goes_on(stores, tmp_path, broken):
    """Before: one malformed sealed file (deep nesting, bad UTF-8) stopped the whole sync without naming the file,
    and the store wrote nothing of its own until the file was deleted by hand."""
    folder = tmp_path / "f"
    a, b, c = _ready(stores, folder)
    chunks = {"deep": [b"[" * 100_000 + b"\n"], "bad-utf8": [b'{"kind": "scope", "namespace": "\xff\xfe"}\n'],
              "not-an-object": [b"[1, 2]\n"], "unknown-kind": [b'{"kind": "nope"}\n'],
              "bad-record": [b"{\"kind\": \"page\"}\n"]}
    if broken == "not-zlib":
        f = forge(a, folder, deflated=[b"plain bytes, not zlib"])
    else:
        f = forge(a, folder, chunks=chunks[broken])
    with Store.open(c) as st:
        st.write_page("s", content="c's page arrives anyway")
    run(c, folder)
    with Store.open(b) as st:
        st.write_page("s", content="b's own change, written anyway")
    res = run(b, folder)
    refused = {r["file"]: r["reason"] for r in res["refused"]}
    assert str(f) in refused and "\n" not in refused[str(f)]
    assert res["wrote"] is not None
    with Store.open(b) as st:
        assert st.search_pages("arrives anyway", mode="exact")["hits"]
    run(c, folder)
    with Store.open(c) as st:
        assert st.search_pages("written anyway", mode="exact")["hits"]


@pytest.mark.parametrize("depth, taken", [(DEPTH, True), (DEPTH + 1, False)])
def test_record_nesting_is_bounded(stores, tmp_path, depth, taken):
    folder = tmp_path / "f"
    a, b = _ready(stores, folder, 2)
    with Store.open(a) as st:
        w = st.write_page("s", content="a page whose facets nest")
        rec = next(r for r in records.changes(st._db, st.owner_id, {}, records.top_marks(st._db))
                   if r["kind"] == "revision" and r["page_id"] == w["page_id"])
    nested: object = "leaf"
    for _ in range(depth - 2):  # the record itself and its facets object are two levels
        nested = [nested]
    rec = {**rec, "revision_id": ids.new_id("rev"), "previous_revision_id": rec["revision_id"],
           "facets": {"deep": nested}}
    f = forge(a, folder, chunks=[json.dumps(rec).encode() + b"\n"])
    res = run(b, folder)
    refused = {r["file"]: r["reason"] for r in res["refused"]}
    assert (str(f) not in refused) == taken, refused


def test_a_giant_offer_or_reply_and_a_link_named_like_a_change_file_are_left_alone(stores, tmp_path):
    folder = tmp_path / "f"
    a, b = _ready(stores, folder, 2)
    outside = tmp_path / "outside.pcs"
    outside.write_bytes(b"the user's own file")
    nxt = max(int(p.stem) for p in (folder / _sid(a)).glob("*.pcs")) + 1
    (folder / _sid(a) / f"{nxt:08d}.pcs").symlink_to(outside)
    res = run(b, folder)
    assert str(folder / _sid(a) / f"{nxt:08d}.pcs") in res["skipped"]
    assert outside.read_bytes() == b"the user's own file"
    assert h.read1(Store.open(b), Store.open(b).list_pages()["pages"][0]["page_id"])
