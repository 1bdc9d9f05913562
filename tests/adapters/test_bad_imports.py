"""Bad input to importers (issue 12 items 17-20): bombs, deep nesting, bad items, odd vault files."""

from __future__ import annotations

import os
import tracemalloc
import zipfile
from pathlib import Path

import pytest

from store import LimitExceeded, Store
from store.adapters import import_chatgpt, import_claude


@pytest.fixture
def small_limit(monkeypatch):
    from store.core import LIMITS

    monkeypatch.setitem(LIMITS, "max_import_bytes", 1_000_000)


def test_a_zip_bomb_is_refused_before_it_is_inflated(store, tmp_path, small_limit):
    bomb = tmp_path / "bomb.zip"
    with zipfile.ZipFile(bomb, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        with zf.open("conversations.json", "w") as fh:
            fh.write(b"[" + b" " * 40_000_000 + b"]")
    assert bomb.stat().st_size < 200_000
    tracemalloc.start()
    try:
        with pytest.raises(LimitExceeded) as caught:
            import_chatgpt(store, bomb)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 5_000_000  # nothing near the 40 MB it would inflate to
    message = str(caught.value)
    assert "\n" not in message and "40,000,002 bytes" in message and "limit is 1,000,000 bytes" in message
    assert store.list_pages()["pages"] == []


def test_a_plain_export_file_over_the_limit_is_refused(store, tmp_path, small_limit):
    big = tmp_path / "conversations.json"
    big.write_bytes(b"[" + b" " * 2_000_000 + b"]")
    with pytest.raises(LimitExceeded, match="import limit is 1,000,000 bytes"):
        import_claude(store, big)


def test_the_import_limit_is_stated_in_the_capabilities(tmp_path):
    st = Store.open(tmp_path / "s.db")
    assert st.describe_capabilities()["limits"]["max_import_bytes"] == 1 << 30
    st.close()


def test_an_events_file_over_the_limit_is_refused(store, tmp_path, small_limit):
    from store.adapters import import_events

    big = tmp_path / "events.jsonl"
    big.write_bytes(b"\n" * 1_500_000)
    with pytest.raises(LimitExceeded, match="import limit is 1,000,000 bytes"):
        import_events(store, big)


# ------------------------------------------------------------------------------------------ item 20: the vault

def _vault_contents(store) -> dict[str, str]:
    out = {}
    for page in store.list_pages()["pages"]:
        rev = store.read_pages([page["page_id"]])["results"][0]["revision"]
        out[rev["facets"]["path"]] = rev["payload"]["content"]
    return out


def test_markdown_import_never_leaves_the_vault(store, tmp_path):
    import threading

    from store.adapters import import_markdown

    secret = tmp_path / "passwd"
    secret.write_text("root:x:0:0:root:/root:/bin/bash\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "far.md").write_text("far away\n")
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "real.md").write_text("a real note\n")
    (vault / "passwd.md").symlink_to(secret)
    (vault / "alias.md").symlink_to(vault / "real.md")  # a link that stays in the vault is fine
    (vault / "elsewhere").symlink_to(outside, target_is_directory=True)
    os.mkfifo(vault / "pipe.md")
    (vault / b"caf\xe9.md".decode("utf-8", "surrogateescape")).write_text("latin-1 name\n")

    result: dict = {}
    worker = threading.Thread(target=lambda: result.update(report=import_markdown(store, vault)), daemon=True)
    worker.start()
    worker.join(60)
    if worker.is_alive():  # unblock the reader so the test run can end, then fail
        with open(vault / "pipe.md", "w"):
            pass
        worker.join(5)
        pytest.fail("the import blocked on a FIFO")
    report = result["report"]
    contents = _vault_contents(store)
    assert contents == {"real.md": "a real note\n", "alias.md": "a real note\n"}
    assert not any("root:x" in c for c in contents.values())
    reasons = {s["item"]: s["reason"] for s in report.skipped}
    assert "outside the vault" in reasons["vault:passwd.md"]
    assert "not a regular file" in reasons["vault:pipe.md"]
    assert "folder links" in reasons["vault:elsewhere/"]
    assert "not valid UTF-8" in reasons["vault:caf\ufffd.md"]


# ------------------------------------------------------------------------------------------ item 19: bad items

def _claude_message(uuid: str, text: str, parent: str | None, at: str) -> dict:
    return {"uuid": uuid, "sender": "human", "created_at": at, "parent_message_uuid": parent or "",
            "content": [{"type": "text", "text": text}]}


def test_one_bad_message_is_skipped_and_the_rest_imported(store, tmp_path, monkeypatch):
    import json as _json

    from store.core import LIMITS

    monkeypatch.setitem(LIMITS, "max_payload_chars", 1000)
    texts = ["first fine", "has a NUL \x00 here", "LONE_SURROGATE_SLOT", "x" * 2000, "last fine"]
    msgs, parent = [], None
    for i, text in enumerate(texts):
        msgs.append(_claude_message(f"m{i}", text, parent, f"2024-01-01T00:00:0{i}Z"))
        parent = f"m{i}"
    export = [{"uuid": "c1", "name": "Chat one", "created_at": "2024-01-01T00:00:00Z", "chat_messages": msgs},
              {"uuid": "c2", "name": "Chat two", "created_at": "2024-01-02T00:00:00Z",
               "chat_messages": [_claude_message("n0", "another chat", None, "2024-01-02T00:00:00Z")]}]
    raw = _json.dumps(export).replace("LONE_SURROGATE_SLOT", "lone \\ud800 surrogate")
    src = tmp_path / "conversations.json"
    src.write_text(raw)
    report = import_claude(store, src)
    skipped = {s["item"]: s["reason"] for s in report.skipped}
    assert "NUL" in skipped["claude message c1:m1"]
    assert "lone surrogate" in skipped["claude message c1:m2"]
    assert "limit is 1,000" in skipped["claude message c1:m3"]
    assert report.conversations == 2 and report.messages == 3
    contents = {(p.get("title") or "") for p in store.list_pages()["pages"]}
    assert any("first fine" in t for t in contents) and any("last fine" in t for t in contents)
    assert any("another chat" in t for t in contents)


def test_one_bad_event_is_skipped_and_the_rest_imported(store, tmp_path, monkeypatch):
    import json as _json

    from store.adapters import import_events
    from store.core import LIMITS

    monkeypatch.setitem(LIMITS, "max_payload_chars", 1000)
    lines = [_json.dumps({"idempotency_key": f"k{i}", "namespace": "events:a", "content": text})
             for i, text in enumerate(["fine one", "NUL \x00", "SLOT", "y" * 2000, "fine two"])]
    lines[2] = lines[2].replace("SLOT", "lone \\udc00")
    lines.append(_json.dumps({"idempotency_key": "k9", "namespace": "events:a", "content": "actor",
                              "actor_id": "SLOT"}).replace("SLOT", "\\ud801"))
    src = tmp_path / "events.jsonl"
    src.write_text("\n".join(lines) + "\n")
    report = import_events(store, src)
    reasons = {s["line"]: s["reason"] for s in report.skipped}
    assert "NUL" in reasons[2] and "lone surrogate" in reasons[3] and "limit is 1,000" in reasons[4]
    assert 6 in reasons and report.events == 2 and report.created == 2


# ------------------------------------------------------------------------------------------ agent folders: FIFOs

_AGENTS = Path(__file__).resolve().parents[1] / "data" / "agents"
_AGENT_CASES = {
    # importer: (a real session file, where it goes in the folder, the FIFO's name beside it)
    "claude_code": (_AGENTS / "claude-code" / "kfischer-okarin" / "-Users-user-project"
                    / "b3edadab-bca0-4054-9b41-f7ffa6941260.jsonl", "proj", "pipe.jsonl"),
    "codex": (next((_AGENTS / "codex" / "codemie-code" / "sessions").rglob("rollout-*.jsonl")), "sessions/2026/01/02",
              "rollout-2026-01-02T00-00-00-pipe.jsonl"),
    "gemini": (next((_AGENTS / "gemini" / "codemie-code" / "tmp").rglob("session-*.json")), "tmp/abc/chats",
               "session-2026-01-01T00-00-pipe.json"),
}


def _import_unblocked(importer, store, path, fifos):
    """Run the import in a thread; if it blocks on a FIFO, unblock it so the run can end, then fail."""
    import threading

    result: dict = {}
    worker = threading.Thread(target=lambda: result.update(report=importer(store, path)), daemon=True)
    worker.start()
    worker.join(60)
    if worker.is_alive():
        for fifo in fifos:
            try:
                os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))  # the blocked reader's open returns
            except OSError:
                pass
        worker.join(5)
        pytest.fail("the import blocked on a FIFO")
    return result["report"]


@pytest.mark.parametrize("source", sorted(_AGENT_CASES))
def test_agent_importers_skip_fifos_in_the_report_and_never_open_them(store, tmp_path, source):
    import shutil

    from store import adapters

    sample, where, pipe_name = _AGENT_CASES[source]
    folder = tmp_path / "home"
    (folder / where).mkdir(parents=True)
    shutil.copy(sample, folder / where / sample.name)
    fifo = folder / where / pipe_name
    os.mkfifo(fifo)
    importer = getattr(adapters, f"import_{source}")
    report = _import_unblocked(importer, store, folder, [fifo])
    assert report.conversations >= 1  # the real session beside it came in
    reasons = {s["item"]: s["reason"] for s in report.skipped}
    label = next(item for item in reasons if pipe_name in item)  # counted and reported, not passed over
    assert "not a regular file" in reasons[label]
    assert len(reasons[label].splitlines()) == 1
    assert not any(pipe_name in (e.get("item") or "") for e in report.entries if e["outcome"] != "skipped")


@pytest.mark.parametrize("source", sorted(_AGENT_CASES))
def test_an_agent_import_of_a_fifo_itself_is_skipped_not_opened(store, tmp_path, source):
    from store import adapters

    fifo = tmp_path / _AGENT_CASES[source][2]
    os.mkfifo(fifo)
    report = _import_unblocked(getattr(adapters, f"import_{source}"), store, fifo, [fifo])
    assert report.conversations == 0
    assert [s["reason"] for s in report.skipped] == ["not a regular file (a pipe, socket or device); not read"]


def test_a_claude_code_session_file_with_a_fifo_among_its_subagents_does_not_block(store, tmp_path):
    import shutil

    from store.adapters import import_claude_code

    sample = _AGENT_CASES["claude_code"][0]
    session = tmp_path / sample.name
    shutil.copy(sample, session)
    (tmp_path / sample.stem / "subagents").mkdir(parents=True)
    fifo = tmp_path / sample.stem / "subagents" / "agent-pipe.jsonl"
    os.mkfifo(fifo)
    report = _import_unblocked(import_claude_code, store, session, [fifo])
    assert report.conversations >= 1
    assert any("agent-pipe.jsonl" in s["item"] and "not a regular file" in s["reason"] for s in report.skipped)
