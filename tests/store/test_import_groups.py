"""An import's units write their rows once per group (issue 31): the pages, revisions, relations and index
rows of every unit of a group go in together when the group commits, and the store comes out exactly as
when every unit is written on its own (same export lines, same postings and per-scope counts, a rerun
that changes nothing), from the vendored real exports and agent sessions."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any, Callable

import pytest

from store import Invalid, Store, importing
from store.core import dumps
from store.adapters import import_chatgpt, import_claude, import_claude_code
from store.bulkwrite import RowWriter
from test_bulk_equivalence import _mapped
from test_bulk_index_equivalence import _same_index

DATA = Path(__file__).resolve().parents[1] / "data"
EXPORTS = DATA / "exports"
SESSIONS = DATA / "agents" / "claude-code"


def _imports() -> list[tuple[Callable[..., Any], Path]]:
    out: list[tuple[Callable[..., Any], Path]] = [(import_chatgpt, p) for p in sorted(EXPORTS.glob("chatgpt-*.json"))]
    out += [(import_claude, p) for p in sorted(EXPORTS.glob("claude-*.json"))]
    out.append((import_claude_code, SESSIONS))
    return out


def _import_all(db: Path, monkeypatch: pytest.MonkeyPatch, seconds: float) -> list[int]:
    """Every vendored source imported into `db` with groups of `seconds`; the rows of each write of gathered
    rows (RowWriter.flush) that had any."""
    monkeypatch.setattr(importing, "BATCH_SECONDS", seconds)
    written: list[int] = []
    flush = RowWriter.flush

    def counted(self: RowWriter) -> None:
        if self.pending():
            written.append(self.pending())
        flush(self)

    monkeypatch.setattr(RowWriter, "flush", counted)
    with Store.open(db) as st:
        for importer, path in _imports():
            importer(st, path)
        st.export(db.with_suffix(".jsonl"))
    monkeypatch.setattr(RowWriter, "flush", flush)
    return written


def test_a_group_writes_its_units_rows_at_once_and_the_store_is_the_one_unit_by_unit_writing_makes(tmp_path, monkeypatch):
    Store.open(tmp_path / "units.db").close()
    shutil.copy(tmp_path / "units.db", tmp_path / "group.db")  # one index salt: long terms are sealed with it
    units = _import_all(tmp_path / "units.db", monkeypatch, 0.0)  # every unit its own group
    group = _import_all(tmp_path / "group.db", monkeypatch, 3600.0)  # one group per import
    # One write per import in one group, against one per unit that wrote anything.
    assert len(group) == len(_imports()) < len(units)
    assert sum(group) == sum(units)
    assert _mapped(tmp_path / "group.jsonl") == _mapped(tmp_path / "units.jsonl")
    _same_index(tmp_path / "units.db", tmp_path / "group.db", by_id=False)
    # A rerun finds every page as it is: nothing created, nothing revised, nothing written.
    with Store.open(tmp_path / "group.db") as st:
        for importer, path in _imports():
            report = importer(st, path).to_dict()
            assert (report["created"], report["revised"]) == (0, 0), path
        st.export(tmp_path / "again.jsonl")
    assert _mapped(tmp_path / "again.jsonl")[:len(_mapped(tmp_path / "group.jsonl"))] == _mapped(tmp_path / "group.jsonl")


def _unit(st: Store, key: str, text: str | None = None) -> None:
    with st.import_unit("test-importer") as unit:
        unit.ensure_scope("agent:test")
        unit.upsert(key, "agent:test", payload={"media_type": "text/plain", "content": text or f"text of {key}"})


def _contents(st: Store) -> set[str]:
    return {row[0] for row in st._db.execute_sql("SELECT r.content FROM page p JOIN revision r ON r.id = p.head")}


def test_a_unit_that_fails_after_its_group_rows_were_written_keeps_the_earlier_units(db_path, monkeypatch):
    """A revision goes through the checked path, which writes the group's rows first, inside the unit's
    savepoint: when that unit then fails, the rows of the units before it are written again."""
    monkeypatch.setattr(importing, "BATCH_SECONDS", 3600.0)
    with Store.open(db_path) as st:
        _unit(st, "old")
        with st.bulk_loading():
            _unit(st, "a")
            with pytest.raises(Invalid):
                with st.import_unit("test-importer") as unit:
                    unit.ensure_scope("agent:test")
                    unit.upsert("old", "agent:test", payload={"media_type": "text/plain", "content": "old, revised"})
                    unit.upsert("bad", "agent:test", facets={"title": 3})  # refused: the unit rolls back
            _unit(st, "c")
        assert _contents(st) == {"text of old", "text of a", "text of c"}
        for word in ("old", "a", "c"):
            hits = st.search_pages(f"text of {word}", mode="text")["hits"]
            assert f"text of {word}" in {h["title"] for h in hits}
        _unit(st, "a")  # found again: the page of the group is in the store with its source key
        assert _contents(st) == {"text of old", "text of a", "text of c"}


@pytest.mark.parametrize("content", ["", "plain", 'quotes " and \\ backslash', "tab\tnew\nline\r\x00\x1f\x7f",
                                     "é ü 中文 🙂 \u2028\u2029 </script>", "x" * 10_000],
                         ids=["empty", "plain", "quotes", "controls", "non-ascii", "long"])
def test_the_change_digest_encodes_a_payload_as_the_stored_json_does(content):
    """An import's change digest holds the payload's JSON, encoded without `dumps`: it must be the same text,
    or every page imported before would look changed to a rerun (and be revised)."""
    payload = {"media_type": "text/markdown; charset=utf-8", "content": content}
    assert importing.payload_json(payload) == dumps(payload)
    assert importing.payload_json(None) == dumps(None)


def test_a_source_id_a_group_holds_is_found_before_the_group_commits(db_path, monkeypatch):
    """An importer asks the store where a source id's page is (a session imported before keeps its scope): a
    page an earlier unit of the same group made is found, from outside a unit and from inside one."""
    monkeypatch.setattr(importing, "BATCH_SECONDS", 3600.0)
    with Store.open(db_path) as st:
        with st.bulk_loading():
            _unit(st, "a")
            assert st.source_page_id("a") is not None
            assert st.source_scope("a") == {"namespace": "agent:test", "parent": None, "cwd": None}
            _unit(st, "b")
            with st.import_unit("test-importer") as unit:
                unit.ensure_scope("agent:test")
                assert st.source_page_id("b") is not None
                unit.upsert("c", "agent:test", payload={"media_type": "text/plain", "content": "text of c"})
        assert _contents(st) == {"text of a", "text of b", "text of c"}


def test_a_unit_opened_inside_another_unit_of_a_group_lands_with_it(db_path, monkeypatch):
    """A unit inside a unit is a savepoint of its own that writes its rows itself: its keys must not be the
    ones the group has reserved for rows it still holds."""
    monkeypatch.setattr(importing, "BATCH_SECONDS", 3600.0)
    with Store.open(db_path) as st:
        with st.bulk_loading():
            _unit(st, "a")
            with st.import_unit("test-importer") as outer:
                outer.ensure_scope("agent:test")
                outer.upsert("b", "agent:test", payload={"media_type": "text/plain", "content": "text of b"})
                _unit(st, "inner")
                outer.upsert("c", "agent:test", payload={"media_type": "text/plain", "content": "text of c"})
        assert _contents(st) == {"text of a", "text of b", "text of inner", "text of c"}


class _NotReady(Exception):
    pass


def test_a_bulk_load_settles_before_its_first_group_takes_the_lock(db_path, monkeypatch):
    """The settle of an import that reads its file as it goes (a wait for its helper, or a whole parse: up to
    seconds) runs before the first group begins, so no other writer waits through it; what it raises writes
    nothing and leaves no transaction open."""
    monkeypatch.setattr(importing, "BATCH_SECONDS", 0.0)
    seen: list[bool] = []
    with Store.open(db_path) as st:
        with st.bulk_loading(settle=lambda: seen.append(st._db.in_transaction())):
            _unit(st, "a")
            _unit(st, "b")
        assert seen == [False] and _contents(st) == {"text of a", "text of b"}

        def refuse() -> None:
            raise _NotReady
        with pytest.raises(_NotReady), st.bulk_loading(settle=refuse):
            _unit(st, "c")
        assert not st._db.in_transaction() and _contents(st) == {"text of a", "text of b"}


def test_a_bulk_load_settles_before_its_first_commit_once_and_a_refusal_rolls_the_group_back(db_path, monkeypatch):
    """`bulk_loading(settle=...)` (an import that reads its file as it goes): `settle` runs before the first group
    commits and not again; what it raises rolls back the group it would have committed, and earlier groups stay.
    Inside another bulk load it holds that one's next commit the same way."""
    monkeypatch.setattr(importing, "BATCH_SECONDS", 0.0)  # every unit its own group
    calls: list[str] = []
    with Store.open(db_path) as st:
        with st.bulk_loading(settle=lambda: calls.append("settled")):
            _unit(st, "a")
            _unit(st, "b")
        assert calls == ["settled"] and _contents(st) == {"text of a", "text of b"}

        def refuse() -> None:
            calls.append("refused")
            raise _NotReady
        with pytest.raises(_NotReady), st.bulk_loading(settle=refuse):
            _unit(st, "c")
            _unit(st, "d")
        assert calls == ["settled", "refused"] and _contents(st) == {"text of a", "text of b"}

        monkeypatch.setattr(importing, "BATCH_SECONDS", 3600.0)  # the outer load's group commits at its end
        with pytest.raises(_NotReady), st.bulk_loading():
            _unit(st, "e")
            with st.bulk_loading(settle=refuse):
                _unit(st, "f")
        assert _contents(st) == {"text of a", "text of b"}
