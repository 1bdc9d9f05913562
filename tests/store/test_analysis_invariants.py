"""The fast analysis paths give exactly the reference analysis, over real exports and hostile text.

The index deletes a row with the terms it was written with, analysed again, and the ranking's statistics
count the keys `Analysed.keys` gives: a fast path that differs from the reference by one term leaves
postings behind on erasure and skews scores. The references here are the slow, plain definitions:
`analysis.tokens` (one regex over the text) for the terms, `stat_terms` of each column for the statistics'
keys, and the unfiltered date reading for the derived dates. A pinned digest of the whole analysis of the
vendored exports fails when any rule changes (which must bump ANALYSER_VERSION and re-index).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Iterator

from hypothesis import given, settings
from hypothesis import strategies as st

from store.analysis import ANALYSER_VERSION, event_dates, index_terms, stat_terms, tokens
from store.index import analyse, date_tokens, derived_dates

DATA = Path(__file__).resolve().parents[1] / "data"
SHARED = Path(__file__).resolve().parents[3] / "shared" / "data" / "exports"
SALT = bytes(range(16))
WHEN = "2024-05-08T10:00:00.000Z"


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)


def _file_texts(path: Path) -> list[str]:
    if path.suffix == ".jsonl":
        out: list[str] = []
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                out.extend(_strings(json.loads(line)))
            except ValueError:
                out.append(line)
        return out
    if path.suffix == ".json":
        return list(_strings(json.loads(path.read_text(encoding="utf-8"))))
    return [path.read_text(encoding="utf-8")]


def _vendored() -> list[Path]:
    return sorted(p for p in [*(DATA / "exports").rglob("*"), *(DATA / "agents").rglob("*")]
                  if p.is_file() and p.suffix in (".json", ".jsonl", ".md", ".txt") and p.name != "SOURCES.md")


def real_texts(with_shared: bool = True) -> list[str]:
    """Every string of the vendored exports and agent sessions (and of ../shared's exports when present)."""
    files = _vendored()
    if with_shared and SHARED.is_dir():
        files += sorted(p for p in SHARED.iterdir() if p.suffix == ".json")
    return [t for f in files for t in _file_texts(f)]


def reference_terms(text: str) -> list[str]:
    return [t.term for t in tokens(text, SALT)]


def test_the_corpus_has_the_text_the_fast_paths_take() -> None:
    """The real text covers each path: ASCII, non-ASCII punctuation only, and letters beyond ASCII."""
    texts = real_texts()
    assert sum(t.isascii() for t in texts) > 1000
    assert sum(not t.isascii() and t.translate({ord(c): " " for c in "\u2019\u201c\u201d\u2014\u2013\u2026"}).isascii()
               for t in texts) > 20
    assert any(any(c.isalpha() and not c.isascii() for c in t) for t in texts)  # (the property test below has more)


def test_index_terms_equal_the_reference_tokenizer_over_real_exports() -> None:
    texts = real_texts()
    differ = [t[:80] for t in texts if index_terms(t, SALT) != reference_terms(t)]
    assert differ == []


def test_statistics_keys_and_dates_equal_the_reference_over_real_exports() -> None:
    for text in real_texts():
        title = text[:90]
        doc = analyse(title, text, {"title": title, "summary": text[:300], "role": "user"}, SALT, WHEN)
        reference = stat_terms(doc.title) | stat_terms(doc.body) | stat_terms(doc.meta)
        assert set(doc.keys()) == reference
        assert doc.body == reference_terms(text)
        assert doc.dates == date_tokens(event_dates(text, WHEN))  # the pre-filter never drops a date
        assert derived_dates(text, WHEN, doc.body) == doc.dates


_SAID = ["I went there yesterday.", "Tonight we cook.", "see you tomorrow", "today it rained", "three days ago",
         "It was two weeks back", "last week I moved", "next Friday then", "on Monday morning", "a year earlier",
         "last summer", "this weekend?", "the day before yesterday", "in a week", "weekly report", "yesterdays",
         "It\u2019s been a month \u2014 last month, really", "We met last Tuesday \U0001f600", "nothing of time here"]


def test_the_dates_of_time_words_equal_the_unfiltered_reading() -> None:
    """The terms' pre-filter (may_name_time) only skips text that names no day: every expression still counts."""
    named = 0
    for text in _SAID + [f"{a} {b}" for a in _SAID for b in _SAID[:6]]:
        doc = analyse("", text, {}, SALT, WHEN)
        assert doc.dates == date_tokens(event_dates(text, WHEN)), text
        named += bool(doc.dates)
    assert named > 100


_HOSTILE = st.text(
    alphabet=st.sampled_from(
        list("abcXYZ019 _-.,'\n\t") + list("\u2019\u201c\u201d\u2014\u2026\u00a0\u200b\u3000\U0001f600\u00bb\u00a9")
        + list("\u00e9\u00df\u0130\u0131\u00b2\u0663\uff21") + ["\u0301", "\u20d7"] + list("\u4e2d\u6587\u3042\ud55c")
    ),
    max_size=60,
)


@settings(max_examples=400, deadline=None)
@given(_HOSTILE)
def test_index_terms_equal_the_reference_on_any_mix_of_characters(text: str) -> None:
    """Separators, letters, marks, digits and CJK in any order: the fast scans split where the regex does."""
    assert index_terms(text, SALT) == reference_terms(text)
    doc = analyse(text[:7], text, {"title": text[:7], "k": [text[3:]]}, SALT, WHEN)
    assert set(doc.keys()) == stat_terms(doc.title) | stat_terms(doc.body) | stat_terms(doc.meta)


# sha256 of the analysis of the vendored files (terms of the three columns, statistics keys, date tokens).
# A change to the analyser changes it: bump ANALYSER_VERSION (the store re-indexes) and record the new digest.
PINNED = {1: "f071b602792d0c001034845cd974e3b6e708ff17ac7c70f8c2b3633756fcc717"}


def test_the_analysis_of_the_vendored_exports_is_pinned() -> None:
    digest = hashlib.sha256()
    for text in real_texts(with_shared=False):
        title = text[:90]
        doc = analyse(title, text, {"title": title, "summary": text[:300]}, SALT, WHEN)
        digest.update(json.dumps([doc.title, doc.body, doc.meta, sorted(doc.keys()), list(doc.dates)]).encode())
    assert digest.hexdigest() == PINNED[ANALYSER_VERSION]
