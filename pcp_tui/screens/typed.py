"""Actions on what was typed wait for the typing: a priority binding (ctrl+s, ctrl+y, ...) is run by the app as
soon as it reads the key, before the field in focus has taken the keys read just before it (a fast typist's last
character, or several keys in one read of the terminal), so the action would see the text without them: a revision
saved without its last character, "Nothing changed", a handoff copied under a cut label."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from textual.screen import Screen

def after_typing(action: Callable[..., None]) -> Callable[..., None]:
    """Run the action in the queue of the widget in focus, behind the keys already sent to it."""

    @wraps(action)
    def run(self: Screen[Any], *args: Any, **kwargs: Any) -> None:
        focused = self.focused
        if focused is None:
            action(self, *args, **kwargs)
        else:
            focused.call_later(action, self, *args, **kwargs)

    return run
