"""A long bulk write lets the write lock go to a writer that waits, and only then (store/bulkwrite.Groups,
pcp-core.md section 7): a pcp writer says it waits (store/db.py `announce_waits`)."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import store.bulkwrite as bulkwrite
from store import Store
from store import stops

ROOT = Path(__file__).resolve().parents[2]

# Another process: opens the store, says so, waits for a line on stdin, then writes one page (stopping
# itself with SIGSTOP once it said it waits for the lock, before its BEGIN: its stop point is set below).
WRITER = textwrap.dedent("""
    import sys
    from store import Store, stops
    st = Store.open(sys.argv[1])
    st._db.execute_sql("PRAGMA busy_timeout=5000")  # (on a store without announcements: fail, not hang)
    print("open", flush=True)
    sys.stdin.readline()
    stops._STAGES, stops._SIGNAL = stops._parse("write-waiting:1!STOP")
    page = st.write_page("notes:other", content="written by another process meanwhile")
    print(page["page_id"], flush=True)
    st.close()
""")


def _contents(db_path) -> list[str]:
    """Every page's content in the order the pages were written."""
    with Store.open(db_path) as st:
        return [r[0] for r in st._db.execute_sql("SELECT r.content FROM page p JOIN revision r ON r.id = p.head "
                                                 "ORDER BY p.id").fetchall()]


def test_a_bulk_write_with_nobody_waiting_never_sleeps(db_path, monkeypatch):
    monkeypatch.setattr(bulkwrite, "FALLBACK_EVERY_S", 1e9, raising=False)  # (no time-based yield in this test)
    slept: list[float] = []
    real_sleep = time.sleep
    monkeypatch.setattr(time, "sleep", lambda s: (slept.append(s), real_sleep(s)))
    with Store.open(db_path) as st:
        st.write_pages_bulk(({"content": f"page number {i}"} for i in range(40)), "notes:bulk", batch_size=5)
    assert slept == []
    assert _contents(db_path) == [f"page number {i}" for i in range(40)]


def _with_a_waiting_writer(db_path, monkeypatch, bulk, at_unit: int | None = None,
                           least_groups: int = 4) -> tuple[list[str], int]:
    """Run `bulk(store)` while another process asks for the write lock: it is stopped (by itself) once it
    said it waits, inside the second group (the lock held; with `at_unit`, inside that import unit), and let
    go on only when the bulk write, between two groups, sees it waiting. The bulk write sleeps no fixed gap
    (YIELD_FOR_S 0, no fallback yields). Returns every page's content in write order and how many groups
    were committed before it got in."""
    monkeypatch.setattr(bulkwrite, "YIELD_FOR_S", 0.0)
    monkeypatch.setattr(bulkwrite, "FALLBACK_EVERY_S", 1e9, raising=False)
    monkeypatch.setattr(bulkwrite, "WAITER_CAP_S", 600.0, raising=False)  # (the other process may be slow to run)
    Store.open(db_path).close()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    other = subprocess.Popen([sys.executable, "-c", WRITER, str(db_path)], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True, env=env)
    assert other.stdin is not None and other.stdout is not None
    groups, units = [0], [0]
    state = {"stopped": False, "resumed": False, "at": -1}
    try:
        assert other.stdout.readline().strip() == "open"
        flush = bulkwrite.RowWriter.flush
        commit = bulkwrite.Groups.released

        def let_it_wait() -> None:
            other.stdin.write("go\n")
            other.stdin.flush()
            _, status = os.waitpid(other.pid, os.WUNTRACED)  # until it stopped itself, announced
            state["stopped"] = os.WIFSTOPPED(status)

        def flush_then_let_it_wait(self: bulkwrite.RowWriter) -> None:
            flush(self)
            if at_unit is None and groups[0] == 1 and not state["stopped"] and self.db.in_transaction():
                let_it_wait()  # (in the second group)

        def counted(self: bulkwrite.Groups) -> None:
            groups[0] += 1
            commit(self)

        reached = stops.reached

        def let_it_go_on(point: str) -> None:
            if point == "import-unit" and at_unit is not None:
                units[0] += 1
                if units[0] == at_unit:
                    let_it_wait()
            if point == "bulk-yield-waiter" and state["stopped"] and not state["resumed"]:
                state["resumed"], state["at"] = True, groups[0]
                os.kill(other.pid, signal.SIGCONT)
            reached(point)

        monkeypatch.setattr(bulkwrite.RowWriter, "flush", flush_then_let_it_wait)
        monkeypatch.setattr(bulkwrite.Groups, "released", counted)
        monkeypatch.setattr(stops, "reached", let_it_go_on)
        with Store.open(db_path) as st:
            bulk(st)
        if not state["resumed"] and state["stopped"]:
            os.kill(other.pid, signal.SIGCONT)  # (never seen waiting: let it finish; the caller's checks fail)
        written = other.stdout.readline().strip()
        assert other.wait(60) == 0
    finally:
        if other.poll() is None:
            other.kill()
            other.wait()
    assert state["stopped"], "the other writer never said it waited"
    assert written.startswith("pg_")
    assert groups[0] >= least_groups
    return _contents(db_path), state["at"]


def test_another_process_waiting_for_the_lock_gets_in_at_the_next_group(db_path, monkeypatch):
    contents, at = _with_a_waiting_writer(db_path, monkeypatch, lambda st: st.write_pages_bulk(
        ({"content": f"bulk page {i}"} for i in range(20)), "notes:bulk", batch_size=4))
    assert at == 2
    other_at = contents.index("written by another process meanwhile")
    assert contents[:other_at] == [f"bulk page {i}" for i in range(8)]  # after the second group, before the third
    assert contents[other_at + 1:] == [f"bulk page {i}" for i in range(8, 20)]
    waiting = Path(str(db_path) + "-waiting")
    assert waiting.stat().st_size == 0 and stat.S_IMODE(waiting.stat().st_mode) == 0o600


def test_another_process_waiting_during_an_import_gets_in_after_the_conversation_being_written(db_path, monkeypatch):
    """An import's group writes its rows when it commits, which takes longer than its conversations took: a writer
    that says it waits has the group commit at the end of the conversation being written, not after the group's
    time (here never: one group for the whole import otherwise). A real export in, through import_chatgpt."""
    import store.importing as importing
    from store.adapters import import_chatgpt

    export = ROOT / "tests" / "data" / "exports" / "chatgpt-0xsalt-chatgpt_conversation_extractor-1.json"
    monkeypatch.setattr(importing, "BATCH_SECONDS", 3600.0)
    monkeypatch.setattr(bulkwrite, "WAITER_LOOK_S", 0.0)  # (looked at every conversation's end)
    # units: the import's own scope, then a conversation each; the writer comes inside the second conversation
    contents, at = _with_a_waiting_writer(db_path, monkeypatch, lambda st: import_chatgpt(st, export), at_unit=3,
                                          least_groups=2)
    assert at == 1  # the first group ended with that conversation
    other_at = contents.index("written by another process meanwhile")
    conversations = [i for i, c in enumerate(contents) if c.startswith("# ")]  # (a conversation page's heading)
    assert len(conversations) == 5
    assert conversations[1] < other_at < conversations[2]  # after the second conversation, before the third


def test_another_process_waiting_during_a_restore_gets_in_at_the_next_group(db_path, tmp_path, monkeypatch):
    import store.restore as restore

    export = tmp_path / "all.jsonl"
    with Store.open(tmp_path / "source.db") as src:
        src.write_pages_bulk(({"content": f"restored page {i}"} for i in range(30)), "notes:restored")
        src.export(export)
    monkeypatch.setattr(restore, "FIRST_BATCH", 4)  # groups of a few pages each
    monkeypatch.setattr(restore, "MAX_BATCH", 4)
    monkeypatch.setattr(bulkwrite, "GROUP_SECONDS", 0.0)
    contents, at = _with_a_waiting_writer(db_path, monkeypatch, lambda st: st.import_export(export))
    assert at == 2
    other_at = contents.index("written by another process meanwhile")
    restored = [c for c in contents if c != "written by another process meanwhile"]
    assert sorted(restored) == sorted(f"restored page {i}" for i in range(30))
    assert 0 < other_at < len(contents) - 1  # between two of the restore's groups, not after them all
    with Store.open(db_path) as st:
        assert "unfinished_restore" not in st.doctor()


def test_without_announcements_the_lock_is_still_let_go_now_and_then(db_path, monkeypatch):
    """A writer that cannot say it waits (the sqlite3 shell, no flock): every FALLBACK_EVERY_S, a yield of
    YIELD_FOR_S as before."""
    monkeypatch.setattr(bulkwrite, "FALLBACK_EVERY_S", 0.0)
    monkeypatch.setattr(bulkwrite, "YIELD_FOR_S", 0.0)
    with Store.open(db_path) as st:
        yields = []
        begin = bulkwrite.Groups.wait_turn

        def counted(self: bulkwrite.Groups, fill=None) -> None:
            begin(self, fill)
            yields.append(self.yields)

        monkeypatch.setattr(bulkwrite.Groups, "wait_turn", counted)
        st.write_pages_bulk(({"content": f"page {i}"} for i in range(12)), "notes:bulk", batch_size=4)
    assert yields == [0, 1, 2]  # (none before the first group)


def test_a_waiter_that_never_takes_the_lock_is_not_waited_for_at_every_group(db_path, monkeypatch):
    """A writer stopped (^Z) after it said it waits keeps its flock: the bulk write waits for it once, up to
    WAITER_CAP_S (0 here), then goes on without waiting for it at every group."""
    monkeypatch.setattr(bulkwrite, "YIELD_FOR_S", 0.0)
    monkeypatch.setattr(bulkwrite, "FALLBACK_EVERY_S", 1e9, raising=False)
    monkeypatch.setattr(bulkwrite, "WAITER_CAP_S", 0.0, raising=False)
    Store.open(db_path).close()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    other = subprocess.Popen([sys.executable, "-c", WRITER, str(db_path)], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True, env=env)
    assert other.stdin is not None and other.stdout is not None
    state = {"flushes": 0, "stopped": False, "yields": 0}
    try:
        assert other.stdout.readline().strip() == "open"
        flush = bulkwrite.RowWriter.flush

        def flush_then_let_it_wait(self: bulkwrite.RowWriter) -> None:
            flush(self)
            state["flushes"] += 1
            if state["flushes"] == 2:  # inside the second group: the lock is ours
                other.stdin.write("go\n")
                other.stdin.flush()
                _, status = os.waitpid(other.pid, os.WUNTRACED)  # until it stopped itself, announced
                state["stopped"] = os.WIFSTOPPED(status)

        reached = stops.reached

        def count(point: str) -> None:
            state["yields"] += point == "bulk-yield-waiter"
            reached(point)

        monkeypatch.setattr(bulkwrite.RowWriter, "flush", flush_then_let_it_wait)
        monkeypatch.setattr(stops, "reached", count)
        with Store.open(db_path) as st:
            st.write_pages_bulk(({"content": f"bulk page {i}"} for i in range(24)), "notes:bulk", batch_size=4)
        os.kill(other.pid, signal.SIGCONT)
        assert other.stdout.readline().strip().startswith("pg_")
        assert other.wait(60) == 0
    finally:
        if other.poll() is None:
            other.kill()
            other.wait()
    assert state["stopped"] and state["flushes"] == 6
    assert state["yields"] == 1  # the groups after the first yield to it did not wait for it again
    assert _contents(db_path) == [f"bulk page {i}" for i in range(24)] + ["written by another process meanwhile"]
