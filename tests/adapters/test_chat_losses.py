"""What the chat importers lost in the trial of issue 15 (point 5), one test each.

The conversations are small, written here in the shapes the Claude.ai and ChatGPT exports use
(the trial found them in real exports that cannot be vendored)."""

from __future__ import annotations

import json

import import_helpers as h
from store.adapters import import_chatgpt, import_claude


def _write(tmp_path, name, data):
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return path


def _claude_conv(messages, uuid="c0000000-0000-4000-8000-000000000001", name="Artifacts"):
    return {"uuid": uuid, "name": name, "created_at": "2025-03-01T10:00:00.000000Z",
            "updated_at": "2025-03-01T10:05:00.000000Z", "chat_messages": messages}


def _claude_msg(uuid, sender, content, at, parent=None, **extra):
    msg = {"uuid": uuid, "sender": sender, "text": "", "content": content, "created_at": at, "updated_at": at,
           "attachments": [], "files": [], **extra}
    if parent is not None:
        msg["parent_message_uuid"] = parent
    return msg


def _chatgpt_conv(mapping, conv_id="g-1", **extra):
    return {"id": conv_id, "conversation_id": conv_id, "title": "Plot", "create_time": 1714000000.0,
            "update_time": 1714000500.0, "mapping": mapping, **extra}


def _node(node_id, parent, role, content, at, metadata=None, children=()):
    return {"id": node_id, "parent": parent, "children": list(children), "message": {
        "id": node_id, "author": {"role": role}, "create_time": at, "content": content,
        "status": "finished_successfully", "metadata": metadata or {}}}


def _pages(store, scope_prefix):
    return [p for ns in h.scopes(store) if ns.startswith(scope_prefix)
            for p in h.pages(store, [ns], projections=("manifest", "relations", "payload", "facets"))]


def test_claude_artifact_text_is_decoded_and_found(store, tmp_path):
    code = "export function greet(name) {\n  return \"Hello, \" + name;\n}\n"
    artifact = {"type": "tool_use", "name": "artifacts",
                "input": {"command": "create", "id": "greet", "type": "application/vnd.ant.code",
                          "title": "greet.js", "content": code}}
    conv = _claude_conv([
        _claude_msg("m1", "human", [{"type": "text", "text": "Write a greeting function"}], "2025-03-01T10:00:00Z"),
        _claude_msg("m2", "assistant", [{"type": "text", "text": "Here it is."}, artifact], "2025-03-01T10:00:05Z",
                    parent="m1"),
    ])
    import_claude(store, _write(tmp_path, "claude.json", [conv]))
    page = next(p for p in _pages(store, "conversation:claude:") if p["facets"].get("role") == "assistant")
    content = page["revision"]["payload"]["content"]
    assert code.strip() in content and "\\n" not in content and '\\"' not in content
    hits = store.search_pages("export", mode="text", limit=10)["hits"]
    assert any(hit["page_id"] == page["revision"]["page_id"] for hit in hits)


def test_chatgpt_code_interpreter_images_get_source_refs(store, tmp_path):
    image = "file-service://file-AbCdEf123"
    mapping = {
        "root": {"id": "root", "parent": None, "children": ["u"], "message": None},
        "u": _node("u", "root", "user", {"content_type": "text", "parts": ["Plot y = x^2"]}, 1714000001.0),
        "c": _node("c", "u", "assistant", {"content_type": "code", "language": "python",
                                           "text": "import matplotlib.pyplot as plt\nplt.plot([1, 2], [1, 4])"},
                   1714000002.0),
        "t": _node("t", "c", "tool", {"content_type": "execution_output", "text": ""}, 1714000003.0, metadata={
            "aggregate_result": {"status": "success", "messages": [
                {"message_type": "image", "time": 1714000003.0, "sender": "server", "image_url": image,
                 "width": 640, "height": 480}]}}),
    }
    import_chatgpt(store, _write(tmp_path, "chatgpt.json", [_chatgpt_conv(mapping)]))
    pages = _pages(store, "conversation:chatgpt:")
    tool = next(p for p in pages if p["facets"].get("role") == "tool")
    assert any(ref["uri"] == image for ref in tool["revision"]["source_refs"])


def test_titles_are_the_first_meaningful_line(store, tmp_path):
    mapping = {
        "root": {"id": "root", "parent": None, "children": ["u"], "message": None},
        "u": _node("u", "root", "user", {"content_type": "text", "parts": ["Sum a list"]}, 1714000001.0),
        "c": _node("c", "u", "assistant", {"content_type": "code", "language": "python", "text": "print(sum([1, 2]))"},
                   1714000002.0),
        "o": _node("o", "c", "tool", {"content_type": "execution_output", "text": "3"}, 1714000003.0),
        "k": _node("k", "o", "assistant", {"content_type": "thoughts", "thoughts": [
            {"summary": "Checking the result", "content": "The output is 3."}]}, 1714000004.0),
    }
    import_chatgpt(store, _write(tmp_path, "chatgpt.json", [_chatgpt_conv(mapping)]))
    titles = sorted(p["title"] for p in _pages(store, "conversation:chatgpt:") if "role" in p["facets"])
    assert titles == ["assistant: Checking the result", "assistant: print(sum([1, 2]))", "tool: 3",
                      "user: Sum a list"]


def test_claude_attachments_get_a_real_media_type_and_one_ref(store, tmp_path):
    msg = _claude_msg("m1", "human", [{"type": "text", "text": "Summarise the paper"}], "2025-03-01T10:00:00Z",
                      attachments=[{"id": "att-1", "file_name": "paper.pdf", "file_size": 1234, "file_type": "pdf",
                                    "extracted_content": "Abstract: we study things."}],
                      files=[{"file_uuid": "f-1", "file_name": "paper.pdf", "file_kind": "document"}])
    import_claude(store, _write(tmp_path, "claude.json", [_claude_conv([msg])]))
    page = next(p for p in _pages(store, "conversation:claude:") if p["facets"].get("role") == "user")
    refs = [r for r in page["revision"]["source_refs"] if not r["uri"].startswith("claude-export:")]
    assert len(refs) == 1 and refs[0]["media_type"] == "application/pdf"


def test_an_empty_conversation_is_kept_and_archive_state_and_update_time_too(store, tmp_path):
    empty = {"uuid": "c0000000-0000-4000-8000-0000000000ee", "name": "Nothing said", "created_at":
             "2025-03-02T10:00:00Z", "updated_at": "2025-03-02T10:00:00Z", "chat_messages": []}
    report = import_claude(store, _write(tmp_path, "claude.json", [empty]))
    conv = next(p for p in _pages(store, "conversation:claude:"))
    assert conv["title"] == "Nothing said" and conv["facets"]["empty"] is True
    assert any("Nothing said" in s["item"] for s in report.skipped)
    mapping = {"root": {"id": "root", "parent": None, "children": ["u"], "message": None},
               "u": _node("u", "root", "user", {"content_type": "text", "parts": ["hi"]}, 1714000001.0)}
    import_chatgpt(store, _write(tmp_path, "chatgpt.json", [_chatgpt_conv(mapping, is_archived=True)]))
    gpt = next(p for p in _pages(store, "conversation:chatgpt:") if "role" not in p["facets"])
    assert gpt["facets"]["archived"] is True and gpt["facets"]["updated"] == "2024-04-24T23:15:00.000Z"


def test_messages_without_parent_links_are_chained_by_time(store, tmp_path):
    none = "00000000-0000-4000-8000-000000000000"
    conv = _claude_conv([
        _claude_msg("m2", "assistant", [{"type": "text", "text": "Paris."}], "2025-03-01T10:00:05Z", parent=none),
        _claude_msg("m1", "human", [{"type": "text", "text": "Capital of France?"}], "2025-03-01T10:00:00Z",
                    parent=none),
        _claude_msg("m3", "human", [{"type": "text", "text": "And of Italy?"}], "2025-03-01T10:00:09Z", parent=none),
    ])
    import_claude(store, _write(tmp_path, "claude.json", [conv]))
    pages = {p["facets"]["message_id"]: p for p in _pages(store, "conversation:claude:") if "role" in p["facets"]}
    assert h.outgoing(pages["m1"], "responds_to") == []
    assert h.outgoing(pages["m2"], "responds_to") == [pages["m1"]["revision"]["page_id"]]
    assert h.outgoing(pages["m3"], "responds_to") == [pages["m2"]["revision"]["page_id"]]


def test_a_conversations_wrapper_is_accepted(store, tmp_path):
    conv = _claude_conv([_claude_msg("m1", "human", [{"type": "text", "text": "hello"}], "2025-03-01T10:00:00Z")])
    report = import_claude(store, _write(tmp_path, "claude.json", {"conversations": [conv]}))
    assert report.conversations == 1
    mapping = {"root": {"id": "root", "parent": None, "children": ["u"], "message": None},
               "u": _node("u", "root", "user", {"content_type": "text", "parts": ["hi"]}, 1714000001.0)}
    report = import_chatgpt(store, _write(tmp_path, "chatgpt.json", {"conversations": [_chatgpt_conv(mapping)]}))
    assert report.conversations == 1
