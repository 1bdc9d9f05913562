"""`sync_folder(progress=...)`: kB of change files checked, then taken in, then the writing (for bars)."""

from __future__ import annotations

from store import Store
from store.sync import folder as folder_mod


def test_progress_counts_the_change_files_in_phases(stores, tmp_path, monkeypatch):
    monkeypatch.setattr(folder_mod, "CHUNK", 4096)  # several chunks from a small store
    folder = tmp_path / "folder"
    a, b = stores(2)
    with Store.open(a) as st:
        st.write_pages_bulk(({"content": f"page {i} " + "word%d " % i * 40} for i in range(300)), "notes:x")
        code = st.sync_pair(folder)["code"]
        st.sync_folder(folder)
    with Store.open(b) as st:
        st.sync_join(folder, code)
        calls: list[tuple[int, int, str]] = []
        got = st.sync_folder(folder, progress=lambda done, total, what: calls.append((done, total, what)))
    assert got["read"][0]["added"]["page"] == 300
    phases = [w for i, (_, _, w) in enumerate(calls) if i == 0 or calls[i - 1][2] != w]
    assert phases == ["checking change files", "taking in changes", "writing this store's changes"]
    size_kb = -(-sum(p.stat().st_size for p in (folder / got["read"][0]["store_id"]).glob("*.pcs")) // 1024)
    for phase in phases[:2]:
        seen = [(d, t) for d, t, w in calls if w == phase]
        assert {t for _, t in seen} == {size_kb}
        dones = [d for d, _ in seen]
        assert dones == sorted(dones) and dones[0] == 0 and dones[-1] == size_kb
        if phase == "taking in changes":  # (checking reads signed headers only: file by file)
            assert len(set(dones)) > 3  # moves on chunk by chunk, not only at the end
    assert calls[-1] == (0, 0, "writing this store's changes")


def test_nothing_new_reports_empty_phases(stores, tmp_path):
    folder = tmp_path / "folder"
    a, b = stores(2)
    with Store.open(a) as st:
        st.write_page("notes:x", content="one page")
        code = st.sync_pair(folder)["code"]
        st.sync_folder(folder)
    with Store.open(b) as st:
        st.sync_join(folder, code)
        st.sync_folder(folder)
        calls: list[tuple[int, int, str]] = []
        st.sync_folder(folder, progress=lambda *c: calls.append(c))
    assert [c[1] for c in calls] == [0, 0, 0]
