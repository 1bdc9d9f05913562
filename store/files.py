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

