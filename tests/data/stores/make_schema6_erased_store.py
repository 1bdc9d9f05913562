"""Write tests/data/stores/schema6-erased.db with the store code of commit 38964af (schema 6, the
`contentless_delete=1` index), after deleting pages there: the blocks of its index still hold the
erased pages' terms (issue 28), which the schema 7 upgrade must leave nowhere.

Run from the repository root (see README.md beside this file):

    rm -rf /tmp/pcp-38964af && mkdir -p /tmp/pcp-38964af && git archive 38964af store ctxpack | tar -x -C /tmp/pcp-38964af
    PYTHONPATH=/tmp/pcp-38964af .venv/bin/python -S tests/data/stores/make_schema6_erased_store.py \
        tests/data/stores/schema6-erased.db
    (-S, with the venv's site-packages on PYTHONPATH too, when this checkout is installed editable: the old
    code must be the one imported)
"""

from __future__ import annotations

import random
import sqlite3
import sys
from pathlib import Path

import store

# Made-up words: the erased pages' own terms (the tests look for them), and the kept pages' own.
ERASED_WORDS = ("quorvexil", "zembratic", "plimsodyne", "vorquallen", "hestrimund", "drubellox", "smarnifel",
                "yostravine", "kelpmarund", "wibberzant")
KEPT_WORDS = ("tandorelle", "mistrovane", "borkilund", "fennastrip", "glovantine", "ruddimorg")
COMMON = "the river stone lantern meadow copper violet harbor ember quartz willow signal orbit".split()


def text(rng: random.Random, own: tuple[str, ...], n: int) -> str:
    return " ".join(rng.choice(own) if rng.random() < 0.3 else rng.choice(COMMON) for _ in range(n))


def main(out: Path) -> None:
    if out.exists():
        out.unlink()
    rng = random.Random(28)
    st = store.Store.open(out)
    assert st._db.execute_sql("SELECT value FROM meta WHERE key='schema_version'").fetchone()[0] == "6"
    for _ in range(30):
        st.write_page("project:kept", content=text(rng, KEPT_WORDS, 40))
    victim = st.write_page("project:kept", content=text(rng, ERASED_WORDS[:5], 60),
                           facets={"title": f"{ERASED_WORDS[0]} {ERASED_WORDS[1]} notes"})
    st.revise_page(victim["page_id"], victim["revision_id"], content=text(rng, ERASED_WORDS[:5], 60))
    for _ in range(4):
        st.write_page("project:gone", content=text(rng, ERASED_WORDS[5:], 50))
    for _ in range(10):
        st.write_page("project:kept", content=text(rng, KEPT_WORDS, 40))
    st.delete_page(victim["page_id"], "erase one page")
    st.delete_scope("project:gone", "erase a scope")
    st.close()
    con = sqlite3.connect(out)
    con.execute("PRAGMA journal_mode=DELETE")
    con.execute("PRAGMA page_size=1024")
    con.execute("VACUUM")  # small to vendor; VACUUM copies the index's blocks as they are
    con.execute("PRAGMA journal_mode=WAL")
    con.close()


if __name__ == "__main__":
    main(Path(sys.argv[1]))
