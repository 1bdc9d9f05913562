"""The one bounded wait of the tests outside the app: until a condition holds, never a fixed time."""

from __future__ import annotations

import time
from collections.abc import Callable

# How long a condition may take to come true before a test fails: generous, because a loaded machine is slow,
# and never spent by a test that passes (the wait ends as soon as the condition holds).
WAIT_LIMIT = 60.0

# Pilot's press() waits after each key until the process has been idle for one of Textual's sleep granules
# (1/50 s, twice per key): the app tests press about 3,500 keys, which cost about 340 s of the suite's worker
# time. Half a granule keeps the same rule (the key handled, the process idle; the tests' own waits are
# `until` and `settle`) at a finer grain: the tui tests took 325 s on two workers, 214 s with this (same
# machine, `pytest -n 2 tests/tui`). 5 ms was faster still (176 s) but let a dozen tests see a screen before
# it was drawn: a margin is kept. Private to Textual: tests/tui/test_pilot_grain.py checks it still works so.
PILOT_GRAIN = 0.01


def wait_for(condition: Callable[[], object], what: str = "", limit: float = WAIT_LIMIT) -> None:
    """Return once `condition()` is true; fail, naming `what`, if it is not true within `limit` seconds."""
    deadline = time.monotonic() + limit
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {limit:.0f} s for {what or 'a condition'}, in vain")
        time.sleep(0.01)  # wait-helper: the one place a test sleeps, between two looks at the condition
