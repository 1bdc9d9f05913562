"""Snapshots of every screen (pytest-textual-snapshot): fixed demo data, ids and clock, theme, size, no blinking.

Update after a deliberate change with `pytest tests/tui/test_snapshots.py --snapshot-update`, then look at
the SVGs in tests/tui/snapshots/.
"""

from __future__ import annotations

import pytest

from helpers import select_page, settle, type_into

pytest.importorskip("pytest_textual_snapshot")
SIZE = (120, 40)


def snap(snap_compare, app, steps=None):
    async def run_before(pilot):
        await settle(app, pilot)
        if steps is not None:
            await steps(pilot)
            await settle(app, pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_main_screen(snap_compare, demo_store, make_app):
    store, refs = demo_store
    snap(snap_compare, make_app(store))


def test_main_screen_light_theme(snap_compare, demo_store, make_app):
    store, refs = demo_store
    snap(snap_compare, make_app(store, theme="pcp-light"))


def test_main_screen_high_contrast(snap_compare, demo_store, make_app):
    store, refs = demo_store
    snap(snap_compare, make_app(store, theme="pcp-high-contrast"))


def test_search_results(snap_compare, demo_store, make_app):
    store, refs = demo_store
    app = make_app(store)

    async def steps(pilot):
        await pilot.press("slash", *"tube lemma", "enter")

    snap(snap_compare, app, steps)


def test_revisions_diff(snap_compare, demo_store, make_app):
    store, refs = demo_store
    app = make_app(store)

    async def steps(pilot):
        await select_page(app, pilot, refs["alpha-outline"])
        await pilot.press("2")

    snap(snap_compare, app, steps)


def test_provenance(snap_compare, demo_store, make_app):
    store, refs = demo_store
    app = make_app(store)

    async def steps(pilot):
        await select_page(app, pilot, refs["alpha-summary"])
        await pilot.press("3")

    snap(snap_compare, app, steps)


def test_relations_graph(snap_compare, demo_store, make_app):
    store, refs = demo_store
    app = make_app(store)

    async def steps(pilot):
        await select_page(app, pilot, refs["alpha-proof"])
        await pilot.press("4")

    snap(snap_compare, app, steps)


def test_archive_confirmation(snap_compare, demo_store, make_app):
    store, refs = demo_store
    app = make_app(store)

    async def steps(pilot):
        await select_page(app, pilot, refs["alpha-bib"])
        await pilot.press("a")

    snap(snap_compare, app, steps)


def test_delete_plan(snap_compare, demo_store, make_app):
    store, refs = demo_store
    app = make_app(store)

    async def steps(pilot):
        await select_page(app, pilot, refs["alpha-proof"])
        await pilot.press("D")

    snap(snap_compare, app, steps)


def test_delete_receipt(snap_compare, demo_store, make_app):
    store, refs = demo_store
    app = make_app(store)

    async def steps(pilot):
        await select_page(app, pilot, refs["me-reading"])
        await pilot.press("D")
        await settle(app, pilot)
        await type_into(app, pilot, "#typed", refs["me-reading"][-6:])
        app.screen.query_one("#confirm").focus()
        await pilot.press("enter")

    snap(snap_compare, app, steps)


def test_bulk_delete_receipt(snap_compare, demo_store, make_app):
    store, refs = demo_store
    app = make_app(store)

    async def steps(pilot):
        await select_page(app, pilot, refs["alpha-proof"])
        await pilot.press("m", "m", "m", "D")
        await settle(app, pilot)
        await type_into(app, pilot, "#typed", "3")
        await pilot.press("enter", "enter")

    snap(snap_compare, app, steps)


def test_rights_export(snap_compare, demo_store, make_app):
    store, refs = demo_store
    snap(snap_compare, make_app(store), lambda pilot: pilot.press("f2"))


def test_rights_audit_log(snap_compare, demo_store, make_app):
    store, refs = demo_store
    # Durations are measured, so they differ from run to run; the snapshot fixes them.
    store._db.execute_sql("UPDATE audit_event SET duration_ms = 1.0")
    app = make_app(store)

    async def steps(pilot):
        await pilot.press("f2")
        await settle(app, pilot)
        app.screen.query_one("#rights-tabs").active = "audit"

    snap(snap_compare, app, steps)


def test_handoff_preview(snap_compare, demo_store, make_app):
    store, refs = demo_store
    app = make_app(store)

    async def steps(pilot):
        for ref in ("alpha-outline", "alpha-proof"):
            await select_page(app, pilot, refs[ref])
            await pilot.press("space")
        await pilot.press("f3")
        await settle(app, pilot)
        await pilot.press("ctrl+r")

    snap(snap_compare, app, steps)


def test_revise_dialog(snap_compare, demo_store, make_app):
    store, refs = demo_store
    app = make_app(store)

    async def steps(pilot):
        await select_page(app, pilot, refs["me-prefs"])
        await pilot.press("e")

    snap(snap_compare, app, steps)


def test_help(snap_compare, demo_store, make_app):
    store, refs = demo_store
    snap(snap_compare, make_app(store), lambda pilot: pilot.press("f1"))


def test_welcome(snap_compare, empty_store, make_app):
    snap(snap_compare, make_app(empty_store))


# The main screen and every modal at the smallest supported terminal and a large one (issue 13.11).
SIZES = {"80x24": (80, 24), "160x48": (160, 48)}
MODALS = {
    "main": None,
    "archive": ("alpha-bib", ["a"]),
    "suppress": ("garden-readme", ["s"]),
    "delete": ("alpha-proof", ["D"]),
    "bulk_delete": ("alpha-proof", ["m", "m", "m", "D"]),  # three pages selected, one plan for them
    "revise": ("me-prefs", ["e"]),
    "link": ("me-reading", ["l"]),
    "reviews": (None, ["f4"]),
    "help": (None, ["f1"]),
}


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("what", MODALS)
def test_fits_the_terminal(snap_compare, demo_store, make_app, what, size):
    store, refs = demo_store
    app = make_app(store)

    async def run_before(pilot):
        await settle(app, pilot)
        if MODALS[what] is not None:
            ref, keys = MODALS[what]
            if ref is not None:
                await select_page(app, pilot, refs[ref])
            await pilot.press(*keys)
            await settle(app, pilot)

    assert snap_compare(app, terminal_size=SIZES[size], run_before=run_before)
