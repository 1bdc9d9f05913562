"""A long bulk write's batches made ready (checked, digested, analysed), optionally in a helper process beside
its SQLite writes.

`write_pages_bulk` spends about as much of its own time analysing text (tokens, stems, sealing, dates, every
page's distinct terms for the statistics) as writing rows, and more on checking each item, its title and its
content digest. With a helper process the next batch is made ready there while this process writes the current
one: the writer then pays only for sending the items out and taking the rows' parts back. The helper runs the
same `make_ready`, so the rows, index and statistics are the same bytes either way
(tests/store/test_analysis_helper.py); a batch with a refused item is made ready again by the writer, which
raises why in its place; a helper that cannot start or dies, or a batch that cannot be sent to it, is made
ready here, losing nothing.

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
from . import validate as v
from .core import dumps
from .cores import helper_wanted, start_helper
from .errors import Invalid
from .titles import page_title

HELPER_FROM_PAGES = 3000  # pages a bulk write has made ready before a helper starts (smaller ones never start one)
ENV = "PCP_ANALYSIS_HELPER"
WAIT_FOR_START = False  # tests: send every batch from the first to the helper (else until it has started, here)
_READY = b"pcp-analyst-ready\n"

# Per page: its index text (title, body, meta: the terms joined by spaces), its date tokens and its term count;
# per batch: how many of its pages hold each statistics key (the batch's pages are all counted, in one scope).
Prepared = tuple[list[tuple[str, str, str, tuple[str, ...], int]], Counter[str]]
PageText = tuple[str, str | None, dict[str, Any], str | None]  # (title, content, facets, date read against)
# A bulk write's item, checked: (payload {media_type, content}, facets, facets JSON, observed_at, title).
Checked = tuple[dict[str, str], dict[str, Any], str, str | None, str]
# What the writer needs of a checked item beside its content: (media type, facets JSON, observed_at, title,
# content digest). A batch made ready is these and its analysis; None when an item of it is refused.
Made = tuple[str, str, str | None, str, str]
Ready = tuple[list[Made], Prepared] | None


def analyse_batch(salt: bytes, pages: list[PageText]) -> Prepared:
    """The index view of a batch of new pages, in the form the writer needs (here or in the helper)."""
    df: Counter[str] = Counter()
    out = []
    for title, content, facets, when in pages:
        doc = index.analyse(title, content, facets, salt, when)
        index.count_keys(df, doc)
        out.append((" ".join(doc.title), " ".join(doc.body), " ".join(doc.meta), doc.dates, doc.count))
    return out, df


def check_items(items: list[dict[str, Any]]) -> list[Checked]:
    """Check a batch of bulk-write items (no store needed): each one's payload, facets, facets JSON, observed
    time and title. Raises the error of the first item refused."""
    out = []
    for item in items:
        if not isinstance(item, dict):  # (an AttributeError would reach the caller, unaudited)
            raise Invalid("Every page of a bulk write is an object ({content, media_type?, facets?, observed_at?}); "
                          f"one is of type {type(item).__name__}.")
        payload = v.payload(None, item.get("content"), item.get("media_type"))
        if payload is None:
            raise Invalid("Every page of a bulk write needs content.")
        facets = v.facets(item["facets"]) if item.get("facets") is not None else {}
        observed = v.optional_time(item["observed_at"], "observed_at") if item.get("observed_at") else None
        out.append((payload, facets, dumps(facets) if facets else "{}", observed, page_title(facets, payload, [])))
    return out


def made_ready(salt: bytes, stamp: str, items: list[dict[str, Any]]) -> tuple[list[Made], Prepared]:
    """A batch of bulk-write items checked, digested and analysed against `stamp`; raises the error of the
    first item refused."""
    checked = check_items(items)
    texts: list[PageText] = [(title, payload["content"], facets, observed or stamp)
                             for payload, facets, _, observed, title in checked]
    digest = v.content_digest
    made = [(payload["media_type"], facets_json, observed, title, digest(payload["content"]) or "")
            for payload, _, facets_json, observed, title in checked]
    return made, analyse_batch(salt, texts)


def make_ready(salt: bytes, stamp: str, items: list[dict[str, Any]]) -> Ready:
    """`made_ready` (here or in the helper), None when an item is refused: the writer then makes the batch
    ready again itself, to raise why (audited) in its place among the batches."""
    try:
        return made_ready(salt, stamp, items)
    except Exception:  # noqa: BLE001 (whatever refused it is raised again by the writer's own try)
        return None


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
    """The helper's loop: (salt, stamp, items) in on stdin, `make_ready` of them out on stdout, until stdin closes."""
    source, sink = sys.stdin.buffer, sys.stdout.buffer
    sink.write(_READY)
    sink.flush()
    while True:
        try:
            salt, stamp, items = _receive(source)
        except EOFError:
            return
        stops.reached("analysis-helper")  # tests stop the helper here (PCP_TEST_STOP, read when it starts)
        _send(sink, make_ready(salt, stamp, items))


class Pending:
    """A batch made ready: under way in the helper (`future`), or done here (`done`). `result()` is None when
    an item of it is refused (the writer then checks it again, here, to raise why)."""

    def __init__(self, salt: bytes, stamp: str, items: list[dict[str, Any]],
                 future: concurrent.futures.Future[Ready] | None = None, done: Ready = None) -> None:
        self.salt, self.stamp, self.items, self.future, self.done = salt, stamp, items, future, done
        self._here = future is None

    def result(self) -> Ready:
        if not self._here and self.future is not None:
            try:
                self.done = self.future.result()
                return self.done
            except Exception:  # noqa: BLE001 (the helper died, or an item could not be sent: made here instead)
                self._here = True
                self.done = make_ready(self.salt, self.stamp, self.items)
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

    def submit(self, stamp: str, items: list[dict[str, Any]]) -> Pending:
        """Start making a batch ready: its items checked, digested and analysed against `stamp` (in the helper once
        HELPER_FROM_PAGES pages were seen; else here, at once)."""
        self.seen += len(items)
        self.batches += 1
        if self._proc is None and not self._off and self.seen >= HELPER_FROM_PAGES:
            self._start()
        if self._proc is not None and self._proc.poll() is not None:  # it died: the rest is analysed here
            self.close()
            self._off = True
        if self._talk is not None and self._started is not None and (WAIT_FOR_START or self._started.done()):
            if self._started.exception() is None:
                self.helped += 1
                return Pending(self.salt, stamp, items, self._talk.submit(self._ask, stamp, items))
            self.close()
            self._off = True
        return Pending(self.salt, stamp, items, done=make_ready(self.salt, stamp, items))

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

    def _ask(self, stamp: str, items: list[dict[str, Any]]) -> Ready:
        proc = self._proc
        if proc is None or proc.stdin is None or proc.stdout is None:
            raise EOFError("the analysis helper has stopped")
        _send(proc.stdin, (self.salt, stamp, items))  # (pickled whole before a byte is sent: a failure sends none)
        ready: Ready = _receive(proc.stdout)
        return ready

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
