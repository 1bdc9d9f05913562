"""`pcp import codex`: Codex CLI rollout files over vendored real files (tests/data/agents/SOURCES.md).

Three format versions: 0.77.0 (`codex_exec`, instructions in `session_meta`), 0.125.0 (`codex-tui`,
`base_instructions`, web search and `apply_patch` custom tool calls) and 0.128.0-alpha (Codex Desktop,
user turns as `event_msg` only); the 2025 format without an envelope is pinned on a small file
written here in its documented shape.
"""

from __future__ import annotations

import pytest

import json
from pathlib import Path

import import_helpers as h
from store.adapters.codex import import_codex

HOME = Path(__file__).resolve().parents[1] / "data" / "agents" / "codex" / "codemie-code"
TUI = "019e1625-789d-76c0-80ab-3724b5ddb799"
TUI_FILE = HOME / "sessions" / "2026" / "05" / "11" / f"rollout-2026-05-11T11-26-55-{TUI}.jsonl"
DESKTOP = "019e1695-0522-7c83-8b39-0dd379793f80"
EXEC = "019b7f94-51b4-7593-922e-ba12b5b73b52"
TUI_NS = f"agent:codex:Users/Sample_User/repos/codemie-ai/codemie-code:{TUI}"


def _records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _f(page: dict) -> dict:
    return page["facets"]


def _session(store, ns: str) -> tuple[dict, list[dict]]:
    pages = h.pages(store, [ns], projections=("manifest", "relations", "payload", "facets"))
    conv = next(p for p in pages if "role" not in _f(p))
    return conv, [p for p in pages if "role" in _f(p)]


def _ordered(messages: list[dict]) -> list[dict]:
    """Messages in thread order (each follows the one it responds to)."""
    ids = {p["revision"]["page_id"] for p in messages}
    after = {t: p for p in messages for t in h.outgoing(p, "responds_to") if t in ids}
    node = next(p for p in messages if not set(h.outgoing(p, "responds_to")) & ids)
    out = [node]
    while node["revision"]["page_id"] in after:
        node = after[node["revision"]["page_id"]]
        out.append(node)
    return out


def _ns(store, sid: str) -> str:
    return next(ns for ns in h.scopes(store) if ns.endswith(sid))


def _turns(path: Path) -> list[tuple[str, str]]:
    out = []
    for r in _records(path):
        p = r["payload"]
        if r["type"] == "response_item" and p["type"] == "message":
            text = "\n\n".join(c["text"] for c in p["content"] if "text" in c)
            out.append((p["role"], text))
    return out


def test_one_page_per_prompt_and_per_answer_scaffolding_skipped(store):
    report = import_codex(store, HOME)
    turns = _turns(TUI_FILE)
    real = [(r, t) for r, t in turns if r != "developer" and not t.startswith(("# AGENTS.md", "<environment"))]
    assert [r for r, _ in turns].count("assistant") == 13 and len(real) == 15  # 2 prompts, 13 answers
    conv, messages = _session(store, TUI_NS)
    assert sorted(p["revision"]["payload"]["content"].split("\n\n---\nThinking")[0] for p in messages) == sorted(
        t for _, t in real)
    assert len([p for p in messages if _f(p)["role"] == "user"]) == 2
    f = _f(conv)
    assert f["cwd"] == "/Users/Sample_User/repos/codemie-ai/codemie-code"
    assert (f["codex_version"], f["originator"], f["model"]) == ("0.125.0", "codex-tui", "gpt-5.5")
    assert conv["title"] == "show tools"
    skipped = {s["item"]: s["reason"] for s in report.skipped}
    assert skipped[f"codex session {TUI}: 2 scaffolding (injected instructions, environment, permissions) "
                   "record(s)"].startswith("injected context")
    assert f"codex session {TUI}: 25 reasoning (encrypted only) record(s)" in skipped
    assert report.conversations == 3 and report.messages == 15 + 6 + 1
    assert not any("# AGENTS.md instructions" in p["revision"]["payload"]["content"] for p in messages)


def test_threading_is_linear_from_the_first_prompt(store):
    import_codex(store, TUI_FILE)
    conv, messages = _session(store, TUI_NS)
    by_id = {p["revision"]["page_id"]: p for p in messages}
    roots = [p for p in messages if not h.outgoing(p, "responds_to")]
    assert [r["title"] for r in roots] == ["user: show tools"]
    chain, node = [], roots[0]
    while node is not None:
        chain.append(node)
        kids = [by_id[i] for i in h.incoming(node, "responds_to") if i in by_id]
        assert len(kids) <= 1
        node = kids[0] if kids else None
    assert len(chain) == len(messages) == 15
    times = [p["revision"]["observed_at"] for p in chain]
    assert times == sorted(times) and times[0].startswith("2026-05-11")
    assert set(h.outgoing(conv, "contains")) == set(by_id)


def test_tool_traffic_is_a_facet_and_with_tools_pages_decoded(store, tmp_path):
    import_codex(store, HOME)
    _, messages = _session(store, TUI_NS)
    tools = [t for p in messages for t in _f(p).get("tool_calls", [])]
    assert {t["name"] for t in tools} >= {"exec_command", "apply_patch", "web_search"}
    assert len(tools) == 99 + 3 + 3 and all(t["input_chars"] > 0 for t in tools)
    assert not [p for p in messages if _f(p)["role"] == "tool"]
    from store import Store
    with Store.open(tmp_path / "tools.db") as other:
        import_codex(other, HOME, with_tools=True)
        _, with_tools = _session(other, _ns(other, TUI))
        tool_pages = [p for p in with_tools if _f(p)["role"] == "tool"]
        assert len(tool_pages) == 2 * (99 + 3) + 3  # a call and a result each; web searches have no output line
        patch = next(p for p in tool_pages if _f(p).get("tool") == "apply_patch" and "Tool call" in
                     p["revision"]["payload"]["content"])
        assert "*** Begin Patch\n*** Update File:" in patch["revision"]["payload"]["content"]
        _, exec_pages = _session(other, _ns(other, EXEC))
        result = next(p for p in exec_pages if _f(p).get("tool") == "shell" and "Tool call" not in
                      p["revision"]["payload"]["content"] and p["revision"]["payload"]["content"].startswith("docs/AGENTS.md"))
        assert result["revision"]["payload"]["content"] == "docs/AGENTS.md\n"  # the JSON wrapper is decoded


def test_desktop_file_takes_prompts_from_events(store):
    import_codex(store, HOME)
    conv, messages = _session(store, _ns(store, DESKTOP))
    users = [p for p in _ordered(messages) if _f(p)["role"] == "user"]
    assert len(users) == 3 and len(messages) == 6
    assert "My request for Codex:" in users[0]["revision"]["payload"]["content"]
    assert _f(conv)["originator"] == "Codex Desktop"


def test_reimport_is_idempotent(store):
    first = import_codex(store, HOME, with_tools=True)
    count = h.page_count(store)
    again = import_codex(store, HOME, with_tools=True)
    assert first.created == count and (again.created, again.revised) == (0, 0) and again.unchanged == count


def test_a_grown_session_adds_only_what_is_new(store, tmp_path):
    lines = TUI_FILE.read_text().splitlines(keepends=True)
    cut = next(i for i, line in enumerate(lines) if i > 100 and json.loads(line)["type"] == "response_item"
               and json.loads(line)["payload"].get("role") == "assistant") + 1
    target = tmp_path / TUI_FILE.name
    target.write_text("".join(lines[:cut]) + lines[cut][: len(lines[cut]) // 2])
    part = import_codex(store, target)
    assert any("incomplete last line" in s["reason"] for s in part.skipped)
    target.write_text("".join(lines))
    full = import_codex(store, target)
    assert (full.revised, full.unchanged) == (0, part.created)
    assert part.created + full.created == h.page_count(store) == 16


def test_a_fork_imports_copied_history_once(store, tmp_path):
    recs = _records(TUI_FILE)
    forked = "019e9999-0000-7000-8000-000000000001"
    copy = [dict(r, timestamp=r["timestamp"].replace("2026-05-11", "2026-05-12")) for r in recs]
    copy[0] = {**copy[0], "payload": {**copy[0]["payload"], "id": forked, "forked_from_id": TUI}}
    copy.append({"timestamp": "2026-05-12T12:00:00.000Z", "type": "response_item", "payload": {
        "type": "message", "role": "user", "content": [{"type": "input_text", "text": "Now do it another way"}]}})
    (tmp_path / TUI_FILE.name).write_text(TUI_FILE.read_text())
    (tmp_path / f"rollout-2026-05-12T00-00-00-{forked}.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in copy))
    report = import_codex(store, tmp_path)
    assert report.created == 16 + 2  # the fork adds its page and its one new prompt
    assert any("duplicate (history copied by a fork)" in s["item"] for s in report.skipped)
    conv, messages = _session(store, _ns(store, forked))
    assert _f(conv)["forked_from"] == TUI and len(messages) == 1
    parent = h.outgoing(messages[0], "responds_to")
    assert h.read(store, parent, projections=("manifest",))[0]["revision"]["namespace"] == TUI_NS


GIT_SYNC = HOME.parent / "entireio-git-sync" / "sessions" / "2026" / "04" / "11"
SPAWNER = "019d7d08-46c9-7f73-affe-4e6ca9852d56"
SPAWNED = "019d7e2f-0041-7310-951c-94020254dfc9"


def test_a_real_fork_keeps_its_own_session_though_it_copies_the_source_meta(store):
    """Codex 0.118 writes a spawned agent's file as its own `session_meta`, then the source's `session_meta`
    and history copied: the first meta names the session, the copied one is history (it was read last and
    merged the fork into its source's session, one of the two files dropped as a duplicate)."""
    report = import_codex(store, GIT_SYNC)
    assert not any("the same session in another file" in s["item"] for s in report.skipped)
    conv, messages = _session(store, _ns(store, SPAWNED))
    assert _f(conv)["forked_from"] == SPAWNER
    spawner_turns = _turns(GIT_SYNC / f"rollout-2026-04-11T14-53-07-{SPAWNER}.jsonl")
    fork_turns = _turns(GIT_SYNC / f"rollout-2026-04-11T20-15-02-{SPAWNED}.jsonl")
    assert fork_turns[:len(spawner_turns)] == spawner_turns  # the copied history, imported once (by the source)
    new = [t for role, t in fork_turns[len(spawner_turns):] if role == "assistant"]
    assert [p["revision"]["payload"]["content"] for p in _ordered(messages)] == new
    first = next(p for p in messages if p["revision"]["payload"]["content"] == new[0])
    source_ns = _ns(store, SPAWNER)
    assert h.read(store, h.outgoing(first, "responds_to"), projections=("manifest",))[0]["revision"]["namespace"] \
        == source_ns


def test_the_2025_format_without_an_envelope(store, tmp_path):
    sid = "5973b6c0-94b8-487b-a530-2aeb6098ae0e"
    lines = [
        {"id": sid, "timestamp": "2025-08-02T10:00:00.000Z", "instructions": None,
         "git": {"commit_hash": "abc", "branch": "main", "repository_url": "https://example.org/r.git"}},
        {"record_type": "state"},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text":
            "<environment_context>\n  <cwd>/home/user/legacy</cwd>\n</environment_context>"}]},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Rename the module"}]},
        {"record_type": "state"},
        {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "Looking for imports"}],
         "content": None, "encrypted_content": "gAAAA"},
        {"type": "function_call", "name": "shell", "arguments": "{\"command\":[\"rg\",\"old_name\"]}",
         "call_id": "call_1"},
        {"type": "function_call_output", "call_id": "call_1", "output": "{\"output\":\"a.py\\n\"}"},
        {"type": "brand_new_item", "x": 1},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Renamed in a.py."}]},
    ]
    path = tmp_path / f"rollout-2025-08-02T10-00-00-{sid}.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in lines))
    report = import_codex(store, path)
    ns = f"agent:codex:home/user/legacy:{sid}"
    conv, messages = _session(store, ns)
    messages = _ordered(messages)
    assert [(_f(p)["role"], p["title"]) for p in messages] == [
        ("user", "user: Rename the module"), ("assistant", "assistant: Renamed in a.py.")]
    answer = messages[1]["revision"]["payload"]["content"]
    assert "Thinking:\n\nLooking for imports" in answer
    assert _f(messages[1])["tool_calls"] == [{"name": "shell", "input_chars": len("command: [\"rg\", \"old_name\"]"),
                                             "result_chars": 5}]
    assert (_f(conv)["cwd"], _f(conv)["git_branch"]) == ("/home/user/legacy", "main")
    assert any("brand_new_item" in s["item"] for s in report.skipped)


@pytest.mark.slow
def test_sigkill_mid_import_leaves_whole_sessions_only(tmp_path):
    folder = tmp_path / "sessions"
    folder.mkdir()
    lines = [line for line in TUI_FILE.read_text().splitlines() if json.loads(line)["type"] == "session_meta" or (
        json.loads(line)["type"] == "response_item" and json.loads(line)["payload"]["type"] in ("message", "function_call"))]
    body = "\n".join(lines) + "\n"
    for n in range(120):
        sid = f"00000000-0000-7000-8000-{n:012d}"
        (folder / f"rollout-2026-05-11T00-00-00-{sid}.jsonl").write_text(
            body.replace(TUI, sid).replace("/Users/Sample_User/repos", f"/Users/u/p{n}"))
    # Each session is in a project of its own: units are the source's scope, then a project's and its session's.
    after = h.kill_mid_import(tmp_path / "kill.db", "codex", "import_codex", folder, "agent:codex:%:%", stop_unit=9)
    assert len(after) == 3 and set(after.values()) == {16}  # three whole sessions: a page and its 15 messages
    grouped = h.import_in_one_group_killed(tmp_path / "group.db", "codex", "import_codex", folder, "agent:codex:%:%")
    assert grouped == {}  # a stop inside a group of units leaves none of the group

