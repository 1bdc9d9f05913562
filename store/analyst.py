"""A long bulk write's index analysis, optionally in a helper process beside its SQLite writes.

`write_pages_bulk` spends about as much of its own time analysing text (tokens, stems, sealing, dates, every
page's distinct terms for the statistics) as writing rows. With a helper process the next batch is analysed
there while this process writes the current one: the writer then pays only for sending the texts out and
taking the index text back (about a sixth of the analysis, measured at 20,000 pages). The helper runs the same
`analyse_batch`, so the index rows and statistics are the same bytes either way (tests/store/test_analysis_helper.py);
a helper that cannot start or dies is replaced by analysing here, losing nothing.

Used only with a core to spare (store/cores.py; PCP_ANALYSIS_HELPER=1: always, =0: never): on a quiet 2-core
machine it took `write_pages_bulk` of 100,000 pages from 48 % of bare SQLite's rate to 62 %, but on a busy one it
only takes turns with the writer for the same cores and costs about 0.25 s more CPU per 20,000 pages
(bench/README.md). When used, it starts
once a write has made HELPER_FROM_PAGES pages ready (it takes a few tenths of a second to start; batches are
analysed here until it has) and is stopped when the write ends. It is a plain `python -c` child fed through its
pipes, not a multiprocessing worker: those import the caller's `__main__` again, and a script without a main
guard would run its bulk write a second time inside the helper.
"""

from __future__ import annotations

import concurrent.futures
import pickle
import subprocess
import sys
from collections import Counter
from typing import IO, Any

from . import index, stops
from .cores import helper_wanted, start_helper

HELPER_FROM_PAGES = 3000  # pages a bulk write has made ready before a helper starts (smaller ones never start one)
ENV = "PCP_ANALYSIS_HELPER"
WAIT_FOR_START = False  # tests: send every batch from the first to the helper (else until it has started, here)
_READY = b"pcp-analyst-ready\n"

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


def _send(pipe: IO[bytes], value: Any) -> None:
    data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    pipe.write(len(data).to_bytes(8, "big"))
    pipe.write(data)
    pipe.flush()


def _receive(pipe: IO[bytes]) -> Any:
    head = pipe.read(8)
    if len(head) < 8:
        raise EOFError("the analysis helper has exited")
    size = int.from_bytes(head, "big")
    data = pipe.read(size)
    if len(data) < size:
        raise EOFError("the analysis helper has exited")
    return pickle.loads(data)  # noqa: S301 (our own child's answer, through its own pipe)


def serve() -> None:
    """The helper's loop: (salt, pages) in on stdin, `analyse_batch` of them out on stdout, until stdin closes."""
    source, sink = sys.stdin.buffer, sys.stdout.buffer
    sink.write(_READY)
    sink.flush()
    while True:
        try:
            salt, pages = _receive(source)
        except EOFError:
            return
        stops.reached("analysis-helper")  # tests stop the helper here (PCP_TEST_STOP, read when it starts)
        _send(sink, analyse_batch(salt, pages))


class Pending:
    """A batch's analysis: under way in the helper (`future`), or done here (`done`)."""

    def __init__(self, salt: bytes, pages: list[PageText], future: concurrent.futures.Future[Prepared] | None = None,
                 done: Prepared | None = None) -> None:
        self.salt, self.pages, self.future, self.done = salt, pages, future, done

    def result(self) -> Prepared:
        if self.done is None and self.future is not None:
            try:
                self.done = self.future.result()
            except (OSError, EOFError, ValueError, pickle.UnpicklingError):
                pass  # the helper died (killed, out of memory): the batch is analysed here instead
        if self.done is None:
            self.done = analyse_batch(self.salt, self.pages)
        return self.done


class Analyst:
    """Where a bulk write's batches are analysed: in a helper process once the write is long enough (when turned
    on), else here. One thread talks to the helper, a batch at a time (so neither side blocks on a full pipe)."""

    def __init__(self, salt: bytes) -> None:
        self.salt = salt
        self.seen = 0
        self.batches = 0  # batches submitted
        self.helped = 0  # of which to the helper
        self._proc: subprocess.Popen[bytes] | None = None
        self._talk: concurrent.futures.ThreadPoolExecutor | None = None
        self._started: concurrent.futures.Future[None] | None = None
        self._off = not helper_wanted(ENV)  # (asked once a write starts: a core free then, or PCP_ANALYSIS_HELPER=1)
        self._started_procs: list[subprocess.Popen[bytes]] = []

    def submit(self, pages: list[PageText]) -> Pending:
        """Start analysing a batch (in the helper once HELPER_FROM_PAGES pages were seen; else here, at once)."""
        self.seen += len(pages)
        self.batches += 1
        if self._proc is None and not self._off and self.seen >= HELPER_FROM_PAGES:
            self._start()
        if self._proc is not None and self._proc.poll() is not None:  # it died: the rest is analysed here
            self.close()
            self._off = True
        if self._talk is not None and self._started is not None and (WAIT_FOR_START or self._started.done()):
            if self._started.exception() is None:
                self.helped += 1
                return Pending(self.salt, pages, self._talk.submit(self._ask, pages))
            self.close()
            self._off = True
        return Pending(self.salt, pages, done=analyse_batch(self.salt, pages))

    def _start(self) -> None:
        try:
            self._proc = start_helper("analyst", "serve")
        except OSError:
            self._off = True
            return
        self._started_procs.append(self._proc)
        self._talk = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="pcp-analyst")
        self._started = self._talk.submit(self._handshake)

    def _handshake(self) -> None:
        assert self._proc is not None and self._proc.stdout is not None
        if self._proc.stdout.readline() != _READY:
            raise EOFError("the analysis helper did not start")

    def _ask(self, pages: list[PageText]) -> Prepared:
        proc = self._proc
        if proc is None or proc.stdin is None or proc.stdout is None:
            raise EOFError("the analysis helper has stopped")
        _send(proc.stdin, (self.salt, pages))
        prepared: Prepared = _receive(proc.stdout)
        return prepared

    def exited(self) -> bool:
        """Whether every helper this analyst started has exited (and been waited for)."""
        return all(proc.returncode is not None for proc in self._started_procs)

    def close(self) -> None:
        """Stop the helper and wait for it to exit (a bulk write leaves no process behind): its stdin closes, it
        ends its batch and exits (killed if it has not within 10 s), and then the thread talking to it ends."""
        proc, talk, self._proc, self._talk = self._proc, self._talk, None, None
        if talk is not None:
            talk.shutdown(wait=False, cancel_futures=True)  # batches not sent yet are not sent
        if proc is not None:
            if proc.stdin is not None:
                try:
                    proc.stdin.close()
                except OSError:
                    pass  # (a broken pipe: it has exited)
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if talk is not None:
            talk.shutdown(wait=True)  # its read has ended: the helper's output closed when it exited
        if proc is not None and proc.stdout is not None:
            proc.stdout.close()
