"""Helpers for the sync tests."""

from __future__ import annotations

from pathlib import Path


def export_lines(path: Path, out: Path) -> list[str]:
    """A store's full export, header and closing digest aside, as sorted lines (the order of two concurrent
    revisions of one page, and of handoff records, follows each store's arrival order)."""
    from store import Store

    with Store.open(path) as st:
        st.export(out)
    lines = out.read_text(encoding="utf-8").splitlines()
    out.unlink()
    return sorted(lines[1:-1])


def sync(a: Path, b: Path) -> dict:
    from store import Store

    with Store.open(a) as st:
        return st.sync_with(b)
