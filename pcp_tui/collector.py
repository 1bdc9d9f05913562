"""Full garbage collections when the user pauses, not in the middle of a keystroke.

CPython collects its oldest generation when enough objects have survived since the last time, and that
walks every object the collector tracks: at a million pages 30-50 ms on this machine (bench/tui_bench.py,
`gc.callbacks`), landing on whichever keystroke or frame happened to allocate then. The app keeps the young
collections (a few milliseconds each) and moves the full ones here:

- once the startup heap is built (widgets, styles, modules) it is frozen (`gc.freeze`): those objects live
  as long as the app and are never walked again;
- automatic full collections are turned off (the third threshold is set out of reach);
- `tick` (the app calls it every TICK seconds) runs the pending full collection once there has been no input for
  IDLE seconds (and at most every MIN_GAP seconds), then freezes what survived it: Textual's render caches
  (strips, each with its own small caches) are most of the heap, live, and would be walked every time
  (a full walk of the app at a million pages took 100-200 ms, bench/tui_bench.py). A busy user still gets
  one when the last is FORCE_AFTER seconds old (it walks only what came since the last freeze).
- What was frozen and became garbage since (a dialog closed, a widget removed) is found by a deep
  collection: everything unfrozen, collected, frozen again, once the input has paused DEEP_IDLE seconds and
  at most every DEEP_EVERY seconds. So nothing is kept for long, and the one walk of the whole heap waits
  for a real pause.
  Young collections still collect most cyclic garbage; the full ones only find cycles that grew old.

`stop` puts the thresholds back and unfreezes, so a process that runs several apps (the tests) is as before.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable

# Each full collection frees what became garbage since the last one (mostly Textual's strips: each caches
# itself, a cycle only a full collection finds) and walks what survived since the last freeze: about 1.5 us an
# object on this machine, some 5,000 objects a second of cursor moves at a million pages. Fourteen seconds
# of them made a 100 ms collection (bench/tui_bench.py); one every second or two costs 5-10 ms, small enough
# to go unfelt when a key lands on it. So they run often: in a short pause, and during a long burst of input.
IDLE = 0.3  # seconds without a key or mouse event before a pending full collection runs
MIN_GAP = 1.0  # seconds at least between two full collections in pauses
FORCE_AFTER = 2.0  # seconds after which a full collection runs anyway, input or not (a held-down key)
TICK = 0.25  # how often the app asks (seconds)
DEEP_IDLE = 5.0  # seconds without input before a deep collection (the frozen heap included) may run
DEEP_EVERY = 120.0  # seconds at least between two deep collections
PENDING = 3  # young-generation collections since the last full one that make a full one worth doing
OUT_OF_REACH = 1_000_000  # the third threshold while the app runs: no automatic full collection


class IdleCollector:
    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.last_input = self.last_full = self.last_deep = clock()
        self.saved: tuple[int, int, int] | None = None
        self.full_collections = 0
        self.deep_collections = 0

    @property
    def running(self) -> bool:
        return self.saved is not None

    def start(self) -> None:
        """Freeze what exists now and take over full collections (again later: freezes what came since)."""
        gc.freeze()
        if self.saved is None:
            self.saved = gc.get_threshold()
            first, second, _ = self.saved
            gc.set_threshold(first, second, OUT_OF_REACH)

    def input(self) -> None:
        self.last_input = self.clock()

    def idle_for(self) -> float:
        """Seconds since the last key or mouse event."""
        return self.clock() - self.last_input

    def tick(self) -> bool:
        """Run the full (or deep) collection if it is due; True when one ran."""
        if self.saved is None:
            return False
        now = self.clock()
        pending = gc.get_count()[2]
        idle = self.idle_for()
        since = now - self.last_full
        if idle >= DEEP_IDLE and now - self.last_deep >= DEEP_EVERY:
            gc.unfreeze()
            gc.collect()
            gc.freeze()
            self.last_deep = self.last_full = self.clock()
            self.deep_collections += 1
            return True
        if (idle >= IDLE and pending >= PENDING and since >= MIN_GAP) or (pending and since >= FORCE_AFTER):
            gc.collect()
            gc.freeze()
            self.last_full = self.clock()
            self.full_collections += 1
            return True
        return False

    def stop(self) -> None:
        if self.saved is not None:
            current = gc.get_threshold()  # a bulk import may have raised the first one meanwhile: keep that
            gc.set_threshold(current[0], current[1], self.saved[2])
            self.saved = None
            gc.unfreeze()
