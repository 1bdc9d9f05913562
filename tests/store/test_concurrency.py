"""pcp-core.md §4 revise_page: "Of two concurrent revises on the same head exactly one
wins"; concurrent writers never see "database is locked"; idempotent retries racing."""

from __future__ import annotations

import multiprocessing as mp
import threading


import pcpstore_helpers as h


def _check_one_winner(store, db_path, page_id, base_rev, outcomes, n_before):
    oks = [o for o in outcomes if o[0] == "ok"]
    errs = [o for o in outcomes if o[0] != "ok"]
    assert len(oks) == 1, f"expected exactly one winner, got {outcomes}"
    assert len(errs) == 1
    _, exc_type, code, message = errs[0]
    assert code == "conflict", f"loser got {exc_type} {code}: {message}"
    assert "locked" not in message.lower()
    winner = oks[0][1]
    assert h.revision_count(db_path) == n_before + 1, "history must have exactly one new revision"
    hist = h.history(store, page_id)
    assert hist[0]["revision_id"] == winner
    assert hist[1]["revision_id"] == base_rev
    assert h.head(store, page_id) == winner
    return winner


def test_two_threads_revise_same_head_exactly_one_wins(store, db_path):
    from store import PcpError, Store

    p = h.write(store, "project:race", "base")
    base = p["revision_id"]
    for round_ in range(3):
        n_before = h.revision_count(db_path)
        barrier = threading.Barrier(2)
        outcomes: list = []
        lock = threading.Lock()

        def run(tag, barrier=barrier, lock=lock, outcomes=outcomes, round_=round_, base=base):  # bind this round
            st = Store.open(db_path)
            try:
                barrier.wait(timeout=30)
                try:
                    r = st.revise_page(p["page_id"], base, content=f"round {round_} by {tag}")
                    out = ("ok", r["revision_id"])
                except PcpError as exc:
                    out = ("err", type(exc).__name__, exc.code, exc.message)
                except Exception as exc:  # noqa: BLE001
                    out = ("err", type(exc).__name__, None, str(exc))
                with lock:
                    outcomes.append(out)
            finally:
                st.close()

        threads = [threading.Thread(target=run, args=(f"t{i}",)) for i in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert len(outcomes) == 2, outcomes
        base = _check_one_winner(store, db_path, p["page_id"], base, outcomes, n_before)


def test_two_processes_revise_same_head_exactly_one_wins(store, db_path):
    p = h.write(store, "project:race", "base")
    ctx = mp.get_context("spawn")
    barrier = ctx.Barrier(2)
    queue = ctx.Queue()
    n_before = h.revision_count(db_path)
    procs = [
        ctx.Process(target=h.worker_revise, args=(str(db_path), p["page_id"], p["revision_id"], f"p{i}",
                                                  barrier, queue))
        for i in range(2)
    ]
    for pr in procs:
        pr.start()
    results = [queue.get(timeout=120) for _ in procs]
    h.wait_all(procs)
    outcomes = [r for _, r in results]
    _check_one_winner(store, db_path, p["page_id"], p["revision_id"], outcomes, n_before)


def test_two_processes_write_500_pages_each(store, db_path):
    store.create_scope("project:bulk", display_name="Bulk")
    ctx = mp.get_context("spawn")
    barrier = ctx.Barrier(2)
    queue = ctx.Queue()
    procs = [
        ctx.Process(target=h.worker_bulk_writes, args=(str(db_path), "project:bulk", 500, f"w{i}", barrier, queue))
        for i in range(2)
    ]
    for pr in procs:
        pr.start()
    results = [queue.get(timeout=170) for _ in procs]
    h.wait_all(procs, timeout=60)
    all_errors = [e for _, _, errs in results for e in errs]
    assert not any("database is locked" in e for e in all_errors), all_errors[:5]
    assert all_errors == []
    assert sum(ok for _, ok, _ in results) == 1000
    assert h.scope_map(store)["project:bulk"]["page_count"] == 1000
    assert len(h.hit_ids(store, "", mode="temporal", scopes=["project:bulk"])) == 1000


def test_two_threads_replaying_one_ingest_key_make_one_page(store, db_path):
    from store import PcpError, Store

    barrier = threading.Barrier(2)
    outcomes: list = []
    lock = threading.Lock()
    n_before = h.revision_count(db_path)

    def run():
        st = Store.open(db_path)
        try:
            barrier.wait(timeout=30)
            try:
                out = st.ingest_event({"content": "racing event"}, "task:race", "race-key")
            except PcpError as exc:
                out = {"error": exc.code, "message": exc.message}
            with lock:
                outcomes.append(out)
        finally:
            st.close()

    threads = [threading.Thread(target=run) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert all("error" not in o for o in outcomes), outcomes
    assert sorted(o["created"] for o in outcomes) == [False, True]
    assert len({o["page_id"] for o in outcomes}) == 1
    assert h.revision_count(db_path) == n_before + 1


def test_two_threads_creating_one_scope_by_writing(store, db_path):
    """Two writers racing to create the same new scope both succeed; one scope exists."""
    from store import Store

    barrier = threading.Barrier(2)
    errors: list = []

    def run(i):
        st = Store.open(db_path)
        try:
            barrier.wait(timeout=30)
            try:
                for j in range(5):
                    st.write_page("project:newrace", content=f"writer {i} page {j}")
            except Exception as exc:  # noqa: BLE001
                errors.append(f"{type(exc).__name__}: {exc}")
        finally:
            st.close()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert errors == []
    scopes = [s for s in h.all_scopes(store) if s["namespace"] == "project:newrace"]
    assert len(scopes) == 1
    assert scopes[0]["page_count"] == 10


def test_every_connection_maps_the_file_for_reads(store):
    """Searches at a million pages read thousands of rows: the store's connections read through a memory map
    (bench/README.md, store_requery), and only reads (SQLite writes with write(), so erasure is unchanged)."""
    import threading

    from store.db import PRAGMAS

    wanted = dict(PRAGMAS)["mmap_size"]
    assert wanted >= 1 << 30
    seen: list[int] = []

    def other_thread() -> None:  # each worker thread has a connection of its own
        seen.append(store._db.execute_sql("PRAGMA mmap_size").fetchone()[0])

    t = threading.Thread(target=other_thread)
    t.start()
    t.join()
    assert store._db.execute_sql("PRAGMA mmap_size").fetchone()[0] == wanted
    assert seen == [wanted]


def test_an_export_reads_without_the_map_and_puts_it_back(store, tmp_path):
    """An export passes over everything once: mapped, every page read would count in the process's RSS."""
    from store.db import PRAGMAS

    store.write_page("notes:x", content="one page to export")
    during: list[int] = []

    def progress(done, total, unit=""):
        during.append(store._db.execute_sql("PRAGMA mmap_size").fetchone()[0])

    store.export(tmp_path / "out.jsonl", progress=progress)
    assert during and set(during) == {0}
    assert store._db.execute_sql("PRAGMA mmap_size").fetchone()[0] == dict(PRAGMAS)["mmap_size"]
