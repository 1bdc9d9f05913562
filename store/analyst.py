"""A long bulk write's index analysis in a helper process, beside its SQLite writes.

`write_pages_bulk` spends about as much of its own time analysing text (tokens, stems, sealing, dates, every
page's distinct terms for the statistics) as writing rows. With a helper process the next batch is analysed
there while this process writes the current one: on a machine with a second core the writer then pays only
for sending the texts out and taking the index text back (about a tenth of the analysis, measured). The helper
runs the same `index.analyse`, so the index rows and statistics are the same bytes either way
(tests/store/test_analysis_helper.py); a helper that cannot start or dies is replaced by analysing here.

The helper starts only for a write of at least HELPER_FROM_PAGES pages (it takes a few tenths of a second to
start; batches are analysed here until it has) on a machine with a core to spare (`core_free`), and is stopped
when the write ends. PCP_ANALYSIS_HELPER=0 turns it off, =1 on whatever the load.
"""

from __future__ import annotations

import concurrent.futures
import multiprocessing
import os
from collections import Counter
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from . import index, stops

HELPER_FROM_PAGES = 3000  # pages a bulk write has made ready before a helper starts (smaller ones never start one)
ENV = "PCP_ANALYSIS_HELPER"
WAIT_FOR_START = False  # tests: send every batch from the first to the helper (else until it has started, here)

# Per page: its index text (title, body, meta: the terms joined by spaces), its date tokens and its term count;
# per batch: how many of its pages hold each statistics key (the batch's pages are all counted, in one scope).
Prepared = tuple[list[tuple[str, str, str, tuple[str, ...], int]], Counter[str]]
PageText = tuple[str, str | None, dict[str, Any], str | None]  # (title, content, facets, date read against)


def analyse_batch(salt: bytes, pages: list[PageText]) -> Prepared:
    """The index view of a batch of new pages, in the form the writer needs (here or in the helper)."""
    df: Counter[str] = Counter()
    out = []
    for title, content, facets, when in pages:
        doc = index.analyse(title, content, facets, salt, when)
        index.count_keys(df, doc)
        out.append((" ".join(doc.title), " ".join(doc.body), " ".join(doc.meta), doc.dates, doc.count))
    return out, df


def core_free() -> bool:
    """Whether the machine has a core to spare (1-minute load average at most cores - 1). On a busy machine a
    helper only takes turns with the writer for the same cores, and its start and the copying cost more than
    it saves (20k pages at load 4.8 on 2 cores: 1.2-1.6x the wall time, 1.17x the CPU)."""
    try:
        return os.getloadavg()[0] <= (os.cpu_count() or 1) - 1
    except (AttributeError, OSError):  # no load average on this platform
        return True


def _ready() -> bool:
    """The helper's first task: it has imported the analysis (and its stemmer) once this returns."""
    return index.analyse("ready", "ready", {}, b"\0" * 16).body == ["readi"]


def _in_helper(salt: bytes, pages: list[PageText]) -> Prepared:
    stops.reached("analysis-helper")  # tests stop the helper here (PCP_TEST_STOP, read when the helper starts)
    return analyse_batch(salt, pages)


class Pending:
    """A batch's analysis: under way in the helper (`future`), or done here (`done`)."""

    def __init__(self, salt: bytes, pages: list[PageText], future: concurrent.futures.Future[Prepared] | None = None,
                 done: Prepared | None = None) -> None:
        self.salt, self.pages, self.future, self.done = salt, pages, future, done

    def result(self) -> Prepared:
        if self.done is None and self.future is not None:
            try:
                self.done = self.future.result()
            except (BrokenProcessPool, OSError, EOFError):
                pass  # the helper died (killed, out of memory): the batch is analysed here instead
        if self.done is None:
            self.done = analyse_batch(self.salt, self.pages)
        return self.done


class Analyst:
    """Where a bulk write's batches are analysed: in a helper process once the write is long enough, else here."""

    def __init__(self, salt: bytes) -> None:
        self.salt = salt
        self.seen = 0
        self.batches = 0  # batches submitted
        self.helped = 0  # of which to the helper
        self._pool: concurrent.futures.ProcessPoolExecutor | None = None
        self._started: concurrent.futures.Future[bool] | None = None
        said = os.environ.get(ENV)
        self._off = said == "0" or (said != "1" and (os.cpu_count() or 1) < 2)
        self._forced = said == "1"

    def submit(self, pages: list[PageText]) -> Pending:
        """Start analysing a batch (in the helper once HELPER_FROM_PAGES pages were seen; else here, at once)."""
        self.seen += len(pages)
        self.batches += 1
        if self._pool is None and not self._off and self.seen >= HELPER_FROM_PAGES and (self._forced or core_free()):
            try:  # spawn, not fork: the app's threads (and their locks) must not be copied into the helper
                self._pool = concurrent.futures.ProcessPoolExecutor(1, multiprocessing.get_context("spawn"))
                self._started = self._pool.submit(_ready)
            except (OSError, RuntimeError):
                self._off = True
        if self._pool is not None and self._started is not None and (WAIT_FOR_START or self._started.done()):
            try:  # (until it has started, batches are analysed here)
                self._started.result()
                pending = Pending(self.salt, pages, self._pool.submit(_in_helper, self.salt, pages))
                self.helped += 1
                return pending
            except (BrokenProcessPool, RuntimeError, OSError):
                self.close()
                self._off = True
        return Pending(self.salt, pages, done=analyse_batch(self.salt, pages))

    def close(self) -> None:
        """Stop the helper (waits for it to exit: a bulk write leaves no process behind)."""
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
