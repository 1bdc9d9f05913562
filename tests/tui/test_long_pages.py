"""A long page in the app, whole: revising it never writes back a cut text, and the Content tab reads on.

The page has 950,000 characters (more than 14 read budgets of 64,000). `e` refuses it in one line pointing to
`E`; `E` hands the whole text to $EDITOR (a script that appends a line) and the new revision keeps every
character plus that line. In the Content tab, scrolling to the end reads the next part, End reads the rest and
shows the page's last line, and a note says where you are.
"""

from __future__ import annotations

import contextlib
import sys

from helpers import said, select_page, settle, until
from pcp_tui.screens.revise import ReviseScreen
from pcp_tui.widgets.document import Document

SIZE = (120, 40)
CHARS = 950_000
LAST_LINE = "THE LAST LINE OF THE LONG PAGE"
ADDED = "a line the editor added"


def long_text() -> str:
    body = "".join(f"line {i:06d}: gamma compact lemma tube cover alpha product\n" for i in range(17_000))
    return body[:CHARS - len(LAST_LINE) - 1] + "\n" + LAST_LINE


def long_page(store) -> tuple[dict, str]:
    text = long_text()
    assert len(text) == CHARS
    return store.write_page("project:long", content=text, facets={"title": "A very long page"}), text


def head(store, page_id: str) -> dict:
    item = store.read_pages([page_id], projections=("manifest",))["results"][0]
    return item["revision"]


def whole(store, revision_id: str) -> str:
    from pcp_tui.reading import whole_content

    return whole_content(store, revision_id)


def in_view(view: Document) -> list[str]:
    top = int(view.scroll_y)
    return view.drawn_lines[top:top + view.scrollable_content_region.height]


async def test_e_refuses_a_950000_character_page_and_E_revises_it_whole(empty_store, make_app, monkeypatch):
    store = empty_store
    page, text = long_page(store)
    editor = f"{sys.executable} -c \"import sys; open(sys.argv[1], 'a', newline='').write('\\n{ADDED}\\n')\""
    monkeypatch.setenv("VISUAL", editor)
    app = make_app(store)

    @contextlib.contextmanager
    def suspend():  # a headless run has no terminal to hand over
        yield

    monkeypatch.setattr(app, "suspend", suspend)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await select_page(app, pilot, page["page_id"])
        await pilot.press("e")
        await until(pilot, lambda: any("950,000 characters" in line for line in said(app)), "e to refuse")
        assert not isinstance(app.screen, ReviseScreen)
        assert any("$EDITOR" in line and "E" in line for line in said(app))
        assert head(store, page["page_id"])["revision_id"] == page["revision_id"]
        await pilot.press("E")
        await until(pilot, lambda: isinstance(app.screen, ReviseScreen) and app.screen.draft.endswith(ADDED + "\n"),
                    "the draft back from the editor")
        assert app.screen.draft == text + f"\n{ADDED}\n"
        await pilot.press("ctrl+s")
        await until(pilot, lambda: not isinstance(app.screen, ReviseScreen), "the revision to be saved")
        await settle(app, pilot)
    now = head(store, page["page_id"])
    assert now["revision_id"] != page["revision_id"]
    assert whole(store, now["revision_id"]) == text + f"\n{ADDED}\n"


async def test_a_page_under_the_box_limit_is_revised_whole_in_the_box(empty_store, make_app):
    store = empty_store
    text = "".join(f"line {i:05d} of a page longer than one read budget\n" for i in range(1_600))
    assert 64_000 < len(text) < 100_000
    page = store.write_page("project:long", content=text, facets={"title": "Longer than a budget"})
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await select_page(app, pilot, page["page_id"])
        await pilot.press("e")
        await until(pilot, lambda: isinstance(app.screen, ReviseScreen), "the revise dialog")
        assert app.screen.draft == text
        await pilot.press("x", "ctrl+s")  # typed where the cursor starts, after the text
        await until(pilot, lambda: not isinstance(app.screen, ReviseScreen), "the revision to be saved")
    now = head(store, page["page_id"])
    assert whole(store, now["revision_id"]) == text + "x"


async def test_the_content_tab_reads_a_long_page_to_its_last_line(empty_store, make_app):
    store = empty_store
    page, text = long_page(store)
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await select_page(app, pilot, page["page_id"])
        view = app.screen.query_one("#content-view", Document)
        await until(pilot, lambda: view.drawn_lines and not view.rendering, "the first part drawn")
        assert "characters 1 to 64,000 of 950,000 shown" in view.text
        # Scrolling to the end reads the next part; the lines in view stay.
        view.focus()
        view.scroll_to(y=view.max_scroll_y, animate=False)
        await until(pilot, lambda: "characters 1 to 128,000 of 950,000" in view.text and not view.rendering,
                    "the second part")
        assert view.text.startswith(text[:128_000].split("\n")[0])
        # End reads all that is left and shows the page's last line.
        await pilot.press("end")
        await until(pilot, lambda: not view.text.endswith("──") and not view.rendering
                    and LAST_LINE in " ".join(in_view(view)), "the last line after End")
        assert view.text == text
        assert view.scroll_y == view.max_scroll_y
