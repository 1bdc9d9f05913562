"""Waiting for a quiet machine before a timed run (issue 31: figures reported at a 1-minute load under 1).

`settle(below)` returns once the 1-minute load average is under `below` (looked at every second, at most
`most` seconds: then it says so and the run goes on), and says what it was. A bench's own previous run leaves
the load near the number of its processes; the load decays by about 1/e a minute once they end.
"""

from __future__ import annotations

import os
import time

LOOK_S = 1.0


def settle(below: float | None, most: float = 600.0) -> str:
    """Wait until the 1-minute load is under `below` (None: do not wait); the load at the start, as text."""
    if below is None:
        return f"start load {os.getloadavg()[0]:.2f}"
    started = time.monotonic()
    while os.getloadavg()[0] >= below and time.monotonic() - started < most:
        time.sleep(LOOK_S)
    waited = time.monotonic() - started
    now = os.getloadavg()[0]
    late = "" if now < below else f", still >= {below} after {most:.0f} s"
    return f"start load {now:.2f} after {waited:.0f} s{late}"
