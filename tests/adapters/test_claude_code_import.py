"""`pcp import claude-code`: Claude Code sessions over vendored real files (tests/data/agents/SOURCES.md).

The fixture project (Claude Code 2.0.74, kfischer-okarin/scripts-and-tools) is one main session
with five branches (checkpoint reverts), a Task subagent and warmup subagents, summaries in other
files, a /clear session and snapshot-only files; its own README.md tells the story.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import import_helpers as h
from store.adapters.agents import project_slug, session_namespace
from store.adapters.claude_code import import_claude_code

PROJECT = Path(__file__).resolve().parents[1] / "data" / "agents" / "claude-code" / "kfischer-okarin"
MAIN = "b3edadab-bca0-4054-9b41-f7ffa6941260"
MAIN_FILE = PROJECT / "-Users-user-project" / f"{MAIN}.jsonl"
NS = f"agent:claude-code:Users/user/project:{MAIN}"  # the cwd /Users/user/project, case kept


def _records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _facets(result: dict) -> dict:
    return result["facets"]


def _by_role(results: list[dict], role: str) -> list[dict]:
    return [r for r in results if _facets(r).get("role") == role]


def _main_pages(store) -> list[dict]:
    return h.pages(store, [NS], projections=("manifest", "relations", "payload", "facets"))


def _main_thread(store) -> list[dict]:
    """The main thread's pages (the session's namespace also holds its subagent logs)."""
    pages = _main_pages(store)
    conv = next(p for p in pages if _facets(p).get("session_id") == MAIN and "role" not in _facets(p)
                and not _facets(p).get("subagent"))
    contained = set(h.outgoing(conv, "contains"))
    return [p for p in pages if p["revision"]["page_id"] in contained]


def test_one_page_per_prompt_and_per_assistant_message(store):
    import_claude_code(store, PROJECT)
    recs = _records(MAIN_FILE)
    prompts = [r for r in recs if r["type"] == "user" and (isinstance(r["message"]["content"], str) or not all(
        b.get("type") == "tool_result" for b in r["message"]["content"]))]
    markers = [r for r in prompts if "[Request interrupted by user]" in json.dumps(r["message"]["content"])]
    answered = {r["message"]["id"] for r in recs if r["type"] == "assistant"
                and any(b.get("type") == "text" or b.get("type") == "thinking" and b["thinking"].strip()
                        for b in r["message"]["content"])}
    # 5 messages are thinking + a tool call, no text; the interrupt marker is Claude Code's, not a prompt
    assert (len(prompts), len(markers), len(answered)) == (10, 1, 15)
    pages = _main_pages(store)
    main = [p for p in pages if _facets(p).get("session_id") == MAIN and "role" not in _facets(p)
            and not _facets(p).get("subagent")]
    assert len(main) == 1
    conv = main[0]
    contained = set(h.outgoing(conv, "contains"))
    messages = [p for p in pages if p["revision"]["page_id"] in contained and "role" in _facets(p)]
    assert len(_by_role(messages, "user")) == 9
    assert len(_by_role(messages, "assistant")) == 15
    # cwd and branch are facets, the summary of the latest leaf (from another file) and the title too
    f = _facets(conv)
    assert f["cwd"] == "/Users/user/project"
    assert f["summary"] == "Testing file creation, editing, and agent task handling"
    assert conv["title"] == "Testing file creation, editing, and agent task handling"
    assert all(p["revision"]["observed_at"].startswith("2025-12-20") for p in messages)


def test_split_assistant_messages_are_merged_with_the_last_usage(store):
    import_claude_code(store, PROJECT)
    recs = [r for r in _records(MAIN_FILE) if r["type"] == "assistant"]
    by_id: dict[str, list[dict]] = {}
    for r in recs:
        by_id.setdefault(r["message"]["id"], []).append(r)
    assert len(recs) == 32 and len(by_id) == 15  # every message of this file was written as 2+ records
    assistant = _by_role(_main_thread(store), "assistant")
    ids = [_facets(p)["message_id"] for p in assistant]
    assert len(ids) == len(set(ids)) == 15
    for page in assistant:
        parts = by_id[_facets(page)["message_id"]]
        assert _facets(page)["usage"]["output_tokens"] == parts[-1]["message"]["usage"]["output_tokens"]
        for part in parts:
            for block in part["message"]["content"]:
                if block.get("type") == "text":
                    assert block["text"] in page["revision"]["payload"]["content"]


def test_threading_follows_parent_uuid_and_keeps_every_branch(store):
    import_claude_code(store, PROJECT)
    messages = [p for p in _main_thread(store) if _facets(p).get("role") in ("user", "assistant")]
    ids = {p["revision"]["page_id"]: p for p in messages}
    roots = [p for p in messages if not h.outgoing(p, "responds_to")]
    assert [r["title"] for r in roots] == ["user: Hello I want to have some test conversation with you create some file for me"]
    assert all(len(h.outgoing(p, "responds_to")) == 1 for p in messages if p not in roots)
    # The README's fork point: the checkpoint reverts made three branches answer the Task agent's report.
    children = {pid: [r for r in h.incoming(p, "responds_to") if r in ids] for pid, p in ids.items()}
    fork = max(children, key=lambda pid: len(children[pid]))
    starts = sorted(ids[c]["title"] for c in children[fork])
    assert len(starts) == 3
    assert any("Ok make another addition" in t for t in starts)
    assert any("Ok I came from the future" in t for t in starts)
    assert any("Ok in the future some new content" in t for t in starts)


def test_subagent_logs_are_linked_not_mixed(store):
    import_claude_code(store, PROJECT)
    pages = _main_pages(store)
    conv = next(p for p in pages if _facets(p).get("session_id") == MAIN and "role" not in _facets(p)
                and not _facets(p).get("subagent"))
    subs = [p for p in pages if _facets(p).get("subagent")]
    task = next(p for p in subs if _facets(p).get("agent_id") == "a434715")
    assert task["revision"]["page_id"] in h.outgoing(conv, "contains")
    task_messages = set(h.outgoing(task, "contains"))
    assert task_messages and not task_messages & set(h.outgoing(conv, "contains"))
    agent_recs = _records(PROJECT / "-Users-user-project" / "agent-a434715.jsonl")
    assert {r["sessionId"] for r in agent_recs} == {MAIN}
    texts = [p["revision"]["payload"]["content"] for p in pages if p["revision"]["page_id"] in task_messages]
    assert any("Added by Task Agent" in t or "append" in t.lower() for t in texts)


def test_other_record_types_are_reported_and_tool_traffic_is_a_facet(store):
    report = import_claude_code(store, PROJECT).to_dict()
    reasons = {s["item"]: s["reason"] for s in report["skipped"]}
    assert f"claude-code session {MAIN}: 10 file-history-snapshot record(s)" in reasons
    assert any("tool call(s)" in item for item in reasons)
    pages = _main_pages(store)
    assert not _by_role(pages, "tool")
    tools = [t for p in pages for t in _facets(p).get("tool_calls", [])]
    assert {t["name"] for t in tools} >= {"Write", "Edit", "Task"}
    assert all(t["input_chars"] > 0 for t in tools)
    assert any(t.get("result_chars", 0) > 0 for t in tools)
    assert not any("test-file.txt" in p["revision"]["payload"]["content"] and "Tool call" in
                   p["revision"]["payload"]["content"] for p in pages)


def test_with_tools_stores_calls_and_results_decoded(store):
    import_claude_code(store, PROJECT, with_tools=True)
    tool_pages = _by_role(_main_thread(store), "tool")
    calls = [p for p in tool_pages if "Tool call" in p["revision"]["payload"]["content"]]
    results = [p for p in tool_pages if p not in calls]
    recs = _records(MAIN_FILE)
    uses = [b for r in recs if r["type"] == "assistant" for b in r["message"]["content"] if b["type"] == "tool_use"]
    outs = [b for r in recs if r["type"] == "user" and isinstance(r["message"]["content"], list)
            for b in r["message"]["content"] if b.get("type") == "tool_result"]
    assert (len(calls), len(results)) == (len(uses), len(outs)) == (7, 7)
    write = next(p for p in calls if _facets(p)["tool"] == "Write")
    content = write["revision"]["payload"]["content"]
    assert "This is a test file created by Claude.\n\nHello from the conversation!" in content
    assert "\\n" not in content
    for r in results:  # each result answers its call
        targets = h.outgoing(r, "responds_to")
        assert targets and any(t in {c["revision"]["page_id"] for c in calls} for t in targets)
    hit = store.search_pages("conversation", scopes=[NS], mode="text", limit=50)["hits"]
    assert any(x["page_id"] == write["revision"]["page_id"] for x in hit)


def test_reimport_is_idempotent(store):
    first = import_claude_code(store, PROJECT, with_tools=True)
    count = h.page_count(store)
    again = import_claude_code(store, PROJECT, with_tools=True)
    assert first.created == count and again.created == 0 and again.revised == 0
    assert again.unchanged == first.created and h.page_count(store) == count


def test_a_grown_session_adds_only_what_is_new(store, tmp_path):
    project = tmp_path / "-Users-user-project"
    project.mkdir()
    lines = MAIN_FILE.read_text().splitlines(keepends=True)
    # cut after a complete turn: the record before a user prompt
    cut = next(i for i, line in enumerate(lines) if i > 20 and json.loads(line)["type"] == "user"
               and isinstance(json.loads(line)["message"]["content"], str))
    target = project / MAIN_FILE.name
    target.write_text("".join(lines[:cut]) + lines[cut][: len(lines[cut]) // 2])  # and half a line being written
    part = import_claude_code(store, project)
    assert any("incomplete last line" in s["reason"] for s in part.skipped)
    target.write_text("".join(lines))
    full = import_claude_code(store, project)
    # Only the session page changes: the summary record arrived with the new lines. No message is revised.
    assert full.revised == 1
    assert full.unchanged == part.created - 1
    revised = store._db.execute_sql("SELECT r.facets FROM revision r WHERE r.seq > 1").fetchall()
    assert len(revised) == 1 and "summary" in json.loads(revised[0][0])
    assert part.created + full.created == h.page_count(store)
    assert full.created > 0


def test_a_resumed_session_imports_copied_history_once(store, tmp_path):
    project = tmp_path / "-Users-user-project"
    project.mkdir()
    recs = _records(MAIN_FILE)
    shutil.copy(MAIN_FILE, project / MAIN_FILE.name)
    turns = [r for r in recs if r["type"] in ("user", "assistant")]
    resumed = "11111111-2222-4333-8444-555555555555"
    copied = [dict(r, sessionId=resumed) for r in turns]  # the whole history, same uuids, new session id
    last = copied[-1]["uuid"]
    new = [
        {**turns[0], "sessionId": resumed, "uuid": "aaaaaaaa-0000-4000-8000-000000000001", "parentUuid": last,
         "timestamp": "2025-12-21T10:00:00.000Z", "message": {"role": "user", "content": "Picking up after resume"}},
    ]
    (project / f"{resumed}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in copied + new))
    report = import_claude_code(store, project)
    alone = tmp_path / "alone"
    (alone / project.name).mkdir(parents=True)
    shutil.copy(MAIN_FILE, alone / project.name / MAIN_FILE.name)
    from store import Store
    with Store.open(tmp_path / "alone.db") as other:
        base = import_claude_code(other, alone).created
    # the resumed session adds its conversation page and its one new prompt, nothing copied twice
    assert report.created == base + 2
    assert any("duplicate" in s["item"] for s in report.skipped)
    ns = session_namespace("claude-code", "Users/user/project", resumed)
    pages = h.pages(store, [ns], projections=("manifest", "relations", "facets"))
    prompt = next(p for p in pages if _facets(p).get("role") == "user")
    parent = h.outgoing(prompt, "responds_to")
    assert len(parent) == 1
    assert h.read(store, parent, projections=("manifest",))[0]["revision"]["namespace"] == NS


def test_namespace_slug_is_bounded_and_the_cwd_is_kept(store, tmp_path):
    long_cwd = "/home/someone/" + "/".join(f"very-long-folder-name-{i}" for i in range(12))
    slug = project_slug(long_cwd, "x")
    assert len(slug) <= 100 and slug != project_slug(long_cwd + "-other", "x")
    ns = session_namespace("claude-code", slug, MAIN)
    assert len(ns) <= 200
    project = tmp_path / "p"
    project.mkdir()
    recs = [dict(r, cwd=long_cwd) for r in _records(MAIN_FILE)]
    (project / MAIN_FILE.name).write_text("".join(json.dumps(r) + "\n" for r in recs))
    import_claude_code(store, project)
    assert ns in h.scopes(store)
    conv = next(p for p in h.pages(store, [ns], projections=("manifest", "facets")) if "role" not in _facets(p))
    assert _facets(conv)["cwd"] == long_cwd


def test_unknown_records_and_bad_lines_never_fail(store, tmp_path):
    project = tmp_path / "p"
    project.mkdir()
    lines = MAIN_FILE.read_text().splitlines()
    odd = [lines[0], '{"type":"brand-new-kind","x":1}', "not json", "[1,2]",
           json.dumps({**json.loads(lines[1]), "someNewField": {"a": 1}}), *lines[2:]]
    (project / MAIN_FILE.name).write_text("\n".join(odd) + "\n")
    report = import_claude_code(store, project)
    assert report.messages >= 20
    assert any("2 line(s) that are not JSON objects" in s["reason"] for s in report.skipped)
    assert any("brand-new-kind" in s["item"] for s in report.skipped)


def _many_sessions(folder: Path, count: int) -> int:
    """`count` copies of the main session with fresh ids (a real file's shape, many times)."""
    text = MAIN_FILE.read_text()
    uuids = sorted({r[k] for r in _records(MAIN_FILE) for k in ("uuid", "parentUuid") if r.get(k)})
    for n in range(count):
        body = text.replace(MAIN, f"00000000-0000-4000-8000-{n:012d}")
        for i, u in enumerate(uuids):
            body = body.replace(u, f"{n:08x}-{i:04x}-4000-8000-000000000000")
        (folder / f"00000000-0000-4000-8000-{n:012d}.jsonl").write_text(body)
    return count


@pytest.mark.slow
def test_sigkill_mid_import_leaves_whole_sessions_only(tmp_path):
    project = tmp_path / "-Users-user-project"
    project.mkdir()
    sessions = _many_sessions(project, 150)
    after = h.kill_mid_import(tmp_path / "kill.db", "claude_code", "import_claude_code", project,
                              "agent:claude-code:%:%")
    assert sessions > 3 and len(after) == 3
    assert set(after.values()) == {25}  # each session is whole: its page and its 24 messages
    grouped = h.import_in_one_group_killed(tmp_path / "group.db", "claude_code", "import_claude_code", project,
                                           "agent:claude-code:%:%")
    assert grouped == {}  # a stop inside a group of units leaves none of the group


@pytest.mark.parametrize("name", ["0d3b22c1-ba90-4fd3-b8d2-056ffc626725.jsonl"])
def test_one_file_can_be_imported(store, name):
    report = import_claude_code(store, PROJECT / "-Users-user-project" / name)
    assert report.conversations == 1
    assert any("isMeta" in s["item"] for s in report.skipped)


def test_a_message_over_the_payload_limit_is_left_out_alone(store, tmp_path):
    """One message the store refuses (over the payload limit) is named in the report; the rest of its
    session lands, and the reply after it links to the message before it."""
    from store import LIMITS

    project = tmp_path / "-Users-u-big"
    project.mkdir()
    base = {"sessionId": "big-session", "cwd": "/Users/u/big", "type": "user", "isSidechain": False}
    records = [
        {**base, "uuid": "u1", "parentUuid": None, "timestamp": "2026-01-01T00:00:00.000Z",
         "message": {"role": "user", "content": "please read the whole log"}},
        {**base, "type": "assistant", "uuid": "a1", "parentUuid": "u1", "timestamp": "2026-01-01T00:00:01.000Z",
         "message": {"id": "msg_1", "role": "assistant", "content": [
             {"type": "text", "text": "log line\n" * (LIMITS["max_payload_chars"] // 9 + 10)}]}},
        {**base, "uuid": "u2", "parentUuid": "a1", "timestamp": "2026-01-01T00:00:02.000Z",
         "message": {"role": "user", "content": "thanks, now summarise it"}},
    ]
    (project / "big-session.jsonl").write_text("\n".join(json.dumps(r) for r in records) + "\n")
    report = import_claude_code(store, project)
    refused = [s for s in report.skipped if "message a1" in s["item"]]
    assert len(refused) == 1 and "limit" in refused[0]["reason"], report.skipped
    assert report.messages == 2
    pages = {_facets(p).get("message_key"): p for p in h.pages(store, projections=("manifest", "relations", "facets"))
             if _facets(p).get("role")}
    assert set(pages) == {"u1", "u2"}
    assert h.outgoing(pages["u2"], "responds_to") == [pages["u1"]["revision"]["page_id"]]


def test_a_line_that_is_not_utf8_is_refused_alone(store, tmp_path):
    """The file is decoded once; when one line is not UTF-8 the others still come in, that one is counted."""
    project = tmp_path / "-Users-u-mixed"
    project.mkdir()
    base = {"sessionId": "mixed", "cwd": "/Users/u/mixed", "type": "user", "isSidechain": False}
    good = [json.dumps({**base, "uuid": f"u{i}", "parentUuid": f"u{i - 1}" if i else None,
                        "timestamp": f"2026-01-01T00:00:0{i}.000Z",
                        "message": {"role": "user", "content": f"prompt number {i} with café"}}).encode()
            for i in range(3)]
    (project / "mixed.jsonl").write_bytes(b"\n".join([good[0], b'{"type": "user", "x": "caf\xe9"}', *good[1:]]) + b"\n")
    report = import_claude_code(store, project)
    assert report.messages == 3
    assert any("1 line(s) that are not JSON objects" in s["reason"] for s in report.skipped), report.skipped
    assert h.hits(store, query="café prompt", mode="text")
