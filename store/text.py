"""Snippets and first lines: the text helpers that are not the index's (that is store/analysis.py).

`snippet` cuts the window shown for a substring, temporal or graph hit (ranked hits use
`analysis.passage`); `first_line` gives a page without a title its first non-empty line.
"""

from __future__ import annotations

import re



_QUERY_TOKEN = re.compile(r"[^\W_]+")
SNIPPET_CHARS = 600


def query_terms(query: str) -> list[str]:
    """The words of a user query, as they appear in text (CJK runs kept whole)."""
    return _QUERY_TOKEN.findall(query or "")


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
    text = text or ""
    start, end = 0, len(text)
    while start < end:  # walk line by line; a long page is never split whole
        stop = text.find("\n", start)
        stop = end if stop < 0 else stop
        line = text[start:stop].strip().lstrip("#").strip()
        if line:
            return line[:limit]
        start = stop + 1
    return ""
