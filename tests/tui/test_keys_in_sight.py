"""Keys you can see (issue 35, report 6 and 13): esc and Down leave the search box, a second esc clears the search;
at 80x24 the footer keeps f1 and ^q, and D and esc while pages are selected; f5 and f7 are on the palette's
first page."""

from __future__ import annotations

from helpers import page_list, select_page, settle, until
from textual.widgets._footer import FooterKey


def footer_keys(app) -> list[str]:
    return [f"{k.key_display} {k.description}" for k in app.screen.query(FooterKey) if k.display]


async def test_esc_in_the_search_box_goes_to_the_list_and_a_second_esc_clears_the_search(demo_store, make_app):
    store, refs = demo_store
    app = make_app(store)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        screen = app.screen
        search = screen.query_one("#search")
        await pilot.press("slash", *"garden")
        await pilot.press("escape")
        await until(pilot, lambda: page_list(app).has_focus, "the list to take the focus")
        await settle(app, pilot)
        assert screen.query_text == "garden" and search.value == "garden"  # searched at once, not lost
        await pilot.press("f")  # a key of the list now: the status filter, not an "f" in the query
        await settle(app, pilot)
        assert search.value == "garden" and screen.status == "all"
        assert any("Clear search" in k for k in footer_keys(app)), footer_keys(app)
        await pilot.press("escape")
        await until(pilot, lambda: screen.query_text == "" and search.value == "", "the search to clear")
        await settle(app, pilot)
        await pilot.press("slash", *"proof", "down")  # Down moves into the results too
        await until(pilot, lambda: page_list(app).has_focus, "Down to leave the box")
        await settle(app, pilot)
        assert screen.query_text == "proof" and page_list(app).rows


async def test_at_80x24_the_footer_keeps_help_and_quit_and_the_keys_of_a_selection(demo_store, make_app):
    store, refs = demo_store
    app = make_app(store)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        shown = footer_keys(app)
        assert "f1 Help" in shown and "^q Quit" in shown, shown
        await select_page(app, pilot, refs["alpha-bib"])
        await pilot.press("m")
        await settle(app, pilot)
        await until(pilot, lambda: "esc Clear selection" in footer_keys(app), "the selection's keys")
        shown = footer_keys(app)
        assert {"D Delete", "esc Clear selection", "f1 Help", "^q Quit"} <= set(shown), shown
        await pilot.press("ctrl+b")  # the sidebar takes room: the pinned keys stay
        await settle(app, pilot)
        assert {"D Delete", "f1 Help", "^q Quit"} <= set(footer_keys(app)), footer_keys(app)


async def test_import_and_sync_are_on_the_palettes_first_page_at_80x24(demo_store, make_app):
    from textual.command import CommandList

    store, _ = demo_store
    app = make_app(store)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await pilot.press("ctrl+p")
        await until(pilot, lambda: app.screen.query(CommandList) and app.screen.query_one(CommandList).option_count,
                    "the palette's commands")
        await settle(app, pilot)
        listing = app.screen.query_one(CommandList)
        height = listing.scrollable_content_region.height
        first_page = [str(listing.get_option_at_index(i).prompt) for i in range(listing.option_count)]
        seen = " ".join(first_page[:max(1, height // 2)])  # two lines an entry: its title and what it does
        assert "Import" in seen and "Sync" in seen, (height, first_page)
