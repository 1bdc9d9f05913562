"""The one bounded wait on a condition outside the app (a detached process finishing, a file appearing).

App (Pilot) tests use tests/tui/helpers.until; everything else waits here: never a fixed sleep, never a
timed assertion. The wait ends as soon as the condition holds; the limit is generous (a loaded machine is
slow) and never spent by a test that passes.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

WAIT_LIMIT = 60.0
T = TypeVar("T")


def wait_until(condition: Callable[[], T], what: str, limit: float = WAIT_LIMIT) -> T:
    """Return condition()'s first true value; fail, naming `what`, if none comes within `limit` seconds."""
    deadline = time.monotonic() + limit
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {limit:.0f} s for {what}, in vain")
        time.sleep(0.02)  # wait-helper: between two looks at the condition
