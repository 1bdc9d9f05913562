"""Attacks on the app's status line naming the search's mode (`MainScreen._matched_by`, 2026-12-06; a helper's,
branch attack12): `search (auto+semantic)` only while the store re-orders the hits by meaning, else the mode asked
for. With the channel on: an English question (re-ordered), a CJK question (not), a search that finds nothing, text
mode, and a fragment of a word that auto answers by substring (hits `matched_by` exact): the line said
`search (exact)` for it, a mode the user had not asked for (the mode key then goes on from auto, not exact).
"""

from __future__ import annotations

from helpers import list_status, page_list, settle, type_into, until


async def test_the_status_line_says_auto_semantic_only_for_re_ordered_hits(zebras, make_app):
    zebras.write_page("notes:wild", content="斑马在旱季往北走。斑马的迁徙")
    zebras.set_semantic(True)
    app = make_app(zebras)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)

        async def search(query: str) -> tuple[list[dict], str]:
            await type_into(app, pilot, "#search", query)
            await pilot.press("enter")
            await settle(app, pilot)
            expected = [h["page_id"] for h in zebras.search_pages(query, mode=app.screen.mode)["hits"]]
            await until(pilot, lambda: [r["page_id"] for r in page_list(app).rows] == expected, f"hits of {query}")
            await settle(app, pilot)
            return page_list(app).rows, list_status(app)

        rows, status = await search("where do zebras go when it is dry?")
        assert {r["matched_by"] for r in rows} == {"auto+semantic"} and "search (auto+semantic) " in status
        rows, status = await search("斑马去哪里？")  # CJK: not re-ordered
        assert rows and {r["matched_by"] for r in rows} == {"auto"} and "search (auto) " in status
        rows, status = await search("quagga okapi")  # nothing
        assert not rows and "search (auto) " in status
        rows, status = await search("zebr")  # a fragment: auto answers by substring
        assert rows and {r["matched_by"] for r in rows} == {"exact"}
        assert "search (auto) " in status, status
        app.screen.set_search_mode("text")
        await settle(app, pilot)
        rows, status = await search("zebras dry season")
        assert rows and "search (text) " in status
