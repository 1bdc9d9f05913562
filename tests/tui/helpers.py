"""Small helpers for driving the app in Pilot tests."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from time import monotonic

from waits import WAIT_LIMIT

from pcp_tui.widgets.page_list import PageList


async def until(pilot, condition: Callable[[], object], what: str = "", limit: float = WAIT_LIMIT) -> bool:
    """Let the app run until `condition()` is true; fail, naming `what`, if it is not true within `limit` s.

    The one wait of the app tests: never a number of pauses or a fixed sleep (both race a loaded machine).
    """
    deadline = monotonic() + limit
    while not condition():
        if monotonic() > deadline:
            raise AssertionError(f"waited {limit:.0f} s for {what or 'a condition'}, in vain")
        await pilot.pause(0.01)  # wait-helper: the app runs between two looks at the condition
    return True


async def settle(app, pilot, limit: float = WAIT_LIMIT, failures_ok: bool = False) -> None:
    """Let workers finish and their answers land, until no worker is left (answers may start new workers).

    The store watcher runs until the app ends: every other worker is waited for. A worker that failed fails
    the test, unless `failures_ok` (a test of how the app reports a failure)."""
    from textual.worker import WorkerCancelled, WorkerFailed

    deadline = monotonic() + limit
    while True:
        others = [w for w in app.workers if w.group != "watch"]
        if others:  # (an empty list would mean "every worker" to wait_for_complete)
            try:
                await app.workers.wait_for_complete(others)
            except WorkerCancelled:
                pass  # superseded by a newer worker of its group (exclusive): the loop waits for that one
            except WorkerFailed:
                if not failures_ok:
                    raise
        await pilot.pause()  # wait-helper: every message queued so far is handled (no time passes on purpose)
        if not app.is_running:  # it ended (a key quit it): no layout will ever be done, nothing is left to wait for
            return
        if (not any(w.group != "watch" for w in app.workers) and not _tables_unsized(app) and not _layout_due(app)
                and not _messages_queued(app)):
            return
        if monotonic() > deadline:
            raise AssertionError(f"waited {limit:.0f} s for the app's workers to settle, in vain")


def _messages_queued(app) -> bool:
    """A node of the screen still has messages to handle: a pause handles what was queued when it began, not what
    those messages post on the way (a DataTable's RowHighlighted bubbles through each parent's queue before a
    screen fills its detail line)."""
    return any(node.message_queue_size for node in (app, *app.screen.walk_children(with_self=True)))


def _layout_due(app) -> bool:
    """The screen has a layout (or a scroll) to do: it does it on its update timer, which under load came after
    settle() returned (a test counting layout passes from then on saw the one that ctrl+s asked for)."""
    screen = app.screen
    return bool(screen._layout_required or screen._scroll_required)


def _tables_unsized(app) -> bool:
    """A DataTable on screen has rows whose column widths it has not worked out yet: it does that when the app
    is next idle, which under load came after a snapshot was taken (columns drawn cut). Textual has no public
    flag for it."""
    from textual.widgets import DataTable

    return any(table._require_update_dimensions for table in app.screen.query(DataTable))


def said(app) -> list[str]:
    """What the app is saying now: its toasts and the notices in an open dialog (which has no toasts, they
    would cover its keys)."""
    from pcp_tui.app import DialogNotice

    return [str(n.message) for n in app._notifications] + [
        str(notice.render()) for screen in app.screen_stack for notice in screen.query(DialogNotice)]


def audit_since(store, mark: str) -> list[dict]:
    """The owner's audit events newer than the event `mark` (an event_id), newest first."""
    events = []
    for event in store.audit_log(limit=100)["events"]:
        if event["event_id"] == mark:
            break
        events.append(event)
    return events


def drawn(widget) -> str:
    """A widget's rows as drawn (what fits its height; a cut row is not there), joined by spaces."""
    return " ".join(strip.text.strip() for strip in widget.render_lines(widget.content_region.reset_offset))


def page_list(app) -> PageList:
    return app.screen.query_one(PageList)


async def select_page(app, pilot, page_id: str) -> None:
    """Put the page-list cursor next to a page, then step onto it with a key (as a person would)."""
    rows = page_list(app).rows
    index = next(i for i, r in enumerate(rows) if r["page_id"] == page_id)
    page_list(app).focus()
    if index == 0:
        page_list(app).cursor = 1 if len(rows) > 1 else 0
        await pilot.press("up")
    else:
        page_list(app).cursor = index - 1
        await pilot.press("down")
    await settle(app, pilot)
    assert page_list(app).current["page_id"] == page_id


async def type_into(app, pilot, selector: str, text: str) -> None:
    """Focus a field and type into it, key by key: the keys are sent together, as a fast typist's or a paste's
    come, and handled in order, then waited for (Pilot's `press` sleeps at least 40 ms after every key: a path
    typed that way took 4.5 s)."""
    widget = app.screen.query_one(selector)
    widget.focus()
    await until(pilot, lambda: widget.has_focus, f"{selector} to take the focus")
    if hasattr(widget, "value"):
        widget.value = ""
    await send_keys(app, pilot, text)


async def send_keys(app, pilot, keys) -> None:
    """Send key events (characters, or key names in a list) to the app at once; return once every queue of the
    screen is empty and the app is idle (what Pilot's `press` waits for after each key)."""
    import unicodedata

    from textual import events
    from textual.keys import REPLACED_KEYS, _character_to_key, _get_unicode_name_from_key

    driver = app._driver  # (textual is pinned: the same key events Pilot's press makes, App._press_keys)
    for key in keys:
        if len(key) == 1 and not key.isalnum():
            key = _character_to_key(key)
        original = REPLACED_KEYS.get(key, key)
        try:
            char = unicodedata.lookup(_get_unicode_name_from_key(original))
        except KeyError:
            char = key if len(key) == 1 else None
        event = events.Key(key, char)
        event.set_sender(app)
        driver.send_message(event)
    await until(pilot, lambda: not _messages_queued(app), "the keys to be handled")
    await pilot.pause()  # wait-helper: the last key's handler may still be under way (as after Pilot's press)


async def open_in_tab(app, pilot, page_id: str, tab_key: str) -> None:
    """Step onto a page, then open an inspector tab by its key (1-6) and let it draw."""
    await select_page(app, pilot, page_id)
    await pilot.press(tab_key)
    await settle(app, pilot)


def prompts(option_list) -> list[str]:
    """The text of every option of an OptionList (the relation list, the graph, the history), in order."""
    return [str(option_list.get_option_at_index(i).prompt) for i in range(option_list.option_count)]


def list_status(app) -> str:
    """The page list's status line as shown (scope, count, filters, the search and its mode)."""
    return str(app.screen.query_one("#list-status").render())


# Four notes sharing the word "zebra", one of which answers "where do zebras go when it is dry?" (the semantic tests).
ZEBRAS = ("Zebras walk north in the dry season, to the river.", "A zebra crossing on the high street.",
          "Notes on the dry season: zebras and wildebeest follow the rain.", "Shopping list: zebra cakes.")


def zebra_store(*extra: str):
    """A store (zebras.db in the working directory) of the ZEBRAS notes and `extra` ones, in notes:wild."""
    from store import Store

    st = Store.open(Path("zebras.db"))
    for text in (*ZEBRAS, *extra):
        st.write_page("notes:wild", content=text)
    return st
