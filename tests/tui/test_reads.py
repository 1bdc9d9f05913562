"""The app's heavy reads in a child process (pcp_tui/reads.py): same answers, fresh after writes, and the
fallback to the calling thread (before the child is ready, for small stores, after the child died)."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from store import NotFound, Store

from pcp_tui import reads as reads_module
from pcp_tui.reads import Reads, Superseded

from helpers import page_list, settle, until
from waits import wait_for


def wait_ready(reads: Reads) -> None:
    """Wait for the child to open the store (a bounded wait, not a timed assertion)."""
    wait_for(lambda: reads.offloaded, "the reader child to start")


@pytest.fixture
def small_store(tmp_path):
    st = Store.open(tmp_path / "s.db")
    for i in range(5):
        st.write_page("project:one" if i % 2 else "project:two", content=f"# Note {i}\n\nalpha beta gamma {i}",
                      media_type="text/markdown")
    yield st
    st.close()


@pytest.fixture
def child(small_store):
    reads = Reads(small_store, min_bytes=0)
    assert reads.start()
    wait_ready(reads)
    yield reads
    reads.close()


def without_volatile(listing: dict) -> dict:
    return {k: v for k, v in listing.items() if k not in ("took_ms",)}


def test_child_answers_as_the_store_does(small_store, child):
    assert child.pid is not None and child.pid != os.getpid()
    assert child.call("page-window", "list_pages", limit=10) == small_store.list_pages(limit=10)
    assert child.call("scopes", "all_scopes") == reads_module.all_scopes(small_store)  # (in the thread)
    assert child._pool.submit(reads_module._child_serve, None, 0, "all_scopes", (), {}).result() == (
        "ok", reads_module.all_scopes(small_store))
    hits = child.call("page-window", "search_pages", "alpha gamma", mode="auto", limit=10)
    assert [h["page_id"] for h in hits["hits"]] == [h["page_id"] for h in
                                                    small_store.search_pages("alpha gamma", mode="auto", limit=10)["hits"]]
    page_id = small_store.list_pages(limit=1)["pages"][0]["page_id"]
    loaded = child.call("inspector", "load_page", page_id)
    assert loaded["full"]["revision"]["page_id"] == page_id


def test_child_sees_writes_made_after_it_started(small_store, child, tmp_path):
    def child_scopes() -> list[dict]:
        answer = child._pool.submit(reads_module._child_serve, None, 0, "all_scopes", (), {}).result()
        assert answer[0] == "ok"
        return answer[1]

    before = child_scopes()
    assert "project:three" not in {s["namespace"] for s in before}
    listed_before = child.call("page-window", "list_pages", limit=100)["pages"]
    small_store.write_page("project:three", content="written by the app", media_type="text/plain")
    other = Store.open(tmp_path / "s.db")  # and by another process's connection
    other.write_page("project:four", content="written elsewhere", media_type="text/plain")
    other.close()
    after = {s["namespace"]: s["page_count"] for s in child_scopes()}
    assert after["project:three"] == 1 and after["project:four"] == 1
    listed_after = child.call("page-window", "list_pages", limit=100)["pages"]
    assert len(listed_after) == len(listed_before) + 2
    found = child.call("page-window", "search_pages", "elsewhere", mode="auto", limit=10)["hits"]
    assert [h["namespace"] for h in found] == ["project:four"]


def test_store_errors_keep_their_class_and_code(child):
    with pytest.raises(NotFound) as caught:
        child.call("inspector", "load_page", "pg_00000000000000000000000000")
    assert caught.value.code == "not_found"
    with pytest.raises(ValueError):
        reads_module.run(child.store, "write_page", (), {})  # only reads are sent to the child


def test_a_superseded_request_is_skipped(child):
    # The child compares a request's generation with its lane's current one: an older one is not run.
    lane = reads_module.LANES.index("page-window")
    current = child._lanes[lane]
    assert child._pool is not None
    stale = child._pool.submit(reads_module._child_serve, lane, current - 1, "list_pages", (), {}).result()
    assert stale == (reads_module._STALE,)
    fresh = child._pool.submit(reads_module._child_serve, lane, current, "list_pages", (), {"limit": 1}).result()
    assert fresh[0] == "ok" and len(fresh[1]["pages"]) == 1


def test_when_the_child_dies_reads_go_on_in_the_thread(small_store, child):
    expected = small_store.list_pages(limit=10)
    os.kill(child.pid, signal.SIGKILL)
    assert child.call("page-window", "list_pages", limit=10) == expected  # answered here instead
    assert not child.offloaded
    assert child.call("scopes", "all_scopes") == reads_module.all_scopes(small_store)


def test_no_child_for_a_small_store_or_another_session(small_store):
    from store import AccessSession

    small = Reads(small_store)  # the default threshold: a few pages stay in the thread
    assert not small.wanted() and not small.start()
    assert small.call("page-window", "list_pages", limit=3) == small_store.list_pages(limit=3)
    client = small_store.with_session(AccessSession.model_client("client", {"project:one": ["read", "search"]}))
    assert not Reads(client, min_bytes=0).wanted()


def test_in_the_thread_every_request_is_answered(small_store):
    # Without a child nothing is skipped: each request of a lane gets its answer, in order.
    reads = Reads(small_store)
    answers = [reads.call("page-window", "list_pages", limit=n) for n in (1, 2, 3)]
    assert [len(a["pages"]) for a in answers] == [1, 2, 3]


def test_a_stale_request_reaches_the_caller_as_superseded(child, monkeypatch):
    # The child answered "stale": the caller gets Superseded (and drops it), not an empty answer.
    assert child._pool is not None

    class StaleFuture:
        def result(self):
            return (reads_module._STALE,)

    monkeypatch.setattr(child._pool, "submit", lambda *a, **k: StaleFuture())
    with pytest.raises(Superseded):
        child.call("page-window", "list_pages", limit=1)


@pytest.mark.encrypted
async def test_the_app_reads_through_the_child_and_survives_its_death(demo_store, make_app):
    st, refs = demo_store
    app = make_app(st)
    app.reads_min_bytes = 0
    async with app.run_test() as pilot:
        await settle(app, pilot)
        await until(pilot, lambda: app.reads is not None and app.reads.offloaded, "the reader child to start")
        from pcp_tui.widgets.inspector import Inspector

        pages = page_list(app)
        pages.focus()
        await pilot.press("down")
        await settle(app, pilot)
        inspector = app.screen.query_one(Inspector)
        assert inspector.page["page_id"] == pages.current["page_id"]
        os.kill(app.reads.pid, signal.SIGKILL)
        await pilot.press("down")
        await settle(app, pilot)
        assert inspector.page["page_id"] == pages.current["page_id"]
        app.screen.query_one("#search").focus()
        await pilot.press(*"compact")
        await pilot.press("enter")
        await settle(app, pilot)
        assert pages.search_query == "compact" and pages.rows
        assert not app.reads.offloaded
        assert not [n for n in app._notifications if n.severity == "error"]  # nothing wrong said on screen
    assert Path(st.path).exists()


def test_the_child_ends_when_the_app_process_dies(small_store):
    # The app's process is killed (no unmount, no close): its reader child must not live on.
    import subprocess
    import sys
    import textwrap

    script = textwrap.dedent(f"""
        import os, signal, sys, time
        from store import Store
        from pcp_tui.reads import Reads

        if __name__ == "__main__":
            reads = Reads(Store.open({str(small_store.path)!r}), min_bytes=0)
            reads.start()
            deadline = time.monotonic() + 60
            while not reads.offloaded and time.monotonic() < deadline:
                time.sleep(0.02)
            print(reads.pid, flush=True)
            os.kill(os.getpid(), signal.SIGKILL)
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                         cwd=Path(__file__).resolve().parents[2])
    child_pid = int(out.stdout.split()[0])

    def alive() -> bool:
        try:
            os.kill(child_pid, 0)
        except ProcessLookupError:
            return False
        # a zombie waits only for init to reap it: it is gone as far as the store is concerned
        try:
            return Path(f"/proc/{child_pid}/stat").read_text().split()[2] != "Z"
        except OSError:
            return False

    wait_for(lambda: not alive(), "the reader child to end with the app's process")


async def test_a_superseded_window_or_page_is_dropped_without_a_word(demo_store, make_app):
    st, refs = demo_store
    app = make_app(st)
    async with app.run_test() as pilot:
        await settle(app, pilot)
        pages = page_list(app)
        before = [r["page_id"] for r in pages.rows]
        real = app.read

        def superseded_once(lane, op, *args, **kwargs):
            if lane in ("page-window", "inspector") and not skipped[lane]:
                skipped[lane] = True
                raise Superseded(op)
            return real(lane, op, *args, **kwargs)

        skipped = {"page-window": False, "inspector": False}
        app.read = superseded_once
        app.screen.reload_pages()  # its window is "superseded": nothing lands, nothing is reported
        await settle(app, pilot)
        assert skipped["page-window"] and not [n for n in app._notifications if n.severity == "error"]
        app.screen.reload_pages()  # the next one lands as usual
        await settle(app, pilot)
        assert [r["page_id"] for r in pages.rows] == before
        pages.focus()
        await pilot.press("down")
        await settle(app, pilot)
        assert skipped["inspector"] and not [n for n in app._notifications if n.severity == "error"]


def test_a_request_superseded_while_it_runs_is_interrupted(small_store, monkeypatch):
    """The serving side, in this process: a read still running when its lane moves on is stopped at its next
    SQLite step and answered as stale (it would otherwise run on and hold up the next request)."""
    import threading

    lanes = [0] * len(reads_module.LANES)
    lane = reads_module.LANES.index("page-window")
    monkeypatch.setattr(reads_module, "_child_store", small_store)
    monkeypatch.setattr(reads_module, "_child_lanes", lanes)
    started = threading.Event()

    def endless(store, op, args, kwargs):  # a read that would take hours: counts to 10^12
        started.set()
        return store._db.execute_sql("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c "
                                     "WHERE x < 1000000000000) SELECT COUNT(*) FROM c").fetchone()

    monkeypatch.setattr(reads_module, "run", endless)
    answer: list[tuple] = []
    serving = threading.Thread(target=lambda: answer.append(
        reads_module._child_serve(lane, 0, "search_pages", ("q",), {})), daemon=True)
    serving.start()
    assert started.wait(30)
    lanes[lane] = 1  # the next keystroke's request
    serving.join(60)
    assert not serving.is_alive(), "the superseded read was not interrupted"
    assert answer == [(reads_module._STALE,)]
    assert small_store.list_pages(limit=1)["pages"]  # the connection is usable afterwards
