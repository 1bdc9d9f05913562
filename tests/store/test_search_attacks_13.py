"""Attacks on two changes of 2026-12-06 (a helper's, branch attack13): the asked-question lookup that reads each
candidate's links in index order and stops at its first visible asking ones (`SearchOps._asked`, d073761), and the
semantic channel's first tier of 450 scored candidates (`semantic.RERANK_POOL`, fc05870). Each finding failed here
when it was written.

Findings:
- a cursor made before fc05870 by a walk that had gone past its first 150 candidates carries tiers [150, 3 x need]
  (483 for a walk of 20 hits a page); its second tier is more than the 450 a page now scores, so all its tiers
  were dropped and the page ranked 450 candidates afresh: the walk repeated and lost hits (24 of 352 matches).
  Fixed: the first tiers are kept while together at most 1.5x what the page scores (450), so a walk of up to 24
  hits a page walks on exactly; a cursor whose dropped tiers may have given other hits (the 450 that stand for
  them did not hold every candidate) is refused in one line.
- a semantic page deep in the first tier (need 440, offset 430) scores 450 candidates; a forged cursor's tiers,
  each short of the need (so 450 more were added), made it score up to 2.3x that ([146, 438] + 450). Fixed: when
  a tier of `fresh` is added, the cursor's tiers are cut to leave all of them within 1.5x.
- the asked-question lookup stopped at a candidate's first two visible links that ask, so links to visible
  messages that ask nothing were all read first, each message's text loaded to look for its "?" (300 links of 72,000
  characters: 37x the SQLite steps of 2; 50 candidates x 200 links to 900,000-character pages: 0.65 s of CPU).
  Fixed: the first two visible messages it responds to are read (README: "the best of the first two it responds
  to"), and those that ask lend.
- not fixed (strict xfail): links to questions the search may not see are each still read (about 0.4 us a link)
  before the first visible ones, since a cap on the links read would let a hidden question take a visible one's
  place.

What held is tested below as well: questions of nine hidden kinds linked before visible ones take none of the two
places (restricted session, context, filters, all_revisions); a restricted walk past the 450 first-tier
candidates at changing limits gives each match once and is unchanged by hidden pages added later; cursors made
before fc05870 within their first 150 candidates walk on.
"""

from __future__ import annotations

import random

import pcpstore_helpers as h
import pytest
from search_helpers import count_scored, record_asked, sqlite_steps

from store import Invalid, semantic
from store.reads import decode_cursor, encode_cursor

WORDS = "proof route compactness finite products lemma tube space metric group ring plan".split()
QUERY = "compactness products"


def _many_pages(store, n: int) -> None:
    """n pages of the same dozen words in random order and length (seeded)."""
    rnd = random.Random(1)
    store.write_pages_bulk(({"content": " ".join(rnd.choice(WORDS) for _ in range(rnd.randint(3, 30)))}
                            for _ in range(n)), "project:math")


def _walk(session, query: str, limits, cursor: str | None = None, **kw) -> tuple[list[str], str | None]:
    """The revision ids of the pages walked (one page per limit) and the cursor after them (None at the end)."""
    seen: list[str] = []
    for limit in limits:
        result = session.search_pages(query, limit=limit, **kw, **({"cursor": cursor} if cursor else {}))
        seen += [x["revision_id"] for x in result["hits"]]
        cursor = result["next_cursor"]
        if not cursor:
            return seen, None
    return seen, cursor


# --- 2. the semantic channel's first tier of 450 ---

@pytest.mark.parametrize("pages,limits,old_tiers,may_refuse", [
    (1200, [20] * 3, [150], False),  # (held) a walk still within its first 150 candidates
    (1200, [20] * 3, 150, False),  # (held) the same, as cursors carried it before tiers: a number
    (400, [20] * 9, [150, 483], False),  # a walk of 20 hits a page: past the 150th hit on its 8th page
    (1200, [20] * 9, [150, 483], False),  # more candidates than a page of 450 scores
    (400, [50, 50, 49, 50], [150, 600], False),  # the deepest second tier such a walk made (50 hits from the 150th)
    (1200, [50, 50, 49, 50], [150, 600], True),  # (its 600 candidates are past 1.5x 450, and 450 do not hold all)
])
def test_a_cursor_made_before_the_450_pool_walks_on_or_is_refused(store, monkeypatch, pages, limits, old_tiers,
                                                                  may_refuse):
    """A walk begun before fc05870 (its first tier 150, a later one 3x the page's need) and continued after it:
    each match comes once; only a cursor whose tiers would cost a page more than 1.5x what it scores now, in a store
    where they may give other hits, is refused, in one line."""
    _many_pages(store, pages)
    store.set_semantic(True)
    whole, _ = _walk(store, QUERY, [50] * 100)
    assert len(whole) == len(set(whole)) > 300
    monkeypatch.setattr(semantic, "RERANK_POOL", 150)  # what a page scored before fc05870
    seen, cursor = _walk(store, QUERY, limits)
    state = decode_cursor(cursor, "search")
    assert state["p"] == (old_tiers if isinstance(old_tiers, list) else [old_tiers])
    cursor = encode_cursor({**state, "p": old_tiers})
    monkeypatch.setattr(semantic, "RERANK_POOL", 450)
    try:
        rest, _ = _walk(store, QUERY, [20] * 200, cursor)
    except Invalid as refused:
        assert may_refuse
        assert "\n" not in str(refused) and "cursor" in str(refused)
        return
    seen += rest
    assert len(seen) == len(set(seen)), "a hit came twice across pages"
    assert set(seen) == set(whole)


@pytest.mark.parametrize("tiers", [[146, 438], [64, 192], [100, 300], [150, 600], [225, 675], [430], [640]])
def test_a_forged_semantic_cursor_costs_at_most_1_5x_a_fresh_page(store, monkeypatch, tiers):
    """A semantic page at offset 430 (need 440) scores 450 candidates. Tiers each at most 450 and 3x the one
    before, all short of the need, were taken and 450 more added: [146, 438, 450], 1,034 candidates (2.3x)."""
    _many_pages(store, 1200)
    store.set_semantic(True)
    state = decode_cursor(store.search_pages(QUERY, limit=10)["next_cursor"], "search")
    assert state["p"] == [450]
    scored = count_scored(monkeypatch)
    store.search_pages(QUERY, limit=9, cursor=encode_cursor({**state, "o": 430}))
    fresh = sum(scored)
    assert fresh == 450
    scored.clear()
    try:
        store.search_pages(QUERY, limit=9, cursor=encode_cursor({**state, "o": 430, "p": tiers}))
    except Invalid:
        pass
    assert sum(scored) <= 1.5 * fresh, scored


# --- 1. the asked-question lookup ---

def _asked_steps(store, answer: str, q=None) -> tuple[int, list[str]]:
    """SQLite steps (in tens) of `_asked` for the answer's head alone, and the texts it found."""
    search = store.parts[2]
    q = q or search.page_query([], None)
    (head,), = search._db.execute_sql("SELECT p.head FROM page p WHERE p.page_id = ?", [answer]).fetchall()
    steps, found = sqlite_steps(store, lambda: search._asked([(head, 1.0)], q))
    return steps, found.get(head, [])


def _answers_linked_to(store, links: list[str]) -> tuple[str, str]:
    """Two answers in chat:x, linked `responds_to` the first two of `links` and all of them, then both to a visible
    message that asks: (few, many)."""
    asking = store.write_page("chat:x", content="Which book would you recommend?")["page_id"]
    few = store.write_page("chat:x", content="Take The Hobbit, you will love the dragons.")["page_id"]
    many = store.write_page("chat:x", content="Take The Silmarillion, you will love the elves.")["page_id"]
    for page in links[:2]:
        store.link_pages(few, "responds_to", page)
    for page in links:
        store.link_pages(many, "responds_to", page)
    for answer in (few, many):
        store.link_pages(answer, "responds_to", asking)
    return few, many


def test_an_answer_linked_to_many_messages_that_ask_nothing_costs_no_more_to_look_up(store):
    """The lookup stops at a candidate's first two visible links that ask; links to visible messages that ask nothing
    (a hostile import: a page made to respond to 300 long ones) were all read, each message's text loaded (up to the
    payload limit) to look for a "?" in its beginning. README: the share is the best of "the first two it responds
    to"; only those are read."""
    long = "plain words without a question mark " * 2_000  # 72,000 characters
    silent = [store.write_page("chat:x", content=f"{n} {long}")["page_id"] for n in range(302)]
    few, many = _answers_linked_to(store, silent)
    steps_few, _ = _asked_steps(store, few)
    steps_many, _ = _asked_steps(store, many)
    assert steps_many <= steps_few * 1.2, (steps_few, steps_many)


@pytest.mark.xfail(strict=True, reason="a link to a hidden question takes no place, so the lookup reads past every "
                   "one of them to the first visible ones: its cost grows with the hidden links (about 0.4 us each: "
                   "50 candidates x 2,000 tombstoned questions, 42 ms of CPU). Any cap on the links read would count "
                   "hidden ones and let them push a visible question out, which the rules forbid; README: response "
                   "time is outside the hidden-pages guarantee")
@pytest.mark.parametrize("kind", ["tombstoned", "other scope"])
def test_links_to_hidden_questions_cost_the_lookup_nothing_more(store, kind):
    scope = "chat:y" if kind == "other scope" else "chat:x"
    hidden = [store.write_page(scope, content=f"Which book would you recommend? ({n})")["page_id"] for n in range(300)]
    if kind == "tombstoned":
        for page in hidden:
            store.tombstone_page(page, "withdrawn")
    few, many = _answers_linked_to(store, hidden)
    steps_few, found_few = _asked_steps(store, few)
    steps_many, found_many = _asked_steps(store, many)
    assert found_few == found_many == ["Which book would you recommend?"]  # (the hidden ones took no place)
    assert steps_many <= steps_few * 1.2, (steps_few, steps_many)


HIDDEN_KINDS = ["tombstoned", "other scope", "suppressed", "retracted", "archived", "superseded", "media filtered",
                "observed before", "erased"]


def _hide(store, kind: str, page: str, rel: str) -> None:
    if kind == "tombstoned":
        store.tombstone_page(page, "withdrawn")
    elif kind == "suppressed":
        h.model(store, {"chat:x": {"suppress", "read", "search"}}).suppress_pages([page], context_id="ctx",
                                                                               reason="not here")
    elif kind == "retracted":
        store.unlink(rel, "linked by mistake")
    elif kind == "archived":
        store.archive_page(page, "old")
    elif kind == "superseded":
        store.link_pages(store.write_page("chat:x", content="Never mind.")["page_id"], "supersedes", page)
    elif kind == "erased":
        store.delete_page(page, "erased")


@pytest.mark.parametrize("all_revisions", [False, True])
@pytest.mark.parametrize("kind", HIDDEN_KINDS)
def test_hidden_questions_linked_first_take_no_place_from_a_visible_one(store, monkeypatch, kind, all_revisions):
    """Held: an answer responds to two questions its restricted session may not see (each kind), then to a visible
    one, then to a fourth: the two it takes its share from are the visible ones, under the session's grants, context,
    filters and all_revisions (where an archived or superseded question is visible, and counts)."""
    store.write_page("chat:x", content="The library recommended closing early on holidays.")
    answer = store.write_page("chat:x", content="Take The Hobbit, you will love the dragons.")["page_id"]
    scope = "chat:y" if kind == "other scope" else "chat:x"
    extra = {"media_type": "text/html"} if kind == "media filtered" else {}
    if kind == "observed before":
        extra = {"observed_at": "2001-01-01T00:00:00Z"}
    hidden = [store.write_page(scope, content=f"Which book would you recommend? (hidden {n})", **extra)["page_id"]
              for n in range(2)]
    shown = [store.write_page("chat:x", content=f"Which book would you recommend? (shown {n})")["page_id"]
             for n in range(2)]
    rels = [store.link_pages(answer, "responds_to", page)["relation_id"] for page in hidden + shown]
    for page, rel in zip(hidden, rels, strict=False):
        _hide(store, kind, page, rel)
    store.set_semantic(True)
    given = record_asked(monkeypatch)
    session = h.model(store, {"chat:x": {"search", "read"}})
    filters = {"media_types": ["text/markdown"]} if kind == "media filtered" else {}
    if kind == "observed before":
        filters = {"observed_after": "2010-01-01T00:00:00Z"}
    hits = session.search_pages("which book with dragons would you recommend?", context_id="ctx", filters=filters,
                                all_revisions=all_revisions, limit=50)["hits"]
    assert answer in {x["page_id"] for x in hits} and {x["matched_by"] for x in hits} == {"auto+semantic"}
    lent = {t for asked in given for texts in asked.values() for t in texts}
    counted = "hidden" if all_revisions and kind in ("archived", "superseded") else "shown"
    assert sorted(lent) == [
        f"Which book would you recommend? ({counted} {n})" for n in range(2)]


def test_a_restricted_walk_past_450_candidates_gives_each_match_once_and_ignores_hidden_pages(store):
    """Held: with the channel on, a restricted session with suppressions in its context walks a search of more matches
    than the first tier's 450 at limits changing page by page (seeded): each of its matches once, none suppressed;
    and pages it may not see (in another scope, tombstoned in its own), added before a second walk, change no hit,
    order or score of it."""
    _many_pages(store, 560)
    store.set_semantic(True)
    session = h.model(store, {"project:math": {"search", "read", "suppress"}})
    suppressed = [x["page_id"] for x in store.search_pages("compactness", mode="exact", limit=5)["hits"]]
    session.suppress_pages(suppressed, context_id="ctx", reason="not for this task")
    limits = [random.Random(5).randint(1, 50) for _ in range(2000)]

    def walk() -> list[tuple[str, float]]:
        out, cursor = [], None
        for limit in limits:
            result = session.search_pages(QUERY, limit=limit, context_id="ctx",
                                          **({"cursor": cursor} if cursor else {}))
            out += [(x["page_id"], x["score"]) for x in result["hits"]]
            cursor = result["next_cursor"]
            if not cursor:
                return out
        raise AssertionError("the walk did not end")

    first = walk()
    seen = [page for page, _ in first]
    matching, _ = _walk(session, QUERY, [50] * 100, context_id="ctx")
    assert len(seen) == len(set(seen)) == len(matching) > 450
    assert not set(seen) & set(suppressed)
    rnd = random.Random(2)
    store.write_pages_bulk(({"content": " ".join(rnd.choice(WORDS) for _ in range(rnd.randint(3, 30)))}
                            for _ in range(300)), "project:other")
    gone = store.write_page("project:math", content="compactness products " * 20)["page_id"]
    store.tombstone_page(gone, "withdrawn")
    assert walk() == first
