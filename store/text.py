"""Text for the full-text index: CJK segmentation, safe FTS5 queries, and snippets.

Why this design: FTS5's unicode61 tokenizer treats a run of Chinese characters as one
token, so `证明` never matches inside `有限乘积保持紧致性的证明`. The trigram tokenizer
cannot match 2-character queries and triples the index. Instead, every CJK character
(Han, kana, Hangul) is indexed as a token of its own (spaces are inserted before
indexing), and a CJK query becomes a phrase query over consecutive characters:
`紧致性` -> `"紧 致 性"`. FTS5 phrase matching checks adjacency with token positions,
so any 1-, 2- or 3-character word (or longer) is found exactly where it occurs, bm25
ranking keeps working, Latin text is tokenised as before, and mixed Latin/CJK pages
and queries work. The index stores no copy of the text (contentless table); snippets
are cut from the revision itself.
"""

from __future__ import annotations

import re

_CJK_CLASS = (
    "\u1100-\u11ff\u2e80-\u2fdf\u3005\u3007\u3021-\u3029\u3040-\u309f\u30a0-\u30ff\u3100-\u312f"
    "\u3130-\u318f\u31a0-\u31bf\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\ua960-\ua97f\uac00-\ud7af"
    "\uf900-\ufaff\uff66-\uff9f\U00020000-\U0003134f"
)
_CJK_CHAR = re.compile(f"([{_CJK_CLASS}])")
_HAS_CJK = re.compile(f"[{_CJK_CLASS}]")
_QUERY_TOKEN = re.compile(r"[^\W_]+")

SNIPPET_CHARS = 600


def segment(text: str) -> str:
    """Text as the index sees it: every CJK character stands apart as its own token."""
    if not text or not _HAS_CJK.search(text):
        return text or ""
    return _CJK_CHAR.sub(r" \1 ", text)


def query_terms(query: str) -> list[str]:
    """The words of a user query, as they appear in text (CJK runs kept whole)."""
    return _QUERY_TOKEN.findall(query or "")


def fts_query(query: str) -> str | None:
    """A safe FTS5 MATCH expression: every word must occur; CJK words as adjacent-character phrases."""
    phrases = []
    for term in query_terms(query):
        parts = segment(term).split()
        phrases.append('"' + " ".join(parts).replace('"', '""') + '"')
    return " ".join(phrases) if phrases else None


def snippet(text: str, query: str, width: int = SNIPPET_CHARS) -> tuple[str, int, int]:
    """A window of at most `width` characters around the first match: (text, start, end)."""
    if not text:
        return "", 0, 0
    pos = -1
    terms = sorted(set(query_terms(query)), key=len, reverse=True)
    if query and query.strip() and query.strip() not in terms:
        terms.insert(0, query.strip())
    for term in terms:
        m = re.search(re.escape(term), text, re.IGNORECASE)
        if m and (pos < 0 or m.start() < pos):
            pos = m.start()
    if pos < 0 or len(text) <= width:
        start = 0
    else:
        start = max(0, pos - width // 4)
        space = text.rfind(" ", max(0, start - 40), start + 1)
        if space >= 0 and pos - space < width:
            start = space + 1
    end = min(len(text), start + width)
    return text[start:end], start, end


def first_line(text: str, limit: int = 120) -> str:
    """A title for a page without one: its first non-empty line, Markdown heading marks removed."""
    for line in (text or "").splitlines():
        line = line.strip().lstrip("#").strip()
        if line:
            return line[:limit]
    return ""
