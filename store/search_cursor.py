"""What a search's cursor carries and how it is checked: the search it belongs to (a fingerprint), its offset, and
the candidate tiers its pages rank, so that one search's pages neither repeat nor lose a hit (store.search)."""

from __future__ import annotations

import hashlib
from typing import Any

from .core import dumps
from .ranking import POOL

MAX_OFFSET = 1 << 62  # a cursor's offset (SQL takes it: SQLite's integers are 64-bit), far past any listing


def fingerprint(search: list[Any]) -> str:
    """What a search cursor is bound to: the query, scopes, mode, filters, context and whether it was re-ordered."""
    return hashlib.sha256(dumps(search).encode()).hexdigest()[:16]


MAX_TIERS = 12  # candidate tiers a cursor may carry (each 3x the last: far past any listing)


def tiers(kept: Any, need: int, fresh: int) -> tuple[list[int], bool]:
    """The candidate tiers of a search's page: the cursor's (a number, as cursors before tiers carried, or a list
    as this function makes them: from POOL, each at least 3x the one before), and one of `fresh` candidates more
    when they do not reach this page's `need` rows; all of them together at most 1.5x `fresh`, what this page would
    score anyway. Of a list that goes past that (forged, or made by an earlier pcp, whose semantic pages scored 150
    candidates, then 3x their need) the first tiers are kept: they gave the first hits. True beside the tiers when
    later ones were dropped and `fresh` stands for them: the hits they gave may not be the ones `fresh` gives."""
    if isinstance(kept, int):
        kept = [kept]
    tiers: list[int] = []
    if isinstance(kept, list) and len(kept) < MAX_TIERS:
        for t in kept:
            if not (isinstance(t, int) and not isinstance(t, bool) and t >= (3 * tiers[-1] if tiers else POOL)
                    and sum(tiers) + t <= 1.5 * fresh):
                break
            tiers.append(t)
    if tiers and tiers[-1] >= need:
        return tiers, False
    while sum(tiers) + fresh > 1.5 * fresh:
        tiers.pop()
    return [*tiers, fresh], 0 < len(tiers) < (len(kept) if isinstance(kept, list) else 0)
