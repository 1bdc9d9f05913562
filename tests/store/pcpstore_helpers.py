"""Shared helpers for the store contract tests (shared/spec/pcp-core.md).

Imported as a top-level module (``tests/store`` has no ``__init__.py``; pytest's
default ``prepend`` import mode puts this folder on ``sys.path``). The worker
functions at the bottom are used by ``multiprocessing`` with the ``spawn`` start
method, which re-imports this module by name in the child.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import hashlib
import json
import os
import random
import re
import string
import time
from pathlib import Path
from collections import Counter
from typing import Any, Iterable

try:  # the store uses pysqlite3 when it is installed; read the file with the same SQLite
    import pysqlite3.dbapi2 as sqlite3  # type: ignore
except ImportError:  # pragma: no cover
    import sqlite3  # type: ignore

CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
ULID_RE = r"[0-9A-HJKMNP-TV-Z]{26}"
TS_RE = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$")
ANY_ID_RE = re.compile(r"(pg|rev|rel|evt|del|hnd|usr)_" + ULID_RE)

ENVELOPE_KEYS = {
    "page_id",
    "revision_id",
    "previous_revision_id",
    "owner_id",
    "namespace",
    "visibility",
    "lifecycle_status",
    "created_at",
    "observed_at",
    "valid_from",
    "valid_to",
    "created_by",
    "payload",
    "source_refs",
    "facets",
    "provenance",
    "content_digest",
}
HIT_KEYS = {
    "page_id",
    "revision_id",
    "namespace",
    "owner_id",
    "lifecycle_status",
    "title",
    "snippet",
    "projection",
    "range",
    "matched_by",
    "score",
    "projections",
    "created_at",
    "observed_at",
    "date",
    "highlights",
    "conversation",
}
RELATION_KEYS = {
    "relation_id",
    "relation_type",
    "from_page_id",
    "from_revision_id",
    "to_page_id",
    "to_revision_id",
    "created_at",
    "created_by",
}
HISTORY_KEYS = {"revision_id", "created_at", "created_by", "content_digest", "lifecycle_status"}
AUDIT_KEYS = {
    "event_id",
    "time",
    "principal_type",
    "principal_id",
    "operation",
    "scopes",
    "decision",
    "counts",
    "duration_ms",
    "error_code",
}
ERROR_CODES = {"not_found", "forbidden", "conflict", "invalid", "cycle", "limit", "unsupported"}
SEARCH_MODES = {"auto", "text", "exact", "temporal", "graph"}
PROJECTIONS = {"manifest", "payload", "source_spans", "relations", "facets", "history"}
RECOMMENDED_RELATION_TYPES = {
    "contains",
    "derived_from",
    "depends_on",
    "defines",
    "uses",
    "supports",
    "contradicts",
    "supersedes",
    "inspired_by",
    "related_to",
    "responds_to",
    "continues",
    "summarizes",
    "aggregates",
    "links_to",
}
READER = {"search", "read", "list_scopes"}


# --------------------------------------------------------------------------- ids / times


def is_id(value: Any, prefix: str) -> bool:
    return isinstance(value, str) and re.fullmatch(prefix + "_" + ULID_RE, value) is not None


def ulid_ms(id_: str) -> int:
    """Milliseconds since the epoch encoded in the first 10 characters of the ULID."""
    body = id_.split("_", 1)[1]
    n = 0
    for ch in body[:10]:
        n = n * 32 + CROCKFORD.index(ch)
    return n


def is_ts(value: Any) -> bool:
    return isinstance(value, str) and TS_RE.match(value) is not None


def parse_ts(value: str) -> _dt.datetime:
    return _dt.datetime.strptime(value, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=_dt.timezone.utc)


def now_ts(offset_s: float = 0.0) -> str:
    t = _dt.datetime.now(_dt.timezone.utc) + _dt.timedelta(seconds=offset_s)
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


def digest(content: str) -> str:
    return "sha256:" + hashlib.sha256(content.encode("utf-8")).hexdigest()


def mask_ids(text: str) -> str:
    return ANY_ID_RE.sub("<ID>", text)


# --------------------------------------------------------------------------- errors


@contextlib.contextmanager
def raises_code(code: str, *codes: str):
    """Expect a PcpError whose .code is one of the given codes; yields a box with .value."""
    from store import PcpError

    allowed = {code, *codes}

    class Box:
        value: Any = None

    box = Box()
    try:
        yield box
    except PcpError as exc:  # noqa: PERF203
        box.value = exc
        assert exc.code in allowed, f"expected code in {sorted(allowed)}, got {exc.code!r}: {exc.message}"
        assert isinstance(exc.message, str) and exc.message.strip(), "error without a human message"
        return
    except Exception as exc:  # pragma: no cover - reported as a failure
        raise AssertionError(
            f"expected PcpError({sorted(allowed)}), got {type(exc).__name__}: {exc}"
        ) from exc
    raise AssertionError(f"expected PcpError with code in {sorted(allowed)}, nothing was raised")


# --------------------------------------------------------------------------- API shortcuts


def model(st, grants: dict[str, Iterable[str]], client_id: str = "test-client"):
    from store import AccessSession

    sess = AccessSession.model_client(client_id, {ns: set(p) for ns, p in grants.items()})
    return st.with_session(sess)


def write(st, ns: str, content: str, **kw) -> dict:
    return st.write_page(ns, content=content, **kw)


def read1(st, id_: str, projections=("manifest", "payload"), **kw) -> dict:
    res = st.read_pages([id_], projections=list(projections), **kw)
    results = res["results"]
    assert len(results) == 1, results
    assert "error" not in results[0], results[0]
    return results[0]


def env(st, id_: str, projections=("manifest", "payload")) -> dict:
    return read1(st, id_, projections)["revision"]


def head(st, page_id: str) -> str:
    return env(st, page_id, ("manifest",))["revision_id"]


def content_of(st, id_: str) -> str | None:
    p = env(st, id_, ("payload",))["payload"]
    return None if p is None else p.get("content")


def all_hits(st, query: str = "", limit: int = 50, max_pages: int = 100, **kw) -> list[dict]:
    hits: list[dict] = []
    cursor = None
    for _ in range(max_pages):
        res = st.search_pages(query, limit=limit, cursor=cursor, **kw)
        hits.extend(res["hits"])
        cursor = res.get("next_cursor")
        if not cursor:
            return hits
    raise AssertionError("search paging did not end")


def hit_ids(st, query: str = "", **kw) -> set[str]:
    return {h["page_id"] for h in all_hits(st, query, **kw)}


def all_scopes(st, **kw) -> list[dict]:
    out: list[dict] = []
    cursor = None
    for _ in range(200):
        res = st.list_scopes(cursor=cursor, **kw)
        out.extend(res["scopes"])
        cursor = res.get("next_cursor")
        if not cursor:
            return out
    raise AssertionError("list_scopes paging did not end")


def scope_map(st) -> dict[str, dict]:
    return {s["namespace"]: s for s in all_scopes(st)}


def all_audit(st, **kw) -> list[dict]:
    out: list[dict] = []
    cursor = None
    for _ in range(1000):
        res = st.audit_log(limit=50, cursor=cursor, **kw)
        out.extend(res["events"])
        cursor = res.get("next_cursor")
        if not cursor:
            return out
    raise AssertionError("audit paging did not end")


def audit_count(st) -> int:
    return len(all_audit(st))


def history(st, page_id: str) -> list[dict]:
    return read1(st, page_id, ("history",))["history"]


def relations(st, id_: str) -> dict:
    return read1(st, id_, ("relations",))["relations"]


# --------------------------------------------------------------------------- raw SQLite


def connect(path, readonly: bool = True):
    """A bare connection to the store file: plain SQLite, or SQLCipher with the store's key (the `encrypted`
    runs; read-write there, as SQLCipher takes no URI)."""
    from store import crypt

    if crypt.is_encrypted(Path(path)):
        return crypt.connect_raw(Path(path), crypt.unlock(Path(path)), timeout=30)
    if readonly:
        return sqlite3.connect(f"file:{Path(path)}?mode=ro", uri=True, timeout=30)
    return sqlite3.connect(str(path), timeout=30)


@contextlib.contextmanager
def raw(path):
    from store import crypt

    if crypt.is_encrypted(Path(path)):  # an encrypted store (the `encrypted` runs): SQLCipher, with its key
        conn = crypt.connect_raw(Path(path), crypt.unlock(Path(path)), timeout=30)
    else:
        conn = sqlite3.connect(f"file:{Path(path)}?mode=ro", uri=True, timeout=30)
    try:
        yield conn
    finally:
        conn.close()


def tables(path) -> dict[str, str]:
    """name -> CREATE sql for every table (virtual tables included)."""
    with raw(path) as c:
        return {
            n: (s or "")
            for n, s in c.execute("SELECT name, sql FROM sqlite_master WHERE type='table'")
        }


def plain_tables(path) -> list[str]:
    """Ordinary tables (FTS shadow tables included, virtual tables excluded: they may need a
    tokenizer that only the store registers)."""
    return sorted(
        n
        for n, s in tables(path).items()
        if not s.upper().startswith("CREATE VIRTUAL TABLE") and not n.startswith("sqlite_")
    )


def is_audit_table(name: str) -> bool:
    return "audit" in name.lower()


def snapshot(path, exclude=is_audit_table) -> dict[str, list]:
    snap = {}
    with raw(path) as c:
        for t in plain_tables(path):
            if exclude is not None and exclude(t):
                continue
            rows = c.execute(f'SELECT * FROM "{t}"').fetchall()
            snap[t] = sorted(rows, key=repr)
    return snap


def counts(path, exclude=is_audit_table) -> dict[str, int]:
    out = {}
    with raw(path) as c:
        for t in plain_tables(path):
            if exclude is not None and exclude(t):
                continue
            out[t] = c.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0]
    return out


def diff_snapshots(before: dict, after: dict) -> list[str]:
    problems = []
    for t in sorted(set(before) | set(after)):
        b = before.get(t)
        a = after.get(t)
        if b != a:
            nb = 0 if b is None else len(b)
            na = 0 if a is None else len(a)
            problems.append(f"{t}: {nb} rows -> {na} rows")
    return problems


def revision_table(path) -> str:
    names = plain_tables(path)
    low = {n.lower(): n for n in names}
    for cand in ("revision", "revisions", "page_revision", "page_revisions", "pcp_revision"):
        if cand in low:
            return low[cand]
    cands = [n for n in names if "revision" in n.lower() and "fts" not in n.lower()]
    assert cands, f"no revision table among {names}"
    return sorted(cands, key=len)[0]


def revision_rows(path) -> list[tuple]:
    t = revision_table(path)
    with raw(path) as c:
        cols = [r[1] for r in c.execute(f'PRAGMA table_info("{t}")')]
        order = "id" if "id" in cols else "rowid"
        return c.execute(f'SELECT * FROM "{t}" ORDER BY {order}').fetchall()


def revision_count(path) -> int:
    t = revision_table(path)
    with raw(path) as c:
        return c.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0]


def audit_rows_text(path) -> str:
    out = []
    with raw(path) as c:
        for t in plain_tables(path):
            if is_audit_table(t):
                for row in c.execute(f'SELECT * FROM "{t}"'):
                    out.append(repr(row))
    return "\n".join(out)


def files_beside(db_path) -> list[Path]:
    """The database, its -wal/-shm/-journal and every file in its directory (recursively)."""
    db_path = Path(db_path)
    found = {p for p in db_path.parent.rglob("*") if p.is_file()}
    for suffix in ("-wal", "-shm", "-journal"):
        p = Path(str(db_path) + suffix)
        if p.exists():
            found.add(p)
    return sorted(found)


# --------------------------------------------------------------------------- random content

_WORDS = (
    "river stone lantern meadow copper violet harbor ember quartz willow signal orbit "
    "canvas timber falcon marble thistle cobalt saffron glacier prism lattice beacon "
    "juniper walnut crimson hollow basalt cedar fennel indigo jasper kelp lichen mosaic "
    "nectar opal pepper quiver rustic sorrel tundra umber velvet wander yarrow zephyr"
).split()


def random_token(rng: random.Random, n: int = 24) -> str:
    return "".join(rng.choice(string.ascii_letters) for _ in range(n))


def random_text(rng: random.Random, n_chars: int = 2000, tokens: int = 8) -> str:
    """Random words plus distinctive mixed-case random-letter tokens (each >= 24 chars)."""
    words: list[str] = []
    size = 0
    while size < n_chars:
        if rng.random() < tokens / max(1, n_chars / 7):
            w = random_token(rng, rng.randint(24, 32))
        else:
            w = rng.choice(_WORDS)
        words.append(w)
        size += len(w) + 1
    for _ in range(tokens):  # make sure there are distinctive tokens at all
        words.insert(rng.randrange(len(words)), random_token(rng, 28))
    return " ".join(words)


def windows(data: bytes, n: int = 16) -> set[bytes]:
    return {data[i : i + n] for i in range(0, max(0, len(data) - n + 1))}


def find_residue(files: Iterable[Path], erased: set[bytes], n: int = 16) -> list[str]:
    """Return 'file: window' descriptions for every erased window found in a file."""
    problems = []
    if not erased:
        return problems
    for f in files:
        data = f.read_bytes()
        hits = set()
        mv = data
        for i in range(0, len(mv) - n + 1):
            w = mv[i : i + n]
            if w in erased:
                hits.add(w)
                if len(hits) >= 5:
                    break
        if hits:
            problems.append(f"{f.name}: {sorted(hits)[:5]!r}")
    return problems


# --------------------------------------------------------------------------- spawn workers


def _err_tuple(exc: BaseException) -> tuple:
    code = getattr(exc, "code", None)
    return ("err", type(exc).__name__, code, str(getattr(exc, "message", exc)))


def worker_revise(db_path: str, page_id: str, expected: str, tag: str, barrier, queue) -> None:
    try:
        from store import Store

        st = Store.open(db_path)
    except BaseException as exc:  # pragma: no cover
        queue.put((tag, _err_tuple(exc)))
        barrier.abort()
        return
    try:
        barrier.wait(timeout=60)
        try:
            res = st.revise_page(page_id, expected, content=f"revised by {tag}")
            queue.put((tag, ("ok", res["revision_id"])))
        except BaseException as exc:
            queue.put((tag, _err_tuple(exc)))
    finally:
        try:
            st.close()
        except BaseException:
            pass


def worker_bulk_writes(db_path: str, namespace: str, n: int, tag: str, barrier, queue) -> None:
    errors: list[str] = []
    ok = 0
    try:
        from store import Store

        st = Store.open(db_path)
    except BaseException as exc:  # pragma: no cover
        queue.put((tag, 0, [f"open: {type(exc).__name__}: {exc}"]))
        barrier.abort()
        return
    try:
        barrier.wait(timeout=60)
        for i in range(n):
            try:
                st.write_page(namespace, content=f"{tag} page {i} concurrent writer payload")
                ok += 1
            except BaseException as exc:
                errors.append(f"{type(exc).__name__}: {exc}")
    finally:
        try:
            st.close()
        except BaseException as exc:
            errors.append(f"close: {type(exc).__name__}: {exc}")
        queue.put((tag, ok, errors[:20] + ([f"... {len(errors)} errors"] if len(errors) > 20 else [])))


def wait_all(procs, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    for p in procs:
        p.join(max(0.1, deadline - time.monotonic()))
    for p in procs:
        if p.is_alive():
            p.terminate()
            p.join(5)
            raise AssertionError("a worker process did not finish in time")


def dumps(obj) -> str:
    return json.dumps(obj, ensure_ascii=False, sort_keys=True, default=str)


def env_flag(name: str) -> bool:
    return os.environ.get(name, "") not in ("", "0")


from store import index as _index  # noqa: E402  (the statistics helpers below)


def recounted_stats(st) -> tuple[dict[tuple[int, str], int], dict[int, tuple[int, int]]]:
    """term_stat and scope_stat as a fresh count over the revisions gives them (tombstoned pages left out)."""
    df: Counter[tuple[int, str]] = Counter()
    docs: dict[int, list[int]] = {}
    rows = st._db.execute_sql(
        "SELECT r.scope_id, r.title, r.content, r.facets, p.status FROM revision r JOIN page p ON p.id = r.page_id"
    ).fetchall()
    for scope_pk, title, content, facets, status in rows:
        if status == "tombstoned":
            continue
        doc = _index.analyse(title or "", content, json.loads(facets or "{}"), st._ctx.index_salt)
        for key in doc.keys():
            df[(scope_pk, key)] += 1
        d = docs.setdefault(scope_pk, [0, 0])
        d[0] += 1
        d[1] += doc.count
    return dict(df), {k: (v[0], v[1]) for k, v in docs.items()}


def stored_stats(st) -> tuple[dict[tuple[int, str], int], dict[int, tuple[int, int]]]:
    """term_stat and scope_stat as stored."""
    df = {(s, t): n for t, s, n in st._db.execute_sql("SELECT term, scope_id, df FROM term_stat").fetchall()}
    docs = {s: (d, n) for s, d, n in st._db.execute_sql("SELECT scope_id, docs, terms FROM scope_stat").fetchall()
            if d or n}
    return df, docs
