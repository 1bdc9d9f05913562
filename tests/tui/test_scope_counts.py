"""Issue 13: the scope picker of the rights screen says what its count leaves out."""

from __future__ import annotations

import re

from helpers import page_list, settle

SIZE = (120, 40)
KEPT = ["active", "superseded", "archived"]  # what the scope counts hold: every page but the tombstoned ones


def pages_in(store, scopes, status) -> list[dict]:
    """Every page the store lists for these scopes (None: all), window by window."""
    pages, cursor = [], None
    while True:
        r = store.list_pages(scopes=scopes, status=status, after=cursor, limit=100)
        pages += r["pages"]
        if not (cursor := r["next_cursor"]):
            return pages


async def test_the_scope_picker_says_what_its_count_leaves_out(demo_store, make_app):
    """The picker said "project:alpha (7 pages)" and the plan erased 8 (the eighth tombstoned); after a
    tombstone, "task:weekly-review (0 pages)" erased 1 page. The scope counts have no tombstoned pages."""
    store, refs = demo_store
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        page_list(app).focus()
        weekly = next(r["page_id"] for r in page_list(app).rows if r["namespace"] == "task:weekly-review")
        store.tombstone_page(weekly, "no longer needed")
        await pilot.press("f2")
        await settle(app, pilot)
        await pilot.press("2")
        await settle(app, pilot)
        select = app.screen.query_one("#scope-choice")
        labels = {value: str(prompt) for prompt, value in select._options if isinstance(value, str)}
        for namespace in ("project:alpha", "task:weekly-review", "user:me"):
            label = labels[namespace]
            said = re.search(r"\((\d+) pages?, tombstoned not counted\)", label)
            assert said, label
            select.value = namespace
            await settle(app, pilot)
            plan = str(app.screen.query_one("#scope-plan").render())
            erased = int(re.search(r"(\d+) pages?\b", plan).group(1))
            tombstoned = len(pages_in(store, [namespace], ["tombstoned"]))
            assert erased == int(said.group(1)) + tombstoned == app.screen.scope_plan["pages"], (label, plan)
        assert labels["task:weekly-review"].startswith("task:weekly-review  (0 pages")
        assert "project:alpha  (7 pages" in labels["project:alpha"]
