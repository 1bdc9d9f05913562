"""Checks on search hits shared by the store, CLI and MCP tests (issue 11 point 4)."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import TypeVar

from store.analysis import normalise_word

T = TypeVar("T")

HIT_KEYS = {
    "page_id", "revision_id", "namespace", "owner_id", "lifecycle_status", "title", "date", "snippet", "highlights",
    "projection", "range", "matched_by", "score", "projections", "created_at", "observed_at", "conversation",
}
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")


def marks_a_query_word(piece: str, query: str) -> bool:
    """Whether a highlighted piece of a snippet is a word of the query (after stemming), or CJK the query holds."""
    if _CJK.search(piece):
        cjk = "".join(_CJK.findall(piece))
        return any(cjk[i:i + 2] in query for i in range(max(1, len(cjk) - 1)))
    wanted = {normalise_word(w) for w in re.findall(r"\w+", query)}
    words = re.findall(r"\w+", piece)
    return bool(words) and all(normalise_word(w) in wanted for w in words)


def check_hit_shape(hit: dict, query: str) -> None:
    """One hit shape everywhere: every field, date = observed_at else created_at, highlights inside the snippet."""
    assert set(hit) == HIT_KEYS, set(hit) ^ HIT_KEYS
    assert hit["date"] == (hit["observed_at"] or hit["created_at"])
    marks = hit["highlights"]
    assert isinstance(marks, list) and marks, f"no highlights in {hit['snippet']!r}"
    last_end = -1
    for pair in marks:
        assert isinstance(pair, list) and len(pair) == 2
        start, end = pair
        assert 0 <= start < end <= len(hit["snippet"])
        assert start >= last_end, "highlights are ordered and do not overlap"
        last_end = end
        piece = hit["snippet"][start:end]
        assert marks_a_query_word(piece, query), (piece, query)


# --- issue 11 "Done when": the two example questions among distractors, and hidden pages added later ---------

EN_QUESTION = "did we discuss a proof route for compactness of finite products?"
EN_PAGE = "Proof route for compactness of finite products via the tube lemma."
CJK_QUESTION = "此前是否讨论过有限乘积保持紧致性的证明路线？"
CJK_PAGE = "此前对有限乘积紧致性的证明讨论……"
SCOPE = "project:math"  # where the example pages live; the restricted session is granted only this scope
OTHER = "project:other"  # a scope the restricted session cannot search
RESTRICTED_GRANT = f"{SCOPE}=search,read"

_EN_WORDS = ("proof", "route", "compactness", "finite", "products", "discussed")
_EN_FILLER = (
    "of the spectral theorem", "for the delivery trucks", "in the quarterly plan", "of groups and rings",
    "about Hilbert spaces", "for the product launch", "on the reading list", "of the main lemma",
    "in metric spaces", "for the supply chain", "with the design team", "in linear algebra",
)
_CJK_WORDS = ("有限", "乘积", "紧致性", "证明", "路线", "讨论")
_CJK_FILLER = ("群论的笔记", "产品发布计划", "线性代数复习", "希尔伯特空间", "会议记录", "供应链安排", "阅读清单", "谱定理")


def distractors() -> list[tuple[str, str]]:
    """At least 50 English and 50 CJK (title, body) pages, each sharing one or two of the question's words."""
    import itertools

    pages: list[tuple[str, str]] = []
    en_pairs = [c for k in (1, 2) for c in itertools.combinations(_EN_WORDS, k)]
    for i, words in enumerate(en_pairs * 3):
        filler = _EN_FILLER[i % len(_EN_FILLER)]
        title = f"{' and '.join(words).capitalize()} {filler}"
        pages.append((title, f"Notes {i}: {' '.join(words)} {filler}; nothing about the tube lemma here."))
    cjk_pairs = [c for k in (1, 2) for c in itertools.combinations(_CJK_WORDS, k)]
    for i, words in enumerate(cjk_pairs * 3):
        filler = _CJK_FILLER[i % len(_CJK_FILLER)]
        pages.append((f"{'和'.join(words)}：{filler}", f"第{i}条：{'、'.join(words)}，关于{filler}。"))
    assert sum(1 for t, _ in pages if t.isascii()) >= 50 and sum(1 for t, _ in pages if not t.isascii()) >= 50
    return pages


def write_question_corpus(st) -> dict:
    """The two example pages and the distractors, in SCOPE (and a few distractors in OTHER too)."""
    en = st.write_page(SCOPE, content=f"{EN_PAGE}\n\nWe chose the tube lemma over Tychonoff for the finite case.")
    cjk = st.write_page(SCOPE, content=f"{CJK_PAGE}\n\n结论：用管引理证明两个紧空间的乘积是紧的。")
    items = [{"content": f"{title}\n\n{body}"} for title, body in distractors()]
    st.write_pages_bulk(items, SCOPE)
    st.write_pages_bulk(items[::7], OTHER)
    return {"en": en["page_id"], "cjk": cjk["page_id"]}


def add_hidden_pages(st, answers: Sequence[str] = ()) -> None:
    """Pages holding the questions' words that the restricted session may not get as hits: many in OTHER,
    and a tombstoned one in its own scope (it lacks `audit`). Each page of `answers` then `responds_to` a hidden
    question of each kind (in OTHER, and tombstoned in SCOPE): a hidden question lends an answer nothing."""
    hidden = [f"{EN_PAGE} {EN_QUESTION} proof route compactness finite products", f"{CJK_PAGE}{CJK_QUESTION}",
              "compactness compactness compactness of finite products: a proof route", "有限乘积 有限乘积 紧致性 证明路线"]
    st.write_pages_bulk(({"content": text} for text in hidden * 10), OTHER)
    asked = st.write_page(OTHER, content=f"{EN_QUESTION} {EN_PAGE}")
    gone = st.write_page(SCOPE, content=f"Withdrawn: {EN_QUESTION} {EN_PAGE} {CJK_PAGE} proof route compactness")
    for answer in answers:
        st.link_pages(answer, "responds_to", asked["page_id"])
        st.link_pages(answer, "responds_to", gone["page_id"])
    st.tombstone_page(gone["page_id"], "withdrawn for the test")


def add_pages_in_scope(st, answers: Sequence[str] = ()) -> list[str]:
    """Pages in SCOPE itself holding the questions' words (for the suppressed and erased cases): their ids. Each
    page of `answers` `responds_to` the first of them, a question (whose meaning an answer shares when seen)."""
    texts = [f"{EN_PAGE} {EN_QUESTION} proof route compactness finite products", f"{CJK_PAGE}{CJK_QUESTION}",
             "compactness compactness compactness of finite products: a proof route", "有限乘积 有限乘积 紧致性 证明路线"]
    pages = [st.write_page(SCOPE, content=text)["page_id"] for text in texts * 2]
    for answer in answers:
        st.link_pages(answer, "responds_to", pages[0])
    return pages


# Queries of the authorization-before-relevance check: (query, mode); text needs every term on the page.
PROBES = [
    (EN_QUESTION, "auto"), (CJK_QUESTION, "auto"), ("compactness products", "auto"), ("紧致性 证明", "auto"),
    ("finite products", "text"), ("proof route", "text"), ("有限乘积", "text"), ("紧致性", "text"),
]


# --------------------------------------------------------------------------- measuring a search from inside
# Costs counted, not timed (a test asserts no time): SQLite's virtual machine steps, the candidate pools scored.

def sqlite_steps(store, run: Callable[[], T]) -> tuple[int, T]:
    """How many tens of SQLite VM steps `run()` took on the store's connection, and what it returned."""
    conn = store.parts[2]._db.connection()
    count = [0]

    def tick() -> int:
        count[0] += 1
        return 0

    conn.set_progress_handler(tick, 10)
    try:
        result = run()
    finally:
        conn.set_progress_handler(None, 0)
    return count[0], result


def count_scored(monkeypatch) -> list[int]:
    """The candidate pools the search's tiers score (SearchOps.ranked's `pool`), one entry per ranking, from now."""
    from store.search import SearchOps

    scored: list[int] = []
    real = SearchOps.ranked

    def ranked(self, mode, query, q, need, pool=None, whole=None):
        scored.append(pool)
        return real(self, mode, query, q, need, pool, whole)

    monkeypatch.setattr(SearchOps, "ranked", ranked)
    return scored


def record_asked(monkeypatch) -> list[dict]:
    """The asked questions' texts the semantic channel was given per search (candidate pk -> texts), from now."""
    from store import semantic

    given: list[dict] = []
    real = semantic.rerank

    def rerank(q, rows, texts, asked=None):
        given.append(dict(asked or {}))
        return real(q, rows, texts, asked)

    monkeypatch.setattr(semantic, "rerank", rerank)
    return given
