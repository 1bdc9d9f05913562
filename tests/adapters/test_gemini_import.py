"""`pcp import gemini`: Gemini CLI sessions (tests/data/agents/SOURCES.md).

Two real one-JSON-per-session files (codemie-ai/codemie-code), and the newer JSON Lines shape
derived from one of them by tests/data/agents/gemini/derived/make_jsonl.py in the record sequence
Gemini CLI's ChatRecordingService writes: rewritten messages, `$set`, a `/rewind` and a compression.
"""

from __future__ import annotations

import pytest

import json
import re
import shutil
from pathlib import Path

import import_helpers as h
from store.adapters.gemini import import_gemini

DATA = Path(__file__).resolve().parents[1] / "data" / "agents" / "gemini"
REAL = DATA / "codemie-code"
DERIVED = DATA / "derived"
HASH = "907f20644716c92a8309a8b7c1ceec79d422233ff220b7fdb8772b360bd8273f"
OPS = "37b7abef-713d-4522-85f0-8ff15a4e6d17"
OPS_JSON = REAL / "tmp" / HASH / "chats" / "session-2026-01-16T11-01-file-ops-37b7abef.json"
OPS_JSONL = DERIVED / "tmp" / HASH / "chats" / "session-2026-01-16T11-01-37b7abef.jsonl"
HI = "5b959dae-8655-4cd1-b10f-720b8c336ea2"
HI_JSON = next((REAL / "tmp").glob("*/chats/session-2025-12-01T21-45-5b959dae.json"))
OPS_NS = f"agent:gemini:{HASH}~a8ac4376ff:{OPS}"  # no cwd: the folder and a digest of its name


def _f(p: dict) -> dict:
    return p["facets"]


def _session(store, ns: str) -> tuple[dict, list[dict]]:
    pages = h.pages(store, [ns], projections=("manifest", "relations", "payload", "facets"))
    conv = next(p for p in pages if "role" not in _f(p))
    return conv, [p for p in pages if "role" in _f(p)]


def _by_key(messages: list[dict]) -> dict[str, dict]:
    return {_f(p)["message_key"]: p for p in messages}


def test_one_json_per_session_counts_and_thoughts(store):
    report = import_gemini(store, REAL)
    data = json.loads(HI_JSON.read_text())
    kinds = [m["type"] for m in data["messages"]]
    assert (kinds.count("user"), kinds.count("gemini")) == (3, 11)
    conv, messages = _session(store, next(ns for ns in h.scopes(store) if ns.endswith(HI)))
    assert len([p for p in messages if _f(p)["role"] == "user"]) == 3
    assert len([p for p in messages if _f(p)["role"] == "assistant"]) == 11  # 8 are thoughts + a tool call
    assert conv["title"] == "hi" and _f(conv)["project_hash"] == data["projectHash"]
    first = next(p for p in messages if _f(p)["role"] == "assistant" and "Hello!" in p["revision"]["payload"]["content"])
    thought = data["messages"][1]["thoughts"][0]
    assert f"{thought['subject']}: {thought['description']}" in first["revision"]["payload"]["content"]
    assert _f(first)["usage"]["total"] == data["messages"][1]["tokens"]["total"]
    assert report.conversations == 2
    tools = [t for p in messages for t in _f(p).get("tool_calls", [])]
    assert {t["name"] for t in tools} == {"list_directory", "read_file", "write_file", "replace"}
    assert len(tools) == sum(len(m.get("toolCalls", [])) for m in data["messages"])


def test_json_threads_linearly(store):
    import_gemini(store, OPS_JSON)
    _, messages = _session(store, OPS_NS)
    ids = {p["revision"]["page_id"] for p in messages}
    roots = [p for p in messages if not set(h.outgoing(p, "responds_to")) & ids]
    assert [r["title"] for r in roots] == ["user: show tools"]
    assert all(len(h.incoming(p, "responds_to")) <= 1 for p in messages)


def test_rewind_keeps_the_dropped_turns_as_a_branch(store):
    import_gemini(store, OPS_JSONL)
    conv, messages = _session(store, OPS_NS)
    original = json.loads(OPS_JSON.read_text())["messages"]
    by_key = _by_key(messages)
    # nothing the file ever held is lost: every original turn with text, plus the re-asked prompt and its answer
    kept = [m["id"] for m in original if m["content"] or m.get("thoughts")]
    assert set(kept) <= set(by_key) and len(by_key) == len(kept) + 2
    rewound = {k for k, p in by_key.items() if _f(p).get("rewound")}
    assert rewound == {original[8]["id"], original[10]["id"]}  # the prompt rewound to and its answer
    fork = by_key[original[7]["id"]]  # "I've created the hello.md file": the message before the rewind target
    kids = sorted(by_key[k]["title"] for k, p in by_key.items()
                  if fork["revision"]["page_id"] in h.outgoing(p, "responds_to"))
    assert kids == ["user: add 3 lines of random text instead", "user: add 5 lines of random text"]
    # the compression ($set.messages) removed nothing, and the turns after it follow the re-asked answer
    after = by_key[original[11]["id"]]
    assert h.outgoing(after, "responds_to") == [by_key["8a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"]["revision"]["page_id"]]
    assert conv["title"] == "Explore the repository, then create and edit hello.md"
    assert not any("state_snapshot" in p["revision"]["payload"]["content"] for p in messages)


def test_rewind_semantics_follow_gemini_cli(store, tmp_path):
    """`$rewindTo X` drops X and everything after it; an unknown X drops everything (chatRecordingService.ts)."""
    sid = "aaaaaaaa-1111-4222-8333-444444444444"
    recs = [{"sessionId": sid, "projectHash": "p" * 64, "startTime": "2026-02-01T10:00:00.000Z"},
            {"id": "u1", "timestamp": "2026-02-01T10:00:01.000Z", "type": "user", "content": "first question"},
            {"id": "g1", "timestamp": "2026-02-01T10:00:02.000Z", "type": "gemini", "content": "first answer"},
            {"id": "u2", "timestamp": "2026-02-01T10:00:03.000Z", "type": "user", "content": "second question"},
            {"$rewindTo": "u2"},
            {"id": "u3", "timestamp": "2026-02-01T10:00:04.000Z", "type": "user", "content": "second, again"},
            {"$rewindTo": "no-such-id"},
            {"id": "u4", "timestamp": "2026-02-01T10:00:05.000Z", "type": "user", "content": "from the start"},
            {"id": "i1", "timestamp": "2026-02-01T10:00:06.000Z", "type": "info", "content": "Loaded memory"}]
    path = tmp_path / "chats" / "session-2026-02-01T10-00-aaaaaaaa.jsonl"
    path.parent.mkdir()
    path.write_text("".join(json.dumps(r) + "\n" for r in recs))
    report = import_gemini(store, path)
    _, messages = _session(store, next(ns for ns in h.scopes(store) if ns.endswith(sid)))
    by_key = _by_key(messages)
    parent = {k: h.outgoing(p, "responds_to") for k, p in by_key.items()}
    pid = {k: p["revision"]["page_id"] for k, p in by_key.items()}
    assert parent["u3"] == [pid["g1"]] and parent["u2"] == [pid["g1"]]  # u2 dropped: u3 answers g1 beside it
    assert parent["u4"] == []  # an unknown target drops everything: a new root
    assert {k for k, p in by_key.items() if _f(p).get("rewound")} == {"u1", "g1", "u2", "u3"}
    assert any("1 info notice record(s)" in s["item"] for s in report.skipped)


def test_a_migrated_json_and_its_jsonl_are_one_session(store, tmp_path):
    chats = tmp_path / "tmp" / HASH / "chats"
    chats.mkdir(parents=True)
    shutil.copy(OPS_JSON, chats)
    shutil.copy(OPS_JSONL, chats)
    report = import_gemini(store, tmp_path / "tmp")
    with_jsonl_only = h.page_count(store)
    assert report.conversations == 1
    from store import Store
    with Store.open(tmp_path / "alone.db") as other:
        assert import_gemini(other, OPS_JSONL).created == with_jsonl_only


def test_reimport_is_idempotent_and_with_tools_decodes(store):
    first = import_gemini(store, DATA, with_tools=True)
    count = h.page_count(store)
    again = import_gemini(store, DATA, with_tools=True)
    assert first.created == count and (again.created, again.revised, again.unchanged) == (0, 0, count)
    _, messages = _session(store, OPS_NS)
    todo = next(p for p in messages if _f(p)["role"] == "tool" and _f(p).get("tool") == "write_todos"
                and "Tool call" not in p["revision"]["payload"]["content"])
    assert todo["revision"]["payload"]["content"].startswith("Successfully updated the todo list. The current list is now:\n1. [")


def test_a_grown_session_adds_only_what_is_new(store, tmp_path):
    lines = OPS_JSONL.read_text().splitlines(keepends=True)
    cut = next(i for i, line in enumerate(lines) if "messages" in json.loads(line).get("$set", {}))
    target = tmp_path / "chats" / OPS_JSONL.name
    target.parent.mkdir()
    target.write_text("".join(lines[:cut]))
    part = import_gemini(store, target)
    target.write_text("".join(lines))
    full = import_gemini(store, target)
    assert full.revised == 1  # the session page: its summary arrived with the new lines
    assert full.unchanged == part.created - 1 and full.created == 2  # "remove 2 and 3 line" and its answer
    assert part.created + full.created == h.page_count(store)


def test_a_subagent_is_linked_not_mixed(store, tmp_path):
    chats = tmp_path / "tmp" / HASH / "chats"
    (chats / OPS).mkdir(parents=True)
    shutil.copy(OPS_JSON, chats)
    sub = [{"sessionId": "sub-1", "projectHash": HASH, "startTime": "2026-01-16T11:04:01.000Z", "kind": "subagent"},
           {"id": "s1", "timestamp": "2026-01-16T11:04:02.000Z", "type": "user", "content": "Investigate the codebase"},
           {"id": "s2", "timestamp": "2026-01-16T11:04:30.000Z", "type": "gemini", "content": "Found two issues."}]
    (chats / OPS / "sub-1.jsonl").write_text("".join(json.dumps(r) + "\n" for r in sub))
    import_gemini(store, tmp_path / "tmp")
    pages = h.pages(store, [OPS_NS], projections=("manifest", "relations", "facets"))
    convs = [p for p in pages if "role" not in _f(p)]
    main = next(p for p in convs if not _f(p).get("subagent"))
    agent = next(p for p in convs if _f(p).get("subagent"))
    assert agent["revision"]["page_id"] in h.outgoing(main, "contains")
    assert len(h.outgoing(agent, "contains")) == 2
    assert not set(h.outgoing(agent, "contains")) & set(h.outgoing(main, "contains"))


@pytest.mark.slow
def test_sigkill_mid_import_leaves_whole_sessions_only(tmp_path):
    text = HI_JSON.read_text()
    ids = sorted(set(re.findall(r'"id": "([0-9a-f-]{36})"', text)) | {HI})
    root = tmp_path / "tmp" / "proj" / "chats"
    root.mkdir(parents=True)
    for n in range(120):
        body = text
        for i, old in enumerate(ids):
            body = body.replace(old, f"{n:08x}-{i:04x}-4000-8000-000000000000")
        (root / f"session-2025-12-01T21-45-{n:08x}.json").write_text(body)
    after = h.kill_mid_import(tmp_path / "kill.db", "gemini", "import_gemini", tmp_path / "tmp", "agent:gemini:%:%")
    assert len(after) == 3 and set(after.values()) == {15}  # three whole sessions: a page and its 14 messages
    grouped = h.import_in_one_group_killed(tmp_path / "group.db", "gemini", "import_gemini", tmp_path / "tmp",
                                           "agent:gemini:%:%")
    assert grouped == {}  # a stop inside a group of units leaves none of the group



INJECTED = "fa4593e0-0000-4000-8000-00000000d21e"  # derived/make_injected_jsonl.py
INJECTED_JSONL = next((DERIVED / "tmp").glob("*/chats/session-2026-01-10T20-00-fa4593e0.jsonl"))


def test_function_responses_are_tool_output_and_the_nudge_and_notices_no_message(store):
    report = import_gemini(store, INJECTED_JSONL, with_tools=True)
    ns = next(n for n in h.scopes(store) if n.endswith(INJECTED))
    conv, pages = _session(store, ns)
    by_role: dict[str, list[dict]] = {}
    for p in pages:
        by_role.setdefault(_f(p)["role"], []).append(p)
    texts = [p["revision"]["payload"]["content"] for p in by_role["user"] + by_role["assistant"]]
    assert [t for t in texts if "Function Response" in t or "Please continue" in t or "update available" in t] == []
    # the function response is the write_file tool's result page; the prompt and the two answers are pages
    result = next(p for p in by_role["tool"] if p["revision"]["payload"]["content"].startswith("[Function Response: write_file]"))
    assert _f(result)["tool"] == "write_file" and "result" in result["title"]
    assert len(by_role["user"]) == 1 and conv["title"] == 'write to test-gemini.txt "hello, gemini" only'
    items = " ".join(s["item"] for s in report.skipped)
    assert "1 scaffolding (continuation nudge)" in items and "1 info notice" in items
