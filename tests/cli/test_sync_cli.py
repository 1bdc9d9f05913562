"""`pcp sync`: pairing by code, folder sync, --with, --status, and one-line refusals."""

from __future__ import annotations

import json

from pcp_tui.cli import main


def run(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_pair_join_sync_status_and_text_output(tmp_path, capsys):
    a, b, folder = str(tmp_path / "a" / "a.db"), str(tmp_path / "b" / "b.db"), str(tmp_path / "f")
    assert run(capsys, "--db", a, "scope", "create", "work")[0] == 0
    assert run(capsys, "--db", a, "write", "--namespace", "work", "--content", "synced by the cli")[0] == 0
    code, out, _ = run(capsys, "--db", a, "--json", "sync", folder, "--pair")
    offer = json.loads(out)
    assert code == 0 and offer["action"] == "pair"
    code, out, err = run(capsys, "--db", b, "sync", folder, "--join", offer["code"])
    assert code == 0 and "Paired with" in out, err
    assert run(capsys, "--db", a, "sync", folder)[0] == 0
    code, out, _ = run(capsys, "--db", b, "sync", folder)
    assert code == 0 and "1 page" in out
    code, out, _ = run(capsys, "--db", b, "--json", "search", "synced by the cli")
    assert json.loads(out)["hits"]
    code, out, _ = run(capsys, "--db", b, "--json", "sync", "--status")
    status = json.loads(out)
    assert status["paired"] and status["peers"][0]["last_sync"] and status["conflicts"] == []
    code, out, _ = run(capsys, "--db", b, "sync", "--status")
    assert code == 0 and "This store" in out


def test_refusals_are_one_line(tmp_path, capsys):
    a, b = str(tmp_path / "a" / "a.db"), str(tmp_path / "b" / "b.db")
    for db in (a, b):
        run(capsys, "--db", db, "scope", "create", "mine")
    code, _, err = run(capsys, "--db", a, "sync", "--with", b)
    assert code != 0 and err.count("\n") == 1 and "another owner" in err
    code, _, err = run(capsys, "--db", a, "sync", str(tmp_path / "f"))
    assert code != 0 and err.count("\n") == 1 and "not paired" in err
    code, _, err = run(capsys, "--db", a, "sync", str(tmp_path / "f"), "--join", "AAAA-BBBB")
    assert code != 0 and err.count("\n") == 1
    code, _, err = run(capsys, "--db", a, "sync")
    assert code != 0


def test_a_sync_that_only_wrote_is_the_last_sync(tmp_path, capsys):
    """`pcp sync DIR` with no other store's files to read still syncs: --status (and the app) must not say never."""
    a, folder = str(tmp_path / "a" / "a.db"), str(tmp_path / "f")
    assert run(capsys, "--db", a, "write", "--namespace", "work", "--content", "only written out")[0] == 0
    assert run(capsys, "--db", a, "sync", folder, "--pair")[0] == 0
    code, out, _ = run(capsys, "--db", a, "--json", "sync", "--status")
    assert code == 0 and json.loads(out)["last_sync"] is None  # paired, never synced yet
    code, out, _ = run(capsys, "--db", a, "--json", "sync", folder)
    assert code == 0 and json.loads(out)["read"] == [] and json.loads(out)["wrote"]  # nothing to read: it only wrote
    code, out, _ = run(capsys, "--db", a, "--json", "sync", "--status")
    last = json.loads(out)["last_sync"]
    assert last and last.startswith("20")
    code, out, _ = run(capsys, "--db", a, "sync", "--status")
    assert code == 0 and f"Last sync: {last}" in out
    code, out, _ = run(capsys, "--db", a, "sync", folder)  # again: nothing new to write or read, still a sync
    code, out, _ = run(capsys, "--db", a, "--json", "sync", "--status")
    assert code == 0 and json.loads(out)["last_sync"] >= last
