"""The full-text index and its per-scope statistics, kept in step in the same transaction.

Every revision has one FTS5 row (its title, body and facet text as analysed by
`store.analysis`). Beside it, `term_stat` counts per scope how many revisions contain
each term (and each CJK bigram), and `scope_stat` how many revisions a scope has and how
many terms they hold. The ranking reads these for the scopes a session may search only,
so its scores cannot change when pages are added where the session cannot look.
Revisions of tombstoned pages are left out of the statistics (a session without `audit`
must not learn from them); tombstoning and untombstoning move a page's counts out and in.

Erasure leaves no term behind: the FTS5 table is contentless *without* `contentless_delete`,
and a revision leaves it through FTS5's `'delete'` command given exactly the values it was
indexed with (analysed again from the revision before its row goes). With `secure-delete`
set, FTS5 then cuts the revision's postings out of the segment leaves, and a term whose last
posting goes leaves with it (and its `_idx` entry when its leaf page empties). A contentless
`DELETE ... WHERE rowid` could only tombstone the rowid: the terms stayed in the blocks until
some merge rewrote them (issue 28). Merging the affected segments instead rewrites segments of
hundreds of megabytes at a million pages, inside the user's delete.

Long because: the FTS5 rows and the per-scope statistics are kept in step in one transaction, so their writers and
erasers sit together.
"""

from __future__ import annotations

import json
from collections import Counter
from itertools import repeat
from operator import itemgetter
from dataclasses import dataclass, field
from typing import AbstractSet, Any, Iterable, Mapping, Sequence

from .analysis import ANALYSER_VERSION, DateNamed, event_dates, index_terms, may_name_time, stat_terms
from .errors import Conflict

UPGRADE_HINT = "run pcp once to upgrade this store"

FTS_TABLE = "revision_terms"
# Indexes an upgrade replaces, dropped when it ends: schema 1's raw-text `revision_fts`, and the
# `contentless_delete=1` table of schemas 2-6 (renamed by the schema 7 migration).
LEGACY_FTS_TABLE = "revision_fts"
OLD_FTS_TABLE = "revision_terms_old"
OLD_FTS_TABLES = (LEGACY_FTS_TABLE, OLD_FTS_TABLE)
# The body comes first: FTS5 marks every posting outside column 0 with its column, so the
# column holding most terms costs least there. `scope` holds one token, `zs<scope pk>`, so a
# session that may search only a few scopes is filtered inside FTS5.
FTS_DDL = (
    f"CREATE VIRTUAL TABLE IF NOT EXISTS {FTS_TABLE} USING fts5("
    "body, title, meta, scope, content='', "
    "tokenize='unicode61 remove_diacritics 0')"
)
UPGRADE_KEY = "index_upgrade"  # meta: "<cursor> <until>" while old revisions are being re-indexed
# meta: the analyser version (analysis.ANALYSER_VERSION) that wrote the rows of FTS_TABLE. A row is
# deleted with the values it was indexed with, so a pcp whose analyser differs must re-index first.
ANALYSER_KEY = "index_analyser"
DATES_KEY = "index_dates"  # meta: "<cursor> <until>" while old revisions' event dates are being derived

STATS_DDL = (
    "CREATE TABLE IF NOT EXISTS term_stat (term TEXT NOT NULL, scope_id INTEGER NOT NULL, df INTEGER NOT NULL, "
    "PRIMARY KEY (term, scope_id)) WITHOUT ROWID",
    "CREATE TABLE IF NOT EXISTS scope_stat (scope_id INTEGER PRIMARY KEY, docs INTEGER NOT NULL, "
    "terms INTEGER NOT NULL)",
)


def facet_text(facets: dict[str, Any]) -> str:
    """The searchable text of facets other than the title (summary, keywords, anchors, symbols...).

    Keys are read in sorted order, the order the stored JSON has (core.dumps): a revision written with
    its facets in any order is indexed as one restored, synced or analysed again for its erasure is."""
    parts: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, str):
            parts.append(value)
        elif isinstance(value, list):
            for item in value:
                walk(item)
        elif isinstance(value, dict):
            for key in sorted(value):
                walk(value[key])

    for key in sorted(facets):
        if key != "title":
            walk(facets[key])
    return "\n".join(parts)


@dataclass(frozen=True, slots=True)
class Analysed:
    """A revision's three index columns as term lists, and the derived date tokens (not counted)."""

    title: list[str]
    body: list[str]
    meta: list[str]
    dates: tuple[str, ...] = ()
    # The body's distinct terms, when `analyse` made them (for the dates): the statistics start from them.
    distinct: dict[str, None] | None = field(default=None, compare=False, repr=False)

    @property
    def count(self) -> int:
        return len(self.title) + len(self.body) + len(self.meta)

    def keys(self) -> AbstractSet[str]:
        """The distinct keys the statistics count: the terms of all three columns and their CJK bigrams."""
        # A dict of the terms, not a set: built twice as fast for lists of this size (a bulk write counts every page).
        keys = self.distinct if self.distinct is not None else dict.fromkeys(self.body)
        if self.title or self.meta:
            keys = dict.fromkeys(self.title + self.meta) | keys
        if "".join(keys).isascii():  # no CJK bigrams: just the terms (the common case, one pass)
            return keys.keys()
        return stat_terms(self.title) | stat_terms(self.body) | stat_terms(self.meta)


def date_tokens(dates: Sequence[DateNamed]) -> tuple[str, ...]:
    """FTS tokens of event dates: `zdYYYYMMDD` for a day, `zmYYYYMM` for its month, `zyYYYY` for its year."""
    out: dict[str, None] = {}
    for y, m, d in dates:
        if y is None:
            continue
        if m is not None and d is not None:
            out[f"zd{y:04d}{m:02d}{d:02d}"] = None
        if m is not None:
            out[f"zm{y:04d}{m:02d}"] = None
        out[f"zy{y:04d}"] = None
    return tuple(out)


def derived_dates(content: str | None, when: str | None, terms: list[str] | None = None,
                  distinct: Mapping[str, None] | None = None) -> tuple[str, ...]:
    """The one derivation the write paths call: the date tokens of the days a text's relative time
    expressions name, read against `when` (the revision's observed_at, else its created_at). With the
    text's index terms (and, optionally, those terms as dict keys), text that cannot name a relative day
    is passed over without a scan."""
    if not content or not when:
        return ()
    if terms is not None and content.isascii() and not may_name_time(terms, distinct):
        return ()
    return date_tokens(event_dates(content, when))


def analyse(title: str, content: str | None, facets: dict[str, Any], salt: bytes, when: str | None = None) -> Analysed:
    """The index view of a revision. A title taken from the content's first line is not indexed
    twice (it would double those words' postings); a facet or source title is. With `when` (the
    revision's date) the days its relative time expressions name are derived too."""
    own_title = bool(facets.get("title")) or content is None
    body = index_terms(content or "", salt)
    distinct = dict.fromkeys(body)  # for the dates here, and the statistics later (Analysed.keys)
    return Analysed(
        index_terms(title, salt) if own_title and title else [],
        body,
        index_terms(facet_text(facets), salt) if facets else [],
        derived_dates(content, when, body, distinct) if when else (),
        distinct,
    )


_first = itemgetter(0)  # (a row's term)


@dataclass
class StatsDelta:
    """Changes to the statistics, gathered over many revisions and written at once."""

    df: dict[int, Counter[str]] = field(default_factory=dict)  # scope pk -> term -> change
    docs: Counter[int] = field(default_factory=Counter)
    terms: Counter[int] = field(default_factory=Counter)

    def add(self, scope_id: int, doc: Analysed, sign: int = 1) -> None:
        counts = self.df.get(scope_id)
        if counts is None:
            counts = self.df[scope_id] = Counter()
        if sign > 0:
            count_keys(counts, doc)
        else:
            counts.subtract(doc.keys())
        self.docs[scope_id] += sign
        self.terms[scope_id] += sign * doc.count

    def add_counted(self, scope_id: int, df: Counter[str], docs: int, terms: int) -> None:
        """Add revisions counted elsewhere (analyst.analyse_batch): their keys' counts, how many, their terms."""
        counts = self.df.get(scope_id)
        if counts is None:
            self.df[scope_id] = df  # taken over, not copied: it is the batch's own, used once
        else:
            counts.update(df)
        self.docs[scope_id] += docs
        self.terms[scope_id] += terms

    def write(self, cur: Any) -> None:
        ups: list[tuple[str, int, int]] = []
        downs: list[tuple[int, str, int]] = []
        for s, counts in self.df.items():
            if counts and min(counts.values()) > 0:  # only additions (new pages): the rows made at C speed
                ups.extend(zip(counts.keys(), repeat(s), counts.values()))
                continue
            ups.extend((t, s, n) for t, n in counts.items() if n > 0)
            downs.extend((n, t, s) for t, n in counts.items() if n < 0)
        if len(self.df) > 1:
            # In term order (stable: a term's scopes stay in order), as the (term, scope_id) key is: each B-tree page
            # is then visited once in a sweep, not once per scope (an import's group holds hundreds of scopes:
            # 1.8 -> 1.3 us a row, the sort included; the helper's counts come sorted, so it merges runs).
            ups.sort(key=_first)
        if ups:
            cur.executemany(
                "INSERT INTO term_stat (term, scope_id, df) VALUES (?,?,?) "
                "ON CONFLICT(term, scope_id) DO UPDATE SET df = df + excluded.df", ups)
        if downs:
            cur.executemany("UPDATE term_stat SET df = df + ? WHERE term = ? AND scope_id = ?", downs)
            cur.executemany("DELETE FROM term_stat WHERE term = ? AND scope_id = ? AND df <= 0",
                            [(t, s) for _, t, s in downs])
        rows = [(s, self.docs[s], self.terms[s]) for s in set(self.docs) | set(self.terms)]
        if rows:
            cur.executemany(
                "INSERT INTO scope_stat (scope_id, docs, terms) VALUES (?,?,?) ON CONFLICT(scope_id) DO UPDATE SET "
                "docs = docs + excluded.docs, terms = terms + excluded.terms", rows)
        self.df.clear()
        self.docs.clear()
        self.terms.clear()


def count_keys(counts: Counter[str], doc: Analysed) -> None:
    """Add one to the count of each statistics key of `doc`."""
    counts.update(doc.keys())  # a set view, not a mapping: counted in C


def fts_scope(scope_pk: int, dates: tuple[str, ...]) -> str:
    # The `scope` column also holds the derived date tokens: queries never match it with words, and
    # they leave with the row when it is deleted (erased with the revision).
    return f"zs{scope_pk} " + " ".join(dates) if dates else f"zs{scope_pk}"


def fts_row(rowid: int, scope_pk: int, doc: Analysed) -> tuple[int, str, str, str, str]:
    return (rowid, " ".join(doc.title), " ".join(doc.body), " ".join(doc.meta), fts_scope(scope_pk, doc.dates))


INSERT_FTS = f"INSERT INTO {FTS_TABLE}(rowid, title, body, meta, scope) VALUES (?,?,?,?,?)"
DELETE_FTS = (f"INSERT INTO {FTS_TABLE}({FTS_TABLE}, rowid, title, body, meta, scope) "
              "VALUES ('delete', ?,?,?,?,?)")


IndexRow = tuple[int, int, str, str | None, dict[str, Any], str | None]


def add_revisions(cur: Any, salt: bytes, rows: Iterable[IndexRow], counted: bool = True) -> None:
    """Index revisions given as (revision pk, scope pk, title, content, facets, date) and count them;
    the date (observed_at, else created_at) is what relative time in the content is read against."""
    add_analysed(cur, [(rev_pk, scope_pk, analyse(title, content, facets, salt, when), counted)
                       for rev_pk, scope_pk, title, content, facets, when in rows])


def add_analysed(cur: Any, rows: Iterable[tuple[int, int, Analysed, bool]], fts: list[tuple[Any, ...]] | None = None,
                 delta: StatsDelta | None = None) -> None:
    """Index revisions already analysed, as (revision pk, scope pk, terms, counted in the statistics)
    (the bulk path analyses outside the write lock); with `fts` rows and a `delta` made elsewhere
    (analyst.analyse_batch) written first."""
    delta = delta if delta is not None else StatsDelta()
    fts = fts if fts is not None else []
    for rev_pk, scope_pk, doc, counted in rows:
        fts.append(fts_row(rev_pk, scope_pk, doc))
        if counted:
            delta.add(scope_pk, doc)
    if fts:
        cur.executemany(INSERT_FTS, fts)
    delta.write(cur)


def _upgrade_state(cur: Any) -> tuple[int, int] | None:
    """(cursor, until) while revisions up to `until` are being re-indexed; None when the index is current."""
    row = cur.execute("SELECT value FROM meta WHERE key = ?", (UPGRADE_KEY,)).fetchone()
    if row is None:
        return None
    cursor, until = row[0].split()
    return int(cursor), int(until)


def _revision_docs(cur: Any, salt: bytes, rev_pks: Sequence[int],
                   every: bool = False) -> list[tuple[int, int, Analysed, bool]]:
    """(revision pk, scope pk, analysed text, counted) of stored revisions already in the current index
    (with `every`, of all of them)."""
    state = None if every else _upgrade_state(cur)
    dated = _dates_state(cur)
    out = []
    for part in chunks(list(rev_pks)):
        marks = ",".join("?" * len(part))
        for rev_pk, scope_pk, title, content, facets, status, when in cur.execute(
            "SELECT r.id, r.scope_id, r.title, r.content, r.facets, p.status, COALESCE(r.observed_at, r.created_at) "
            f"FROM revision r JOIN page p ON p.id = r.page_id WHERE r.id IN ({marks})", part,
        ).fetchall():
            if state is not None and state[0] < rev_pk <= state[1]:
                continue  # not re-indexed yet: it has no statistics to move
            if dated is not None and dated[0] < rev_pk <= dated[1]:
                when = None  # its row was written before event dates were derived (schema 7): it holds none
            doc = analyse(title or "", content, json.loads(facets or "{}"), salt, when)
            out.append((rev_pk, scope_pk, doc, status != "tombstoned"))
    return out


def _has_table(cur: Any, name: str) -> bool:
    return cur.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (name,)).fetchone() is not None


def _check_analyser(cur: Any) -> None:
    """Refuse to take rows out with values from another analyser than the one that put them in: FTS5
    would leave the postings of every term that differs, and count wrongly ever after."""
    row = cur.execute("SELECT value FROM meta WHERE key = ?", (ANALYSER_KEY,)).fetchone()
    if row is not None and row[0] != str(ANALYSER_VERSION):
        raise Conflict(f"This store's search index was built by another version of pcp (analyser {row[0]}); "
                       f"{UPGRADE_HINT}.")


def remove_revisions(cur: Any, salt: bytes, rev_pks: Sequence[int], count: bool = True) -> None:
    """Take revisions out of the index and the statistics (before their rows are deleted).

    Each row leaves the FTS5 table by the `'delete'` command with the values it was indexed
    with, so secure-delete removes its postings (and terms left with none) from the blocks."""
    _check_analyser(cur)
    docs = _revision_docs(cur, salt, rev_pks)
    if count:
        delta = StatsDelta()
        for _, scope_pk, doc, counted in docs:
            if counted:
                delta.add(scope_pk, doc, -1)
        delta.write(cur)
    if docs:
        cur.executemany(DELETE_FTS, [fts_row(rev_pk, scope_pk, doc) for rev_pk, scope_pk, doc, _ in docs])
        gone: set[str] = set()
        for _, _, doc, _ in docs:
            gone.update(doc.title, doc.body, doc.meta)
        # Only a term no page keeps can leave a key of its own behind: one the statistics count nowhere
        # now (nowhere but the scopes going, when a whole scope goes and its statistics after it).
        scrub_separators(cur, _vanished(cur, gone, [] if count else sorted({d[1] for d in docs})))
    for table in OLD_FTS_TABLES:
        if _has_table(cur, table):
            _remove_old(cur, salt, table, rev_pks)


# The `_idx` keys of the leaves of every segment that may begin with one of the given terms (`?`: a JSON
# list of the terms' index keys, hex): a segment's greatest key not after the term, when it is a
# prefix of it. (Segments are few; they are found by skipping through the key's first column.)
_SEPARATORS = f"""
WITH RECURSIVE seg(id) AS (
    SELECT MIN(segid) FROM {FTS_TABLE}_idx
    UNION ALL SELECT (SELECT MIN(segid) FROM {FTS_TABLE}_idx WHERE segid > seg.id) FROM seg WHERE seg.id IS NOT NULL),
gone(k) AS (SELECT unhex(value) FROM json_each(?)),
near(segid, term, k) AS MATERIALIZED (
    SELECT seg.id, (SELECT MAX(term) FROM {FTS_TABLE}_idx WHERE segid = seg.id AND term <= gone.k), gone.k
    FROM seg CROSS JOIN gone WHERE seg.id IS NOT NULL)
SELECT DISTINCT n.segid, n.term, i.pgno FROM near n CROSS JOIN {FTS_TABLE}_idx i
ON i.segid = n.segid AND i.term = n.term
WHERE length(n.term) > 1 AND substr(n.k, 1, length(n.term)) = n.term
"""


def _vanished(cur: Any, terms: set[str], going: list[int]) -> set[str]:
    """The terms that no counted revision outside the scopes `going` holds any more."""
    out: set[str] = set()
    outside = f" AND scope_id NOT IN ({','.join('?' * len(going))})" if going else ""
    ordered = sorted(terms)
    for i in range(0, len(ordered), 5000):
        out.update(r[0] for r in cur.execute(
            "SELECT value FROM json_each(?) WHERE NOT EXISTS "
            f"(SELECT 1 FROM term_stat WHERE term = value{outside})", (json.dumps(ordered[i:i + 5000]), *going)))
    return out


def _varint(buf: bytes, i: int) -> tuple[int, int]:
    """SQLite's varint at buf[i]: (value, offset after it)."""
    value = 0
    for n in range(8):
        b = buf[i + n]
        value = (value << 7) | (b & 0x7F)
        if not b & 0x80:
            return value, i + n + 1
    return (value << 8) | buf[i + 8], i + 9


def _first_term(leaf: bytes) -> bytes | None:
    """The first term that starts on an FTS5 leaf (stored whole there): the leaf's footer, from the
    offset in bytes 2-3, lists where its terms start, the first as an absolute offset."""
    if len(leaf) < 4:
        return None
    footer = int.from_bytes(leaf[2:4], "big")
    if footer >= len(leaf):
        return None
    at, _ = _varint(leaf, footer)
    size, at = _varint(leaf, at)
    return leaf[at:at + size] if size else None


def scrub_separators(cur: Any, terms: set[str]) -> None:
    """Take erased terms out of `_idx` too (inside the erasure's transaction).

    `_idx` keys each leaf of a segment by the shortest prefix of its first term that sorts after the
    leaf before it. Secure-delete removes a key only when its leaf is left with no term; when the
    erased term was the first of a leaf that keeps others, its key stays, and it can be all of the
    term. Such a key becomes the leaf's first term as it is now (a live term, and as good a key:
    after every term of the leaf before, not after any of its own)."""
    if not terms:
        return
    cur.execute(f"INSERT INTO {FTS_TABLE}({FTS_TABLE}) VALUES('flush')")  # the deletes reach the leaves first
    keys = json.dumps(sorted(("0" + t).encode("utf-8").hex() for t in terms))
    for segid, key, pgno in cur.execute(_SEPARATORS, (keys,)).fetchall():
        leaf = cur.execute(f"SELECT block FROM {FTS_TABLE}_data WHERE id = ?",
                           ((segid << 37) + (pgno >> 1),)).fetchone()
        first = _first_term(bytes(leaf[0])) if leaf and leaf[0] else None
        if first is not None and first != bytes(key) and first >= bytes(key):
            cur.execute(f"UPDATE {FTS_TABLE}_idx SET term = ? WHERE segid = ? AND term = ?", (first, segid, key))


def _remove_old(cur: Any, salt: bytes, table: str, rev_pks: Sequence[int]) -> None:
    """Take revisions out of an index an upgrade is replacing (it is dropped, whole, when the upgrade ends).

    Its `contentless_delete` rows can only be tombstoned: their terms stay in its blocks until the
    drop, which the app and `pcp` run to the end at start."""
    ddl = cur.execute("SELECT sql FROM sqlite_master WHERE name = ?", (table,)).fetchone()[0]
    if "contentless_delete=1" in ddl.replace(" ", ""):
        for part in chunks(list(rev_pks)):
            cur.execute(f"DELETE FROM {table} WHERE rowid IN ({','.join('?' * len(part))})", part)
        return
    # A contentless table without it (an analyser change): today's values take out every term that
    # analyses as it did; what differs goes with the table.
    rows = [fts_row(rev_pk, scope_pk, doc) for rev_pk, scope_pk, doc, _ in _revision_docs(cur, salt, rev_pks, every=True)]
    cur.executemany(DELETE_FTS.replace(FTS_TABLE, table), rows)


def set_counted(cur: Any, salt: bytes, page_pk: int, counted: bool) -> None:
    """Move a page's revisions into (untombstone) or out of (tombstone) the statistics."""
    rev_pks = [r[0] for r in cur.execute("SELECT id FROM revision WHERE page_id = ?", (page_pk,)).fetchall()]
    delta = StatsDelta()
    for _, scope_pk, doc, _ in _revision_docs(cur, salt, rev_pks):
        delta.add(scope_pk, doc, 1 if counted else -1)
    delta.write(cur)


def upgrade_progress(cur: Any) -> tuple[int, int] | None:
    """(revisions re-indexed, revisions to re-index) while an index upgrade is pending."""
    state = _upgrade_state(cur)
    if state is None:
        return None
    cursor, until = state
    done = cur.execute("SELECT COUNT(*) FROM revision WHERE id <= ?", (cursor,)).fetchone()[0]
    total = cur.execute("SELECT COUNT(*) FROM revision WHERE id <= ?", (until,)).fetchone()[0]
    return int(done), int(total)


def start_upgrade(cur: Any) -> None:
    """Create the current index beside the old one and mark every existing revision for re-indexing."""
    create(cur)
    until = cur.execute("SELECT COALESCE(MAX(id), 0) FROM revision").fetchone()[0]
    cur.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (UPGRADE_KEY, f"0 {until}"))


def needs_reindex(cur: Any) -> bool:
    """Whether the index's rows cannot be taken out exactly: a `contentless_delete` table (schemas 2-6,
    which only tombstones), or rows another analyser wrote."""
    row = cur.execute("SELECT sql FROM sqlite_master WHERE name = ?", (FTS_TABLE,)).fetchone()
    if row is None:
        return False
    if "contentless_delete=1" in row[0].replace(" ", ""):
        return True
    version = cur.execute("SELECT value FROM meta WHERE key = ?", (ANALYSER_KEY,)).fetchone()
    return version is not None and version[0] != str(ANALYSER_VERSION)


def start_reindex(cur: Any) -> None:
    """Re-index every revision into a fresh table, in the resumable batches of `upgrade_batch`; the table
    there now stays beside it (erasures still reach it) until the last batch drops it."""
    if _has_table(cur, OLD_FTS_TABLE):
        # An earlier re-index had not finished: the old table still holds what that one had not
        # reached, and every revision is re-indexed from its row again.
        cur.execute(f"DROP TABLE {FTS_TABLE}")
    else:
        cur.execute(f"ALTER TABLE {FTS_TABLE} RENAME TO {OLD_FTS_TABLE}")
    cur.execute("DELETE FROM meta WHERE key = ?", (DATES_KEY,))  # the batches derive the event dates too
    for table in ("term_stat", "scope_stat"):  # counted again, revision by revision, by the batches
        if _has_table(cur, table):
            cur.execute(f"DELETE FROM {table}")
    start_upgrade(cur)


def upgrade_batch(cur: Any, salt: bytes, size: int = 2000) -> bool:
    """Re-index the next `size` old revisions (one transaction, the caller's); True when none are left."""
    state = _upgrade_state(cur)
    if state is None:
        return True
    cursor, until = state
    rows = cur.execute(
        "SELECT r.id, r.scope_id, r.title, r.content, r.facets, p.status, COALESCE(r.observed_at, r.created_at) "
        "FROM revision r JOIN page p ON p.id = r.page_id WHERE r.id > ? AND r.id <= ? ORDER BY r.id LIMIT ?",
        (cursor, until, size),
    ).fetchall()
    delta = StatsDelta()
    fts = []
    for rev_pk, scope_pk, title, content, facets, status, when in rows:
        doc = analyse(title or "", content, json.loads(facets or "{}"), salt, when)
        fts.append(fts_row(rev_pk, scope_pk, doc))
        if status != "tombstoned":
            delta.add(scope_pk, doc)
    if fts:
        cur.executemany(INSERT_FTS, fts)
    delta.write(cur)
    if len(rows) < size:
        cur.execute("DELETE FROM meta WHERE key = ?", (UPGRADE_KEY,))
        for table in OLD_FTS_TABLES:
            if _has_table(cur, table):
                cur.execute(f"DROP TABLE {table}")
        return True
    cur.execute("UPDATE meta SET value = ? WHERE key = ?", (f"{rows[-1][0]} {until}", UPGRADE_KEY))
    return False


def _dates_state(cur: Any) -> tuple[int, int] | None:
    row = cur.execute("SELECT value FROM meta WHERE key = ?", (DATES_KEY,)).fetchone()
    if row is None:
        return None
    cursor, until = row[0].split()
    return int(cursor), int(until)


def start_dates(cur: Any) -> None:
    """Mark every existing revision for the derivation of its event dates (schema 8; search keeps working).
    A pending re-index derives them anyway. Until a revision's batch has run, its row holds no dates, and
    it leaves the index (an erasure) with the values it has (`_revision_docs`)."""
    if _upgrade_state(cur) is not None:
        return
    until = cur.execute("SELECT COALESCE(MAX(id), 0) FROM revision").fetchone()[0]
    cur.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (DATES_KEY, f"0 {until}"))


def pending_progress(cur: Any) -> tuple[int, int] | None:
    """(done, total) over both passes an older store may need (re-index, then event dates); None when none."""
    passes = [p for p in (upgrade_progress(cur), _dates_progress(cur)) if p is not None]
    if not passes:
        return None
    return sum(p[0] for p in passes), sum(p[1] for p in passes)


def _dates_progress(cur: Any) -> tuple[int, int] | None:
    state = _dates_state(cur)
    if state is None:
        return None
    cursor, until = state
    done = cur.execute("SELECT COUNT(*) FROM revision WHERE id <= ?", (min(cursor, until),)).fetchone()[0]
    total = cur.execute("SELECT COUNT(*) FROM revision WHERE id <= ?", (until,)).fetchone()[0]
    return int(done), int(total)


def pending_batch(cur: Any, salt: bytes, size: int = 2000) -> bool:
    """The next batch of whichever pass is pending (re-index first); True when nothing is left."""
    if _upgrade_state(cur) is not None:
        upgrade_batch(cur, salt, size)
        return _upgrade_state(cur) is None and _dates_state(cur) is None
    return dates_batch(cur, salt, size)


def dates_batch(cur: Any, salt: bytes, size: int = 2000) -> bool:
    """Derive the event dates of the next `size` older revisions (their FTS rows are written again with
    them; the statistics do not change); True when none are left."""
    state = _dates_state(cur)
    if state is None:
        return True
    cursor, until = state
    rows = cur.execute(
        "SELECT id, scope_id, title, content, facets, COALESCE(observed_at, created_at) FROM revision "
        "WHERE id > ? AND id <= ? ORDER BY id LIMIT ?", (cursor, until, size)).fetchall()
    old, fts = [], []
    for rev_pk, scope_pk, title, content, facets, when in rows:
        if derived_dates(content, when):
            doc = analyse(title or "", content, json.loads(facets or "{}"), salt, when)
            fts.append(fts_row(rev_pk, scope_pk, doc))
            # The row leaves with exactly the values schema 7 wrote (no dates), and comes back with them.
            old.append(fts_row(rev_pk, scope_pk, Analysed(doc.title, doc.body, doc.meta)))
    if fts:
        cur.executemany(DELETE_FTS, old)
        cur.executemany(INSERT_FTS, fts)
    if len(rows) < size:
        cur.execute("DELETE FROM meta WHERE key = ?", (DATES_KEY,))
        return True
    cur.execute("UPDATE meta SET value = ? WHERE key = ?", (f"{rows[-1][0]} {until}", DATES_KEY))
    return False


def create(cur: Any) -> None:
    """The index of a new store (and the fresh one of an upgrade)."""
    cur.execute(FTS_DDL)
    cur.execute(f"INSERT INTO {FTS_TABLE}({FTS_TABLE}, rank) VALUES('secure-delete', 1)")
    for ddl in STATS_DDL:
        cur.execute(ddl)
    cur.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (ANALYSER_KEY, str(ANALYSER_VERSION)))


def drop_scope(cur: Any, scope_pk: int) -> None:
    """Forget a deleted scope's statistics."""
    cur.execute("DELETE FROM term_stat WHERE scope_id = ?", (scope_pk,))
    cur.execute("DELETE FROM scope_stat WHERE scope_id = ?", (scope_pk,))


def chunks(items: list[Any], size: int = 500) -> Iterable[list[Any]]:
    """Slices of at most `size` items (SQLite bounds the number of parameters)."""
    for i in range(0, len(items), size):
        yield items[i:i + size]
