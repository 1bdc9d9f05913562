#!/usr/bin/env python3
"""SQLCipher settings compared on a store kept by `store_bench.py --encrypted --keep` (questions only).

    python bench/encrypted_settings.py KEPT_DIR OUT_DIR [--pages N] [--questions N] [--plain-only]

KEPT_DIR is the folder `store_bench.py --encrypted --keep` printed (its enc/store.db, wrapped by the bench's
passphrase). The encrypted store is exported (sqlcipher_export) to a plain copy, one with 16 KiB pages and
HMAC-SHA256 and one with SQLCipher 4's defaults (4 KiB, HMAC-SHA512) in OUT_DIR; then the bench's questions
(the same seed, so the same questions for N pages) are asked of each, every store opened afresh, in turn.
Building a 1,000,000-page store once per setting would take hours on a shared machine; an export takes a
minute. `--plain-only` compares only the plain copy with the encrypted store as shipped (the bench's own
question rows, re-timed on a quiet machine).
"""

import gc
import os
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import store_bench as sb  # noqa: E402

from store import Store, crypt  # noqa: E402

work = Path(sys.argv[1])
out = Path(sys.argv[2])
out.mkdir(exist_ok=True)
PAGES = int(sys.argv[sys.argv.index("--pages") + 1]) if "--pages" in sys.argv else 1_000_000
enc = work / "enc" / "store.db"
key = crypt.unwrap(crypt.read_key_doc(crypt.key_file(enc)), enc, "benchmark passphrase")
print("load at start", os.getloadavg(), time.strftime("%H:%M:%S"), flush=True)
PLAIN_ONLY = "--plain-only" in sys.argv
QUESTIONS = int(sys.argv[sys.argv.index("--questions") + 1]) if "--questions" in sys.argv else 100
targets = {"plain": None, "e16k_sha256": (16384, "HMAC_SHA256"), "e4k_sha512": (4096, "HMAC_SHA512")}
if PLAIN_ONLY:
    targets = {"plain": None}
for name, cfg in targets.items():
    path = out / f"{name}.db"
    if path.exists():
        continue
    t0 = time.perf_counter()
    c = crypt.connect_raw(enc, key)
    if cfg is None:
        c.execute("ATTACH DATABASE ? AS n KEY ''", (str(path),))
    else:
        c.execute("ATTACH DATABASE ? AS n KEY ?", (str(path), f"x'{key.hex()}'"))
        c.execute(f"PRAGMA n.cipher_page_size = {cfg[0]}")
        c.execute(f"PRAGMA n.cipher_hmac_algorithm = {cfg[1]}")
    c.execute("SELECT sqlcipher_export('n')").fetchall()
    c.execute(f"PRAGMA n.user_version = {c.execute('PRAGMA main.user_version').fetchone()[0]}")
    c.execute("DETACH DATABASE n")
    c.close()
    print(f"exported {name} in {time.perf_counter() - t0:.0f} s, load {os.getloadavg()[0]:.2f}", flush=True)
corpus = sb.Corpus(7)
df: Counter = Counter()
for _ in corpus.batches(PAGES, df):
    pass
questions, _ = sb.nl_questions(corpus, df, PAGES, QUESTIONS + sb.NL_WARMUP, 7 + 11)
del df
print("questions made", time.strftime("%H:%M:%S"), flush=True)
crypt.remember(enc, key)
rows = {"plain (mmap, as shipped)": lambda: Store.open(out / "plain.db"),
        "encrypted 32 KiB SHA256 (as shipped)": lambda: Store.open(enc)}
def other(name, cfg):
    p = out / f"{name}.db"
    crypt.key_file(p).write_text("{}")
    crypt.remember(p, key)
    saved = dict(crypt.CIPHER)
    crypt.CIPHER.update({"page_size": cfg[0], "hmac": cfg[1]})  # only while Store.open connects
    try:
        st = Store.open(p)
    finally:
        crypt.CIPHER.update(saved)
    st._db.cipher = {"page_size": cfg[0], "hmac": cfg[1]}
    return st
stores = {n: f() for n, f in rows.items()}
if not PLAIN_ONLY:
    stores["encrypted 16 KiB SHA256"] = other("e16k_sha256", (16384, "HMAC_SHA256"))
    stores["encrypted 4 KiB SHA512 (SQLCipher defaults)"] = other("e4k_sha512", (4096, "HMAC_SHA512"))
names = list(stores)
T: dict = {n: [] for n in names}
C: dict = {n: [] for n in names}
R: dict = {n: [] for n in names}
H: dict = {n: [] for n in names}
print("questions start, load", os.getloadavg()[0], time.strftime("%H:%M:%S"), flush=True)
gc.collect()
for i, q in enumerate(questions):
    for n in (names if i % 2 == 0 else list(reversed(names))):
        r0, c0, t0 = sb._syscr(), time.thread_time(), time.perf_counter()
        hits = stores[n].search_pages(q, mode="auto", limit=20)["hits"]
        dt, dc, dr = time.perf_counter() - t0, time.thread_time() - c0, sb._syscr() - r0
        if i >= sb.NL_WARMUP:
            T[n].append(dt)
            C[n].append(dc)
            R[n].append(dr)
            H[n].append([h["page_id"] for h in hits])
b95, c95 = sb.pct(T[names[0]], .95), sb.pct(C[names[0]], .95)
for n in names:
    print(f"{n:44} p50 {sb.pct(T[n], .5)*1000:7.1f} p95 {sb.pct(T[n], .95)*1000:7.1f} {sb.pct(T[n], .95)/b95:5.2f}x  "
          f"CPU p50 {sb.pct(C[n], .5)*1000:6.1f} p95 {sb.pct(C[n], .95)*1000:6.1f} {sb.pct(C[n], .95)/c95:5.2f}x  reads/q {statistics.mean(R[n]):6.0f}")
print("same hits:", all(H[n] == H[names[0]] for n in names))
print("load at end", os.getloadavg(), time.strftime("%H:%M:%S"), flush=True)
