"""Issue 11 through `pcp mcp` (the real server, driven by the SDK's client as in test_mcp_server.py):
observed_after / observed_before, hits that name their date and matched words, the example questions
found first by a session granted one scope, and hidden pages that change nothing it sees."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytest.importorskip("mcp")

from search_helpers import (
    CJK_QUESTION,
    EN_QUESTION,
    PROBES,
    RESTRICTED_GRANT,
    SCOPE,
    add_hidden_pages,
    marks_a_query_word,
    write_question_corpus,
)
from test_mcp_server import connect, ok, run

import store

HIT_RE = re.compile(r"^\[\d+\] .*\n    page_id: (pg_\w+) \| revision_id: (rev_\w+)\n"
                    r"    namespace: (\S+) \| status: (\w+) \| matched_by: ([\w+]+) \| score: ([\d.e+-]+) \| date: (\S+)$",
                    re.MULTILINE)


def hits_of(text: str) -> list[tuple[str, ...]]:
    return HIT_RE.findall(text)


@pytest.fixture
def dated(tmp_path: Path) -> dict:
    db = tmp_path / "store.db"
    with store.Store.open(db) as st:
        pages = {
            "march": st.write_page("work:notes", content="Decision: we decided to ship the release in March.",
                                   observed_at="2025-03-14T10:00:00Z"),
            "jan": st.write_page("work:notes", content="Decision: we decided on the release plan in January.",
                                 observed_at="2025-01-10T12:00:00Z"),
            "stored": st.write_page("work:notes", content="Decision: we decided the release owner today."),
        }
        created = st.read_pages([pages["stored"]["page_id"]])["results"][0]["revision"]["created_at"]
    return {"db": db, "created": created, **{k: v["page_id"] for k, v in pages.items()}}


def test_search_pages_observed_filters_and_dates(dated):
    async def scenario():
        async with connect(dated["db"], "work:notes=search,read") as session:
            march = await ok(session, "search_pages", {"query": "decided release",
                                                       "observed_after": "2025-03-01T00:00:00Z",
                                                       "observed_before": "2025-04-01T00:00:00Z"})
            jan = await ok(session, "search_pages", {"query": "decided release",
                                                     "observed_before": "2025-03-01T00:00:00Z"})
            every = await ok(session, "search_pages", {"query": "did we decide to ship the release in March?"})
            bad = await session.call_tool("search_pages", {"query": "x", "observed_after": "last March"})
            return march, jan, every, bad

    march, jan, every, bad = run(scenario)
    assert [hit[0] for hit in hits_of(march)] == [dated["march"]]
    assert [hit[0] for hit in hits_of(jan)] == [dated["jan"]]
    found = {hit[0]: hit for hit in hits_of(every)}
    assert set(found) == {dated["march"], dated["jan"], dated["stored"]}
    assert hits_of(every)[0][0] == dated["march"]
    # date: observed_at, else when the page was stored
    assert found[dated["march"]][6] == "2025-03-14T10:00:00.000Z"
    assert found[dated["jan"]][6] == "2025-01-10T12:00:00.000Z"
    assert found[dated["stored"]][6] == dated["created"]
    # the words the store highlighted, each a word of the query
    matched = re.findall(r"^    matched: (.+)$", every, re.MULTILINE)
    assert len(matched) == 3
    for line in matched:
        words = line.split(", ")
        assert words and all(marks_a_query_word(w, "did we decide to ship the release in March?") for w in words)
    assert bad.is_error and "invalid" in bad.content[0].text


@pytest.fixture
def questions(tmp_path: Path) -> dict:
    db = tmp_path / "store.db"
    with store.Store.open(db) as st:
        pages = write_question_corpus(st)
    return {"db": db, **pages}


def test_a_session_granted_one_scope_finds_the_example_pages_first(questions):
    async def scenario():
        async with connect(questions["db"], RESTRICTED_GRANT) as session:
            return [await ok(session, "search_pages", {"query": q}) for q in (EN_QUESTION, CJK_QUESTION)]

    en, cjk = run(scenario)
    assert hits_of(en)[0][0] == questions["en"]
    assert hits_of(cjk)[0][0] == questions["cjk"]


def test_hidden_pages_change_nothing_a_restricted_session_sees(questions):
    async def probe() -> list[str]:
        async with connect(questions["db"], RESTRICTED_GRANT) as session:
            return [await ok(session, "search_pages", {"query": q, "mode": m, "limit": 50}) for q, m in PROBES]

    before = run(probe)
    assert all(hits_of(text) for text in before)
    with store.Store.open(questions["db"]) as st:
        add_hidden_pages(st)
    after = run(probe)
    for (query, mode), old, new in zip(PROBES, before, after, strict=True):
        assert new == old, (query, mode)


def test_with_the_semantic_channel_on_a_restricted_model_gets_it_and_hidden_pages_still_change_nothing(questions):
    """Issue 34 item 5 through the SDK's client: the owner turned the channel on; the model's hits say
    auto+semantic, the example page first, and pages added where it cannot search change nothing it gets."""
    with store.Store.open(questions["db"]) as st:
        st.set_semantic(True)
    auto_probes = [(q, m) for q, m in PROBES if m == "auto"][:2]  # the English and the CJK question

    async def probe() -> list[str]:
        async with connect(questions["db"], RESTRICTED_GRANT) as session:
            return [await ok(session, "search_pages", {"query": q, "mode": m, "limit": 50}) for q, m in auto_probes]

    before = run(probe)
    en = hits_of(before[0])
    assert en[0][0] == questions["en"] and {h[4] for h in en} == {"auto+semantic"}
    assert {h[4] for h in hits_of(before[1])} == {"auto"}  # the CJK question is not re-ordered
    with store.Store.open(questions["db"]) as st:
        add_hidden_pages(st)
    assert run(probe) == before


def test_through_the_sdk_an_answer_shares_its_questions_meaning_and_hidden_questions_lend_nothing(questions):
    """The asked-question share (issue 34) as a model client gets it: the owner turned the channel on; an answer
    that `responds_to` a message asking the model's question climbs once linked; then it is also linked to hidden
    questions (in a scope the model may not search, and tombstoned in its own), and the model gets the same hits,
    order and scores."""
    with store.Store.open(questions["db"]) as st:
        st.set_semantic(True)
        st.write_page(SCOPE, content="The tube lemma notes are in the appendix.")
        asking = st.write_page(SCOPE, content="Do you remember how we proved that compactness survives finite "
                                              "products? Was there a proof route we agreed on?")["page_id"]
        answer = st.write_page(SCOPE, content="Yes: the finite case goes through the tube lemma, "
                                              "one factor at a time.")["page_id"]

    def place(text: str) -> int:
        hits = hits_of(text)
        assert len(hits) == 50 and {h[4] for h in hits} == {"auto+semantic"}
        ids = [h[0] for h in hits]
        return ids.index(answer) if answer in ids else len(ids)

    async def scenario() -> None:  # one server session; the owner writes between its searches
        async with connect(questions["db"], RESTRICTED_GRANT) as session:
            def probe():
                return ok(session, "search_pages", {"query": EN_QUESTION, "limit": 50})

            assert place(await probe()) == 50  # alone, it says too little of the question to be among the first 50
            with store.Store.open(questions["db"]) as st:
                st.link_pages(answer, "responds_to", asking)
            linked = await probe()
            assert place(linked) < 5
            with store.Store.open(questions["db"]) as st:
                add_hidden_pages(st, answers=[answer])
            assert await probe() == linked

    run(scenario)
