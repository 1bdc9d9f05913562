"""The one reason every encrypted test gives when pcp[encrypt] is not installed (CI installs it with .[test])."""

from __future__ import annotations

import pytest

REASON = "encrypted stores need pip install 'pcp[encrypt]' (sqlcipher3 and keyring)"


def require() -> None:
    """Skip the calling test (or module, at import) unless SQLCipher's driver and keyring are importable."""
    for name in ("sqlcipher3", "keyring"):
        pytest.importorskip(name, reason=REASON, exc_type=ImportError)


def windows(text: str, size: int = 16) -> set[bytes]:
    data = text.encode("utf-8")
    return {data[i:i + size] for i in range(0, max(1, len(data) - size + 1))}


def leaks(data: bytes, texts: list[str]) -> list[bytes]:
    """Every 16-byte window of any text that occurs in `data` (empty when none does).

    Any 16 bytes of `data` hold the 8 bytes that start at a multiple of 8 within them: only those are looked
    up (a set of every 8-byte piece of a window), and each hit is then checked whole, 16 bytes at a time."""
    wanted = set().union(*(windows(t) for t in texts))
    pieces = {w[i:i + 8] for w in wanted for i in range(len(w) - 7)}
    found = []
    for q in range(0, max(0, len(data) - 7), 8):
        if data[q:q + 8] in pieces:
            found += [data[p:p + 16] for p in range(max(0, q - 7), q + 1) if data[p:p + 16] in wanted]
    return found
