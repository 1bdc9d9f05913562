"""Issue 30, item 5 in the app: an import into a namespace that reads like an existing scope's name asks the
owner first (the model client is refused outright, tests/store/test_namespace_rules.py)."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Select

from helpers import settle, type_into, until
from pcp_tui.screens.confirm import ConfirmScreen

EXPORT = Path(__file__).resolve().parents[1] / "data" / "exports" / "claude-simonw-claude-to-sqlite-2.json"
LOOK_ALIKE = "project:\u0430lpha"  # a Cyrillic а


async def _import_into(app, pilot, namespace: str) -> None:
    await settle(app, pilot)
    await pilot.press("f5")
    await until(pilot, lambda: app.screen.query("#namespace"), "the import screen")
    app.screen.query_one("#source", Select).value = "claude"
    await type_into(app, pilot, "#path", str(EXPORT))
    await type_into(app, pilot, "#namespace", namespace)
    await pilot.press("ctrl+s")
    await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the look-alike question")


async def test_the_owner_confirms_a_look_alike_namespace_before_anything_is_imported(workdir, make_app):
    from store import Store

    st = Store.open(Path("one.db"))
    st.write_page("project:alpha", content="The owner's alpha notes.")
    app = make_app(st)
    async with app.run_test(size=(100, 30)) as pilot:
        await _import_into(app, pilot, LOOK_ALIKE)
        body = app.screen.query_one(".dialog-body").render().plain
        assert "project:\\u0430lpha reads like the existing scope project:alpha" in body
        assert "U+0430 CYRILLIC SMALL LETTER A" in body
        assert [s["namespace"] for s in st.list_scopes()["scopes"]] == ["project:alpha"]  # nothing yet
        await pilot.press("n")
        await until(pilot, lambda: "choose another namespace" in str(app.screen.query_one("#result").render()),
                    "the refusal in the result line")
        assert [s["namespace"] for s in st.list_scopes()["scopes"]] == ["project:alpha"]
        await pilot.press("ctrl+s")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the question again")
        await pilot.press("y")
        await until(pilot, lambda: str(app.screen.query_one("#result").render()).startswith("Imported"), "the import")
        await settle(app, pilot)
    scopes = {s["namespace"]: s["page_count"] for s in st.list_scopes()["scopes"]}
    assert set(scopes) == {"project:alpha", LOOK_ALIKE} and scopes[LOOK_ALIKE] > 1
    st.close()


async def test_an_export_whose_scope_reads_like_one_of_the_store_asks_the_owner_first(workdir, make_app):
    """`import export` in the app: a scope of the file that reads like one of the store's is named in the same
    question; no says nothing was imported, yes brings it in (the file's namespace is kept: it cannot be renamed)."""
    from store import Store

    first = Store.open(Path("first.db"))
    first.write_page("project:alpha", content="The owner's alpha notes.")
    first.export(Path("base.jsonl"))
    mine = Store.open(Path("mine.db"))
    mine.import_export(Path("base.jsonl"))  # the same owner, on a second store
    first.create_scope(LOOK_ALIKE, confirm_lookalike=True)
    first.write_page(LOOK_ALIKE, content="Notes that pose as alpha's.")
    first.export(Path("odd.jsonl"))
    first.close()
    app = make_app(mine)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        await pilot.press("f5")
        await until(pilot, lambda: app.screen.query("#namespace"), "the import screen")
        app.screen.query_one("#source", Select).value = "export"
        await type_into(app, pilot, "#path", str(Path("odd.jsonl").resolve()))
        await pilot.press("ctrl+s")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the look-alike question")
        body = app.screen.query_one(".dialog-body").render().plain
        assert "project:\\u0430lpha reads like the existing scope project:alpha" in body
        await pilot.press("n")
        await until(pilot, lambda: str(app.screen.query_one("#result").render()).endswith("nothing was imported."),
                    "the refusal in the result line")
        assert [s["namespace"] for s in mine.list_scopes()["scopes"]] == ["project:alpha"]
        await pilot.press("ctrl+s")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the question again")
        await pilot.press("y")
        await until(pilot, lambda: str(app.screen.query_one("#result").render()).startswith("Imported"), "the import")
        await settle(app, pilot)
    assert {s["namespace"] for s in mine.list_scopes()["scopes"]} == {"project:alpha", LOOK_ALIKE}
    mine.close()
