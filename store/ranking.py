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
   the reply that holds an answer ranks beside the message that asked.
Order is score, then newest revision first; every input is a function of visible data.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any, Sequence

from . import analysis
from .analysis import Unit
from .index import FTS_TABLE, facet_text

K1 = 1.2
B = 0.9
TITLE_WEIGHT = 2.0
META_WEIGHT = 0.5
CAP = 2000  # newest matching revisions taken per unit
PROXIMITY_WINDOW = 8
PROXIMITY_WEIGHT = 0.5
COVERAGE = 0.4  # share of a score that depends on holding more of the query's weight
NEIGHBOUR_SHARE = 0.5
TEXT_CAP = 500
POOL = 50  # candidates scored exactly (at least)
MAX_ANALYSED_CHARS = 30_000

_WORD = re.compile(analysis._TOKEN.pattern)
_ASCII_WORD = re.compile(r"[A-Za-z0-9]+")


@dataclass(frozen=True, slots=True)
class Scope:
    """What the ranking may look at: the SQL test for visible scopes and the hit WHERE clause."""

    scope_sql: str  # condition on `s` (a scope row) true for the scopes whose statistics count
    scope_params: list[Any]
    where: str  # the hit condition over r (revision), p (page), s (scope)
    params: list[Any]
    scope_tokens: list[int] | None  # scope pks to filter inside FTS5, when few


_TERMS: dict[bytes, dict[str, str]] = {}


def _terms(text: str, salt: bytes) -> list[str]:
    """Index terms of a text (the scoring path: no offsets kept; words repeat, so each is analysed once)."""
    if not text:
        return []
    if len(text) > MAX_ANALYSED_CHARS:
        text = text[:MAX_ANALYSED_CHARS]
    cache = _TERMS.get(salt)
    if cache is None or len(cache) > 500_000:
        cache = _TERMS[salt] = {}
    out = []
    if text.isascii():  # most text: no CJK, no marks, so a plain scan finds the same words
        for word in _ASCII_WORD.findall(text):
            term = cache.get(word)
            if term is None:
                term = cache[word] = analysis.seal(analysis.normalise_word(word), salt)
            out.append(term)
        return out
    for cjk, word in _WORD.findall(text):
        if cjk:
            out.append(cjk)
            continue
        term = cache.get(word)
        if term is None:
            term = cache[word] = analysis.seal(analysis.normalise_word(word), salt)
        if term:
            out.append(term)
    return out


def _positions(terms: list[str]) -> dict[str, list[int]]:
    where: dict[str, list[int]] = {}
    for i, t in enumerate(terms):
        where.setdefault(t, []).append(i)
    return where


class Ranker:
    """One ranked search over one store connection."""

    def __init__(self, db: Any, salt: bytes, scope: Scope) -> None:
        self._db = db
        self._salt = salt
        self._scope = scope

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
        avgdl = (terms / n) if n else 1.0
        return int(n), max(avgdl, 1.0), df

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
        sql = (
            f"SELECT r.id FROM {FTS_TABLE} CROSS JOIN revision r ON r.id = {FTS_TABLE}.rowid "
            "CROSS JOIN page p ON p.id = r.page_id CROSS JOIN scope s ON s.id = p.scope_id "
            f"WHERE {FTS_TABLE} MATCH ? AND {sc.where} ORDER BY {FTS_TABLE}.rowid DESC LIMIT ?"
        )
        return [r[0] for r in self._db.execute_sql(sql, [match, *sc.params, cap]).fetchall()]

    # --- exact scores ---

    def _load(self, rev_pks: Sequence[int]) -> dict[int, tuple[int, int, str, str | None, dict[str, Any]]]:
        out = {}
        rev_pks = list(rev_pks)
        for i in range(0, len(rev_pks), 500):
            part = rev_pks[i:i + 500]
            marks = ",".join("?" * len(part))
            for rid, page_pk, scope_pk, title, content, facets in self._db.execute_sql(
                f"SELECT id, page_id, scope_id, title, content, facets FROM revision WHERE id IN ({marks})", part
            ).fetchall():
                out[rid] = (page_pk, scope_pk, title or "", content, json.loads(facets or "{}"))
        return out

    def _score(self, units: Sequence[Unit], idf: dict[str, float], avgdl: float,
               title: str, content: str | None, facets: dict[str, Any]) -> float:
        own_title = bool(facets.get("title")) or content is None
        t_terms = _terms(title, self._salt) if own_title else []
        b_terms = _terms(content or "", self._salt)
        b_pos = _positions(b_terms)
        if not own_title and b_terms:
            # The first line is the title: it counts as title too (it is indexed once, as body).
            body = (content or "").strip()
            t_terms = _terms(body.split("\n", 1)[0], self._salt) if "\n" in body else b_terms
        t_pos = _positions(t_terms) if t_terms is not b_terms else b_pos
        m_terms = _terms(facet_text(facets), self._salt) if facets else []
        dl = len(b_terms) + len(m_terms) + (len(t_terms) if own_title else 0)
        m_pos = _positions(m_terms) if m_terms else {}
        norm = K1 * (1 - B + B * dl / avgdl)
        score = 0.0
        positions: list[list[int]] = []
        matched_idf = 0.0
        total_idf = 0.0
        for u in units:
            w = idf.get(u.key, 0.0)
            total_idf += w
            tf_b, pos = _count(b_pos, u.parts)
            tf_t, _ = _count(t_pos, u.parts)
            tf_m, _ = _count(m_pos, u.parts) if m_pos else (0, [])
            tf = tf_b + TITLE_WEIGHT * tf_t + META_WEIGHT * tf_m
            if tf <= 0:
                continue
            matched_idf += w
            score += w * tf * (K1 + 1) / (tf + norm)
            if pos:
                positions.append(pos)
        if score <= 0:
            return 0.0
        score += _proximity(positions) * (matched_idf / max(len(positions), 1)) * PROXIMITY_WEIGHT
        if total_idf > 0:
            score *= 1 - COVERAGE + COVERAGE * (matched_idf / total_idf)
        return score

    # --- the search ---

    def rank(self, units: Sequence[Unit], need: int, text_expr: str | None = None,
             neighbours: bool = True) -> list[tuple[int, float]]:
        """The first `need` (revision pk, score) pairs, best first."""
        if not units:
            return []
        n, avgdl, df = self._stats(units)
        idf = {u.key: self._idf(n, df.get(u.key, 0)) for u in units}
        # A unit no counted revision holds may still match a tombstoned page (shown only with audit).
        present = list(units)
        pool_size = max(POOL, 3 * need)
        found: dict[int, float] = {}
        if text_expr is not None:
            for rid in self._enumerate(text_expr, TEXT_CAP):
                found[rid] = 0.0
            pool = list(found)
        else:
            # Rarest first; a unit common enough to need the cap is asked only while candidates are few.
            for u in sorted(present, key=lambda u: (df.get(u.key, 0), u.key)):
                if len(found) >= 4 * pool_size and df.get(u.key, 0) > CAP:
                    break
                for rid in self._enumerate(u.match, CAP):
                    found[rid] = found.get(rid, 0.0) + idf[u.key]
            pool = sorted(found, key=lambda r: (-found[r], -r))[:pool_size]
        if not pool:
            return []
        rows = self._load(pool)
        scores = {rid: self._score(units, idf, avgdl, row[2], row[3], row[4]) for rid, row in rows.items()}
        if neighbours and text_expr is None:
            self._lend(scores, rows, units, idf, avgdl)
        ranked = sorted(((s, rid) for rid, s in scores.items() if s > 0), key=lambda x: (-x[0], -x[1]))
        return [(rid, s) for s, rid in ranked[:need]]

    def _lend(self, scores: dict[int, float], rows: dict[int, Any], units: Sequence[Unit],
              idf: dict[str, float], avgdl: float) -> None:
        """Messages that respond to a scored message, and the one it responds to, share its score."""
        by_page = {row[0]: rid for rid, row in rows.items() if scores.get(rid, 0) > 0}
        if not by_page:
            return
        sc = self._scope
        pages = list(by_page)
        marks = ",".join("?" * len(pages))
        sql = (
            "SELECT x.lender, r.id FROM ("
            f"SELECT from_page_id AS lender, to_page_id AS other FROM relation WHERE relation_type = 'responds_to' "
            f"AND retracted = 0 AND from_page_id IN ({marks}) UNION "
            f"SELECT to_page_id, from_page_id FROM relation WHERE relation_type = 'responds_to' "
            f"AND retracted = 0 AND to_page_id IN ({marks})) x "
            "JOIN page lp ON lp.id = x.lender JOIN page p ON p.id = x.other AND p.scope_id = lp.scope_id "
            f"JOIN revision r ON r.id = p.head JOIN scope s ON s.id = p.scope_id WHERE {sc.where}"
        )
        links = self._db.execute_sql(sql, [*pages, *pages, *sc.params]).fetchall()
        missing = [rid for _, rid in links if rid not in scores]
        if missing:
            extra = self._load(missing)
            for rid, row in extra.items():
                scores[rid] = self._score(units, idf, avgdl, row[2], row[3], row[4])
        lent: dict[int, float] = {}
        for lender_page, rid in links:
            share = scores.get(by_page[lender_page], 0.0) * NEIGHBOUR_SHARE
            if share > lent.get(rid, 0.0):
                lent[rid] = share
        for rid, share in lent.items():
            scores[rid] = scores.get(rid, 0.0) + share


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
