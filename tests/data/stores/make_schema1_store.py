"""Write tests/data/stores/schema1.db with the store code of commit 2f2b1a2 (schema 1, index `revision_fts`).

Run from the repository root (see README.md beside this file):

    rm -rf /tmp/pcp-old && mkdir -p /tmp/pcp-old && git archive 2f2b1a2 store ctxpack | tar -x -C /tmp/pcp-old
    PYTHONPATH=/tmp/pcp-old .venv/bin/python tests/data/stores/make_schema1_store.py tests/data/stores/schema1.db
"""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path

import store

PAGES = {
    "project:math": [
        ("Proof route for compactness of finite products via the tube lemma.",
         "We chose the tube lemma over Tychonoff for the finite case.", "2025-03-14T10:00:00Z"),
        ("此前对有限乘积紧致性的证明讨论……", "结论：用管引理证明两个紧空间的乘积是紧的。", "2025-03-20T09:30:00Z"),
        ("Compact operators on Hilbert spaces", "Spectral theorem notes; products of operators.", None),
        ("Finite fields and their products", "Galois fields, product rings and a route through the Frobenius map.",
         "2024-11-02T08:00:00Z"),
        ("Mixed notes: 紧致 spaces and the tube lemma", "A page mixing 中文 and English about compact spaces.", None),
    ],
    "work:notes": [
        ("Decision: ship the March release", "We decided last March to ship the release on Friday.",
         "2025-03-28T16:00:00Z"),
        ("Meeting notes on product routes", "Discussed shipping routes for the product catalogue.", None),
        ("会议记录：产品路线图", "讨论了产品路线和发布计划。", "2025-01-15T14:00:00Z"),
    ],
}


def main(out: Path) -> None:
    if out.exists():
        out.unlink()
    st = store.Store.open(out)
    assert st._db.execute_sql("SELECT value FROM meta WHERE key='schema_version'").fetchone()[0] == "1"
    st.create_scope("project:math", display_name="Mathematics")
    st.create_scope("work:notes", display_name="Work notes")
    written = {}
    for ns, pages in PAGES.items():
        for title, body, observed in pages:
            kwargs = {"observed_at": observed} if observed else {}
            r = st.write_page(ns, content=f"{title}\n\n{body}", media_type="text/markdown", **kwargs)
            written[title] = r
    # A revised page (two revisions, the old one superseded) and a relation.
    first = written["Compact operators on Hilbert spaces"]
    st.revise_page(first["page_id"], first["revision_id"],
                   content="Compact operators on Hilbert spaces\n\nSpectral theorem notes, revised: compact "
                           "self-adjoint operators.", media_type="text/markdown")
    st.link_pages(written["Mixed notes: 紧致 spaces and the tube lemma"]["page_id"], "related_to",
                  written["Proof route for compactness of finite products via the tube lemma."]["page_id"])
    # A tombstoned page that holds the example question's words.
    gone = st.write_page("project:math", content="Withdrawn: compactness of finite products, a wrong proof route.",
                         media_type="text/markdown")
    st.tombstone_page(gone["page_id"], "the proof was wrong")
    st.close()
    con = sqlite3.connect(out)
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.execute("PRAGMA journal_mode=delete")
    con.execute("PRAGMA page_size=1024")  # small enough to vendor
    con.execute("VACUUM")
    con.close()
    for extra in (out.with_name(out.name + "-wal"), out.with_name(out.name + "-shm")):
        if extra.exists():
            extra.unlink()


if __name__ == "__main__":
    main(Path(sys.argv[1]))
