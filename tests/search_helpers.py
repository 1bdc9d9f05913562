"""Checks on search hits shared by the store, CLI and MCP tests (issue 11 point 4)."""

from __future__ import annotations

import re

from store.analysis import normalise_word

HIT_KEYS = {
    "page_id", "revision_id", "namespace", "owner_id", "lifecycle_status", "title", "date", "snippet", "highlights",
    "projection", "range", "matched_by", "score", "projections", "created_at", "observed_at",
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
