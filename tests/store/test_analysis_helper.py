"""A long `write_pages_bulk` analyses its next batch in a helper process (store/analyst.py, issue 31): the index,
the statistics and the export come out exactly as the single-page path writes them; a helper killed part way
is replaced by analysing in the writer, losing nothing; a refused item still leaves the batches before it
written; and no process is left behind."""

from __future__ import annotations

import shutil

import pytest

from store import Store, analyst, cores
from test_analysis_invariants import real_texts
from test_bulk_equivalence import ITEMS, _mapped
from test_bulk_index_equivalence import _erase_all, _postings, _same_index

NS = "project:helper"
# The chosen items, and real chat and agent text (quotes, dashes, emoji, other scripts) with dates to read.
PAGES = ITEMS + [{"content": t, "observed_at": "2024-05-08T10:00:00Z"} for t in real_texts(with_shared=False)
                 if len(t) > 40][:150]


@pytest.fixture
def helpers(monkeypatch):
    """Every Analyst a bulk write makes, with the helper started at its first batch."""
    made: list[analyst.Analyst] = []
    monkeypatch.setattr(analyst, "HELPER_FROM_PAGES", 1)
    monkeypatch.setattr(analyst, "WAIT_FOR_START", True)
    monkeypatch.setenv(analyst.ENV, "1")  # whatever the machine's load
    init = analyst.Analyst.__init__

    def record(self, salt):
        init(self, salt)
        made.append(self)

    monkeypatch.setattr(analyst.Analyst, "__init__", record)
    return made


def _one_by_one(tmp_path):
    """The pages written one by one into one.db; bulk.db an empty store of the same salt (long words are sealed
    with the store's key: the same terms in two stores need the same key)."""
    with Store.open(tmp_path / "empty.db"):
        pass
    for name in ("one.db", "bulk.db"):
        shutil.copyfile(tmp_path / "empty.db", tmp_path / name)
    with Store.open(tmp_path / "one.db") as st:
        for item in PAGES:
            st.write_page(NS, **item)
        st.export(tmp_path / "one.jsonl")


def test_pages_analysed_in_the_helper_are_indexed_and_counted_as_write_page_does(tmp_path, helpers):
    _one_by_one(tmp_path)
    with Store.open(tmp_path / "bulk.db") as st:
        assert st.write_pages_bulk(iter(PAGES), NS, batch_size=16)["created"] == len(PAGES)
        st.export(tmp_path / "bulk.jsonl")
    assert helpers[0].helped == helpers[0].batches > 5  # every batch went through the helper
    assert helpers[0].exited()  # the helper has exited
    assert _postings(tmp_path / "one.db", by_id=False)
    _same_index(tmp_path / "one.db", tmp_path / "bulk.db", by_id=False)
    assert _mapped(tmp_path / "bulk.jsonl") == _mapped(tmp_path / "one.jsonl")
    _erase_all(tmp_path / "bulk.db")  # every row went in with the values its erasure analyses again


def test_a_helper_killed_part_way_is_replaced_by_the_writer(tmp_path, helpers, monkeypatch):
    _one_by_one(tmp_path)
    monkeypatch.setenv("PCP_TEST_STOP", "analysis-helper:3")  # read by the helper only (this process read it before)
    with Store.open(tmp_path / "bulk.db") as st:
        assert st.write_pages_bulk(iter(PAGES), NS, batch_size=16)["created"] == len(PAGES)
    assert 2 <= helpers[0].helped < helpers[0].batches  # it took batches, died at its third; the rest were done here
    assert helpers[0].exited()
    _same_index(tmp_path / "one.db", tmp_path / "bulk.db", by_id=False)


def test_long_words_are_sealed_alike_in_the_helper(tmp_path):
    """The comparison above covers sealed terms (16 bytes or more: a keyed hash)."""
    assert any(len(w.encode()) >= 16 for item in PAGES for w in str(item["content"]).split() if w.isalpha())


def test_a_helper_that_cannot_start_leaves_the_analysis_here(tmp_path, helpers, monkeypatch):
    _one_by_one(tmp_path)
    monkeypatch.setattr(analyst.sys, "executable", str(tmp_path / "no-such-python"))
    with Store.open(tmp_path / "bulk.db") as st:
        assert st.write_pages_bulk(iter(PAGES), NS, batch_size=16)["created"] == len(PAGES)
    assert helpers[0].helped == 0 and helpers[0].batches > 5
    _same_index(tmp_path / "one.db", tmp_path / "bulk.db", by_id=False)


def test_a_helper_only_while_a_core_is_free_or_asked_for_and_never_for_a_short_write(tmp_path, helpers, monkeypatch):
    monkeypatch.setattr(cores, "cores", lambda: 2)
    monkeypatch.setattr(cores.os, "getloadavg", lambda: (0.2, 0.2, 0.2))
    monkeypatch.delenv(analyst.ENV)  # unset: a core is free, so the helper is used
    with Store.open(tmp_path / "free.db") as st:
        st.write_pages_bulk(iter(PAGES), NS, batch_size=16)
    monkeypatch.setenv(analyst.ENV, "0")  # never
    with Store.open(tmp_path / "never.db") as st:
        st.write_pages_bulk(iter(PAGES), NS, batch_size=16)
    monkeypatch.delenv(analyst.ENV)
    monkeypatch.setattr(cores.os, "getloadavg", lambda: (1.6, 1.6, 1.6))  # both cores busy: it would take turns
    with Store.open(tmp_path / "busy.db") as st:
        st.write_pages_bulk(iter(PAGES), NS, batch_size=16)
    monkeypatch.setenv(analyst.ENV, "1")
    monkeypatch.setattr(analyst, "HELPER_FROM_PAGES", len(PAGES) + 1)
    with Store.open(tmp_path / "short.db") as st:
        st.write_pages_bulk(iter(PAGES), NS, batch_size=16)
    assert [a.helped > 0 for a in helpers] == [True, False, False, False] and helpers[1].batches > 5
    assert all(a.exited() for a in helpers)


def test_a_refused_item_leaves_the_batches_before_it_written(tmp_path, helpers):
    items = [{"content": f"note {i} on the tides"} for i in range(10)] + [{"content": None}]
    with Store.open(tmp_path / "bulk.db") as st:
        with pytest.raises(Exception, match="needs content"):
            st.write_pages_bulk(iter(items), NS, batch_size=4)
        assert len(st.list_pages(NS)["pages"]) == 8  # two whole batches; the third held the refused item
        trail = [(e["decision"], e["counts"].get("pages")) for e in st.audit_log(operation="write_pages_bulk")["events"]]
        assert trail[::-1] == [("allowed", 4), ("allowed", 4), ("failed", None)]  # in the order it happened
    assert helpers[0].helped >= 2
    assert helpers[0].exited()


def test_items_the_helper_cannot_be_sent_are_made_ready_here(tmp_path, helpers):
    """The helper checks and analyses the items themselves: an item carrying something that cannot be sent to
    it (an extra key holding a function, which the write ignores) is made ready in the writer instead, and
    every page is written, in order."""
    items = [{"content": f"log entry {i} about the ferry", "note": (lambda n=i: n) if i % 5 == 0 else i}
             for i in range(40)]
    with Store.open(tmp_path / "bulk.db") as st:
        assert st.write_pages_bulk(iter(items), NS, batch_size=4)["created"] == 40
        pages = st.list_pages(NS, limit=100)["pages"]
    assert sorted(p["title"] for p in pages) == sorted(f"log entry {i} about the ferry" for i in range(40))
    assert helpers[0].helped == helpers[0].batches == 10
    assert helpers[0].exited()


SCRIPT = """
import sys
sys.path.insert(0, {root!r})
with open({mark!r}, "a") as mark:
    mark.write("ran\\n")
from store import Store, analyst, cores
analyst.HELPER_FROM_PAGES = 1
analyst.WAIT_FOR_START = True
made = []
init = analyst.Analyst.__init__
analyst.Analyst.__init__ = lambda self, salt: (init(self, salt), made.append(self))[0]
with Store.open({db!r}) as st:
    st.write_pages_bulk(({{"content": f"page {{i}} of the harbour log"}} for i in range(100)), "project:s", batch_size=10)
print(made[0].helped, made[0].batches)
"""


def test_a_script_without_a_main_guard_runs_once(tmp_path):
    """The helper is a plain child fed through pipes: it never imports the caller's script again (a
    multiprocessing worker would, and run the script's bulk write a second time inside the helper)."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = str(Path(analyst.__file__).resolve().parents[1])
    script = tmp_path / "load.py"
    script.write_text(SCRIPT.format(root=root, mark=str(tmp_path / "mark"), db=str(tmp_path / "s.db")))
    env = {**os.environ, analyst.ENV: "1"}
    out = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.split() == ["10", "10"]  # every batch analysed in the helper
    assert (tmp_path / "mark").read_text() == "ran\n"
    with Store.open(tmp_path / "s.db") as st:
        assert len(st.list_pages("project:s", limit=500)["pages"]) == 100
