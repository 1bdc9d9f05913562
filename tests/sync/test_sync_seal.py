"""A store's own change file: its records are read under one snapshot of the store, and sealed and written by
another thread, so the snapshot (which keeps every other writer's frames in the WAL) ends with the reading."""

from __future__ import annotations

import contextlib
import errno
import secrets
import threading
from pathlib import Path
from typing import Any, Iterator

import pytest

from store import Store
from store.sync import folder as folder_mod
from store.sync import records
from store.sync.identity import Identity

HEAD = b'{"format":"test"}'
WAIT_S = 60  # the longest a condition below is waited for (it holds at once unless the code is broken)


def _store(path: Path, pages: int = 40) -> Store:
    st = Store.open(path)
    st.write_pages_bulk(({"content": f"seal page {i} " + "words " * 60} for i in range(pages)), "notes:seal")
    return st


def _recs(st: Store) -> Iterator[dict[str, Any]]:
    upto = records.top_marks(st._db)
    return records.changes(st._db, st.owner_id, {}, upto, {})


def _seal_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "pcp-sync-seal"]


class _Recorder:
    """A file that hands every write to `on_write` first."""

    def __init__(self, fh: Any, on_write: Any) -> None:
        self.fh, self.on_write, self.writes = fh, on_write, 0

    def write(self, data: bytes) -> int:
        self.writes += 1
        self.on_write(self.writes)
        return int(self.fh.write(data))


def test_the_snapshot_ends_before_the_chunks_are_written_so_other_writers_frames_fold_back(tmp_path, monkeypatch):
    monkeypatch.setattr(folder_mod, "CHUNK", 2048)  # several chunks, all of them read ahead (the writes wait below)
    monkeypatch.setattr(folder_mod, "SEAL_AHEAD", 10_000)
    db_path = tmp_path / "s.db"
    st = _store(db_path)
    expected = list(_recs(st))
    ended = threading.Event()
    folded: list[tuple[int, int]] = []

    @contextlib.contextmanager
    def reading() -> Iterator[None]:
        with st._db.atomic():
            yield
        ended.set()

    def on_write(n: int) -> None:
        if n == 2 and not folded:  # the first chunk (after the header line): wait until the reading is over
            assert ended.wait(WAIT_S), "a chunk was written inside the store's snapshot"
            with Store.open(db_path) as other:  # another writer, then a fold of its frames
                other.write_page("notes:other", content="written while the change file is being sealed")
                busy, log, done = other._db.execute_sql("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
                folded.append((log, done))

    key = secrets.token_bytes(32)
    ident = Identity(st._db)
    target = tmp_path / "00000001.pcs"
    with open(target, "wb") as fh:
        folder_mod._seal(_Recorder(fh, on_write), HEAD, ident, key, _recs(st), reading)
    assert folded and folded[0][0] > 0 and folded[0][0] == folded[0][1]  # every frame folded back: nobody held them
    assert list(folder_mod._records(target, HEAD, key, ident.sign_pub)) == expected  # and the file is whole
    assert not _seal_threads()
    st.close()


def test_a_write_that_fails_while_sealing_is_raised_and_ends_the_reading_and_the_thread(tmp_path, monkeypatch):
    monkeypatch.setattr(folder_mod, "CHUNK", 1024)
    st = _store(tmp_path / "s.db", pages=200)
    read = 0

    def counted() -> Iterator[dict[str, Any]]:
        nonlocal read
        for rec in _recs(st):
            read += 1
            yield rec

    def on_write(n: int) -> None:
        if n == 3:
            raise OSError(errno.ENOSPC, "No space left on device")

    with open(tmp_path / "f.pcs", "wb") as fh, pytest.raises(OSError, match="No space left"):
        folder_mod._seal(_Recorder(fh, on_write), HEAD, Identity(st._db), secrets.token_bytes(32), counted(),
                         st._db.atomic)
    assert read < 400  # it stopped reading soon after (not every record of the 200 pages)
    assert not st._db.in_transaction()
    assert not _seal_threads()
    st.close()


def test_a_read_that_fails_part_way_is_raised_and_the_sealing_thread_ends(tmp_path, monkeypatch):
    monkeypatch.setattr(folder_mod, "CHUNK", 1024)
    st = _store(tmp_path / "s.db")

    def broken() -> Iterator[dict[str, Any]]:
        for i, rec in enumerate(_recs(st)):
            if i == 30:
                raise RuntimeError("the store went away")
            yield rec

    with open(tmp_path / "f.pcs", "wb") as fh, pytest.raises(RuntimeError, match="went away"):
        folder_mod._seal(fh, HEAD, Identity(st._db), secrets.token_bytes(32), broken(), st._db.atomic)
    assert not st._db.in_transaction()
    assert not _seal_threads()
    st.close()


def test_a_folder_sync_leaves_no_change_file_when_its_sealing_fails(tmp_path, monkeypatch):
    """The journey: `sync_folder` writes this store's file through the sealing thread; a failure there leaves
    nothing half written in the folder, and the next sync writes the whole file."""
    folder = tmp_path / "folder"
    st = _store(tmp_path / "s.db")
    st.sync_pair(folder)
    real = folder_mod.zlib.compress
    calls = 0

    def failing(data: bytes, level: int = -1) -> bytes:
        nonlocal calls
        calls += 1
        if calls == 2:
            raise MemoryError("compress failed")
        return real(data, level)

    monkeypatch.setattr(folder_mod, "CHUNK", 1024)
    monkeypatch.setattr(folder_mod.zlib, "compress", failing)
    with pytest.raises(MemoryError):
        st.sync_folder(folder)
    assert not list(folder.rglob("*.pcs")) and not list(folder.rglob(".*.tmp"))
    monkeypatch.setattr(folder_mod.zlib, "compress", real)
    wrote = st.sync_folder(folder)["wrote"]
    assert wrote and Path(wrote).exists()
    assert not _seal_threads()
    st.close()
