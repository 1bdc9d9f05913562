"""Lists that know their size (issue 35, report 7): the header counts the pages of the scope and filters (the store
counts, off the loop, "counting…" while it takes long), and the list sorts oldest first too."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from helpers import page_list, settle, until


@pytest.fixture
def store_250(workdir, fixed_clock):
    """250 pages in two scopes, each a day apart (more than one window of 100), 10 of them archived."""
    from store import Store

    st = Store.open(Path("many.db"))
    st.write_pages_bulk(({"content": f"# Page {i:03d}\n\nAbout {i}.", "facets": {"title": f"Page {i:03d}"},
                                   "observed_at": f"2025-{1 + i // 28 % 12:02d}-{1 + i % 28:02d}T10:00:00Z"}
                                  for i in range(200)), "project:a", batch_size=100)
    st.write_pages_bulk(({"content": f"# Other {i:03d}", "facets": {"title": f"Other {i:03d}"},
                          "observed_at": f"2024-01-{1 + i % 28:02d}T10:00:00Z"} for i in range(50)), "project:b")
    listed = st.list_pages(scopes=["project:a"], limit=10)["pages"]
    for row in listed:
        st.archive_page(row["page_id"], "old")
    yield st
    st.close()


def header(app) -> str:
    """The list's header line ("" until the main screen has composed it)."""
    found = app.screen.query("#list-status")
    return str(found.first().render()) if found else ""


async def test_the_header_counts_every_page_of_the_listing_not_the_rows_loaded(store_250, make_app):
    app = make_app(store_250)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        await until(pilot, lambda: "240 of 250 pages" in header(app), "the count of the active pages")
        assert len(page_list(app).rows) < 240 and "+" not in header(app), header(app)
        app.screen.scopes, app.screen.scope_label = ["project:a"], "project:a"
        app.screen.reload_pages()
        await until(pilot, lambda: "190 of 200 pages" in header(app), "the scope's count")
        await pilot.press("f")  # status all
        await until(pilot, lambda: "· 200 pages" in header(app), "every status")


async def test_a_slow_count_says_counting_then_the_number(store_250, make_app):
    app = make_app(store_250)
    release = threading.Event()
    real = store_250.count_pages

    def held(*args, **kwargs):  # the count waits for the test: it is "slow" for as long as the test wants
        release.wait(30)
        return real(*args, **kwargs)

    store_250.count_pages = held
    async with app.run_test(size=(160, 48)) as pilot:
        await until(pilot, lambda: hasattr(app.screen, "counting") and "counting…" in header(app), "counting…")
        # the list comes while the count is still held (under load it may come after "counting…" is shown)
        await until(pilot, lambda: bool(page_list(app).rows) and "counting…" in header(app), "the rows meanwhile")
        release.set()
        await until(pilot, lambda: "240" in header(app) and "counting" not in header(app), "the number")
        await settle(app, pilot)


async def test_sort_offers_oldest_first(store_250, make_app):
    app = make_app(store_250)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        newest = page_list(app).rows[0]["title"]
        page_list(app).focus()
        await pilot.press("o")
        await until(pilot, lambda: "oldest first" in header(app), "the order in the header")
        await settle(app, pilot)
        rows = page_list(app).rows
        assert rows[0]["title"] == "Other 000" and rows[0]["title"] != newest
        times = [r["sort_time"] for r in rows]
        assert times == sorted(times)


async def test_end_and_home_go_to_the_last_and_first_rows_by_keyset_from_either_end(store_250, make_app):
    """Report 7: End loaded 100 more rows each time (about 1,000 presses to reach the oldest of 100,000)."""
    app = make_app(store_250)
    oldest = store_250.list_pages(order="oldest", limit=1)["pages"][0]
    newest = store_250.list_pages(order="recent", limit=1)["pages"][0]
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        page_list(app).focus()
        await pilot.press("end")
        await until(pilot, lambda: page_list(app).current and page_list(app).current["page_id"] == oldest["page_id"],
                    "the oldest page under the cursor")
        await settle(app, pilot)
        rows = page_list(app).rows
        times = [r["sort_time"] for r in rows]
        assert times == sorted(times, reverse=True) and len(rows) <= 100  # one window, newest first as on screen
        above = rows[0]["page_id"]
        await pilot.press("pageup", "pageup", "pageup", "pageup")  # going up loads the rows above, in order, none twice
        await until(pilot, lambda: len(page_list(app).rows) > 100, "the rows above")
        await settle(app, pilot)
        ids = [r["page_id"] for r in page_list(app).rows]
        assert len(ids) == len(set(ids)) and above in ids
        times = [r["sort_time"] for r in page_list(app).rows]
        assert times == sorted(times, reverse=True)
        await pilot.press("home")
        await until(pilot, lambda: page_list(app).current and page_list(app).current["page_id"] == newest["page_id"]
                    and page_list(app).cursor == 0, "the newest page")


async def test_end_in_a_ranked_search_goes_to_the_last_hit_loaded_and_says_how_many(store_250, make_app):
    from helpers import said

    app = make_app(store_250)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        await pilot.press("slash", *"page", "escape")
        await until(pilot, lambda: page_list(app).has_focus and app.screen.query_text == "page", "the search")
        await settle(app, pilot)
        loaded = len(page_list(app).rows)
        await pilot.press("end")
        await until(pilot, lambda: any("ranked so far" in s for s in said(app)), "how many are ranked")
        assert page_list(app).cursor == loaded - 1
        assert any(f"{loaded} hits ranked so far" in s for s in said(app)), said(app)
