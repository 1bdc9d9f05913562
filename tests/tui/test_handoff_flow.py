"""The handoff flow for daily use (issue 35): the label first and on its own key, known chats offered and picked,
the last chat remembered per store, the budget tried as it is typed, and a preview that never keeps an erased page."""

from __future__ import annotations

from helpers import said, select_page, settle, type_into, until
from pcp_tui.screens.confirm import ConfirmScreen
from pcp_tui.screens.handoff import HandoffScreen


async def _basket(app, pilot, *page_ids):
    for page_id in page_ids:
        await select_page(app, pilot, page_id)
        await pilot.press("space")
    await settle(app, pilot)


async def _open_handoff(app, pilot):
    await pilot.press("f3")
    await until(pilot, lambda: isinstance(app.screen, HandoffScreen), "the handoff screen")
    await settle(app, pilot)
    return app.screen


async def test_f3_opens_in_the_label_digits_are_text_and_ctrl_l_comes_back_to_it(demo_store, make_app):
    """Report 4: the label was up to 7 Tabs away, and digits typed on the way switched tabs."""
    store, refs = demo_store
    app = make_app(store)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await _basket(app, pilot, refs["alpha-outline"], refs["alpha-proof"])
        screen = await _open_handoff(app, pilot)
        label = screen.query_one("#label")
        assert screen.focused is label
        assert label.placeholder.startswith("e.g. ")  # a hint, not something that reads as a value
        await pilot.press("C", "h", "a", "t", " ", "2")
        await settle(app, pilot)
        assert label.value == "Chat 2" and screen.query_one("#handoff-tabs").active == "preview"
        screen.query_one("#basket").focus()
        await pilot.press("ctrl+l")
        await until(pilot, lambda: screen.focused is label, "ctrl+l to focus the label")


async def test_known_chats_are_offered_as_you_type_and_enter_on_a_ledger_row_picks_one(demo_store, make_app):
    """Report 5: a continuation worked only when the exact label was typed again from memory."""
    store, refs = demo_store
    store.copy(ids=[refs["garden-readme"]], label="ChatGPT: garden")
    store.copy(ids=[refs["alpha-outline"]], label="Claude: thesis")
    app = make_app(store)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await _basket(app, pilot, refs["garden-decision"])
        screen = await _open_handoff(app, pilot)
        await until(pilot, lambda: screen.chats == ["Claude: thesis", "ChatGPT: garden"], "the known chats, newest first")
        await pilot.press("c", "h", "a", "t")
        await settle(app, pilot)
        hint = screen.query_one("#chat-hint")
        assert "ChatGPT: garden" in str(hint.render()) and hint.display and hint.region.height >= 1
        await until(pilot, lambda: screen.query_one("#label")._suggestion == "ChatGPT: garden", "the completion")
        screen.query_one("#label").value = ""
        screen.query_one("#basket").focus()
        await pilot.press("2")  # the Ledger: every handoff, newest first
        table = screen.query_one("#ledger-table")
        await until(pilot, lambda: table.row_count == 2 and screen.focused is table, "the ledger rows")
        await pilot.press("down", "enter")  # the second row: the garden chat
        await until(pilot, lambda: screen.query_one("#label").value == "ChatGPT: garden", "the picked chat")
        await pilot.press("ctrl+o")
        await settle(app, pilot)
    handed = store.handoffs(label="ChatGPT: garden")["handoffs"]
    assert len(handed) == 2 and handed[0]["continuation_of"] == handed[1]["digest"]
    assert refs["garden-decision"] in app.clipboard


async def test_the_last_chat_is_remembered_per_store_and_continued_after_a_restart(demo_store, make_app, workdir):
    from store import Store

    store, refs = demo_store
    app = make_app(store)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await _basket(app, pilot, refs["alpha-outline"])
        screen = await _open_handoff(app, pilot)
        await type_into(app, pilot, "#label", "Claude walk")
        await pilot.press("ctrl+y")
        await until(pilot, lambda: len(store.handoffs(label="Claude walk")["handoffs"]) == 1, "the copy")
        await settle(app, pilot)
        await pilot.press("escape")  # closed: the label used to be forgotten here
        await settle(app, pilot)
        screen = await _open_handoff(app, pilot)
        assert screen.query_one("#label").value == "Claude walk"
    assert "Claude walk" in (workdir / "config" / "chats.toml").read_text(encoding="utf-8")
    app = make_app(store)  # a new run of the app on the same store
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await _basket(app, pilot, refs["alpha-proof"])
        screen = await _open_handoff(app, pilot)
        assert screen.query_one("#label").value == "Claude walk"
        assert screen.focused is not screen.query_one("#label")  # a chat is chosen: the next action is ^o
        await pilot.press("ctrl+o")
        await until(pilot, lambda: len(store.handoffs(label="Claude walk")["handoffs"]) == 2, "the continuation")
        await settle(app, pilot)
    other = Store.open(workdir / "other.db")
    try:
        other.write_page("project:x", content="# Elsewhere")
        app = make_app(other)
        async with app.run_test(size=(80, 24)) as pilot:
            await settle(app, pilot)
            screen = await _open_handoff(app, pilot)
            assert screen.query_one("#label").value == ""  # the remembered chat is this store's, not every store's
    finally:
        other.close()


async def test_the_budget_is_tried_as_it_is_typed_and_a_copy_never_asks_to_confirm_what_would_fail(demo_store, make_app):
    """Report 4: the copy asked to confirm, and only then said a 1-token budget could not hold the bundle."""
    store, refs = demo_store
    app = make_app(store)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await _basket(app, pilot, refs["alpha-outline"], refs["alpha-proof"])
        screen = await _open_handoff(app, pilot)
        await type_into(app, pilot, "#label", "Claude: budget")
        await type_into(app, pilot, "#budget", "1")
        note = screen.query_one("#budget-note")
        await until(pilot, lambda: "cannot hold" in str(note.render()), "the budget note")
        await settle(app, pilot)
        assert note.display and note.region.height >= 1  # on screen, under the field
        await pilot.press("ctrl+y")
        await settle(app, pilot)
        assert not isinstance(app.screen, ConfirmScreen)
        assert any("cannot hold" in s for s in said(app)), said(app)
        assert screen.focused is screen.query_one("#budget")
        assert store.handoffs(label="Claude: budget")["handoffs"] == []
        await pilot.press("backspace", *"4000")
        await until(pilot, lambda: str(note.render()) == "" and screen.budget_checked == "4000", "the budget to hold")
        await pilot.press("ctrl+y")  # the same scope, no warning: the copy goes without a question
        await until(pilot, lambda: len(store.handoffs(label="Claude: budget")["handoffs"]) == 1, "the copy")


async def test_a_page_erased_by_another_process_leaves_the_handoff_preview(demo_store, make_app):
    """Report 3: the basket emptied, the preview kept the erased text."""
    from store import Store

    store, refs = demo_store
    app = make_app(store, watch_interval=0.05)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        await _basket(app, pilot, refs["alpha-bib"], refs["alpha-outline"])
        screen = await _open_handoff(app, pilot)
        await pilot.press("ctrl+r")
        text = screen.query_one("#preview-text")
        await until(pilot, lambda: "Munkres" in str(text.render()), "the preview")
        other = Store.open(store.path)
        try:
            other.delete_page(refs["alpha-bib"], "erased by the CLI")
        finally:
            other.close()
        await until(pilot, lambda: "Munkres" not in str(text.render())
                    and "Munkres" not in str(screen.query_one("#preview-summary").render()), "the erased text to go")
        await until(pilot, lambda: [b["page_id"] for b in app.basket] == [refs["alpha-outline"]], "the basket")
        # the preview is built again for what is left
        await until(pilot, lambda: screen.preview is not None and len(screen.preview["entries"]) == 1, "a new preview")
        assert refs["alpha-bib"] not in str(screen.query_one("#preview-summary").render())


async def test_a_label_typed_right_before_ctrl_y_is_copied_whole(demo_store, make_app):
    """ctrl+y is a priority binding: with the label's last keys read in the same moment (a fast typist, or one
    read of the terminal), the copy took the label without them and recorded a chat of that cut name."""
    from textual import events

    store, refs = demo_store
    app = make_app(store)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await _basket(app, pilot, refs["alpha-outline"])
        screen = await _open_handoff(app, pilot)
        await type_into(app, pilot, "#label", "Claude fa")
        for key, char in (("s", "s"), ("t", "t"), ("ctrl+y", None)):  # as the driver posts keys read at once
            app.post_message(events.Key(key, char))
        await until(pilot, lambda: store.handoffs()["handoffs"], "the copy")
        await settle(app, pilot)
        assert [h["label"] for h in store.handoffs()["handoffs"]] == ["Claude fast"]
        assert screen.query_one("#label").value == "Claude fast"
