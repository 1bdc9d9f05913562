"""The owner's ids: this store's own and those of stores that joined it with their history (pcp-core section 2:
one owner with several owner ids). Kept below both the store's core and sync, which both read it."""

from __future__ import annotations

import json
from typing import Any

ALIASES = "owner_aliases"  # meta: [{alias, owner, store, at}] owner ids of this owner's joined stores


def aliases(db: Any) -> list[dict[str, Any]]:
    row = db.execute_sql("SELECT value FROM meta WHERE key = ?", (ALIASES,)).fetchone()
    return list(json.loads(row[0])) if row else []


def owner_ids(db: Any, owner_id: str) -> set[str]:
    """Every owner id that is this store's owner: its own and those its joined stores had (aliases)."""
    return {owner_id, *(a["alias"] for a in aliases(db) if a.get("owner") == owner_id)}
