"""What the app shows adds up and says what happened: counts, wording, filters, dialog keys, the palette."""

from __future__ import annotations

from textual.geometry import Region

from helpers import drawn, list_status, open_in_tab, page_list, said, select_page, settle, type_into, until
from pcp_tui.screens.confirm import ConfirmScreen
from pcp_tui.screens.main import MainScreen

SIZE = (120, 40)


async def test_status_all_lists_tombstoned_pages_too(demo_store, make_app):
    store, refs = demo_store
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        page_list(app).focus()
        await pilot.press("f")  # active -> all
        await settle(app, pilot)
        assert app.screen.status == "all"
        ids = {r["page_id"] for r in page_list(app).rows}
        assert refs["alpha-wrong-lemma"] in ids  # the tombstoned one
        assert refs["alpha-todo"] in ids  # the archived one
        assert len(ids) == len(refs)
        # (the short form where the long one, "22 pages (21 + 1 tombstoned)", would take more than two rows)
        assert "22 pages (21 + 1 tombstoned)" in list_status(app) or "22 pages, 1 tombstoned" in list_status(app)
        await type_into(app, pilot, "#search", "metrisable")
        await pilot.press("enter")
        await settle(app, pilot)
        assert refs["alpha-wrong-lemma"] in {r["page_id"] for r in page_list(app).rows}


async def test_the_list_says_how_its_count_relates_to_the_scope_count(demo_store, make_app):
    store, refs = demo_store
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        root = str(app.screen.query_one("#scopes").root.label)
        assert root.endswith("21")
        assert "19 of 21 pages" in list_status(app)  # the other two are archived and superseded
        page_list(app).focus()
        await pilot.press("f", "f")  # all -> archived
        await settle(app, pilot)
        assert "· 1 page" in list_status(app) and "1 pages" not in list_status(app)


async def test_lifecycle_and_link_messages_name_the_page(demo_store, make_app):
    store, refs = demo_store
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await select_page(app, pilot, refs["alpha-bib"])
        await pilot.press("a")
        await settle(app, pilot)
        await pilot.press("ctrl+s")
        await settle(app, pilot)
        assert any(m.startswith("Archived “Bibliography”") for m in said(app)), said(app)
        assert not any("now archived" in m for m in said(app))
        await select_page(app, pilot, refs["garden-readme"])
        await pilot.press("l")
        await settle(app, pilot)
        await type_into(app, pilot, "#find", "soil moisture")
        await pilot.press("enter")
        await settle(app, pilot)
        await pilot.press("down", "enter")  # pick the first hit
        await settle(app, pilot)
        await pilot.press("ctrl+s")
        await settle(app, pilot)
        linked = [m for m in said(app) if m.startswith("Linked")]
        assert linked and "“Garden app README”" in linked[0] and "“Idea: soil moisture sensor”" in linked[0], linked
        assert refs["garden-idea"] not in linked[0]


async def test_date_filter_keeps_what_happened_between_the_days(demo_store, make_app):
    store, refs = demo_store
    every = store.list_pages(limit=100)["pages"]
    days = sorted({(p.get("sort_time") or "")[:10] for p in every})
    assert len(days) > 2
    cut = days[len(days) // 2]
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        page_list(app).focus()
        await pilot.press("d")
        await settle(app, pilot)
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press(*cut)
        await pilot.press("ctrl+s")  # "before" stays empty: no upper limit
        await settle(app, pilot)
        assert isinstance(app.screen, MainScreen)
        shown = page_list(app).rows
        assert shown and all((r.get("date") or "")[:10] >= cut for r in shown)
        assert len(shown) == sum(1 for p in every if p["sort_time"][:10] >= cut)
        assert f"from {cut}" in list_status(app)
        await type_into(app, pilot, "#search", "tube lemma")
        await pilot.press("enter")
        await settle(app, pilot)
        assert all((r.get("date") or "")[:10] >= cut for r in page_list(app).rows)
        assert f"from {cut}" in list_status(app) and "search (auto)" in list_status(app)
        assert not app.screen.set_dates("last tuesday", "")  # not a date: said, nothing changes
        await until(pilot, lambda: any("RFC 3339" in m for m in said(app)), "the date refused on screen")
        assert app.screen.dates == (cut, "")


def on_screen(widget) -> str:
    """The text a widget shows in its region now (what is cut off is not in it)."""
    from textual.geometry import Region

    return "".join(strip.text for strip in widget.render_lines(Region(0, 0, *widget.size)))


async def test_search_keeps_the_author_filter_on_the_filter_line(demo_store, make_app):
    store, refs = demo_store
    app = make_app(store)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        page_list(app).focus()
        await pilot.press("w", "w")  # anyone -> user -> model
        await settle(app, pilot)
        await type_into(app, pilot, "#search", "compact")
        await pilot.press("enter")
        await settle(app, pilot)
        assert "by model" in on_screen(app.screen.query_one("#list-status"))  # on screen, not cut off
        hits = page_list(app).rows
        assert hits
        heads = store.read_pages([r["page_id"] for r in hits], projections=("manifest",))["results"]
        assert {h["revision"]["created_by"]["actor_type"] for h in heads} == {"model"}


async def test_the_demo_never_writes_the_users_config(demo_store, workdir):
    from pcp_tui.app import PcpApp

    store, refs = demo_store
    config = workdir / "config"
    app = PcpApp(store.path, store=store, demo=True, config_folder=config, cursor_blink=False, use_pyperclip=False,
                 watch_interval=0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        app.theme = "pcp-light"  # as the palette's "Theme: pcp-light" does
        await settle(app, pilot)
        assert app.theme == "pcp-light"
    assert not (config / "config.toml").exists()
    assert not config.exists() or not any(config.iterdir())


async def palette_finds(app, query: str) -> list[str]:
    from pcp_tui.palette import PcpCommands

    provider = PcpCommands(app.screen)
    return [hit.text async for hit in provider.search(query)]


async def test_the_palette_finds_commands_by_what_they_do(demo_store, make_app):
    store, refs = demo_store
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert "Your rights" in await palette_finds(app, "export")
        assert "Your rights" in await palette_finds(app, "audit")
        assert "Handoff" in await palette_finds(app, "ledger")
        assert "Theme: pcp-high-contrast" in await palette_finds(app, "high contrast")
        assert "Dates" in await palette_finds(app, "observed")
        assert "Search mode: exact" in await palette_finds(app, "substring")
        found = await palette_finds(app, "revise")
        assert found[0] == "Revise"  # a title match ranks first
        await pilot.press("f2")
        await settle(app, pilot)
        assert "Export" in await palette_finds(app, "export")  # the rights screen's own command
        assert "More audit" in await palette_finds(app, "audit")
        assert "Revise" not in await palette_finds(app, "revise")  # not a command of this screen


async def test_every_dialog_shows_its_keys_and_f1_there_shows_them(demo_store, make_app):
    from pcp_tui.screens.help import HelpScreen

    store, refs = demo_store
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await select_page(app, pilot, refs["alpha-bib"])
        # (alpha-bib: nothing is derived from it, so the delete dialog offers no ^k Cascade)
        for key, keys in (("a", "^s"), ("e", "^e"), ("l", "^f"), ("D", "Enter in the reason"), ("f4", "⏎ Open")):
            await pilot.press(key)
            await settle(app, pilot)
            dialog = app.screen
            hint = str(dialog.query_one(".dialog-keys").render())
            assert keys in hint and "esc" in hint and "f1" in hint.lower(), (key, hint)
            await pilot.press("f1")
            await settle(app, pilot)
            assert isinstance(app.screen, HelpScreen)
            table = app.screen.query_one("#keys")
            wheres = {table.get_row_at(i)[0] for i in range(table.row_count)}
            assert "Pages" not in wheres and len(wheres) == 2, wheres  # that dialog's keys and the app's
            await pilot.press("escape")
            await settle(app, pilot)
            assert app.screen is dialog
            await pilot.press("escape")
            await settle(app, pilot)
            assert isinstance(app.screen, MainScreen)


def test_side_by_side_diff_measures_cjk_in_cells_and_wraps_instead_of_hiding_the_change():
    from rich.cells import cell_len

    from pcp_tui.widgets.diff import side_by_side, unified

    old = "紧致性：每个开覆盖都有有限子覆盖。这是一个很长的句子，结尾才有变化：甲\nsame line"
    new = "紧致性：每个开覆盖都有有限子覆盖。这是一个很长的句子，结尾才有变化：乙\nsame line"
    lines = side_by_side(old, new, 60, "old", "new").plain.split("\n")
    assert len({cell_len(line) for line in lines}) == 1  # every row as wide, CJK counted in cells
    assert {line.index("│") for line in lines if "same" not in line} and all(
        cell_len(line[:line.index("│")]) == cell_len(lines[0][:lines[0].index("│")]) for line in lines)
    joined = "".join(lines)
    assert "甲" in joined and "乙" in joined  # the change at the end of the long line is on screen
    changed = [line for line in lines[1:] if "same" not in line]
    assert len(changed) > 1 and all(line.startswith("- ") and "│ + " in line for line in changed)
    wrapped = unified("a" * 50 + "X", "a" * 50 + "Y", "o", "n", 30).plain.split("\n")[3:]
    assert len(wrapped) == 4 and [w[0] for w in wrapped] == ["-", "-", "+", "+"]  # the marker on every piece
    assert all(cell_len(w) <= 30 for w in wrapped)


def test_diffs_wrap_between_words_and_cut_only_a_word_wider_than_the_column():
    from rich.cells import cell_len

    from pcp_tui.widgets.diff import side_by_side, unified

    old = "Compactness: every open cover of the space has a finite subcover, said the topology notes."
    new = "Compactness: every open cover of the space has a finite subcover, says the topology chapter."
    words = set(old.split()) | set(new.split())
    for width in (24, 31, 40):
        lines = unified(old, new, "o", "n", width).plain.split("\n")[3:]
        assert all(cell_len(line) <= width for line in lines)
        assert {w for line in lines for w in line[1:].split()} <= words, width  # no word cut in two
        assert " ".join(line[1:] for line in lines if line[0] == "+").split() == new.split()
        rows = side_by_side(old, new, width * 2, "o", "n").plain.split("\n")[1:]
        left = [row[:row.index("│")][2:] for row in rows]
        right = [row[row.index("│") + 1:][2:] for row in rows]
        assert {w for piece in left + right for w in piece.split()} <= words, width
        assert " ".join(right).split() == new.split() and " ".join(left).split() == old.split()
    long_word = "x" * 40
    pieces = unified("a", long_word, "o", "n", 20).plain.split("\n")[4:]
    assert [p[0] for p in pieces] == ["+", "+", "+"] and "".join(p[1:].strip() for p in pieces) == long_word


async def test_relation_lines_stay_one_line_and_show_in_full_when_highlighted(demo_store, make_app):
    store, refs = demo_store
    app = make_app(store)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await open_in_tab(app, pilot, refs["alpha-proof"], "4")
        graph = app.screen.query_one("#graph")
        assert graph.option_count > 2
        assert all(height == 1 for height in graph._line_cache.heights.values())  # no wrapped line breaks the tree
        relations = app.screen.query_one("#relation-list")
        relations.focus()
        await pilot.press("down")
        await settle(app, pilot)
        detail = str(app.screen.query_one("#relation-detail").render())
        rel = relations.highlighted_relation
        assert rel is not None and rel["other_title"] in detail


async def test_the_handoff_preview_wraps_long_lines(demo_store, make_app):
    store, refs = demo_store
    long_line = "word " * 40 + "x" * 150 + " the-end-marker"
    page = store.write_page("user:me", content=f"# Long\n\n{long_line}")["page_id"]
    app = make_app(store)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        app.basket.append({"page_id": page, "title": "Long", "namespace": "user:me"})
        await pilot.press("f3")
        await settle(app, pilot)
        await pilot.press("ctrl+r")
        await settle(app, pilot)
        text = app.screen.query_one("#preview-text")
        scroller = text.parent
        assert text.size.width <= scroller.scrollable_content_region.width
        assert scroller.max_scroll_x == 0  # nothing to the right of the pane
        assert text.region.right <= app.size.width and scroller.region.right <= app.size.width  # nor of the screen
        lines = [s.text for s in text.render_lines(__import__("textual.geometry", fromlist=["Region"]).Region(
            0, 0, text.size.width, text.size.height))]
        assert any("the-end-marker" in line for line in lines)


async def test_the_inspector_gives_lifecycle_reasons_marks_suppression_and_names_its_dates(demo_store, make_app):
    store, refs = demo_store
    store.suppress_pages([refs["alpha-bib"]], "chat:thesis", reason="not needed there")
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        box, notes = app.screen.query_one("#inspector-notes"), app.screen.query_one("#inspector-notes-text")
        await select_page(app, pilot, refs["alpha-bib"])
        assert box.display and "⊘ suppressed in chat:thesis (not needed there)" in str(notes.render())
        page_list(app).focus()
        await pilot.press("f")  # status all: the tombstoned and archived pages too
        await settle(app, pilot)
        await select_page(app, pilot, refs["alpha-todo"])
        reason = next(op["reason"] for op in __import__("pcp_tui.demo", fromlist=["x"]).demo_operations()
                      if op["op"] == "archive")
        assert box.display and f"“{reason}”" in str(notes.render()) and "archived by user:owner" in str(notes.render())
        await select_page(app, pilot, refs["me-prefs"])
        assert not box.display  # an active page with nothing to say
        await pilot.press("2")
        await settle(app, pilot)
        row = page_list(app).current
        note = str(app.screen.query_one("#dates-note").render())
        assert f"when it happened: {row['sort_time'][:10]}" in note or f"stored: {row['sort_time'][:10]}" in note
        history = app.screen.query_one("#history")
        assert "stored" in str(history.get_option_at_index(0).prompt)


async def test_a_long_lifecycle_reason_at_80x24_scrolls_in_its_box_and_a_short_one_is_no_tab_stop(demo_store, make_app):
    store, refs = demo_store
    reason = "duplicate of the other proof, tombstoned in the cleanup of old notes; " * 3 + "the last words"
    store.tombstone_page(refs["alpha-proof"], reason)
    app = make_app(store)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        page_list(app).focus()
        await pilot.press("f")  # status all: the tombstoned page too
        await settle(app, pilot)
        await select_page(app, pilot, refs["alpha-proof"])
        box = app.screen.query_one("#inspector-notes")
        assert box.display and box.size.height <= 4 and box.max_scroll_y > 0  # more than it shows
        await pilot.press("tab")
        assert app.screen.focused is box
        await pilot.press("end")
        await until(pilot, lambda: box.scroll_y == box.max_scroll_y, "the notes scrolled to their end")
        text = app.screen.query_one("#inspector-notes-text")
        shown = text.render_lines(Region(0, int(box.scroll_y), text.size.width, box.scrollable_content_region.height))
        assert "the last words" in " ".join(strip.text for strip in shown)
        # A page with a short note (the demo archives this one): tab goes past it.
        await select_page(app, pilot, refs["alpha-todo"])
        assert box.display and box.max_scroll_y == 0
        await pilot.press("tab")
        assert app.screen.focused is not box


async def test_a_message_in_a_dialog_at_80x24_is_a_line_above_its_keys_not_a_toast_over_them(demo_store, make_app):
    from pcp_tui.app import DialogNotice
    from pcp_tui.screens.revise import ReviseScreen

    store, refs = demo_store
    app = make_app(store)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await settle(app, pilot)
        await select_page(app, pilot, refs["me-reading"])
        await pilot.press("e")
        await settle(app, pilot)
        assert isinstance(app.screen, ReviseScreen)
        await pilot.press("ctrl+s")  # nothing changed
        await settle(app, pilot)
        assert not app._notifications  # no toast
        notice = app.screen.query_one(DialogNotice)
        keys = app.screen.query_one(".dialog-keys")
        buttons = app.screen.query_one(".dialog-buttons")
        assert "Nothing changed" in str(notice.render())
        screen = app.screen.region
        for widget in (notice, keys, buttons):
            assert screen.contains_region(widget.region), widget
        assert notice.region.y < keys.region.y and not notice.region.overlaps(buttons.region)
        app.clear_notifications()
        await until(pilot, lambda: not app.screen.query(DialogNotice), "the notice to go")


async def test_the_list_status_at_80x24_keeps_the_filters_and_the_order_in_its_two_rows(demo_store, make_app):
    store, _ = demo_store
    app = make_app(store)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        page_list(app).focus()
        await pilot.press("f")  # status all: the count says how many are tombstoned
        await settle(app, pilot)
        status = app.screen.query_one("#list-status")
        shown = drawn(status)
        assert status.size.height <= 2 and "status all" in shown and "by recent" in shown, shown
        assert "1 tombstoned" in shown, shown
        await pilot.press("f")  # archived: the long form fits
        await settle(app, pilot)
        shown = drawn(status)
        assert "by anyone" in shown and "by recent" in shown, shown
        await pilot.press("w")  # an author filter: always named, in the short form too
        await settle(app, pilot)
        await pilot.press("f", "f", "f", "f")  # archived -> superseded, tombstoned, active, all
        await settle(app, pilot)
        shown = drawn(status)
        assert "status all" in shown and f"by {app.screen.actor}" in shown, shown


async def test_a_toast_from_before_a_dialog_opened_does_not_cover_it(demo_store, make_app):
    from pcp_tui.screens.revise import ReviseScreen
    from textual.widgets._toast import Toast

    store, refs = demo_store
    app = make_app(store)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await settle(app, pilot)
        await select_page(app, pilot, refs["me-reading"])
        app.notify("A message from the main screen that is still up when the dialog opens.", timeout=30)
        await settle(app, pilot)
        assert any(t.visible for t in app.screen.query(Toast))  # on the main screen it shows
        await pilot.press("e")
        await settle(app, pilot)
        assert isinstance(app.screen, ReviseScreen)
        assert app.screen.query(Toast) and not any(t.visible for t in app.screen.query(Toast))
        await pilot.press("escape")
        await settle(app, pilot)
        assert any(t.visible for t in app.screen.query(Toast))  # and again after it


async def test_a_neighbour_that_is_not_active_says_so_in_the_relations_and_the_graph(demo_store, make_app):
    from helpers import prompts

    store, refs = demo_store  # the demo tombstones the wrong lemma, which the proof contradicts
    app = make_app(store)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        await open_in_tab(app, pilot, refs["alpha-proof"], "4")
        lemma = refs["alpha-wrong-lemma"][-6:]
        relations = [p for p in prompts(app.screen.query_one("#relation-list")) if lemma in p]
        assert relations and all("(tombstoned)" in p for p in relations), relations
        graph = [p for p in prompts(app.screen.query_one("#graph")) if "Lemma" in p]
        assert graph and all("(tombstoned)" in p for p in graph), graph
        assert not any("(tombstoned)" in p for p in prompts(app.screen.query_one("#relation-list"))
                       if lemma not in p)


async def test_a_dialog_message_goes_at_the_next_key(demo_store, make_app):
    from pcp_tui.app import DialogNotice
    from pcp_tui.screens.revise import ReviseScreen

    store, refs = demo_store
    app = make_app(store)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await select_page(app, pilot, refs["me-reading"])
        await pilot.press("e")
        await settle(app, pilot)
        assert isinstance(app.screen, ReviseScreen)
        await pilot.press("ctrl+s")  # nothing changed: said in the dialog
        await settle(app, pilot)
        assert app.screen.query(DialogNotice)
        await pilot.press("end")  # the next key: what it said was about the last one
        await settle(app, pilot)
        assert not app.screen.query(DialogNotice)
        await pilot.press("ctrl+s")  # and it says it again for this one
        await settle(app, pilot)
        assert "Nothing changed" in str(app.screen.query_one(DialogNotice).render())


async def test_the_relation_shown_in_full_goes_with_its_page(demo_store, make_app):
    store, refs = demo_store
    app = make_app(store)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await open_in_tab(app, pilot, refs["alpha-proof"], "4")
        relations = app.screen.query_one("#relation-list")
        relations.focus()
        await pilot.press("down")
        await settle(app, pilot)
        detail = app.screen.query_one("#relation-detail")
        shown = str(detail.render())
        assert shown.strip()
        await select_page(app, pilot, refs["me-prefs"])  # a page without relations
        assert app.screen.query_one("Inspector").page_id == refs["me-prefs"]
        assert not str(detail.render()).strip(), str(detail.render())


async def test_the_list_status_reads_the_same_for_the_same_state_and_takes_a_third_row_when_it_must(demo_store,
                                                                                                   make_app):
    store, _ = demo_store
    app = make_app(store)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        status = app.screen.query_one("#list-status")

        def shown() -> str:
            return drawn(status)

        first = shown()
        page_list(app).focus()
        for _ in range(3):  # the sort goes round (newest, oldest, title) and comes back
            await pilot.press("o")
            await settle(app, pilot)
        assert shown() == first, (first, shown())
        await pilot.press("f")  # status all, an author, and a selection: the short form needs three rows
        await pilot.press("w")
        await pilot.press("m")
        await settle(app, pilot)
        text = shown()
        assert "status all" in text and f"by {app.screen.actor}" in text and "by recent" in text, text
        assert status.size.height <= 3


async def test_a_date_that_is_not_one_keeps_the_date_dialog_open_with_what_was_typed(demo_store, make_app):
    from pcp_tui.app import DialogNotice
    from pcp_tui.screens.confirm import FormScreen

    store, _ = demo_store
    app = make_app(store)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        page_list(app).focus()
        await pilot.press("d")
        await settle(app, pilot)
        assert isinstance(app.screen, FormScreen)
        await pilot.press(*"2026-13-45")
        await pilot.press("ctrl+s")
        await settle(app, pilot)
        assert isinstance(app.screen, FormScreen)  # still open, the text still there
        assert app.screen.query_one("#field-after").value == "2026-13-45"
        assert "2026-13-45" in str(app.screen.query_one(DialogNotice).render())
        app.screen.query_one("#field-after").value = "2026-03-01"
        await pilot.press("ctrl+s")
        await settle(app, pilot)
        assert not isinstance(app.screen, FormScreen) and app.screen.dates == ("2026-03-01", "")


async def test_showing_the_sidebar_measures_the_list_status_again(demo_store, make_app):
    store, _ = demo_store
    app = make_app(store)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        status = app.screen.query_one("#list-status")

        def shown() -> str:
            return drawn(status)

        page_list(app).focus()
        await pilot.press("ctrl+b")  # the sidebar: the list's pane narrower
        await settle(app, pilot)
        narrow = shown()
        assert "by recent" in narrow, narrow
        await pilot.press("o", "o", "o")
        await settle(app, pilot)
        assert shown() == narrow
        await pilot.press("ctrl+b")
        await settle(app, pilot)
        wide = shown()
        await pilot.press("o", "o", "o")
        await settle(app, pilot)
        assert shown() == wide


async def test_f1_in_a_dialog_lists_only_the_app_keys_that_work_there(demo_store, make_app):
    from pcp_tui.screens.help import HelpScreen

    store, refs = demo_store
    app = make_app(store)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await select_page(app, pilot, refs["me-reading"])
        await pilot.press("e")
        await settle(app, pilot)
        await pilot.press("f1")
        await settle(app, pilot)
        assert isinstance(app.screen, HelpScreen)
        table = app.screen.query_one("#keys")
        keys = {str(table.get_row_at(i)[1]) for i in range(table.row_count)}
        assert "f1" in keys and "f2" not in keys and "f3" not in keys, keys


async def test_the_import_screen_at_80x24_keeps_toasts_off_its_buttons(demo_store, make_app):
    """F5 a moment after a copy on the handoff screen: its toast (8 s) covered the Import button. The import
    screen is a full screen drawn like a dialog: a toast from before is hidden while it is up, and a message
    while it is up is a line above its buttons."""
    from pcp_tui.app import DialogNotice
    from pcp_tui.screens.welcome import WelcomeScreen
    from textual.widgets._toast import Toast

    store, refs = demo_store
    app = make_app(store)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await settle(app, pilot)
        app.notify("For “GPT chat A”: sent to the terminal (OSC 52). File: /tmp/somewhere/handoff.md", timeout=8)
        await settle(app, pilot)
        assert any(t.visible for t in app.screen.query(Toast))
        await pilot.press("f5")
        await settle(app, pilot)
        assert isinstance(app.screen, WelcomeScreen)
        assert not any(t.visible for t in app.screen.query(Toast))
        app.notify("Something from elsewhere while the import screen is up.", severity="warning")
        await settle(app, pilot)
        notice = app.screen.query_one(DialogNotice)
        buttons = app.screen.query_one(".dialog-buttons")
        assert "from elsewhere" in str(notice.render())
        assert app.screen.region.contains_region(notice.region) and app.screen.region.contains_region(buttons.region)
        assert notice.region.y < buttons.region.y and not notice.region.overlaps(buttons.region)
        await pilot.press("a")  # the next key: the message goes
        await settle(app, pilot)
        assert not app.screen.query(DialogNotice)
        await pilot.press("escape")
        await settle(app, pilot)


async def test_o_with_a_search_or_a_date_filter_says_why_the_order_does_not_change(demo_store, make_app):
    """The order does not apply to search hits (relevance) or a date filter (newest first): `o` changed an order
    the status line did not show, and `o o` sent the cursor to the top."""
    store, _ = demo_store
    app = make_app(store)
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await settle(app, pilot)
        await type_into(app, pilot, "#search", "compact")
        await until(pilot, lambda: page_list(app).search_query == "compact", "the search after its debounce")
        await settle(app, pilot)
        page_list(app).focus()
        await pilot.press("down")
        await settle(app, pilot)
        cursor, order = page_list(app).cursor, app.screen.order
        assert cursor == 1
        await pilot.press("o")
        await settle(app, pilot)
        assert app.screen.order == order and page_list(app).cursor == cursor
        assert any("ranked by relevance" in s for s in said(app)), said(app)
        app.screen.query_one("#search").value = ""
        await until(pilot, lambda: not page_list(app).search_query, "the list after the search is emptied")
        await settle(app, pilot)
        assert not app.screen.query_text
        app.screen.dates = ("2026-01-01", "")
        app.screen.reload_pages()
        await settle(app, pilot)
        page_list(app).focus()
        await pilot.press("o")
        await settle(app, pilot)
        assert app.screen.order == order and any("newest first" in s for s in said(app))
        app.screen.dates = ("", "")
        app.screen.reload_pages()
        await settle(app, pilot)
        await pilot.press("o")
        await settle(app, pilot)
        assert app.screen.order != order  # and without them it orders the list


async def test_a_dialogs_key_line_has_one_space_before_its_dots(demo_store, make_app):
    """`f1 Keys  · Enter in the reason …`: the sentence after a dialog's keys had two spaces before its dot."""
    store, refs = demo_store
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        for keys in (["D"], ["l"], ["m", "D"]):  # delete, link, bulk delete
            await select_page(app, pilot, refs["alpha-proof"])
            await pilot.press(*keys)
            await settle(app, pilot)
            line = str(app.screen.query_one(".dialog-keys").render())
            assert "Keys · " in line and "  ·" not in line, (keys, line)
            await pilot.press("escape")
            await settle(app, pilot)
            if keys == ["m", "D"]:
                await pilot.press("escape")  # (the selection)


async def test_opening_the_demo_from_the_demo_says_so(demo_store, make_app):
    """f5's ctrl+d ("Open the demo") in the demo did nothing and said nothing."""
    store, _ = demo_store
    app = make_app(store)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await settle(app, pilot)
        app.demo_mode = True
        await pilot.press("f5")
        await settle(app, pilot)
        assert app.check_action("demo", ()) is False  # no "^d Demo" in the footer of the demo
        app.action_demo()  # (the palette's command)
        await settle(app, pilot)
        assert any("demo store already" in s for s in said(app)), said(app)


async def test_the_history_keys_and_the_audit_log_say_what_a_narrow_screen_would_hide(demo_store, make_app):
    """f/t with no revision highlighted did nothing and said nothing; a page of one revision was told to choose
    others; at 80x24 the audit log's decision column was out of sight (failed rows looked allowed)."""
    from pcp_tui.widgets.diff import ONLY_ONE, DiffView
    from textual.widgets import DataTable

    store, refs = demo_store
    app = make_app(store)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await settle(app, pilot)
        await open_in_tab(app, pilot, refs["alpha-outline"], "2")
        history = app.screen.query_one("#history")
        history.focus()
        history.highlighted = None
        await pilot.press("f")
        await settle(app, pilot)
        assert any("Highlight a revision first" in s for s in said(app)), said(app)
        one = store.write_page("notes:one", content="a page of one revision")["page_id"]
        app.announce_change()
        await settle(app, pilot)
        await open_in_tab(app, pilot, one, "2")
        await settle(app, pilot)
        assert " ".join(app.screen.query_one(DiffView).drawn_text.split()) == ONLY_ONE
        await pilot.press("f2")
        await settle(app, pilot)
        await pilot.press("3")
        await settle(app, pilot)
        table = app.screen.query_one("#audit-table", DataTable)
        labels = [str(c.label) for c in table.columns.values()]
        assert labels[:2] == ["time", "decision"], labels
        assert sum(c.get_render_width(table) for c in list(table.columns.values())[:2]) < 80


async def test_no_page_and_the_demos_own_import_screen_say_what_is_so(demo_store, make_app):
    """With no page selected the Revisions tab still said "Choose two revisions to compare."; in the demo, f5
    offered "Open the demo" and said "(your store is left alone)" of the demo store."""
    from pcp_tui.widgets.diff import DiffView
    from textual.widgets import Button

    store, refs = demo_store
    app = make_app(store)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await open_in_tab(app, pilot, refs["alpha-outline"], "2")
        app.screen.query_one("Inspector").show(None)
        await settle(app, pilot)
        assert app.screen.query_one(DiffView).drawn_text.strip() == "No page selected."
        app.demo_mode = True
        await pilot.press("f5")
        await settle(app, pilot)
        assert not app.screen.query_one("#demo", Button).display
        intro = str(app.screen.query_one("#welcome-intro").render())
        assert "Import into the demo store" in intro and "look around the demo" not in intro, intro
