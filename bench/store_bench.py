#!/usr/bin/env python3
"""The pcp store against bare SQL on the same corpus, side by side in one run.

    python bench/store_bench.py [--pages 1000000] [--scopes 20] [--seed 7] [--dir DIR] [--keep] [--encrypted]

It generates N pages of English-like text (fixed seed; ~85 words each: a Zipf-like
background vocabulary of 4,000 words plus 3,000 rarer "topic" words, 150 topics,
a few camelCase identifiers), streams them in batches of 1,000 (each of the 20 scopes
`project:p00`.. gets a contiguous run of batches) and writes every batch twice:

  store  one Store.write_pages_bulk(items, namespace, batch_size=1000) call per scope,
         streaming its batches (one transaction + audit event per batch)
  bare   one `revisions` table (id, page_id, namespace, created_at, content) with a
         unique index on page_id and an index on created_at, plus an external-content
         FTS5 table (default unicode61 tokenizer); executemany into both, one
         transaction per batch. Same SQLite library (peewee.sqlite3 = pysqlite3),
         same pragmas as the store where they concern speed (WAL, synchronous=NORMAL,
         32 MB cache, wal_autocheckpoint=20000 while loading + a PASSIVE checkpoint
         after each scope's run, as write_pages_bulk does).

Then it links a sample of pages (Store.link_pages; store only) and measures, with
time.perf_counter, store and bare taking turns on every sample:

  ingest   pages/s over the timed batch writes (generation not timed)
  search   200 two-term queries (both terms in 0.1 %..1 % of pages, chosen by
           counting document frequencies on the generated corpus), scoped to one
           namespace, 20 hits: search_pages(q, scopes=[ns], mode="text", limit=20)
           vs SELECT .. FROM fts JOIN revisions .. WHERE fts MATCH ? AND namespace = ?
           ORDER BY bm25(fts) LIMIT 20
  natural-language search
           --nl-queries questions of 6-12 words (1-2 rare words of one topic, df
           0.1 %..1 %; 1-3 mid words, df 1 %..10 %; the rest common words, df >= 10 %,
           led by a question word when the vocabulary has one), 20 hits, mode "auto":
           the owner (every scope), a model session granted one of the scopes, and one
           granted project:*, vs bare bm25 of the question's words OR-ed over the bare
           table (ORDER BY bm25 LIMIT 20; with r.namespace = ? for the one-scope
           session); and mode "text" (owner) vs the same words AND-ed on the bare table
  read     read_pages([page_id]) vs SELECT .. FROM revisions WHERE page_id = ?
  delete   delete_page(page_id, reason) vs one transaction deleting the FTS entry
           and the revision row
  open     in a fresh subprocess each time: Store.open + search_pages("",
           mode="temporal", limit=50) vs connect + SELECT .. ORDER BY created_at
           DESC LIMIT 50 (imports excluded from the timing, reported apart)
  size     database and WAL file sizes after ingest

and prints a table (store, bare, ratio = store / bare) with the targets, plus the
query plans (EXPLAIN QUERY PLAN) of the statements the store ran for each operation.
The databases live in a temporary directory (under --dir if given), removed at the
end unless --keep.
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import os
import platform
import random
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

BATCH = 1000
DF_LO, DF_HI = 0.001, 0.01
NL_MID_LO, NL_COMMON = 0.01, 0.10  # natural-language questions: mid words df 1 %..10 %, common >= 10 %
NL_LEADS = ("how", "what", "when", "where", "which", "who", "why", "did", "can", "should", "would")

# --------------------------------------------------------------------------- corpus

_FUNCTION = (
    "the of and to a in is that for it as was with be by on not he this are or his from at which but have were "
    "they one you had all we can her has there been if more when will would who so no she other its time only new "
    "some could these two may first then do any like my now over such our man me even most made after also did "
    "many before must through back years where much your way well down should because each just those people how "
    "too little state good very make world still own see men work long get here between both life being under "
    "never day same another know while last might us great old year off come since against go came right used take"
).split()
_DOMAIN = (
    "meeting release budget customer review migration backlog latency deadline contract onboarding cluster "
    "dashboard roadmap incident rollback schedule proposal design sprint ticket feature query index schema "
    "deploy staging production server client request response cache memory thread process module package "
    "config build test coverage branch merge commit patch issue error warning metric alert report summary "
    "draft decision owner team partner vendor invoice payment account profile session token permission scope "
    "archive export import storage backup restore network latency throughput benchmark quarter estimate risk"
).split()
_ONSETS = ("b c d f g h j k l m n p r s t v w y z bl br ch cl cr dr fl fr gl gr pl pr sc sh sk sl sm sn sp st "
           "str sw th tr wh").split()
_VOWELS = "a e i o u a e i o u a e i o ea ee ai ou oa".split()
_CODAS = ("", "", "", "", "", "n", "r", "s", "t", "l", "m", "nd", "st", "ng", "ck", "rt", "nt", "ss", "ll", "x")
_SUFFIXES = ("", "", "", "", "", "", "", "", "ing", "ed", "er", "tion", "ly", "ment", "ness", "able", "al", "ive", "ous")

NL_WARMUP = 5
N_BACKGROUND = 4000
N_RARE = 3000
N_TOPICS = 150
WORDS_PER_TOPIC = 20
TOPIC_SHARE = 0.12
IDENT_SHARE = 0.04


class Corpus:
    """Deterministic English-like pages, generated one batch at a time (never all in memory)."""

    def __init__(self, seed: int) -> None:
        rng = random.Random(seed)
        taken = set(_FUNCTION) | set(_DOMAIN)

        def word() -> str:
            while True:
                w = "".join(rng.choice(_ONSETS) + rng.choice(_VOWELS) + rng.choice(_CODAS)
                            for _ in range(rng.choice((1, 1, 2, 2, 2, 3))))
                w += rng.choice(_SUFFIXES)
                if 3 <= len(w) <= 12 and w not in taken:
                    taken.add(w)
                    return w

        tail = list(dict.fromkeys(_DOMAIN)) + [word() for _ in range(N_BACKGROUND - len(_FUNCTION) - len(set(_DOMAIN)))]
        rng.shuffle(tail)
        self.background = list(_FUNCTION) + tail  # Zipf rank order
        weights = [1.0 / (r + 2.7) for r in range(len(self.background))]  # Zipf-Mandelbrot, s = 1
        self.cum = list(_accumulate(weights))
        self.rare = [word() for _ in range(N_RARE)]
        self.topics = [rng.sample(self.rare, WORDS_PER_TOPIC) for _ in range(N_TOPICS)]
        self.seed = seed

    def batches(self, total: int, df: Counter | None = None):
        """Yield lists of up to BATCH page texts; count document frequencies into `df`."""
        rng = random.Random(self.seed * 1_000_003 + 1)
        bg, cum, topics = self.background, self.cum, self.topics
        choices, randint, rand, shuffle = rng.choices, rng.randint, rng.random, rng.shuffle
        made = 0
        while made < total:
            batch = []
            for _ in range(min(BATCH, total - made)):
                n = randint(70, 100)
                n_topic = int(n * TOPIC_SHARE + rand() * 3)
                toks = choices(bg, cum_weights=cum, k=n - n_topic) + choices(topics[randint(0, N_TOPICS - 1)], k=n_topic)
                shuffle(toks)
                if df is not None:
                    df.update(set(toks))
                if rand() < IDENT_SHARE:  # an identifier, as code-related notes have
                    a, b, c = choices(bg[60:], k=3)
                    toks[randint(5, n - 1)] = a + b.capitalize() + c.capitalize()
                t = randint(3, 6)
                sentences, i = [], t
                while i < n:
                    step = randint(6, 16)
                    s = " ".join(toks[i:i + step])
                    sentences.append(s[0].upper() + s[1:] + ("." if rand() < 0.85 else "?" if rand() < 0.5 else ";"))
                    i += step
                title = " ".join(toks[:t])
                batch.append(f"# {title[0].upper()}{title[1:]}\n\n" + " ".join(sentences))
            made += len(batch)
            yield batch


def _accumulate(values):
    total = 0.0
    for v in values:
        total += v
        yield total


# --------------------------------------------------------------------------- bare SQL

BARE_DDL = (
    "CREATE TABLE revisions (id INTEGER PRIMARY KEY, page_id TEXT NOT NULL UNIQUE, namespace TEXT NOT NULL, "
    "created_at TEXT NOT NULL, content TEXT NOT NULL)",
    "CREATE INDEX revisions_created_at ON revisions(created_at)",
    "CREATE VIRTUAL TABLE revisions_fts USING fts5(content, content='revisions', content_rowid='id')",
)
# Store.write_pages_bulk raises wal_autocheckpoint to 20000 pages while it loads and runs a
# PASSIVE checkpoint at the end; the bare side does the same, so neither gets a tuning the
# other lacks.
BARE_LOAD_PRAGMAS = ("PRAGMA wal_autocheckpoint=20000",)
BARE_AFTER_LOAD = ("PRAGMA wal_autocheckpoint=1000",)
BARE_SEARCH = (
    "SELECT r.id, r.page_id, r.namespace, r.created_at, r.content, bm25(revisions_fts) AS score "
    "FROM revisions_fts JOIN revisions r ON r.id = revisions_fts.rowid "
    "WHERE revisions_fts MATCH ? AND r.namespace = ? ORDER BY score LIMIT 20"
)
BARE_SEARCH_ALL = (
    "SELECT r.id, r.page_id, r.namespace, r.created_at, r.content, bm25(revisions_fts) AS score "
    "FROM revisions_fts JOIN revisions r ON r.id = revisions_fts.rowid "
    "WHERE revisions_fts MATCH ? ORDER BY score LIMIT 20"
)
BARE_READ = "SELECT id, page_id, namespace, created_at, content FROM revisions WHERE page_id = ?"
BARE_LIST = "SELECT id, page_id, namespace, created_at, content FROM revisions ORDER BY created_at DESC LIMIT 50"


def sqlite_module():
    import peewee

    return peewee.sqlite3


def bare_connect(path: Path):
    conn = sqlite_module().connect(str(path), isolation_level=None)
    conn.execute("PRAGMA journal_mode=wal")
    conn.execute("PRAGMA synchronous=normal")
    conn.execute("PRAGMA cache_size=-32000")
    return conn


def bare_page_id(pk: int) -> str:
    return f"pg_{pk:026d}"


def stamp() -> str:
    now = datetime.now(timezone.utc)
    return now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond // 1000:03d}Z"


def bare_write(conn, first_pk: int, namespace: str, texts: list[str]) -> None:
    created = stamp()
    rows = [(first_pk + i, bare_page_id(first_pk + i), namespace, created, text) for i, text in enumerate(texts)]
    conn.execute("BEGIN")
    conn.executemany("INSERT INTO revisions (id, page_id, namespace, created_at, content) VALUES (?,?,?,?,?)", rows)
    conn.executemany("INSERT INTO revisions_fts (rowid, content) VALUES (?,?)", [(r[0], r[4]) for r in rows])
    conn.execute("COMMIT")


def bare_delete(conn, page_id: str) -> None:
    conn.execute("BEGIN IMMEDIATE")
    row = conn.execute("SELECT id, content FROM revisions WHERE page_id = ?", (page_id,)).fetchone()
    conn.execute("INSERT INTO revisions_fts (revisions_fts, rowid, content) VALUES ('delete', ?, ?)", row)
    conn.execute("DELETE FROM revisions WHERE id = ?", (row[0],))
    conn.execute("COMMIT")


# --------------------------------------------------------------------------- helpers

def pct(values: list[float], q: float) -> float:
    xs = sorted(values)
    return xs[max(0, math.ceil(q * len(xs)) - 1)]


def file_size(path: Path) -> int:
    return path.stat().st_size if path.exists() else 0


def nl_questions(corpus: "Corpus", df: Counter, n_pages: int, count: int, seed: int) -> tuple[list[str], dict]:
    """Questions of 6-12 words: 1-2 rare words of one topic, 1-3 mid words, the rest common words."""
    freq = {w: c / n_pages for w, c in df.items()}
    rare_set = {w for w, f in freq.items() if DF_LO <= f <= DF_HI}
    mid = sorted(w for w, f in freq.items() if NL_MID_LO <= f < NL_COMMON)
    common = sorted(w for w, f in freq.items() if f >= NL_COMMON)
    leads = [w for w in NL_LEADS if w in common] or common
    topics = [sorted(w for w in topic if w in rare_set) for topic in corpus.topics]
    topics = [t for t in topics if t] or [sorted(rare_set)]
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        length = rng.randint(6, 12)
        topic = rng.choice(topics)
        n_rare = min(len(topic), rng.randint(1, 2))
        n_mid = min(len(mid), rng.randint(1, 3))
        words = rng.sample(topic, n_rare) + rng.sample(mid, n_mid)
        words += rng.sample(common, max(0, length - 1 - len(words)))
        rng.shuffle(words)
        out.append(" ".join([rng.choice(leads), *words]).capitalize() + "?")
    tiers = {"rare": (DF_LO, DF_HI, len(rare_set)), "mid": (NL_MID_LO, NL_COMMON, len(mid)),
             "common": (NL_COMMON, 1.0, len(common))}
    return out, tiers


NL_ROWS = ("auto owner", "auto one", "auto star", "bare or", "bare or one", "text owner", "bare and")


def nl_sessions(st, scope: str) -> dict:
    """The three sessions the questions are timed for: the owner, a model granted one scope, one granted project:*."""
    from store import AccessSession

    grant = ["search", "read"]
    return {
        "owner": st,
        "one": st.with_session(AccessSession.model_client("bench-one-scope", {scope: grant})),
        "star": st.with_session(AccessSession.model_client("bench-project-star", {"project:*": grant})),
    }


def nl_query(name: str, q: str, sessions: dict, bare, scope: str) -> int:
    """Run question `q` as row `name` of NL_ROWS; the number of hits."""
    if name.startswith(("auto", "text")):
        mode, who = name.split()
        return len(sessions[who].search_pages(q, mode=mode, limit=20)["hits"])
    if name == "bare or":
        return len(bare.execute(BARE_SEARCH_ALL, (bare_or(q),)).fetchall())
    if name == "bare or one":
        return len(bare.execute(BARE_SEARCH, (bare_or(q), scope)).fetchall())
    return len(bare.execute(BARE_SEARCH_ALL, (bare_and(q),)).fetchall())


def bare_or(question: str) -> str:
    return " OR ".join(f'"{w}"' for w in dict.fromkeys(re.findall(r"[^\W_]+", question.lower())))


def bare_and(question: str) -> str:
    return " ".join(f'"{w}"' for w in dict.fromkeys(re.findall(r"[^\W_]+", question.lower())))


def log(msg: str) -> None:
    print(msg, flush=True)


class PlanCapture:
    """Statements the store runs during one call (expanded SQL from the trace callback)."""

    def __init__(self, db) -> None:
        self.conn = db.connection()
        self.statements: list[str] = []

    def __enter__(self) -> "PlanCapture":
        self.conn.set_trace_callback(self.statements.append)
        return self

    def __exit__(self, *exc) -> None:
        self.conn.set_trace_callback(None)

    def plans(self) -> list[tuple[str, list[str]]]:
        out = []
        seen = set()
        for sql in self.statements:
            head = sql.lstrip().split(None, 1)[0].upper() if sql.strip() else ""
            if head not in ("SELECT", "DELETE", "UPDATE", "INSERT", "WITH") or sql in seen:
                continue
            seen.add(sql)
            try:
                rows = self.conn.execute("EXPLAIN QUERY PLAN " + sql).fetchall()
            except Exception as exc:  # noqa: BLE001 - diagnostics only
                rows = [(0, 0, 0, f"(no plan: {exc})")]
            out.append((sql, [r[3] for r in rows]))
        return out


def print_plans(title: str, plans: list[tuple[str, list[str]]], big_tables: set[str]) -> list[str]:
    """Print plans; return warnings for full scans of large tables."""
    warnings = []
    log(f"\n  [{title}]")
    for sql, rows in plans:
        short = sql if len(sql) <= 400 else sql[:400] + " ..."
        log(f"    SQL: {short}")
        for r in rows:
            log(f"      {r}")
            words = r.split()
            if len(words) >= 2 and words[0] == "SCAN" and words[1] in big_tables and "INDEX" not in r:
                warnings.append(f"{title}: full scan '{r}' in: {short}")
        # an FTS MATCH probed once per row of an outer loop instead of driving the join
        for i, r in enumerate(rows):
            if i > 0 and "VIRTUAL TABLE INDEX" in r and "M" in r.rsplit("INDEX", 1)[-1].split(":", 1)[-1]:
                warnings.append(f"{title}: full-text MATCH evaluated once per row of the outer loop(s) "
                                f"({' -> '.join(rows[:i + 1])}) in: {short}")
                break
    return warnings


def store_fingerprint() -> str:
    """Git commit of the checkout plus a digest of store/*.py as they are on disk (may be uncommitted)."""
    import hashlib

    digest = hashlib.sha256()
    for path in sorted((ROOT / "store").rglob("*.py")):
        digest.update(path.relative_to(ROOT).as_posix().encode() + b"\0" + path.read_bytes())
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                                text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "store"], cwd=ROOT, capture_output=True,
                               text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        commit, dirty = "unknown", ""
    return f"{commit}{'+dirty' if dirty else ''} store/*.py sha256:{digest.hexdigest()[:12]}"


# --------------------------------------------------------------------------- the open probe (subprocess)

def probe(kind: str, path: str) -> None:
    t = time.perf_counter()
    if kind == "store":
        from store import Store
    else:
        sqlite3 = sqlite_module()
    imported = time.perf_counter() - t
    t0 = time.perf_counter()
    if kind == "store":
        st = Store.open(path)
        hits = len(st.search_pages("", mode="temporal", limit=50)["hits"])
        elapsed = time.perf_counter() - t0
        st.close()
    else:
        conn = sqlite3.connect(path)
        hits = len(conn.execute(BARE_LIST).fetchall())
        elapsed = time.perf_counter() - t0
        conn.close()
    print(json.dumps({"seconds": elapsed, "import_seconds": imported, "hits": hits,
                      "fingerprint": store_fingerprint() if kind == "store" else None}))


def run_probe(kind: str, path: Path) -> dict:
    out = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--probe", kind, str(path)],
        check=True, capture_output=True, text=True, cwd=str(ROOT),
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


# --------------------------------------------------------------------------- the benchmark

def run(args: argparse.Namespace) -> int:
    from store import Cycle, Store

    sqlite3 = sqlite_module()
    N, S = args.pages, args.scopes
    scopes = [f"project:p{i:02d}" for i in range(S)]
    parent = Path(args.dir) if args.dir else None
    if parent:
        parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="store_bench_", dir=parent))
    store_path, bare_path = work / "store.db", work / "bare.db"
    started = time.time()
    log(f"pcp store benchmark: {N:,} pages, {S} scopes, seed {args.seed}, batches of {BATCH}")
    log(f"  python {platform.python_version()}, SQLite {sqlite3.sqlite_version} ({sqlite3.__name__}), "
        f"{os.cpu_count()} CPUs, {platform.platform()}")
    log(f"  databases in {work}")
    fingerprint = store_fingerprint()
    log(f"  store code: {fingerprint}")
    log(f"  started {datetime.now().isoformat(timespec='seconds')}")

    corpus = Corpus(args.seed)
    st = Store.open(store_path)
    bare = bare_connect(bare_path)
    for ddl in BARE_DDL:
        bare.execute(ddl)

    # ---- ingest. Each scope gets a contiguous run of batches and one write_pages_bulk call
    # streaming them (as an importer would call it). The generator feeding the store makes
    # the next batch, writes it with bare SQL (timed apart) and yields it; the store has
    # committed the previous batch by then. Store time = call time - time spent in the
    # generator (generation + bare writes).
    df: Counter = Counter()
    n_batches = -(-N // BATCH)
    runs = [(s * n_batches // S, (s + 1) * n_batches // S) for s in range(S)]
    used_scopes = [scopes[s] for s, (a, b) in enumerate(runs) if b > a]
    gen = corpus.batches(N, df)
    clock = {"store": 0.0, "bare": 0.0, "ready": 0.0, "done": 0}
    batch_store: list[float] = []
    batch_bare: list[float] = []
    report_every = max(N // 20, BATCH)
    t_wall = time.perf_counter()
    for pragma in BARE_LOAD_PRAGMAS:
        bare.execute(pragma)

    def scope_items(ns: str, count: int, overhead: list[float]):
        for _ in range(count):
            t0 = time.perf_counter()
            texts = next(gen)
            tb = time.perf_counter()
            bare_write(bare, clock["done"] + 1, ns, texts)
            dt = time.perf_counter() - tb
            clock["bare"] += dt
            batch_bare.append(dt)
            clock["done"] += len(texts)
            done = clock["done"]
            if done % report_every < len(texts) or done == N:
                log(f"  ingest {done:>10,}/{N:,}  store {len(batch_store) * BATCH / max(sum(batch_store), 1e-9):>8,.0f} p/s  "
                    f"bare {done / clock['bare']:>8,.0f} p/s  (last batch store "
                    f"{(batch_store[-1] if batch_store else 0) * 1000:.0f} ms, bare {dt * 1000:.0f} ms)  "
                    f"wall {time.perf_counter() - t_wall:,.0f} s")
            clock["ready"] = time.perf_counter()
            overhead[0] += clock["ready"] - t0
            for text in texts:
                yield {"content": text}

    def store_progress(created: int, total: int | None) -> None:
        batch_store.append(time.perf_counter() - clock["ready"])

    for s, (a, b) in enumerate(runs):
        if b == a:
            continue
        overhead = [0.0]
        t0 = time.perf_counter()
        st.write_pages_bulk(scope_items(scopes[s], b - a, overhead), scopes[s], batch_size=BATCH,
                            progress=store_progress)
        clock["store"] += time.perf_counter() - t0 - overhead[0]
        # the bare side ends its run the way write_pages_bulk does (see BARE_LOAD_PRAGMAS)
        tb = time.perf_counter()
        bare.execute("PRAGMA wal_checkpoint(PASSIVE)")
        clock["bare"] += time.perf_counter() - tb
    for pragma in BARE_AFTER_LOAD:
        bare.execute(pragma)
    t_store, t_bare = clock["store"], clock["bare"]
    ingest_store, ingest_bare = N / t_store, N / t_bare
    sizes = {name: file_size(p) for name, p in (
        ("store_db", store_path), ("store_wal", Path(str(store_path) + "-wal")),
        ("bare_db", bare_path), ("bare_wal", Path(str(bare_path) + "-wal")))}

    # ---- sample pages (ordinal k = k-th page written; same logical page in both stores)
    rng = random.Random(args.seed + 99)
    n_links = min(args.links, N // 10)
    n_sample = min(N, args.reads + args.deletes + 2 * n_links)
    ordinals = rng.sample(range(1, N + 1), n_sample)
    ro = sqlite3.connect(f"file:{store_path}?mode=ro", uri=True)
    store_ids: dict[int, tuple[str, str]] = {}
    for i in range(0, len(ordinals), 500):
        part = ordinals[i:i + 500]
        for pk, page_id, ns in ro.execute(
            f"SELECT p.id, p.page_id, s.namespace FROM page p JOIN scope s ON s.id = p.scope_id "
            f"WHERE p.id IN ({','.join('?' * len(part))})", part):
            store_ids[pk] = (page_id, ns)
    ro.close()
    assert len(store_ids) == len(ordinals), "store page ids are not 1..N in write order"
    read_set = ordinals[:args.reads]
    delete_set = ordinals[args.reads:args.reads + args.deletes]
    link_pool = ordinals[args.reads + args.deletes:]

    # ---- links (store only; bare has no relations)
    link_times: list[float] = []
    types = ("related_to", "supports", "derived_from", "depends_on", "responds_to")
    cycles = 0
    for i in range(n_links):
        a, b = link_pool[2 * i], link_pool[2 * i + 1]
        t0 = time.perf_counter()
        try:
            st.link_pages(store_ids[a][0], types[i % len(types)], store_ids[b][0])
        except Cycle:
            cycles += 1
        link_times.append(time.perf_counter() - t0)
    # half of the deletes hit pages with a relation (the `from` end of the first links)
    n_linked_deletes = min(len(delete_set) // 2, n_links)
    delete_set = [link_pool[2 * j] for j in range(n_linked_deletes)] + delete_set[:len(delete_set) - n_linked_deletes]
    log(f"  linked {n_links:,} page pairs (link_pages p50 {pct(link_times, .5) * 1000:.1f} ms, "
        f"p95 {pct(link_times, .95) * 1000:.1f} ms{f', {cycles} refused as cycles' if cycles else ''})")

    # ---- queries from document frequencies
    lo, hi = DF_LO * N, DF_HI * N
    in_range = {w for w, c in df.items() if lo <= c <= hi}
    qrng = random.Random(args.seed + 7)
    queries = []
    topic_cands = [[w for w in topic if w in in_range] for topic in corpus.topics]
    topic_cands = [c for c in topic_cands if len(c) >= 2]
    pool = sorted(in_range)
    for i in range(args.queries + 10):
        if topic_cands and i % 4 != 3:  # 3 in 4 queries: two words of one topic (they co-occur)
            a, b = qrng.sample(qrng.choice(topic_cands), 2)
        else:  # 1 in 4: two independent words
            a, b = qrng.sample(pool, 2)
        queries.append((f"{a} {b}", qrng.choice(used_scopes)))
    dfs = sorted(df[w] / N for q, _ in queries for w in q.split())
    log(f"  {len(in_range):,} words have document frequency in {DF_LO:.1%}..{DF_HI:.1%}; "
        f"query terms df {dfs[0]:.2%}..{dfs[-1]:.2%} (median {statistics.median(dfs):.2%})")
    nl_qs, nl_tiers = nl_questions(corpus, df, N, args.nl_queries + NL_WARMUP, args.seed + 11)
    nl_lengths = [len(q.split()) for q in nl_qs]
    log(f"  natural-language questions: {len(nl_qs)} of {min(nl_lengths)}-{max(nl_lengths)} words; vocabulary tiers "
        + ", ".join(f"{name} df {lo:.1%}..{hi:.0%} ({n:,} words)" for name, (lo, hi, n) in nl_tiers.items())
        + f"; e.g. {nl_qs[0]!r}")
    del df

    # ---- search
    gc.collect()
    search_store, search_bare, hits_store, hits_bare, mismatches = [], [], [], [], 0
    for i, (q, ns) in enumerate(queries):
        match = " ".join(f'"{w}"' for w in q.split())
        res = {}
        for who in (("store", "bare") if i % 2 == 0 else ("bare", "store")):
            t0 = time.perf_counter()
            if who == "store":
                res[who] = len(st.search_pages(q, scopes=[ns], mode="text", limit=20)["hits"])
            else:
                res[who] = len(bare.execute(BARE_SEARCH, (match, ns)).fetchall())
            dt = time.perf_counter() - t0
            if i >= 10:  # the first 10 queries warm up
                (search_store if who == "store" else search_bare).append(dt)
        if i >= 10:
            hits_store.append(res["store"])
            hits_bare.append(res["bare"])
            mismatches += res["store"] != res["bare"]
    log(f"  search: {len(search_store)} queries, hits per query store mean {statistics.mean(hits_store):.1f} "
        f"(zero-hit {sum(h == 0 for h in hits_store)}, full page of 20: {sum(h == 20 for h in hits_store)}), "
        f"bare mean {statistics.mean(hits_bare):.1f}; hit-count mismatches {mismatches}")

    # ---- natural-language questions (auto for three sessions, text for the owner) vs bare OR / AND
    nl_scope = used_scopes[len(used_scopes) // 2]
    sessions = nl_sessions(st, nl_scope)
    nl_rows = NL_ROWS
    nl_times: dict[str, list[float]] = {r: [] for r in nl_rows}
    nl_hits: dict[str, list[int]] = {r: [] for r in nl_rows}
    nl_spent = dict.fromkeys(nl_rows, 0.0)
    nl_skipped: set[str] = set()
    gc.collect()
    for i, q in enumerate(nl_qs):
        order = list(nl_rows) if i % 2 == 0 else list(reversed(nl_rows))
        for name in order:
            if name in nl_skipped:
                continue
            t0 = time.perf_counter()
            n_hits = nl_query(name, q, sessions, bare, nl_scope)
            dt = time.perf_counter() - t0
            nl_spent[name] += dt
            if i >= NL_WARMUP:
                nl_times[name].append(dt)
                nl_hits[name].append(n_hits)
            if nl_spent[name] > args.nl_budget and i >= NL_WARMUP:
                nl_skipped.add(name)
                log(f"  natural-language row {name!r} stopped after {len(nl_times[name])} questions "
                    f"({nl_spent[name]:.0f} s > --nl-budget {args.nl_budget:.0f} s)")
    log(f"  natural-language search: {len(nl_times['auto owner'])} timed questions (+{NL_WARMUP} warm-up), one-scope "
        f"session on {nl_scope}; mean hits " + ", ".join(
            f"{r} {statistics.mean(h):.1f}" for r, h in nl_hits.items() if h))

    # ---- read by id
    read_store, read_bare = [], []
    for i, k in enumerate(read_set):
        for who in (("store", "bare") if i % 2 == 0 else ("bare", "store")):
            t0 = time.perf_counter()
            if who == "store":
                r = st.read_pages([store_ids[k][0]])
                assert r["results"][0].get("revision")
                read_store.append(time.perf_counter() - t0)
            else:
                assert bare.execute(BARE_READ, (bare_page_id(k),)).fetchone() is not None
                read_bare.append(time.perf_counter() - t0)

    # ---- open + first page, fresh subprocess each time
    open_store, open_bare, import_store, import_bare = [], [], [], []
    probe_fingerprints: set = set()
    for i in range(args.probes):
        for who in (("store", "bare") if i % 2 == 0 else ("bare", "store")):
            r = run_probe(who, store_path if who == "store" else bare_path)
            assert r["hits"] == 50, r
            if who == "store" and r["fingerprint"] not in (fingerprint, *probe_fingerprints):
                log(f"  WARNING: store/ changed during the run; open probes now run {r['fingerprint']}")
            probe_fingerprints.add(r["fingerprint"])
            (open_store if who == "store" else open_bare).append(r["seconds"])
            (import_store if who == "store" else import_bare).append(r["import_seconds"])

    # ---- query plans of what the store runs (one representative call each)
    big = {"page", "revision", "relation", "provenance_input", "audit_event", "lifecycle_event", "suppression",
           "deleted_revision", "idempotency", "recommendation", "retraction", "revision_fts", "scope"}
    plan_sections = []
    with PlanCapture(st._db) as cap:
        q, ns = queries[10]
        st.search_pages(q, scopes=[ns], mode="text", limit=20)
    plan_sections.append(("store search_pages text", cap.plans()))
    with PlanCapture(st._db) as cap:
        st.search_pages("", mode="temporal", limit=50)
    plan_sections.append(("store search_pages temporal (first page)", cap.plans()))
    for who in ("owner", "one"):
        with PlanCapture(st._db) as cap:
            sessions[who].search_pages(nl_qs[NL_WARMUP], mode="auto", limit=20)
        plan_sections.append((f"store search_pages auto, natural-language question ({who})", cap.plans()))
    with PlanCapture(st._db) as cap:
        st.read_pages([store_ids[read_set[0]][0]])
    plan_sections.append(("store read_pages", cap.plans()))

    # ---- delete
    delete_store, delete_bare = [], []
    delete_plans = None
    for i, k in enumerate(delete_set):
        for who in (("store", "bare") if i % 2 == 0 else ("bare", "store")):
            if who == "store":
                if delete_plans is None and i == len(delete_set) - 1:
                    with PlanCapture(st._db) as cap:
                        t0 = time.perf_counter()
                        st.delete_page(store_ids[k][0], "benchmark delete")
                        delete_store.append(time.perf_counter() - t0)
                    delete_plans = cap.plans()
                else:
                    t0 = time.perf_counter()
                    st.delete_page(store_ids[k][0], "benchmark delete")
                    delete_store.append(time.perf_counter() - t0)
            else:
                t0 = time.perf_counter()
                bare_delete(bare, bare_page_id(k))
                delete_bare.append(time.perf_counter() - t0)
    plan_sections.append(("store delete_page (last delete, timed with tracing on)", delete_plans or []))
    sizes_after = {name: file_size(p) for name, p in (
        ("store_db", store_path), ("store_wal", Path(str(store_path) + "-wal")),
        ("bare_db", bare_path), ("bare_wal", Path(str(bare_path) + "-wal")))}

    st.close()
    bare.close()

    # ---- report
    ms = 1000.0

    def row(name, s, b, unit, fmt="{:,.1f}", target="", met=None):
        ratio = s / b if b else float("nan")
        verdict = "" if met is None else ("MET" if met else "NOT MET")
        log(f"  {name:<28} {fmt.format(s):>12} {fmt.format(b):>12} {unit:<6} {ratio:>7.2f}x   {target:<34} {verdict}")

    sp50, sp95, bp50, bp95 = (pct(search_store, .5) * ms, pct(search_store, .95) * ms,
                              pct(search_bare, .5) * ms, pct(search_bare, .95) * ms)
    op50, op95 = pct(open_store, .5) * ms, pct(open_store, .95) * ms
    dmax = max(delete_store) * ms
    log(f"\nResults: {N:,} pages, {S} scopes ({datetime.now().isoformat(timespec='seconds')}, "
        f"total wall {time.time() - started:,.0f} s)")
    log(f"  {'':<28} {'store':>12} {'bare':>12} {'':<6} {'store/bare':>8}  {'target':<34}")
    row("ingest throughput", ingest_store, ingest_bare, "pag/s", "{:,.0f}", ">= 0.5x bare", ingest_store >= 0.5 * ingest_bare)
    row("search p50", sp50, bp50, "ms", "{:,.2f}")
    row("search p95", sp95, bp95, "ms", "{:,.2f}", "<= 2x bare and < 20 ms", sp95 <= 2 * bp95 and sp95 < 20)
    nl = {r: (pct(t, .5) * ms, pct(t, .95) * ms) if t else (float("nan"), float("nan")) for r, t in nl_times.items()}
    for label, store_row, bare_row, target, ok in (
        ("NL auto owner", "auto owner", "bare or", "p95 <= 50 ms and <= bare OR",
         nl["auto owner"][1] <= 50 and nl["auto owner"][1] <= nl["bare or"][1]),
        ("NL auto 1 scope", "auto one", "bare or one", "p95 <= 50 ms and <= bare OR",
         nl["auto one"][1] <= 50 and nl["auto one"][1] <= nl["bare or one"][1]),
        ("NL auto project:*", "auto star", "bare or", "p95 <= 50 ms and <= bare OR",
         nl["auto star"][1] <= 50 and nl["auto star"][1] <= nl["bare or"][1]),
        ("NL text vs bare AND", "text owner", "bare and", "p95 <= 2x bare AND",
         nl["text owner"][1] <= 2 * nl["bare and"][1]),
    ):
        row(f"{label} p50", nl[store_row][0], nl[bare_row][0], "ms", "{:,.2f}")
        row(f"{label} p95", nl[store_row][1], nl[bare_row][1], "ms", "{:,.2f}", target, ok)
    row("read by id p50", pct(read_store, .5) * ms, pct(read_bare, .5) * ms, "ms", "{:,.3f}")
    row("read by id p95", pct(read_store, .95) * ms, pct(read_bare, .95) * ms, "ms", "{:,.3f}")
    row("delete p50", pct(delete_store, .5) * ms, pct(delete_bare, .5) * ms, "ms", "{:,.2f}")
    row("delete p95", pct(delete_store, .95) * ms, pct(delete_bare, .95) * ms, "ms", "{:,.2f}")
    row("delete max", dmax, max(delete_bare) * ms, "ms", "{:,.2f}", "every delete < 500 ms", dmax < 500)
    row("open + first page p50", op50, pct(open_bare, .5) * ms, "ms", "{:,.1f}")
    row("open + first page p95", op95, pct(open_bare, .95) * ms, "ms", "{:,.1f}", "< 300 ms", op95 < 300)
    row("  (import, not in open)", pct(import_store, .5) * ms, pct(import_bare, .5) * ms, "ms", "{:,.1f}")
    row("db file after ingest", sizes["store_db"] / 1e6, sizes["bare_db"] / 1e6, "MB")
    row("wal file after ingest", sizes["store_wal"] / 1e6, sizes["bare_wal"] / 1e6, "MB")
    row("db + wal after deletes", (sizes_after["store_db"] + sizes_after["store_wal"]) / 1e6,
        (sizes_after["bare_db"] + sizes_after["bare_wal"]) / 1e6, "MB")
    log(f"  samples: ingest {len(batch_store)} batches, search {len(search_store)} queries (+10 warm-up), "
        f"read {len(read_store)}, delete {len(delete_store)}, open {len(open_store)} subprocesses each; "
        f"link_pages p50 {pct(link_times, .5) * ms:.1f} ms / p95 {pct(link_times, .95) * ms:.1f} ms "
        f"({n_links:,} links, store only)")
    log("  natural-language rows: " + ", ".join(
        f"{r} {len(t)} q, {sum(h == 0 for h in nl_hits[r])} zero-hit" for r, t in nl_times.items()))
    log(f"  ingest batch time p50 store {pct(batch_store, .5) * ms:.0f} ms, bare {pct(batch_bare, .5) * ms:.0f} ms; "
        f"p95 store {pct(batch_store, .95) * ms:.0f} ms, bare {pct(batch_bare, .95) * ms:.0f} ms")
    log(f"  peak RSS of the benchmark process {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:,.0f} MB")

    log("\nQuery plans of the statements the store ran (EXPLAIN QUERY PLAN, expanded SQL):")
    warnings = []
    for title, plans in plan_sections:
        warnings += print_plans(title, plans, big)
    log("\nBare plans:")
    q, ns = queries[10]
    match = " ".join(f'"{w}"' for w in q.split())
    conn = bare_connect(bare_path)
    for title, sql, params in (("bare search", BARE_SEARCH, (match, ns)), ("bare read", BARE_READ, ("pg_1",)),
                               ("bare list", BARE_LIST, ())):
        log(f"  [{title}] " + " | ".join(r[3] for r in conn.execute("EXPLAIN QUERY PLAN " + sql, params)))
    conn.close()
    end_fingerprint = store_fingerprint()
    if end_fingerprint != fingerprint:
        log(f"\nWARNING: store/ changed on disk during the run: started with {fingerprint}, ended with "
            f"{end_fingerprint} (this process kept the code it imported at start).")
    if warnings:
        log("\nWARNING: query-plan problems in store statements:")
        for w in warnings:
            log(f"  {w}")

    if args.keep:
        log(f"\nkept {work}")
    else:
        shutil.rmtree(work, ignore_errors=True)
    return 0



def _syscr() -> int:
    """read() calls this process made so far (/proc/self/io): pages fetched by SQLite's pager, not mapped."""
    try:
        with open("/proc/self/io") as fh:
            for line in fh:
                if line.startswith("syscr"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def _other_cipher(path: Path, cipher: dict) -> None:
    """Make an empty encrypted store at `path` with other SQLCipher settings (a comparison row), keyed like
    pcp's own (a key file wrapped by $PCP_PASSPHRASE_FILE's passphrase)."""
    from store import Store, crypt, encryption

    src = path.with_name("empty-plain.db")
    Store.open(src).close()
    key = os.urandom(crypt.KEY_BYTES)
    conn = crypt.connect_raw(src, None)
    conn.execute("ATTACH DATABASE ? AS n KEY ?", (str(path), f"x'{key.hex()}'"))
    conn.execute(f"PRAGMA n.cipher_page_size = {int(cipher['page_size'])}")  # a new file: set before its first page
    conn.execute(f"PRAGMA n.cipher_hmac_algorithm = {cipher['hmac']}")
    conn.execute("SELECT sqlcipher_export('n')").fetchall()
    conn.execute(f"PRAGMA n.user_version = {int(conn.execute('PRAGMA main.user_version').fetchone()[0])}")
    conn.close()
    for side in (src, *(src.with_name(src.name + s) for s in ("-wal", "-shm"))):
        side.unlink(missing_ok=True)
    crypt.key_file(path).write_bytes(encryption._key_document(key, "benchmark passphrase", None))
    crypt.remember(path, key)


def _open_other(path: Path, cipher: dict):
    """Open a comparison store with its own SQLCipher settings (each connection is keyed with them)."""
    from store import Store, crypt

    saved = dict(crypt.CIPHER)
    crypt.CIPHER.update(cipher)  # only while Store.open makes its first connection
    try:
        st = Store.open(path)
    finally:
        crypt.CIPHER.update(saved)
    st._db.cipher = dict(cipher)  # the connections it makes later
    got = st._db.execute_sql("PRAGMA cipher_page_size").fetchone()[0]
    assert int(got) == int(cipher["page_size"]), (got, cipher)
    return st


def run_encrypted(args: argparse.Namespace) -> int:
    """--encrypted: a plain and an encrypted store (SQLCipher 4, raw 256-bit key) fed the same batches in the
    same run, taking turns, then the same natural-language questions (mode auto, the owner) on both.

    SQLCipher serves no memory-mapped reads for an encrypted file: the plain store's 2 GiB map is replaced by
    SQLite's page cache of decrypted pages. Question rows: plain as shipped (mapped), plain with the map off,
    encrypted as shipped (crypt.CIPHER: 32 KiB pages, HMAC-SHA256, 256 MB cache), the same with a
    --cipher-cache MB cache, and one row per --compare setting (PAGE_SIZE:HMAC, e.g. SQLCipher 4's defaults
    4096:HMAC_SHA512), each an encrypted store of its own fed the same batches (its ingest is reported too).
    Each row gives wall time (p50, p95), this thread's CPU time and the read() calls per question.
    """
    from store import Store, crypt, encryption

    N, S = args.pages, args.scopes
    scopes = [f"project:p{i:02d}" for i in range(S)]
    parent = Path(args.dir) if args.dir else None
    if parent:
        parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="store_bench_enc_", dir=parent))
    plain_path, enc_path = work / "plain" / "store.db", work / "enc" / "store.db"
    plain_path.parent.mkdir()
    enc_path.parent.mkdir()
    secret = work / "passphrase"
    secret.write_text("benchmark passphrase\n")
    secret.chmod(0o600)
    os.environ["PCP_PASSPHRASE_FILE"] = str(secret)
    cipher = crypt.driver()
    compare = []
    for spec in filter(None, (args.compare or "").split(",")):
        size, _, hmac_name = spec.partition(":")
        compare.append({"page_size": int(size), "hmac": hmac_name or "HMAC_SHA512"})
    log(f"pcp store benchmark --encrypted: {N:,} pages, {S} scopes, seed {args.seed}, batches of {BATCH}")
    cipher_version = cipher.connect(":memory:").execute("PRAGMA cipher_version").fetchone()[0]
    log(f"  python {platform.python_version()}, plain SQLite {sqlite_module().sqlite_version} "
        f"({sqlite_module().__name__}), SQLCipher {cipher_version} on SQLite {cipher.sqlite_version}, "
        f"{os.cpu_count()} CPUs, {platform.platform()}")
    compared = ", ".join(f"{c['page_size']} B {c['hmac']}" for c in compare) or "none"
    log(f"  as shipped: {crypt.CIPHER['page_size']} B pages, {crypt.CIPHER['hmac']}; compared: {compared}")
    log(f"  load average at start {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}; "
        f"started {datetime.now().isoformat(timespec='seconds')}; databases in {work}")
    Store.open(enc_path).close()
    t0 = time.perf_counter()
    encryption.encrypt(enc_path, passphrase="benchmark passphrase")
    log(f"  encrypted the empty store in {time.perf_counter() - t0:.2f} s (scrypt n=2^17 included)")
    crypt.forget()
    t0 = time.perf_counter()
    stores = {"plain": Store.open(plain_path), "encrypted": Store.open(enc_path)}
    log(f"  opened both ({time.perf_counter() - t0:.2f} s: one scrypt unwrap of the key)")
    others: dict[str, Path] = {}
    for c in compare:
        name = f"encrypted {c['page_size'] // 1024} KiB {c['hmac'].replace('HMAC_', '')}"
        path = work / name.replace(" ", "-") / "store.db"
        path.parent.mkdir()
        _other_cipher(path, c)
        stores[name] = _open_other(path, c)
        others[name] = path

    corpus = Corpus(args.seed)
    df: Counter = Counter()
    gen = corpus.batches(N, df)
    n_batches = -(-N // BATCH)
    runs = [(s * n_batches // S, (s + 1) * n_batches // S) for s in range(S)]
    spent = {who: 0.0 for who in stores}
    spent_cpu = {who: 0.0 for who in stores}  # this thread's CPU time: less sensitive to other processes
    written = 0
    for s, (a, b) in enumerate(runs):
        if b == a:
            continue
        batches = [next(gen) for _ in range(b - a)]
        items = [{"content": t} for batch in batches for t in batch]
        order = list(stores) if s % 2 == 0 else list(reversed(stores))
        for who in order:
            c0, t0 = time.thread_time(), time.perf_counter()
            stores[who].write_pages_bulk(iter(items), scopes[s], batch_size=BATCH)
            spent[who] += time.perf_counter() - t0
            spent_cpu[who] += time.thread_time() - c0
        written += len(items)
        log(f"  ingest {written:>10,}/{N:,}  " + "  ".join(f"{who} {written / spent[who]:,.0f} p/s" for who in stores)
            + f"  load {os.getloadavg()[0]:.2f}")
    questions, _ = nl_questions(corpus, df, N, args.nl_queries + NL_WARMUP, args.seed + 11)
    del df
    sizes = {"plain": file_size(plain_path), "encrypted": file_size(enc_path)}

    # Every row opens its store afresh, as a new process would: SQLite's cache starts empty (the one that
    # wrote the store still held the pages it wrote, decrypted), the OS keeps the files' blocks either way.
    for st in stores.values():
        st.close()
    variants = {
        "plain (mmap 2 GiB, as shipped)": Store.open(plain_path),
        "plain, mmap off": Store.open(plain_path),
        "encrypted (as shipped)": Store.open(enc_path),
        f"encrypted, {args.cipher_cache} MB cache": Store.open(enc_path),
        **{name: _open_other(others[name], c) for name, c in zip(others, compare, strict=True)},
    }
    variants["plain, mmap off"]._db.execute_sql("PRAGMA mmap_size = 0")
    variants[f"encrypted, {args.cipher_cache} MB cache"]._db.execute_sql(
        f"PRAGMA cache_size = {-1024 * args.cipher_cache}")
    names = list(variants)
    times: dict[str, list[float]] = {n: [] for n in names}
    cpu: dict[str, list[float]] = {n: [] for n in names}
    reads: dict[str, list[int]] = {n: [] for n in names}
    hits: dict[str, list[int]] = {n: [] for n in names}
    gc.collect()
    log(f"  questions start, load {os.getloadavg()[0]:.2f}")
    for i, q in enumerate(questions):
        order = names if i % 2 == 0 else list(reversed(names))
        for name in order:
            r0, c0, t0 = _syscr(), time.thread_time(), time.perf_counter()
            found = variants[name].search_pages(q, mode="auto", limit=20)["hits"]
            dt, dc, dr = time.perf_counter() - t0, time.thread_time() - c0, _syscr() - r0
            if i >= NL_WARMUP:
                times[name].append(dt)
                cpu[name].append(dc)
                reads[name].append(dr)
                hits[name].append(len(found))
    same = all(hits[n] == hits[names[0]] for n in names)
    log("")
    log(f"  {'':44} {'p50 ms':>7} {'p95 ms':>7} {'p95/plain':>9} {'CPU p50':>7} {'CPU p95':>7} "
        f"{'CPU p95/plain':>13} {'reads/q':>7}")
    base95, cbase95 = pct(times[names[0]], .95), pct(cpu[names[0]], .95)
    for name in names:
        p95, c95 = pct(times[name], .95), pct(cpu[name], .95)
        log(f"  {'question ' + name:44} {pct(times[name], .5) * 1000:>7.1f} {p95 * 1000:>7.1f} {p95 / base95:>8.2f}x "
            f"{pct(cpu[name], .5) * 1000:>7.1f} {c95 * 1000:>7.1f} {c95 / cbase95:>12.2f}x "
            f"{statistics.mean(reads[name]):>7.0f}")
    for who in stores:
        if who != "plain":
            log(f"  ingest {who}: {N / spent[who]:,.0f} p/s, {spent[who] / spent['plain']:.2f}x the plain store's "
                f"time ({N / spent['plain']:,.0f} p/s); CPU {spent_cpu[who]:,.1f} s, "
                f"{spent_cpu[who] / spent_cpu['plain']:.2f}x the plain store's ({spent_cpu['plain']:,.1f} s)")
    ratio_ingest = spent["encrypted"] / spent["plain"]
    ratio_search = pct(times[names[2]], .95) / base95
    log(f"  ingest, encrypted as shipped / plain: {ratio_ingest:.2f}x the time "
        f"(target <= 1.5x: {'met' if ratio_ingest <= 1.5 else 'NOT met'})")
    log(f"  question search p95, encrypted as shipped / plain as shipped: {ratio_search:.2f}x "
        f"(target <= 1.5x: {'met' if ratio_search <= 1.5 else 'NOT met'}); {len(times[names[0]])} questions, "
        f"same hits on every row: {same}")
    log(f"  files: plain {sizes['plain'] / 1e6:,.1f} MB, encrypted {sizes['encrypted'] / 1e6:,.1f} MB")
    log(f"  load average at end {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}; "
        f"ended {datetime.now().isoformat(timespec='seconds')}")
    for st in variants.values():
        st.close()
    # pcp encrypt on the plain store just measured: copy, verify, swap, overwrite the old file
    crypt.forget()
    t0 = time.perf_counter()
    encryption.encrypt(plain_path, passphrase="benchmark passphrase")
    log(f"  pcp encrypt of the plain store ({sizes['plain'] / 1e6:,.1f} MB): {time.perf_counter() - t0:,.1f} s "
        f"(load {os.getloadavg()[0]:.2f})")
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pages", type=int, default=1_000_000, help="pages to write (default 1,000,000)")
    parser.add_argument("--scopes", type=int, default=20, help="namespaces project:p00.. (default 20)")
    parser.add_argument("--queries", type=int, default=200, help="timed two-term text searches (default 200)")
    parser.add_argument("--nl-queries", type=int, default=100,
                        help="timed natural-language questions (default 100, +5 warm-up)")
    parser.add_argument("--nl-budget", type=float, default=600.0,
                        help="seconds one natural-language row may take before it stops (default 600)")
    parser.add_argument("--reads", type=int, default=200, help="timed reads by id (default 200)")
    parser.add_argument("--deletes", type=int, default=20, help="timed deletes (default 20)")
    parser.add_argument("--probes", type=int, default=10, help="fresh-process open + first page runs (default 10)")
    parser.add_argument("--links", type=int, default=2000, help="relations written with link_pages (default 2000)")
    parser.add_argument("--seed", type=int, default=7, help="corpus seed (default 7)")
    parser.add_argument("--dir", help="parent directory for the databases (default: system temp dir)")
    parser.add_argument("--keep", action="store_true", help="keep the databases")
    parser.add_argument("--encrypted", action="store_true",
                        help="a plain and an encrypted store side by side: ingest and question search (needs "
                             "pcp[encrypt])")
    parser.add_argument("--cipher-cache", type=int, default=32, metavar="MB",
                        help="with --encrypted: another page cache size for the encrypted store's last row")
    parser.add_argument("--compare", metavar="SIZE:HMAC,...", default="",
                        help="with --encrypted: more encrypted stores with other SQLCipher settings, fed the same "
                             "batches (e.g. 4096:HMAC_SHA512, SQLCipher 4's defaults)")
    parser.add_argument("--probe", nargs=2, metavar=("KIND", "PATH"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.probe:
        probe(*args.probe)
        return 0
    if args.pages < BATCH:
        parser.error(f"--pages must be at least {BATCH}")
    return run_encrypted(args) if args.encrypted else run(args)


if __name__ == "__main__":
    sys.exit(main())
