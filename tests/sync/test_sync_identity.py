"""Each store its own identity (issue 30): files are taken only when signed by a listed, unrevoked store; an
unpairing moves the folder key on without the lost machine; sync is the owner's alone."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import pcpstore_helpers as h
from sync_helpers import forge
from store import AccessSession, Forbidden, Store, ids
from store.sync.folder import Folder
from test_sync_folder import _sid, paired, run


def _receipt(page_id: str) -> bytes:
    """A deletion receipt record erasing `page_id` (what a lost machine would send to erase a page everywhere)."""
    return json.dumps({"kind": "receipt", "receipt_id": ids.new_id("del"), "namespace": None, "page_ids": [page_id],
                       "revision_ids": [], "counts": {"pages": 1}, "actor": {"actor_type": "user", "actor_id": "x"},
                       "reason": "stolen", "created_at": "2030-01-01T00:00:00.000Z"}).encode() + b"\n"


def _copy_store(src: Path, dst: Path) -> Path:
    dst.parent.mkdir(parents=True)
    shutil.copy(src, dst)
    for suffix in ("-wal", "-shm"):
        if Path(str(src) + suffix).exists():
            shutil.copy(str(src) + suffix, str(dst) + suffix)
    return dst


def _everyone_knows_everyone(paths: list[Path], folder: Path) -> None:
    for _ in range(2):
        for p in paths:
            run(p, folder)


def test_a_lost_machine_unpaired_writes_nothing_that_is_accepted_and_erases_nothing(stores, tmp_path):
    """Before: every paired store shared one chain key and the header's store id was a label, so a copy of the
    lost machine's store wrote files that authenticated under a fresh id or another store's, and its receipts
    erased pages everywhere. Now a copy of the store, unpaired, writes with its own id, a fresh id, another
    store's id and into another store's subfolder: nothing is accepted, nothing erased, and it cannot read on."""
    folder = tmp_path / "f"
    a, b, lost = paired(stores, folder, 3)
    with Store.open(a) as st:
        st.create_scope("s")
        keep = st.write_page("s", content="the owner's page about tide tables")
    _everyone_knows_everyone([a, b, lost], folder)
    thief = _copy_store(lost, tmp_path / "thief" / "context.db")  # a backup, or the stolen laptop itself
    with Store.open(a) as st:
        st.sync_unpair(folder, _sid(lost))
    a_file = Path(run(a, folder)["wrote"])
    run(b, folder)
    fresh = "sto_" + ids.ulid()
    with Store.open(thief) as st:
        st.delete_page(keep["page_id"], "the thief erases it")  # its own sync: a receipt under its own id
        st.sync_folder(folder)
    forged = [forge(thief, folder, chunks=[_receipt(keep["page_id"])]),  # its own id again
              forge(thief, folder, store=fresh, chunks=[_receipt(keep["page_id"])]),  # a fresh store id
              forge(thief, folder, store=_sid(b), chunks=[_receipt(keep["page_id"])]),  # another store's id, its folder
              forge(thief, folder, store=_sid(a), chunks=[_receipt(keep["page_id"])])]
    for p in (a, b):
        res = run(p, folder)
        assert res["erased_pages"] == []
        refused = {r["file"]: r["reason"] for r in res["refused"]}
        assert str(forged[0]) in refused and "unpaired" in refused[str(forged[0])]
        assert str(folder / fresh) in res["skipped"]  # never seen in a verified file: left alone
        other = forged[2] if p == a else forged[3]
        assert "not signed by" in refused[str(other)]
        with Store.open(p) as st:
            assert h.read1(st, keep["page_id"])["current_revision_id"] == keep["revision_id"]
    # The lost machine reads nothing new: the folder key moved on, sealed to a and b only.
    with Store.open(thief) as st:
        view = Folder(st.sync, folder)
        assert "another key" in view._open(a_file, _sid(a), int(a_file.stem), view.keys())
    with Store.open(b) as st:
        assert Folder(st.sync, folder).keys()["chain"] == Folder(Store.open(a).sync, folder).keys()["chain"]


def test_unpair_moves_the_key_on_and_the_others_take_it_without_pairing_again(stores, tmp_path):
    folder = tmp_path / "f"
    a, b, c = paired(stores, folder, 3)
    _everyone_knows_everyone([a, b, c], folder)
    with Store.open(a) as st:
        before = Folder(st.sync, folder).keys()["chain"]
        st.sync_unpair(folder, _sid(c))
        after = Folder(st.sync, folder).keys()
    assert after["chain"] != before and _sid(c) not in after["granted"]
    run(a, folder)
    with Store.open(b) as st:
        st.create_scope("b")
        st.write_page("b", content="written on b after the unpairing")
    res = run(b, folder)
    assert res["refused"] == [] and res["read"][0]["files"] == 1
    with Store.open(b) as st:
        assert Folder(st.sync, folder).keys()["chain"] == after["chain"]
    assert run(a, folder)["read"][0]["added"]["page"] == 1
    status = Store.open(b).sync_status()
    assert {s["store_id"]: s["revoked"] for s in status["stores"]}[_sid(c)] is True


def test_a_new_join_lifts_the_unpairing(stores, tmp_path):
    folder = tmp_path / "f"
    a, b, c = paired(stores, folder, 3)
    _everyone_knows_everyone([a, b, c], folder)
    with Store.open(a) as st:
        st.sync_unpair(folder, _sid(c))
    _everyone_knows_everyone([a, b], folder)
    with Store.open(a) as st:
        code = st.sync_pair(folder)["code"]
    with Store.open(c) as st:
        st.sync_join(folder, code)  # the machine was found: joined again with a new code
        st.create_scope("c")
        st.write_page("c", content="written on c after it joined again")
    _everyone_knows_everyone([a, c, b], folder)
    for p in (a, b):
        with Store.open(p) as st:
            assert st.search_pages("joined again", mode="exact")["hits"], p
            assert not any(s["revoked"] for s in st.sync_status()["stores"])


def test_stores_that_unpair_each_other_are_held_until_the_owner_confirms(stores, tmp_path):
    """The lost machine's thief unpairs the owner's machine while the owner unpairs the lost one: every store
    shows the dispute and holds both; the owner's confirmation on a third store settles it."""
    folder = tmp_path / "f"
    a, b, lost = paired(stores, folder, 3)
    _everyone_knows_everyone([a, b, lost], folder)
    with Store.open(a) as st:
        st.sync_unpair(folder, _sid(lost))
    with Store.open(lost) as st:
        st.sync_unpair(folder, _sid(a))
    run(a, folder)
    run(lost, folder)
    with Store.open(a) as st:
        st.create_scope("a")
        st.write_page("a", content="the owner writes on a")
    run(a, folder)
    res = run(b, folder)
    assert any("unpaired each other" in r["reason"] for r in res["refused"])
    for p in (a, b):
        assert Store.open(p).sync_status()["disputes"] == [sorted([_sid(a), _sid(lost)])], p
    with Store.open(b) as st:
        assert not st.search_pages("owner writes", mode="exact")["hits"]
        assert st.sync_unpair(folder, _sid(lost))["confirmed"]
        assert st.sync_status()["disputes"] == []
    run(b, folder)
    run(a, folder)
    run(b, folder)
    with Store.open(b) as st:
        assert st.search_pages("owner writes", mode="exact")["hits"]
    assert Store.open(a).sync_status()["disputes"] == []


def test_a_revocation_by_a_store_that_knew_it_was_revoked_is_void(stores, tmp_path):
    folder = tmp_path / "f"
    a, b, c, lost = paired(stores, folder, 4)
    _everyone_knows_everyone([a, b, c, lost], folder)
    with Store.open(a) as st:
        st.sync_unpair(folder, _sid(lost))
    run(a, folder)
    run(lost, folder)  # the lost store reads a's signed header: it knows it was unpaired
    with Store.open(lost) as st:
        st.sync_unpair(folder, _sid(c))  # and then unpairs c: void
    run(lost, folder)
    with Store.open(c) as st:
        st.create_scope("c")
        st.write_page("c", content="c is still paired")
    run(c, folder)
    run(b, folder)
    with Store.open(b) as st:
        assert st.search_pages("still paired", mode="exact")["hits"]
        listed = {s["store_id"]: s for s in st.sync_status()["stores"]}
    assert listed[_sid(lost)]["revoked"] and not listed[_sid(c)]["revoked"] and not listed[_sid(c)]["disputed"]


@pytest.mark.parametrize("call", ["pair", "rekey", "join", "unpair", "status", "folder", "with"])
def test_sync_is_the_owners_alone(stores, tmp_path, call):
    """Before: a model session could pair the store (and a fresh store joined with its code received every
    scope); status, unpair and folder sync skipped the owner check too."""
    folder = tmp_path / "f"
    a, b = stores(2)
    with Store.open(a) as st:
        st.create_scope("project:alpha")
        st.write_page("project:alpha", content="the owner's page")
        code = st.sync_pair(folder)["code"]
    model = AccessSession.model_client("m", AccessSession.parse_grants(["project:alpha=search,read"]))
    target = b if call == "join" else a
    with Store.open(target, session=model) as st:
        action = {"pair": lambda: st.sync_pair(folder), "rekey": lambda: st.sync_pair(folder, rekey=True),
                  "join": lambda: st.sync_join(folder, code), "unpair": lambda: st.sync_unpair(folder, "sto_" + ids.ulid()),
                  "status": st.sync_status, "folder": lambda: st.sync_folder(folder),
                  "with": lambda: st.sync_with(b)}[call]
        with pytest.raises(Forbidden):
            action()
    with Store.open(target) as st:
        events = st.audit_log(decision="denied")["events"]
    assert [e["operation"] for e in events][:1] == ["sync_" + {"folder": "folder", "with": "with"}.get(call, call)]
    assert events[0]["principal_id"] == "m"
    if call == "join":  # the offer is still there: the owner's join works
        with Store.open(b) as st:
            assert st.sync_join(folder, code)["adopted_owner"]


def test_a_model_client_cannot_pair_through_the_cli(stores, tmp_path, capsys):
    from pcp_tui.cli import main

    (a,) = stores(1)
    folder = tmp_path / "f"
    code = main(["--db", str(a), "--json", "--as-model", "m", "--grant", "project:alpha=search,read",
                 "sync", str(folder), "--pair"])
    out = json.loads(capsys.readouterr().out)
    assert code == 1 and out["error"]["code"] == "forbidden"
    assert not (folder / "offers").exists()
    with Store.open(a) as st:
        assert st.audit_log(decision="denied")["events"][0]["operation"] == "sync_pair"


def test_stores_paired_before_signed_files_are_told_to_pair_again_and_can(stores, tmp_path):
    """A store paired by a pcp before issue 30 (its folder key has no list of holders, its peer's files are format
    1): `--status` says to pair again, the peer's files are refused in one line saying so, and a new pairing of
    the two (same owner, both with history) syncs."""
    folder = tmp_path / "f"
    a, b = stores(2)
    with Store.open(a) as st:
        st.create_scope("s")
        st.write_page("s", content="written before the upgrade")
        owner = st.owner_id
    with Store.open(b) as st:
        st._db.execute_sql("UPDATE meta SET value = ? WHERE key = 'owner_id'", (owner,))  # adopted back then
        st._db.execute_sql("INSERT INTO meta (key, value) VALUES ('sync_keys', ?)", (json.dumps(
            {"chain": "chn_" + ids.ulid(), "epoch": 0, "key": "00" * 32}),))
    with Store.open(b) as st:
        st.create_scope("t")
        st.write_page("t", content="b's own history")
        assert st.sync_status()["unsigned_pairing"]
    old = folder / ("sto_" + ids.ulid())
    old.mkdir(parents=True)
    (old / "00000001.pcs").write_bytes(json.dumps({"format": "pcp.sync", "version": 1, "store": old.name, "seq": 1,
                                                   "epoch": 0, "chain": "chn_x"}).encode() + b"\n" + b"\0" * 40)
    res = run(b, folder)
    assert [r["reason"] for r in res["refused"]][0].startswith("written by an older pcp")
    with Store.open(a) as st:
        code = st.sync_pair(folder)["code"]
    with Store.open(b) as st:
        assert not st.sync_join(folder, code)["merged"]  # one owner already: nothing to ask
        assert not st.sync_status()["unsigned_pairing"]
    for _ in range(2):
        run(a, folder)
        run(b, folder)
    with Store.open(a) as st:
        assert st.search_pages("own history", mode="exact")["hits"]


def test_a_lost_machine_that_never_learnt_it_was_unpaired_cannot_unpair_another_store(stores, tmp_path):
    """The thief does not sync first: its revocation of c does not list the owner's revocation of it as seen. It
    stands only if the store that unpaired the thief knew of it then: it did not, so it is void."""
    folder = tmp_path / "f"
    a, b, c, lost = paired(stores, folder, 4)
    _everyone_knows_everyone([a, b, c, lost], folder)
    with Store.open(a) as st:
        st.sync_unpair(folder, _sid(lost))
    with Store.open(lost) as st:
        st.sync_unpair(folder, _sid(c))  # before it ever reads a's revocation
    run(lost, folder)
    run(a, folder)
    with Store.open(c) as st:
        st.create_scope("c")
        st.write_page("c", content="c is still paired after the thief's try")
    run(c, folder)
    for p in (b, a):
        run(p, folder)
        with Store.open(p) as st:
            listed = {s["store_id"]: s for s in st.sync_status()["stores"]}
            assert listed[_sid(lost)]["revoked"] and not listed[_sid(c)]["revoked"], p
            assert st.search_pages("after the thief", mode="exact")["hits"], p
