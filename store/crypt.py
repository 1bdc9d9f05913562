"""Encryption at rest: SQLCipher 4 databases under a random key that a keychain key or a passphrase wraps.

The database key is 32 random bytes, never derived from anything a person types. It reaches SQLCipher as a
raw key (`x'..'`), so SQLCipher's own PBKDF2 never runs. pcp keeps it only wrapped (ChaCha20-Poly1305) in
`<store>.key` beside the store; the wrapping key is either a random key in the OS keychain (`keyring`) or
scrypt of a passphrase (n=2^17, r=8, p=1; the parameters and salt are stored with the wrapped key).
WAL pages are encrypted by SQLCipher like the database's; temporary tables live in memory (temp_store).

The key file (JSON, one object):
  format "pcp-wrapped-key/1", store_id (hex: names the keychain entry), wrap "keyring" | "scrypt",
  scrypt {n, r, p, salt} (with "scrypt"), nonce and wrapped (base64): the sealed database key, with
  "pcp-wrapped-key/1|<store_id>|<wrap>" as associated data.
"""

from __future__ import annotations

import base64
import hmac
import json
import os
import stat
import threading
from pathlib import Path
from typing import Any, Callable

from .errors import Invalid

SQLITE_HEADER = b"SQLite format 3\x00"
KEY_FORMAT = "pcp-wrapped-key/1"
KEY_SUFFIX = ".key"
NEW_KEY_SUFFIX = ".key.new"  # written before a swap; renamed over .key after it (read first if present)
ROTATING_SUFFIX = ".key.rotating"  # the new key during --rotate, until the old one is destroyed
KEYRING_SERVICE = "pcp"
SCRYPT = {"n": 1 << 17, "r": 8, "p": 1}
MIN_SCRYPT_N = 1 << 17
KEY_BYTES = 32
MAX_KEY_FILE = 4096
INSTALL_HINT = "pip install 'pcp[encrypt]'"

# SQLCipher 4's format with HMAC-SHA256 in place of its default HMAC-SHA512: every page read is checked, and
# SHA-256 checks a page in less than half the time on x86-64 (SHA extensions; bench/README.md "Encryption at
# rest"). A file pcp writes is read with exactly these settings (also recorded in the key file).
CIPHER: dict[str, Any] = {"page_size": 32768, "hmac": "HMAC_SHA256"}
_quiet = False
# Keys this process already unwrapped (or was handed over a pipe by its parent), by resolved store path.
_keys: dict[str, bytes] = {}
_lock = threading.Lock()
# Asks the person for the store's passphrase (set by the `pcp` command at a terminal); the store never prompts.
_prompt: Callable[[Path], str | None] | None = None


def driver() -> Any:
    """The sqlcipher3 module (SQLCipher 4 with its own current SQLite), or a one-line refusal."""
    global _quiet
    try:
        import sqlcipher3  # type: ignore[import-not-found, import-untyped, unused-ignore]
    except ImportError:
        raise Invalid(f"Encrypted stores need SQLCipher: {INSTALL_HINT}.") from None
    if not _quiet:
        setup = sqlcipher3.connect(":memory:")
        # SQLCipher logs a failed page check on stderr (three lines); pcp says it in one line of its own.
        setup.execute("PRAGMA cipher_log_level = NONE").fetchall()
        # The process's defaults: an ATTACH ... KEY (a conversion's new file) reads them, not the connection's.
        setup.execute(f"PRAGMA cipher_default_page_size = {CIPHER['page_size']}").fetchall()
        setup.execute(f"PRAGMA cipher_default_hmac_algorithm = {CIPHER['hmac']}").fetchall()
        # Off (SQLCipher 4.5's default, stated for builds that differ): on, every allocation is locked and
        # wiped, which slows every query (SQLCipher still wipes its own key material).
        setup.execute("PRAGMA cipher_memory_security = OFF").fetchall()
        setup.close()
        _quiet = True
    return sqlcipher3


def available() -> bool:
    try:
        driver()
    except Invalid:
        return False
    return True


def key_file(db_path: Path) -> Path:
    return db_path.with_name(db_path.name + KEY_SUFFIX)


def new_key_file(db_path: Path) -> Path:
    return db_path.with_name(db_path.name + NEW_KEY_SUFFIX)


def key_files(db_path: Path) -> list[Path]:
    """Where a store's wrapped key may be, in the order tried: a conversion's staged key first (a crash
    between the swap and the final rename leaves the right one there), then the key file."""
    return [new_key_file(db_path), db_path.with_name(db_path.name + ROTATING_SUFFIX), key_file(db_path)]


def is_encrypted(db_path: Path) -> bool:
    """True when the file exists, is not empty and does not start with SQLite's header (SQLCipher's
    first 16 bytes are its random salt) while pcp keeps a wrapped key for it."""
    try:
        with open(db_path, "rb") as fh:
            head = fh.read(len(SQLITE_HEADER))
    except OSError:
        return False
    if not head or head == SQLITE_HEADER:
        return False
    return any(p.exists() for p in key_files(db_path))


def set_prompt(prompt: Callable[[Path], str | None] | None) -> None:
    global _prompt
    _prompt = prompt


def remember(db_path: Path, key: bytes) -> None:
    """Use `key` for this store in this process (a child handed the key by its parent)."""
    with _lock:
        _keys[str(Path(db_path).resolve())] = bytes(key)


def forget(db_path: Path | None = None) -> None:
    with _lock:
        if db_path is None:
            _keys.clear()
        else:
            _keys.pop(str(Path(db_path).resolve()), None)


def cached_key(db_path: Path) -> bytes | None:
    with _lock:
        return _keys.get(str(Path(db_path).resolve()))


# --- wrapping ---------------------------------------------------------------------------------------------


def _aad(store_id: str, wrap: str) -> bytes:
    return f"{KEY_FORMAT}|{store_id}|{wrap}".encode()


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def _unb64(text: object, what: str) -> bytes:
    if not isinstance(text, str):
        raise Invalid(f"The store's key file has no valid {what}; restore it from a backup.")
    try:
        return base64.b64decode(text, validate=True)
    except ValueError:
        raise Invalid(f"The store's key file has no valid {what}; restore it from a backup.") from None


def scrypt_key(passphrase: str, salt: bytes, n: int, r: int, p: int) -> bytes:
    from cryptography.hazmat.primitives.kdf.scrypt import Scrypt

    return Scrypt(salt=salt, length=KEY_BYTES, n=n, r=r, p=p).derive(passphrase.encode("utf-8"))


def keyring_backend() -> Any | None:
    """The OS keychain through `keyring`, or None when it is not installed or has no usable backend."""
    try:
        import keyring  # type: ignore[import-not-found, import-untyped, unused-ignore]
        from keyring.backends import fail  # type: ignore[import-not-found, import-untyped, unused-ignore]
    except ImportError:
        return None
    try:
        backend = keyring.get_keyring()
    except Exception:  # noqa: BLE001 - a broken keychain is one that is not there
        return None
    if isinstance(backend, fail.Keyring) or getattr(backend, "priority", 0) <= 0:
        return None
    return backend


def keyring_name(backend: Any) -> str:
    return f"{type(backend).__module__}.{type(backend).__name__}"


def wrap(db_key: bytes, *, passphrase: str | None, store_id: str | None = None,
         scrypt: dict[str, int] | None = None) -> dict[str, Any]:
    """The key file's document for `db_key`: wrapped by a new keychain entry, or by scrypt(passphrase)."""
    from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305

    store_id = store_id or os.urandom(16).hex()
    nonce = os.urandom(12)
    doc: dict[str, Any] = {"format": KEY_FORMAT, "store_id": store_id, "cipher": dict(CIPHER)}
    if passphrase is None:
        backend = keyring_backend()
        if backend is None:
            raise Invalid("No OS keychain is available here; give a passphrase (--passphrase or "
                          "PCP_PASSPHRASE_FILE).")
        wrapping = os.urandom(KEY_BYTES)
        backend.set_password(KEYRING_SERVICE, store_id, _b64(wrapping))
        doc["wrap"] = "keyring"
        doc["keyring"] = {"service": KEYRING_SERVICE, "username": store_id, "backend": keyring_name(backend)}
    else:
        params = dict(scrypt or SCRYPT)
        salt = os.urandom(16)
        wrapping = scrypt_key(passphrase, salt, params["n"], params["r"], params["p"])
        doc["wrap"] = "scrypt"
        doc["scrypt"] = {**params, "salt": _b64(salt)}
    doc["nonce"] = _b64(nonce)
    doc["wrapped"] = _b64(ChaCha20Poly1305(wrapping).encrypt(nonce, db_key, _aad(store_id, doc["wrap"])))
    return doc


def read_key_doc(path: Path) -> dict[str, Any]:
    try:
        with open(path, "rb") as fh:
            raw = fh.read(MAX_KEY_FILE + 1)
    except OSError as exc:
        raise Invalid(f"The store's key file {path} cannot be read ({exc.strerror or exc}).") from None
    try:
        doc = json.loads(raw) if len(raw) <= MAX_KEY_FILE else None
    except ValueError:
        doc = None
    if not isinstance(doc, dict) or doc.get("format") != KEY_FORMAT or doc.get("wrap") not in ("keyring", "scrypt") \
            or not isinstance(doc.get("store_id"), str):
        raise Invalid(f"{path} is not a pcp key file ({KEY_FORMAT}); restore it from a backup.")
    if doc.get("cipher", CIPHER) != CIPHER:  # a store written with other SQLCipher settings: say so, not "wrong key"
        raise Invalid(f"The store's key file {path.name} names SQLCipher settings this pcp does not use "
                      f"({doc.get('cipher')}); upgrade pcp.")
    return doc


def passphrase_from_file() -> str | None:
    """$PCP_PASSPHRASE_FILE's first line, refused when anyone but its owner may read it."""
    name = os.environ.get("PCP_PASSPHRASE_FILE")
    if not name:
        return None
    path = Path(name).expanduser()
    try:
        info = path.stat()
    except OSError as exc:
        raise Invalid(f"PCP_PASSPHRASE_FILE {path} cannot be read ({exc.strerror or exc}).") from None
    if info.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise Invalid(f"PCP_PASSPHRASE_FILE {path} is readable by others; chmod 600 it first.")
    with open(path, "rb") as fh:
        data = fh.read(4096)
    try:
        text = data.decode("utf-8").splitlines()[0] if data.strip() else ""
    except UnicodeDecodeError:
        raise Invalid(f"PCP_PASSPHRASE_FILE {path} is not UTF-8 text.") from None
    if not text:
        raise Invalid(f"PCP_PASSPHRASE_FILE {path} is empty.")
    return text


def ask_passphrase(path: Path) -> str | None:
    """A passphrase for `path` (a sealed export): $PCP_PASSPHRASE_FILE, else the terminal's prompt, else None."""
    given = passphrase_from_file()
    if given is None and _prompt is not None:
        given = _prompt(path)
    return given


def unwrap(doc: dict[str, Any], db_path: Path, passphrase: str | None = None) -> bytes:
    """The database key from a key file's document; one-line refusals when the wrapping key is missing or wrong."""
    from cryptography.exceptions import InvalidTag
    from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305

    store_id = doc["store_id"]
    if doc["wrap"] == "keyring":
        backend = keyring_backend()
        if backend is None:
            raise Invalid(f"The store {db_path} is encrypted with a key in the OS keychain, and no keychain is "
                          f"available here (install keyring and unlock the keychain).")
        secret = backend.get_password(KEYRING_SERVICE, store_id)
        if not secret:
            raise Invalid(f"The OS keychain has no key for the store {db_path} (service {KEYRING_SERVICE}, "
                          f"entry {store_id}); it cannot be opened here.")
        wrapping = _unb64(secret, "keychain key")
        what = "The keychain's key"
    else:
        params = doc.get("scrypt")
        if not isinstance(params, dict) or not all(isinstance(params.get(k), int) for k in ("n", "r", "p")):
            raise Invalid("The store's key file has no valid scrypt parameters; restore it from a backup.")
        n, r, p = params["n"], params["r"], params["p"]
        if n < MIN_SCRYPT_N or n > (1 << 24) or n & (n - 1) or not 1 <= r <= 64 or not 1 <= p <= 16:
            raise Invalid("The store's key file has out-of-range scrypt parameters; restore it from a backup.")
        if passphrase is None:
            passphrase = passphrase_from_file()
        if passphrase is None and _prompt is not None:
            passphrase = _prompt(db_path)
        if passphrase is None:
            raise Invalid(f"The store {db_path} is encrypted with a passphrase: set PCP_PASSPHRASE_FILE "
                          "or run pcp at a terminal.")
        wrapping = scrypt_key(passphrase, _unb64(params.get("salt"), "salt"), n, r, p)
        what = "The passphrase"
    try:
        key = ChaCha20Poly1305(wrapping).decrypt(_unb64(doc.get("nonce"), "nonce"), _unb64(doc.get("wrapped"), "key"),
                                                 _aad(store_id, doc["wrap"]))
    except (InvalidTag, ValueError):
        raise Invalid(f"{what} does not open the store {db_path}; nothing was changed.") from None
    if len(key) != KEY_BYTES:
        raise Invalid("The store's key file holds a key of the wrong size; restore it from a backup.")
    return key


def unlock(db_path: Path) -> bytes:
    """The database key of an encrypted store (remembered for this process once found)."""
    found = cached_key(db_path)
    if found is not None:
        return found
    errors: list[Invalid] = []
    for candidate in key_files(db_path):
        if not candidate.exists():
            continue
        try:
            key = unwrap(read_key_doc(candidate), db_path)
        except Invalid as exc:
            errors.append(exc)
            continue
        if opens(db_path, key):
            remember(db_path, key)
            return key
        errors.append(Invalid(f"The key in {candidate.name} does not open the store {db_path}; nothing was changed."))
    if errors:
        raise errors[-1] if len(errors) == 1 or "does not open" not in str(errors[0]) else errors[0]
    raise Invalid(f"The store {db_path} is encrypted and its key file {key_file(db_path).name} is missing.")


def key_pragma(key: bytes) -> str:
    """SQLCipher's raw-key form: the key is used as is, with no PBKDF2."""
    return f"PRAGMA key = \"x'{key.hex()}'\""


def cipher_pragmas(cipher: dict[str, Any] | None = None) -> list[str]:
    """The format settings an encrypted file is read with (after the key, before any read): pcp's own unless
    another is given (bench/store_bench.py compares them)."""
    chosen = cipher or CIPHER
    return [f"PRAGMA cipher_page_size = {int(chosen['page_size'])}",
            f"PRAGMA cipher_hmac_algorithm = {chosen['hmac']}"]


def connect_raw(path: Path | str, key: bytes | None, cipher: dict[str, Any] | None = None, **params: Any) -> Any:
    """A sqlcipher3 connection with the key and the cipher settings applied before anything else (never
    through Peewee's query log)."""
    conn = driver().connect(str(path), isolation_level=None, **params)
    if key is not None:
        conn.execute(key_pragma(key))
        for pragma in cipher_pragmas(cipher):
            conn.execute(pragma)
    return conn


def opens(path: Path, key: bytes) -> bool:
    """True when `key` reads the database at `path` (SQLCipher checks the first page's MAC)."""
    sqlcipher = driver()
    conn = connect_raw(path, key)
    try:
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        return True
    except sqlcipher.DatabaseError:
        return False
    finally:
        conn.close()


def sqlite_version() -> str:
    return str(driver().sqlite_version)


def same_key(a: bytes, b: bytes) -> bool:
    return hmac.compare_digest(a, b)
