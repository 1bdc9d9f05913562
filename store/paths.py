"""Which file is the store, and whether a path may become one (shared/spec/cli.md, global options).

One rule for the `pcp` command, the MCP server, the app and the capture hook: `--db`, else $PCP_DB, else the
default path; the demo store is its own (`--db`, else $PCP_DEMO_DB, else demo.db beside the default). A file
that exists but is not a pcp store is refused before anything writes to it or changes its mode; a missing path
(or an empty file) becomes a store only for a caller that writes pages, scopes or imports (`create=True`).
Nothing here writes: the pcp check opens the file read-only.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

from .errors import Invalid, NotFound

SQLITE_HEADER = b"SQLite format 3\x00"
# The commands that may create a missing store (cli.md): they write pages, scopes or imports.
CREATING_COMMANDS = frozenset({"write", "revise", "ingest", "import", "scope create", "sync"})


def data_dir() -> Path:
    """<user data dir>/pcp: where the default store and the demo store live."""
    import platformdirs

    return Path(platformdirs.user_data_dir("pcp", appauthor=False))


def default_path() -> Path:
    """<user data dir>/pcp/context.db (what is used when neither --db nor $PCP_DB is given)."""
    return data_dir() / "context.db"


def named_path(db: str | os.PathLike[str] | None = None) -> Path | None:
    """The store `db` (--db), else $PCP_DB, names; None when neither does (or names it empty), so the caller's
    default applies (the app opens the default store; `pcp capture install` writes no --db into the hook)."""
    chosen = db if db is not None else (os.environ.get("PCP_DB") or None)
    return Path(chosen).expanduser() if chosen else None


def demo_path(db: str | os.PathLike[str] | None = None) -> Path:
    """The demo store: `db` (--db) if given, else $PCP_DEMO_DB, else <user data dir>/pcp/demo.db ($PCP_DB is
    never used: the demo must not fill or change your own store)."""
    if db:
        return Path(db).expanduser()
    env = os.environ.get("PCP_DEMO_DB")
    if env:
        return Path(env).expanduser()
    return data_dir() / "demo.db"


def chosen_path(db: str | os.PathLike[str] | None = None) -> Path:
    """The store file: `db` (--db), else $PCP_DB, else the default path."""
    chosen = db if db is not None else (os.environ.get("PCP_DB") or None)
    if chosen is None:
        return default_path()
    if not str(chosen).strip():
        raise Invalid("--db must not be empty; give the store file's path, or leave --db out for the default.")
    return Path(chosen).expanduser()


def store_state(path: Path) -> Literal["missing", "store"]:
    """"missing" (no file, or an empty one) or "store"; anything else is refused (Invalid), and left untouched."""
    try:
        if not path.exists():
            return "missing"
        if path.is_dir():
            raise Invalid(f"{path} is a folder, not a pcp store; give the store file's path with --db.")
        size = path.stat().st_size
        if size == 0:
            return "missing"
        with open(path, "rb") as fh:
            header = fh.read(100)
    except OSError as exc:
        raise Invalid(f"Cannot read {path} ({exc.strerror or exc}); check the path given with --db.") from None
    if header[:len(SQLITE_HEADER)] != SQLITE_HEADER:
        from . import crypt

        if crypt.is_encrypted(path):  # SQLCipher: no header, its key beside it (the key is checked when opened)
            return "store"
        raise Invalid(f"{path} is not a pcp store (not an SQLite database) and was left as it is; "
                      "give your store's path with --db.")
    if not _is_pcp_store(path, wal=len(header) > 18 and header[18] == 2):
        raise Invalid(f"{path} is an SQLite database of another program, not a pcp store, and was left as it is; "
                      "give your store's path with --db.")
    return "store"


def _driver() -> Any:
    """The SQLite module the store runs on, chosen as Peewee chooses it (pysqlite3 when it is newer), imported
    here rather than through Peewee: `pcp mcp` checks its store before it answers its client, and Peewee is not
    needed for that."""
    import sqlite3

    try:
        from pysqlite3 import dbapi2 as pysqlite3  # type: ignore[import-not-found, import-untyped, unused-ignore]
    except ImportError:
        return sqlite3
    return pysqlite3 if pysqlite3.sqlite_version_info >= sqlite3.sqlite_version_info else sqlite3


def _is_pcp_store(path: Path, wal: bool) -> bool:
    """Whether the SQLite file holds a pcp store's `meta` table, read through a read-only connection.

    A WAL database whose -wal and -shm files are not there is read as immutable: a read-only connection would
    otherwise create them beside another program's file (and, with no -wal file, the main file holds it all)."""
    sides = all(Path(f"{path}{suffix}").exists() for suffix in ("-wal", "-shm"))
    uri = "file:" + _uri_path(path) + ("?immutable=1" if wal and not sides else "?mode=ro")
    sqlite3 = _driver()
    try:
        conn = sqlite3.connect(uri, uri=True, timeout=60)
    except sqlite3.Error:
        return False
    try:
        found = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'").fetchone()
        return bool(found) and conn.execute(
            "SELECT 1 FROM meta WHERE key IN ('schema_version', 'owner_id') LIMIT 1").fetchone() is not None
    except sqlite3.Error:  # damaged, encrypted, or not what its header says
        return False
    finally:
        conn.close()


def _uri_path(path: Path) -> str:
    from urllib.parse import quote

    return quote(str(path.absolute()), safe="/")


def no_store(path: Path) -> NotFound:
    """The refusal of a command that does not create a store, at a path where there is none."""
    default = default_path()
    where = "the default path" if path == default else f"not the default {default}"
    return NotFound(f"No store at {path} ({where}); check --db and $PCP_DB, or create one there with pcp write "
                    "or pcp import.")


def require_store(path: Path, create: bool) -> bool:
    """Check `path` before opening it: True when there is no store yet (and `create` allows one), False when it
    is a store; a missing store without `create` is NotFound, a file that is no pcp store Invalid."""
    if store_state(path) == "store":
        return False
    if not create:
        raise no_store(path)
    return True
