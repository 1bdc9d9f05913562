"""`pcp encrypt` / `pcp decrypt` and the passphrase prompt (the conversions live in store/encryption.py)."""

from __future__ import annotations

import getpass
import os
import sys
from pathlib import Path
from typing import Any

PROG = "pcp"


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


def run(command: str, db: str | None, *, passphrase: bool = False, rotate: bool = False,
        quiet: bool = False) -> dict[str, Any]:
    """Run `pcp encrypt` (`rotate`: a new key) or `pcp decrypt` on the store `db` (--db, $PCP_DB, the default)."""
    from store import Invalid, crypt, encryption, paths

    path = paths.chosen_path(db)
    crypt.driver()  # one line naming the extra to install, before anything else
    paths.require_store(path, create=False)  # no store there, or a file that is none: refused untouched

    def progress(text: str) -> None:
        if not quiet:
            sys.stderr.write(f"{PROG}: {text}\n")

    install_prompt()
    if command == "decrypt":
        return encryption.decrypt(path, progress=progress)
    given = _new_passphrase() if passphrase else None
    if given is None and crypt.keyring_backend() is None:
        raise Invalid("No OS keychain is available here; use pcp encrypt --passphrase.")
    if rotate:
        return encryption.rotate(path, passphrase=given, progress=progress)
    return encryption.encrypt(path, passphrase=given, progress=progress)


def warning_lines(result: dict[str, Any]) -> list[str]:
    if result.get("encrypted") is False:
        return ["The store is plain SQLite again; its key file and keychain entry are destroyed."]
    return ["The plain file was overwritten before removal; an SSD or a filesystem snapshot may still keep its "
            "old blocks, and backups made earlier stay plain (or open with the old key)."]


def main_command(command: str, db: str | None, *, passphrase: bool = False, rotate: bool = False,
                 quiet: bool = False) -> dict[str, Any]:
    result = run(command, db, passphrase=passphrase, rotate=rotate, quiet=quiet)
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
