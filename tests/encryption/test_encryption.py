"""Encryption at rest (issue 38): an encrypted store's files hold none of its text, a wrong key changes nothing,
--rotate leaves pcp with nothing that opens an older copy, and the key never reaches a child's argv or environment.

Real SQLCipher (sqlcipher3), a real `keyring` backend kept in memory (tests/keychain.py), real files read byte by byte.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from encrypted_extra import leaks, require

require()  # before keychain, which imports keyring

from keychain import memory_keychain  # noqa: E402
from store import Store, crypt, encryption, sealed  # noqa: E402
from store.cipher_db import CipherDatabase  # noqa: E402
from store.files import SIDE_SUFFIXES  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
TEXTS = [f"Entry {i}: the harbour pilot Ottoline Vranckx logged {i * 7919} crates of saffron at dawn" for i in range(40)]
PASSPHRASE = "correct horse battery staple"


def fill(path: Path, texts: list[str]) -> list[str]:
    st = Store.open(path)
    try:
        ids = [st.write_page("notes:harbour", content=t)["page_id"] for t in texts]
    finally:
        st.close()
    return ids


def digest_folder(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir()) if p.is_file()}


@pytest.fixture
def keychain():
    with memory_keychain() as chain:
        yield chain


@pytest.fixture
def passphrase_file(tmp_path, monkeypatch):
    f = tmp_path / "passphrase"
    f.write_text(PASSPHRASE + "\n")
    f.chmod(0o600)
    monkeypatch.setenv("PCP_PASSPHRASE_FILE", str(f))
    yield f
    crypt.forget()


def test_encrypted_files_hold_no_page_text_and_no_sqlite_header(tmp_path, keychain):
    db = tmp_path / "s.db"
    ids = fill(db, TEXTS[:20])
    st = Store.open(db)
    st.copy(ids[:5], label="chat", clipboard=lambda text: "file-only")  # a plain handoff copy, before
    st.close()
    plain = db.read_bytes()
    assert plain.startswith(crypt.SQLITE_HEADER) and leaks(plain, TEXTS[:20])  # the check can see text

    encryption.encrypt(db)
    crypt.forget()
    st = Store.open(db)  # unwrapped through the keychain
    try:
        for t in TEXTS[20:]:  # written after: these pages go through the WAL, which stays open below
            st.write_page("notes:harbour", content=t)
        st.copy(ids[5:10], label="second chat", clipboard=lambda text: "file-only")
        hits = st.search_pages("saffron Vranckx", limit=50)["hits"]
        assert len(hits) == 40
        files = [p for p in tmp_path.rglob("*") if p.is_file()]
        wal = db.with_name(db.name + "-wal")
        assert wal in files and wal.stat().st_size > 0
        copies = list((tmp_path / "handoffs").glob("*.md"))
        assert len(copies) == 2
        for path in files:
            data = path.read_bytes()
            assert crypt.SQLITE_HEADER not in data, path
            assert leaks(data, TEXTS) == [], path
        for copy in copies:  # sealed, and read back through pcp
            assert copy.read_bytes().startswith(sealed.MAGIC)
            assert "Ottoline Vranckx" in st.handoff_copy_text(copy.stem)
    finally:
        st.close()


def test_a_wrong_passphrase_is_refused_in_one_line_and_the_files_stay_as_they_were(tmp_path, passphrase_file, capfd):
    from pcp_tui import cli

    (tmp_path / "store").mkdir()
    db = tmp_path / "store" / "s.db"
    fill(db, TEXTS[:3])
    encryption.encrypt(db, passphrase=PASSPHRASE)
    crypt.forget()
    before = digest_folder(db.parent)
    passphrase_file.write_text("not the passphrase\n")
    capfd.readouterr()
    rc = cli.main(["--db", str(db), "search", "saffron"])
    out, err = capfd.readouterr()
    assert rc == 1 and out == ""
    assert err.count("\n") == 1 and "does not open the store" in err and "Traceback" not in err
    assert digest_folder(db.parent) == before
    # a raw key that is not the store's: refused by SQLCipher's page check, nothing written
    with pytest.raises(Exception, match="does not open the store"):
        CipherDatabase(str(db), os.urandom(32)).connect()
    assert digest_folder(db.parent) == before


def test_a_passphrase_file_others_can_read_is_refused(tmp_path, passphrase_file, capfd):
    from pcp_tui import cli

    db = tmp_path / "s.db"
    fill(db, TEXTS[:1])
    encryption.encrypt(db, passphrase=PASSPHRASE)
    crypt.forget()
    passphrase_file.chmod(0o644)
    capfd.readouterr()
    assert cli.main(["--db", str(db), "search", "saffron"]) == 1
    err = capfd.readouterr().err
    assert err.count("\n") == 1 and "readable by others" in err


def _every_key_pcp_keeps(tmp_path: Path, chain, passphrase: str | None) -> list[bytes]:
    """Every database key recoverable from what pcp stores: each key file in the store folder unwrapped by each
    keychain entry and the passphrase, and each keychain secret taken as a key itself."""
    found: list[bytes] = []
    from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
    import base64

    secrets = [base64.b64decode(v) for v in chain.entries.values()]
    for path in tmp_path.rglob("*"):
        if not path.is_file():
            continue
        try:
            doc = crypt.read_key_doc(path)
        except Exception:  # noqa: BLE001 - not a key file
            continue
        wrappers = list(secrets)
        if passphrase is not None and doc["wrap"] == "scrypt":
            p = doc["scrypt"]
            wrappers.append(crypt.scrypt_key(passphrase, base64.b64decode(p["salt"]), p["n"], p["r"], p["p"]))
        for w in wrappers:
            try:
                found.append(ChaCha20Poly1305(w).decrypt(base64.b64decode(doc["nonce"]),
                                                         base64.b64decode(doc["wrapped"]),
                                                         crypt._aad(doc["store_id"], doc["wrap"])))
            except Exception:  # noqa: BLE001
                pass
    return found + [s for s in secrets if len(s) == 32]


@pytest.mark.parametrize("wrapping", ["keychain", "passphrase"])
def test_after_rotate_nothing_pcp_keeps_opens_a_copy_taken_before(tmp_path, keychain, wrapping, request):
    if wrapping == "passphrase":
        request.getfixturevalue("passphrase_file")  # how the old key is unlocked and the new one wrapped
    store_dir = tmp_path / "store"
    store_dir.mkdir()
    db = store_dir / "s.db"
    ids = fill(db, TEXTS[:10])
    passphrase = PASSPHRASE if wrapping == "passphrase" else None
    encryption.encrypt(db, passphrase=passphrase)
    st = Store.open(db)
    st.copy(ids[:3], label="chat", clipboard=lambda text: "file-only")
    st.close()
    old_key = crypt.unlock(db)
    backup = tmp_path / "backup.db"
    shutil.copyfile(db, backup)
    old_copy = next((store_dir / "handoffs").glob("*.md")).read_bytes()
    assert crypt.opens(backup, old_key)  # the check below could fail
    assert old_key in _every_key_pcp_keeps(store_dir, keychain, passphrase)

    crypt.forget()
    result = encryption.rotate(db, passphrase=passphrase)
    assert result["rotated"] and result["rows"] > 0
    crypt.forget()
    kept = _every_key_pcp_keeps(store_dir, keychain, passphrase)
    assert kept, "the new key is found the same way"
    assert not any(crypt.opens(backup, key) for key in kept)
    new_key = crypt.unlock(db)
    assert crypt.opens(db, new_key) and new_key in kept
    with pytest.raises(Exception, match="does not open with this key"):
        sealed.open_bytes(old_copy, new_key)
    st = Store.open(db)
    try:
        assert len(st.search_pages("saffron", limit=50)["hits"]) == 10
        copy = next((store_dir / "handoffs").glob("*.md"))
        assert "Ottoline" in st.handoff_copy_text(copy.stem)  # re-sealed under the new key
    finally:
        st.close()
    assert sorted(p.name for p in store_dir.iterdir() if p.is_file() and ".key" in p.name) == ["s.db.key"]


def test_decrypt_gives_back_the_same_store_and_destroys_the_key(tmp_path, keychain):
    db = tmp_path / "s.db"
    fill(db, TEXTS[:5])
    st = Store.open(db)
    before = st.search_pages("saffron", limit=50)
    st.close()
    encryption.encrypt(db)
    assert keychain.entries
    encryption.decrypt(db)
    assert db.read_bytes().startswith(crypt.SQLITE_HEADER)
    assert not keychain.entries and not crypt.key_file(db).exists()
    st = Store.open(db)
    try:
        after = st.search_pages("saffron", limit=50)
        assert [h["page_id"] for h in after["hits"]] == [h["page_id"] for h in before["hits"]]
    finally:
        st.close()


def test_encrypt_refuses_while_another_process_holds_the_store(tmp_path, keychain):
    db = tmp_path / "s.db"
    fill(db, TEXTS[:3])
    holder = subprocess.Popen(  # another process with a read snapshot open: the WAL cannot be folded in
        [sys.executable, "-c", "import sys; from peewee import sqlite3; c = sqlite3.connect(sys.argv[1], "
         "isolation_level=None); c.execute('BEGIN'); c.execute('SELECT count(*) FROM page').fetchone(); "
         "print('ready', flush=True); sys.stdin.read()", str(db)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "ready"
        st = Store.open(db)
        st.write_page("notes:harbour", content="one more while the reader holds its snapshot")
        st.close()
        data = lambda: {k: v for k, v in digest_folder(tmp_path).items() if not k.endswith("-shm")}  # noqa: E731
        before = data()  # the database and its WAL (the -shm index is SQLite's scratch memory)
        with pytest.raises(Exception, match="open in another pcp"):
            encryption.encrypt(db)
        assert data() == before
        assert not keychain.entries
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=60)


def test_the_reader_child_gets_the_key_over_its_pipe_never_argv_or_environment(tmp_path, keychain):
    from pcp_tui.reads import Reads
    from waits import wait_for

    db = tmp_path / "s.db"
    fill(db, TEXTS[:5])
    encryption.encrypt(db)
    crypt.forget()
    st = Store.open(db)
    key = crypt.cached_key(db)
    assert key is not None
    reads = Reads(st, min_bytes=0)
    try:
        assert reads.start()
        wait_for(lambda: reads.offloaded, "the reader child to open the encrypted store")
        assert reads.pid is not None
        argv = Path(f"/proc/{reads.pid}/cmdline").read_bytes()
        env = Path(f"/proc/{reads.pid}/environ").read_bytes()
        for form in (key, key.hex().encode(), key.hex().upper().encode()):
            assert form not in argv and form not in env
        answer = reads.call("page-window", "search_pages", "saffron", limit=50)
        assert len(answer["hits"]) == 5
    finally:
        reads.close()
        st.close()
    for form in (key.hex(), key.hex().upper()):
        assert all(form not in v for v in os.environ.values())


def test_the_cli_journey_encrypt_search_doctor_decrypt(tmp_path, passphrase_file):
    """`pcp encrypt --passphrase` in a real child process with PCP_PASSPHRASE_FILE, then search and doctor."""
    db = tmp_path / "s.db"
    fill(db, TEXTS[:4])

    def pcp(*args: str) -> subprocess.CompletedProcess:
        env = {k: v for k, v in os.environ.items() if k != "PCP_DB"}
        return subprocess.run([sys.executable, "-m", "pcp_tui.cli", "--db", str(db), *args], env=env, cwd=REPO,
                              capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=120)

    done = pcp("encrypt", "--passphrase")
    assert done.returncode == 0, done.stderr
    assert "SSD" in done.stdout and "passphrase (scrypt n=131072, r=8, p=1)" in done.stdout
    assert not db.read_bytes().startswith(crypt.SQLITE_HEADER)
    key_doc = json.loads(crypt.key_file(db).read_text())
    assert key_doc["wrap"] == "scrypt" and key_doc["scrypt"]["n"] >= 1 << 17
    assert stat.S_IMODE(crypt.key_file(db).stat().st_mode) == 0o600
    found = pcp("--json", "search", "saffron")
    assert found.returncode == 0, found.stderr
    assert len(json.loads(found.stdout)["hits"]) == 4
    doctor = json.loads(pcp("--json", "doctor").stdout)
    assert doctor["integrity"] == "ok" and doctor["encryption"]["encrypted"] is True
    assert doctor["encryption"]["wrapping_key"].startswith("a passphrase")
    again = pcp("encrypt", "--passphrase")
    assert again.returncode == 1 and again.stderr.count("\n") == 1 and "already encrypted" in again.stderr
    back = pcp("decrypt")
    assert back.returncode == 0, back.stderr
    assert db.read_bytes().startswith(crypt.SQLITE_HEADER) and not crypt.key_file(db).exists()
    assert all(not db.with_name(db.name + s).exists() or s != ".converting" for s in SIDE_SUFFIXES)


def test_without_sqlcipher_an_encrypted_store_says_what_to_install(tmp_path, keychain, monkeypatch):
    db = tmp_path / "s.db"
    fill(db, TEXTS[:1])
    encryption.encrypt(db)
    crypt.forget()
    monkeypatch.setitem(sys.modules, "sqlcipher3", None)
    with pytest.raises(Exception, match=r"pip install 'pcp\[encrypt\]'"):
        Store.open(db)


def test_pcp_mcp_says_in_one_line_what_is_missing_without_the_key(tmp_path, passphrase_file):
    db = tmp_path / "s.db"
    fill(db, TEXTS[:1])
    encryption.encrypt(db, passphrase=PASSPHRASE)
    env = {k: v for k, v in os.environ.items() if k not in ("PCP_DB", "PCP_PASSPHRASE_FILE")}
    done = subprocess.run([sys.executable, "-m", "pcp_tui.cli", "--db", str(db), "mcp", "--client-id", "claude",
                           "--grant", "notes:*=read"], env=env, cwd=REPO, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=120)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "PCP_PASSPHRASE_FILE" in done.stderr, done.stderr
    served = subprocess.run([sys.executable, "-m", "pcp_tui.cli", "--db", str(db), "mcp", "--client-id", "claude",
                             "--grant", "notes:*=read"], env={**env, "PCP_PASSPHRASE_FILE": str(passphrase_file)},
                            cwd=REPO, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=120)
    assert "PCP_PASSPHRASE_FILE" not in served.stderr and "does not open" not in served.stderr


def test_a_keychain_store_without_a_keychain_says_so_in_one_line(tmp_path, keychain, capfd):
    from pcp_tui import cli
    import keyring
    from keyring.backends import fail

    db = tmp_path / "s.db"
    fill(db, TEXTS[:1])
    encryption.encrypt(db)
    crypt.forget()
    keyring.set_keyring(fail.Keyring())
    capfd.readouterr()
    assert cli.main(["--db", str(db), "doctor"]) == 1
    err = capfd.readouterr().err
    assert err.count("\n") == 1 and "no keychain is available" in err


def test_sync_and_migration_work_on_encrypted_stores(tmp_path, keychain, schema1_db):
    from pcp_tui import cli  # noqa: F401 - the same imports the command has

    a, b = tmp_path / "a" / "s.db", tmp_path / "b" / "s.db"
    a.parent.mkdir()
    b.parent.mkdir()
    fill(a, TEXTS[:6])
    encryption.encrypt(a)
    Store.open(b).close()
    encryption.encrypt(b)
    crypt.forget()
    with Store.open(a) as st:
        result = st.sync_with(b)
        assert result
    with Store.open(b) as other:
        assert len(other.search_pages("saffron", limit=50)["hits"]) == 6
    for path in (a, b, a.with_name("s.db-wal"), b.with_name("s.db-wal")):
        if path.exists():
            assert leaks(path.read_bytes(), TEXTS) == [] and crypt.SQLITE_HEADER not in path.read_bytes()
    # a schema-1 store, encrypted before it was ever upgraded, migrates when opened
    encryption.encrypt(schema1_db)
    crypt.forget()
    with Store.open(schema1_db) as old:
        assert old.doctor()["schema_version"] >= 2 and old.doctor()["integrity"] == "ok"


def test_copy_continue_verify_and_erasure_rewrite_work_on_sealed_handoff_copies(tmp_path, keychain):
    db = tmp_path / "s.db"
    ids = fill(db, TEXTS[:4])
    encryption.encrypt(db)
    st = Store.open(db)
    try:
        first = st.copy(ids[:2], label="Claude: harbour", clipboard=lambda text: "file-only")
        st.revise_page(ids[0], first["entries"][0]["revision_id"], content=TEXTS[0] + " and one more crate")
        later = st.copy_continue("Claude: harbour", clipboard=lambda text: "file-only")
        for result in (first, later):
            path = Path(result["file"])
            assert path.read_bytes().startswith(sealed.MAGIC) and leaks(path.read_bytes(), TEXTS) == []
            assert st.handoff_copy_text(result["handoff_id"]) == result["text"]
            checked = st.verify(result["text"])
            assert checked["digest_ok"] and checked["origin"] == "this_store"
        st.delete_page(ids[1], "erase it from the copies too")
        rewritten = st.handoff_copy_text(first["handoff_id"])  # the erasure rewrote the sealed copy
        assert TEXTS[1] not in rewritten and Path(first["file"]).read_bytes().startswith(sealed.MAGIC)
    finally:
        st.close()


def test_the_key_never_reaches_peewees_query_log(tmp_path, keychain, caplog):
    import logging

    db = tmp_path / "s.db"
    fill(db, TEXTS[:2])
    caplog.set_level(logging.DEBUG, logger="peewee")
    encryption.encrypt(db)
    crypt.forget()
    st = Store.open(db)
    try:
        st.search_pages("saffron")
        key = crypt.cached_key(db)
        assert key is not None
        logged = "\n".join(str(r.msg) + str(r.args) for r in caplog.records)
        assert logged, "the query log was on"
        assert key.hex() not in logged and key.hex().upper() not in logged and "PRAGMA key" not in logged
    finally:
        st.close()


def test_an_interrupted_encrypt_leaves_the_store_as_it_was_and_the_next_run_resumes_the_copy(tmp_path,
                                                                                            passphrase_file):
    db = tmp_path / "store" / "s.db"
    db.parent.mkdir()
    fill(db, TEXTS)
    before = hashlib.sha256(db.read_bytes()).hexdigest()
    env = {k: v for k, v in os.environ.items() if k != "PCP_DB"}

    def pcp(*args: str, stop: str | None = None) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "pcp_tui.cli", "--db", str(db), *args],
                              env={**env, **({"PCP_TEST_STOP": stop} if stop else {})}, cwd=REPO,
                              capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=120)

    killed = pcp("encrypt", "--passphrase", stop="convert-step:6")  # SIGKILL after the 6th committed step
    assert killed.returncode == -9, killed.stderr
    assert db.read_bytes().startswith(crypt.SQLITE_HEADER)
    assert hashlib.sha256(db.read_bytes()).hexdigest() == before  # the store itself was never written
    assert db.with_name("s.db.converting").exists() and crypt.new_key_file(db).exists()
    with Store.open(db) as st:  # still the plain store, whole (and this open writes nothing to its data)
        assert len(st.search_pages("saffron", limit=50)["hits"]) == len(TEXTS)
    done = pcp("encrypt", "--passphrase")
    assert done.returncode == 0, done.stderr
    assert "resuming the copy" in done.stderr
    assert not db.read_bytes().startswith(crypt.SQLITE_HEADER)
    assert sorted(p.name for p in db.parent.iterdir()) == ["s.db", "s.db.key"]
    crypt.forget()
    with Store.open(db) as st:
        assert len(st.search_pages("saffron", limit=50)["hits"]) == len(TEXTS)
        assert st.doctor()["integrity"] == "ok" and st.doctor()["fts"]["state"] == "ok"


def test_pcp_serve_refuses_in_one_line_when_its_tab_children_could_not_get_the_key(tmp_path, passphrase_file):
    db = tmp_path / "s.db"
    fill(db, TEXTS[:1])
    encryption.encrypt(db, passphrase=PASSPHRASE)
    env = {k: v for k, v in os.environ.items() if k not in ("PCP_DB", "PCP_PASSPHRASE_FILE")}
    done = subprocess.run([sys.executable, "-m", "pcp_tui.cli", "--db", str(db), "serve", "--port", "1"], env=env,
                          cwd=REPO, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=120)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "PCP_PASSPHRASE_FILE" in done.stderr and "child" in done.stderr


def test_encrypt_and_rotate_never_follow_a_link_beside_the_store(tmp_path, keychain):
    """A link planted in handoffs/ or at a key file's name: its target is never read, sealed or zeroed."""
    store_dir = tmp_path / "store"
    store_dir.mkdir()
    db = store_dir / "s.db"
    ids = fill(db, TEXTS[:3])
    st = Store.open(db)
    st.copy(ids[:1], label="chat", clipboard=lambda text: "file-only")
    st.close()
    outside = tmp_path / "outside.md"
    outside.write_text("not pcp's: " + TEXTS[5])
    (store_dir / "handoffs" / "planted.md").symlink_to(outside)
    victim = tmp_path / "victim.txt"
    victim.write_text("must survive")
    encryption.encrypt(db)
    assert outside.read_text() == "not pcp's: " + TEXTS[5]
    assert (store_dir / "handoffs" / "planted.md").is_symlink()
    crypt.key_file(db).rename(crypt.new_key_file(db).with_suffix(".moved"))
    crypt.key_file(db).symlink_to(victim)  # the key file's name now a link: rotate must not zero its target
    crypt.new_key_file(db).with_suffix(".moved").rename(crypt.new_key_file(db))
    crypt.forget()
    with pytest.raises(OSError):
        encryption.rotate(db)
    assert victim.read_text() == "must survive"
    crypt.forget()
    with Store.open(db) as st:  # the rotated store still opens: its new key waits in the staged file
        assert len(st.search_pages("saffron", limit=50)["hits"]) == 3
