"""A sync applies its records in groups (pcp-core.md section 7, issue 31): another writer gets in between them,
no group shows a page without its head, a sync killed part way leaves whole pages and the next one completes it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from sync_helpers import export_lines, sync
from store import Store

ROOT = Path(__file__).resolve().parents[2]


def _source(path: Path) -> int:
    """300 pages over two scopes, every tenth revised twice, a few linked; returns the page count."""
    with Store.open(path) as st:
        for ns in ("work:a", "work:b"):
            st.write_pages_bulk(({"content": f"{ns} page {i} on lanterns and tide {i % 7}"} for i in range(150)), ns)
        pids = [r[0] for r in st._db.execute_sql("SELECT page_id FROM page ORDER BY id").fetchall()]
        for n, pid in enumerate(pids[::10]):
            head = st.read_pages([pid], projections=["manifest"])["results"][0]["current_revision_id"]
            again = st.revise_page(pid, head, content=f"revised {n} once")
            st.revise_page(pid, again["revision_id"], content=f"revised {n} twice")
        for a, b in zip(pids[1::40], pids[2::40], strict=True):
            st.link_pages(a, "supersedes", b)
    return 300


@pytest.fixture
def grouped(monkeypatch):
    """Every record boundary is a group boundary (a group is otherwise about 0.4 s of writing)."""
    import store.bulkwrite as bulkwrite

    monkeypatch.setattr(bulkwrite, "GROUP_SECONDS", 0.0)
    monkeypatch.setattr(bulkwrite, "YIELD_FOR_S", 0.0)


def _headless(st: Store) -> tuple[int, int]:
    """(pages, pages without a head or title) as another connection (`st`'s) sees the store now."""
    row = st._db.execute_sql("SELECT COUNT(*), COALESCE(SUM(head IS NULL OR title = ''), 0) FROM page").fetchone()
    return int(row[0]), int(row[1])


def test_a_sync_lets_another_writer_in_and_never_shows_a_page_without_its_head(tmp_path, grouped, monkeypatch):
    import store.bulkwrite as bulkwrite
    from store.sync import ops

    src, dst = tmp_path / "a.db", tmp_path / "b.db"
    pages = _source(src)
    Store.open(dst).close()
    other = Store.open(dst)
    other._db.execute_sql("PRAGMA busy_timeout = 2000")  # (a sync holding the lock throughout fails this write)
    seen: list[tuple[int, int]] = []
    written = []
    take, begin = ops._Run.take, bulkwrite.Groups.begin

    def watched(self, rec):
        seen.append(_headless(other))
        return take(self, rec)

    def between_groups(self, fill=None):
        if len(seen) >= 250 and not written:  # the lock is free: another writer gets in here
            written.append(other.write_page("notes:other", content="written while the sync ran"))
        return begin(self, fill)

    monkeypatch.setattr(ops._Run, "take", watched)
    monkeypatch.setattr(bulkwrite.Groups, "begin", between_groups)
    sync(dst, src)
    other.close()
    assert written and max(n for _, n in seen) == 0  # no committed group held a page without its head
    assert any(0 < n < pages for n, _ in seen)  # pages came in group by group, before the sync ended
    with Store.open(dst) as st:
        assert st._db.execute_sql("SELECT COUNT(*) FROM page").fetchone()[0] == pages + 1
    ours = export_lines(dst, tmp_path / "x.jsonl")
    assert [line for line in ours if "notes:other" not in line and "written while" not in line] == \
        [line for line in export_lines(src, tmp_path / "y.jsonl") if "notes:other" not in line]


def test_a_killed_sync_leaves_whole_pages_and_the_next_sync_completes_it(tmp_path):
    src, dst, control = tmp_path / "a.db", tmp_path / "b.db", tmp_path / "c.db"
    pages = _source(src)
    Store.open(dst).close()
    script = textwrap.dedent(f"""
        import os, signal
        import store.bulkwrite as bulkwrite
        from store import Store
        from store.sync import ops
        bulkwrite.GROUP_SECONDS = bulkwrite.YIELD_FOR_S = 0.0
        seen = [0]
        take = ops._Run.take
        def dying(self, rec):
            seen[0] += 1
            if seen[0] == 500:
                os.kill(os.getpid(), signal.SIGKILL)
            return take(self, rec)
        ops._Run.take = dying
        with Store.open({str(dst)!r}) as st:
            st.sync_with({str(src)!r})
    """)
    proc = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env={**os.environ}, capture_output=True)
    assert proc.returncode == -signal.SIGKILL, proc.stderr.decode()
    with Store.open(dst) as st:
        landed, headless = _headless(st)
    assert 0 < landed < pages and headless == 0
    sync(dst, src)
    sync(control, src)
    assert export_lines(dst, tmp_path / "x.jsonl") == export_lines(control, tmp_path / "y.jsonl")


def test_a_stream_with_every_page_first_parks_them_and_still_writes_each_with_its_head(tmp_path, grouped, monkeypatch):
    """Change files of older pcp send every page before any revision: the pages past the few held in memory wait
    in the temporary table (batched), and still no group shows a page without its head."""
    from store.sync import ops

    monkeypatch.setattr(ops, "PARK_IN_MEMORY", 5)
    monkeypatch.setattr(ops, "PARK_BATCH", 7)
    src, dst = tmp_path / "a.db", tmp_path / "b.db"
    pages = _source(src)
    with Store.open(src) as a:
        owner, peer = a.owner_id, a.sync.store_id
        with a._db.atomic():
            upto, stream = a.sync.outgoing({})
            recs = list(stream)
    first = ("receipt", "scope", "page")
    old_order = [r for k in first for r in recs if r["kind"] == k] + [r for r in recs if r["kind"] not in first]
    assert [r["kind"] for r in recs] != [r["kind"] for r in old_order]  # today's order interleaves them
    with Store.open(dst) as b:
        b._db.execute_sql("UPDATE meta SET value = ? WHERE key = 'owner_id'", (owner,))
    other = Store.open(dst)
    seen: list[tuple[int, int]] = []
    take = ops._Run.take

    def watched(self, rec):
        seen.append(_headless(other))
        return take(self, rec)

    monkeypatch.setattr(ops._Run, "take", watched)
    with Store.open(dst) as b:
        applied = b.sync.apply(peer, iter(old_order), upto)
    other.close()
    assert applied["added"]["page"] == pages
    assert max(n for _, n in seen) == 0 and any(0 < n < pages for n, _ in seen)
    assert export_lines(dst, tmp_path / "x.jsonl") == export_lines(src, tmp_path / "y.jsonl")
