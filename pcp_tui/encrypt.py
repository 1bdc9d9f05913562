"""`pcp encrypt` / `pcp decrypt` and the passphrase prompt (the conversions live in store/encryption.py)."""

from __future__ import annotations

import argparse
import getpass
import os
import sys
from pathlib import Path
from typing import Any

PROG = "pcp"


def add_commands(sub: Any, json_flag: Any) -> None:
    p = sub.add_parser("encrypt", parents=[json_flag],
                       help="encrypt the store at rest (SQLCipher; needs pip install 'pcp[encrypt]')",
                       description="Copy the store into an encrypted file under a new random key, verify it, swap "
                                   "it in and overwrite the plain file (an SSD or a snapshot may still keep its old "
                                   "blocks). The key is wrapped by the OS keychain, or with --passphrase by a "
                                   "passphrase (asked at the terminal, or read from $PCP_PASSPHRASE_FILE).")
    p.add_argument("--passphrase", action="store_true", help="wrap the key with a passphrase, not the OS keychain")
    p.add_argument("--rotate", action="store_true",
                   help="re-encrypt an encrypted store under a new key and destroy pcp's copies of the old one")
    p.set_defaults(parser=p)
    p = sub.add_parser("decrypt", parents=[json_flag], help="turn an encrypted store back into plain SQLite",
                       description="Copy the store into a plain SQLite file, verify it, swap it in, and destroy the "
                                   "key file and its keychain entry.")
    p.set_defaults(parser=p)


def _ask(db_path: Path) -> str | None:
    """The store's passphrase from the terminal (never echoed), None when there is no terminal."""
    if not sys.stdin.isatty():
        return None
    try:
        return getpass.getpass(f"Passphrase for {db_path}: ")
    except (EOFError, KeyboardInterrupt):
        return None


def install_prompt() -> None:
    """Let an encrypted store opened from here ask its passphrase at the terminal."""
    from store import crypt

    crypt.set_prompt(_ask)


def _new_passphrase() -> str:
    from store import Invalid, crypt

    given = crypt.passphrase_from_file()
    if given is not None:
        return given
    if not sys.stdin.isatty():
        raise Invalid("A new passphrase is needed: set PCP_PASSPHRASE_FILE or run pcp encrypt at a terminal.")
    first = getpass.getpass("New passphrase: ")
    if len(first) < 8:
        raise Invalid("The passphrase is shorter than 8 characters; nothing was changed.")
    if getpass.getpass("Again: ") != first:
        raise Invalid("The two passphrases differ; nothing was changed.")
    return first


def run(args: argparse.Namespace, db: str | None) -> dict[str, Any]:
    """Run `pcp encrypt` or `pcp decrypt` on the store path `db` (already chosen by the caller)."""
    from store import Invalid, crypt, encryption
    from store.core import default_path

    path = Path(db).expanduser() if db is not None else default_path()
    crypt.driver()  # one line naming the extra to install, before anything else
    if not path.is_file():
        raise Invalid(f"No store at {path}; nothing was changed.")

    def progress(text: str) -> None:
        if not args.json:
            sys.stderr.write(f"{PROG}: {text}\n")

    install_prompt()
    if args.command == "decrypt":
        return encryption.decrypt(path, progress=progress)
    passphrase = _new_passphrase() if args.passphrase else None
    if passphrase is None and crypt.keyring_backend() is None:
        raise Invalid("No OS keychain is available here; use pcp encrypt --passphrase.")
    if args.rotate:
        return encryption.rotate(path, passphrase=passphrase, progress=progress)
    return encryption.encrypt(path, passphrase=passphrase, progress=progress)


def warning_lines(result: dict[str, Any]) -> list[str]:
    if result.get("encrypted") is False:
        return ["The store is plain SQLite again; its key file and keychain entry are destroyed."]
    return ["The plain file was overwritten before removal; an SSD or a filesystem snapshot may still keep its "
            "old blocks, and backups made earlier stay plain (or open with the old key)."]


def main_command(args: argparse.Namespace, json_mode: bool, db: str | None) -> dict[str, Any]:
    result = run(args, db)
    result["notes"] = warning_lines(result)
    return result


def render(result: dict[str, Any]) -> None:
    if result.get("encrypted"):
        what = "rotated to a new key" if result.get("rotated") else "encrypted"
        print(f"Store {what} ({result['rows']:,} rows copied and verified); key file {result['key_file']}, "
              f"wrapping key: {result['wrapping_key']}.")
    else:
        print(f"Store decrypted ({result['rows']:,} rows copied and verified).")
    for line in result.get("notes", []):
        print(line)



def tmpfs_folder() -> Path | None:
    """A memory-backed folder only we can enter (a tmpfs: /dev/shm or $XDG_RUNTIME_DIR), or None."""
    try:
        with open("/proc/mounts", encoding="utf-8") as fh:
            mounts = {line.split()[1]: line.split()[2] for line in fh if len(line.split()) > 2}
    except OSError:
        return None
    for candidate in (os.environ.get("XDG_RUNTIME_DIR"), "/dev/shm"):
        if candidate and mounts.get(candidate) == "tmpfs" and os.access(candidate, os.W_OK | os.X_OK):
            return Path(candidate)
    return None


def editor_draft_folder(store_path: Path | None) -> tuple[Path | None, str | None]:
    """Where the `E` editor's draft of this store may be written: (folder or None for the default temp
    folder, refusal). An encrypted store's draft goes only to a tmpfs, never to a disk in plain."""
    from store import crypt

    if store_path is None or not crypt.is_encrypted(Path(store_path)):
        return None, None
    folder = tmpfs_folder()
    if folder is None:
        return None, ("This store is encrypted and there is no memory-backed folder (tmpfs) for the draft; "
                      "edit in the box instead.")
    return folder, None


def unlock_early(path: Path) -> None:
    """Unwrap an encrypted store's key before a server starts (pcp mcp): what is missing is said in one line."""
    from store import crypt

    if crypt.is_encrypted(path):
        crypt.unlock(path)


def export_passphrase(store_path: Path, wanted: bool) -> str | None:
    """The passphrase for `pcp export --encrypt`; without it, an encrypted store's export is plain: say so."""
    from store import crypt

    if wanted:
        return _new_passphrase()
    if crypt.is_encrypted(Path(store_path)):
        sys.stderr.write(f"{PROG}: warning: this store is encrypted but the export is plain text; "
                         "use --encrypt to seal it with a passphrase.\n")
    return None


def serve_refusal(path: Path) -> str | None:
    """Why `pcp serve` cannot serve this store, or None: each browser tab runs the app in a child that opens
    the store itself, so an encrypted store's key must come from the keychain or $PCP_PASSPHRASE_FILE
    (never typed at this terminal, and never passed on a command line)."""
    from store import Invalid, crypt

    if not crypt.is_encrypted(path):
        return None
    crypt.set_prompt(None)
    try:
        crypt.unlock(path)
    except Invalid as exc:
        return (f"{exc} pcp serve opens the store in a child per browser tab: keep its key in the OS keychain "
                "or set PCP_PASSPHRASE_FILE.")
    finally:
        crypt.forget(path)
    return None


def unlock_before_app(path: Path) -> None:
    """Unwrap an encrypted store's key at the terminal before the app takes it over; nothing prompts after."""
    from store import crypt

    install_prompt()
    try:
        unlock_early(path)
    finally:
        crypt.set_prompt(None)
