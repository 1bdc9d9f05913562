"""A chat import's conversations made ready in a helper process while the importing process writes (issue 31).

Per message a ChatGPT import spends most of its Python outside SQLite: parsing the mapping tree, checking and
encoding payload, facets and source refs, digests, and the index analysis. With a helper, the importer sends the
export's text to a second process before it reads it itself; the helper parses it the same way and plans every
conversation in order (`helper_plan(index, item, label, salt)` of the importer's module: `chats.Planned` as plain
tuples, its pages' index text made and their statistics keys counted), answering through its stdout; with a
planner that has `helper_spans` (a JSON array read item by item) its first answer says where each item starts,
so the importer reads only the items it plans itself (store/adapters/chatgpt.py `_Export`). The
importer takes a conversation's plan when it is there, waits a few milliseconds for the one the helper is
planning right now, and otherwise plans that conversation itself and tells the helper to skip past it. Nothing
depends on the helper: its answers come from the same `plan_conversation` the importer runs, a plan meeting
pages already in the store is made again by the importer, and a helper that dies, stops or cannot start only
means the importer does the rest. Only with a core to spare (store/cores.py; PCP_IMPORT_HELPER=1 always, =0
never), for exports of HELPER_FROM_CHARS to HELPER_UP_TO_CHARS characters, not on Windows (no `select` on pipes).

A plain `python -c` child (cores.start_helper), not a multiprocessing worker (those import `__main__` again).
"""

from __future__ import annotations

import importlib
import os
import pickle
import sys
import threading
from typing import Any, Callable

from . import stops
from .cores import helper_wanted, start_helper
from .import_pages import cleaning_on

ENV = "PCP_IMPORT_HELPER"
HELPER_FROM_CHARS = 4_000_000  # smaller exports are planned here (a helper takes a few tenths of a second to start)
# Larger ones too: the helper holds a parsed copy of the export beside the importer's (several times the file's
# size in Python objects), which for a file near the import limit (1 GiB) would be more memory than it saves time.
HELPER_UP_TO_CHARS = 256_000_000
WAIT = False  # tests: wait for the helper's answer to every conversation (so that its plans are the ones written)
# When the helper is planning the very conversation the importer wants next, the importer waits for it up to this
# long (about the time a conversation takes to plan) instead of planning it a second time; after MISSES_AT_MOST
# such waits in a row that came to nothing (a helper starved of CPU), it no longer waits until an answer is there
# in time again. So a slow helper costs the importer a few milliseconds, never a conversation's worth per one.
PATIENCE_S = 0.004
MISSES_AT_MOST = 3
_HEAD = 12  # an answer: 8 bytes of length, 4 of the conversation's index, then its pickle
# The index of the helper's first answer when its planner has `helper_spans`: where each item of the export's text
# starts (a list of offsets; None: not an array), or nothing at all if the text is not JSON. Its planner's items
# are then the JSON array's, and the text is known to be JSON once this has come.
STARTS = 2**32 - 1
# The index of the answer that says the helper has made its items and plans from now on (no data).
PLANNING = 2**32 - 2
# A message to the helper is an index: plan nothing below it (the importer planned those itself, in order); with
# this bit set, the index alone is the importer's (it plans that one ahead, ImportHelper.__call__'s `ahead`).
RESERVED = 1 << 63
# While the helper plans the very item the importer wants next, the importer plans items further on itself (at
# most this many of them waiting to be written: an item ahead is held in memory until its turn) instead of waiting.
AHEAD_AT_MOST = 8
# With that many planned ahead, it waits for the helper's answer up to this long (it has planned enough ahead:
# the helper is the slower); a helper starved or stopped still costs at most MISSES_AT_MOST such waits in a row.
PATIENCE_AHEAD_S = 0.1


def _read(fd: int, n: int) -> bytes:
    out = bytearray()
    while len(out) < n:
        chunk = os.read(fd, n - len(out))
        if not chunk:
            break
        out += chunk
    return bytes(out)


def _message(fd: int) -> bytes | None:
    """One message of the importer's: 8 bytes of length, then that many (None: its stdin ended first)."""
    head = _read(fd, 8)
    size = int.from_bytes(head, "big") if len(head) == 8 else 0
    data = _read(fd, size)
    return data if size and len(data) == size else None


def _answer(sink: Any, index: int, data: bytes) -> bool:
    """One answer of the helper's: 8 bytes of length, 4 of the item's index (or STARTS, PLANNING), then the data;
    False when the importer has gone."""
    try:
        sink.write(len(data).to_bytes(8, "big") + index.to_bytes(4, "big"))
        sink.write(data)
        sink.flush()
    except BrokenPipeError:
        return False
    return True


def serve() -> None:
    """The helper: its planner module's name in (at once), then (planner module, salt, label, text); with a planner
    that has `helper_spans`, where each item starts out first; then every conversation's plan out, in order, skipping
    to an index the importer sends (it planned the ones before itself); ends when its stdin closes."""
    import gc
    import select
    import signal

    from .import_groups import IMPORT_GC_THRESHOLD

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # ^C is the importer's to handle; it ends this process itself
    # This process holds the parsed export all along: at the default threshold the collector walked it over and
    # over (the parse 0.35 -> 0.2 s, a plan 100 -> 85 us a message at 2,000 conversations).
    gc.set_threshold(IMPORT_GC_THRESHOLD, *gc.get_threshold()[1:])
    src, sink = sys.stdin.fileno(), sys.stdout.buffer
    request = _message(src)
    asked = pickle.loads(request) if request is not None else None  # noqa: S301 (our parent's own messages)
    if isinstance(asked, str):
        # The planner's module, named as soon as this started: imported while the importer reads its file
        # (a fifth of a second, before the first plan otherwise).
        importlib.import_module(asked)
        request = _message(src)
        asked = pickle.loads(request) if request is not None else None  # noqa: S301
    if asked is None:
        return  # the importer ended before it had asked
    module, salt, label, what = asked
    planner = importlib.import_module(module)
    spans = getattr(planner, "helper_spans", None)
    try:
        items, starts = spans(what, label) if spans is not None else (planner.helper_items(what, label), None)
    except Exception:  # noqa: BLE001 (not an export the importer takes: it says why itself)
        return
    del what
    if spans is not None:  # first, where every item starts (the importer reads only those it plans itself)
        stops.reached("import-helper-starts")  # tests stop the helper here, before it has said so
        if not _answer(sink, STARTS, pickle.dumps(starts, protocol=pickle.HIGHEST_PROTOCOL)):
            return
    if not _answer(sink, PLANNING, b""):
        return
    index = 0
    reserved: set[int] = set()  # items the importer plans itself, ahead
    while index < len(items):
        while select.select([src], [], [], 0)[0]:
            said = _read(src, 8)
            if len(said) < 8:
                return  # the import has ended
            told = int.from_bytes(said, "big")
            if told & RESERVED:
                reserved.add(told & ~RESERVED)
            else:
                index = max(index, told)
        while index in reserved:
            index += 1
        if index >= len(items):
            break
        stops.reached("import-helper")  # tests stop the helper here (PCP_TEST_STOP, read when it starts)
        try:
            answer = planner.helper_plan(index, items[index], label, salt)
        except Exception:  # noqa: BLE001 (anything unforeseen: the importer plans this one itself, and says why)
            answer = None
        if not _answer(sink, index, pickle.dumps(answer, protocol=pickle.HIGHEST_PROTOCOL)):
            return
        index += 1
    _read(src, 1)  # (wait for the import to end, which kills it)


Ahead = Callable[[int, Callable[[], None]], bool]  # plans item j here, ahead (ImportHelper.__call__)


class ImportHelper:
    """The importer's side: answers read by a thread as they come, taken by index (`__call__`)."""

    def __init__(self, module: str, salt: bytes) -> None:
        self.module, self.salt = module, salt
        self.helped = 0  # conversations whose plan came from the helper
        self.planned_here = 0  # conversations the importer planned itself (no answer there yet)
        self.planned_ahead = 0  # of those, the ones it planned ahead while the helper planned the one before
        self._answers: dict[int, Any] = {}
        self._next = 0  # answers for an index below this come too late and are dropped unread
        self._done = False  # the helper's output ended (it exited or was killed)
        self._last = -1  # the index of the helper's last answer (it is planning the next one)
        self._patience = MISSES_AT_MOST
        self._starts: list[int] | None = None  # where the export's items start (the helper's first answer)
        self._started = False  # that answer came
        self._planning = False  # the helper has made its items and plans them now
        self._skip_to = 0  # the helper plans nothing below this (the importer planned those itself)
        self._reserved: set[int] = set()  # items the importer plans ahead (the helper skips them)
        self._ahead = -1  # the last of those
        self._cond = threading.Condition()
        self._proc = start_helper("import_helper", "serve")  # (it starts while the importer reads the file)
        self._send_lock = threading.Lock()
        named = pickle.dumps(module, protocol=pickle.HIGHEST_PROTOCOL)
        self._send(len(named).to_bytes(8, "big"), named)  # (a few bytes: the pipe takes them at once)
        self._sender: threading.Thread | None = None
        self._reader = threading.Thread(target=self._read_answers, name="pcp-import-helper", daemon=True)
        self._reader.start()

    def ask(self, label: str, text: str) -> bool:
        """Send the export's text (False, and the helper ended, when it is outside the sizes a helper is for)."""
        if not HELPER_FROM_CHARS <= len(text) <= HELPER_UP_TO_CHARS:
            self.close()
            return False
        self.request(label, text)
        return True

    def request(self, label: str, what: Any) -> None:
        """Send what the planner's `helper_items(what, label)` makes its items of (an export's text, or what tells
        it which files to read), from a thread: the importer reads meanwhile."""
        request = pickle.dumps((self.module, self.salt, label, what), protocol=pickle.HIGHEST_PROTOCOL)
        self._sender = threading.Thread(target=self._send, args=(len(request).to_bytes(8, "big"), request),
                                        name="pcp-import-helper-send", daemon=True)
        self._sender.start()

    def _send(self, *data: bytes) -> None:
        stdin = self._proc.stdin
        assert stdin is not None
        try:
            with self._send_lock:
                for part in data:
                    stdin.write(part)
                stdin.flush()
        except (OSError, ValueError):
            pass  # it has exited: the importer plans the rest itself

    def _tell(self, told: int) -> None:
        """Tell the helper an index (8 bytes: skip to it, or skip it) without ever waiting for it to read: a helper
        stopped (SIGSTOP) or busy with a long plan reads nothing, and the importer tells it something at every
        session it plans itself, more than a pipe holds. When the pipe is full the message is dropped: the helper
        then plans a session the importer has, and that answer goes unused."""
        stdin = self._proc.stdin
        assert stdin is not None
        try:
            with self._send_lock:  # (after the request: the pipe holds no part of another message)
                fd = stdin.fileno()
                os.set_blocking(fd, False)  # (our end only: the helper's stays blocking)
                os.write(fd, told.to_bytes(8, "big"))  # (8 bytes, under PIPE_BUF: written whole or not at all)
        except (OSError, ValueError):
            pass  # full (dropped), or it has exited: the importer plans the rest itself

    def _read_answers(self) -> None:
        out = self._proc.stdout
        assert out is not None
        fd = out.fileno()
        try:
            while True:
                head = _read(fd, _HEAD)
                if len(head) < _HEAD:
                    return
                size, index = int.from_bytes(head[:8], "big"), int.from_bytes(head[8:], "big")
                if index == PLANNING:
                    with self._cond:
                        self._planning = True
                        self._cond.notify_all()
                    continue
                data = _read(fd, size)
                if len(data) < size:
                    return
                if index < self._next:
                    continue  # planned by the importer meanwhile
                answer = pickle.loads(data)  # noqa: S301 (our own child's answer, through its own pipe)
                if index == STARTS:
                    with self._cond:
                        self._starts, self._started = answer, True
                        self._cond.notify_all()
                    continue
                with self._cond:
                    self._answers[index] = answer
                    self._last = index
                    self._cond.notify_all()
        except (OSError, ValueError, pickle.UnpicklingError, EOFError):
            return
        finally:
            with self._cond:
                self._done = True
                self._cond.notify_all()

    def __call__(self, index: int, ahead: Ahead | None = None) -> Any:
        """The helper's plan of the conversation at `index` if it is there (None: plan it here). While the helper
        is planning that very one, `ahead(j, reserve)` plans an item further on here instead of waiting idle: it
        calls `reserve()` first (the helper then skips item j), or answers False when it will not (it holds enough
        already, or there is no item j); j only grows from one call to the next."""
        with self._cond:
            if WAIT:
                self._cond.wait_for(lambda: index in self._answers or self._done)
            elif index not in self._answers and not self._done and self._patience and self._planning_now(index):
                full = ahead is not None and not self._plan_ahead(index, ahead)
                if self._cond.wait_for(lambda: index in self._answers or self._done,
                                       PATIENCE_AHEAD_S if full else PATIENCE_S):
                    self._patience = MISSES_AT_MOST
                else:
                    self._patience -= 1
            elif index in self._answers:
                self._patience = MISSES_AT_MOST
            answer = self._answers.pop(index, None)
            self._next = index + 1
            for old in [i for i in self._answers if i < index]:
                del self._answers[old]
        if answer is None:
            self.planned_here += 1
            if not self._done and self._sender is not None and not self._sender.is_alive():
                self._skip_to = index + 1
                self._tell(self._skip_to)  # skip ahead: this one is planned here
        else:
            self.helped += 1
        return answer

    def _planning_now(self, index: int) -> bool:
        """Whether the helper is planning item `index` now (as far as its answers and what it was told say)."""
        if not self._planning:
            return False  # (still starting, or reading what it plans)
        helper_at = max(self._last + 1, self._skip_to)
        while helper_at in self._reserved:
            helper_at += 1
        return helper_at == index

    def _plan_ahead(self, index: int, ahead: Ahead) -> bool:
        """Items past the helper's planned here (`ahead`), with the lock let go, until the helper's answer for
        `index` is there; False when `ahead` would plan no more (the importer then waits for the answer)."""
        while index not in self._answers and not self._done:
            item = max(self._ahead + 1, index + 2)  # (not index + 1: the helper may be on to it by now)

            def reserve(item: int = item) -> None:
                self._reserved.add(item)
                self._ahead = item
                self._tell(item | RESERVED)

            self._cond.release()
            try:
                planned = ahead(item, reserve)
            finally:
                self._cond.acquire()
            if not planned:
                return False
            self.planned_ahead += 1
        return True

    def starts(self, wait: float = 0.0) -> list[int] | None:
        """Where the export's items start in its text, once the helper has parsed all of it and said so (it is then
        JSON); None until then (waiting up to `wait` seconds while the helper lives), or when it never will."""
        with self._cond:
            if wait > 0 and not self._started:
                self._cond.wait_for(lambda: self._started or self._done, None if WAIT else wait)
            return self._starts

    def close(self) -> None:
        """Stop the helper and wait for it (an import leaves no process behind). Its answers are no longer wanted,
        so it is killed (it may be planning a long conversation); its pipes close with it."""
        proc = self._proc
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        self._reader.join()
        if self._sender is not None:
            self._sender.join()
        for pipe in (proc.stdin, proc.stdout):
            if pipe is not None:
                try:
                    pipe.close()
                except OSError:
                    pass  # (a broken pipe: nothing left to flush)

    def exited(self) -> bool:
        return self._proc.returncode is not None


def start(module: str, salt: bytes, size: int) -> ImportHelper | None:
    """A helper for an export file of `size` bytes (a zip's JSON is several times larger), started before the file
    is read, when one may pay; it plans nothing until `ask` gives it the export's text."""
    if sys.platform == "win32" or size < HELPER_FROM_CHARS // 8 or size > HELPER_UP_TO_CHARS or not helper_wanted(ENV):
        return None
    if cleaning_on():  # (a capture: its pages are cleaned in this process as they are prepared, never elsewhere)
        return None
    try:
        return ImportHelper(module, salt)
    except OSError:
        return None
