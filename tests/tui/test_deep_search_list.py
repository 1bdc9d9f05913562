"""A search's list scrolled to its end shows every match once (issue 34: a page past the first page's candidates
adds a tier of candidates whose hits follow those already given; the list used to repeat or lose hits there)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from helpers import page_list, settle, until

WORDS = "proof route compactness finite products lemma tube space metric group ring plan".split()
QUERY = "compactness products"


@pytest.fixture
def many(workdir):
    from store import Store

    st = Store.open(Path("many.db"))
    rnd = random.Random(3)
    st.write_pages_bulk(({"content": " ".join(rnd.choice(WORDS) for _ in range(rnd.randint(3, 30)))}
                         for _ in range(400)), "project:math")
    yield st
    st.close()


def walk(st) -> list[str]:
    """Every hit of the search, page by page, as a model client or `pcp search --cursor` gets them."""
    seen, cursor = [], None
    while True:
        result = st.search_pages(QUERY, limit=50, **({"cursor": cursor} if cursor else {}))
        seen += [h["page_id"] for h in result["hits"]]
        cursor = result["next_cursor"]
        if not cursor:
            return seen


async def test_a_search_list_scrolled_to_its_end_shows_every_match_once(many, make_app):
    expected = walk(many)
    assert len(expected) > 200 and len(set(expected)) == len(expected)  # past the first page's 153 candidates
    app = make_app(many)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("slash", *QUERY, "escape")
        await until(pilot, lambda: page_list(app).has_focus and page_list(app).rows, "the search's first hits")
        while not (app.screen.listed and app.screen.listed[1]):  # until the list holds all of them
            before = len(page_list(app).rows)
            await pilot.press("pagedown")
            await until(pilot, lambda before=before: len(page_list(app).rows) > before or app.screen.listed[1]
                        or page_list(app).cursor < len(page_list(app).rows) - 1, "the list moves on")
        shown = [r["page_id"] for r in page_list(app).rows]
        assert shown == expected
        await settle(app, pilot)
