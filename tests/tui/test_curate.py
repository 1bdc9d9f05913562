"""Curating from the app: each action path changes the store (and a cancelled one changes nothing)."""

from __future__ import annotations

import pytest
from store import NotFound

from helpers import audit_since, page_list, said, select_page, settle, type_into, until
from pcp_tui.screens.confirm import ConfirmScreen
from pcp_tui.screens.delete import DeleteScreen
from pcp_tui.screens.link import LinkScreen
from pcp_tui.screens.revise import ReviseScreen
from pcp_tui.widgets.fields import Editor

SIZE = (120, 40)


def status_of(store, page_id):
    return store.read_pages([page_id], projections=("manifest",))["results"][0]["revision"]["lifecycle_status"]


def head_of(store, page_id):
    return store.read_pages([page_id])["results"][0]["revision"]


async def test_archive_asks_first_and_a_cancel_changes_nothing(demo_store, make_app):
    store, refs = demo_store
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await select_page(app, pilot, refs["alpha-bib"])
        await pilot.press("a")
        await settle(app, pilot)
        assert isinstance(app.screen, ConfirmScreen)
        assert app.screen.focused.id == "field-reason"  # a dialog with a text field starts in the field
        await pilot.press("escape")
        await settle(app, pilot)
        assert not isinstance(app.screen, ConfirmScreen)
        assert status_of(store, refs["alpha-bib"]) == "active"
        await pilot.press("a")
        await settle(app, pilot)
        await pilot.press("ctrl+s")
        await settle(app, pilot)
        assert status_of(store, refs["alpha-bib"]) == "archived"
        # the list shows active pages: the archived one leaves it (issue 13.5)
        assert refs["alpha-bib"] not in {r["page_id"] for r in page_list(app).rows}
        await pilot.press("f")  # status all
        await settle(app, pilot)
        await select_page(app, pilot, refs["alpha-bib"])
        assert page_list(app).current["lifecycle_status"] == "archived"
        await pilot.press("a", "enter")  # archived -> restore; Enter in the (only) field confirms
        await settle(app, pilot)
        assert status_of(store, refs["alpha-bib"]) == "active"


async def test_tombstone_and_untombstone(demo_store, make_app):
    store, refs = demo_store
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await select_page(app, pilot, refs["garden-idea"])
        await pilot.press("t")
        await settle(app, pilot)
        assert "withdrawn from every search" in str(app.screen.query_one(".dialog-body").render())
        await pilot.press("escape")
        await settle(app, pilot)
        assert status_of(store, refs["garden-idea"]) == "active"
        await pilot.press("t", "ctrl+s")
        await settle(app, pilot)
        assert status_of(store, refs["garden-idea"]) == "tombstoned"
        assert refs["garden-idea"] not in [h["page_id"] for h in store.search_pages("sensor")["hits"]]
        assert refs["garden-idea"] not in {r["page_id"] for r in page_list(app).rows}  # it left the active list
        await pilot.press("f", "f", "f", "f")  # status tombstoned
        await settle(app, pilot)
        await select_page(app, pilot, refs["garden-idea"])
        await pilot.press("t", "ctrl+s")
        await settle(app, pilot)
        assert status_of(store, refs["garden-idea"]) == "active"


async def test_typing_in_a_dialog_never_triggers_an_action(demo_store, make_app):
    """Issue 13.3: "no way" typed into the suppress dialog closed it, sorted, filled the basket, archived."""
    store, refs = demo_store
    page = refs["garden-readme"]
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await select_page(app, pilot, page)
        await pilot.press("s")
        await settle(app, pilot)
        dialog = app.screen
        assert dialog.focused.id == "field-context"
        app.screen.focused.value = ""
        await pilot.press(*"no way, yes")
        await settle(app, pilot)
        assert app.screen is dialog, "typing letters kept the dialog open"
        assert dialog.query_one("#field-context").value == "no way, yes"
        assert app.basket == [] and app.screen_stack[1].order == "recent"
        await pilot.press("enter")  # the first field: Enter moves on to the reason, it does not close
        assert app.screen is dialog and dialog.focused.id == "field-reason"
        await pilot.press("enter")  # the last field: Enter confirms (it never presses Cancel)
        await settle(app, pilot)
        assert app.screen is not dialog
    assert status_of(store, page) == "active"
    assert page not in {h["page_id"] for h in store.search_pages("watering", context_id="no way, yes")["hits"]}


async def test_the_delete_dialog_starts_in_the_id_field(demo_store, make_app):
    store, refs = demo_store
    page = refs["alpha-bib"]
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await select_page(app, pilot, page)
        await pilot.press("D")
        await settle(app, pilot)
        assert app.screen.focused.id == "typed"
        await pilot.press(*page[-6:], "enter")
        assert app.screen.focused.id == "reason"
        await pilot.press("enter")  # Enter in the reason presses "Delete for good" once the id is typed
        await settle(app, pilot)
        assert isinstance(app.screen, DeleteScreen) and app.screen.receipt is not None
    assert store.list_receipts()["receipts"][0]["page_ids"] == [page]


async def test_suppress_for_one_context(demo_store, make_app):
    store, refs = demo_store
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await select_page(app, pilot, refs["garden-readme"])
        await pilot.press("s")
        await settle(app, pilot)
        await type_into(app, pilot, "#field-context", "chat-42")
        await pilot.press("y")  # typed into the field: y is a letter there
        app.screen.query_one("#confirm").focus()
        await pilot.press("enter")
        await settle(app, pilot)
    found = {h["page_id"] for h in store.search_pages("watering", context_id="chat-42y")["hits"]}
    assert refs["garden-readme"] not in found
    assert refs["garden-readme"] in {h["page_id"] for h in store.search_pages("watering")["hits"]}
    assert status_of(store, refs["garden-readme"]) == "active"  # suppression is not a lifecycle change


async def test_revise_writes_a_new_revision(demo_store, make_app):
    store, refs = demo_store
    before = head_of(store, refs["me-reading"])
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await select_page(app, pilot, refs["me-reading"])
        await pilot.press("e")
        await settle(app, pilot)
        assert isinstance(app.screen, ReviseScreen)
        editor = app.screen.query_one(Editor)
        editor.move_cursor(editor.document.end)
        await pilot.press(*"- Halmos", "enter")
        await pilot.press("ctrl+s")
        await settle(app, pilot)
        assert not isinstance(app.screen, ReviseScreen)
    after = head_of(store, refs["me-reading"])
    assert after["revision_id"] != before["revision_id"]
    assert after["previous_revision_id"] == before["revision_id"]
    assert after["payload"]["content"].rstrip().endswith("- Halmos")


async def test_a_revise_conflict_keeps_the_draft(demo_store, make_app):
    store, refs = demo_store
    page = refs["me-prefs"]
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await select_page(app, pilot, page)
        await pilot.press("e")
        await settle(app, pilot)
        editor = app.screen.query_one(Editor)
        editor.text = "my draft, written while someone else revised"
        # Someone else (another process, a model client) revises the page meanwhile.
        other = store.revise_page(page, head_of(store, page)["revision_id"], content="the other change")
        await pilot.press("ctrl+s")
        await settle(app, pilot)
        assert isinstance(app.screen, ReviseScreen), "the dialog stays open on a conflict"
        assert app.screen.conflicted and app.screen.query_one("#conflict").display
        assert app.screen.query_one(Editor).text == "my draft, written while someone else revised"
        assert head_of(store, page)["revision_id"] == other["revision_id"]  # nothing of ours was written
        await pilot.press("ctrl+s")  # saving again puts the draft on top of the new head
        await settle(app, pilot)
        assert not isinstance(app.screen, ReviseScreen)
    head = head_of(store, page)
    assert head["previous_revision_id"] == other["revision_id"]
    assert head["payload"]["content"] == "my draft, written while someone else revised"


async def test_link_to_a_page_picked_by_search(demo_store, make_app):
    store, refs = demo_store
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await select_page(app, pilot, refs["me-reading"])
        await pilot.press("l")
        await settle(app, pilot)
        assert isinstance(app.screen, LinkScreen)
        await type_into(app, pilot, "#find", "Bibliography")
        await pilot.press("enter")
        await settle(app, pilot)
        await pilot.press("down", "enter")
        await settle(app, pilot)
        await pilot.press("ctrl+s")
        await settle(app, pilot)
        assert not isinstance(app.screen, LinkScreen)
    rels = store.read_pages([refs["me-reading"]], projections=("relations",))["results"][0]["relations"]
    assert [(r["relation_type"], r["to_page_id"]) for r in rels["outgoing"]] == [("related_to", refs["alpha-bib"])]


async def test_link_enter_in_the_results_picks_the_first_at_80x24(demo_store, make_app):
    """The keys line says Enter in the results picks a page: when the results land the first is highlighted, so
    Enter (search), Enter (pick) chooses it, with no Down first."""
    store, refs = demo_store
    app = make_app(store)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await select_page(app, pilot, refs["me-reading"])
        await pilot.press("l")
        await settle(app, pilot)
        assert "Enter in the results picks a page" in str(app.screen.query_one(".dialog-keys").render())
        await type_into(app, pilot, "#find", "tube")
        await pilot.press("enter")
        await settle(app, pilot)
        hits = app.screen.query_one("#hits")
        assert hits.option_count >= 1 and hits.get_option_at_index(0).id
        first = hits.get_option_at_index(0).id
        await pilot.press("enter")
        await settle(app, pilot)
        assert "Link to:" in str(app.screen.query_one("#chosen").render()), str(app.screen.query_one("#chosen").render())
        assert first in str(app.screen.query_one("#chosen").render())
        await pilot.press("ctrl+s")
        await settle(app, pilot)
        assert not isinstance(app.screen, LinkScreen)
    rels = store.read_pages([refs["me-reading"]], projections=("relations",))["results"][0]["relations"]
    assert [(r["relation_type"], r["to_page_id"]) for r in rels["outgoing"]] == [("related_to", first)]


async def test_cancelled_delete_changes_nothing(demo_store, make_app):
    store, refs = demo_store
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await select_page(app, pilot, refs["alpha-bib"])
        await pilot.press("D")
        await settle(app, pilot)
        assert isinstance(app.screen, DeleteScreen)
        assert "Erases 1 page:" in str(app.screen.query_one("#plan").render())
        await type_into(app, pilot, "#typed", "WRONG1")
        assert app.screen.query_one("#confirm").disabled
        await pilot.press("escape")
        await settle(app, pilot)
        assert not isinstance(app.screen, DeleteScreen)
    assert head_of(store, refs["alpha-bib"])["page_id"] == refs["alpha-bib"]
    assert store.list_receipts()["receipts"] == []


async def test_confirmed_delete_erases_and_shows_the_receipt(demo_store, make_app):
    store, refs = demo_store
    page = refs["alpha-bib"]
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await select_page(app, pilot, page)
        await pilot.press("D")
        await settle(app, pilot)
        assert f"last 6 characters of {page}" in str(app.screen.query_one("#typed-label").render())
        await type_into(app, pilot, "#typed", page[-6:])
        assert not app.screen.query_one("#confirm").disabled
        app.screen.query_one("#confirm").focus()
        await pilot.press("enter")
        await settle(app, pilot)
        assert isinstance(app.screen, DeleteScreen)
        receipt = store.list_receipts()["receipts"][0]
        shown = str(app.screen.query_one("#plan").render())
        assert receipt["receipt_id"] in shown and "Deleted." in shown
        await pilot.press("escape")
        await settle(app, pilot)
        assert page not in [r["page_id"] for r in page_list(app).rows]
    with pytest.raises(NotFound):
        store.read_pages([page])
    assert receipt["page_ids"] == [page]


async def test_delete_can_cascade_to_derived_pages(demo_store, make_app):
    store, refs = demo_store
    page = refs["alpha-proof"]  # the model-written summary derives from it
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await select_page(app, pilot, page)
        await pilot.press("D")
        await settle(app, pilot)
        assert "derived from it" in str(app.screen.query_one("#plan").render())
        await pilot.press("ctrl+k")
        await settle(app, pilot)
        assert "Erases 2 pages:" in str(app.screen.query_one("#plan").render())
        await type_into(app, pilot, "#typed", page[-6:])
        app.screen.query_one("#confirm").focus()
        await pilot.press("enter")
        await settle(app, pilot)
        await pilot.press("escape")
        await settle(app, pilot)
    for gone in (page, refs["alpha-summary"]):
        with pytest.raises(NotFound):
            store.read_pages([gone])


async def test_revise_in_editor_suspends_the_app_and_reads_the_draft_back(demo_store, make_app, monkeypatch):
    import contextlib
    import sys

    store, refs = demo_store
    editor = f"{sys.executable} -c \"import sys; open(sys.argv[1], 'a').write('from the editor')\""
    monkeypatch.setenv("VISUAL", editor)
    app = make_app(store)
    suspended = []

    @contextlib.contextmanager
    def suspend():  # a headless run has no terminal to hand over; record that the app would
        suspended.append(True)
        yield

    monkeypatch.setattr(app, "suspend", suspend)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await select_page(app, pilot, refs["me-reading"])
        await pilot.press("E")
        await settle(app, pilot)
        assert suspended and app.screen.query_one(Editor).text.endswith("from the editor")
        await pilot.press("ctrl+s")
        await settle(app, pilot)
    assert head_of(store, refs["me-reading"])["payload"]["content"].endswith("from the editor")


async def test_an_editor_that_cannot_start_returns_to_the_app_with_a_message(demo_store, make_app, monkeypatch):
    """Issue 13.2: the exception left app.suspend() without resuming, so the screen stayed blank."""
    import contextlib

    store, refs = demo_store
    events: list[str] = []

    @contextlib.contextmanager
    def suspend():  # shaped like App.suspend: it resumes only when the block ends normally
        events.append("suspended")
        yield
        events.append("resumed")

    app = make_app(store)
    monkeypatch.setattr(app, "suspend", suspend)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await settle(app, pilot)
        await select_page(app, pilot, refs["me-reading"])
        draft = head_of(store, refs["me-reading"])["payload"]["content"]
        for editor, words in (("/nonexistent/pcp-editor --wait", "could not start"),
                             ("false", "exited with status 1")):
            monkeypatch.setenv("VISUAL", editor)
            events.clear()
            await pilot.press("E")
            await settle(app, pilot)
            assert events == ["suspended", "resumed"], editor
            assert isinstance(app.screen, ReviseScreen)
            assert app.screen.query_one(Editor).text == draft
            assert any(words in n for n in said(app)), said(app)
            await pilot.press("escape")
            await settle(app, pilot)


async def test_revise_without_a_change_writes_nothing_and_an_empty_title_is_refused(demo_store, make_app):
    """Issue 13.7: an unchanged save wrote an identical revision; a cleared title left the list showing the id."""
    store, refs = demo_store
    page = refs["me-reading"]
    before = head_of(store, page)
    app = make_app(store)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await settle(app, pilot)
        await select_page(app, pilot, page)
        await pilot.press("e")
        await settle(app, pilot)
        await pilot.press("ctrl+s")
        await settle(app, pilot)
        assert isinstance(app.screen, ReviseScreen)
        assert any("Nothing changed" in n for n in said(app))
        app.screen.query_one("#title").value = "   "
        await pilot.press("ctrl+s")
        await settle(app, pilot)
        assert isinstance(app.screen, ReviseScreen)
        assert any("needs its title" in n for n in said(app))
        await pilot.press("escape")
        await settle(app, pilot)
    assert head_of(store, page)["revision_id"] == before["revision_id"]


async def test_unlink_and_unsuppress_from_the_app(demo_store, make_app):
    from pcp_tui.widgets.relations import RelationList

    store, refs = demo_store
    page = refs["alpha-proof"]
    outgoing = store.read_pages([page], projections=("relations",))["results"][0]["relations"]["outgoing"]
    store.suppress_pages([page], "chat-9", reason="not here")
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await select_page(app, pilot, page)
        await pilot.press("4")
        await settle(app, pilot)
        relations = app.screen.query_one(RelationList)
        relations.focus()
        relations.highlighted = next(i for i in range(relations.option_count)
                                     if relations.get_option_at_index(i).id in relations.relations)
        gone = relations.highlighted_relation
        await pilot.press("U")
        await settle(app, pilot)
        assert isinstance(app.screen, ConfirmScreen) and "Retract" in str(app.screen.title_text)
        await pilot.press("ctrl+s")
        await settle(app, pilot)
        await pilot.press("S")
        await settle(app, pilot)
        await type_into(app, pilot, "#field-context", "chat-9")
        await pilot.press("enter")
        await settle(app, pilot)
    now = store.read_pages([page], projections=("relations",))["results"][0]["relations"]
    ids_now = {r["relation_id"] for d in ("outgoing", "incoming") for r in now[d]}
    assert gone["relation_id"] not in ids_now and len(outgoing) >= 1
    assert page in {h["page_id"] for h in store.search_pages("tube lemma", context_id="chat-9", limit=50)["hits"]}


async def test_a_delete_leaves_no_failed_read_of_the_erased_page_in_the_audit_log(demo_store, make_app):
    """The inspector read the page it showed back after erasing it: a `read_pages … failed (not_found)` line in
    the owner's audit log for every delete."""
    store, refs = demo_store
    page = refs["alpha-bib"]
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await select_page(app, pilot, page)
        await pilot.press("D")
        await settle(app, pilot)
        await type_into(app, pilot, "#typed", page[-6:])
        app.screen.query_one("#confirm").focus()
        await pilot.press("enter")
        await settle(app, pilot)
        await pilot.press("escape")
        await settle(app, pilot)
        assert page_list(app).current["page_id"] != page
    failed = [e for e in store.audit_log(limit=50)["events"] if e.get("decision") != "allowed"]
    assert not failed, failed


@pytest.mark.parametrize("how", ["one", "bulk"])
async def test_a_change_noticed_while_a_delete_runs_reads_no_erased_page_back(demo_store, make_app, monkeypatch, how):
    """The store watcher noticed the delete (about once a second) while the dialog was still up and the
    inspector read its erased page back: a `read_pages … failed (not_found)` in the audit log (tmux walk)."""
    store, refs = demo_store
    page = refs["alpha-bib"]
    app = make_app(store)
    name = "delete_page" if how == "one" else "run_bulk_delete"
    real = getattr(store, name)

    def noticed(*args, **kwargs):
        done = real(*args, **kwargs)
        app.call_from_thread(app.announce_change, None, True, external=True)  # the watcher, right after
        return done

    monkeypatch.setattr(store, name, noticed)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await select_page(app, pilot, page)
        if how == "bulk":
            await pilot.press("m")
            await select_page(app, pilot, page)
        mark = store.audit_log(limit=1)["events"][0]["event_id"]
        await pilot.press("D")
        await settle(app, pilot)
        await type_into(app, pilot, "#typed", page[-6:] if how == "one" else "1")
        app.screen.query_one("#confirm").focus()
        await pilot.press("enter")
        await settle(app, pilot)
        assert app.screen.receipt is not None  # the receipt is up
        await pilot.press("escape")
        await settle(app, pilot)
    events = audit_since(store, mark)
    assert not [e for e in events if e["decision"] != "allowed"], events


async def test_the_revise_box_opens_with_the_cursor_after_the_text(demo_store, make_app):
    """Report 21: the cursor was at the very start, so what was typed at once went before the page's title."""
    store, refs = demo_store
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await select_page(app, pilot, refs["me-reading"])
        await pilot.press("e")
        await until(pilot, lambda: isinstance(app.screen, ReviseScreen), "the revise dialog")
        await settle(app, pilot)
        await pilot.press(*"Added")
        editor = app.screen.query_one(Editor)
        assert editor.text.endswith("Added") and not editor.text.startswith("Added")


EDITOR_REPORT = (
    "import json, os, stat, sys; p = sys.argv[1]; open(p, 'a').write('from the editor'); "
    "json.dump({'path': p, 'mode': stat.S_IMODE(os.stat(p).st_mode), "
    "'folder_mode': stat.S_IMODE(os.stat(os.path.dirname(p)).st_mode), 'argv': sys.argv, 'env': dict(os.environ)}, "
    "open(os.environ['PCP_TEST_EDITOR_REPORT'], 'w'))"
)


@pytest.mark.parametrize("store_kind", ["encrypted"], indirect=True)
async def test_an_encrypted_stores_editor_draft_is_0600_on_a_tmpfs_and_removed_after(demo_store, make_app,
                                                                                     monkeypatch, workdir):
    import contextlib
    import json
    import sys
    from pathlib import Path

    from store import crypt

    from pcp_tui.encrypt import tmpfs_folder

    store, refs = demo_store
    shm = tmpfs_folder()
    if shm is None:
        pytest.skip("no tmpfs on this machine (the refusal is tested below)")
    report = workdir / "editor.json"
    monkeypatch.setenv("PCP_TEST_EDITOR_REPORT", str(report))
    monkeypatch.setenv("VISUAL", f"{sys.executable} -c \"{EDITOR_REPORT}\"")
    app = make_app(store)

    @contextlib.contextmanager
    def suspend():
        yield

    monkeypatch.setattr(app, "suspend", suspend)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await select_page(app, pilot, refs["me-reading"])
        await pilot.press("E")
        await settle(app, pilot)
        assert app.screen.query_one(Editor).text.endswith("from the editor")
    seen = json.loads(report.read_text())
    draft = Path(seen["path"])
    assert draft.parent.parent == shm and seen["mode"] == 0o600 and seen["folder_mode"] == 0o700
    assert not draft.exists() and not draft.parent.exists()
    key = crypt.cached_key(store.path)
    assert key is not None
    blob = json.dumps(seen["argv"]) + json.dumps(seen["env"])
    assert key.hex() not in blob and key.hex().upper() not in blob


@pytest.mark.parametrize("store_kind", ["encrypted"], indirect=True)
async def test_without_a_tmpfs_an_encrypted_stores_editor_refuses_in_one_line(demo_store, make_app, monkeypatch,
                                                                              workdir):
    import sys

    from pcp_tui import encrypt

    store, refs = demo_store
    monkeypatch.setattr(encrypt, "tmpfs_folder", lambda: None)
    report = workdir / "editor.json"
    monkeypatch.setenv("PCP_TEST_EDITOR_REPORT", str(report))
    monkeypatch.setenv("VISUAL", f"{sys.executable} -c \"{EDITOR_REPORT}\"")
    app = make_app(store)
    notes: list[str] = []
    monkeypatch.setattr(app, "notify", lambda message, **kw: notes.append(str(message)))
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await select_page(app, pilot, refs["me-reading"])
        await pilot.press("E")
        await settle(app, pilot)
    assert not report.exists()
    refusal = [n for n in notes if "encrypted" in n]
    assert len(refusal) == 1 and "\n" not in refusal[0] and "tmpfs" in refusal[0]


@pytest.mark.parametrize("key, action", [("e", "revise"), ("s", "suppress"), ("a", "archive"), ("D", "delete")])
async def test_a_key_pressed_as_the_cursor_moves_never_acts_on_the_page_before(demo_store, make_app, key, action):
    """The walk (issue 35): `e` or `s` typed right after `j` opened the dialog on the previous page, the one the
    inspector had last read. Here the cursor's move and the key come in one tick (the read of the new page has not
    landed): the key says the page is still being read and opens nothing; pressed again once it is read, it acts
    on the page under the cursor."""
    from pcp_tui.widgets.inspector import Inspector

    store, refs = demo_store
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await select_page(app, pilot, refs["me-reading"])
        other = refs["alpha-bib"]
        main = app.screen
        main.query_one(Inspector).show(other)  # what the list's highlight does when the cursor moves onto it
        await main.run_action(action)  # the key's action, in the same tick as the move
        await settle(app, pilot)
        assert app.screen is main, f"{key} opened a dialog for the page the cursor had left"
        assert any("still being read" in s for s in said(app))
        await pilot.press(key)
        await until(pilot, lambda: app.screen is not main, f"{key}'s dialog")
        await settle(app, pilot)
        shown = " ".join(str(w.render()) for w in app.screen.query("Static"))
        title = head_of(store, other)["facets"].get("title", "")
        assert other in shown or (title and title in shown), shown[:300]
        assert refs["me-reading"] not in shown


async def test_the_last_key_typed_before_ctrl_s_is_in_the_revision(demo_store, make_app):
    """tmux's send-keys "x" C-s (one read of the terminal: two keys at once) saved "Nothing changed": ctrl+s is a
    priority binding, handled by the app before the editor had taken the x waiting in its queue. A fast typist's
    last key must never be left out of what is saved."""
    from textual import events

    store, refs = demo_store
    before = head_of(store, refs["me-reading"])
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await select_page(app, pilot, refs["me-reading"])
        await pilot.press("e")
        await until(pilot, lambda: isinstance(app.screen, ReviseScreen), "the revise dialog")
        await settle(app, pilot)
        editor = app.screen.query_one(Editor)
        editor.focus()
        editor.move_cursor(editor.document.end)
        await settle(app, pilot)
        for key, char in (("x", "x"), ("ctrl+s", None)):  # as the driver posts two keys read at once
            app.post_message(events.Key(key, char))
        await until(pilot, lambda: not isinstance(app.screen, ReviseScreen), "the dialog to close on saving")
        await settle(app, pilot)
    after = head_of(store, refs["me-reading"])
    assert after["revision_id"] != before["revision_id"], "no revision was written"
    assert after["payload"]["content"] == before["payload"]["content"] + "x"


async def test_a_cursor_move_and_e_read_at_once_never_revise_the_page_left(demo_store, make_app):
    """tmux's send-keys Down e (one read of the terminal): the list moved its cursor, but its message naming the
    new page reached the screen after e's binding had run, so the dialog opened on the page the cursor had left."""
    from textual import events

    store, refs = demo_store
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await select_page(app, pilot, refs["me-reading"])
        left = head_of(store, refs["me-reading"])["facets"]["title"]
        main, rows = app.screen, page_list(app)
        for key, char in (("down", None), ("e", "e")):  # as the driver posts two keys read at once
            app.post_message(events.Key(key, char))
        await settle(app, pilot)
        under = rows.current
        assert under["page_id"] != refs["me-reading"]
        if app.screen is main:  # the key came before the page under the cursor was read: it said so
            assert any("still being read" in s for s in said(app))
        else:
            shown = " ".join(str(w.render()) for w in app.screen.query("Static"))
            assert left not in shown and under["title"] in shown, shown[:200]
