"""The ChatGPT and Claude importers on every sample export in tests/data/exports (vendored).

Expected numbers come from reading the files (SOURCES.md describes each one):
messages are the nodes with a message, minus hidden scaffolding; pages are one per
conversation plus one per message; relations are one `contains` per message plus one
`responds_to` per message whose parent (or nearest visible ancestor) became a page.
"""

from __future__ import annotations

import json

import pytest

import import_helpers as h
from store.adapters import import_chatgpt, import_claude
from store.adapters.base import epoch_to_time

CORRUPTED = "chatgpt conversation 6b0f0d9c-0000-4000-8000-000000000002 (Corrupted entry)"

# file -> (conversations, messages, pages created, hidden skipped, empty skipped, relations, skipped [(item, reason)])
EXPECTED = {
    "chatgpt-danny-avila-LibreChat-1.json": (1, 11, 12, 1, 0, 21, []),
    "chatgpt-danny-avila-LibreChat-2.json": (1, 2, 3, 0, 0, 3, []),
    "chatgpt-danny-avila-LibreChat-3.json": (3, 6, 9, 1, 0, 10,
                                             [(CORRUPTED, "no readable messages: kept as an empty conversation page")]),
    "chatgpt-Sinity-polylogue-1.json": (1, 7, 8, 1, 0, 13, []),
    "chatgpt-0xsalt-chatgpt_conversation_extractor-1.json": (5, 20, 25, 0, 0, 35, []),
    "claude-osteele-claude-chat-viewer-1.json": (2, 6, 8, 0, 0, 10, []),
    "claude-osteele-claude-chat-viewer-2-api-variant.json": (1, 4, 5, 0, 0, 7, []),
    "claude-simonw-claude-to-sqlite-1.json": (1, 2, 3, 0, 0, 3, []),
    "claude-simonw-claude-to-sqlite-2.json": (1, 20, 21, 0, 0, 39, []),
}

# Conversation ids per file (what the namespaces are named after).
CONVERSATIONS = {
    "chatgpt-danny-avila-LibreChat-1.json": ["d5dc5307-6807-41a0-8b04-4acee626eeb7"],
    "chatgpt-danny-avila-LibreChat-2.json": ["d6523d1e-7ec3-474f-a363-0e9dffdb3d93"],
    "chatgpt-danny-avila-LibreChat-3.json": ["6b0f0d9c-0000-4000-8000-000000000001",
                                             "6b0f0d9c-0000-4000-8000-000000000002",  # empty, kept as such
                                             "6b0f0d9c-0000-4000-8000-000000000003"],
    "chatgpt-Sinity-polylogue-1.json": ["chatgpt-fixture-conversation"],
    "chatgpt-0xsalt-chatgpt_conversation_extractor-1.json": [
        "a1b2c3d4-e5f6-7890-abcd-ef1234567890", "b2c3d4e5-f6a7-8901-bcde-f23456789012",
        "c3d4e5f6-a7b8-9012-cdef-345678901234", "d4e5f6a7-b8c9-0123-defa-456789012345",
        "e5f6a7b8-c9d0-1234-efab-567890123456"],
    "claude-osteele-claude-chat-viewer-1.json": ["test-conv-1", "test-conv-2"],
    "claude-osteele-claude-chat-viewer-2-api-variant.json": ["8006a434-8b0b-43df-8e6d-c0a7aeb2e6b3"],
    "claude-simonw-claude-to-sqlite-1.json": ["1db4c66e-b369-4e3a-96a9-6c16f8301ee8"],
    "claude-simonw-claude-to-sqlite-2.json": ["91098bc8-f2c4-427b-b71b-1e25efa2e871"],
}


def source_of(name: str) -> str:
    return name.split("-", 1)[0]


def importer(name: str):
    return import_chatgpt if name.startswith("chatgpt") else import_claude


def imported(store, exports, name, **kw):
    report = importer(name)(store, exports / name, **kw)
    return report


def expected_times(exports, name) -> dict[str, str]:
    """message id -> observed_at the file implies: the message's own time, else its conversation's."""
    data = json.loads((exports / name).read_text(encoding="utf-8"))
    items = data if isinstance(data, list) else [data]
    out = {}
    for conv in items:
        if name.startswith("chatgpt"):
            for node_id, node in (conv.get("mapping") or {}).items():
                msg = node.get("message")
                if msg:
                    out[msg.get("id") or node_id] = (epoch_to_time(msg.get("create_time"))
                                                     or epoch_to_time(msg.get("update_time"))
                                                     or epoch_to_time(conv.get("create_time")))
        else:
            for msg in conv["chat_messages"]:
                out[msg["uuid"]] = epoch_to_time(msg.get("created_at")) or epoch_to_time(conv.get("created_at"))
    return out


def messages_by_id(store, scopes=()) -> dict[str, dict]:
    """message_id facet -> read result (manifest + relations) of every message page."""
    out = {}
    for res in h.pages(store, scopes):
        facets = res["revision"]["facets"]
        if "message_id" in facets:
            assert facets["message_id"] not in out, "duplicate message page"
            out[facets["message_id"]] = res
    return out


def conversations_by_id(store) -> dict[str, dict]:
    return {res["revision"]["facets"]["conversation_id"]: res for res in h.pages(store)
            if "message_id" not in res["revision"]["facets"]}


# ---------------------------------------------------------------------------------------------- every file


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_counts_scopes_sources_and_relations(store, exports, name):
    conversations, messages, created, hidden, empty, relations, skipped = EXPECTED[name]
    source = source_of(name)
    report = imported(store, exports, name)

    assert report.source == source
    assert report.conversations == conversations
    assert report.messages == messages
    assert report.created == created
    assert report.unchanged == 0 and report.revised == 0
    assert report.hidden_skipped == hidden
    assert report.empty_skipped == empty
    assert report.relations == relations
    assert [(s["item"], s["reason"]) for s in report.skipped] == skipped
    assert h.page_count(store) == created

    # Scopes: one per conversation under import:<source>.
    scopes = h.scopes(store)
    expected_ns = {f"conversation:{source}:{cid}" for cid in CONVERSATIONS[name]}
    assert set(scopes) == expected_ns | {f"import:{source}"}
    for ns in expected_ns:
        assert scopes[ns]["parent"] == f"import:{source}"
    assert sum(scopes[ns]["page_count"] for ns in expected_ns) == created

    convs = conversations_by_id(store)
    msgs = messages_by_id(store)
    assert sorted(convs) == sorted(CONVERSATIONS[name])
    assert len(msgs) == messages
    page_of = {res["revision"]["page_id"]: res for res in [*convs.values(), *msgs.values()]}
    times = expected_times(exports, name)

    n_contains = n_responds = 0
    for mid, res in msgs.items():
        env = res["revision"]
        facets = env["facets"]
        cid = facets["conversation_id"]
        assert env["namespace"] == f"conversation:{source}:{cid}"
        assert env["lifecycle_status"] == "active"
        # Source: the file, the conversation, the message.
        ref = env["source_refs"][0]
        assert ref["locator"]["file"] == name
        assert ref["locator"]["conversation_id"] == cid
        assert ref["locator"]["message_id"] == mid
        assert name in ref["uri"] and cid in ref["uri"] and mid in ref["uri"]
        # Provenance: imported by the tool.
        assert env["created_by"] == {"actor_type": "tool", "actor_id": f"pcp-import-{source}"}
        assert [(p["operation"], p["actor_type"], p["actor_id"]) for p in env["provenance"]] == [
            ("import", "tool", f"pcp-import-{source}")]
        assert env["observed_at"] is not None and env["observed_at"] == times[mid]
        # Relations: the conversation contains it; a reply responds to its parent, in the same conversation.
        containers = h.incoming(res, "contains")
        assert containers == [convs[cid]["revision"]["page_id"]]
        parents = h.outgoing(res, "responds_to")
        assert len(parents) <= 1
        for parent in parents:
            assert page_of[parent]["revision"]["facets"]["conversation_id"] == cid
        n_contains += len(containers)
        n_responds += len(parents)
        assert isinstance(facets["current_branch"], bool)
        assert facets["role"] in ("user", "assistant", "tool", "system")
    assert n_contains == messages
    assert n_contains + n_responds == relations
    assert "supersedes" not in h.all_relation_types(list(msgs.values()))

    for cid, res in convs.items():
        env = res["revision"]
        assert env["facets"]["source"] == source
        assert env["source_refs"][0]["locator"] == {"file": name, "conversation_id": cid}
        assert env["created_by"] == {"actor_type": "tool", "actor_id": f"pcp-import-{source}"}
        n = sum(1 for m in msgs.values() if m["revision"]["facets"]["conversation_id"] == cid)
        assert len(h.outgoing(res, "contains")) == n


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_reimport_adds_nothing(store, exports, name):
    first = imported(store, exports, name)
    before = h.page_count(store)
    again = imported(store, exports, name)
    assert again.created == 0
    assert again.revised == 0
    assert again.unchanged == first.created
    assert again.relations == 0
    assert again.messages == first.messages
    assert h.page_count(store) == before
    assert store.doctor()["counts"]["revision"] == before
    assert store.doctor()["counts"]["relation"] == first.relations


@pytest.mark.parametrize("name", ["chatgpt-0xsalt-chatgpt_conversation_extractor-1.json",
                                  "claude-osteele-claude-chat-viewer-1.json"])
def test_namespace_puts_everything_in_one_scope(store, exports, name):
    conversations, messages, created, *_ = EXPECTED[name]
    report = imported(store, exports, name, namespace="project:chats")
    assert report.created == created
    scopes = h.scopes(store)
    assert set(scopes) == {"project:chats"}
    assert scopes["project:chats"]["page_count"] == created
    assert {res["revision"]["namespace"] for res in h.pages(store)} == {"project:chats"}


def test_progress_is_reported(store, exports):
    calls = []
    import_chatgpt(store, exports / "chatgpt-danny-avila-LibreChat-3.json", progress=lambda *a: calls.append(a))
    assert calls == [(1, 3, "conversations"), (2, 3, "conversations"), (3, 3, "conversations")]


# ---------------------------------------------------------------------------------------------- ChatGPT files


def test_librechat1_branches_all_active_current_marked(store, exports):
    """An edit branch and a regeneration: every branch stays; current_branch marks the path to current_node."""
    import_chatgpt(store, exports / "chatgpt-danny-avila-LibreChat-1.json")
    msgs = messages_by_id(store)
    on_path = {"aaa297ba-e2da-440e-84f4-e62e7be8b003", "bda8a275-886d-4f59-b38c-d7037144f0d5",
               "aaa236a3-cdfc-4eb1-b5c5-790c6641f880", "db88eddf-3622-4246-8527-b6eaf0e9e8cd",
               "aaa20127-b9e3-44f6-afbe-a2475838625a", "f63b8e17-aa5c-4ca6-a1bf-d4d285e269b8"}
    off_path = {"aaa24023-b02f-4d49-b568-5856b41750c0", "23afbea9-ca08-49f2-b417-e7ae58a1c97d",
                "aaa292cc-1842-4dbf-bd79-13cf7150366a", "ada93f81-f59e-4b31-933d-1357efd68bfc",
                "d0d2a7df-d2fc-4df9-bf0a-1c5121e227ae"}
    assert set(msgs) == on_path | off_path  # the hidden system message is not a page
    assert {m for m, r in msgs.items() if r["revision"]["facets"]["current_branch"]} == on_path
    assert all(r["revision"]["lifecycle_status"] == "active" for r in msgs.values())
    assert "supersedes" not in h.all_relation_types(list(msgs.values()))

    pid = {m: r["revision"]["page_id"] for m, r in msgs.items()}
    # The edit: two user turns answer the same assistant message.
    edited = sorted(m for m, r in msgs.items() if h.outgoing(r, "responds_to") == [pid["bda8a275-886d-4f59-b38c-d7037144f0d5"]])
    assert edited == ["aaa236a3-cdfc-4eb1-b5c5-790c6641f880", "aaa24023-b02f-4d49-b568-5856b41750c0"]
    # The regeneration: two answers to the same user turn.
    regen = sorted(m for m, r in msgs.items() if h.outgoing(r, "responds_to") == [pid["aaa20127-b9e3-44f6-afbe-a2475838625a"]])
    assert regen == ["d0d2a7df-d2fc-4df9-bf0a-1c5121e227ae", "f63b8e17-aa5c-4ca6-a1bf-d4d285e269b8"]
    # The first user turn hangs below a hidden system message: no parent page.
    assert h.outgoing(msgs["aaa297ba-e2da-440e-84f4-e62e7be8b003"], "responds_to") == []
    # The interrupted answer says so.
    interrupted = msgs["ada93f81-f59e-4b31-933d-1357efd68bfc"]["revision"]["facets"]
    assert interrupted["status"] == "in_progress" and interrupted["finish"] == "interrupted"
    assert interrupted["model"] == "text-davinci-002-render-sha"
    # observed_at is the message's own time.
    assert msgs["aaa297ba-e2da-440e-84f4-e62e7be8b003"]["revision"]["observed_at"] == "2024-05-01T17:37:11.150Z"
    conv = conversations_by_id(store)["d5dc5307-6807-41a0-8b04-4acee626eeb7"]["revision"]
    assert conv["facets"]["title"] == "Assist user with summary"
    assert h.hits(store, query="scientists trust atoms", mode="text")


def test_polylogue_parts_refs_and_tool_messages(store, exports):
    """A single conversation object with image parts, attachments, thoughts, tool output and a recap."""
    import_chatgpt(store, exports / "chatgpt-Sinity-polylogue-1.json")
    msgs = messages_by_id(store)
    assert set(msgs) == {"user-message", "answer-inactive-message", "thought-active-message", "tool-call-message",
                         "tool-result-message", "recap-active-message", "answer-active-message"}
    assert "context-message" not in msgs  # user_editable_context: hidden

    user = msgs["user-message"]["revision"]
    uris = [r["uri"] for r in user["source_refs"]]
    assert uris[1:] == ["file-service://fixture-input-image", "chatgpt-attachment:fixture-upload-1"]
    image = user["source_refs"][1]
    assert image["media_type"] == "image/*" and image["locator"]["width"] == 8
    assert user["source_refs"][2]["media_type"] == "text/plain"
    assert user["source_refs"][0]["locator"]["node_id"] == "user"
    answer = msgs["answer-active-message"]["revision"]
    assert [r["uri"] for r in answer["source_refs"]][1:] == ["file-service://fixture-output-image"]

    assert msgs["tool-call-message"]["revision"]["facets"]["recipient"] == "browser.search"
    assert msgs["tool-result-message"]["revision"]["facets"]["role"] == "tool"
    assert msgs["tool-result-message"]["revision"]["facets"]["author_name"] == "browser.search"
    assert msgs["thought-active-message"]["revision"]["facets"]["content_type"] == "thoughts"

    def found(query):
        return {hit["page_id"] for hit in h.hits(store, query=query, mode="text")}

    pid = {m: r["revision"]["page_id"] for m, r in msgs.items()}
    assert pid["thought-active-message"] in found("reasoning trace")
    assert pid["tool-result-message"] in found("tool result")
    assert pid["recap-active-message"] in found("reasoning summary")
    assert pid["answer-active-message"] in found("Final answer")

    on_branch = {m for m, r in msgs.items() if r["revision"]["facets"]["current_branch"]}
    assert on_branch == set(msgs) - {"answer-inactive-message"}
    conv = conversations_by_id(store)["chatgpt-fixture-conversation"]["revision"]
    assert conv["facets"]["default_model_slug"] == "gpt-5-6-pro"
    assert conv["facets"]["models"] == ["gpt-5-6-pro"]


def test_librechat2_citations_and_dangling_parent(store, exports):
    import_chatgpt(store, exports / "chatgpt-danny-avila-LibreChat-2.json")
    msgs = messages_by_id(store)
    tool = msgs["9e874379-5008-4a2d-aa2e-628d1d705a04"]
    answer = msgs["4b3aec6b-5146-4bad-ae8e-204fdb6accda"]
    conv = conversations_by_id(store)["d6523d1e-7ec3-474f-a363-0e9dffdb3d93"]

    # The parent is not in the file: kept as a facet, the message hangs off the conversation.
    assert tool["revision"]["facets"]["missing_parent_id"] == "5cc5e87b-2b74-485a-b3a7-23cb25f202db"
    assert h.outgoing(tool, "responds_to") == []
    assert h.incoming(tool, "contains") == [conv["revision"]["page_id"]]
    assert tool["revision"]["facets"]["content_type"] == "tether_browsing_display"
    assert h.outgoing(answer, "responds_to") == [tool["revision"]["page_id"]]
    assert "missing_parent_id" not in answer["revision"]["facets"]
    # current_node names a node the trimmed file does not have: no message is marked as the current branch.
    assert [r["revision"]["facets"]["current_branch"] for r in msgs.values()] == [False, False]

    # Citations are part of the answer: its text lists them and each cited URL is a source ref.
    full = h.read(store, [answer["revision"]["page_id"]], ("payload",))[0]["revision"]["payload"]["content"]
    assert "Sources:" in full
    assert "(https://www.crunchbase.com/organization/signal-sciences)" in full
    uris = [r["uri"] for r in answer["revision"]["source_refs"]]
    assert "https://www.crunchbase.com/organization/signal-sciences" in uris
    assert answer["revision"]["page_id"] in {hit["page_id"] for hit in h.hits(store, query="Crunchbase Company Profile", mode="text")}
    assert tool["revision"]["page_id"] in {hit["page_id"] for hit in h.hits(store, query="Secure@Edge", mode="text")}


def test_librechat3_modern_shape(store, exports):
    import_chatgpt(store, exports / "chatgpt-danny-avila-LibreChat-3.json")
    msgs = messages_by_id(store)
    assert set(msgs) == {"user-1", "assistant-1", "user-2", "assistant-2", "user-3", "assistant-3"}
    assert msgs["assistant-1"]["revision"]["facets"]["channel"] == "final"
    assert msgs["assistant-2"]["revision"]["facets"]["model"] == "o4-mini"
    assert msgs["user-3"]["revision"]["observed_at"] == "2025-08-24T02:03:21.000Z"
    assert all(r["revision"]["facets"]["current_branch"] for r in msgs.values())
    # The hidden context node is stepped over: user-1 starts the thread.
    assert h.outgoing(msgs["user-1"], "responds_to") == []
    assert h.outgoing(msgs["assistant-1"], "responds_to") == [msgs["user-1"]["revision"]["page_id"]]


def test_0xsalt_sparse_messages(store, exports):
    """No content_type, no message id, no create_time, no current_node: still every message, in order."""
    import_chatgpt(store, exports / "chatgpt-0xsalt-chatgpt_conversation_extractor-1.json")
    msgs = messages_by_id(store)
    assert len(msgs) == 20
    first = msgs["msg-node-001"]["revision"]
    assert first["facets"]["role"] == "user"
    # Without a message time, the conversation's time stands in.
    assert first["observed_at"] == "2024-01-28T00:00:00.000Z"
    assert all(r["revision"]["facets"]["current_branch"] for r in msgs.values())
    assert h.outgoing(msgs["msg-node-002"], "responds_to") == [first["page_id"]]
    assert h.hits(store, query="Monty Hall", mode="text")


# ---------------------------------------------------------------------------------------------- Claude files


def test_claude_api_variant_tree_and_files(store, exports):
    import_claude(store, exports / "claude-osteele-claude-chat-viewer-2-api-variant.json")
    msgs = messages_by_id(store)
    ids = ["667337e6-aede-4ba4-8ff8-1c04b37cfd98", "50eba0d1-d2a6-4db1-854e-f86810ff923d",
           "d13456d0-c7e8-4150-ac48-ed89327ec025", "47e6dd5f-0e09-4063-8ab3-f155765ac9a1"]
    assert set(msgs) == set(ids)
    # parent_message_uuid decides the thread; the root's parent is the all-zero uuid (no page).
    assert h.outgoing(msgs[ids[0]], "responds_to") == []
    for child, parent in zip(ids[1:], ids, strict=False):
        assert h.outgoing(msgs[child], "responds_to") == [msgs[parent]["revision"]["page_id"]]
    assert all(r["revision"]["facets"]["current_branch"] for r in msgs.values())  # current_leaf is the last one
    first = msgs[ids[0]]["revision"]
    file_refs = [r for r in first["source_refs"] if r["uri"].startswith("claude-file:")]
    assert len(file_refs) == 1 and file_refs[0]["media_type"] == "image/*"
    assert msgs[ids[1]]["revision"]["facets"]["model"] == "claude-3-5-sonnet-20240620"
    # The top-level text is empty; the content blocks hold the words.
    body = h.read(store, [msgs[ids[1]]["revision"]["page_id"]], ("payload",))[0]["revision"]["payload"]["content"]
    assert body.strip()
    conv = conversations_by_id(store)["8006a434-8b0b-43df-8e6d-c0a7aeb2e6b3"]["revision"]
    assert conv["facets"]["title"] == "Interactive Bakery Comparison Visualization"
    assert "summary" not in conv["facets"]  # empty in this file
    assert file_refs[0]["uri"] == "claude-file:0e0981c2-1224-4b1c-aeab-42529485a35e"


def test_claude_api_variant_branch_keeps_current_leaf(store, exports, tmp_path):
    """A second answer to the same question (a branch) stays active; current_branch follows current_leaf."""
    data = json.loads((exports / "claude-osteele-claude-chat-viewer-2-api-variant.json").read_text())
    last = data["chat_messages"][-1]
    sibling = dict(last, uuid="aaaaaaaa-0000-4000-8000-000000000001", created_at="2024-10-29T16:05:00.000000+00:00",
                   content=[{"type": "text", "text": "An alternative answer about bakeries."}], text="")
    data["chat_messages"].append(sibling)
    path = tmp_path / "branch.json"
    path.write_text(json.dumps(data))
    report = import_claude(store, path)
    assert report.messages == 5
    msgs = messages_by_id(store)
    parent = msgs["d13456d0-c7e8-4150-ac48-ed89327ec025"]["revision"]["page_id"]
    assert h.outgoing(msgs[sibling["uuid"]], "responds_to") == [parent]
    assert h.outgoing(msgs[last["uuid"]], "responds_to") == [parent]
    assert msgs[sibling["uuid"]]["revision"]["facets"]["current_branch"] is False
    assert msgs[last["uuid"]]["revision"]["facets"]["current_branch"] is True
    assert {r["revision"]["lifecycle_status"] for r in msgs.values()} == {"active"}


def test_claude_simonw2_out_of_order_messages(store, exports):
    """chat_messages are not chronological: the thread follows created_at."""
    import_claude(store, exports / "claude-simonw-claude-to-sqlite-2.json")
    msgs = messages_by_id(store)
    pid = {m: r["revision"]["page_id"] for m, r in msgs.items()}
    # The first entry in the file is a later human turn.
    assert h.outgoing(msgs["083850f6-fca7-40c3-916a-e57f7ae5f0fe"], "responds_to") == [pid["5fd78d7e-e9fa-4a99-998c-bcfd31374670"]]
    assert h.outgoing(msgs["abcb904f-d092-418f-96f8-cd1c76601376"], "responds_to") == [pid["083850f6-fca7-40c3-916a-e57f7ae5f0fe"]]
    assert h.outgoing(msgs["287b1868-17d4-4660-9089-b3eb4ddecb1b"], "responds_to") == []
    files = [r for r in msgs["083850f6-fca7-40c3-916a-e57f7ae5f0fe"]["revision"]["source_refs"] if r["uri"].startswith("claude-file:")]
    assert len(files) == 5
    assert msgs["083850f6-fca7-40c3-916a-e57f7ae5f0fe"]["revision"]["observed_at"] == "2024-10-17T03:37:51.154Z"
    assert h.hits(store, query="antArtifact", mode="exact")


def test_claude_simonw1_text_only_and_files(store, exports):
    import_claude(store, exports / "claude-simonw-claude-to-sqlite-1.json")
    msgs = messages_by_id(store)
    human = msgs["22b34c9c-69c1-46ad-87da-71570a70f107"]["revision"]
    assert human["facets"]["role"] == "user"
    assert human["facets"]["title"] == "user: Turn this into a bash command"
    assert [r["uri"] for r in human["source_refs"][1:]] == ["claude-file:CleanShot 20241017 at 22.29.542x.png"]
    assistant = msgs["12c87835-a63c-430e-a090-bd70d9efb601"]
    assert h.outgoing(assistant, "responds_to") == [human["page_id"]]


def test_claude_osteele1_two_conversations(store, exports):
    import_claude(store, exports / "claude-osteele-claude-chat-viewer-1.json")
    convs = conversations_by_id(store)
    assert {c["revision"]["facets"]["title"] for c in convs.values()} == {"Test Conversation 1", "Test Conversation 2"}
    msgs = messages_by_id(store)
    assert msgs["msg-6"]["revision"]["observed_at"] == "2024-12-02T14:16:00.000Z"
    assert h.outgoing(msgs["msg-5"], "responds_to") == [msgs["msg-4"]["revision"]["page_id"]]
    assert msgs["msg-1"]["revision"]["namespace"] == "conversation:claude:test-conv-1"


def test_empty_message_is_skipped_and_stepped_over(store, tmp_path):
    """A visible message without text or files is counted as empty; its reply hangs off the message before it."""
    def node(nid, parent, role, text, t):
        return {"id": nid, "parent": parent, "children": [], "message": {
            "id": nid, "author": {"role": role}, "create_time": t, "content": {"content_type": "text", "parts": [text]}}}

    mapping = {"root": {"id": "root", "message": None, "parent": None, "children": ["u1"]},
               "u1": node("u1", "root", "user", "Question?", 1700000001),
               "a1": node("a1", "u1", "assistant", "", 1700000002),
               "u2": node("u2", "a1", "user", "Hello?", 1700000003)}
    path = tmp_path / "empty.json"
    path.write_text(json.dumps([{"id": "c-empty", "title": "Empty answer", "create_time": 1700000000,
                                 "current_node": "u2", "mapping": mapping}]))
    report = import_chatgpt(store, path)
    assert (report.messages, report.empty_skipped, report.created) == (2, 1, 3)
    msgs = messages_by_id(store)
    assert set(msgs) == {"u1", "u2"}
    assert h.outgoing(msgs["u2"], "responds_to") == [msgs["u1"]["revision"]["page_id"]]
