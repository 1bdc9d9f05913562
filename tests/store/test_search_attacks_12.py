"""Attacks on three changes of 2026-12-06 (a helper's, branch attack12): the asked-question share of the semantic
channel (`SearchOps._asked`, `semantic.rerank(..., asked)`), search pages in tiers (`_tiers`, the cursor's "p"),
and (tests/tui/test_search_attacks_12_app.py) the app's status line. Each finding failed here when it was written.

Findings:
- a `relation_types` filter counted a relation whose other end is suppressed in the session's context, so a
  suppressed page made a question pass the filter: the question came as a hit, and lent its meaning to the answer
  (scores and order changed by a page the context had hidden). Fixed: a suppressed far end counts no more than an
  unreadable one.
- a forged cursor without "o", or with "o" a string, a float or a list, crashed the search (KeyError, TypeError),
  one with "o" past SQLite's 64-bit integers too (OverflowError, in exact, temporal and auto's substring fallback);
  a forged "m" ran another mode (graph: "No page compactness products exists"). Fixed: refused as Invalid.
- text mode ranks every candidate it finds (up to TEXT_CAP) whatever the pool, yet a page ranked once per tier: a
  deep page of a legitimate walk cost up to 3 rankings for the rows one gives. Fixed: text ranks once, at its last
  tier (the same rows: each tier's rows are the first rows of that one ranking).
- A forged cursor with an offset past every match and 11 tiers ran every tier (none reached the page's need): 11
  rankings where a fresh page of that depth runs one (about 10x the CPU). Now a tier whose pool held every
  candidate a larger pool would score (the ranker says so) ends the tiers.

What held is tested below as well (hidden, cross-scope, archived, retracted, revised and CJK questions under
filters and all_revisions; walks with a limit changing page by page; old cursors; a store changing between pages).
"""

from __future__ import annotations

import random

import pcpstore_helpers as h
import pytest
from search_helpers import record_asked

from store import Invalid, semantic
from store.ranking import Ranker
from store.reads import decode_cursor, encode_cursor
from store.search import SearchOps

SCOPE, OTHER = "chat:a", "chat:b"
QUERY = "Which book did Anna recommend to Ben for his holiday?"
CHAT = [
    "Anna: Take The Hobbit, you will love the dragons and the long walk to the mountain.",  # the answer
    "Anna: The weather on Tuesday was grey in the library garden.",
    "Ben: The library recommended closing early on holidays.",
    "Ben: Anna, the book fair was crowded this year.",
    "Anna: Ben recommended a new phone to his sister.",
]
ASKING = "Ben: I'm off on holiday next week and need something to read. Which book would you recommend?"
WORDS = "proof route compactness finite products lemma tube space metric group ring plan".split()


def _chat(store, with_question: bool = True) -> dict[str, str]:
    """The chat in SCOPE; every message cites a visible note (for a relation_types filter); the answer responds to
    the question (when there is one)."""
    note = store.write_page(SCOPE, content="A note about books for the trip.")["page_id"]
    ids = [store.write_page(SCOPE, content=text)["page_id"] for text in CHAT]
    for page in ids:
        store.link_pages(page, "cites", note)
    out = {"answer": ids[0], "note": note}
    if with_question:
        out["question"] = store.write_page(SCOPE, content=ASKING)["page_id"]
        store.link_pages(ids[0], "responds_to", out["question"])
    return out


def _shown(result) -> list[tuple[str, str, float]]:
    return [(x["page_id"], x["matched_by"], x["score"]) for x in result["hits"]]


# --- 1. the asked-question share ---

@pytest.mark.parametrize("channel", ["plain", "semantic"])
def test_a_relation_to_a_suppressed_page_passes_no_relation_filter(store, channel):
    """The question cites a page the session suppressed in its context: with relation_types ["cites"], that relation
    made the question pass the filter (a hit it would not be without the suppressed page) and, with the channel on,
    lend its meaning to the answer. The same search before and after the suppressed page is erased must agree."""
    pages = _chat(store)
    if channel == "semantic":
        store.set_semantic(True)
    hidden = store.write_page(SCOPE, content="Scratch: shelf list")["page_id"]
    store.link_pages(pages["question"], "cites", hidden)
    restricted = h.model(store, {SCOPE: {"search", "read", "suppress"}})
    restricted.suppress_pages([hidden], context_id="ctx", reason="not for this task")
    kw = {"filters": {"relation_types": ["cites"]}, "context_id": "ctx", "limit": 50}
    before = restricted.search_pages(QUERY, **kw)
    text_before = restricted.search_pages("book", mode="text", **kw)
    assert before["hits"]
    store.delete_page(hidden, "erased for the test")
    assert _shown(restricted.search_pages(QUERY, **kw)) == _shown(before)
    assert _shown(restricted.search_pages("book", mode="text", **kw)) == _shown(text_before)


def _hidden_question(store, kind: str, answer: str) -> None:
    """A question (it asks, and holds the query's words) that `answer` responds to, hidden from the restricted
    session (or from every search, for `cross`: a question in another scope lends nothing even to the owner)."""
    scope = OTHER if kind in ("other", "cross") else SCOPE
    page = store.write_page(scope, content=f"{ASKING} ({kind})")["page_id"]
    rel = store.link_pages(answer, "responds_to", page)
    if kind == "tombstoned":
        store.tombstone_page(page, "withdrawn")
    elif kind == "archived":
        store.archive_page(page, "old")
    elif kind == "superseded":
        newer = store.write_page(SCOPE, content="Never mind, found it.")["page_id"]
        store.link_pages(newer, "supersedes", page)
    elif kind == "suppressed":
        h.model(store, {SCOPE: {"suppress", "read", "search"}}).suppress_pages([page], context_id="ctx", reason="x")
    elif kind == "erased":
        store.delete_page(page, "erased")
    elif kind == "retracted":
        store.unlink(rel["relation_id"], "linked by mistake")
    elif kind == "revised":  # it asked when linked; its head no longer does
        head = h.head(store, page)
        store.revise_page(page, head, content=f"{ASKING.replace('?', '.')} ({kind})")
    elif kind == "cjk":  # a CJK question is not read by the English model
        head = h.head(store, page)
        store.revise_page(page, head, content="本：你推荐哪本书？ " + ASKING)


GONE = ["other", "tombstoned", "suppressed", "erased"]  # the question is not there for the restricted session
SHARE = ["cross", "archived", "superseded", "retracted", "revised", "cjk"]  # it is (or is a hit), but lends nothing
SEARCHES = [
    {},
    {"filters": {"relation_types": ["responds_to", "cites"]}},
    {"filters": {"relation_types": ["responds_to"]}},
    {"filters": {"media_types": ["text/plain", "text/markdown"]}},
    {"filters": {"observed_after": "2000-01-01T00:00:00Z"}},
    {"all_revisions": True},
    {"mode": "text", "query": "book"},
]


def _run(who, searches=SEARCHES) -> list:
    out = []
    for search in searches:
        kw = {k: v for k, v in search.items() if k != "query"}
        out.append(_shown(who.search_pages(search.get("query", QUERY), scopes=[SCOPE], context_id="ctx", limit=50,
                                           **kw)))
    return out


@pytest.mark.parametrize("kind", GONE)
def test_a_hidden_question_changes_nothing(store, kind):
    """Hits, order and scores of a restricted session are the same before and after the answer is made to respond to
    a question it may not see, under filters, all_revisions and text mode, with the channel on. (suppressed: failed
    under relation_types ["responds_to"], the answer passing the filter by its relation to the suppressed question.)"""
    pages = _chat(store, with_question=False)
    store.set_semantic(True)
    restricted = h.model(store, {SCOPE: {"search", "read", "suppress"}})
    before = _run(restricted)
    assert before[0] and {m for _, m, _ in before[0]} == {"auto+semantic"}
    _hidden_question(store, kind, pages["answer"])
    assert _run(restricted) == before


@pytest.mark.parametrize("kind", SHARE)
def test_a_foreign_withdrawn_or_silent_question_lends_nothing(store, monkeypatch, kind):
    """Held: a question in another scope (even for the owner), or not active (archived, superseded; but all_revisions
    shows them), or whose relation was retracted, or that asks no more (revised after the link), or asks in CJK:
    the searches answer the same with the asked share as without it."""
    pages = _chat(store, with_question=False)
    store.set_semantic(True)
    _hidden_question(store, kind, pages["answer"])
    who = store if kind == "cross" else h.model(store, {SCOPE: {"search", "read", "suppress"}})
    searches = [s for s in SEARCHES if not (kind in ("archived", "superseded") and s.get("all_revisions"))]
    shared = _run(who, searches)
    assert shared[0] and {m for _, m, _ in shared[0]} == {"auto+semantic"}
    monkeypatch.setattr(semantic, "ASKED_SHARE", 0.0)
    assert _run(who, searches) == shared


def test_a_visible_question_does_lend_under_the_same_filters(store):
    """The control of the test above: a visible asking question does change the answer's score under each of those
    searches (so equality there means something)."""
    pages = _chat(store, with_question=False)
    store.set_semantic(True)
    restricted = h.model(store, {SCOPE: {"search", "read"}})
    kw = {"filters": {"relation_types": ["responds_to", "cites"]}, "limit": 50}
    before = {x["page_id"]: x["score"] for x in restricted.search_pages(QUERY, **kw)["hits"]}
    question = store.write_page(SCOPE, content=f"{ASKING} (visible)")["page_id"]
    store.link_pages(pages["answer"], "responds_to", question)
    after = {x["page_id"]: x["score"] for x in restricted.search_pages(QUERY, **kw)["hits"]}
    assert after[pages["answer"]] > before[pages["answer"]]


def test_odd_questions_neither_crash_nor_lend_what_they_hide(store):
    """Held: a question of 1M characters whose "?" lies past the read beginning, a "?" alone, a full-width "？",
    a question of only punctuation and control characters: the search answers."""
    pages = _chat(store, with_question=False)
    store.set_semantic(True)
    odd = ["x " * 499_000 + "which book?", "?", "Which book would you recommend\uff1f", "?!\u200b\u00ad?",
           "\u2028\u2029?\t\r\n"]
    for text in odd:
        store.link_pages(pages["answer"], "responds_to", store.write_page(SCOPE, content=text)["page_id"])
    hits = store.search_pages(QUERY, limit=50)["hits"]
    assert hits and {x["matched_by"] for x in hits} == {"auto+semantic"}


# --- 2. search pages in tiers ---

def _many_pages(store, n: int = 400) -> None:
    rnd = random.Random(1)
    store.write_pages_bulk(({"content": " ".join(rnd.choice(WORDS) for _ in range(rnd.randint(3, 30)))}
                            for _ in range(n)), "project:math")


def _walk(session, query: str, limits, **kw) -> list[str]:
    seen: list[str] = []
    cursor = None
    for limit in limits:
        result = session.search_pages(query, limit=limit, **kw, **({"cursor": cursor} if cursor else {}))
        seen += [x["revision_id"] for x in result["hits"]]
        cursor = result["next_cursor"]
        if not cursor:
            return seen
    raise AssertionError("the walk did not end")


@pytest.mark.parametrize("mode", ["auto", "text"])
@pytest.mark.parametrize("channel", ["plain", "semantic"])
def test_a_walk_whose_limit_changes_page_by_page_gives_every_match_once(store, mode, channel):
    """Held: the limit is not in the cursor's fingerprint; any limit 1..50 on each page (seeded), with a filter and
    all_revisions (revised pages: each revision is a match of its own)."""
    _many_pages(store, 300)
    for hit in store.search_pages("compactness lemma", mode="text", limit=20)["hits"]:
        store.revise_page(hit["page_id"], hit["revision_id"], content="compactness lemma revised " + hit["snippet"])
    if channel == "semantic":
        store.set_semantic(True)
    rnd = random.Random(7)
    kw = {"mode": mode, "all_revisions": True, "filters": {"observed_after": "2000-01-01T00:00:00Z"}}
    seen = _walk(store, "compactness lemma", (rnd.randint(1, 50) for _ in range(2000)), **kw)
    matching = set(_walk(store, "compactness lemma", [50] * 200, **kw))
    assert len(seen) == len(set(seen)), "a hit came twice across pages"
    assert set(seen) == matching and len(seen) > 150


def test_a_store_changing_between_pages_never_returns_an_erased_page(store):
    """Held: between two cursor calls a page is written and another (one not given yet) erased: no crash, and the
    erased page is never returned."""
    _many_pages(store, 300)
    first = store.search_pages("compactness products", limit=30)
    given = {x["page_id"] for x in first["hits"]}
    rest = [x["page_id"] for x in store.search_pages("compactness products", limit=50)["hits"] if x["page_id"] not in given]
    store.delete_page(rest[0], "erased between two pages")
    store.write_page("project:math", content="compactness products compactness products")
    seen = list(given)
    cursor = first["next_cursor"]
    while cursor:
        page = store.search_pages("compactness products", limit=30, cursor=cursor)
        seen += [x["page_id"] for x in page["hits"]]
        cursor = page["next_cursor"]
    assert rest[0] not in seen  # (a hit may come twice: the new page ranks above some given ones)


def test_an_old_cursor_with_a_number_for_p_walks_on(store):
    """Held: a cursor made before the tiers ("p": the first page's pool, a number) continues the walk."""
    _many_pages(store, 300)
    whole = _walk(store, "compactness products", [50] * 100)
    first = store.search_pages("compactness products", limit=10)
    state = decode_cursor(first["next_cursor"], "search")
    state["p"] = 64  # what the old first page of 10 scored
    seen, cursor = [x["revision_id"] for x in first["hits"]], encode_cursor(state)
    while cursor:
        page = store.search_pages("compactness products", limit=25, cursor=cursor)
        seen += [x["revision_id"] for x in page["hits"]]
        cursor = page["next_cursor"]
    assert len(seen) == len(set(seen)) and set(seen) == set(whole)


@pytest.mark.parametrize("change", [
    {"o": None}, {"o": "5"}, {"o": 1.5}, {"o": [10]}, {"o": -3}, {"m": "graph"}, {"m": None}, {"m": ["auto"]},
])
def test_a_forged_cursor_offset_or_mode_is_refused_not_a_crash(store, change):
    """A cursor is base64 JSON a client may edit: one without "o" raised KeyError, one whose "o" is not a whole
    number TypeError, one whose "m" names graph searched the query as a page id. Each is refused as Invalid."""
    _many_pages(store, 100)
    state = decode_cursor(store.search_pages("compactness products", limit=10)["next_cursor"], "search")
    state.update({k: v for k, v in change.items() if v is not None})
    for k in [k for k, v in change.items() if v is None]:
        del state[k]
    with pytest.raises(Invalid):
        store.search_pages("compactness products", limit=10, cursor=encode_cursor(state))


@pytest.mark.parametrize("mode,query", [("auto", "compactness products"), ("auto", "compactnes"),
                                        ("exact", "compactness"), ("temporal", "")])
@pytest.mark.parametrize("offset", [2 ** 63, 10 ** 30])
def test_a_forged_cursor_offset_past_sqlite_integers_is_refused_not_a_crash(store, mode, query, offset):
    """An offset a whole number but past SQLite's 64-bit integers: exact, temporal and auto's fallback to a substring
    match pass it to SQL (OverflowError: Python int too large to convert to SQLite INTEGER)."""
    _many_pages(store, 100)
    state = decode_cursor(store.search_pages(query, mode=mode, limit=10)["next_cursor"], "search")
    state["o"] = offset
    with pytest.raises(Invalid):
        store.search_pages(query, mode=mode, limit=10, cursor=encode_cursor(state))


def _count_rankings(monkeypatch) -> list[int]:
    calls: list[int] = []
    real = Ranker.rank

    def rank(self, units, need, *args, **kw):
        calls.append(need)
        return real(self, units, need, *args, **kw)

    monkeypatch.setattr(Ranker, "rank", rank)
    return calls


def test_a_deep_text_page_ranks_once(store, monkeypatch):
    """Text mode scores every candidate it finds (up to TEXT_CAP) whatever the pool: a page that ranked once per
    tier (up to 3 on a legitimate walk) did that work three times for the same rows."""
    _many_pages(store, 400)
    whole = _walk(store, "compactness", [50] * 100, mode="text")
    assert len(whole) > 200
    calls = _count_rankings(monkeypatch)
    seen = _walk(store, "compactness", [10] * 100, mode="text")
    assert seen == whole
    assert len(calls) == len(seen) // 10 + 1, "a page ranked more than once"


def test_a_forged_deep_cursor_costs_no_more_than_a_fresh_page_of_that_depth(store, monkeypatch):
    """"o" far past every match with the most tiers _tiers takes (11, each 3x the last, all within what a page that
    deep would score): each tier is a full ranking (FTS enumeration and scoring of every candidate), so the page costs
    11 rankings where a fresh page of that depth costs one (about 10x its CPU: 0.38 s against 0.04 s on 1,500
    pages, load 2.2)."""
    _many_pages(store, 400)
    state = decode_cursor(store.search_pages("compactness products", limit=10)["next_cursor"], "search")
    state["o"] = 2_000_000
    calls = _count_rankings(monkeypatch)
    store.search_pages("compactness products", limit=10, cursor=encode_cursor({**state, "p": [64]}))
    fresh = len(calls)
    calls.clear()
    store.search_pages("compactness products", limit=10,
                       cursor=encode_cursor({**state, "p": [64 * 3 ** i for i in range(11)]}))
    assert len(calls) <= 1.5 * fresh, (len(calls), fresh)


def test_the_asked_share_reads_no_question_the_page_cannot_reach(store, monkeypatch):
    """Held: _asked's SQL is the search's own WHERE clause on the question, so a relation_types filter's own
    subqueries (alias x) and the join's (rel) do not meet: a filtered semantic search answers and lends."""
    pages = _chat(store)
    store.set_semantic(True)
    given = record_asked(monkeypatch)
    hits = store.search_pages(QUERY, filters={"relation_types": ["responds_to", "cites"]})["hits"]
    assert pages["answer"] in {x["page_id"] for x in hits}
    assert any(ASKING in t for asked in given for ts in asked.values() for t in ts)
    assert SearchOps._asked  # (the function under test)
