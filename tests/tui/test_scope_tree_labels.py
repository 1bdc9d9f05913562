"""Issue 13: what the scope tree and the page list say can be read in full at 160x48 and at 80x24."""

from __future__ import annotations

from helpers import page_list, settle
from textual.geometry import Region


def drawn(widget) -> list[str]:
    """The lines a widget draws now, as text."""
    return [strip.text.rstrip() for strip in widget.render_lines(Region(0, 0, *widget.outer_size))]


async def test_the_empty_list_hint_is_read_in_full_at_80x24(demo_store, make_app):
    """The hint of an empty list was cut: "No pages here (try the Author filter: …" (it ends ": w).")."""
    store, refs = demo_store
    app = make_app(store)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        page_list(app).focus()
        await pilot.press("w", "w", "w", "w")  # the author filter: system, who wrote no page
        await settle(app, pilot)
        pages = page_list(app)
        assert pages.rows == [] and app.screen.actor == "system"
        hint = f"No pages here (try the Author filter: {app.key_display('actor_filter')})."
        lines = drawn(pages)
        assert " ".join(" ".join(lines).split()) == hint and len([line for line in lines if line]) >= 2, lines
