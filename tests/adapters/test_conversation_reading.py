"""A conversation given back reads in order: its bundle and its Markdown file list the messages oldest first,
with the conversation page first, every reply after what it answers; Claude's <antThinking> is thinking."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import import_helpers as h
from store.adapters import import_chatgpt, import_claude

CHATGPT = "chatgpt-danny-avila-LibreChat-1.json"
CLAUDE = "claude-simonw-claude-to-sqlite-2.json"


def _conversation(store, source: str) -> tuple[str, dict, list[dict]]:
    """(namespace, conversation page, message pages) of the imported conversation with the most messages."""
    by_ns: dict[str, list[dict]] = {}
    for page in h.pages(store, projections=("manifest", "relations")):
        if page["revision"]["namespace"].startswith(f"conversation:{source}:"):
            by_ns.setdefault(page["revision"]["namespace"], []).append(page)
    ns = max(by_ns, key=lambda n: len(by_ns[n]))
    conv = next(p for p in by_ns[ns] if "role" not in p["revision"]["facets"])
    return ns, conv, [p for p in by_ns[ns] if "role" in p["revision"]["facets"]]


def _parents(messages: list[dict]) -> dict[str, str]:
    out = {}
    for page in messages:
        for rel in page["relations"]["outgoing"]:
            if rel["relation_type"] == "responds_to":
                out[page["revision"]["page_id"]] = rel["to_page_id"]
    return out


def _assert_reading_order(order: list[str], conv: dict, messages: list[dict]) -> None:
    by_id = {p["revision"]["page_id"]: p for p in messages}
    assert order[0] == conv["revision"]["page_id"]
    assert sorted(order[1:]) == sorted(by_id)  # every message once
    dates = [by_id[i]["revision"]["observed_at"] for i in order[1:]]
    assert dates == sorted(dates), "messages are not oldest first"
    position = {pid: n for n, pid in enumerate(order)}
    for child, parent in _parents(messages).items():
        assert position[parent] < position[child], "a reply comes before what it answers"


@pytest.mark.parametrize("source, name, importer", [("chatgpt", CHATGPT, import_chatgpt), ("claude", CLAUDE, import_claude)])
def test_a_bundle_of_a_conversation_reads_oldest_first(store, exports, source, name, importer):
    importer(store, exports / name)
    ns, conv, messages = _conversation(store, source)
    assert len(messages) >= 6
    by_scope = [e["page_id"] for e in store.bundle(scopes=[ns])["entries"]]
    _assert_reading_order(by_scope, conv, messages)
    # A selection of its messages, given newest first, still reads oldest first.
    newest_first = sorted(messages, key=lambda p: p["revision"]["observed_at"], reverse=True)
    chosen = [conv["revision"]["page_id"]] + [p["revision"]["page_id"] for p in newest_first]
    _assert_reading_order([e["page_id"] for e in store.bundle(chosen)["entries"]], conv, messages)
    # A query that finds some of its messages: those read in order too.
    found = [e["page_id"] for e in store.bundle(query="the", scopes=[ns])["entries"]]
    dates = [next(p for p in messages if p["revision"]["page_id"] == i)["revision"]["observed_at"] for i in found
             if i != conv["revision"]["page_id"]]
    assert len(dates) >= 2 and dates == sorted(dates)


def test_other_pages_keep_their_place_around_a_conversation(store, exports):
    import_chatgpt(store, exports / CHATGPT)
    ns, conv, messages = _conversation(store, "chatgpt")
    note = store.write_page("project:a", content="a note", facets={"title": "note"})["page_id"]
    by_date = sorted(messages, key=lambda p: p["revision"]["observed_at"])
    first, last = by_date[0]["revision"]["page_id"], by_date[-1]["revision"]["page_id"]
    assert by_date[0]["revision"]["observed_at"] < by_date[-1]["revision"]["observed_at"]
    other = store.write_page("project:a", content="another note", facets={"title": "other"})["page_id"]
    order = [e["page_id"] for e in store.bundle([note, last, other, first])["entries"]]
    assert order == [note, first, last, other]  # the conversation gathers where it first stands, in order


def _front(text: str) -> dict:
    head = text.split("\n---\n", 1)[0].removeprefix("---\n")
    return {k: json.loads(v) for k, v in (line.split(": ", 1) for line in head.splitlines())}


@pytest.mark.parametrize("source, name, importer", [("chatgpt", CHATGPT, import_chatgpt), ("claude", CLAUDE, import_claude)])
def test_the_markdown_export_writes_one_file_per_conversation_in_order(store, exports, tmp_path: Path, source, name,
                                                                       importer):
    importer(store, exports / name)
    ns, conv, messages = _conversation(store, source)
    note = store.write_page("project:a", content="about the chat", facets={"title": "A note on it"})["page_id"]
    store.link_pages(messages[0]["revision"]["page_id"], "related_to", note)
    result = store.export(tmp_path / "md", format="markdown")
    files = sorted(p for p in (tmp_path / "md").rglob("*.md") if p.parent.name.startswith(f"conversation_{source}_"))
    convs = {_front(p.read_text())["page_id"]: p for p in files}
    assert conv["revision"]["page_id"] in convs
    text = convs[conv["revision"]["page_id"]].read_text()
    assert _front(text)["messages"] == len(messages)
    headings = re.findall(r"^## (\d+)\. (\w+) · (\S+)\n<a id=\"(pg_\w+)\"></a>$", text, flags=re.M)
    assert [int(n) for n, *_ in headings] == list(range(1, len(messages) + 1))
    by_id = {p["revision"]["page_id"]: p for p in messages}
    _assert_reading_order([conv["revision"]["page_id"]] + [pid for *_, pid in headings], conv, messages)
    for _, role, date, pid in headings:
        assert role == by_id[pid]["revision"]["facets"]["role"] and date == by_id[pid]["revision"]["observed_at"]
    # No message has a file of its own; the note is linked from the message that relates to it.
    assert not any(_front(p.read_text())["page_id"] in by_id for p in (tmp_path / "md").rglob("*.md"))
    note_file = next(p for p in (tmp_path / "md" / "project_a").iterdir())
    assert f"- related_to: [A note on it](<../project_a/{note_file.name}>)" in text
    assert result["files"] == len(list((tmp_path / "md").rglob("*.md")))


def test_ant_thinking_is_stored_as_thinking(store, exports):
    raw = (exports / CLAUDE).read_text()
    assert raw.count("<antThinking>") == 10  # in 10 answers
    import_claude(store, exports / CLAUDE)
    texts = []
    for hit in h.hits(store):  # one at a time: a read shares its content budget among the pages it reads
        page = store.read_pages([hit["page_id"]], projections=["payload"], max_chars=64000)["results"][0]
        assert not page["truncated"]
        texts.append((page["revision"].get("payload") or {}).get("content") or "")
    assert not any("antThinking" in t for t in texts)
    thinking = [t for t in texts if "Thinking:\n\nThis request is suitable for an artifact" in t]
    assert len(thinking) == 1
    hit = store.search_pages("artifact suitable self-contained", mode="text")["hits"]
    assert hit and all("antThinking" not in (x.get("snippet") or "") for x in hit)
