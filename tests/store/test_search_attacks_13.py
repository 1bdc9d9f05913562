"""Attacks on two changes of 2026-12-06 (a helper's, branch attack13): the asked-question lookup that reads each
candidate's links in index order and stops at its first visible asking ones (`SearchOps._asked`, d073761), and the
semantic channel's first tier of 450 scored candidates (`semantic.RERANK_POOL`, fc05870). Each finding failed here
when it was written.

Findings:
- a cursor made before fc05870 by a walk that had gone past its first 150 candidates carries tiers [150, 3 x need]
  (483 for a walk of 20 hits a page); its second tier is more than the 450 a page now scores, so all its tiers
  were dropped and the page ranked 450 candidates afresh: the walk repeated and lost hits (24 of 352 matches).
"""

from __future__ import annotations

import random

import pytest

from store import Invalid, semantic
from store.reads import decode_cursor

WORDS = "proof route compactness finite products lemma tube space metric group ring plan".split()
QUERY = "compactness products"


def _many_pages(store, n: int) -> None:
    """n pages of the same dozen words in random order and length (seeded)."""
    rnd = random.Random(1)
    store.write_pages_bulk(({"content": " ".join(rnd.choice(WORDS) for _ in range(rnd.randint(3, 30)))}
                            for _ in range(n)), "project:math")


def _walk(session, query: str, limits, cursor: str | None = None, **kw) -> tuple[list[str], str | None]:
    """The revision ids of the pages walked (one page per limit) and the cursor after them (None at the end)."""
    seen: list[str] = []
    for limit in limits:
        result = session.search_pages(query, limit=limit, **kw, **({"cursor": cursor} if cursor else {}))
        seen += [x["revision_id"] for x in result["hits"]]
        cursor = result["next_cursor"]
        if not cursor:
            return seen, None
    return seen, cursor


# --- 2. the semantic channel's first tier of 450 ---

@pytest.mark.parametrize("pages,limits,old_tiers,may_refuse", [
    (400, [20] * 9, [150, 483], False),  # a walk of 20 hits a page: past the 150th hit on its 8th page
    (1200, [20] * 9, [150, 483], False),  # more candidates than a page of 450 scores
    (400, [50, 50, 49, 50], [150, 600], False),  # the deepest second tier such a walk made (50 hits from the 150th)
    (1200, [50, 50, 49, 50], [150, 600], True),  # (its 600 candidates are past 1.5x 450, and 450 do not hold all)
])
def test_a_cursor_made_before_the_450_pool_walks_on_or_is_refused(store, monkeypatch, pages, limits, old_tiers,
                                                                  may_refuse):
    """A walk begun before fc05870 (its first tier 150, a later one 3x the page's need) and continued after it:
    each match comes once; only a cursor whose tiers would cost a page more than 1.5x what it scores now, in a store
    where they may give other hits, is refused, in one line."""
    _many_pages(store, pages)
    store.set_semantic(True)
    whole, _ = _walk(store, QUERY, [50] * 100)
    assert len(whole) == len(set(whole)) > 300
    monkeypatch.setattr(semantic, "RERANK_POOL", 150)  # what a page scored before fc05870
    seen, cursor = _walk(store, QUERY, limits)
    assert cursor and decode_cursor(cursor, "search")["p"] == old_tiers
    monkeypatch.setattr(semantic, "RERANK_POOL", 450)
    try:
        rest, _ = _walk(store, QUERY, [20] * 200, cursor)
    except Invalid as refused:
        assert may_refuse
        assert "\n" not in str(refused) and "cursor" in str(refused)
        return
    seen += rest
    assert len(seen) == len(set(seen)), "a hit came twice across pages"
    assert set(seen) == set(whole)

