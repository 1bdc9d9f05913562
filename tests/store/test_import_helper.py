"""A ChatGPT import whose conversations are planned in a helper process (store/import_helper.py, issue 31): the store
comes out as the one-process import writes it (export lines, index postings, statistics, the report); a helper
killed part way leaves the importer to plan the rest, losing nothing; a re-import through the helper changes
nothing; and an importer killed mid-import still leaves whole conversations only."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import zipfile

from pathlib import Path

import pytest

from pcpstore_helpers import sqlite3
from store import Store, import_helper
from store.errors import Invalid
from store.adapters import import_chatgpt
from test_bulk_equivalence import _mapped
from test_bulk_index_equivalence import _same_index
from chatgpt_helpers import generated_export

REPO = Path(__file__).resolve().parents[2]
REAL = sorted((REPO / "tests" / "data" / "exports").glob("chatgpt-*.json"))  # real exports (SOURCES.md there)


def _node(node: str, parent: str | None, text: str, role: str = "user", **extra) -> dict:
    return {"id": node, "parent": parent, "children": [], "message": {
        "id": node, "author": {"role": role}, "create_time": 1700001000, **extra,
        "content": {"content_type": "text", "parts": [text]}}}


def awkward_conversations() -> list:
    """What an export may hold that the plan must treat as the one-process import does: parents in a cycle, a
    parent not in the file, hidden scaffolding between a reply and its question, a message over the payload
    limit (refused: skipped, its reply linked past it), a conversation with nothing readable, an item that is not
    a conversation, and one without any time."""
    hidden = _node("h1", "q1", "", role="system")
    hidden["message"]["metadata"] = {"is_visually_hidden_from_conversation": True}
    untimed = _node("u1", None, "no time at all")
    del untimed["message"]["create_time"]
    return [
        {"id": "awk-cycle", "title": "Cycle", "create_time": 1700001000,
         "mapping": {"a": _node("a", "b", "first in a loop"), "b": _node("b", "a", "second in a loop")}},
        {"id": "awk-dangling", "title": "Dangling", "create_time": 1700001000,
         "mapping": {"x": _node("x", "gone", "my parent is not here"), "y": _node("y", "x", "a reply")}},
        {"id": "awk-hidden", "title": "Hidden", "create_time": 1700001000,
         "mapping": {"q1": _node("q1", None, "a question"), "h1": hidden, "r1": _node("r1", "h1", "the answer")}},
        {"id": "awk-huge", "title": "Huge", "create_time": 1700001000,
         "mapping": {"p": _node("p", None, "before"), "big": _node("big", "p", "w " * 600_000),
                     "after": _node("after", "big", "after the refused one")}},
        {"id": "awk-empty", "title": "Empty", "create_time": 1700001000, "mapping": {"e": _node("e", None, "  ")}},
        "not a conversation",
        {"id": "awk-untimed", "title": "", "mapping": {"u1": untimed}},
    ]


def _all_real(tmp_path):
    """Every conversation of the vendored real ChatGPT exports, in one export file, and a generated tail (so that
    there are many conversations, with branches from the real ones)."""
    items: list = []
    for path in REAL:
        data = json.loads(path.read_text(encoding="utf-8"))
        items.extend(data if isinstance(data, list) else data.get("conversations", [data]))
    items.extend(generated_export(40, 3))
    items.extend(awkward_conversations())
    export = tmp_path / "conversations.json"
    export.write_text(json.dumps(items), encoding="utf-8")
    return export, len(items)


def _stores(tmp_path):
    """one.db and helped.db: empty stores of one salt (long words are sealed with the store's key)."""
    with Store.open(tmp_path / "empty.db"):
        pass
    for name in ("one.db", "helped.db"):
        shutil.copyfile(tmp_path / "empty.db", tmp_path / name)


def _import(tmp_path, name, export, **kwargs):
    with Store.open(tmp_path / f"{name}.db") as st:
        report = import_chatgpt(st, export, **kwargs).to_dict()
        st.export(tmp_path / f"{name}.jsonl")
    return {k: v for k, v in report.items() if k not in ("import_id", "path")}


@pytest.mark.parametrize(("namespace", "zipped"), [(None, False), ("project:chats", False), (None, True)])
def test_conversations_planned_in_the_helper_land_as_the_one_process_import_writes_them(tmp_path, helpers,
                                                                                      monkeypatch, namespace, zipped):
    export, n = _all_real(tmp_path)
    if zipped:  # the export .zip: the helper gets the member's text from the importer
        with zipfile.ZipFile(tmp_path / "export.zip", "w", zipfile.ZIP_DEFLATED) as zf:
            zf.write(export, "conversations.json")
        export = tmp_path / "export.zip"
    _stores(tmp_path)
    monkeypatch.setenv(import_helper.ENV, "0")
    one = _import(tmp_path, "one", export, namespace=namespace)
    monkeypatch.setenv(import_helper.ENV, "1")
    helped = _import(tmp_path, "helped", export, namespace=namespace)
    assert helpers[0].helped == n and helpers[0].planned_here == 0  # every conversation came from the helper
    assert helpers[0].exited()
    assert len(helpers) == 1
    assert helped == one and one["created"] > 150
    lines = _mapped(tmp_path / "one.jsonl")
    assert _mapped(tmp_path / "helped.jsonl") == lines
    _same_index(tmp_path / "one.db", tmp_path / "helped.db", by_id=False)


def test_a_helper_killed_part_way_leaves_the_rest_to_the_importer(tmp_path, helpers, monkeypatch):
    export, n = _all_real(tmp_path)
    _stores(tmp_path)
    monkeypatch.setenv(import_helper.ENV, "0")
    one = _import(tmp_path, "one", export)
    monkeypatch.setenv(import_helper.ENV, "1")
    monkeypatch.setenv("PCP_TEST_STOP", "import-helper:4")  # read by the helper only (this process read it before)
    helped = _import(tmp_path, "helped", export)
    assert helpers[0].helped == 3 and helpers[0].planned_here == n - 3  # it answered three, died at its fourth
    assert helpers[0].exited()
    assert helped == one
    assert _mapped(tmp_path / "helped.jsonl") == _mapped(tmp_path / "one.jsonl")
    _same_index(tmp_path / "one.db", tmp_path / "helped.db", by_id=False)


def test_a_helper_stopped_part_way_costs_the_importer_nothing_but_its_answers(tmp_path, helpers, monkeypatch):
    """A helper that stops (SIGSTOP: a process starved of CPU, or ^Z) is not waited for: the importer plans the rest
    itself, and ends the helper when it is done."""
    export, n = _all_real(tmp_path)
    _stores(tmp_path)
    monkeypatch.setenv(import_helper.ENV, "0")
    one = _import(tmp_path, "one", export)
    monkeypatch.setenv(import_helper.ENV, "1")
    monkeypatch.setattr(import_helper, "WAIT", False)
    monkeypatch.setenv("PCP_TEST_STOP", "import-helper:2!STOP")  # it answers one conversation at most
    helped = _import(tmp_path, "helped", export)
    assert helpers[0].helped <= 1 and helpers[0].helped + helpers[0].planned_here == n
    assert helpers[0].exited()
    assert helped == one
    assert _mapped(tmp_path / "helped.jsonl") == _mapped(tmp_path / "one.jsonl")
    _same_index(tmp_path / "one.db", tmp_path / "helped.db", by_id=False)


def test_a_reimport_through_the_helper_changes_nothing(tmp_path, helpers, monkeypatch):
    export, n = _all_real(tmp_path)
    _stores(tmp_path)
    monkeypatch.setenv(import_helper.ENV, "0")
    _import(tmp_path, "one", export)
    monkeypatch.setenv(import_helper.ENV, "1")
    first = _import(tmp_path, "helped", export)
    again = _import(tmp_path, "helped", export)
    assert helpers[1].helped == n  # its plans, made for new pages, were made again here whole
    assert again["created"] == 0 and again["revised"] == 0 and again["unchanged"] == first["created"]
    assert _mapped(tmp_path / "helped.jsonl") == _mapped(tmp_path / "one.jsonl")
    _same_index(tmp_path / "one.db", tmp_path / "helped.db", by_id=False)


CHILD = textwrap.dedent("""
    import sys
    sys.path.insert(0, {repo!r})
    import store.importing as importing
    from store import Store, import_helper
    from store.adapters import import_chatgpt
    importing.BATCH_SECONDS = 0.0  # every conversation its own group
    import_helper.HELPER_FROM_CHARS = 0
    import_helper.WAIT = True  # every conversation's plan is the helper's
    st = Store.open({db!r})
    import_chatgpt(st, {export!r})
    print("done", flush=True)
""")


def test_an_importer_killed_mid_import_with_a_helper_leaves_whole_conversations(tmp_path):
    n, per = 60, 3
    export = tmp_path / "conversations.json"
    export.write_text(json.dumps(generated_export(n, per)))
    db = tmp_path / "db" / "kill.db"
    Store.open(db).close()
    proc = subprocess.run([sys.executable, "-c", CHILD.format(repo=str(REPO), db=str(db), export=str(export))],
                          capture_output=True, timeout=600,
                          env={**os.environ, "PCP_TEST_STOP": "import-unit:21", import_helper.ENV: "1"})
    assert proc.returncode == -signal.SIGKILL, proc.stderr.decode()
    con = sqlite3.connect(db)
    try:  # a conversation is all or nothing: every conversation page in has all its messages
        assert con.execute("SELECT COUNT(*) FROM page").fetchone()[0] == 19 * (per + 1)  # the 20th: not committed
        contains = con.execute("SELECT COUNT(*) FROM relation WHERE relation_type = 'contains' GROUP BY from_page_id")
        assert [row[0] for row in contains] == [per] * 19
    finally:
        con.close()
    with Store.open(db) as st:
        assert st.doctor()["integrity"] == "ok"
        report = import_chatgpt(st, export)
        assert report.unchanged == 19 * (per + 1) and report.created == (n - 19) * (per + 1)


def test_lone_surrogates_in_ids_and_titles_import_through_the_helper_as_in_one_process(tmp_path, helpers, monkeypatch):
    """`\\ud800` escapes (not Unicode; SQLite cannot store them) in a conversation's id, a node's id and a title:
    the import does not crash part way (it did, on the report or a source key), the text is refused where it is
    content, the ids are kept written as their escapes, and the helper's store is the one-process store."""
    items = generated_export(4, 2)
    items[0]["title"] = "bad \ud800 title"  # the conversation page is refused, its skip quotes the title
    items[0]["mapping"]["gen-0000-0"]["message"]["content"]["parts"] = ["x\udfff"]
    items[1]["id"] = "id-\ud800-x"
    node = _node("n\udc00", None, "a message whose node id is not Unicode")
    node["message"]["id"] = "m\udc00"
    items[2]["mapping"]["n\udc00"] = node
    items[3]["current_node"] = "\ud801"
    export = tmp_path / "conversations.json"
    export.write_text(json.dumps(items), encoding="utf-8")
    _stores(tmp_path)
    monkeypatch.setenv(import_helper.ENV, "0")
    one = _import(tmp_path, "one", export)
    monkeypatch.setenv(import_helper.ENV, "1")
    helped = _import(tmp_path, "helped", export)
    assert helpers[0].helped == len(items)
    assert helped == one
    assert (one["conversations"], one["messages"], one["created"]) == (3, 7, 10)  # the first: its page refused
    assert one["skipped"] == [{"item": "chatgpt conversation gen-0000 (bad \\ud800 title)", "reason":
                               "Payload content holds a lone surrogate (text that is not valid Unicode); it cannot be stored."}]
    lines = _mapped(tmp_path / "one.jsonl")
    assert any('"namespace":"conversation:chatgpt:id-' in line and '"conversation_id":"id-\\\\ud800-x"' in line
               for line in lines)
    assert any('"node_id":"n\\\\udc00"' in line for line in lines)
    assert _mapped(tmp_path / "helped.jsonl") == lines
    with Store.open(tmp_path / "helped.db") as st:  # and a re-import changes nothing
        again = import_chatgpt(st, export).to_dict()
    assert again["created"] == 0 and again["revised"] == 0


def test_with_a_helper_the_importer_reads_only_the_conversations_it_plans_itself(tmp_path, helpers, monkeypatch):
    """The helper parses the export and says where each conversation starts; the importer then reads none of the
    text whole (only the first few items, to see it is a ChatGPT export), and reports the same progress."""
    from store.adapters import chatgpt

    export, n = _all_real(tmp_path)
    _stores(tmp_path)
    seen: dict[str, list] = {"one": [], "helped": []}
    monkeypatch.setenv(import_helper.ENV, "0")
    one = _import(tmp_path, "one", export, progress=lambda *args: seen["one"].append(args))
    parsed: list[str] = []
    parse = chatgpt.parse_json_text
    monkeypatch.setattr(chatgpt, "parse_json_text", lambda text, label: parsed.append(label) or parse(text, label))
    monkeypatch.setenv(import_helper.ENV, "1")
    helped = _import(tmp_path, "helped", export, progress=lambda *args: seen["helped"].append(args))
    assert parsed == []  # (one process: the whole text, once)
    assert helpers[0].helped == n and helpers[0].starts() is not None and len(helpers[0].starts()) == n
    assert helped == one
    assert seen["helped"] == seen["one"] == [(done, n, "conversations") for done in range(1, n + 1)]
    assert _mapped(tmp_path / "helped.jsonl") == _mapped(tmp_path / "one.jsonl")


@pytest.mark.parametrize("how", ["KILL", "STOP"])
def test_a_helper_ended_before_it_says_where_conversations_start_leaves_the_reading_to_the_importer(
        tmp_path, helpers, monkeypatch, how):
    """Killed (or stopped: not waited for past about a whole parse's time) after it parsed the export but before
    it said where the conversations start: the importer reads on by itself, and writes the one-process store."""
    export, n = _all_real(tmp_path)
    _stores(tmp_path)
    monkeypatch.setenv(import_helper.ENV, "0")
    one = _import(tmp_path, "one", export)
    monkeypatch.setenv(import_helper.ENV, "1")
    monkeypatch.setattr(import_helper, "WAIT", how == "KILL")
    monkeypatch.setenv("PCP_TEST_STOP", f"import-helper-starts:1!{how}")
    helped = _import(tmp_path, "helped", export)
    assert helpers[0].helped == 0 and helpers[0].planned_here == n and helpers[0].starts() is None
    assert helpers[0].exited()
    assert helped == one
    assert _mapped(tmp_path / "helped.jsonl") == _mapped(tmp_path / "one.jsonl")
    _same_index(tmp_path / "one.db", tmp_path / "helped.db", by_id=False)


@pytest.mark.parametrize("tail", ["trailing comma", "cut short", "extra data"])
def test_an_export_not_json_at_its_end_writes_nothing_though_the_importer_read_before_it_knew(
        tmp_path, helpers, monkeypatch, tail):
    """The importer reads and plans before anyone has read the export to its end; every conversation is then its
    own group, yet a text that turns out not to be JSON is refused as the one-process import refuses it, with
    nothing written (the import's first group begins only once the text is known to be JSON)."""
    import store.importing as importing

    text = json.dumps(generated_export(30, 3) + awkward_conversations())
    text = {"trailing comma": text[:-1] + ",]", "cut short": text[:-40], "extra data": text + " []"}[tail]
    export = tmp_path / "conversations.json"
    export.write_text(text, encoding="utf-8")
    monkeypatch.setattr(importing, "BATCH_SECONDS", 0.0)
    _stores(tmp_path)
    errors = {}
    for name, env in (("one", "0"), ("helped", "1")):
        monkeypatch.setenv(import_helper.ENV, env)
        with Store.open(tmp_path / f"{name}.db") as st, pytest.raises(Invalid) as caught:
            import_chatgpt(st, export)
        errors[name] = caught.value.message
        con = sqlite3.connect(tmp_path / f"{name}.db")
        try:
            assert con.execute("SELECT COUNT(*) FROM page").fetchone()[0] == 0
            assert con.execute("SELECT COUNT(*) FROM scope WHERE namespace LIKE 'conversation:%'").fetchone()[0] == 0
        finally:
            con.close()
    assert errors["helped"] == errors["one"] and "malformed JSON" in errors["one"]
    assert helpers[0].starts() is None and helpers[0].helped == 0  # it said nothing: the text is not JSON


def test_an_export_read_item_by_item_is_what_json_loads_reads(tmp_path):
    """`array_items` (the importer's and the helper's reading of an export one item at a time) takes exactly the
    texts json.loads takes that are arrays, with the same values, each item decoded again at its start."""
    from store.adapters.base import NotAnArray, array_items, decode_at

    texts = [path.read_text(encoding="utf-8") for path in REAL]
    texts += ["[]", " [ ] \n", '[1,"a",{"b":[null]}]', "[1,]", "[,1]", "[1 2]", "[1] x", "[", "[1,", "[1]]",
              '{"conversations": []}', '"x"', "", "\ufeff[1]", "[1]\u00a0", '["\\ud800"]', "[[[]]]\r\n\t",
              "[" * 100_000 + "]" * 100_000]
    for text in texts:
        try:
            want = json.loads(text)
        except (ValueError, RecursionError):
            want = ValueError
        try:
            pairs = list(array_items(text))
        except NotAnArray:
            assert want is ValueError or not isinstance(want, list), text[:40]
            continue
        except (ValueError, RecursionError):
            assert want is ValueError, text[:40]
            continue
        assert [value for _, value in pairs] == want, text[:40]
        assert all(decode_at(text, start)[0] == value for start, value in pairs)
