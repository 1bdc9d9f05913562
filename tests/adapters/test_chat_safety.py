"""Importing again, growing, editing, broken files, archives, and a kill in the middle."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest

import import_helpers as h
from store import Invalid, Store
from store.adapters import import_chatgpt, import_claude
from chatgpt_helpers import generated_export

LIBRECHAT3 = "chatgpt-danny-avila-LibreChat-3.json"
OSTEELE1 = "claude-osteele-claude-chat-viewer-1.json"
REPO = Path(__file__).resolve().parents[2]


def copy(exports, name, tmp_path) -> tuple[Path, object]:
    path = tmp_path / name
    data = json.loads((exports / name).read_text(encoding="utf-8"))
    path.write_text(json.dumps(data), encoding="utf-8")
    return path, data


def history(store, page_id):
    return store.read_pages([page_id], projections=["manifest", "history"])["results"][0]["history"]


# ------------------------------------------------------------------------------------------ growth and edits


def test_chatgpt_grown_conversation_adds_only_the_new_message(store, exports, tmp_path):
    path, data = copy(exports, LIBRECHAT3, tmp_path)
    first = import_chatgpt(store, path)
    assert first.created == 9  # 8, and the empty conversation's page

    conv = data[0]
    conv["mapping"]["assistant-2"]["children"].append("user-4")
    conv["mapping"]["user-4"] = {
        "id": "user-4", "parent": "assistant-2", "children": [],
        "message": {"id": "user-4", "author": {"role": "user", "name": None, "metadata": {}},
                    "create_time": 1756000005.0, "content": {"content_type": "text", "parts": ["Thanks, that worked."]},
                    "status": "finished_successfully", "metadata": {}, "recipient": "all"},
    }
    conv["current_node"] = "user-4"
    conv["update_time"] = 1756000500.0
    path.write_text(json.dumps(data), encoding="utf-8")

    again = import_chatgpt(store, path)
    assert (again.created, again.unchanged, again.revised) == (1, 8, 1)  # the conversation's update_time changed
    assert again.relations == 2  # contains + responds_to
    assert h.page_count(store) == 10
    new = store.source_page_id(f"chatgpt:{conv['conversation_id']}:user-4")
    parent = store.source_page_id(f"chatgpt:{conv['conversation_id']}:assistant-2")
    res = h.read(store, [new])[0]
    assert h.outgoing(res, "responds_to") == [parent]
    assert res["revision"]["facets"]["current_branch"] is True
    # Older pages keep their first revision: the branch facet was true for them already.
    assert len(history(store, parent)) == 1


def test_claude_grown_conversation_adds_only_the_new_message(store, exports, tmp_path):
    path, data = copy(exports, OSTEELE1, tmp_path)
    import_claude(store, path)
    data[1]["chat_messages"].append({
        "uuid": "msg-7", "text": "Thanks!", "content": [{"type": "text", "text": "Thanks!"}], "sender": "human",
        "index": 4, "created_at": "2024-12-02T14:20:00Z", "updated_at": "2024-12-02T14:20:00Z",
        "truncated": False, "attachments": [], "files": [],
    })
    path.write_text(json.dumps(data), encoding="utf-8")
    again = import_claude(store, path)
    assert (again.created, again.unchanged, again.revised) == (1, 8, 0)
    new = h.read(store, [store.source_page_id("claude:test-conv-2:msg-7")])[0]
    assert h.outgoing(new, "responds_to") == [store.source_page_id("claude:test-conv-2:msg-6")]


def test_edited_message_becomes_a_new_revision(store, exports, tmp_path):
    path, data = copy(exports, LIBRECHAT3, tmp_path)
    import_chatgpt(store, path)
    page = store.source_page_id("chatgpt:6b0f0d9c-0000-4000-8000-000000000001:user-2")
    data[0]["mapping"]["user-2"]["message"]["content"]["parts"] = ["And if the rollback fails too?"]
    path.write_text(json.dumps(data), encoding="utf-8")

    again = import_chatgpt(store, path)
    assert (again.created, again.unchanged, again.revised) == (0, 8, 1)
    assert store.source_page_id("chatgpt:6b0f0d9c-0000-4000-8000-000000000001:user-2") == page
    assert len(history(store, page)) == 2
    env = store.read_pages([page])["results"][0]["revision"]
    assert env["payload"]["content"] == "And if the rollback fails too?"
    assert env["provenance"][0]["operation"] == "import"
    assert env["provenance"][0]["actor_id"] == "pcp-import-chatgpt"
    assert h.page_count(store) == 9


def test_claude_edited_message_becomes_a_new_revision(store, exports, tmp_path):
    path, data = copy(exports, OSTEELE1, tmp_path)
    import_claude(store, path)
    msg = data[0]["chat_messages"][0]
    msg["content"] = [{"type": "text", "text": "Hello there, Claude!"}]
    msg["text"] = "Hello there, Claude!"
    path.write_text(json.dumps(data), encoding="utf-8")
    again = import_claude(store, path)
    assert (again.created, again.revised) == (0, 1)
    assert len(history(store, store.source_page_id("claude:test-conv-1:msg-1"))) == 2


# ------------------------------------------------------------------------------------------ broken input


@pytest.mark.parametrize("name,fn", [(LIBRECHAT3, import_chatgpt), (OSTEELE1, import_claude)])
def test_malformed_json_fails_before_writing(store, exports, tmp_path, name, fn):
    fn(store, exports / "chatgpt-danny-avila-LibreChat-2.json" if fn is import_chatgpt
       else exports / "claude-simonw-claude-to-sqlite-1.json")
    before = h.page_count(store)
    revisions = store.doctor()["counts"]["revision"]
    text = (exports / name).read_text(encoding="utf-8")
    lines = text.split("\n")
    cut = len(lines) // 2
    broken = tmp_path / f"broken-{name}"
    broken.write_text("\n".join(lines[:cut]) + "\n  ,,\n" + "\n".join(lines[cut:]), encoding="utf-8")

    with pytest.raises(Invalid) as err:
        fn(store, broken)
    message = err.value.message
    assert broken.name in message
    assert f"line {cut + 1}" in message and "column" in message
    assert h.page_count(store) == before
    assert store.doctor()["counts"]["revision"] == revisions


def test_missing_file_and_wrong_shape(store, tmp_path):
    with pytest.raises(Invalid, match="no such file"):
        import_chatgpt(store, tmp_path / "nope.json")
    odd = tmp_path / "odd.json"
    odd.write_text('{"hello": 1}')
    with pytest.raises(Invalid, match="not a ChatGPT export"):
        import_chatgpt(store, odd)
    with pytest.raises(Invalid, match="not a Claude export"):
        import_claude(store, odd)
    assert h.page_count(store) == 0


def test_zip_archive_imports(store, exports, tmp_path):
    archive = tmp_path / "chatgpt-export.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("export-2024/conversations.json", (exports / LIBRECHAT3).read_bytes())
        zf.writestr("export-2024/chat.html", "<html></html>")
    report = import_chatgpt(store, archive)
    assert (report.conversations, report.messages, report.created) == (3, 6, 9)
    env = h.read(store, [store.source_page_id("chatgpt:6b0f0d9c-0000-4000-8000-000000000001:user-1")])[0]["revision"]
    assert env["source_refs"][0]["locator"]["file"] == "chatgpt-export.zip!export-2024/conversations.json"

    claude_zip = tmp_path / "claude.zip"
    with zipfile.ZipFile(claude_zip, "w") as zf:
        zf.writestr("conversations.json", (exports / OSTEELE1).read_bytes())
    assert import_claude(store, claude_zip).created == 8

    empty = tmp_path / "empty.zip"
    with zipfile.ZipFile(empty, "w") as zf:
        zf.writestr("readme.txt", "nothing")
    with pytest.raises(Invalid, match="no conversations.json"):
        import_chatgpt(store, empty)


# ------------------------------------------------------------------------------------------ SIGKILL

N_CONVERSATIONS = 300
MESSAGES_PER = 2

CHILD = textwrap.dedent("""
    import sys
    sys.path.insert(0, {repo!r})
    import store.importing as importing
    from store import Store
    from store.adapters import import_chatgpt
    importing.BATCH_SECONDS = 0.0  # every conversation its own group: the stop inside the 41st unit leaves 39 whole ones
    st = Store.open({db!r})
    import_chatgpt(st, {export!r})
    print("done", flush=True)
""")


@pytest.mark.slow
def test_sigkill_mid_import_leaves_whole_conversations(tmp_path):
    export = tmp_path / "conversations.json"
    export.write_text(json.dumps(generated_export(N_CONVERSATIONS, MESSAGES_PER, "kill", "lorem ipsum dolor.")))
    db = tmp_path / "db" / "kill.db"
    Store.open(db).close()  # the schema exists before the child starts writing
    code = CHILD.format(repo=str(REPO), db=str(db), export=str(export))
    # The child stops itself inside the 41st unit (the first makes the parent scope): 39 conversations are in, the
    # 40th written but not committed (a stop point, not a race with the child).
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=600,
                          env={**os.environ, "PCP_TEST_STOP": "import-unit:41"})
    assert proc.returncode == -signal.SIGKILL, proc.stderr.decode()
    assert b"done" not in proc.stdout

    st = Store.open(db)
    try:
        doc = st.doctor()
        assert doc["integrity"] == "ok"
        assert doc["fts"]["state"] == "ok"
        pages_after_kill = doc["counts"]["page"]
        expected = N_CONVERSATIONS * (MESSAGES_PER + 1)
        assert pages_after_kill == 39 * (MESSAGES_PER + 1)
        # A conversation is all or nothing: every conversation page present has all its messages.
        convs = [res for res in h.pages(st) if "message_id" not in res["revision"]["facets"]]
        assert len(convs) * (MESSAGES_PER + 1) == pages_after_kill
        for res in convs:
            assert len(h.outgoing(res, "contains")) == MESSAGES_PER

        report = import_chatgpt(st, export)
        assert report.unchanged == pages_after_kill
        assert report.created == expected - pages_after_kill
        assert h.page_count(st) == expected
        assert st.doctor()["integrity"] == "ok"
        again = import_chatgpt(st, export)
        assert again.created == 0 and again.unchanged == expected
    finally:
        st.close()
