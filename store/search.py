"""search_pages: authorization inside the SQL, before ranking, counting, snippets or traversal."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from . import ids as idmod
from .constants import LIFECYCLE_STATUSES as STATUSES
from .constants import LIMITS
from .core import Call, Part, operation
from . import analysis, index, semantic
from . import validate as v
from .errors import Conflict, Forbidden, Invalid, Unsupported
from .ranking import POOL, Ranker
from .ranking import Scope as RankScope
from .search_cursor import MAX_OFFSET, fingerprint as _fingerprint, tiers as _tiers
from .reads import PROJECTIONS, SEARCH_MODES, clamp, decode_cursor, effective_status, encode_cursor
from .text import snippet
from .titles import shown_title
from .types import Hit, SearchResult, SemanticStatus

FILTER_KEYS = {"lifecycle_status", "relation_types", "created_after", "created_before", "observed_after",
               "observed_before", "media_types", "actor_types"}
TIME_FILTERS = ("created_after", "created_before", "observed_after", "observed_before")
MAX_SCOPE_TOKENS = 64  # a session that may search this many scopes or fewer is filtered inside FTS5
STATUS_SQL = (
    "(CASE WHEN r.id != p.head THEN 'superseded' WHEN p.status != 'active' THEN p.status "
    "WHEN p.superseded > 0 THEN 'superseded' ELSE 'active' END)"
)


@dataclass(frozen=True)
class PageQuery:
    """Which pages a search may return to this session: the checked filters and the SQL they make (grants, named
    scopes, statuses, filters, suppressions), for `r` (revision), `p` (page) and `s` (scope). Search, handoff
    and bulk deletion select through it, so a change to what a filter means changes all three alike."""

    filters: dict[str, Any]  # checked: statuses sorted, lists deduplicated, times parsed
    named: tuple[str, ...]  # the scopes the caller named (empty: every scope the session may search)
    where: str
    params: tuple[Any, ...]
    all_revisions: bool
    context_id: str | None = None  # whose suppressions apply (they also keep their words out of the scores)


class SearchOps(Part):
    @operation("search_pages")
    def search_pages(
        self, call: Call, query: str = "", scopes: Any = (), mode: str = "auto", filters: dict[str, Any] | None = None,
        limit: int | None = None, cursor: str | None = None, context_id: str | None = None,
        all_revisions: bool = False,
    ) -> SearchResult:
        """Search head revisions (or all with all_revisions) in the scopes this session may search."""
        if mode not in SEARCH_MODES:
            raise Unsupported(f"Search mode {mode!r} is not supported; use {', '.join(SEARCH_MODES)}.")
        query = v.query(query)  # text within LIMITS["max_query_chars"], never a lone surrogate
        self._require_somewhere("search")
        named = self._named_scopes(call, scopes, "search")
        size = clamp(limit, LIMITS["default_hits"], LIMITS["max_hits"])
        q = self.page_query(named, filters, context_id, bool(all_revisions))
        flt = q.filters
        # Relative time in the question ("last week") is read against today: on another day it is another search.
        today = idmod.now()[:10]
        relative = mode == "auto" and not analysis.dates_named(query) and bool(analysis.question_dates(query, today))
        # A question about a time and nothing more ("what did I do last week?") lists what was said then, telling of
        # it first: there is no meaning to order it by.
        when_only = relative and analysis.asks_only_when(query, self._salt)
        # Re-ordered only where it can be: a cursor of it is then refused by a process without the extra.
        rerank = (mode == "auto" and bool(query.strip()) and not semantic.has_cjk(query) and not when_only
                  and self._semantic_on() and semantic.ready())
        asked = [query, sorted(named), mode, flt, context_id, bool(all_revisions)] + ([today] if relative else [])
        fingerprint = _fingerprint(asked + (["semantic"] if rerank else []))
        state = decode_cursor(cursor, "search")
        if state is not None and state.get("f") != fingerprint:
            if not rerank and state.get("f") == _fingerprint(asked + ["semantic"]):  # the same search, re-ordered
                why = (f"the channel cannot run here ({semantic.problem() or 'its model could not be loaded'})"
                       if self._semantic_on() else "the channel is off now")
                raise Invalid(f"This cursor pages a search the semantic channel re-ordered, and {why}; repeat the "
                              "search without a cursor.")
            raise Invalid("This cursor belongs to another search; repeat the search without a cursor.")
        offset = state.get("o") if state else 0
        used = state.get("m") if state else mode
        # A cursor is the client's to keep (and to edit): its offset a whole number, its mode the one asked for or
        # the one a search falls back to (exact: nothing ranked; temporal: no words).
        if (isinstance(offset, bool) or not isinstance(offset, int) or not 0 <= offset <= MAX_OFFSET
                or used not in (mode, "exact", "temporal")):
            raise Invalid("This cursor does not belong to this listing; start again without a cursor.")

        if used == "auto" and not query.strip():
            used = "temporal"
        if used in ("auto", "text"):
            units = analysis.ranked_units(query, self._salt)
            label = used
            need = offset + size + 1
            fresh = max(POOL, 3 * need)
            if used == "auto" and rerank:  # its first RERANK_DEPTH candidates, from as many scored whatever the limit
                need = max(need, semantic.RERANK_DEPTH)
                fresh = max(POOL, semantic.RERANK_POOL)  # the same re-ordered 50 for any limit
                fresh = fresh if need <= fresh else 3 * need  # (a deep page: a tier as plain auto would add)
            # One search's pages neither repeat nor lose a hit: more candidates may order the first ones differently,
            # so the hits come in tiers. The first page's candidates (its tier) give the first rows; a page that
            # reaches past them adds a tier of more candidates, whose rows follow those already given. The cursor
            # keeps the tiers, so every page ranks the same ones (all at most 1.5x what this page would score anyway).
            tiers, replaced = _tiers(state.get("p") if state else None, need, fresh)
            rows, given = [], set()
            # text scores every candidate it finds (up to ranking.TEXT_CAP) whatever the pool: each tier's rows are
            # the first rows of one ranking, so its last tier alone gives them all, ranked once.
            for tier in (tiers[-1:] if used == "text" else tiers):
                whole: list[bool] = []
                for row in self.ranked(used, query, q, tier, tier, whole):
                    if row[0] not in given:
                        given.add(row[0])
                        rows.append(row)
                if replaced and used == "auto" and tier == tiers[-1] and not all(whole):
                    # The tiers it stands for (a cursor of an earlier pcp) may have given other hits than this one.
                    raise Invalid("This cursor was made by an earlier version of pcp, whose search scored other "
                                  "candidates; repeat the search without a cursor.")
                if len(rows) >= need or all(whole):  # (a tier that scored every candidate: the next adds nothing)
                    break
            reordered = 0  # how many of the first rows the semantic channel re-ordered (they say auto+semantic)
            if used == "auto" and rerank:  # its first candidates: all of the first tier (RERANK_DEPTH <= fresh)
                rows, label, reordered = self._reranked(query, rows, q)
            rows = rows[offset:offset + size + 1]
            if rows or offset or used == "text" or when_only:  # (nothing said then: not a substring to look for)
                return self._page_of_hits(rows, size, offset, used, query, fingerprint, call, units, label, tiers,
                                          max(0, reordered - offset))
            used = "exact"  # nothing ranked (a fragment of a word, a symbol): look for it as a substring
        rows = self.matching(used, query, q, size + 1, offset, call)
        return self._page_of_hits(rows, size, offset, used, query, fingerprint, call)

    @operation("semantic_setting", write=True)
    def set_semantic(self, call: Call, on: bool) -> SemanticStatus:
        """Turn the semantic channel of `auto` on or off for this store (owner only; on needs pcp[semantic])."""
        if not self.session.is_owner:
            raise Forbidden("Only the owner may turn the semantic channel on or off.")
        if not isinstance(on, bool):
            raise Invalid("on must be true or false.")
        problem = semantic.problem() if on else None
        if problem is not None:
            raise Unsupported(f"The semantic channel cannot run here: {problem}.")
        self._db.execute_sql("INSERT INTO meta (key, value) VALUES ('semantic', ?) "
                             "ON CONFLICT(key) DO UPDATE SET value = excluded.value", ["on" if on else "off"])
        return self.semantic_status()

    def semantic_status(self) -> SemanticStatus:
        """{"on": the owner turned it on, "available": the extra is installed here, "model": its model id,
        "problem": why it cannot run here, or None}."""
        problem = semantic.problem()
        return {"on": self._semantic_on(), "available": problem is None, "model": semantic.MODEL_ID, "problem": problem}

    def _semantic_on(self) -> bool:
        """The owner turned the semantic channel on for this store (`pcp semantic on`)."""
        row = self._db.execute_sql("SELECT value FROM meta WHERE key = 'semantic'").fetchone()
        return bool(row) and row[0] == "on"

    def _reranked(self, query: str, rows: list[tuple[int, float]],
                  q: PageQuery) -> tuple[list[tuple[int, float]], str, int]:
        """auto's first RERANK_DEPTH rows re-ordered by the semantic channel, the rest after them (each scored at
        or below 0, under every re-ordered one), the label of the re-ordered ones and how many they are (the rest
        keep auto's order and say `auto`); the search asked `semantic.ready()` first."""
        head, tail = rows[:semantic.RERANK_DEPTH], rows[semantic.RERANK_DEPTH:]
        if len(head) < 2:
            return rows, "auto", 0
        marks = ",".join("?" * len(head))
        cut = semantic.MAX_TEXT_CHARS  # a vector is of a text's beginning: no more is read
        texts = {pk: content if content is not None else title for pk, content, title in self._db.execute_sql(
            f"SELECT id, substr(content, 1, {cut}), substr(title, 1, {cut}) FROM revision WHERE id IN ({marks})",
            [pk for pk, _ in head]).fetchall()}
        fused = semantic.rerank(query, head, texts, self._asked(head, q))
        lo, hi = min(s for _, s in head), max(s for _, s in head)
        span = (hi - lo) or 1.0
        return fused + [(pk, (s - lo) / span) for pk, s in tail], "auto+semantic", len(head)

    def _asked(self, head: list[tuple[int, float]], q: PageQuery) -> dict[int, list[str]]:
        """candidate revision pk -> the texts (their beginnings) of the messages it `responds_to` that ask something
        ("?"): its question, whose meaning an answer shares. Only messages this search may see count (the search's
        own WHERE clause, in the candidate's scope), so a hidden, suppressed or erased question changes nothing; and
        only the first semantic.ASKED_PER_ANSWER of those (the first linked), so a page made to respond to thousands
        costs no more to embed, and no more to look up: each candidate's links are read in the order they were made
        (the relation index's), and the reading stops at the first ones that pass; those that ask lend."""
        cut = semantic.MAX_TEXT_CHARS
        text = f"substr(COALESCE(r.content, r.title), 1, {cut})"
        marks = ",".join("?" * len(head))
        pages = self._db.execute_sql(
            f"SELECT c.id, cp.id, cp.scope_id FROM revision c CROSS JOIN page cp ON cp.id = c.page_id "
            f"WHERE c.id IN ({marks}) ORDER BY c.id", [pk for pk, _ in head]).fetchall()
        sql = (f"SELECT {text} FROM relation rel CROSS JOIN page p ON p.id = rel.to_page_id "
               "CROSS JOIN revision r ON r.id = p.head CROSS JOIN scope s ON s.id = p.scope_id "
               "WHERE rel.from_page_id = ? AND rel.relation_type = 'responds_to' AND rel.retracted = 0 "
               f"AND p.scope_id = ? AND {q.where} ORDER BY rel.id LIMIT {semantic.ASKED_PER_ANSWER}")
        asked: dict[int, list[str]] = {}
        for pk, page, scope in pages:
            texts = [t for (t,) in self._db.execute_sql(sql, [page, scope, *q.params]).fetchall()
                     if t and ("?" in t or "\uff1f" in t)]
            if texts:
                asked[pk] = texts
        return asked

    def page_query(self, named: list[str], filters: dict[str, Any] | None, context_id: str | None = None,
                   all_revisions: bool = False) -> PageQuery:
        """The checked filters and the WHERE clause they make for this session (refused: Unsupported, Invalid)."""
        flt = self.checked_filters(filters, all_revisions)
        where, params = self._where(list(named), flt, context_id, all_revisions)
        return PageQuery(flt, tuple(named), where, tuple(params), all_revisions, context_id)

    def ranked(self, mode: str, query: str, q: PageQuery, need: int, pool: int | None = None,
               whole: list[bool] | None = None) -> list[tuple[int, float]]:
        """The best `need` (revision pk, score) rows of `auto` (any term) or `text` (every term) within `q`; pages
        suppressed in its context lift no score. `pool`: how many candidates `auto` scores (default: its own rule);
        `whole` (a list) gets True appended when that pool held every candidate a larger one would score."""
        return self._ranked(mode, query, list(q.named), q.where, list(q.params), need, self._suppressed(q.context_id),
                            pool, whole)

    def matching(self, mode: str, query: str, q: PageQuery, limit: int, offset: int,
                 call: Call) -> list[tuple[int, float]]:
        """(revision pk, score) rows of mode exact, temporal or graph within `q`, newest first."""
        return self._run(mode, query, q.where, list(q.params), limit, offset, q.filters, q.all_revisions, call)

    def _suppressed(self, context_id: str | None) -> tuple[int, ...]:
        """The page pks suppressed in this session's context now (their words must lift no score)."""
        if not context_id:
            return ()
        return tuple(r[0] for r in self._db.execute_sql(
            "SELECT DISTINCT page_id FROM suppression WHERE context_id = ? AND (expires_at IS NULL OR expires_at > ?) "
            "ORDER BY page_id", [self._context_key(context_id), idmod.now()]).fetchall())

    def _ranked(self, mode: str, query: str, named: list[str], where: str, params: list[Any],
                need: int, suppressed: tuple[int, ...] = (), pool: int | None = None,
                whole: list[bool] | None = None) -> list[tuple[int, float]]:
        self.require_current_index()
        # In `auto` a date says when: its day and year are not words to look for.
        units = analysis.ranked_units(analysis.without_dates(query) if mode == "auto" else query, self._salt)
        if not units and mode == "auto":  # only dates: their words (a month's name), not their day and year numbers
            units = analysis.ranked_units(analysis.date_words(query), self._salt)
        units = units or analysis.ranked_units(query, self._salt)  # (a query of numbers alone: as it is)
        dates = analysis.dates_named(query) if mode == "auto" else []
        if mode == "auto" and not dates:  # "last week", "yesterday", "today": read against today
            dates = analysis.question_dates(query, idmod.now())
            if dates and analysis.asks_only_when(query, self._salt):
                units = []  # "what did I do last week?": what was said then, not the words "do", "last", "week"
        if mode == "auto":
            units = units + analysis.alternatives(units, self._salt)
        expr = analysis.text_match(query, self._salt) if mode == "text" else None
        if mode == "text" and expr is None:
            return []
        ranker = Ranker(self._db, self._salt, self._rank_scope(named, where, params, suppressed))
        ranker.when = mode == "auto" and analysis.asks_when(query)
        ranker.how_many = mode == "auto" and analysis.asks_number(query)
        rows = ranker.rank(units, need, text_expr=expr, dates=dates, scored=pool)
        if whole is not None:
            whole.append(ranker.whole)
        return rows

    def require_current_index(self) -> None:
        """Refuse (Conflict) a ranked or word match while the full-text index is being upgraded."""
        progress = index.upgrade_progress(self._db.cursor())
        if progress is not None:
            done, total = progress
            raise Conflict(f"Index upgrade in progress ({done:,} of {total:,} revisions); run pcp once to finish it, "
                           "or search with mode exact meanwhile.")

    def _rank_scope(self, named: list[str], where: str, params: list[Any],
                    suppressed: tuple[int, ...] = ()) -> RankScope:
        """The scopes whose statistics this session's scores may use: those it may search (and named ones)."""
        scope_sql, scope_params = self._scope_filter("search", "s.namespace")
        if named:
            scope_sql = ("" if scope_sql == "1" else scope_sql + " AND ") + "s.namespace IN (" + ",".join("?" * len(named)) + ")"
            scope_params = [*scope_params, *named]
        tokens = None
        if scope_sql != "1":
            pks = [r[0] for r in self._db.execute_sql(
                f"SELECT s.id FROM scope s WHERE {scope_sql} LIMIT {MAX_SCOPE_TOKENS + 1}", scope_params).fetchall()]
            # No scope at all (a grant naming scopes that do not exist yet): the SQL test alone finds nothing.
            tokens = sorted(pks) if 0 < len(pks) <= MAX_SCOPE_TOKENS else None
            if tokens is not None and len(tokens) == self._db.execute_sql("SELECT COUNT(*) FROM scope").fetchone()[0]:
                tokens = None  # every scope is visible: a filter inside FTS5 would only cost time (same hits)
        return RankScope(scope_sql, scope_params, where, params, tokens, suppressed)

    def _page_of_hits(self, rows: list[Any], size: int, offset: int, used: str, query: str, fingerprint: str, call: Call,
                      units: list[analysis.Unit] | None = None, label: str | None = None,
                      tiers: list[int] | None = None, labelled: int | None = None) -> SearchResult:
        """`labelled`: how many of the first rows `label` names (None: all); the rows after them say `used`
        (auto+semantic only for the rows the semantic channel re-ordered, not for auto's rows after them)."""
        more = len(rows) > size
        hits = self._hits(rows[:size], label or used, query, units)
        for hit in hits[labelled:] if labelled is not None else ():
            hit["matched_by"] = used
        call.counts["hits"] = len(hits)
        call.scopes.update(h["namespace"] for h in hits)
        state = {"k": "search", "o": offset + size, "m": used, "f": fingerprint, **({"p": tiers} if tiers else {})}
        next_cursor = encode_cursor(state) if more else None
        return {"hits": hits, "next_cursor": next_cursor}

    def checked_filters(self, filters: dict[str, Any] | None, all_revisions: bool = False) -> dict[str, Any]:
        """The filters checked and made canonical (refused: Unsupported, Invalid); checking them again is a no-op."""
        flt = dict(filters or {})
        unknown = set(flt) - FILTER_KEYS
        if unknown:
            raise Unsupported(f"Search filter {', '.join(sorted(unknown))} is not supported.")
        statuses = flt.get("lifecycle_status")
        if statuses is None or statuses == []:
            statuses = [s for s in STATUSES if s != "tombstoned"] if all_revisions else ["active"]
        if isinstance(statuses, str):
            statuses = [s.strip() for s in statuses.split(",") if s.strip()]
        bad = sorted(set(statuses) - set(STATUSES))
        if bad:
            raise Invalid(f"Unknown lifecycle status {', '.join(bad)}; use {', '.join(STATUSES)}.")
        flt["lifecycle_status"] = sorted(set(statuses))
        for key in ("relation_types", "media_types", "actor_types"):
            value = flt.get(key)
            if value is not None:
                if isinstance(value, str):
                    value = [value]
                if not isinstance(value, list) or not all(isinstance(x, str) for x in value):
                    raise Invalid(f"The {key} filter must be a list of strings.")
                flt[key] = sorted(set(value))
        for key in TIME_FILTERS:
            if flt.get(key) is not None:
                flt[key] = idmod.parse_time(flt[key], key)
        return flt

    def _where(self, named: list[str], flt: dict[str, Any], context_id: str | None, all_revisions: bool) -> tuple[str, list[Any]]:
        """The WHERE clause every mode shares: grants, named scopes, status, filters, suppressions."""
        search_sql, params = self._scope_filter("search")
        parts = [search_sql]
        if named:
            parts.append("s.namespace IN (" + ",".join("?" * len(named)) + ")")
            params += named
        # The same scope test on the revision's own scope_id, so a match outside the scopes is
        # dropped before its page is even looked up (authorization stays inside the query).
        pre_sql, pre_params = self._scope_filter("search", "x.namespace")
        if named:
            pre_sql += " AND x.namespace IN (" + ",".join("?" * len(named)) + ")"
            pre_params = [*pre_params, *named]
        if pre_sql != "1":
            parts.insert(0, f"r.scope_id IN (SELECT x.id FROM scope x WHERE {pre_sql})")
            params = [*pre_params, *params]
        statuses = flt["lifecycle_status"]
        if not all_revisions or statuses == ["active"]:  # only a head can be active
            parts.append("r.id = p.head")
        if statuses == ["active"]:
            parts.append("p.status = 'active' AND p.superseded = 0")
        else:
            parts.append(f"{STATUS_SQL} IN (" + ",".join("?" * len(statuses)) + ")")
            params += statuses
        if "tombstoned" in statuses:
            audit_sql, audit_params = self._scope_filter("audit")
            parts.append(f"(p.status != 'tombstoned' OR {audit_sql})")
            params += audit_params
        else:
            parts.append("p.status != 'tombstoned'")
        if flt.get("media_types"):
            parts.append("r.media_type IN (" + ",".join("?" * len(flt["media_types"])) + ")")
            params += flt["media_types"]
        if flt.get("actor_types"):
            parts.append("r.actor_type IN (" + ",".join("?" * len(flt["actor_types"])) + ")")
            params += flt["actor_types"]
        if flt.get("created_after"):
            parts.append("r.created_at >= ?")
            params.append(flt["created_after"])
        if flt.get("created_before"):
            parts.append("r.created_at < ?")
            params.append(flt["created_before"])
        # When it happened: the source's time when known, else when it was stored (the hit's `date`).
        if flt.get("observed_after"):
            parts.append("COALESCE(r.observed_at, r.created_at) >= ?")
            params.append(flt["observed_after"])
        if flt.get("observed_before"):
            parts.append("COALESCE(r.observed_at, r.created_at) < ?")
            params.append(flt["observed_before"])
        if flt.get("relation_types"):
            # Only a relation whose other end this session may read counts (relations never grant access).
            marks = ",".join("?" * len(flt["relation_types"]))
            read_sql, read_params = self._scope_filter("read", "xs.namespace")
            far_audit_sql, far_audit_params = self._scope_filter("audit", "xs.namespace")
            # Nor one whose other end is suppressed in this context: there it is as if it were not.
            hidden_sql = ("" if not context_id else " AND NOT EXISTS (SELECT 1 FROM suppression xx WHERE "
                          "xx.page_id = xo.id AND xx.context_id = ? AND (xx.expires_at IS NULL OR xx.expires_at > ?))")
            parts.append(
                "EXISTS (SELECT 1 FROM relation x "
                "JOIN page xo ON xo.id = (CASE WHEN x.from_page_id = p.id THEN x.to_page_id ELSE x.from_page_id END) "
                f"JOIN scope xs ON xs.id = xo.scope_id WHERE x.retracted = 0 AND x.relation_type IN ({marks}) "
                f"AND (x.from_page_id = p.id OR x.to_page_id = p.id) AND {read_sql} "
                f"AND (xo.status != 'tombstoned' OR {far_audit_sql}){hidden_sql})"
            )
            params += [*flt["relation_types"], *read_params, *far_audit_params]
            if context_id:
                params += [self._context_key(context_id), idmod.now()]
        if context_id:
            parts.append(
                "NOT EXISTS (SELECT 1 FROM suppression x WHERE x.page_id = p.id AND x.context_id = ? "
                "AND (x.expires_at IS NULL OR x.expires_at > ?))"
            )
            params += [self._context_key(context_id), idmod.now()]
        return " AND ".join(parts), params

    def _run(self, mode: str, query: str, where: str, params: list[Any], limit: int, offset: int, flt: dict[str, Any],
             all_revisions: bool, call: Call) -> list[tuple[int, float]]:
        """(revision pk, score) rows of one mode, already filtered by access."""
        db = self._db
        joins = "JOIN page p ON p.id = r.page_id JOIN scope s ON s.id = p.scope_id"
        if mode in ("exact", "temporal"):
            order = "r.created_at DESC, r.id DESC" if all_revisions else "p.sort_time DESC, p.id DESC"
            extra, extra_params = "", []
            if query.strip():
                extra = " AND (instr(pcp_fold(r.content), pcp_fold(?)) > 0 OR instr(pcp_fold(r.title), pcp_fold(?)) > 0)"
                extra_params = [query.strip(), query.strip()]
            base = "FROM revision r " + joins if all_revisions else "FROM page p JOIN revision r ON r.id = p.head JOIN scope s ON s.id = p.scope_id"
            sql = f"SELECT r.id, 0.0 {base} WHERE {where}{extra} ORDER BY {order} LIMIT ? OFFSET ?"
            rows = db.execute_sql(sql, [*params, *extra_params, limit, offset]).fetchall()
            return [(r[0], 1.0 if mode == "exact" else 0.0) for r in rows]
        return self._graph(query, where, params, limit, offset, flt, call)

    def _graph(self, query: str, where: str, params: list[Any], limit: int, offset: int, flt: dict[str, Any], call: Call) -> list[Any]:
        """Neighbours of a page or revision over live relations and provenance, in either direction."""
        ident = query.strip()
        page = self._page_row(ident, call, "search")  # not_found for missing or hidden
        types = flt.get("relation_types") or []
        type_sql = (" AND relation_type IN (" + ",".join("?" * len(types)) + ")") if types else ""
        neighbours = (
            f"SELECT to_page_id AS n FROM relation WHERE retracted = 0 AND from_page_id = ?{type_sql} "
            f"UNION SELECT from_page_id FROM relation WHERE retracted = 0 AND to_page_id = ?{type_sql} "
        )
        n_params: list[Any] = [page.id, *types, page.id, *types]
        if not types:
            neighbours += (
                "UNION SELECT input_page FROM provenance_input WHERE page_id = ? AND input_page IS NOT NULL "
                "UNION SELECT page_id FROM provenance_input WHERE input_page = ?"
            )
            n_params += [page.id, page.id]
        sql = (
            "SELECT r.id, 1.0 FROM page p JOIN revision r ON r.page_id = p.id JOIN scope s ON s.id = p.scope_id "
            f"WHERE p.id IN ({neighbours}) AND p.id != ? AND {where} ORDER BY p.sort_time DESC, r.id DESC LIMIT ? OFFSET ?"
        )
        return self._db.execute_sql(sql, [*n_params, page.id, *params, limit, offset]).fetchall()

    def _hits(self, rows: list[Any], matched_by: str, query: str, units: list[analysis.Unit] | None = None) -> list[Hit]:
        if not rows:
            return []
        marks = ",".join("?" * len(rows))
        # Plain SQL: building model objects for a page of hits costs more than the search itself.
        found = {
            r[0]: r
            for r in self._db.execute_sql(
                "SELECT r.id, r.revision_id, r.title, r.content, r.created_at, r.observed_at, p.page_id, p.head, "
                "p.status, p.superseded, s.namespace, p.id FROM revision r JOIN page p ON p.id = r.page_id "
                f"JOIN scope s ON s.id = r.scope_id WHERE r.id IN ({marks})",
                [row[0] for row in rows],
            ).fetchall()
        }
        conversation = self._conversations_of(sorted({r[11] for r in found.values()}))
        hits: list[Hit] = []
        for rev_pk, score in rows:
            spans: list[list[int]]
            _, revision_id, title, content, created_at, observed_at, page_id, head, status, superseded, ns, page_pk = (
                found[rev_pk])
            body, projection = (content, "payload") if content is not None else (title, "manifest")
            if units is not None:
                text, start, end, spans = analysis.passage(body, units, self._salt)
            else:
                text, start, end = snippet(body, query if matched_by in ("exact", "temporal") else "")
                spans = analysis.substring_marks(text, query) if matched_by in ("exact", "temporal") else []
            hits.append({
                "page_id": page_id,
                "revision_id": revision_id,
                "namespace": ns,
                "owner_id": self.owner_id,
                "lifecycle_status": effective_status(status, superseded) if rev_pk == head else "superseded",
                "title": shown_title(title),
                "date": observed_at or created_at,
                "snippet": text,
                "highlights": spans,
                "projection": projection,
                "range": [start, end],
                "matched_by": matched_by,
                "score": round(float(score), 6),
                "projections": [p for p in PROJECTIONS if p != "payload" or content is not None],
                "created_at": created_at,
                "observed_at": observed_at,
                "conversation": conversation.get(page_pk),
            })
        return hits

    def _conversations_of(self, page_pks: list[int]) -> dict[int, str]:
        """page pk -> the page id of the conversation that `contains` it (a live relation, in the page's own
        scope, so a session that may search the hit may search it; a tombstoned conversation is not named)."""
        if not page_pks:
            return {}
        marks = ",".join("?" * len(page_pks))
        return {pk: conv for pk, conv in self._db.execute_sql(
            "SELECT p.id, MIN(cp.page_id) FROM page p JOIN relation x ON x.to_page_id = p.id "
            "AND x.relation_type = 'contains' AND x.retracted = 0 JOIN page cp ON cp.id = x.from_page_id "
            f"AND cp.scope_id = p.scope_id AND cp.status != 'tombstoned' WHERE p.id IN ({marks}) GROUP BY p.id",
            page_pks).fetchall()}
