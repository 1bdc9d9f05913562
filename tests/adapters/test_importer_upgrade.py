"""Issue 15 point 7: re-importing after an importer upgrade stays idempotent.

tests/data/stores/main-69a0c76.db is what main's importers (before this upgrade) wrote from the
repository's own fixtures (tests/data/stores/README.md). Re-importing the same files with today's
importers writes at most one new revision per page, only for pages whose text, facets or refs
really change under the new rules, and each such revision names the importer upgrade."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from store import Store
from store.adapters import import_chatgpt, import_claude, import_claude_code

DATA = Path(__file__).resolve().parents[1] / "data"
OLD = DATA / "stores" / "main-69a0c76.db"

# file -> (created, revised, unchanged) when re-imported into the old store
EXPECTED = {
    "chatgpt-0xsalt-chatgpt_conversation_extractor-1.json": (0, 1, 24),  # the conversation's update_time
    "chatgpt-Sinity-polylogue-1.json": (0, 2, 6),
    "chatgpt-danny-avila-LibreChat-1.json": (0, 4, 8),
    "chatgpt-danny-avila-LibreChat-2.json": (0, 1, 2),
    "chatgpt-danny-avila-LibreChat-3.json": (1, 2, 6),  # + the empty conversation, now kept
    "claude-osteele-claude-chat-viewer-1.json": (0, 2, 6),
    "claude-osteele-claude-chat-viewer-2-api-variant.json": (0, 1, 4),
    "claude-simonw-claude-to-sqlite-1.json": (0, 2, 1),
    "claude-simonw-claude-to-sqlite-2.json": (0, 2, 19),
    "claude-code": (0, 5, 81),  # titles of thinking-only messages: their first line, not the `---` rule
}


def _import(st, name):
    if name == "claude-code":
        return import_claude_code(st, DATA / "agents" / "claude-code" / "kfischer-okarin")
    importer = import_chatgpt if name.startswith("chatgpt") else import_claude
    return importer(st, DATA / "exports" / name)


def test_reimport_after_the_upgrade_revises_only_what_really_changed(tmp_path):
    db = tmp_path / "old.db"
    shutil.copy(OLD, db)
    with Store.open(db) as st:
        before = st._db.execute_sql("SELECT COUNT(*) FROM revision").fetchone()[0]
        got = {}
        for name in EXPECTED:
            r = _import(st, name)
            got[name] = (r.created, r.revised, r.unchanged)
        assert got == EXPECTED
        rows = st._db.execute_sql(
            "SELECT r.page_id, r.seq, r.content, r.facets, r.source_refs, r.provenance FROM revision r "
            "ORDER BY r.page_id, r.seq").fetchall()
        by_page: dict[int, list[tuple]] = {}
        for row in rows:
            by_page.setdefault(row[0], []).append(row)
        revised = {pk: revs for pk, revs in by_page.items() if len(revs) > 1}
        assert len(revised) == sum(r for _, r, _ in EXPECTED.values())
        assert all(len(revs) == 2 for revs in revised.values())  # at most one new revision per page
        created = sum(c for c, _, _ in EXPECTED.values())
        assert len(rows) == before + len(revised) + created
        for old, new in revised.values():
            assert old[2:5] != new[2:5]  # the text, facets or refs really differ
            event = json.loads(new[5])[0]
            assert event["tool_or_model"].startswith("pcp-import-") and ": importer upgrade from " in \
                event["tool_or_model"] and event["tool_or_model"].endswith("/1")
        again = {name: _import(st, name) for name in EXPECTED}
        assert all((r.created, r.revised) == (0, 0) for r in again.values())  # and then nothing


def test_a_change_under_the_same_rules_names_no_upgrade(store, tmp_path):
    data = json.loads((DATA / "exports" / "chatgpt-danny-avila-LibreChat-3.json").read_text())
    path = tmp_path / "c.json"
    path.write_text(json.dumps(data))
    import_chatgpt(store, path)
    data[0]["mapping"]["user-2"]["message"]["content"]["parts"] = ["And if the rollback fails too?"]
    path.write_text(json.dumps(data))
    assert import_chatgpt(store, path).revised == 1
    page = store.source_page_id("chatgpt:6b0f0d9c-0000-4000-8000-000000000001:user-2")
    history = store.read_pages([page], projections=("history",))["results"][0]
    revs = [store.read_pages([h["revision_id"]])["results"][0]["revision"] for h in history["history"]]
    assert sorted(r["provenance"][0]["tool_or_model"] for r in revs) == ["pcp-import-chatgpt/2"] * 2
