"""`pcp export --encrypt` (a sealed file, store/sealed.py) and `pcp import export` reading it back; the warning
that an encrypted store's plain export is plain."""

from __future__ import annotations

import json

import pytest

from encrypted_extra import leaks, require

require()  # before keychain, which imports keyring

from keychain import memory_keychain  # noqa: E402
from store import Store, crypt, encryption, sealed  # noqa: E402

TEXTS = [f"Ledger line {i}: Wilhelmina Oosterhuis paid {i * 313} guilders for tulip bulbs" for i in range(30)]


@pytest.fixture
def encrypted_store(tmp_path, monkeypatch):
    secret = tmp_path / "passphrase"
    secret.write_text("tulips in the snow\n")
    secret.chmod(0o600)
    monkeypatch.setenv("PCP_PASSPHRASE_FILE", str(secret))
    (tmp_path / "store").mkdir()
    db = tmp_path / "store" / "s.db"
    with memory_keychain():
        st = Store.open(db)
        for t in TEXTS:
            st.write_page("money:ledger", content=t)
        st.close()
        encryption.encrypt(db)
        yield db, secret


def run(capfd, *argv: str) -> tuple[int, str, str]:
    from pcp_tui import cli

    capfd.readouterr()
    rc = cli.main(list(argv))
    out, err = capfd.readouterr()
    return rc, out, err


def test_a_sealed_export_holds_no_text_and_imports_back_through_pcp(encrypted_store, tmp_path, capfd):
    db, secret = encrypted_store
    out = tmp_path / "everything.pcpx"
    rc, _, err = run(capfd, "--db", str(db), "--json", "export", "--encrypt", "--out", str(out))
    assert rc == 0, err
    assert "warning" not in err
    data = out.read_bytes()
    assert data.startswith(sealed.MAGIC) and leaks(data, TEXTS) == [] and b"pcp-export" not in data
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".") and "everything" in p.name]  # no temp left
    fresh = tmp_path / "fresh" / "s.db"
    fresh.parent.mkdir()
    rc, outp, err = run(capfd, "--db", str(fresh), "--json", "import", "export", str(out))
    assert rc == 0, err
    assert json.loads(outp)["added"]["revision"] == len(TEXTS)
    with Store.open(fresh) as st:
        assert len(st.search_pages("Oosterhuis tulip", limit=50)["hits"]) == len(TEXTS)


def test_a_sealed_export_refuses_a_wrong_passphrase_and_a_cut_file_in_one_line(encrypted_store, tmp_path, capfd):
    db, secret = encrypted_store
    out = tmp_path / "everything.pcpx"
    assert run(capfd, "--db", str(db), "export", "--encrypt", "--out", str(out))[0] == 0
    fresh = tmp_path / "fresh" / "s.db"
    fresh.parent.mkdir()
    secret.write_text("not the passphrase\n")
    rc, _, err = run(capfd, "--db", str(fresh), "import", "export", str(out))
    assert rc == 1 and err.count("\n") == 1 and "does not open" in err
    secret.write_text("tulips in the snow\n")
    cut = tmp_path / "cut.pcpx"
    cut.write_bytes(out.read_bytes()[:-40])
    rc, _, err = run(capfd, "--db", str(fresh), "import", "export", str(cut))
    assert rc == 1 and err.count("\n") == 1 and ("truncated" in err or "altered" in err)
    with Store.open(fresh) as st:
        assert st.search_pages("Oosterhuis", limit=5)["hits"] == []  # nothing was written


def test_a_plain_export_of_an_encrypted_store_warns_in_one_line(encrypted_store, tmp_path, capfd):
    db, _ = encrypted_store
    out = tmp_path / "plain.jsonl"
    rc, _, err = run(capfd, "--db", str(db), "export", "--out", str(out))
    assert rc == 0
    warning = [line for line in err.splitlines() if "warning" in line]
    assert len(warning) == 1 and "--encrypt" in warning[0]
    assert leaks(out.read_bytes(), TEXTS)  # it is plain, as the warning says
    crypt.forget()
