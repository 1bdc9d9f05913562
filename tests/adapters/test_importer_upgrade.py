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
    "claude-osteele-claude-chat-viewer-2-api-variant.json": (0, 3, 2),  # + 2 answers whose <antThinking> is thinking now
    "claude-simonw-claude-to-sqlite-1.json": (0, 2, 1),
    "claude-simonw-claude-to-sqlite-2.json": (0, 12, 9),  # + 10 answers whose <antThinking> is thinking now
    # titles of thinking-only messages: their first line, not the `---` rule; the interrupt marker and the
    # local command's output are no pages under the agent rules 3 (issue 29): tombstoned, not upserted
    "claude-code": (0, 5, 79),
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


# --- issue 29: the agent importers' rules 3 over a store main's agent importers (rules 2) wrote ---

AGENTS_OLD = DATA / "stores" / "main-38964af-agents.db"


def test_agent_reimport_revises_what_the_old_rules_got_wrong_and_says_so(tmp_path):
    from test_agent_transcripts import IMPORTERS, READERS, check_points

    db = tmp_path / "old.db"
    shutil.copy(AGENTS_OLD, db)
    with Store.open(db) as st:
        sql = st._db.execute_sql
        revisions_before = sql("SELECT MAX(id) FROM revision").fetchone()[0]
        events_before = sql("SELECT COALESCE(MAX(id), 0) FROM lifecycle_event").fetchone()[0]
        reports = {tool: IMPORTERS[tool](st, DATA / "agents" / tool) for tool in sorted(IMPORTERS)}
        for tool in IMPORTERS:  # the upgraded store holds what a fresh import under the new rules holds
            check_points(st, tool)
        # Each revision the re-import wrote names the upgrade, at most one per page, and really changes it.
        new = sql("SELECT page_id, content, facets, provenance FROM revision WHERE id > ?",
                  (revisions_before,)).fetchall()
        revised = [r for r in new if sql("SELECT COUNT(*) FROM revision WHERE page_id = ?", (r[0],)).fetchone()[0] > 1]
        assert len(revised) == sum(r.revised for r in reports.values()) > 0
        assert len({r[0] for r in revised}) == len(revised)
        for page, content, facets, provenance in revised:
            before = sql("SELECT content, facets FROM revision WHERE page_id = ? AND id <= ? ORDER BY id DESC LIMIT 1",
                         (page, revisions_before)).fetchone()
            assert (content, facets) != tuple(before)
            tool = json.loads(provenance)[0]["tool_or_model"]
            assert tool.endswith("/3: importer upgrade from " + tool.split("/")[0] + "/2"), tool
        # The pages made of injected text are tombstoned (reversible), each named in the report.
        tombstoned = sql("SELECT p.page_id, r.content, e.reason FROM lifecycle_event e JOIN page p ON p.id = e.page_id "
                         "JOIN revision r ON r.id = p.head WHERE e.id > ? AND e.to_status = 'tombstoned'",
                         (events_before,)).fetchall()
        injected = {t.strip() for tool in READERS for t in READERS[tool]().injected}
        assert tombstoned and all(content.strip() in injected for _, content, _ in tombstoned)
        assert all("importer upgrade to pcp-import-" in reason for _, _, reason in tombstoned)
        said = [s for r in reports.values() for s in r.skipped if s["reason"].startswith("tombstoned (importer upgrade")]
        assert len(said) == len(tombstoned)
        retracted = [s for r in reports.values() for s in r.skipped if s["reason"].startswith("retracted (importer")]
        assert retracted  # the links to the pages now tombstoned, drawn by the old rules
        # And a second run changes nothing.
        again = {tool: IMPORTERS[tool](st, DATA / "agents" / tool) for tool in IMPORTERS}
        assert all((r.created, r.revised) == (0, 0) for r in again.values())
        assert not [s for r in again.values() for s in r.skipped if "importer upgrade" in s["reason"]]
