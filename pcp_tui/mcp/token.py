"""The bearer token of `pcp mcp --http`: kept in a file beside the store, readable by the user only, so a
client's saved configuration survives restarts (`--new-token` replaces it)."""

from __future__ import annotations

import os
import secrets
from pathlib import Path


def token_path(db_path: Path) -> Path:
    return db_path.with_name(db_path.name + ".mcp-token")


def token(db_path: Path, new: bool = False) -> str:
    """The store's MCP token, created (or, with `new`, replaced) as a 0600 file."""
    path = token_path(db_path)
    if not new:
        try:
            existing = path.read_text(encoding="ascii").strip()
        except FileNotFoundError:
            existing = ""
        if existing:
            if path.stat().st_mode & 0o077:
                os.chmod(path, 0o600)
            return existing
    value = secrets.token_urlsafe(32)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="ascii") as handle:
            handle.write(value + "\n")
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    return value
