"""Switching a TabbedContent's tab from a key, with the focus where the person expects it."""

from __future__ import annotations

from textual.widgets import TabbedContent, TabPane
from textual.widgets.tabbed_content import ContentTabs


def show_tab(tabs: TabbedContent, tab: str, *, focus_into: bool = False) -> None:
    """Make `tab` the active one. The focus goes into it (its first widget that takes focus, once shown) when
    `focus_into`, and always when it was inside another of the tabs: there it would go to that pane's next
    widget as the pane hid, and a pane with the focus in it makes itself active again (Textual's
    TabPane.Focused), so the key would do nothing."""
    focused = tabs.screen.focused
    ancestors = focused.ancestors if focused is not None else []
    pane = next((a for a in ancestors if isinstance(a, TabPane)), None)
    inside_another = pane is not None and pane.id != tab and tabs in ancestors
    if inside_another:
        tabs.query_one(ContentTabs).focus()
    if inside_another or focus_into:
        tabs.call_after_refresh(focus_first, tabs.get_pane(tab))
    tabs.active = tab


def focus_first(pane: TabPane) -> None:
    target = next((w for w in pane.query("*") if w.focusable), None)
    if target is not None:
        target.focus()
