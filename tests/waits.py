"""The one bounded wait of the tests outside the app: until a condition holds, never a fixed time."""

from __future__ import annotations

import time
from collections.abc import Callable

# How long a condition may take to come true before a test fails: generous, because a loaded machine is slow,
# and never spent by a test that passes (the wait ends as soon as the condition holds).
WAIT_LIMIT = 60.0


def wait_for(condition: Callable[[], object], what: str = "", limit: float = WAIT_LIMIT) -> None:
    """Return once `condition()` is true; fail, naming `what`, if it is not true within `limit` seconds."""
    deadline = time.monotonic() + limit
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {limit:.0f} s for {what or 'a condition'}, in vain")
        time.sleep(0.01)  # wait-helper: the one place a test sleeps, between two looks at the condition
