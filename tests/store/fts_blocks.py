"""Reading FTS5's shadow tables byte by byte (issue 28): the terms a segment leaf holds, decoded.

A leaf keeps each term once, prefix-compressed against the term before it (only a leaf's first
term is whole), so a substring scan of the blocks can miss a term; and `fts5vocab` skips rows a
`contentless_delete` table has tombstoned, so it cannot show what a delete left behind. This
module decodes the leaves themselves (the format of sqlite/ext/fts5/fts5_index.c):

- `%_data` row ids: segment id << 37 | doclist-index flag << 36 | height << 31 | page number;
  rows 1 (averages) and 10 (structure) are special, segment ids from 65,536 up hold tombstones.
- a leaf: u16 offset of its first rowid, u16 offset of its footer (`szLeaf`), then doclists and
  terms; the footer is varints, the offset of each term on the leaf (the first absolute, then
  deltas). At a term: varint length (the leaf's first term) or varint shared-prefix length and
  varint suffix length (the others), then the suffix bytes.
- every term of the main index starts with the byte '0'.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable

from pcpstore_helpers import connect

SEGMENT_SHIFT = 37
MAX_SEGMENT = 65535


def varint(buf: bytes, i: int) -> tuple[int, int]:
    """SQLite's varint at buf[i]: (value, offset after it)."""
    value = 0
    for n in range(8):
        b = buf[i + n]
        value = (value << 7) | (b & 0x7F)
        if not b & 0x80:
            return value, i + n + 1
    return (value << 8) | buf[i + 8], i + 9


def is_leaf(rowid: int) -> bool:
    segid, dlidx, height, pgno = rowid >> SEGMENT_SHIFT, (rowid >> 36) & 1, (rowid >> 31) & 31, rowid & 0x7FFFFFFF
    return 1 <= segid <= MAX_SEGMENT and dlidx == 0 and height == 0 and pgno >= 1


def leaf_terms(block: bytes) -> list[bytes]:
    """Every term that starts on this leaf, whole (with its index byte, '0' for the main index)."""
    if len(block) < 4:
        return []
    footer_at = int.from_bytes(block[2:4], "big")
    offsets, i, at = [], footer_at, 0
    while i < len(block):
        delta, i = varint(block, i)
        at += delta
        offsets.append(at)
    terms: list[bytes] = []
    prev = b""
    for k, at in enumerate(offsets):
        if k == 0:
            shared = 0
            size, at = varint(block, at)
        else:
            shared, at = varint(block, at)
            size, at = varint(block, at)
        term = prev[:shared] + block[at:at + size]
        terms.append(term)
        prev = term
    return terms


def fts_tables(con: Any) -> list[str]:
    return [r[0] for r in con.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND sql LIKE 'CREATE VIRTUAL TABLE%USING fts5(%'")]


def _blob(value: Any) -> bytes:
    if value is None:
        return b""
    if isinstance(value, bytes):
        return value
    return str(value).encode("utf-8")


def shadow_residue(db: Path, terms: Iterable[str]) -> list[str]:
    """Where any of these index terms is still kept in the FTS5 shadow tables of the store at `db`:
    a decoded leaf term, an `_idx` separator, or the term's bytes anywhere in a `_data`, `_idx`,
    `_docsize`, `_config` (or `_content`) row. A fresh read-only connection: it sees the WAL too."""
    wanted = {t.encode("utf-8") for t in terms}
    keys = {b"0" + t for t in wanted}
    con = connect(db)
    found: list[str] = []
    try:
        for table in fts_tables(con):
            shadows = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE name LIKE ?", (table + "\\_%",))
                       if r[0] in {f"{table}_{s}" for s in ("data", "idx", "docsize", "config", "content")}}
            for rowid, block in con.execute(f"SELECT id, block FROM {table}_data"):
                block = _blob(block)
                if is_leaf(rowid):
                    found += [f"{table}_data leaf {rowid}: {k!r}" for k in set(leaf_terms(block)) & keys]
                found += [f"{table}_data row {rowid}: bytes of {t!r}" for t in wanted if t in block]
            for segid, term, pgno in con.execute(f"SELECT segid, term, pgno FROM {table}_idx"):
                term = _blob(term)
                found += [f"{table}_idx ({segid}, {pgno}): {t!r}" for t in wanted if t in term]
            for shadow in sorted(shadows - {f"{table}_data", f"{table}_idx"}):
                for row in con.execute(f"SELECT * FROM {shadow}"):
                    raw = b"\0".join(_blob(v) for v in row)
                    found += [f"{shadow}: bytes of {t!r}" for t in wanted if t in raw]
    finally:
        con.close()
    return sorted(set(found))


def postings_of(db: Path, rowids: Iterable[int], table: str = "revision_terms") -> int:
    """How many postings of these rows the index still answers with (fts5vocab; blind to tombstoned rows)."""
    ids = sorted(set(rowids))
    con = connect(db)
    try:
        con.execute(f"CREATE VIRTUAL TABLE temp.inst USING fts5vocab(main, {table}, instance)")
        n = 0
        for i in range(0, len(ids), 500):
            part = ids[i:i + 500]
            n += con.execute(f"SELECT COUNT(*) FROM temp.inst WHERE doc IN ({','.join('?' * len(part))})",
                             part).fetchone()[0]
        return int(n)
    finally:
        con.close()


def live_stats(db: Path, terms: Iterable[str]) -> int:
    """term_stat rows of these terms (in any scope)."""
    wanted = sorted(set(terms))
    con = connect(db)
    try:
        return int(con.execute(f"SELECT COUNT(*) FROM term_stat WHERE term IN ({','.join('?' * len(wanted))})",
                               wanted).fetchone()[0])
    finally:
        con.close()


def vocabulary(db: Path, table: str = "revision_terms") -> set[str]:
    """Every term of the index (fts5vocab row view)."""
    con = connect(db)
    try:
        con.execute(f"CREATE VIRTUAL TABLE temp.v USING fts5vocab(main, {table}, row)")
        return {r[0] for r in con.execute("SELECT term FROM temp.v")}
    finally:
        con.close()


def tails(terms: Iterable[str], vocab: Iterable[str], least: int = 6) -> dict[str, bytes]:
    """For each term, the bytes a leaf holding it must hold whatever term comes before it there: what
    follows the longest prefix it shares with any other term of `vocab` (only terms whose tail is at
    least `least` bytes, so that a match in a file is not chance)."""
    others = sorted({v.encode("utf-8") for v in vocab})
    out: dict[str, bytes] = {}
    for t in terms:
        raw = t.encode("utf-8")
        shared = 0
        for v in others:
            if v == raw:
                continue
            n = 0
            while n < min(len(v), len(raw)) and v[n] == raw[n]:
                n += 1
            shared = max(shared, n)
        if len(raw) - shared >= least:
            out[t] = raw[shared:]
    return out


def page_owners(db: Path) -> tuple[int, dict[int, str]]:
    """(page size, page number -> the table or index whose b-tree holds it) of a database file
    (the standard library's SQLite has the dbstat table; the WAL is read in too, if any)."""
    import sqlite3 as std

    con = std.connect(f"file:{db}?mode=ro", uri=True)
    try:
        size = con.execute("PRAGMA page_size").fetchone()[0]
        owners = {int(n): str(name) for name, n in con.execute("SELECT name, pageno FROM dbstat")}
    finally:
        con.close()
    return int(size), owners


def in_free_space(page: bytes, offset: int, first: bool = False) -> bool:
    """Whether `offset` in a b-tree page lies in its free space: the gap between the cell pointers and
    the cell content, or a freeblock (SQLite's file format, "B-tree pages"). Page 1 starts after the
    100-byte file header."""
    hdr = 100 if first else 0
    if len(page) < hdr + 8 or page[hdr] not in (2, 5, 10, 13):
        return False
    cells = int.from_bytes(page[hdr + 3:hdr + 5], "big")
    content = int.from_bytes(page[hdr + 5:hdr + 7], "big") or 65536
    pointers_end = hdr + (8 if page[hdr] in (10, 13) else 12) + 2 * cells
    if pointers_end <= offset < content:
        return True
    block = int.from_bytes(page[hdr + 1:hdr + 3], "big")
    seen = 0
    while block and seen < 10_000:
        size = int.from_bytes(page[block + 2:block + 4], "big")
        if block <= offset < block + size:
            return True
        block = int.from_bytes(page[block:block + 2], "big")
        seen += 1
    return False


def file_residue(files: Iterable[Path], tails_by_term: dict[str, bytes]) -> list[tuple[str, str, str]]:
    """(file, term, where) for every erased term whose tail the database file or the WAL still holds,
    in any page. A database hit names the b-tree its page belongs to (or "a free page"), and "free
    space" when it lies in the page's unused space rather than in a cell (a stale copy SQLite's
    rebalancing left behind: secure_delete zeroes freed cells, not the bytes a moved cell left)."""
    found = []
    for f in files:
        data = f.read_bytes()
        owners: tuple[int, dict[int, str]] | None = None
        for term, tail in sorted(tails_by_term.items()):
            at = data.find(tail)
            while at >= 0:
                where = "the WAL"
                if f.suffix == ".db":
                    owners = owners or page_owners(f)
                    size = owners[0]
                    number = at // size + 1
                    where = owners[1].get(number, "a free page")
                    if number in owners[1] and in_free_space(data[(number - 1) * size:number * size], at % size,
                                                             number == 1):
                        where += " free space"
                found.append((f.name, term, where))
                at = data.find(tail, at + 1)
    return found


__all__ = ["file_residue", "in_free_space", "live_stats", "page_owners", "fts_tables", "leaf_terms", "postings_of", "shadow_residue", "tails", "vocabulary"]
