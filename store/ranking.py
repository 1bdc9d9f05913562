"""Relevance ranking for `auto` and `text`, computed from what the session may search only.

How a question is ranked (see `store.analysis` for how it becomes units):
1. Statistics: for every unit, how many revisions contain it (df) and how many revisions and
   terms there are (N, average length), summed over the scopes this session may search
   (`term_stat`, `scope_stat`). Nothing from other scopes enters a score.
2. Candidates: units from the rarest to the most common; each asks FTS5 for the newest
   matching revisions that pass the session's WHERE clause (grants, status, filters,
   suppressions), at most `CAP` per unit. Common units are only asked while there are too
   few candidates. (`text` asks once, for revisions holding every unit.)
3. Scores: the best candidates by the idf of the units they hold are read and scored
   exactly: BM25F over title (x2), body and facets, plus a proximity bonus for query units
   standing close together, plus a coverage bonus for holding more of the query.
4. Conversation: a message lends part of its score to the messages it `responds_to` and
   that respond to it, when they are in the same scope and pass the same WHERE clause, so
   the reply that holds an answer ranks beside the message that asked. Candidates are also
   grouped by the conversation that `contains` them (same scope): a conversation is scored
   as a whole from its candidates and its size, both counted over messages passing the
   WHERE clause, and lifts its messages; a term in almost every message of a conversation
   weighs less inside it; a message of only pleasantries ranks below content.
5. Dates: a question naming a day, month or year multiplies the score of a revision said
   then, or telling of then ("yesterday" said the next day; `store.analysis.event_dates`).
   A factor, never a term: a revision without the question's other words stays at zero.
6. Words that differ: a kind word's instances (`store.words`), the other spelling, and for a
   word no visible revision holds, the visible terms one or two edits away, stand in for it.
Order is score, then newest revision first; every input is a function of visible data.

Long because: the ranking pipeline (statistics, candidates, exact scores, lifts) is one computation whose steps
share their state.
"""

from __future__ import annotations

import datetime as dt
import functools
import json
import math
import re
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

from . import analysis
from .analysis import Unit
from .index import FTS_TABLE, analyse, facet_text

K1 = 1.2
B = 0.9
TITLE_WEIGHT = 2.0
META_WEIGHT = 0.5
CAP = 1000  # newest matching revisions taken per unit
PROXIMITY_WINDOW = 8
PROXIMITY_WEIGHT = 0.5
COVERAGE = 0.4  # share of a score that depends on holding more of the query's weight
NEIGHBOUR_SHARE = 0.5
NEIGHBOUR_HOPS = 1
UP_SHARE = 1.0  # relative share a reply lends to the message it responds to
TIME_BOOST = 1.0  # a "when" question favours text that dates something (0.8-1.3 give the same tune-set recall)
NUMBER_BOOST = 1.0
DATE_BOOST = 2.0  # for a page dated in a month or year the question names
DAY_BOOST = 1.0  # and again for a page dated on the day it names
EVENT_BOOST = 0.5  # and again for a text telling of that day (its relative time names it)
TEXT_CAP = 500
POOL = 64  # candidates scored exactly (at least; a 10-hit and a 20-hit search score the same ones)
MAX_ANALYSED_CHARS = 30_000
CHATTER = 0.3  # factor on a message holding only pleasantries, names and function words
CHATTER_TERMS = 40  # a text longer than this (in terms) is never taken for small talk
LONG = "\x00long"  # stands for the content of such a text
CHATTER_MIN = 6  # messages a conversation needs before a term common in it weighs less
COMMON_SHARE = 0.8  # share of a conversation's messages holding a term that makes it common there
COMMON_WEIGHT = 0.5  # its weight inside that conversation
SESSION_LIFT = 1.0  # how much the best conversation lifts its messages (the others in proportion)
CLOSE_MIN = 5  # letters a word needs before its close forms are looked for
CLOSE_WEIGHT = 0.9  # a close form of a word no visible revision holds
COMPOUND_MIN = 6  # letters a word needs before it is read as two words written together
COMPOUND_WEIGHT = 0.9  # "road trip" for "roadtrip", "destress" for "de-stress"
COMPOUND_RARE = 100  # a word is split only when fewer than 1 in this many visible revisions hold it



@dataclass(frozen=True, slots=True)
class Scope:
    """What the ranking may look at: the SQL test for visible scopes and the hit WHERE clause."""

    scope_sql: str  # condition on `s` (a scope row) true for the scopes whose statistics count
    scope_params: list[Any]
    where: str  # the hit condition over r (revision), p (page), s (scope)
    params: list[Any]
    scope_tokens: list[int] | None  # scope pks to filter inside FTS5, when few
    # Pages suppressed in the session's context: their revisions leave the statistics too, so what a
    # session has put out of its context changes no score (computed at query time, never stored).
    suppressed: tuple[int, ...] = ()


# Candidates are tested against narrow covering indexes (store/db.py RANK_INDEXES) instead of the wide revision
# and page rows: a thousand candidates then touch a few pages of ids, not a thousand pages of text (what an
# encrypted store, which maps nothing, must read and decrypt one page at a time).
NARROW_REVISION = frozenset({"id", "page_id", "scope_id"})
NARROW_PAGE = frozenset({"id", "head", "status", "superseded", "scope_id"})
RANK_INDEX_NAMES = ("revision_rank", "page_rank")


def narrow_tables(where: str, indexed: bool = True) -> tuple[str, str]:
    """The revision and page sources (aliased r and p) for a hit condition: through the narrow indexes when
    they cover every column it names, else the tables (a filter on a revision's dates or types needs its row;
    a store not yet upgraded to schema 9 has no such index)."""
    if not indexed:
        return "revision r", "page p"
    rev = "revision r INDEXED BY revision_rank" if set(re.findall(r"\br\.(\w+)", where)) <= NARROW_REVISION else "revision r"
    page = "page p INDEXED BY page_rank" if set(re.findall(r"\bp\.(\w+)", where)) <= NARROW_PAGE else "page p"
    return rev, page


def _terms(text: str, salt: bytes) -> list[str]:
    """Index terms of a text on the scoring path (a long text is read up to MAX_ANALYSED_CHARS)."""
    return analysis.index_terms(text, salt, MAX_ANALYSED_CHARS)


def _positions(terms: list[str], wanted: set[str]) -> dict[str, list[int]]:
    """Where each wanted term stands in a term list (the others are not needed to score)."""
    where: dict[str, list[int]] = {}
    for i, t in enumerate(terms):
        if t in wanted:
            where.setdefault(t, []).append(i)
    return where


class Conversations:
    """Candidates grouped by conversation: a term in almost every message of a conversation (a
    speaker's name, a greeting) weighs little inside it, and a conversation that holds more of the
    question lifts its messages."""

    def __init__(self, conv_of: dict[int, int], counts: dict[int, dict[str, int]], size: dict[int, int],
                 units: Sequence[Unit], idf: dict[str, float]) -> None:
        self.conv_of = conv_of
        self._idf: dict[int, dict[str, float]] = {}
        self._score: dict[int, float] = {}
        self._common: dict[int, set[str]] = {}
        lengths = [n for n in size.values() if n]
        avg = sum(lengths) / len(lengths) if lengths else 1.0
        for conv, per in counts.items():
            n = size.get(conv, 0)
            if n <= 0:
                continue
            local = dict(idf)
            total = 0.0
            for u in units:
                tf = min(per.get(u.key, 0), n)
                if not tf:
                    continue
                share = tf / n
                if n >= CHATTER_MIN and share >= COMMON_SHARE:
                    local[u.key] = idf[u.key] * COMMON_WEIGHT
                    self._common.setdefault(conv, set()).update(u.parts)
                norm = tf / (1 - B + B * n / avg)
                total += local[u.key] * norm * (K1 + 1) / (norm + K1)
            self._idf[conv] = local
            self._score[conv] = total
        best = max(self._score.values(), default=0.0)
        self._lift = {c: v / best for c, v in self._score.items()} if best > 0 else {}

    def idf_of(self, rid: int, idf: dict[str, float]) -> dict[str, float]:
        conv = self.conv_of.get(rid)
        return self._idf.get(conv, idf) if conv is not None else idf

    def common_of(self, rid: int) -> set[str] | frozenset[str]:
        conv = self.conv_of.get(rid)
        return self._common.get(conv, frozenset()) if conv is not None else frozenset()

    def lift(self, scores: dict[int, float]) -> None:
        """Messages of the conversations that hold most of the question rise (the best by SESSION_LIFT)."""
        for rid, value in scores.items():
            conv = self.conv_of.get(rid)
            if value and conv is not None:
                scores[rid] = value * (1 + SESSION_LIFT * self._lift.get(conv, 0.0))


class Ranker:
    """One ranked search over one store connection."""

    def __init__(self, db: Any, salt: bytes, scope: Scope) -> None:
        self._db = db
        self._salt = salt
        self._scope = scope
        self._counted: set[str] = set()
        self.whole = True  # after rank(): its pool held every candidate a larger pool would score
        self.when = False
        self._wanted: set[str] = set()
        self._times: frozenset[str] = frozenset()
        self._numbers: frozenset[str] = frozenset()
        self.how_many = False
        self.sessions = True
        self._chatter: set[int] = set()  # scored revisions holding only small talk
        self._date_only: set[int] = set()  # candidates said on, or telling of, a day named, holding no word asked
        self._indexed = db.execute_sql(
            "SELECT COUNT(*) FROM sqlite_master WHERE type = 'index' AND name IN (?, ?)", RANK_INDEX_NAMES
        ).fetchone()[0] == len(RANK_INDEX_NAMES)

    # --- statistics ---

    def _stats(self, units: Sequence[Unit]) -> tuple[int, float, dict[str, int]]:
        sc = self._scope
        if sc.scope_sql == "1":
            n, terms = self._db.execute_sql("SELECT COALESCE(SUM(docs), 0), COALESCE(SUM(terms), 0) FROM scope_stat").fetchone()
            in_scope, sp = "", []
        else:
            in_scope = f" AND scope_id IN (SELECT s.id FROM scope s WHERE {sc.scope_sql})"
            sp = list(sc.scope_params)
            n, terms = self._db.execute_sql(
                f"SELECT COALESCE(SUM(docs), 0), COALESCE(SUM(terms), 0) FROM scope_stat WHERE 1{in_scope}", sp
            ).fetchone()
        keys = sorted({u.key for u in units})
        df: dict[str, int] = {}
        if keys:
            marks = ",".join("?" * len(keys))
            for term, count in self._db.execute_sql(
                f"SELECT term, SUM(df) FROM term_stat WHERE term IN ({marks}){in_scope} GROUP BY term", [*keys, *sp]
            ).fetchall():
                df[term] = int(count)
        if sc.suppressed:
            n, terms = self._unsuppress(keys, int(n), int(terms), df)
        avgdl = (terms / n) if n else 1.0
        return int(n), max(avgdl, 1.0), df

    def _unsuppress(self, keys: list[str], n: int, terms: int, df: dict[str, int]) -> tuple[int, int]:
        """Take the counted revisions of the context's suppressed pages out of N, the term total and the
        document frequencies, exactly as the index counted them (store.index.analyse)."""
        sc = self._scope
        wanted = set(keys)
        in_scope = "" if sc.scope_sql == "1" else f" AND r.scope_id IN (SELECT s.id FROM scope s WHERE {sc.scope_sql})"
        for part in _chunks(list(sc.suppressed)):
            marks = ",".join("?" * len(part))
            for title, content, facets in self._db.execute_sql(
                "SELECT r.title, r.content, r.facets FROM revision r CROSS JOIN page p ON p.id = r.page_id "
                f"WHERE p.id IN ({marks}) AND p.status != 'tombstoned'{in_scope}", [*part, *sc.scope_params],
            ).fetchall():
                doc = analyse(title or "", content, json.loads(facets or "{}"), self._salt)
                n -= 1
                terms -= doc.count
                for key in doc.keys() & wanted:
                    df[key] -= 1
        for key in [k for k, v in df.items() if v <= 0]:
            del df[key]
        return n, terms

    def _close_forms(self, missing: Sequence[Unit]) -> list[Unit]:
        """For a word of the question that no visible revision holds (a typo, another spelling): the
        terms of the visible scopes one edit away (two for long words), sharing its first letters."""
        out: list[Unit] = []
        sc = self._scope
        in_scope = "" if sc.scope_sql == "1" else f" AND scope_id IN (SELECT s.id FROM scope s WHERE {sc.scope_sql})"
        for u in missing[:4]:
            word = u.key
            if len(word) < CLOSE_MIN or not word.isalpha() or not word.isascii():
                continue
            prefix = word[:3]
            rows = self._db.execute_sql(
                f"SELECT term, SUM(df) FROM term_stat WHERE term >= ? AND term < ? AND length(term) BETWEEN ? AND ?"
                f"{in_scope} GROUP BY term", [prefix, prefix + "\uffff", len(word) - 2, len(word) + 2, *sc.scope_params],
            ).fetchall()
            limit = 1 if len(word) < 8 else 2
            near = sorted((-int(n), t) for t, n in rows if t != word and _edits(word, t, limit) <= limit)
            for _, term in near[:2]:
                out.append(Unit(term, (term,), CLOSE_WEIGHT, word))
        return out

    def _compounds(self, units: Sequence[Unit], n: int, df: dict[str, int]) -> list[Unit]:
        """Words written together, apart or with a hyphen ("roadtrip" / "road trip", "destress" /
        "de-stress"): a question word split in two where both halves are visible terms stands in for it as
        the two-word phrase, and two adjacent question words stand in for the second as their joined form
        when that is a visible term. Only terms of the scopes this session may search are looked at."""
        plain = [u for u in units if not u.group and len(u.parts) == 1 and u.key.isascii() and u.key.isalpha()]
        splits: list[tuple[str, str, str]] = []  # (question term, first half, second half)
        for u in plain:
            word = u.key
            if len(word) < COMPOUND_MIN or word.startswith("h") and len(word) == 14:
                continue  # a sealed long term (store.analysis.seal) cannot be split
            if df.get(word, 0) * COMPOUND_RARE > n:
                continue  # a common word is read as itself (and its halves' phrase would be costly to look for)
            for i in range(2, len(word) - 2):
                a, b = analysis.normalise_word(word[:i]), analysis.normalise_word(word[i:])
                if a and b and not analysis.is_stop(a) and not analysis.is_stop(b):
                    splits.append((word, a, b))
        joins = [(b.key, a.key + b.key) for a, b in zip(plain, plain[1:], strict=False)
                 if not analysis.is_stop(a.key) and len(a.key) + len(b.key) >= COMPOUND_MIN]
        wanted = sorted({t for _, a, b in splits for t in (a, b)} | {j for _, j in joins})
        if not wanted:
            return []
        sc = self._scope
        in_scope = "" if sc.scope_sql == "1" else f" AND scope_id IN (SELECT s.id FROM scope s WHERE {sc.scope_sql})"
        seen: set[str] = set()
        for part in _chunks_str(wanted):
            marks = ",".join("?" * len(part))
            seen.update(t for (t,) in self._db.execute_sql(
                f"SELECT DISTINCT term FROM term_stat WHERE term IN ({marks}) AND df > 0{in_scope}",
                [*part, *sc.scope_params]).fetchall())
        have = {u.key for u in units}
        out: list[Unit] = []
        for word, a, b in splits:
            if a in seen and b in seen:
                out.append(Unit(b, (a, b), COMPOUND_WEIGHT, word))
        for second, joined in joins:
            if joined in seen and joined not in have:
                have.add(joined)
                out.append(Unit(joined, (joined,), COMPOUND_WEIGHT, second))
        return out[:8]

    @staticmethod
    def _idf(n: int, df: int) -> float:
        return math.log(1.0 + (n - df + 0.5) / (df + 0.5))

    # --- candidates ---

    def _match_sql(self, expr: str) -> tuple[str, list[Any]]:
        cols = "{title body meta} : (" + expr + ")"
        toks = self._scope.scope_tokens
        if toks is not None:
            return cols + " AND scope : (" + " OR ".join(f"zs{t}" for t in toks) + ")", []
        return cols, []

    def _enumerate(self, expr: str, cap: int) -> list[int]:
        match, _ = self._match_sql(expr)
        sc = self._scope
        rev, page = narrow_tables(sc.where, self._indexed)
        # The scope row is looked up only when the condition names it (a grant's namespaces): every page has one.
        scope = " CROSS JOIN scope s ON s.id = p.scope_id" if re.search(r"\bs\.\w", sc.where) else ""
        sql = (
            f"SELECT r.id FROM {FTS_TABLE} CROSS JOIN {rev} ON r.id = {FTS_TABLE}.rowid "
            f"CROSS JOIN {page} ON p.id = r.page_id{scope} "
            f"WHERE {FTS_TABLE} MATCH ? AND {sc.where} ORDER BY {FTS_TABLE}.rowid DESC LIMIT ?"
        )
        return [r[0] for r in self._db.execute_sql(sql, [match, *sc.params, cap]).fetchall()]

    # --- exact scores ---

    def _load(self, rev_pks: Sequence[int]) -> dict[int, tuple[int, int, str, str | None, dict[str, Any], str]]:
        out = {}
        rev_pks = list(rev_pks)
        for i in range(0, len(rev_pks), 500):
            part = rev_pks[i:i + 500]
            marks = ",".join("?" * len(part))
            for rid, page_pk, scope_pk, title, content, facets, date in self._db.execute_sql(
                "SELECT id, page_id, scope_id, title, content, facets, COALESCE(observed_at, created_at) "
                f"FROM revision WHERE id IN ({marks})", part
            ).fetchall():
                out[rid] = (page_pk, scope_pk, title or "", content, json.loads(facets or "{}"), date)
        return out

    def _doc(self, row: tuple[Any, ...]) -> tuple[dict[str, list[int]], dict[str, list[int]], dict[str, list[int]], int,
                                                   set[str], set[str]]:
        """Term positions of a revision's body, title and facet text, its length in terms, what
        it holds that a question may ask for ("time": it dates something, "number": it counts),
        and its content terms (not function words, not pleasantries)."""
        title, content, facets = row[2], row[3], row[4]
        own_title = bool(facets.get("title")) or content is None
        t_terms = _terms(title, self._salt) if own_title else []
        b_terms = _terms(content or "", self._salt)
        wanted = self._wanted
        b_pos = _positions(b_terms, wanted)
        if not own_title and b_terms:
            # The first line is the title: it counts as title too (it is indexed once, as body).
            body = (content or "").strip()
            t_terms = _terms(body.split("\n", 1)[0], self._salt) if "\n" in body else b_terms
        t_pos = _positions(t_terms, wanted) if t_terms is not b_terms else b_pos
        m_terms = _terms(facet_text(facets), self._salt) if facets else []
        dl = len(b_terms) + len(m_terms) + (len(t_terms) if own_title else 0)
        marks = set()
        if self.when and not self._times.isdisjoint(b_terms):
            marks.add("time")
        if self.how_many and any(t.isdigit() or t in self._numbers for t in b_terms):
            marks.add("number")
        if len(b_terms) > CHATTER_TERMS:  # a text this long is not small talk: no need to look
            content_terms = {LONG}
        else:
            # Names (a speaker tag, a capitalised word inside a sentence) do not make small talk content.
            # What was said counts, not the facets an importer adds (a role, the conversation's title).
            content_terms = (analysis.content_terms(b_terms) - analysis.names(content) if content
                             else analysis.content_terms(t_terms))
        return b_pos, t_pos, (_positions(m_terms, wanted) if m_terms else {}), dl, marks, content_terms

    def _tf(self, doc: tuple[Any, ...], unit: Unit, avgdl: float) -> tuple[float, list[int]]:
        """A unit's length-normalised, field-weighted frequency in one revision, and its body positions."""
        b_pos, t_pos, m_pos, dl = doc[0], doc[1], doc[2], doc[3]
        tf_b, pos = _count(b_pos, unit.parts)
        tf_t, _ = _count(t_pos, unit.parts)
        tf_m, _ = _count(m_pos, unit.parts) if m_pos else (0, [])
        tf = tf_b + TITLE_WEIGHT * tf_t + META_WEIGHT * tf_m
        return (tf / (1 - B + B * dl / avgdl) if tf else 0.0), pos

    def _score(self, units: Sequence[Unit], idf: dict[str, float], avgdl: float, doc: tuple[Any, ...]) -> float:
        """BM25F over the revision's title, body and facet text, with proximity and coverage."""
        score = 0.0
        positions: list[list[int]] = []
        matched_idf = 0.0
        total_idf = 0.0
        stand_in: dict[str, float] = {}  # a question unit -> the best score one of its stand-ins earned
        groups: dict[str, float] = {}  # a question unit -> the best weight it matched with (itself or a stand-in)
        for u in units:
            w = idf.get(u.key, 0.0)
            if u.key in self._counted and not u.group:  # a unit no counted page holds (a typo) cannot tell pages apart
                total_idf += w
            tf, pos = self._tf(doc, u, avgdl)
            if tf <= 0:
                continue
            own = u.group or u.key
            groups[own] = max(groups.get(own, 0.0), (idf.get(own, 0.0) if u.group else w) * u.weight)
            part = w * u.weight * tf * (K1 + 1) / (tf + K1)
            if u.group:  # stand-ins for one word of the question count once: the best of them
                stand_in[u.group] = max(stand_in.get(u.group, 0.0), part)
            else:
                score += part
            if pos:
                positions.append(pos)
        score += sum(stand_in.values())
        matched_idf = sum(groups.values())
        if score <= 0:
            return 0.0
        score += _proximity(positions) * (matched_idf / max(len(positions), 1)) * PROXIMITY_WEIGHT
        if total_idf > 0:
            score *= 1 - COVERAGE + COVERAGE * (matched_idf / total_idf)
        return score

    # --- the search ---

    def rank(self, units: Sequence[Unit], need: int, text_expr: str | None = None,
             neighbours: bool = True, dates: Sequence[analysis.DateNamed] = (),
             scored: int | None = None) -> list[tuple[int, float]]:
        """The first `need` (revision pk, score) pairs, best first; `scored` candidates are scored exactly (default
        max(POOL, 3 x need); the pages of one search give the same number, so their orders agree)."""
        self.whole = True  # every candidate any larger pool would score was scored (a larger one adds nothing)
        self._date_only = set()
        if not units and not dates:
            return []
        n, avgdl, df = self._stats(units)
        if text_expr is None:
            close = self._close_forms([u for u in units if not u.group and len(u.parts) == 1 and not df.get(u.key)])
            close += self._compounds(units, n, df)
            if close:
                units = [*units, *close]
                df.update(self._stats(close)[2])
        idf = {u.key: self._idf(n, df.get(u.key, 0)) for u in units}
        self._counted = {k for k, v in df.items() if v > 0}
        for u in units:
            if u.group and u.weight == CLOSE_WEIGHT and u.group not in self._counted:
                # A word found only in a close form weighs what that form weighs.
                idf[u.group] = max(idf.get(u.group, 0.0) if u.group in df else 0.0, idf[u.key])
                df[u.group] = df.get(u.group, 0) or df.get(u.key, 0)
                self._counted.add(u.group)
        self._wanted = {part for u in units for part in u.parts}
        self._times = analysis.time_terms(self._salt) if self.when else frozenset()
        self._numbers = analysis.number_terms(self._salt) if self.how_many else frozenset()
        # A unit no counted revision holds may still match a tombstoned page (shown only with audit).
        present = list(units)
        pool_size = max(scored, need) if scored else max(POOL, 3 * need)
        held: dict[int, set[str]] = {}  # candidate revision -> the units it is known to hold
        if text_expr is not None:
            pool = self._enumerate(text_expr, TEXT_CAP)
        else:  # candidate revision -> the units it is known to hold
            stand_ins: dict[str, list[Unit]] = {}
            for u in present:
                if u.group:
                    stand_ins.setdefault(u.group, []).append(u)
            present = [u for u in present if not u.group]
            ordered = sorted(present, key=lambda u: (df.get(u.key, 0), u.key))
            rarest = [u for u in ordered if df.get(u.key, 0) > 0][:3]
            if len(rarest) >= 2:
                # First the pages holding all of the rarest units, however old (each unit alone is capped).
                keys = {u.key for u in rarest}
                for rid in self._enumerate(" AND ".join(u.match for u in rarest), CAP):
                    held[rid] = set(keys)
            # Then unit by unit, rarest first; a common unit is asked only while candidates are few.
            for u in ordered:
                if len(held) >= 4 * pool_size and df.get(u.key, 0) > CAP:
                    self.whole = False  # a larger pool would have asked for this unit's pages too
                    break
                for rid in self._enumerate(u.match, CAP):
                    held.setdefault(rid, set()).add(u.key)
            # The stand-ins of a word (spellings, instances of a kind) are asked at once, as one more unit.
            weight = {u.key: idf[u.key] for u in present}
            for group, alts in sorted(stand_ins.items()):
                key = "~" + group
                weight[key] = max(idf[a.key] * a.weight for a in alts)
                found_alts = [a for a in alts if df.get(a.key, 0) > 0]
                if found_alts:
                    for rid in self._enumerate(" OR ".join(a.match for a in found_alts), CAP):
                        held.setdefault(rid, set()).add(key)
            found = {rid: sum(weight[k] for k in keys) for rid, keys in held.items()}
            if dates:
                # What happened on the days a question names is a candidate before what did not.
                for rid, boost in self._dated(list(found), dates).items():
                    found[rid] *= boost
            pool = sorted(found, key=lambda r: (-found[r], -r))[:pool_size]
            self.whole = self.whole and len(found) <= pool_size
            if dates and len(pool) < pool_size:
                # What was said on, or tells of, a day the question names is a hit even without its other words,
                # after every text that holds some (`_date_only`).
                dated = {rid: f for rid, f in self._on_the_days(dates).items() if rid not in found}
                self._date_only = set(sorted(dated, key=lambda r: (-dated[r], -r))[:pool_size - len(pool)])
                pool += sorted(self._date_only, key=lambda r: (-dated[r], -r))
                self.whole = self.whole and len(found) + len(dated) <= pool_size
        if not pool:
            return []
        rows = self._load(pool)
        docs = {rid: self._doc(row) for rid, row in rows.items()}
        convs: Conversations | None = None
        if text_expr is None and self.sessions:
            convs = self._conversations(held, set(rows), units, idf)
        scores = {rid: self._score(units, convs.idf_of(rid, idf) if convs else idf, avgdl, docs[rid]) for rid in rows}
        for rid, doc in docs.items():
            # Only pleasantries, function words and the conversation's common names: below anything with content.
            if not (doc[5] - (convs.common_of(rid) if convs else frozenset())):
                self._chatter.add(rid)
                scores[rid] *= CHATTER
        if convs is not None:
            convs.lift(scores)
        # A question asking "when" favours text that dates something, one asking "how many" text that counts.
        for rid, doc in docs.items():
            if scores.get(rid):
                if "time" in doc[4]:
                    scores[rid] *= 1 + TIME_BOOST
                if "number" in doc[4]:
                    scores[rid] *= 1 + NUMBER_BOOST
        if dates:
            _date_boost(scores, rows, dates)
        if neighbours and text_expr is None:
            self._lend(scores, rows, units, idf, avgdl, dates)
        if self._date_only:
            self._score_date_only(scores, rows, dates)
        ranked = sorted(((s, rid) for rid, s in scores.items() if s > 0), key=lambda x: (-x[0], -x[1]))
        self.whole = self.whole and len(ranked) <= need  # (neighbours lent a score are rows too)
        return [(rid, s) for s, rid in ranked[:need]]

    def _conversations(self, held: dict[int, set[str]], pool: set[int], units: Sequence[Unit],
                       idf: dict[str, float]) -> Conversations | None:
        """The conversations (pages that `contain` messages) of the candidates, scored as wholes from
        their visible messages only: candidates come through the session's WHERE clause, and a
        conversation's size counts the messages that pass it."""
        sc = self._scope
        # The pool first: when none of the best candidates is a message of a conversation, nothing more is asked.
        conv_of = self._containers(sorted(pool))
        if not conv_of:
            return None
        conv_of.update(self._containers(sorted(set(held) - pool)))
        counts: dict[int, dict[str, int]] = {}
        for rid, conv in conv_of.items():
            per = counts.setdefault(conv, {})
            for key in held.get(rid, ()):
                per[key] = per.get(key, 0) + 1
        size: dict[int, int] = {}
        convs = sorted(counts)
        for part in _chunks(convs):
            marks = ",".join("?" * len(part))
            for conv, n in self._db.execute_sql(
                "SELECT x.from_page_id, COUNT(*) FROM relation x CROSS JOIN page p ON p.id = x.to_page_id "
                "CROSS JOIN revision r ON r.id = p.head CROSS JOIN scope s ON s.id = p.scope_id "
                f"WHERE x.relation_type = 'contains' AND x.retracted = 0 AND x.from_page_id IN ({marks}) AND {sc.where} "
                "GROUP BY x.from_page_id", [*part, *sc.params],
            ).fetchall():
                size[conv] = int(n)
        return Conversations(conv_of, counts, size, units, idf)

    def _containers(self, rev_pks: list[int]) -> dict[int, int]:
        """revision pk -> the page pk of the conversation that contains its page. The container must sit
        in the message's scope and not be tombstoned (relations never reach into another scope)."""
        out: dict[int, int] = {}
        for part in _chunks(rev_pks):
            marks = ",".join("?" * len(part))
            for rid, conv in self._db.execute_sql(
                f"SELECT r.id, MIN(x.from_page_id) FROM revision r CROSS JOIN relation x ON x.to_page_id = r.page_id "
                "AND x.relation_type = 'contains' AND x.retracted = 0 CROSS JOIN page cp ON cp.id = x.from_page_id "
                f"AND cp.scope_id = r.scope_id AND cp.status != 'tombstoned' WHERE r.id IN ({marks}) GROUP BY r.id",
                part,
            ).fetchall():
                out[rid] = conv
        return out

    def _on_the_days(self, dates: Sequence[analysis.DateNamed]) -> dict[int, float]:
        """Revisions within the scope said on the days (months, years) a question names, or whose relative time
        tells of them (their date tokens), each up to CAP, newest first, with their date factor."""
        sc = self._scope
        rev, page = narrow_tables(sc.where, self._indexed)
        scope = " CROSS JOIN scope s ON s.id = p.scope_id" if re.search(r"\bs\.\w", sc.where) else ""
        out: dict[int, float] = {}
        # A session that may search few scopes reads their days from the (scope, status, sort_time) index: the
        # (status, sort_time) one would walk every scope's pages of a busy day to find its own.
        few = (f" AND p.scope_id IN ({','.join(str(int(t)) for t in sc.scope_tokens)})"
               if sc.scope_tokens is not None else "")
        for first, last in _spans(dates):  # the page's own date (its head's), then the revision's
            said = self._db.execute_sql(
                f"SELECT r.id, COALESCE(r.observed_at, r.created_at) FROM page p CROSS JOIN revision r "
                f"ON r.page_id = p.id{scope} WHERE p.sort_time >= ? AND p.sort_time < ?{few} AND {sc.where} "
                "ORDER BY p.sort_time DESC, r.id DESC LIMIT ?", [first, last, *sc.params, CAP]).fetchall()
            self.whole = self.whole and len(said) < CAP
            _said_on(said, dates, out)
        tokens = _named_tokens(dates)
        if tokens:
            found = self._db.execute_sql(
                f"SELECT r.id FROM {FTS_TABLE} CROSS JOIN {rev} ON r.id = {FTS_TABLE}.rowid "
                f"CROSS JOIN {page} ON p.id = r.page_id{scope} "
                f"WHERE {FTS_TABLE} MATCH ? AND {sc.where} ORDER BY {FTS_TABLE}.rowid DESC LIMIT ?",
                [self._date_match(tokens), *sc.params, CAP]).fetchall()
            self.whole = self.whole and len(found) < CAP
            for (rid,) in found:
                out[rid] = max(out.get(rid, 1.0), 1 + DATE_BOOST)
        return out

    def _date_match(self, tokens: list[str]) -> str:
        """The FTS5 query for revisions holding one of these date tokens, in the scopes counted when few."""
        match = "scope : (" + " OR ".join(tokens) + ")"
        if self._scope.scope_tokens is not None:
            match += " AND scope : (" + " OR ".join(f"zs{t}" for t in self._scope.scope_tokens) + ")"
        return match

    def _score_date_only(self, scores: dict[int, float], rows: dict[int, Any],
                         dates: Sequence[analysis.DateNamed]) -> None:
        """A candidate that holds none of the question's words but was said on, or tells of, a day it names: below
        every text that holds some (half the lowest of their scores), in the order of its date factor (a day told
        of, a day said on, a month, a year); small talk lower still."""
        held = [s for rid, s in scores.items() if s > 0 and rid not in self._date_only]
        floor = 0.5 * min(held) if held else 1.0
        top = (1 + DATE_BOOST) * (1 + DAY_BOOST) * (1 + EVENT_BOOST)
        for rid in self._date_only:
            row = rows.get(rid)
            if row is None or scores.get(rid, 0.0) > 0:  # (a neighbour lent it the words' score)
                continue
            factor = _row_factor(row, dates)
            if factor > 1.0:
                scores[rid] = floor * factor / top * (CHATTER if rid in self._chatter else 1.0)

    def _dated(self, rev_pks: list[int], dates: Sequence[analysis.DateNamed]) -> dict[int, float]:
        """Candidates said on, or telling of, a day the question names, and their date factor (the
        events come from the date tokens indexed beside the text, see `store.index.derived_dates`)."""
        out: dict[int, float] = {}
        for part in _chunks(rev_pks):
            marks = ",".join("?" * len(part))
            _said_on(self._db.execute_sql(
                f"SELECT id, COALESCE(observed_at, created_at) FROM revision WHERE id IN ({marks})", part
            ).fetchall(), dates, out)
        tokens = _named_tokens(dates)
        if tokens:
            wanted = set(rev_pks)
            rows = self._db.execute_sql(
                f"SELECT rowid FROM {FTS_TABLE} WHERE {FTS_TABLE} MATCH ? ORDER BY rowid DESC LIMIT ?",
                [self._date_match(tokens), 20 * CAP]).fetchall()
            for (rid,) in rows:
                if rid in wanted:
                    out[rid] = max(out.get(rid, 1.0), 1 + DATE_BOOST)
        return out

    def _lend(self, scores: dict[int, float], rows: dict[int, Any], units: Sequence[Unit],
              idf: dict[str, float], avgdl: float, dates: Sequence[analysis.DateNamed]) -> None:
        """Messages that respond to a scored message, and the one it responds to, share its score
        (and, at a further step, their neighbours a share of that share)."""
        own = dict(scores)
        carried = {row[0]: own[rid] for rid, row in rows.items() if own.get(rid, 0) > 0}  # page pk -> score to pass on
        lent: dict[int, float] = {}  # revision pk -> share received
        seen = set(carried)
        share = NEIGHBOUR_SHARE
        for _ in range(NEIGHBOUR_HOPS):
            if not carried:
                break
            links = self._neighbours(list(carried))
            missing = [rid for _, _, rid, _ in links if rid not in scores]
            if missing:
                extra = self._load(missing)
                for rid, row in extra.items():
                    doc = self._doc(row)
                    scores[rid] = own[rid] = self._score(units, idf, avgdl, doc) * (1.0 if doc[5] else CHATTER)
                    if not doc[5]:
                        self._chatter.add(rid)
                if dates:
                    _date_boost(scores, extra, dates)
                    own.update({rid: scores[rid] for rid in extra})
            nxt: dict[int, float] = {}
            for lender_page, page_pk, rid, up in links:
                value = carried[lender_page] * share * (UP_SHARE if up else 1.0)
                if value > lent.get(rid, 0.0):
                    lent[rid] = value
                if page_pk not in seen and value > nxt.get(page_pk, 0.0):
                    nxt[page_pk] = carried[lender_page]
            seen.update(nxt)
            carried = nxt
            share *= NEIGHBOUR_SHARE
        for rid, value in lent.items():  # small talk takes a small share
            scores[rid] = scores.get(rid, 0.0) + value * (CHATTER if rid in self._chatter else 1.0)

    def _neighbours(self, pages: list[int]) -> list[tuple[int, int, int, bool]]:
        """(lender page pk, neighbour page pk, neighbour head revision pk) over live `responds_to` links,
        neighbours in the lender's scope that pass the session's hit WHERE clause."""
        sc = self._scope
        marks = ",".join("?" * len(pages))
        sql = (
            "SELECT x.lender, p.id, r.id, x.up FROM ("
            f"SELECT from_page_id AS lender, to_page_id AS other, 1 AS up FROM relation WHERE relation_type = 'responds_to' "
            f"AND retracted = 0 AND from_page_id IN ({marks}) UNION "
            f"SELECT to_page_id, from_page_id, 0 FROM relation WHERE relation_type = 'responds_to' "
            f"AND retracted = 0 AND to_page_id IN ({marks})) x "
            # CROSS JOIN keeps the links driving (otherwise SQLite may walk every active page first).
            "CROSS JOIN page lp ON lp.id = x.lender CROSS JOIN page p ON p.id = x.other AND p.scope_id = lp.scope_id "
            f"CROSS JOIN revision r ON r.id = p.head CROSS JOIN scope s ON s.id = p.scope_id WHERE {sc.where}"
        )
        return [(a, b, c, bool(u)) for a, b, c, u in self._db.execute_sql(sql, [*pages, *pages, *sc.params]).fetchall()]


@functools.lru_cache(maxsize=16)
def _date_sets(dates: tuple[analysis.DateNamed, ...]) -> tuple[set[tuple[int | None, int, int]], set[tuple[int | None, int]],
                                                               set[tuple[int | None, int]], set[int]]:
    """A question's dates as sets (a range names up to 62 days): its days, the months of its days, its
    months named without a day, its years named alone; a year None stands for any year."""
    days: set[tuple[int | None, int, int]] = set()
    day_months: set[tuple[int | None, int]] = set()
    months: set[tuple[int | None, int]] = set()
    years: set[int] = set()
    for y, m, d in dates:
        if m is None:
            if y is not None:
                years.add(y)
        elif d is None:
            months.add((y, m))
        else:
            days.add((y, m, d))
            day_months.add((y, m))
    return days, day_months, months, years


def _date_factor(day: tuple[int, int, int] | None, events: Sequence[analysis.DateNamed],
                 dates: Sequence[analysis.DateNamed]) -> float:
    """How much a question's dates favour a text said on `day` whose relative time names `events`:
    its day of speaking or a day it tells of in a month or year named, more on a day named, and most when
    the text tells of that day ("yesterday I met ...", said the day after): what happened on a day is
    told of it, while much that is said on a day is about other things."""
    days, day_months, months, years = _date_sets(tuple(dates))
    best = 1.0
    said = [(day[0], day[1], day[2])] if day else []
    for k, (y, m, d) in enumerate([*said, *events]):
        if m is None:
            boost = 1 + DATE_BOOST if y in years else 1.0
        elif d is not None and ((y, m, d) in days or (None, m, d) in days):
            boost = (1 + DATE_BOOST) * (1 + DAY_BOOST) * (1.0 if k < len(said) else 1 + EVENT_BOOST)
        elif (y, m) in months or (None, m) in months or y in years:
            boost = 1 + DATE_BOOST
        elif d is not None and ((y, m) in day_months or (None, m) in day_months):
            boost = 1 + DATE_BOOST  # in the month of a day named ("last month" does not tell which day)
        else:
            boost = 1.0
        best = max(best, boost)
    return best


def _date_boost(scores: dict[int, float], rows: dict[int, Any],
                dates: Sequence[analysis.DateNamed]) -> None:
    """A question that names a month or a year favours what happened then (the page's date, or a day
    its text tells of: "yesterday", "last week"), and one that names a day what happened on that day most.
    A factor on the words' score: a text holding none of the question's other words stays at zero."""
    for rid, row in rows.items():
        if not scores.get(rid):
            continue
        factor = _row_factor(row, dates)
        if factor != 1.0:
            scores[rid] *= factor


def _edits(a: str, b: str, limit: int) -> int:
    """Levenshtein distance with adjacent swaps, or limit + 1 once it is sure to exceed `limit`."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    prev2: list[int] | None = None
    prev = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        cur = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
            if prev2 is not None and i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                cur[j] = min(cur[j], prev2[j - 2] + 1)
        if min(cur) > limit:
            return limit + 1
        prev2, prev = prev, cur
    return prev[-1]


def _day(stamp: str | None) -> tuple[int, int, int] | None:
    """The (year, month, day) an ISO 8601 time begins with, or None."""
    try:
        return (int(stamp[:4]), int(stamp[5:7]), int(stamp[8:10])) if stamp else None
    except ValueError:
        return None


def _row_factor(row: tuple[Any, ...], dates: Sequence[analysis.DateNamed]) -> float:
    """How much a question's dates favour a loaded revision (`_load`'s row): its day of speaking, or a day its text
    tells of."""
    events = analysis.event_dates(row[3], row[5]) if row[3] else []
    return _date_factor(_day(row[5]), events, dates)


def _said_on(rows: Iterable[tuple[int, str | None]], dates: Sequence[analysis.DateNamed],
             out: dict[int, float]) -> None:
    """(revision pk, its date) rows said on a day, month or year a question names: their date factor into `out`."""
    for rid, stamp in rows:
        day = _day(stamp)
        if day is None:
            continue
        factor = _date_factor(day, (), dates)
        if factor > 1.0:
            out[rid] = max(out.get(rid, 1.0), factor)


def _spans(dates: Sequence[analysis.DateNamed]) -> list[tuple[str, str]]:
    """The days, months and years a question names (those with a year) as ISO 8601 ranges [first, after), adjacent
    ones joined: a page's date (`sort_time`) in one of them was said then."""
    out: list[tuple[str, str]] = []
    for y, m, d in sorted(x for x in dates if x[0] is not None):
        assert y is not None
        try:
            if m is None:
                first, after = dt.date(y, 1, 1), dt.date(y + 1, 1, 1)
            elif d is None:
                first, after = dt.date(y, m, 1), dt.date(y + (m == 12), m % 12 + 1, 1)
            else:
                first = dt.date(y, m, d)
                after = first + dt.timedelta(days=1)
        except ValueError:
            continue
        span = (first.isoformat(), after.isoformat())
        if out and span[0] <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], span[1]))
        else:
            out.append(span)
    return out


def _named_tokens(dates: Sequence[analysis.DateNamed]) -> list[str]:
    """The date tokens (see `store.index.date_tokens`) of the days, months and years a question names."""
    out = []
    for y, m, d in dates:
        if y is None:
            continue
        if m is None:
            out.append(f"zy{y:04d}")
        elif d is None:
            out.append(f"zm{y:04d}{m:02d}")
        else:
            out.append(f"zd{y:04d}{m:02d}{d:02d}")
    return sorted(set(out))


def _chunks(items: list[int], size: int = 500) -> Iterable[list[int]]:
    for i in range(0, len(items), size):
        yield items[i:i + size]


def _chunks_str(items: list[str], size: int = 500) -> Iterable[list[str]]:
    for i in range(0, len(items), size):
        yield items[i:i + size]


def _count(where: dict[str, list[int]], parts: tuple[str, ...]) -> tuple[int, list[int]]:
    """Occurrences (and positions) of a unit, given each term's positions in a text."""
    first = where.get(parts[0])
    if not first:
        return 0, []
    if len(parts) == 1:
        return len(first), first
    second = set(where.get(parts[1], ()))
    pos = [i for i in first if i + 1 in second]
    return len(pos), pos


def _proximity(positions: list[list[int]]) -> float:
    """How close the matched units stand: 1 for units side by side, falling with distance."""
    if len(positions) < 2:
        return 0.0
    best = 0.0
    flat = sorted((p, i) for i, ps in enumerate(positions) for p in ps[:50])
    # The smallest window holding the most distinct units, scanned left to right.
    for start in range(len(flat)):
        seen = {flat[start][1]}
        for end in range(start + 1, len(flat)):
            span = flat[end][0] - flat[start][0]
            if span > PROXIMITY_WINDOW * len(positions):
                break
            seen.add(flat[end][1])
            value = (len(seen) - 1) / (len(positions) - 1) * (1.0 / (1.0 + max(0, span - len(seen) + 1) / 4))
            best = max(best, value)
    return best
