"""Issue 11 "Done when", through the Python API.

(a) Among at least 50 distractor pages that share some of their words, the two example questions find
    their page first, for the owner and for a model session granted only that scope.
(b) Authorization before relevance: the restricted session gets identical hits, order and scores before
    and after hidden pages holding the query words are added (in a scope it cannot search, and a
    tombstoned page in its own scope, as it lacks `audit`), in `auto` and `text`; and (issue 34) when pages
    of its own scope holding them are suppressed in its context, or written and then erased. Each with the
    semantic channel off and on; the hidden, suppressed and erased pages include questions that shown hits
    `responds_to` (an answer shares a question's meaning only when the session may see the question).
"""

from __future__ import annotations

import pcpstore_helpers as h
import pytest
from search_helpers import (
    CJK_QUESTION,
    EN_QUESTION,
    PROBES,
    SCOPE,
    add_hidden_pages,
    add_pages_in_scope,
    distractors,
    write_question_corpus,
)


@pytest.fixture(params=["plain", "semantic"])
def corpus(store, request):
    """The corpus, searched plain and (issue 34 item 5) with the owner's semantic channel on: every check here holds
    for both."""
    pages = write_question_corpus(store)
    if request.param == "semantic":
        store.set_semantic(True)
    return pages


def test_the_corpus_has_enough_distractors_sharing_words():
    pages = distractors()
    english = [t + b for t, b in pages if t.isascii()]
    cjk = [t + b for t, b in pages if not t.isascii()]
    assert len(english) >= 50 and len(cjk) >= 50
    assert all(any(w in text.lower() for w in ("proof", "route", "compactness", "finite", "products", "discuss"))
               for text in english)
    assert all(any(w in text for w in ("有限", "乘积", "紧致性", "证明", "路线", "讨论")) for text in cjk)


@pytest.mark.parametrize("who", ["owner", "restricted"])
@pytest.mark.parametrize("question,page", [(EN_QUESTION, "en"), (CJK_QUESTION, "cjk")])
def test_the_example_questions_find_their_page_first(store, corpus, who, question, page):
    session = store if who == "owner" else h.model(store, {SCOPE: {"search", "read"}})
    hits = session.search_pages(question)["hits"]
    assert hits and hits[0]["page_id"] == corpus[page], [x["title"] for x in hits[:5]]


@pytest.mark.parametrize("query,mode", PROBES)
def test_hidden_pages_change_nothing_for_a_restricted_session(store, corpus, query, mode):
    restricted = h.model(store, {SCOPE: {"search", "read"}})
    before = restricted.search_pages(query, mode=mode, limit=50)
    assert before["hits"], (query, mode)  # the probe finds something, so the comparison means something
    add_hidden_pages(store, answers=[x["page_id"] for x in before["hits"][1:8]])
    owner_sees = store.search_pages(query, mode=mode, limit=50, filters={"lifecycle_status": ["active", "tombstoned"]})
    assert {x["namespace"] for x in owner_sees["hits"]} != {SCOPE}  # the hidden pages do match the query
    after = restricted.search_pages(query, mode=mode, limit=50)
    assert after == before


@pytest.mark.parametrize("query,mode", PROBES)
def test_suppressed_pages_change_nothing_for_a_restricted_session(store, corpus, query, mode):
    """Pages of its own scope that the session suppressed in its context lift nothing there: not as hits,
    not through the statistics, not through their conversation."""
    restricted = h.model(store, {SCOPE: {"search", "read", "suppress"}})
    before = restricted.search_pages(query, mode=mode, limit=50, context_id="ctx")
    assert before["hits"], (query, mode)
    pages = add_pages_in_scope(store, answers=[x["page_id"] for x in before["hits"][1:8]])
    assert set(pages) & {x["page_id"] for x in restricted.search_pages(query, mode=mode, limit=50)["hits"]}
    restricted.suppress_pages(pages, context_id="ctx", reason="not for this task")
    assert restricted.search_pages(query, mode=mode, limit=50, context_id="ctx") == before


@pytest.mark.parametrize("query,mode", PROBES)
def test_erased_pages_change_nothing_for_a_restricted_session(store, corpus, query, mode):
    restricted = h.model(store, {SCOPE: {"search", "read"}})
    before = restricted.search_pages(query, mode=mode, limit=50)
    assert before["hits"], (query, mode)
    pages = add_pages_in_scope(store, answers=[x["page_id"] for x in before["hits"][1:8]])
    assert set(pages) & {x["page_id"] for x in restricted.search_pages(query, mode=mode, limit=50)["hits"]}
    for page in pages:
        store.delete_page(page, "erased for the test")
    assert restricted.search_pages(query, mode=mode, limit=50) == before
