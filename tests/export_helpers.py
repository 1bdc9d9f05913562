"""Comparing two stores through their `pcp export` lines (tests of paths that must write the same store)."""

from __future__ import annotations

import re
from pathlib import Path

ID = re.compile(r"\b(pg|rev|rel|evt|usr|del)_[0-9A-HJKMNP-TV-Z]{26}\b")
TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")


def mapped_export_lines(path: Path) -> list[str]:
    """Export lines with every minted id replaced by its order of first appearance and store times blanked."""
    names: dict[str, str] = {}

    def name(m: re.Match[str]) -> str:
        return names.setdefault(m.group(0), f"{m.group(1)}#{len(names)}")

    lines = path.read_text(encoding="utf-8").splitlines()[1:-1]
    return [TIME.sub("T", ID.sub(name, line)) for line in lines]
