"""Write tests/data/stores/schema7-dated.db with the store code of commit 771a418 (schema 7: the index
deletes a row with the values it was written with; no event dates beside the text), holding imported
conversations whose messages tell of days relative to when they were said ("yesterday", "last Friday",
"上周"), and one such page erased there. The schema 8 upgrade must derive the dates of every revision.

Run from the repository root (see README.md beside this file):

    rm -rf /tmp/pcp-771a418 && mkdir -p /tmp/pcp-771a418 && git archive 771a418 store ctxpack | tar -x -C /tmp/pcp-771a418
    PYTHONPATH=/tmp/pcp-771a418:.venv/lib/python3.11/site-packages .venv/bin/python -S \
        tests/data/stores/make_schema7_dated_store.py tests/data/stores/schema7-dated.db
"""

from __future__ import annotations

import json
import sqlite3
import sys
import tempfile
from datetime import datetime, timezone
from pathlib import Path

import store
from store.adapters import import_chatgpt

# (conversation id, day said, turns): the first turn of each tells of another day.
CONVERSATIONS = [
    ("dated-1", (2023, 10, 4), ["Yesterday I met some painters in Lisbon at the harbour market.",
                                "That sounds lovely, who were they?",
                                "Two sculptors and a muralist, we talked for hours.",
                                "Thanks for telling me, talk soon!"]),
    ("dated-2", (2023, 6, 10), ["Last Friday we adopted a kitten called Pebble.",
                                "Congratulations! How is Pebble settling in?",
                                "She sleeps on the piano all day.",
                                "Bye for now!"]),
    ("dated-3", (2024, 3, 6), ["上周我们去杭州看了西湖。", "好的，谢谢！", "下次一起去吧。"]),
    ("dated-4", (2023, 11, 20), ["Two weeks ago I ran my first half marathon by the river.",
                                 "Great time? What was your pace?",
                                 "Slow but steady, and the weather held."]),
]
ERASED = ("Yesterday the quorvantle bakery closed for good.", "2022-02-02T09:00:00Z")


def export(path: Path) -> Path:
    items = []
    for conv_id, (y, m, d), turns in CONVERSATIONS:
        start = datetime(y, m, d, 15, tzinfo=timezone.utc).timestamp()
        mapping: dict[str, dict] = {"root": {"id": "root", "message": None, "parent": None, "children": []}}
        parent = "root"
        for i, text in enumerate(turns):
            node = f"{conv_id}-m{i}"
            mapping[node] = {"id": node, "parent": parent, "children": [], "message": {
                "id": node, "author": {"role": "user" if i % 2 == 0 else "assistant"},
                "create_time": start + i, "content": {"content_type": "text", "parts": [text]}}}
            mapping[parent]["children"].append(node)
            parent = node
        items.append({"id": conv_id, "conversation_id": conv_id, "title": f"Chat {conv_id}", "create_time": start,
                      "mapping": mapping, "current_node": parent})
    path.write_text(json.dumps(items), encoding="utf-8")
    return path


def main(out: Path) -> None:
    if out.exists():
        out.unlink()
    st = store.Store.open(out)
    assert st._db.execute_sql("SELECT value FROM meta WHERE key='schema_version'").fetchone()[0] == "7"
    with tempfile.TemporaryDirectory() as tmp:
        import_chatgpt(st, export(Path(tmp) / "export.json"), namespace="chat:dated")
    gone = st.write_page("notes:dated", content=ERASED[0], observed_at=ERASED[1])
    st.write_page("notes:dated", content="Last week the library moved to the old mill.",
                  observed_at="2023-09-13T08:00:00Z")
    st.delete_page(gone["page_id"], "erased under schema 7")
    st.close()
    con = sqlite3.connect(out)
    con.execute("PRAGMA journal_mode=DELETE")
    con.execute("PRAGMA page_size=1024")
    con.execute("VACUUM")
    con.execute("PRAGMA journal_mode=WAL")
    con.close()


if __name__ == "__main__":
    main(Path(sys.argv[1]))
