"""Converting a store between plain SQLite and SQLCipher (encrypt, decrypt, rotate the key).

Each conversion copies the whole database into a new file beside the store (`sqlcipher_export`, while a
write lock keeps other writers out), verifies the copy (integrity check and every table's row count), then
swaps it in with one rename. The old file is overwritten with zeros through a descriptor held across the
rename, so no name ever points at a half-written store; an SSD's wear levelling or a filesystem snapshot
may still keep its old blocks, which no program can reach. An interrupted conversion leaves the store as
it was and a `.converting` file that the next run resumes, step by committed step, as long as the store is
unchanged and the new key is the same (it is staged beside the store before the copy starts).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Callable

from . import crypt, stops
from .errors import Conflict, Invalid
from .files import SIDE_SUFFIXES

TEMP_SUFFIX = ".converting"
CHUNK = 1 << 20
CHUNK_ROWS = 20_000  # rows per committed step of the copy (what an interruption loses at most)

Progress = Callable[[str], None]


def _quiet(_: str) -> None:
    return None


def status(db_path: Path) -> dict[str, Any]:
    """Whether the store is encrypted and where its wrapping key lives (for doctor; reads no secret)."""
    if not crypt.is_encrypted(db_path):
        return {"encrypted": False}
    found = next(p for p in crypt.key_files(db_path) if p.exists())
    try:
        doc = crypt.read_key_doc(found)
    except Invalid as exc:
        return {"encrypted": True, "cipher": "SQLCipher 4", "key_file": str(found), "wrapping_key": str(exc)}
    if doc["wrap"] == "keyring":
        where = f"OS keychain ({doc.get('keyring', {}).get('backend', 'keyring')}), service " \
                f"{crypt.KEYRING_SERVICE}, entry {doc['store_id']}"
    else:
        params = doc.get("scrypt") or {}
        where = f"a passphrase (scrypt n={params.get('n')}, r={params.get('r')}, p={params.get('p')})"
    return {"encrypted": True, "cipher": "SQLCipher 4 (raw 256-bit key)", "key_file": str(found),
            "wrapping_key": where}


def _side(path: Path, suffix: str) -> Path:
    return path.with_name(path.name + suffix)


def _remove_quietly(path: Path) -> None:
    try:
        path.unlink()
    except FileNotFoundError:
        pass


def _write_private(path: Path, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)  # never through a link
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _zero(fd: int) -> None:
    """Overwrite the whole file behind `fd` with zeros and flush it to the disk."""
    size = os.fstat(fd).st_size
    zeros = bytes(CHUNK)
    os.lseek(fd, 0, os.SEEK_SET)
    done = 0
    while done < size:
        done += os.write(fd, zeros[: min(CHUNK, size - done)])
    os.fsync(fd)


def destroy(path: Path) -> None:
    """Overwrite a file with zeros, then remove it (a key file, the old store)."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_NOFOLLOW)  # a link at the name: refused, its target never zeroed
    except FileNotFoundError:
        return
    try:
        _zero(fd)
    finally:
        os.close(fd)
    path.unlink()


def _tables(conn: Any) -> list[str]:
    return [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' "
                                       "AND sql NOT LIKE 'CREATE VIRTUAL TABLE%' ORDER BY name")]


def _counts(conn: Any) -> dict[str, int]:
    return {t: conn.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0] for t in _tables(conn)}


def _convert(db_path: Path, src_key: bytes | None, dst_key: bytes | None, progress: Progress) -> dict[str, int]:
    """Copy the store into a new file under `dst_key` (None: plain), verify it, swap it in, zero the old file.

    Returns the verified row counts. The caller writes the new key file first (so a crash after the rename
    still finds it) and retires the old key after."""
    if not db_path.is_file():
        raise Invalid(f"No store at {db_path}; nothing was changed.")
    sqlcipher = crypt.driver()
    temp = _side(db_path, TEMP_SUFFIX)
    guard = crypt.connect_raw(db_path, src_key)
    try:
        guard.execute("PRAGMA busy_timeout = 0")
        try:
            busy, log, done = guard.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
            busy = busy or log != done
            guard.execute("BEGIN IMMEDIATE")  # other writers wait (or give up) until the swap
        except sqlcipher.OperationalError:
            busy = 1
        except sqlcipher.DatabaseError:
            raise Invalid(f"The key does not open the store {db_path}; nothing was changed.") from None
        if busy:
            raise Conflict("The store is open in another pcp (the app, pcp mcp, a capture); close it and try again.")
        source = {t: n for t, n in _counts(guard).items()}
        before = os.stat(db_path)
        # What the copy was made from: an interrupted copy is resumed only while this is unchanged.
        fingerprint = json.dumps({"size": before.st_size, "mtime_ns": before.st_mtime_ns, "rows": source},
                                 sort_keys=True)
        resumed = _resumable(temp, dst_key, fingerprint)
        progress(f"{'resuming the copy of' if resumed else 'copying'} {sum(source.values()):,} rows into {temp.name}")
        copier = crypt.connect_raw(db_path, src_key)
        try:
            copier.execute("ATTACH DATABASE ? AS pcp_new KEY ?",
                           (str(temp), f"x'{dst_key.hex()}'" if dst_key is not None else ""))
            _copy(copier, fingerprint, resumed, progress)
            copier.execute("DETACH DATABASE pcp_new")
        finally:
            copier.close()
        progress("verifying the copy")
        check = crypt.connect_raw(temp, dst_key)
        try:
            _verify(check, dst_key, source)
        except Invalid:
            check.close()
            for leftover in [temp] + [_side(temp, s) for s in SIDE_SUFFIXES]:
                _remove_quietly(leftover)  # a copy that failed its check is never resumed
            raise
        check.close()
        copied = source
        guard.execute("ROLLBACK")
    finally:
        guard.close()
    wal = _side(db_path, "-wal")
    after = os.stat(db_path)
    if (after.st_size, after.st_mtime_ns) != (before.st_size, before.st_mtime_ns) or \
            (wal.exists() and wal.stat().st_size > 0):
        _remove_quietly(temp)
        raise Conflict("The store changed during the copy (another pcp wrote to it); close it and try again.")
    progress("swapping the files")
    old = os.open(db_path, os.O_RDWR)
    try:
        for suffix in SIDE_SUFFIXES:
            _remove_quietly(_side(db_path, suffix))
        os.chmod(temp, 0o600)
        os.replace(temp, db_path)
        _fsync_dir(db_path.parent)
        progress("overwriting the old file")
        _zero(old)  # the old inode, now nameless: its blocks are zeroed before they are freed
    finally:
        os.close(old)
    return copied


def _reseal_handoffs(db_path: Path, old_key: bytes | None, new_key: bytes | None) -> int:
    """Bring the handoff copies beside the store under its new key (or plain after decrypt); each old file
    is overwritten with zeros before its name moves to the new one."""
    from . import sealed

    folder = db_path.parent / "handoffs"
    done = 0
    if not folder.is_dir():
        return 0
    for path in sorted(folder.glob("*.md")):
        if path.is_symlink() or not path.is_file():
            continue  # pcp writes no links there: one is never followed, read or overwritten
        data = path.read_bytes()
        if data.startswith(sealed.MAGIC):
            if old_key is None:
                continue  # sealed under a key pcp no longer has: left as it is
            data = sealed.open_bytes(data, old_key)
        fresh = sealed.seal_bytes(data, new_key) if new_key is not None else data
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        _write_private(tmp, fresh)
        old = os.open(path, os.O_RDWR | os.O_NOFOLLOW)
        try:
            os.replace(tmp, path)
            _zero(old)
        finally:
            os.close(old)
        done += 1
    return done


def _verify(check: Any, key: bytes | None, source: dict[str, int]) -> None:
    """The copy passes SQLCipher's page check (encrypted), SQLite's integrity check and has every row."""
    if key is not None and check.execute("PRAGMA cipher_integrity_check").fetchall():
        raise Invalid("The encrypted copy failed SQLCipher's check; the store is unchanged.")
    result = check.execute("PRAGMA integrity_check").fetchall()
    if result != [("ok",)]:
        raise Invalid(f"The copy failed the integrity check ({result[0][0]}); the store is unchanged.")
    if _counts(check) != source:
        raise Invalid("The copy's row counts differ from the store's; the store is unchanged.")


def _resumable(temp: Path, key: bytes | None, fingerprint: str) -> bool:
    """True when `temp` is an interrupted copy of this very store under this key; else it is removed."""
    if temp.exists():
        try:
            conn = crypt.connect_raw(temp, key)
            try:
                row = conn.execute("SELECT value FROM pcp_conversion WHERE key = 'source'").fetchone()
            finally:
                conn.close()
            if row is not None and row[0] == fingerprint:
                return True
        except Exception:  # noqa: BLE001 - another key, another store, a damaged file: start over
            pass
    for leftover in [temp] + [_side(temp, s) for s in SIDE_SUFFIXES]:
        _remove_quietly(leftover)
    return False


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


# sqlite_schema keeps each CREATE statement with its leading keywords normalised (as VACUUM relies on): the
# new database's name goes in after them.
_PREFIX = {"table": "CREATE TABLE ", "index": "CREATE INDEX ", "unique": "CREATE UNIQUE INDEX ",
           "trigger": "CREATE TRIGGER ", "view": "CREATE VIEW "}


def _in_new(sql: str) -> str:
    for prefix in _PREFIX.values():
        if sql.startswith(prefix):
            return prefix + "pcp_new." + sql[len(prefix):]
    raise Invalid(f"The store's schema has a statement pcp cannot copy ({sql[:40]!r}); nothing was changed.")


def _copy(conn: Any, fingerprint: str, resumed: bool, progress: Progress) -> None:
    """Copy main into the attached pcp_new in steps that each commit (a resumable copy), like VACUUM INTO:
    plain tables with their rowids, in chunks of CHUNK_ROWS; then indexes, triggers, views and the
    virtual tables' definitions (their shadow tables were copied as tables) in one last transaction."""
    schema = conn.execute("SELECT type, name, sql, rootpage FROM main.sqlite_master WHERE sql IS NOT NULL "
                          "AND name NOT LIKE 'sqlite_%' ORDER BY rowid").fetchall()
    tables = [(name, sql) for kind, name, sql, root in schema if kind == "table" and root]
    if not resumed:
        auto_vacuum = conn.execute("PRAGMA main.auto_vacuum").fetchone()[0]
        conn.execute(f"PRAGMA pcp_new.auto_vacuum = {int(auto_vacuum)}")
        conn.execute("BEGIN")
        conn.execute("CREATE TABLE pcp_new.pcp_conversion (key TEXT PRIMARY KEY, value TEXT)")
        conn.execute("INSERT INTO pcp_new.pcp_conversion VALUES ('source', ?)", (fingerprint,))
        for _name, sql in tables:
            conn.execute(_in_new(sql))
        conn.execute("COMMIT")
    for name, sql in tables:
        columns = [r[1] for r in conn.execute(f"PRAGMA main.table_info({_q(name)})")]
        listed = ", ".join(_q(c) for c in columns)
        mark = conn.execute("SELECT value FROM pcp_new.pcp_conversion WHERE key = ?", (f"table:{name}",)).fetchone()
        if mark is not None and mark[0] == "done":
            continue
        if "WITHOUT ROWID" in sql.upper():  # no rowid to resume from: copied in one step
            conn.execute("BEGIN")
            conn.execute(f"DELETE FROM pcp_new.{_q(name)}")
            conn.execute(f"INSERT INTO pcp_new.{_q(name)} ({listed}) SELECT {listed} FROM main.{_q(name)}")
            conn.execute("INSERT OR REPLACE INTO pcp_new.pcp_conversion VALUES (?, 'done')", (f"table:{name}",))
            conn.execute("COMMIT")
            stops.reached("convert-step")
            continue
        last = int(mark[0]) if mark is not None else None
        while True:
            conn.execute("BEGIN")
            after = "" if last is None else f"WHERE rowid > {int(last)} "
            top = conn.execute(f"SELECT max(rowid) FROM (SELECT rowid FROM main.{_q(name)} {after}"
                               f"ORDER BY rowid LIMIT {CHUNK_ROWS})").fetchone()[0]
            if top is None:
                conn.execute("INSERT OR REPLACE INTO pcp_new.pcp_conversion VALUES (?, 'done')", (f"table:{name}",))
                conn.execute("COMMIT")
                break
            low = "" if last is None else f"rowid > {int(last)} AND "
            conn.execute(f"INSERT INTO pcp_new.{_q(name)} (rowid, {listed}) SELECT rowid, {listed} "
                         f"FROM main.{_q(name)} WHERE {low}rowid <= {int(top)}")
            conn.execute("INSERT OR REPLACE INTO pcp_new.pcp_conversion VALUES (?, ?)", (f"table:{name}", str(top)))
            conn.execute("COMMIT")
            last = top
            stops.reached("convert-step")
    progress("creating the indexes")
    conn.execute("BEGIN")
    if conn.execute("SELECT 1 FROM main.sqlite_master WHERE name = 'sqlite_sequence'").fetchone():
        conn.execute("DELETE FROM pcp_new.sqlite_sequence")
        conn.execute("INSERT INTO pcp_new.sqlite_sequence SELECT * FROM main.sqlite_sequence")
    for kind, _name, sql, _root in schema:
        if kind in ("index", "trigger", "view"):
            conn.execute(_in_new(sql))
    conn.execute("PRAGMA pcp_new.writable_schema = ON")  # virtual tables: their definitions, as VACUUM copies them
    conn.execute("INSERT INTO pcp_new.sqlite_master (type, name, tbl_name, rootpage, sql) SELECT type, name, "
                 "tbl_name, rootpage, sql FROM main.sqlite_master WHERE type = 'table' AND rootpage = 0 "
                 "AND sql LIKE 'CREATE VIRTUAL TABLE%'")
    conn.execute("PRAGMA pcp_new.writable_schema = OFF")
    conn.execute("DROP TABLE pcp_new.pcp_conversion")
    version = conn.execute("PRAGMA main.user_version").fetchone()[0]
    conn.execute(f"PRAGMA pcp_new.user_version = {int(version)}")
    conn.execute("COMMIT")


def _staged_key(db_path: Path, staged: Path, passphrase: str | None) -> bytes | None:
    """The key an interrupted conversion staged (so its copy can be resumed), when it unwraps the same way
    as asked now (the keychain, or this passphrase); otherwise None and the staged file is destroyed."""
    if not staged.exists():
        return None
    try:
        doc = crypt.read_key_doc(staged)
        if (doc["wrap"] == "scrypt") == (passphrase is not None):
            return crypt.unwrap(doc, db_path, passphrase)
    except Invalid:
        pass
    _retire_key(db_path, staged)
    return None


def _key_document(db_key: bytes, passphrase: str | None, scrypt: dict[str, int] | None) -> bytes:
    return json.dumps(crypt.wrap(db_key, passphrase=passphrase, scrypt=scrypt), indent=1).encode() + b"\n"


def _retire_key(db_path: Path, doc_path: Path) -> None:
    """Overwrite and remove an old key file, and delete its keychain entry."""
    try:
        doc = crypt.read_key_doc(doc_path)
    except Invalid:
        doc = None
    if doc is not None and doc["wrap"] == "keyring":
        backend = crypt.keyring_backend()
        if backend is not None:
            try:
                backend.delete_password(crypt.KEYRING_SERVICE, doc["store_id"])
            except Exception:  # noqa: BLE001 - already gone
                pass
    destroy(doc_path)


def encrypt(db_path: Path, *, passphrase: str | None = None, scrypt: dict[str, int] | None = None,
            progress: Progress = _quiet) -> dict[str, Any]:
    """Encrypt a plain store under a new random key (wrapped by the keychain, or by `passphrase`)."""
    if crypt.is_encrypted(db_path):
        raise Invalid(f"The store {db_path} is already encrypted; use --rotate for a new key.")
    key = _staged_key(db_path, crypt.new_key_file(db_path), passphrase)
    if key is None:
        key = os.urandom(crypt.KEY_BYTES)
        _write_private(crypt.new_key_file(db_path), _key_document(key, passphrase, scrypt))
    try:
        counts = _convert(db_path, None, key, progress)
    except Exception:  # an interruption (Ctrl-C, a kill) keeps the staged key: the next run resumes the copy
        _retire_key(db_path, crypt.new_key_file(db_path))
        raise
    _reseal_handoffs(db_path, None, key)
    os.replace(crypt.new_key_file(db_path), crypt.key_file(db_path))
    _fsync_dir(db_path.parent)
    crypt.forget(db_path)
    return {"encrypted": True, "rows": sum(counts.values()), **status(db_path)}


def rotate(db_path: Path, *, passphrase: str | None = None, scrypt: dict[str, int] | None = None,
           progress: Progress = _quiet) -> dict[str, Any]:
    """Re-encrypt under a new random key; pcp's copies of the old key (file, keychain entry) are destroyed."""
    if not crypt.is_encrypted(db_path):
        raise Invalid(f"The store {db_path} is not encrypted; run pcp encrypt first.")
    old_key = crypt.unlock(db_path)
    staged = _side(db_path, crypt.ROTATING_SUFFIX)
    old_docs = [p for p in crypt.key_files(db_path) if p.exists() and p != staged]
    key = _staged_key(db_path, staged, passphrase)
    if key is None:
        key = os.urandom(crypt.KEY_BYTES)
        _write_private(staged, _key_document(key, passphrase, scrypt))
    try:
        counts = _convert(db_path, old_key, key, progress)
    except Exception:  # as in encrypt: an interruption keeps the staged key for the resumed copy
        _retire_key(db_path, staged)
        raise
    _reseal_handoffs(db_path, old_key, key)
    for doc in old_docs:
        _retire_key(db_path, doc)
    os.replace(staged, crypt.key_file(db_path))
    _fsync_dir(db_path.parent)
    crypt.forget(db_path)
    return {"rotated": True, "rows": sum(counts.values()), **status(db_path)}


def decrypt(db_path: Path, *, progress: Progress = _quiet) -> dict[str, Any]:
    """Turn an encrypted store back into plain SQLite; its key file and keychain entry are destroyed."""
    if not crypt.is_encrypted(db_path):
        raise Invalid(f"The store {db_path} is not encrypted; nothing was changed.")
    key = crypt.unlock(db_path)
    counts = _convert(db_path, key, None, progress)
    _reseal_handoffs(db_path, key, None)
    for doc in crypt.key_files(db_path):
        if doc.exists():
            _retire_key(db_path, doc)
    crypt.forget(db_path)
    return {"encrypted": False, "rows": sum(counts.values())}
