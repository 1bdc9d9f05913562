"""Text analysis shared by the index and the query side: one tokenizer, one normalisation.

Why this design: the full-text index and the ranking must see the same terms, and the
ranking's statistics must come from pages the session may see (so they cannot come from
FTS5's own `bm25()`, whose statistics cover the whole index). So Python turns every text
into its index terms once, here, and FTS5 only stores and matches them:

- Latin (and every other alphabetic) word: Unicode-folded (NFKD, marks removed,
  casefolded), then stemmed by the Snowball English stemmer (`products` and `product`,
  `discussed` and `discuss` meet). A term of 16 UTF-8 bytes or more is indexed as a keyed
  hash (see `seal`), so FTS5 leaf keys never keep 16 bytes of erased text.
- CJK (Han, kana, Hangul): every character is a term of its own, so a word of any length is
  a phrase of adjacent characters; a CJK question is split into overlapping two-character
  units (a question is never one phrase) after dropping function characters (的, 了, 是, 吗 ...).
- Characters that are not letters or digits (punctuation, symbols, private-use characters)
  are never indexed at all, so no token class can escape the long-term sealing.

Stop words are indexed (the `text` mode and phrase matching need positions) but dropped from
ranked queries unless a query has nothing else.

Long because: the index and the query side must turn text into the same terms, so the tokenizer, normalisation,
relative time in text and question words live together (the dates a question names are store.question_dates).
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from itertools import compress
from datetime import date, timedelta
from typing import Iterator, Mapping, cast

import snowballstemmer  # type: ignore[import-untyped]

CJK_CLASS = (
    "\u1100-\u11ff\u2e80-\u2fdf\u3005\u3007\u3021-\u3029\u3040-\u309f\u30a0-\u30ff\u3100-\u312f"
    "\u3130-\u318f\u31a0-\u31bf\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\ua960-\ua97f\uac00-\ud7af"
    "\uf900-\ufaff\uff66-\uff9f\U00020000-\U0003134f"
)
_MARKS = "\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f"
# A CJK character alone, or a run of other letters/digits (combining marks kept with their letter).
_TOKEN = re.compile(f"([{CJK_CLASS}])|((?:(?![{CJK_CLASS}])[^\\W_]|[{_MARKS}])+)")
_HAS_CJK = re.compile(f"[{CJK_CLASS}]")
LONG_TOKEN_BYTES = 16
# The version of the rules below (tokens, folding, stems, sealing). The index deletes a row with the
# terms it was written with, analysed again: a change to any rule must bump this, and the store then
# re-indexes every revision (store.index.needs_reindex) before a row leaves the index.
ANALYSER_VERSION = 1

# Function words of English questions and prose: they match nearly everything and say little.
EN_STOP = frozenset(
    """a about above after again against all am an and any are aren't as at be because been before being below
    between both but by can could did didn do does doesn doing don down during each few for from further had
    has have having he her here hers herself him himself his how i if in into is isn it its itself just me
    more most my myself no nor not now of off on once only or other our ours ourselves out over own same she
    should so some such than that the their theirs them themselves then there these they this those through
    to too under until up very was wasn we were weren what when where which while who whom why will with
    would you your yours yourself yourselves s t ve ll re d m o y ever also any anything something
    ago yet still again get got
    kind kinds type types sort thing things way ways many much often likely might mention mentioned say said
    tell told describe described recently both common one ones someone anyone else""".split()
)
# CJK characters that are grammar rather than content (particles, copulas, question marks, pronouns).
CJK_STOP = frozenset(
    "的了是吗过呢吧啊么嘛在和与及或也都就而之其把被让给对从向于以为着地得这那哪些个们我你他她它您谁什怎"
    "否有没不很又还再所已经曾"
    "のはがをにでともへやかねよなだ"
    "은는이가을를에의도와과"
)


# English irregular verb forms and their base form: a question asks "when did she go", the text says
# "she went"; the Snowball stemmer only removes regular endings.
_IRREGULAR_GROUPS = """
arise arose arisen|awake awoke awoken|be was were been being|bear bore borne|beat beaten|become became|
begin began begun|bend bent|bet|bite bit bitten|bleed bled|blow blew blown|break broke broken|
breed bred|bring brought|build built|burn burnt|burst|buy bought|catch caught|choose chose chosen|cling clung|
come came|cost|creep crept|cut|deal dealt|dig dug|do did done does doing|draw drew drawn|dream dreamt|
drink drank drunk|drive drove driven|eat ate eaten|fall fell fallen|feed fed|feel felt|fight fought|find found|
flee fled|fly flew flown flies|forbid forbade forbidden|forget forgot forgotten|forgive forgave forgiven|
freeze froze frozen|get got gotten|give gave given|go went gone goes|grow grew grown|hang hung|
have has had having|hear heard|hide hid hidden|hit|hold held|hurt|keep kept|kneel knelt|know knew known|
lay laid|lead led|lean leant|leap leapt|learn learnt|leave left|lend lent|let|lie lain|light lit|lose lost|
make made|mean meant|meet met|pay paid|put|quit|read|ride rode ridden|ring rang rung|rise risen|run ran|
say said|see saw seen|seek sought|sell sold|send sent|set|shake shook shaken|shine shone|shoot shot|
show showed shown|shrink shrank shrunk|shut|sing sang sung|sink sank sunk|sit sat|sleep slept|slide slid|
speak spoke spoken|speed sped|spend spent|spin spun|split|spread|spring sprang sprung|stand stood|steal stole stolen|
stick stuck|sting stung|stink stank stunk|strike struck|swear swore sworn|sweep swept|swim swam swum|swing swung|
take took taken|teach taught|tear tore torn|tell told|think thought|throw threw thrown|understand understood|
wake woke woken|wear wore worn|weave wove woven|weep wept|win won|write wrote written|
child children|man men|woman women|person people|mouse mice|foot feet|tooth teeth|goose geese
"""
IRREGULAR = {form: group.split()[0] for group in _IRREGULAR_GROUPS.replace("\n", "").split("|") if group.strip()
             for form in group.split()[1:]}


@lru_cache(maxsize=None)
def _stemmer() -> snowballstemmer.stemmer:
    return snowballstemmer.stemmer("english")


_STEMS: dict[str, str] = {}


def _fold(word: str) -> str:
    if word.isascii():
        return word.lower()
    decomposed = unicodedata.normalize("NFKD", word)
    return "".join(c for c in decomposed if not unicodedata.combining(c) and c.isalnum()).casefold()


def normalise_word(word: str) -> str:
    """A non-CJK word as the index stores it: folded and stemmed (cached; words repeat)."""
    stem = _STEMS.get(word)
    if stem is None:
        folded = _fold(word)
        if folded in IRREGULAR:
            folded = IRREGULAR[folded]
        stem = _stemmer().stemWord(folded) if folded.isascii() and folded.isalpha() else folded
        if len(_STEMS) > 500_000:
            _STEMS.clear()
        _STEMS[word] = stem
    return stem


def seal(term: str, salt: bytes) -> str:
    """A term of 16+ UTF-8 bytes as a keyed hash (`h` + 13 hex digits), so the index never holds it."""
    if len(term) < LONG_TOKEN_BYTES // 4 or len(term.encode("utf-8")) < LONG_TOKEN_BYTES:
        return term
    return "h" + hashlib.blake2b(term.encode("utf-8"), digest_size=7, key=salt).hexdigest()[:13]


@dataclass(frozen=True, slots=True)
class Token:
    """One index term and where it stands in the original text."""

    term: str
    start: int
    end: int
    cjk: bool


def tokens(text: str, salt: bytes) -> Iterator[Token]:
    """The index terms of a text, in order, with their character ranges in it."""
    for m in _TOKEN.finditer(text or ""):
        if m.group(1) is not None:
            yield Token(m.group(1), m.start(), m.end(), True)
        else:
            term = normalise_word(m.group(2))
            if term:
                yield Token(seal(term, salt), m.start(), m.end(), False)


_ASCII_WORD = re.compile(r"[A-Za-z0-9]+")
# The same words in ASCII text without a regex: every other ASCII character becomes a space, then a split
# (a fifth faster than `_ASCII_WORD.findall`: a bulk write analyses every page's text).
_ASCII_SPACES = str.maketrans({c: " " for c in range(128) if not chr(c).isalnum()})


class _Spaces(dict[int, "int | str"]):
    """A `str.translate` table: ASCII characters as in _ASCII_SPACES; any other character that `_TOKEN` never
    matches (punctuation, symbols, emoji, spaces: no part of a term) becomes a space too, and the rest stay.
    Text whose only non-ASCII characters are of the first kind (quotes, dashes, emoji in English prose, about
    half of real chat text by length) then splits into the same words as the ASCII scan, without the regex."""

    def __missing__(self, code: int) -> int | str:
        kept: int | str = code if _TOKEN.match(chr(code)) else " "
        if len(self) < 20_000:  # filled as characters are met; bounded (hostile text may hold any of them)
            self[code] = kept
        return kept


_SPACES = _Spaces(_ASCII_SPACES)
# The same for ASCII text as bytes: a byte table is read in C without a dict look-up per character (twice as fast).
_ASCII_BYTES = bytes(c if chr(c).isalnum() else 32 for c in range(256))
_TERMS: dict[bytes, dict[str, str]] = {}


def index_terms(text: str, salt: bytes, limit: int | None = None) -> list[str]:
    """Just the terms (the index's view of a text): the same as `tokens`, without offsets, and fast
    (every distinct word is analysed once per process; most text is ASCII and takes a plain scan)."""
    if not text:
        return []
    if limit is not None and len(text) > limit:
        text = text[:limit]
    cache = _TERMS.get(salt)
    if cache is None or len(cache) > 500_000:
        cache = _TERMS[salt] = {}
    out = []
    if text.isascii():
        spaced = text.encode("ascii").translate(_ASCII_BYTES).decode("ascii")
    else:
        spaced = text.translate(_SPACES)
    if spaced.isascii():  # no CJK, no other letters, no marks: a plain scan finds the same words
        words = spaced.split()
        found: list[str | None] = list(map(cache.get, words))  # one C-level pass over the cache
        if not all(found):  # a word not met yet (or an empty term, which the loop leaves as it is)
            for i, term in enumerate(found):
                if term is None:
                    found[i] = cache[words[i]] = seal(normalise_word(words[i]), salt)
        return cast(list[str], found)  # no None is left
    for cjk, word in _TOKEN.findall(text):
        if cjk:
            out.append(cjk)
            continue
        term = cache.get(word)
        if term is None:
            term = cache[word] = seal(normalise_word(word), salt)
        if term:
            out.append(term)
    return out


def index_text(text: str, salt: bytes) -> str:
    """Text as it goes into FTS5: its terms separated by spaces (FTS5 re-splits on the spaces only)."""
    return " ".join(index_terms(text, salt)) if text else ""


def stat_terms(terms: list[str]) -> set[str]:
    """The distinct keys a document contributes to the term statistics: its terms and CJK bigrams."""
    keys = set(terms)
    if "".join(keys).isascii():
        return keys
    prev = ""
    for term in terms:
        cjk = bool(_HAS_CJK.match(term)) and len(term) == 1
        if cjk and prev:
            keys.add(prev + term)
        prev = term if cjk else ""
    return keys


@dataclass(frozen=True, slots=True)
class Unit:
    """One unit of a query: a term or a CJK bigram, with its FTS5 expression and statistics key."""

    key: str  # the term, or the two CJK characters of a bigram
    parts: tuple[str, ...]  # the index terms it is made of (one, or two adjacent CJK characters)
    weight: float = 1.0  # below 1 for an instance standing in for a kind word ("hike" for "sports")
    group: str = ""  # the key of the question's unit it stands in for (a spelling, an instance); "" for itself

    @property
    def match(self) -> str:
        return '"' + " ".join(self.parts).replace('"', '""') + '"'


@lru_cache(maxsize=1)
def _stop_terms() -> frozenset[str]:
    """The stop words as the index stores them (stemmed: "because" is `becaus` there)."""
    return frozenset(normalise_word(w) for w in EN_STOP) | EN_STOP


def is_stop(term: str) -> bool:
    """Whether an index term is an English function word."""
    return term in _stop_terms()


def _query_runs(query: str, salt: bytes) -> list[list[Token]]:
    """The query's tokens, grouped into runs of adjacent CJK characters and single other words."""
    runs: list[list[Token]] = []
    for tok in tokens(query, salt):
        if tok.cjk and runs and runs[-1][-1].cjk and runs[-1][-1].end == tok.start:
            runs[-1].append(tok)
        else:
            runs.append([tok])
    return runs


def ranked_units(query: str, salt: bytes) -> list[Unit]:
    """The units of a question for `auto`: content words and overlapping CJK bigrams, stop words out."""
    units: list[Unit] = []
    fallback: list[Unit] = []
    for run in _query_runs(query, salt):
        if not run[0].cjk:
            unit = Unit(run[0].term, (run[0].term,))
            (fallback if is_stop(run[0].term) else units).append(unit)
            continue
        # Function characters split a CJK run; what is left is read as overlapping bigrams.
        pieces: list[list[str]] = [[]]
        for tok in run:
            if tok.term in CJK_STOP:
                fallback.append(Unit(tok.term, (tok.term,)))
                pieces.append([])
            else:
                pieces[-1].append(tok.term)
        for piece in pieces:
            if len(piece) == 1:
                units.append(Unit(piece[0], (piece[0],)))
            for a, b in zip(piece, piece[1:], strict=False):
                units.append(Unit(a + b, (a, b)))
    chosen = units or fallback
    seen: set[str] = set()
    out = []
    for unit in chosen:
        if unit.key not in seen:
            seen.add(unit.key)
            out.append(unit)
    return out


def text_match(query: str, salt: bytes) -> str | None:
    """The FTS5 expression of `text` mode: every word (CJK words as phrases) must occur."""
    phrases = []
    for run in _query_runs(query, salt):
        terms = [t.term for t in run]
        if not run[0].cjk and is_stop(terms[0]):
            continue
        phrases.append('"' + " ".join(terms).replace('"', '""') + '"')
    if not phrases:  # only stop words: then they are what was asked for
        phrases = ['"' + " ".join(t.term for t in run).replace('"', '""') + '"' for run in _query_runs(query, salt)]
    return " ".join(phrases) if phrases else None


def text_units(query: str, salt: bytes) -> list[Unit]:
    """The units `text` mode ranks by (its words and CJK bigrams)."""
    return ranked_units(query, salt)


def passage(text: str, units: list[Unit], salt: bytes, width: int = 600) -> tuple[str, int, int, list[list[int]]]:
    """The window of at most `width` characters holding the most query units, and where they stand in it.

    Returns (snippet, start, end, highlights) with highlights as [start, end] character ranges
    within the snippet; the text itself is never marked.
    """
    if not text:
        return "", 0, 0, []
    scan = text[:200_000]
    singles = {u.parts[0]: u.key for u in units if len(u.parts) == 1}
    pairs = {u.parts: u.key for u in units if len(u.parts) == 2}
    toks = _spans(scan, salt)
    hits: list[tuple[int, int, str]] = []  # (start, end, unit key)
    for i, (term, start, end) in enumerate(toks):
        if term in singles:
            hits.append((start, end, singles[term]))
        if pairs and i + 1 < len(toks):
            key = pairs.get((term, toks[i + 1][0]))
            if key is not None:
                hits.append((start, toks[i + 1][2], key))
    start = 0
    if hits and len(text) > width:
        best = (-1, 0)
        j = 0
        for i, (s, _, _) in enumerate(hits):
            while j < len(hits) and hits[j][1] - s <= width * 3 // 4:
                j += 1
            distinct = len({h[2] for h in hits[i:j]})
            if distinct > best[0]:
                best = (distinct, s)
        start = max(0, best[1] - width // 4)
        space = text.rfind(" ", max(0, start - 40), start + 1)
        if space >= 0 and best[1] - space < width:
            start = space + 1
    end = min(len(text), start + width)
    marks = _merge([[max(s, start) - start, min(e, end) - start] for s, e, _ in hits if s < end and e > start])
    return text[start:end], start, end, marks


def _spans(text: str, salt: bytes) -> list[tuple[str, int, int]]:
    """(term, start, end) of every index term of a text: `tokens` on the fast path of `index_terms`."""
    cache = _TERMS.get(salt)
    if cache is None or len(cache) > 500_000:
        cache = _TERMS[salt] = {}
    out: list[tuple[str, int, int]] = []
    if text.isascii():
        for m in _ASCII_WORD.finditer(text):
            w = m.group()
            term = cache.get(w)
            if term is None:
                term = cache[w] = seal(normalise_word(w), salt)
            out.append((term, m.start(), m.end()))
        return out
    return [(t.term, t.start, t.end) for t in tokens(text, salt)]


def substring_marks(snippet: str, query: str) -> list[list[int]]:
    """Ranges of a case-insensitive substring in a snippet (for `exact` and `temporal`)."""
    needle = query.strip().casefold()
    if not needle:
        return []
    hay = snippet.casefold()
    if len(hay) != len(snippet):  # casefolding changed lengths: fall back to lower()
        hay, needle = snippet.lower(), query.strip().lower()
        if len(hay) != len(snippet):
            return []
    out: list[list[int]] = []
    pos = hay.find(needle)
    while pos >= 0 and len(out) < 100:
        out.append([pos, pos + len(needle)])
        pos = hay.find(needle, pos + len(needle))
    return out


def _merge(ranges: list[list[int]]) -> list[list[int]]:
    out: list[list[int]] = []
    for s, e in sorted(ranges):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return out


# The dates a question names live in store.question_dates (re-exported here for the index and the ranking).
from .question_dates import DateNamed as DateNamed  # noqa: E402
from .question_dates import date_words as date_words  # noqa: E402
from .question_dates import dates_named as dates_named  # noqa: E402
from .question_dates import months_named as months_named  # noqa: E402
from .question_dates import without_dates as without_dates  # noqa: E402


# Words that date an event in running text ("yesterday", "last week", "in May", "two days ago").
_TIME_WORDS = frozenset("""yesterday today tonight tomorrow ago last next week weeks weekend weekends month months year years
    day days morning evening night monday tuesday wednesday thursday friday saturday sunday january february
    march april may june july august september october november december recently since earlier""".split())
_WHEN = re.compile(r"^\s*(when|what time|what date|what year|what month|how long ago)\b|什么时候|何时|哪天|哪一年|いつ", re.I)


def asks_when(query: str) -> bool:
    """Whether a question asks for a time ("When did ...", "什么时候 ...")."""
    return bool(_WHEN.search(query or ""))


def time_terms(salt: bytes) -> frozenset[str]:
    """The time words as index terms."""
    return frozenset(index_terms(" ".join(sorted(_TIME_WORDS)), salt))


_NUMBER_WORDS = frozenset("""one two three four five six seven eight nine ten eleven twelve twenty thirty forty fifty hundred
    thousand million dozen couple few several first second third once twice""".split())
_HOW_MANY = re.compile(r"\bhow (many|much|often|old|long|far)\b|多少|几[个次年天岁]|いくつ|何[人回年]", re.I)


def asks_number(query: str) -> bool:
    """Whether a question asks for a quantity ("How many ...", "多少 ...")."""
    return bool(_HOW_MANY.search(query or ""))


def number_terms(salt: bytes) -> frozenset[str]:
    """Number words as index terms (digits are recognised as such)."""
    return frozenset(index_terms(" ".join(sorted(_NUMBER_WORDS)), salt))




# --------------------------------------------------------------------------- time as people say it
# Relative time in a message ("yesterday", "last Friday", "two weeks ago", "上周", "前天") read
# against the message's own date: the days it names are indexed beside its text (see store.index).

_NUM_WORDS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
              "eight": 8, "nine": 9, "ten": 10, "couple": 2, "few": 3}
_WEEKDAYS = {name: i for i, name in enumerate("monday tuesday wednesday thursday friday saturday sunday".split())}
_EN_RELATIVE = re.compile(
    r"\b(?:(?P<dby>the\s+day\s+before\s+yesterday)|(?P<dat>the\s+day\s+after\s+tomorrow)"
    r"|(?P<yday>yesterday|last\s+night)|(?P<today>today|tonight|this\s+(?:morning|afternoon|evening))"
    r"|(?P<tmrw>tomorrow)"
    r"|(?:(?P<n>\d{1,2}|a|an|one|two|three|four|five|six|seven|eight|nine|ten|a\s+couple\s+of|a\s+few|couple\s+of|few)"
    r"\s+(?P<unit>day|week|weekend|month|year)s?\s+(?:ago|back|earlier))"
    r"|(?:(?P<rel>last|this\s+past|past|this|next|on)\s+(?P<what>week|weekend|month|year|summer|winter|spring|fall|autumn"
    r"|monday|tuesday|wednesday|thursday|friday|saturday|sunday)))\b",
    re.I,
)
_CN_NUM = {"一": 1, "两": 2, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9, "十": 10,
           "几": 3}
_CJK_WEEKDAY = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6}
_CJK_RELATIVE = re.compile(
    r"(?P<d3>大前天)|(?P<d2>前天|一昨日)|(?P<d1>昨天|昨日|昨晚|昨夜)|(?P<d0>今天|今日|今早|今晚|今朝)|(?P<p1>明天|明日)"
    r"|(?P<p2>后天|明後日)"
    r"|(?P<lw>上周|上星期|上个星期|上個星期|上週|先週)(?P<lwd>[一二三四五六日天]|末)?"
    r"|(?P<nw>下周|下星期|下个星期|下週|来週)(?P<nwd>[一二三四五六日天]|末)?"
    r"|(?P<tw>这周|这个星期|本周|今週)(?P<twd>[一二三四五六日天]|末)?"
    r"|(?:周|星期)(?P<wd>[一二三四五六日天])"
    r"|(?P<lm>上个月|上個月|上月|先月)|(?P<ly>去年|昨年)|(?P<ly2>前年)"
    r"|(?P<cn>\d{1,2}|[一两二三四五六七八九十几])\s*(?:个|個)?(?P<cu>天|日|周|星期|礼拜|月|年)(?:前|以前)"
)
SEASON_MONTHS = {"summer": (6, 7, 8), "winter": (12, 1, 2), "spring": (3, 4, 5), "fall": (9, 10, 11), "autumn": (9, 10, 11)}
MAX_EVENT_DATES = 24  # days one message may name (a long text says many things; its first mentions count)
EVENT_SCAN_CHARS = 20_000


def _day_of(stamp: str | None) -> date | None:
    if not stamp or len(stamp) < 10:
        return None
    try:
        return date(int(stamp[:4]), int(stamp[5:7]), int(stamp[8:10]))
    except ValueError:
        return None


def _month_shift(day: date, months: int) -> tuple[int, int]:
    total = day.year * 12 + day.month - 1 + months
    return total // 12, total % 12 + 1


def _week(start: date) -> list[date]:
    return [start + timedelta(days=i) for i in range(7)]


# Every English expression read holds one of these words: text without any is not scanned at all,
# and text with some is scanned only around them (most text never names a relative day).
_EN_ANCHORS = ("yesterday", "tomorrow", "today", "tonight", "night", "morning", "afternoon", "evening", " ago",
               " back", "earlier", "week", "month", "year", "summer", "winter", "spring", "fall", "autumn",
               "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")


_UNITS = ("day days week weeks weekend weekends month months year years summer winter spring fall autumn "
          "monday tuesday wednesday thursday friday saturday sunday night morning afternoon evening")
_BEFORE = "last this next past on few couple a an one two three four five six seven eight nine ten"
_AFTER = "ago back earlier"
_ALONE = "yesterday tomorrow today tonight"


@lru_cache(maxsize=1)
def _time_stems() -> tuple[frozenset[str], frozenset[str], frozenset[str], frozenset[str]]:
    def stems(words: str) -> frozenset[str]:
        return frozenset(normalise_word(w) for w in words.split())
    return stems(_UNITS), stems(_BEFORE), stems(_AFTER), stems(_ALONE)


def may_name_time(terms: list[str], distinct: Mapping[str, None] | None = None) -> bool:
    """Whether a text's index terms hold a word pair a relative time expression needs ("last week",
    "days ago", "yesterday"): most text holds none and is never scanned for dates. `distinct`: the same
    terms as the keys of a dict, if the caller has them (then only the few time words are looked up)."""
    units, before, after, alone = _time_stems()
    if distinct is not None:
        present = distinct.keys()  # a set view: isdisjoint walks the smaller side, here the time words
        if not present.isdisjoint(alone):
            return True
        if present.isdisjoint(units):
            return False
    else:
        if alone.isdisjoint(terms) is False:
            return True
        if units.isdisjoint(terms):
            return False
    last = len(terms) - 1
    # Only the positions of time words are looked at (found at C speed).
    for i in compress(range(len(terms)), map(units.__contains__, terms)):
        if (i and terms[i - 1] in before) or (i < last and terms[i + 1] in after):
            return True
    return False


def _en_matches(scan: str) -> Iterator[re.Match[str]]:
    """The English relative time expressions of a text, in order (only windows around an anchor are read)."""
    low = scan.lower()
    windows: list[list[int]] = []
    for word in _EN_ANCHORS:
        i = low.find(word)
        while i >= 0:
            start = low.rfind(" ", 0, max(0, i - 32)) + 1  # from a word boundary
            windows.append([start, min(len(low), i + len(word) + 24)])
            i = low.find(word, i + len(word))
    if not windows:
        return
    windows.sort()
    merged = [windows[0]]
    for s, e in windows[1:]:
        if s <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], e)
        else:
            merged.append([s, e])
    for s, e in merged:
        end = low.find(" ", e)
        yield from _EN_RELATIVE.finditer(scan, s, len(scan) if end < 0 else end)


def _season(what: str, said: date, back: bool, ahead: bool) -> list[DateNamed]:
    """The months of "last summer", "next winter", "this fall" said on a given day."""
    if what == "winter":  # December and the January and February after it
        if back:
            dec = said.year - 1 if said.month >= 3 else said.year - 2
        elif ahead or said.month >= 3:
            dec = said.year
        else:
            dec = said.year - 1
        return [(dec, 12, None), (dec + 1, 1, None), (dec + 1, 2, None)]
    months = SEASON_MONTHS[what]
    year = said.year
    if back and said.month <= max(months):
        year -= 1
    elif ahead and said.month >= min(months):
        year += 1
    return [(year, mo, None) for mo in months]


def event_dates(text: str | None, stamp: str | None) -> list[DateNamed]:
    """The days (or months, or years) a text's relative time expressions name, read against the
    date it was said (`stamp`, ISO 8601): "yesterday" said on 4 October 2023 is (2023, 10, 3);
    "last week" is the seven days of the week before; "last month" is (year, month, None).

    Only what a calendar can settle is read: a bare weekday is the last one before the day of
    speaking (after it with "next"), "this weekend" the coming one; vaguer words ("recently",
    "the other day") name nothing. The index holds what this returns (store.index.date_tokens): a
    change to its rules is a change to the analyser (bump ANALYSER_VERSION), or an erasure would take
    rows out with other values than they went in with.
    """
    said = _day_of(stamp)
    if said is None or not text:
        return []
    scan = text[:EVENT_SCAN_CHARS]
    out: list[DateNamed] = []
    days: list[date] = []
    monday = said - timedelta(days=said.weekday())
    for m in _en_matches(scan):
        g = m.groupdict()
        if g["dby"]:
            days.append(said - timedelta(days=2))
        elif g["dat"]:
            days.append(said + timedelta(days=2))
        elif g["yday"]:
            days.append(said - timedelta(days=1))
        elif g["today"]:
            days.append(said)
        elif g["tmrw"]:
            days.append(said + timedelta(days=1))
        elif g["unit"]:
            word = " ".join(g["n"].lower().split())
            n = int(word) if word.isdigit() else _NUM_WORDS.get(word.split()[-1] if word.split()[-1] != "of" else word.split()[-2], 1)
            unit = g["unit"].lower()
            if unit == "day":
                days.append(said - timedelta(days=n))
            elif unit == "week":
                days.extend(_week(monday - timedelta(days=7 * n)))
            elif unit == "weekend":
                sat = monday - timedelta(days=2) - timedelta(days=7 * (n - 1))
                days.extend((sat, sat + timedelta(days=1)))
            elif unit == "month":
                y, mo = _month_shift(said, -n)
                out.append((y, mo, None))
            else:
                out.append((said.year - n, None, None))
        else:
            rel = " ".join(g["rel"].lower().split())
            what = g["what"].lower()
            back = rel in ("last", "this past", "past")
            ahead = rel == "next"
            if what in _WEEKDAYS:
                wd = _WEEKDAYS[what]
                if ahead or (rel == "this" and wd > said.weekday()):
                    delta = (wd - said.weekday()) % 7 or 7
                    days.append(said + timedelta(days=delta))
                elif rel == "this":
                    days.append(monday + timedelta(days=wd))
                else:  # "last Friday", "on Friday", "this past Friday": the last one before today
                    delta = (said.weekday() - wd) % 7 or 7
                    days.append(said - timedelta(days=delta))
            elif what == "week":
                if rel == "on":
                    continue
                days.extend(_week(monday + timedelta(days=-7 if back else 7 if ahead else 0)))
            elif what == "weekend":
                if rel == "on":
                    continue
                sat = monday + timedelta(days=5)
                if back:
                    sat = sat - timedelta(days=7) if said < sat + timedelta(days=2) else sat
                    if said.weekday() >= 5 and rel == "last":
                        sat = monday - timedelta(days=2)
                elif ahead:
                    sat += timedelta(days=7)
                days.extend((sat, sat + timedelta(days=1)))
            elif what == "month":
                if rel != "on":
                    y, mo = _month_shift(said, -1 if back else 1 if ahead else 0)
                    out.append((y, mo, None))
            elif what == "year":
                if rel != "on":
                    out.append((said.year + (-1 if back else 1 if ahead else 0), None, None))
            elif what in SEASON_MONTHS and rel != "on":
                out.extend(_season(what, said, back, ahead))
        if len(days) + len(out) >= MAX_EVENT_DATES:
            break
    for m in (() if scan.isascii() else _CJK_RELATIVE.finditer(scan)):
        g = m.groupdict()
        for key, shift in (("d3", -3), ("d2", -2), ("d1", -1), ("d0", 0), ("p1", 1), ("p2", 2)):
            if g[key]:
                days.append(said + timedelta(days=shift))
        for key, sub, weeks in (("lw", "lwd", -1), ("nw", "nwd", 1), ("tw", "twd", 0)):
            if g[key]:
                start = monday + timedelta(days=7 * weeks)
                if g[sub] == "末":
                    days.extend((start + timedelta(days=5), start + timedelta(days=6)))
                elif g[sub]:
                    days.append(start + timedelta(days=_CJK_WEEKDAY[g[sub]]))
                else:
                    days.extend(_week(start))
        if g["wd"]:
            days.append(monday + timedelta(days=_CJK_WEEKDAY[g["wd"]]))
        if g["lm"]:
            y, mo = _month_shift(said, -1)
            out.append((y, mo, None))
        if g["ly"]:
            out.append((said.year - 1, None, None))
        if g["ly2"]:
            out.append((said.year - 2, None, None))
        if g["cn"]:
            n = int(g["cn"]) if g["cn"].isdigit() else _CN_NUM[g["cn"]]
            unit = g["cu"]
            if unit in ("天", "日"):
                days.append(said - timedelta(days=n))
            elif unit in ("周", "星期", "礼拜"):
                days.extend(_week(monday - timedelta(days=7 * n)))
            elif unit == "月":
                y, mo = _month_shift(said, -n)
                out.append((y, mo, None))
            else:
                out.append((said.year - n, None, None))
        if len(days) + len(out) >= MAX_EVENT_DATES:
            break
    out.extend((d.year, d.month, d.day) for d in days if d != said)
    return sorted(set(out), key=lambda f: (f[0] or 0, f[1] or 0, f[2] or 0))[:MAX_EVENT_DATES]


_TODAY = re.compile(r"\b(?:today|tonight|this\s+(?:morning|afternoon|evening))\b|今天|今日|今早|今晚|今朝", re.I)
# Verbs that ask what happened without saying what: "what did I do / what happened / what went on last week?"
_WHAT_HAPPENED = "happen happened happens happening go goes went going gone do does did doing done up 发生 做 干"


def question_dates(query: str, now: str) -> list[DateNamed]:
    """Relative time in a question, read against `now` (ISO 8601) as a message's is against its own date: "what
    did I do last week?" asks for the days of the week before this one; and "today", "this morning" ask for today
    (in a message they name its own day, so `event_dates` leaves them out)."""
    found = event_dates(query, now)
    today = _day_of(now)
    if today is not None and _TODAY.search(query or ""):
        found = sorted({*found, (today.year, today.month, today.day)})
    return found


def asks_only_when(query: str, salt: bytes) -> bool:
    """A question about a time and nothing more ("what did I do last week?", "what happened yesterday?", "上周我做了
    什么"): once its relative time is taken out, no content word is left but a verb that asks what happened."""
    rest = _EN_RELATIVE.sub(" ", query or "")
    rest = _CJK_RELATIVE.sub(" ", _TODAY.sub(" ", rest))
    return not (content_terms(index_terms(rest, salt)) - _what_happened(salt))


@lru_cache(maxsize=4)
def _what_happened(salt: bytes) -> frozenset[str]:
    return frozenset(index_terms(_WHAT_HAPPENED, salt))


# --------------------------------------------------------------------------- chatter
# Words of greetings, thanks and agreement: a message made only of these (and names, and function
# words) says nothing a question asks for ("Thanks, Sam! Talk soon. Bye!").
_PLEASANTRIES = frozenset("""hi hey hello hiya yo bye goodbye cya thanks thank thx ty welcome great awesome cool nice good
    sure ok okay yeah yes yep yup yea wow whoa glad happy sound sounds love talk soon later see care take catch
    appreciate appreciated enjoy definitely totally absolutely congrats congratulations luck hope well amazing
    fantastic wonderful lovely really true right fun agree course haha lol cheers alright fine bet keep touch chat
    awesome super sweet thrilled excited proud stoked hear same too indeed exactly lot lots much anytime wish best
    let know hang tight dear buddy pal friend man guys guy folks night morning evening""".split())
_AFTER_NO = frozenset("problem problems worries worry prob probs".split())
_CJK_PLEASANTRIES = frozenset("谢好哈嗯哦呀啦拜再见嘿喂行棒太感")


@lru_cache(maxsize=1)
def _pleasantry_terms() -> frozenset[str]:
    return frozenset(normalise_word(w) for w in _PLEASANTRIES) | _CJK_PLEASANTRIES


@lru_cache(maxsize=1)
def _after_no_terms() -> frozenset[str]:
    return frozenset(normalise_word(w) for w in _AFTER_NO)


def content_terms(terms: list[str]) -> set[str]:
    """The terms of a text that carry content: not function words, not greetings or thanks
    ("no problem" and "no worries" are thanks)."""
    chatter = _pleasantry_terms()
    after_no = _after_no_terms()
    out = set()
    prev = ""
    for t in terms:
        if not (t in chatter or is_stop(t) or (prev == "no" and t in after_no) or t in CJK_STOP):
            out.add(t)
        prev = t
    return out


# --------------------------------------------------------------------------- words that differ
INSTANCE_WEIGHT = 0.5  # an instance of a kind the question names ("hike" for "sports")
MAX_ALTERNATIVES = 48


@lru_cache(maxsize=4)
def _word_tables(salt: bytes) -> tuple[dict[str, tuple[str, ...]], dict[str, str]]:
    """The kind and spelling tables of `store.words` as index terms."""
    from .words import KINDS, SPELLINGS

    def term(word: str) -> str:
        terms = index_terms(word, salt)
        return terms[0] if len(terms) == 1 else ""

    kinds: dict[str, tuple[str, ...]] = {}
    for kind, instances in KINDS.items():
        key = term(kind)
        if key:
            found = [t for t in (term(w) for w in instances) if t and t != key]
            kinds[key] = tuple(dict.fromkeys((*kinds.get(key, ()), *found)))
    spellings = {term(a): term(b) for a, b in SPELLINGS.items() if term(a) and term(b) and term(a) != term(b)}
    return kinds, spellings


def alternatives(units: list[Unit], salt: bytes) -> list[Unit]:
    """Units standing in for a question's words: the other spelling (full weight) and the instances
    of a kind word (lower weight), never one the question already has."""
    kinds, spellings = _word_tables(salt)
    have = {u.key for u in units}
    out: list[Unit] = []
    for u in units:
        if len(u.parts) != 1 or u.group:
            continue
        other = spellings.get(u.key)
        if other and other not in have:
            have.add(other)
            out.append(Unit(other, (other,), 1.0, u.key))
        for inst in kinds.get(u.key, ()):
            if inst not in have and len(out) < MAX_ALTERNATIVES:
                have.add(inst)
                out.append(Unit(inst, (inst,), INSTANCE_WEIGHT, u.key))
    return out


_SPEAKER = re.compile(r"^\s*([A-Z][\w'.-]{0,40}(?: [A-Z][\w'.-]{0,40})?)\s*:")
_NAME = re.compile(r"(?<![.!?:;\n]\s)(?<![.!?:;\n])(?<=\s)([A-Z][a-z]+)")


def names(text: str) -> set[str]:
    """Index terms of what reads as names in a short text: a leading speaker tag ("Ann: ...") and
    capitalised words that do not start a sentence ("No problem, Maria!")."""
    found: set[str] = set()
    m = _SPEAKER.match(text)
    if m:
        found.update(normalise_word(w) for w in m.group(1).split())
    for m in _NAME.finditer(text):
        found.add(normalise_word(m.group(1)))
    return found
