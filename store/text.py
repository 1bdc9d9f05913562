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

Erasure: FTS5 keeps a deleted term's key in a leaf page when the term is the page's
first key, even with `secure-delete`, so a long unique word (a token, an identifier)
could outlive `delete_page`. Every token of 16 UTF-8 bytes or more is therefore
indexed as a keyed hash of its folded form (`h` + 13 hex digits, 14 bytes); queries
hash their long words the same way. Shorter tokens cannot hold a 16-byte sequence of
the erased text, so what stays in the index after a delete is never the text itself.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata

_CJK_CLASS = (
    "\u1100-\u11ff\u2e80-\u2fdf\u3005\u3007\u3021-\u3029\u3040-\u309f\u30a0-\u30ff\u3100-\u312f"
    "\u3130-\u318f\u31a0-\u31bf\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\ua960-\ua97f\uac00-\ud7af"
    "\uf900-\ufaff\uff66-\uff9f\U00020000-\U0003134f"
)
_CJK_CHAR = re.compile(f"([{_CJK_CLASS}])")
_HAS_CJK = re.compile(f"[{_CJK_CLASS}]")
_QUERY_TOKEN = re.compile(r"[^\W_]+")
_MARKS = "\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f"
_TOKEN_ANY = re.compile(f"(?:[^\\W_]|[{_MARKS}])+")
_LONG_ASCII = re.compile(r"[A-Za-z0-9]{16,}")
LONG_TOKEN_BYTES = 16

SNIPPET_CHARS = 600


def segment(text: str) -> str:
    """Text as the index sees it: every CJK character stands apart as its own token."""
    if not text or text.isascii() or not _HAS_CJK.search(text):
        return text or ""
    return _CJK_CHAR.sub(r" \1 ", text)


def _fold(token: str) -> str:
    decomposed = unicodedata.normalize("NFKD", token)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()


def _sealed(token: str, salt: bytes) -> str:
    return "h" + hashlib.blake2b(_fold(token).encode("utf-8"), digest_size=7, key=salt).hexdigest()[:13]


def seal_long_tokens(text: str, salt: bytes) -> str:
    """Replace every token of 16+ UTF-8 bytes by its keyed hash (see the module note on erasure)."""
    if text.isascii():
        # Most prose has no 16-character word: a split is much cheaper than the regex scan.
        if max(map(len, text.split()), default=0) < LONG_TOKEN_BYTES:
            return text
        return _LONG_ASCII.sub(lambda m: _sealed(m.group(0), salt), text)

    def repl(m: re.Match) -> str:
        token = m.group(0)
        return _sealed(token, salt) if len(token.encode("utf-8")) >= LONG_TOKEN_BYTES else token

    return _TOKEN_ANY.sub(repl, text)


def index_text(text: str, salt: bytes) -> str:
    """Text as it goes into the full-text index."""
    return seal_long_tokens(segment(text), salt) if text else ""


def query_terms(query: str) -> list[str]:
    """The words of a user query, as they appear in text (CJK runs kept whole)."""
    return _QUERY_TOKEN.findall(query or "")


def fts_query(query: str, salt: bytes) -> str | None:
    """A safe FTS5 MATCH expression: every word must occur; CJK words as adjacent-character phrases."""
    phrases = []
    for term in query_terms(query):
        parts = [seal_long_tokens(p, salt) for p in segment(term).split()]
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
