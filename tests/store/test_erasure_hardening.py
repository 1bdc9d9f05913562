"""Issue 12, erasure that holds: readers never stall a delete (item 27), every Unicode category is sealed (item 26)."""

from __future__ import annotations

import pytest

import random

import pcpstore_helpers as h
from pcpstore_helpers import sqlite3


def _windows(erased: list[str], remaining: list[str]) -> set[bytes]:
    keep: set[bytes] = set()
    for t in remaining:
        keep |= h.windows(t.encode("utf-8")) | h.windows(t.casefold().encode("utf-8"))
    gone: set[bytes] = set()
    for t in erased:
        gone |= h.windows(t.encode("utf-8")) | h.windows(t.casefold().encode("utf-8"))
    return gone - keep


# --- item 27: a reader's snapshot never stalls a delete; the WAL erasure finishes later -------------------


def test_delete_beside_a_reader_is_pending_then_done(db_path):
    from store import Store

    st = Store.open(db_path)
    other = Store.open(db_path)
    rng = random.Random(27)
    secret, kept = h.random_text(rng, 3000), h.random_text(rng, 800)
    victim = h.write(st, "project:res", secret)
    h.write(st, "project:res", kept)
    # The old code waited this whole timeout in its checkpoint, holding every writer up, then gave up silently.
    st._db.execute_sql("PRAGMA busy_timeout = 3000")
    reader = sqlite3.connect(str(db_path))
    try:
        reader.execute("BEGIN")
        assert reader.execute("SELECT COUNT(*) FROM revision").fetchone()[0] == 2  # a snapshot, like a running export
        receipt = st.delete_page(victim["page_id"], "erase it")
        assert receipt["wal_erasure"] == "pending"
        other.write_page("project:res", content="another writer is not held up")  # and nothing waits on the reader
        for store in (st, other):
            assert store.doctor()["pending_erasures"] == [receipt["receipt_id"]]
            assert store.list_receipts()["receipts"][0]["wal_erasure"] == "pending"
    finally:
        reader.rollback()
        reader.close()
    other.list_scopes()  # the next store call after the reader is gone finishes the checkpoint
    assert st.list_receipts()["receipts"][0]["wal_erasure"] == "done"
    assert st.doctor()["pending_erasures"] == []
    problems = h.find_residue(h.files_beside(db_path), _windows([secret], [kept]))
    assert problems == [], f"erased content still on disk while the store is open: {problems}"
    # with no reader the receipt is done at once
    again = h.write(st, "project:res", h.random_text(rng, 500))
    assert st.delete_page(again["page_id"], "erase")["wal_erasure"] == "done"
    other.close()
    st.close()


def test_pcp_doctor_and_delete_say_an_erasure_is_pending(db_path):
    import os
    import subprocess
    import sys
    from pathlib import Path

    from store import Store

    repo = Path(__file__).resolve().parents[2]
    env = {**{k: v for k, v in os.environ.items() if k != "PCP_DB"}, "PYTHONIOENCODING": "utf-8", "COLUMNS": "200"}

    def pcp(*args: str) -> str:
        done = subprocess.run([sys.executable, "-m", "pcp_tui.cli", "--db", str(db_path), *args], capture_output=True,
                              text=True, encoding="utf-8", env=env, cwd=repo, timeout=120)
        assert done.returncode == 0, done.stderr
        return done.stdout

    with Store.open(db_path) as st:
        first = h.write(st, "project:res", "first page to erase")
        second = h.write(st, "project:res", "second page to erase")
    reader = sqlite3.connect(str(db_path))
    try:
        reader.execute("BEGIN")
        reader.execute("SELECT COUNT(*) FROM revision").fetchone()
        shown = pcp("delete", first["page_id"], "--reason", "erase", "--yes")
        assert "WAL erasure pending" in shown
        assert "pending in the WAL" in pcp("doctor")
        pcp("delete", second["page_id"], "--reason", "erase", "--yes")
    finally:
        reader.rollback()
        reader.close()
    assert "pending in the WAL" not in pcp("doctor")


# --- item 26: erasure holds for text of every Unicode general category -----------------------------------

CATEGORIES = ("Lu", "Ll", "Lt", "Lm", "Lo", "Mn", "Mc", "Me", "Nd", "Nl", "No", "Pc", "Pd", "Ps", "Pe", "Pi", "Pf",
              "Po", "Sm", "Sc", "Sk", "So", "Zs", "Zl", "Zp", "Cc", "Cf", "Co", "Cn")  # Cs: see below


def _by_category() -> dict[str, list[str]]:
    import sys
    import unicodedata

    out: dict[str, list[str]] = {c: [] for c in CATEGORIES}
    for code in range(sys.maxunicode + 1):
        cat = unicodedata.category(chr(code))
        if cat in out and code != 0 and len(out[cat]) < 4000:
            out[cat].append(chr(code))
    return out


def _category_text(chars: list[str], rng: random.Random, base: str) -> str:
    """Words of one category alone, glued to letters, after a base letter (marks), 16 to 48 characters long."""
    words = []
    for i in range(60):
        word = "".join(rng.choice(chars) for _ in range(rng.randint(16, 48)))
        if i % 3 == 1:
            word = base + word + base
        elif i % 3 == 2:
            word = "".join(base + c for c in word[:24])
        words.append(word)
    return " ".join(words)


@pytest.mark.slow
def test_erasure_holds_for_every_unicode_category(db_path):
    from store import Store

    chars = _by_category()
    assert all(chars[c] for c in CATEGORIES), [c for c in CATEGORIES if not chars[c]]
    rng = random.Random(26)
    st = Store.open(db_path)
    keeper = "keeper page with plain words that stay"
    h.write(st, "project:keep", keeper)
    st.delete_page(h.write(st, "project:keep", "warm up the delete path")["page_id"], "warm up")
    before: set[bytes] = set()
    for f in h.files_beside(db_path):
        data = f.read_bytes()
        before |= {data[i:i + 16] for i in range(len(data) - 15)}
    written = {}
    for cat in CATEGORIES:
        base = "e" if cat.startswith("M") else ""
        text = _category_text(chars[cat], rng, base)
        title = "".join(rng.choice(chars[cat]) for _ in range(24))
        written[cat] = (h.write(st, f"project:{cat.lower()}", text,
                                facets={"title": f"T{title}", "summary": text[:300], "keywords": [title]}),
                        [text, title])
    # The files' 16-byte windows are read once per phase; each category's erased windows are looked up in them.
    def on_disk() -> dict[bytes, str]:
        present: dict[bytes, str] = {}
        for f in h.files_beside(db_path):
            data = f.read_bytes()
            present.update(dict.fromkeys(h.windows(data), f.name))
        return present

    # sanity: the text is in the files before deletion, for every category
    present = on_disk()
    for cat, (_, texts) in written.items():
        assert (_windows(texts, [keeper]) - before) & present.keys(), cat
    for cat, (page, _) in written.items():
        st.delete_page(page["page_id"], f"erase {cat}")
    present = on_disk()
    problems = {}
    for cat, (_, texts) in written.items():
        found = sorted((present[w], w) for w in (_windows(texts, [keeper]) - before) & present.keys())
        if found:
            problems[cat] = found[:5]
    assert problems == {}, f"erased text still on disk: {problems}"
    st.close()
