"""The ranking's statistics stay exactly what a fresh count over the stored revisions gives.

Scores are computed from per-scope term counts (store/index.py); if an operation forgot to move
them, a session's scores would drift (or, worse, carry counts from pages it cannot see). Every
kind of change is applied here and the tables are compared with a recount from the revisions.
"""

from __future__ import annotations

import pcpstore_helpers as h

from store import index


def test_statistics_follow_every_change(store):
    a = h.write(store, "project:a", "Proof route for compactness of finite products", facets={"summary": "tube lemma"})
    b = h.write(store, "project:a", "此前对有限乘积紧致性的证明讨论 with mixed words")
    c = h.write(store, "project:b", "A page in another scope about products")
    store.write_pages_bulk(({"content": f"bulk page {i} about compactness"} for i in range(30)), "project:b")
    assert h.stored_stats(store) == h.recounted_stats(store)

    store.revise_page(a["page_id"], a["revision_id"], payload={"content": "Revised route: products are compact"})
    store.tombstone_page(b["page_id"], "withdrawn")
    assert h.stored_stats(store) == h.recounted_stats(store)
    store.untombstone_page(b["page_id"], "back")
    store.archive_page(c["page_id"], "old")
    assert h.stored_stats(store) == h.recounted_stats(store)

    store.tombstone_page(c["page_id"], "withdrawn")
    store.delete_page(c["page_id"], "erase", cascade=False)
    store.delete_page(a["page_id"], "erase", cascade=False)
    assert h.stored_stats(store) == h.recounted_stats(store)

    store.delete_scope("project:b", "erase the scope")
    assert h.stored_stats(store) == h.recounted_stats(store)
    assert all(s != "project:b" for s in [r[0] for r in store._db.execute_sql("SELECT namespace FROM scope")])


def test_a_tombstoned_page_leaves_the_statistics(store):
    h.write(store, "project:a", "ordinary words here")
    t = h.write(store, "project:a", "zanzibarite is a word only this page has")
    key = index.analyse("", "zanzibarite", {}, store._ctx.index_salt).body[0]
    count = "SELECT COALESCE(SUM(df), 0) FROM term_stat WHERE term = ?"
    assert store._db.execute_sql(count, (key,)).fetchone()[0] == 1
    store.tombstone_page(t["page_id"], "withdrawn")
    assert store._db.execute_sql(count, (key,)).fetchone()[0] == 0
