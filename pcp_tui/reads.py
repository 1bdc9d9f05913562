"""The app's heavy store reads in a child process, so their Python work never holds the event loop's GIL.

Page-list windows (list_pages, search_pages), the scope list and the inspector's page are read by
thread workers; the store's ranking and row shaping are Python, and a thread running them holds the
GIL the event loop needs to draw (bench/tui_bench.py saw half of every long loop block waiting for it).
`Reads` sends these calls to one child process that opened the same store file as the owner: the
worker thread only waits for the answer (no GIL held), the child does the work.

- Requests go by lane (one per exclusive worker group: "page-window", "inspector", ...). Each
  request bumps its lane's counter in shared memory; the child skips a request whose lane has moved on
  (a search superseded by the next keystroke) and interrupts one already running when its lane moves
  on (SQLite's interrupt, at its next statement step), and the caller gets `Superseded`, which it drops
  quietly.
- The scope counts (`all_scopes`) stay in the thread: SQLite's scan, no Python to speak of (THREAD_READS).
- Until the child has opened the store, for a small store, for a session that is not the owner's, and
  after the child died, the call runs in the calling thread as before (nothing is said on screen).
- Only reads go to the child; writes stay in the app's process. Every read is its own transaction, so
  after a write by the app or another process the child's next read sees it (WAL).
- Answers are the store's plain data (dicts and lists), pickled across; store errors keep their class,
  code and message.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
import threading
from pathlib import Path
from concurrent.futures import CancelledError, Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any, Callable

LANES = ("page-window", "scopes", "inspector")
MIN_BYTES = 32 * 1024 * 1024  # a smaller store answers in a few ms in a thread: no child for it
_STALE = "stale"
CHILD_NICENESS = 10  # the child's CPU priority below the app's (os.nice)
PARENT_CHECK = 1.0  # seconds between the child's looks at whether the app's process is still there
STALE_CHECK = 0.02  # seconds between a running request's looks at whether it was superseded


class Superseded(Exception):
    """A newer request of the same lane was made before this one ran: nobody waits for its answer."""


def all_scopes(store: Any) -> list[dict]:
    """Every scope the session sees (list_scopes, a page of 100 at a time)."""
    scopes: list[dict] = []
    cursor = None
    while True:
        page = store.list_scopes(limit=100, cursor=cursor)
        scopes += page["scopes"]
        cursor = page["next_cursor"]
        if cursor is None:
            return scopes


def _load_page(store: Any, page_id: str) -> dict:
    from . import reading

    return reading.load_page(store, page_id)


# What may be asked: the store's own reads by name, and the app's composed reads.
STORE_READS = frozenset({"list_pages", "search_pages", "list_scopes", "read_pages"})
COMPOSED: dict[str, Callable[..., Any]] = {"all_scopes": all_scopes, "load_page": _load_page}
# Reads that stay in the calling thread even with a child: the scope counts are one long SQLite scan (C code,
# the GIL released; 1.4 s on a million pages) that would hold up the one child's page windows and pages.
THREAD_READS = frozenset({"all_scopes"})


def run(store: Any, op: str, args: tuple, kwargs: dict) -> Any:
    """One read, in whichever process holds `store`."""
    if op in COMPOSED:
        return COMPOSED[op](store, *args, **kwargs)
    if op not in STORE_READS:
        raise ValueError(f"{op!r} is not a read the app sends to its reader")
    return getattr(store, op)(*args, **kwargs)


# --- the child ---

_child_store: Any = None
_child_lanes: Any = None


def _store_key(path: Any) -> bytes | None:
    """The key this process opened an encrypted store with (None for a plain store)."""
    from store import crypt

    return crypt.cached_key(Path(path)) if crypt.is_encrypted(Path(path)) else None


def _child_start(path: str, lanes: Any, key: bytes | None = None) -> None:
    global _child_store, _child_lanes
    # The child shares the app's terminal: nothing it might print may land on the app's screen.
    quiet = os.open(os.devnull, os.O_WRONLY)
    os.dup2(quiet, 1)
    os.dup2(quiet, 2)
    os.close(quiet)
    try:  # on a busy machine the app's drawing goes first: a search waits a little, a keystroke does not
        os.nice(CHILD_NICENESS)
    except OSError:
        pass
    threading.Thread(target=_exit_with, args=(os.getppid(),), daemon=True).start()
    from store import Store

    if key is not None:  # an encrypted store's key, sent by the parent over the pool's pipe (never argv or env)
        from store import crypt

        crypt.remember(Path(path), key)
    _child_store = Store.open(path, migrate=False)  # the app migrated it (or refused to) before this started
    _child_lanes = lanes


def _exit_with(parent: int) -> None:
    """End the child when the app's process is gone, however it ended (the pool's pipes never say so: the
    child holds both of their ends)."""
    import time

    while os.getppid() == parent:
        time.sleep(PARENT_CHECK)
    os._exit(0)


def _child_ping() -> int:
    return os.getpid()


def _child_serve(lane: int | None, generation: int, op: str, args: tuple, kwargs: dict) -> tuple:
    from store import PcpError

    if lane is not None and _child_lanes[lane] != generation:
        return (_STALE,)
    stop = threading.Event()
    if lane is not None:  # a request superseded while it runs (the next keystroke's search) stops there
        threading.Thread(target=_interrupt_when_stale, args=(lane, generation, _child_store._db.connection(), stop),
                         daemon=True).start()
    try:
        return ("ok", run(_child_store, op, args, kwargs))
    except Exception as error:
        if lane is not None and _child_lanes[lane] != generation:
            return (_STALE,)  # interrupted (or failed) after a newer request came: nobody waits for it
        if isinstance(error, PcpError):  # rebuilt by class name: a PcpError made with another code keeps it
            return ("error", type(error).__name__, error.message, error.code)
        raise
    finally:
        stop.set()


def _interrupt_when_stale(lane: int, generation: int, connection: Any, stop: threading.Event) -> None:
    """Interrupt the SQLite statements running for a request once its lane has moved on (the store turns the
    interruption into an error, which `_child_serve` answers as stale)."""
    while not stop.wait(STALE_CHECK):
        if _child_lanes[lane] != generation:
            # SQLite's sqlite3_interrupt, safe from another thread; it stops the statement running now and is
            # a no-op between statements (the ranking's Python), so it is repeated until the request ends.
            connection.interrupt()


# --- the app's side ---


class Reads:
    """Runs the app's heavy reads of `store` in a child process when that helps, else in the calling thread."""

    def __init__(self, store: Any, *, min_bytes: int = MIN_BYTES, start_method: str = "spawn") -> None:
        self.store = store
        self.min_bytes = min_bytes
        self.start_method = start_method
        self.pid: int | None = None  # the child's, once it has opened the store
        self._pool: ProcessPoolExecutor | None = None
        self._ready = False
        self._dead = False
        self._lock = threading.Lock()
        self._lanes: Any = None

    @property
    def offloaded(self) -> bool:
        """True while calls go to the child."""
        return self._ready and not self._dead

    def wanted(self) -> bool:
        """A child helps for the owner's session on a store big enough for reads to take long."""
        session = getattr(self.store, "session", None)
        path = getattr(self.store, "path", None)
        if session is None or not getattr(session, "is_owner", False) or path is None:
            return False
        try:
            return os.path.getsize(path) >= self.min_bytes
        except OSError:
            return False

    def start(self) -> bool:
        """Start the child (in the background: calls run in the thread until it is ready); False when not wanted."""
        if self._pool is not None or self._dead or not self.wanted():
            return False
        context = multiprocessing.get_context(self.start_method)
        # Textual replaces sys.stderr with a capture that has no file descriptor; multiprocessing hands the
        # child's helpers sys.stderr's, so the real one stands in while the child starts (it is quiet: below).
        captured, sys.stderr = sys.stderr, sys.__stderr__ or sys.stderr
        try:
            self._lanes = context.Array("q", len(LANES), lock=False)
            self._pool = ProcessPoolExecutor(1, mp_context=context, initializer=_child_start,
                                             initargs=(str(self.store.path), self._lanes,
                                                       _store_key(self.store.path)))
            self._pool.submit(_child_ping).add_done_callback(self._started)
        except (OSError, RuntimeError, ValueError):
            self._dead = True
            return False
        finally:
            sys.stderr = captured
        return True

    def _started(self, future: Future) -> None:
        if future.cancelled() or future.exception() is not None:
            self._dead = True
            return
        self.pid = future.result()
        self._ready = True

    def call(self, lane: str | None, op: str, *args: Any, **kwargs: Any) -> Any:
        """The answer of one read; `Superseded` when a newer request of `lane` came first (child only)."""
        pool = self._pool
        if not self.offloaded or pool is None or op in THREAD_READS:
            return run(self.store, op, args, kwargs)
        index = LANES.index(lane) if lane in LANES else None
        generation = 0
        if index is not None:
            with self._lock:
                self._lanes[index] += 1
                generation = self._lanes[index]
        try:
            answer = pool.submit(_child_serve, index, generation, op, args, kwargs).result()
        except (BrokenProcessPool, RuntimeError, CancelledError):
            if self._pool is None:  # closed (the app ends or opens another store): nobody waits for it
                raise Superseded(op) from None
            self._dead = True  # the child died: carry on in this thread, now and from now on
            return run(self.store, op, args, kwargs)
        if answer[0] == _STALE:
            raise Superseded(op)
        if answer[0] == "error":
            import store.errors as errors

            kind = getattr(errors, answer[1], errors.PcpError)
            error = kind(answer[2]) if isinstance(kind, type) and issubclass(kind, errors.PcpError) \
                else errors.PcpError(answer[2])
            error.code = answer[3]
            raise error
        return answer[1]

    def close(self) -> None:
        """Stop the child now (a read it is running is abandoned); later calls run in the thread."""
        pool, self._pool = self._pool, None
        self._ready = False
        if pool is None:
            return
        processes = list(getattr(pool, "_processes", None) or {})
        pool.shutdown(wait=False, cancel_futures=True)
        for pid in processes:
            try:
                os.kill(pid, 15)
            except OSError:
                pass
