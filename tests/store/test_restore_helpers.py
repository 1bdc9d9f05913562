"""A large export in export order is restored with helper processes making its pages into rows while the
restore writes (store/restore_file.py Helpers, issue 31): the result is the same store as without them (the
export line for line, the same postings and term counts, everything erasable), a stopped run is completed
by running it again (what the store holds already is then made ready and written as ever), and the check of
every line still comes before anything is written."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

import store.restore as restore
import store.restore_file as restore_file
from store import PcpError, Store
from test_bulk_index_equivalence import _erase_all, _same_index, _source
from test_restore_groups import Stop, _lines, _whole_units


@pytest.fixture
def helped(monkeypatch):
    """Helpers for any file whatever the load, in tasks of 7 pages; returns the sizes of the tasks the restore
    wrote as a helper's rows."""
    monkeypatch.setenv("PCP_RESTORE_HELPERS", "1")
    monkeypatch.setattr(restore_file, "HELPERS_MIN_BYTES", 0)
    monkeypatch.setattr(restore_file, "TASK_PAGES", 7)
    written: list[int] = []
    as_rows = restore.Restore._rows

    def spy(self, rows):
        written.append(len(rows.pages))
        return as_rows(self, rows)

    monkeypatch.setattr(restore.Restore, "_rows", spy)
    return written


def test_a_helped_restore_is_the_export_line_for_line(tmp_path, exported, helped):
    with Store.open(tmp_path / "b.db") as st:
        result = st.import_export(exported)
        assert result["added"]["page"] == 901
        st.export(tmp_path / "again.jsonl")
        assert st.search_pages("harbour logistics")["hits"]
    assert _lines(tmp_path / "again.jsonl")[1:-1] == _lines(exported)[1:-1]
    assert sum(helped) > 800  # nearly every page came as a helper's rows (a task with a derived page does not)


def test_a_helped_restore_indexes_and_counts_as_the_store_it_came_from(tmp_path, helped):
    src = tmp_path / "src.db"
    _source(src)  # a revised page, a tombstoned one (indexed, not counted), two scopes
    with Store.open(src) as st:
        st.export(tmp_path / "src.jsonl")
    with Store.open(tmp_path / "restored.db") as st:
        st.import_export(tmp_path / "src.jsonl")
        st.export(tmp_path / "restored.jsonl")
    assert helped
    assert _lines(tmp_path / "restored.jsonl")[1:-1] == _lines(tmp_path / "src.jsonl")[1:-1]
    _same_index(src, tmp_path / "restored.db", by_id=True)
    _erase_all(tmp_path / "restored.db")


def test_a_stopped_helped_restore_is_completed_by_the_same_import(tmp_path, exported, helped, monkeypatch):
    """The rerun meets the pages the first run wrote: those tasks are written as the one-process restore writes."""
    monkeypatch.setattr(restore, "FIRST_BATCH", 30)  # (the first group ends inside a task)
    calls: list[int] = []

    def stop_after_first_group(done: int, total: int, what: str) -> None:
        calls.append(done)
        raise Stop

    with Store.open(tmp_path / "b.db") as st:
        with pytest.raises(Stop):
            st.import_export(exported, progress=stop_after_first_group)
        partial = _whole_units(st, exported)
        assert 0 < partial < 901
        assert st.import_export(exported)["added"]["page"] == 901 - partial
        assert "unfinished_restore" not in st.doctor() and _whole_units(st, exported) == 901
        st.export(tmp_path / "again.jsonl")
    assert _lines(tmp_path / "again.jsonl")[1:-1] == _lines(exported)[1:-1]


def _rewrite(path: Path, records: list[dict]) -> None:
    lines = [json.dumps(r, ensure_ascii=False, sort_keys=True, separators=(",", ":")) + "\n" for r in records]
    body = "".join(lines).encode("utf-8")
    end = {"kind": "pcp.export.end", "sha256": hashlib.sha256(body).hexdigest()}
    path.write_bytes(body + (json.dumps(end, separators=(",", ":")) + "\n").encode("utf-8"))


def test_the_tasks_hold_the_units_of_the_one_pass_reading(tmp_path, exported, monkeypatch):
    """Invariant of the check's cuts: the tasks, one after another, give the units the file gives read in one
    pass (every page with its revisions, a revision whose page line is missing on its own, in the same place)."""
    monkeypatch.setattr(restore_file, "TASK_PAGES", 5)
    records = [json.loads(line) for line in _lines(exported)[:-1]]
    pages = [i for i, r in enumerate(records) if r["kind"] == "page"]
    for i in sorted({pages[0], pages[5], pages[6], pages[11], pages[-1]}, reverse=True):
        del records[i]  # their revisions stay: units of their own (a store would need those pages already)
    _rewrite(tmp_path / "cut.jsonl", records)
    plan = restore_file.check_file(tmp_path / "cut.jsonl")
    tasks = plan.page_tasks()
    assert plan.canonical and len(tasks) > 100

    def shape(units):
        return [(u.page and u.page[0], [n for n, _ in u.revisions]) for u in units if u.kind == "page"]

    one_pass = shape(restore_file.units(tmp_path / "cut.jsonl", plan))
    by_tasks = shape(u for t in tasks for u in restore_file.task_units(tmp_path / "cut.jsonl", t))
    assert by_tasks == one_pass
    assert sum(1 for page, _ in one_pass if page is None) >= 5


def test_a_bad_line_late_in_a_helped_file_writes_nothing(tmp_path, exported, helped):
    records = [json.loads(line) for line in _lines(exported)[:-1]]
    last = [r for r in records if r["kind"] == "revision"][-1]
    last["payload"]["content"] = "quietly edited"  # its digest no longer matches
    _rewrite(tmp_path / "bad.jsonl", records)
    with Store.open(tmp_path / "b.db") as st:
        with pytest.raises(PcpError, match="content_digest does not match"):
            st.import_export(tmp_path / "bad.jsonl")
        assert st.list_pages()["pages"] == [] and st.list_scopes()["scopes"] == []
    assert not helped


def test_a_helper_that_dies_leaves_its_tasks_to_the_restore(tmp_path, exported, helped, monkeypatch):
    """The helper is killed (SIGKILL) once the restore has written its first rows: the restore makes the tasks the
    helper had not answered ready itself, and the store is the export, line for line."""
    import os
    import signal

    started: list[restore_file.Helpers] = []
    start = restore_file.Helpers.__init__

    def keep(self, *args):
        start(self, *args)
        started.append(self)

    monkeypatch.setattr(restore_file.Helpers, "__init__", keep)
    as_rows = restore.Restore._rows

    def kill_on_first_rows(self, rows):
        if len(helped) == 1:
            for proc in started[0].procs:
                os.kill(proc.pid, signal.SIGKILL)
                proc.wait()
        return as_rows(self, rows)

    monkeypatch.setattr(restore.Restore, "_rows", kill_on_first_rows)
    with Store.open(tmp_path / "b.db") as st:
        assert st.import_export(exported)["added"]["page"] == 901
        assert "unfinished_restore" not in st.doctor() and _whole_units(st, exported) == 901
        st.export(tmp_path / "again.jsonl")
    assert started[0].done_here >= 1
    assert _lines(tmp_path / "again.jsonl")[1:-1] == _lines(exported)[1:-1]


def test_the_restore_makes_tasks_ready_itself_while_no_helper_answers(tmp_path, exported, helped, monkeypatch):
    """The helper is stopped (SIGSTOP) once the check is done: the restore goes on with the tasks not yet taken
    (the helper is let go again at the first of those), and the store is the export, line for line."""
    import os
    import signal

    stopped: list[restore_file.Helpers] = []
    units = restore_file.Helpers.units

    def stop_then_units(self, tasks):
        for proc in self.procs:
            os.kill(proc.pid, signal.SIGSTOP)
        stopped.append(self)
        yield from units(self, tasks)

    here = restore_file.prepare_task

    def prepare_here(*args):
        if stopped[0].done_here == 1:
            for proc in stopped[0].procs:
                os.kill(proc.pid, signal.SIGCONT)
        return here(*args)

    monkeypatch.setattr(restore_file.Helpers, "units", stop_then_units)
    monkeypatch.setattr(restore_file, "prepare_task", prepare_here)  # (this process's calls only)
    with Store.open(tmp_path / "b.db") as st:
        assert st.import_export(exported)["added"]["page"] == 901
        st.export(tmp_path / "again.jsonl")
    assert stopped[0].done_here >= 1 and helped
    assert _lines(tmp_path / "again.jsonl")[1:-1] == _lines(exported)[1:-1]


def test_pcp_restore_helpers_0_restores_in_one_process(tmp_path, exported, helped, monkeypatch):
    monkeypatch.setenv("PCP_RESTORE_HELPERS", "0")
    monkeypatch.setattr(restore_file.Helpers, "__init__", None)  # (starting one would fail the test)
    with Store.open(tmp_path / "b.db") as st:
        assert st.import_export(exported)["added"]["page"] == 901
        st.export(tmp_path / "again.jsonl")
    assert not helped
    assert _lines(tmp_path / "again.jsonl")[1:-1] == _lines(exported)[1:-1]


def _plan_in_halves(path: Path) -> restore_file.ExportPlan:
    """check_file with a helper checking the second half (it must have: else the test would compare one pass)."""
    helpers = restore_file.Helpers(1, path, b"salt")
    asked: list[bool] = []
    check = helpers.check
    helpers.check = lambda task: asked.append(check(task)) or asked[-1]  # type: ignore[method-assign]
    try:
        return restore_file.check_file(path, helpers=helpers)
    finally:
        helpers.close()
        assert asked == [True]


def _edited(exported: Path, out: Path, edit) -> Path:
    records = [json.loads(line) for line in _lines(exported)[:-1]]
    edit(records)
    _rewrite(out, records)
    return out


@pytest.mark.parametrize("edit", [
    lambda records: None,
    lambda records: records.__delitem__(len(records) // 2),  # (a page or revision line at the halves' seam)
    lambda records: records.insert(len(records) // 2 + 3, records.pop(5)),  # a page amid the revisions: another order
])
def test_a_check_in_halves_learns_what_the_check_in_one_pass_learns(tmp_path, exported, helped, edit):
    """Invariant: this process's half and a helper's half give the plan one pass gives (lines, digest, sections,
    order, scopes, the page tasks)."""
    path = _edited(exported, tmp_path / "x.jsonl", edit)
    one, halves = restore_file.check_file(path), _plan_in_halves(path)
    assert (halves.lines, halves.sha256, halves.canonical, halves.sections, halves.scopes) == \
        (one.lines, one.sha256, one.canonical, one.sections, one.scopes)
    assert halves.page_tasks() == one.page_tasks() or not one.canonical
    if one.canonical:  # the tasks, one after another, hold the units of the one-pass reading
        def shape(units):
            return [(u.page and u.page[0], [n for n, _ in u.revisions]) for u in units if u.kind == "page"]

        assert shape(u for t in halves.page_tasks() for u in restore_file.task_units(path, t)) == \
            shape(restore_file.units(path, one))


def _late_bad_digest(records):
    [r for r in records if r["kind"] == "revision"][-1]["payload"]["content"] = "quietly edited"


def _early_bad_actor(records):
    [r for r in records if r["kind"] == "revision"][0]["created_by"]["actor_type"] = "god"


def _two_bad(records):
    _late_bad_digest(records)
    _early_bad_actor(records)


@pytest.mark.parametrize("edit,message", [(_late_bad_digest, "content_digest does not match"),
                                          (_early_bad_actor, "god"), (_two_bad, "god")])
def test_a_check_in_halves_refuses_the_first_bad_line_as_one_pass_does(tmp_path, exported, helped, edit, message):
    path = _edited(exported, tmp_path / "bad.jsonl", edit)
    with pytest.raises(PcpError, match=message) as one:
        restore_file.check_file(path)
    with pytest.raises(PcpError, match=message) as halves:
        _plan_in_halves(path)
    assert halves.value.message == one.value.message


def test_a_check_in_halves_refuses_a_wrong_digest(tmp_path, exported, helped):
    text = exported.read_bytes()
    i = text.index(b'"keywords":["k', len(text) * 3 // 4) + 14
    other = b"1" if text[i:i + 1] != b"1" else b"2"
    (tmp_path / "edited.jsonl").write_bytes(text[:i] + other + text[i + 1:])  # (a keyword: still valid, digest not)
    with pytest.raises(PcpError, match="digest does not match its lines"):
        _plan_in_halves(tmp_path / "edited.jsonl")
