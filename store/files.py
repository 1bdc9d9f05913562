"""Files pcp writes beside the store: paths that stay inside their folder, modes only the user can read."""

from __future__ import annotations

import os
from pathlib import Path

from .errors import Invalid


def inside(base: Path, name: str) -> Path:
    """`base / name`, refused unless it is a plain file name that stays inside `base`."""
    if not isinstance(name, str) or not name or "/" in name or "\\" in name or "\x00" in name or name in (".", ".."):
        raise Invalid(f"{name[:40]!r} is not a safe file name; nothing was written.")
    target = (base / name).resolve()
    if target.parent != base.resolve():
        raise Invalid(f"{name[:40]!r} would be written outside {base}; nothing was written.")
    return target


SIDE_SUFFIXES = ("-wal", "-shm", "-journal")


def store_files(db_path: Path) -> list[Path]:
    """The store file and the side files SQLite and pcp keep beside it."""
    return [db_path] + [db_path.with_name(db_path.name + s) for s in SIDE_SUFFIXES]


def refuse_store_target(out: Path, db_path: Path) -> None:
    """Refuse an output path that is the store or one of its side files (it would replace the live data)."""
    target = out.expanduser().resolve()
    for own in store_files(Path(db_path).expanduser().resolve()):
        same = target == own
        if not same and target.exists() and own.exists():
            try:
                same = target.samefile(own)
            except OSError:
                same = False
        if same:
            raise Invalid(f"{out} is the store itself or one of its side files; choose another output path.")
