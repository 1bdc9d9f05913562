"""The one reason every encrypted test gives when pcp[encrypt] is not installed (CI installs it with .[test])."""

from __future__ import annotations

import pytest

REASON = "encrypted stores need pip install 'pcp[encrypt]' (sqlcipher3 and keyring)"


def require() -> None:
    """Skip the calling test (or module, at import) unless SQLCipher's driver and keyring are importable."""
    for name in ("sqlcipher3", "keyring"):
        pytest.importorskip(name, reason=REASON, exc_type=ImportError)
