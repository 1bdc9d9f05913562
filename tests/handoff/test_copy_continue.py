"""Copying and continuing a chat (handoff.md "Copying", "The handoff ledger", "Continuing a chat")."""

from __future__ import annotations

from peewee import sqlite3  # the store's SQLite: two libraries in one process break each other's locks
from pathlib import Path

import pytest
from ctxpack import ContextPack, ContextPackDelta, apply_delta

from handoff_helpers import P1, P2, P3, P4, R1, body_of, trailer_digests, write
from store import PcpError


def _stored(db_path: Path, handoff_id: str) -> dict:
    with sqlite3.connect(db_path) as con:
        row = con.execute("SELECT pack, delta, kind FROM handoff WHERE handoff_id = ?", (handoff_id,)).fetchone()
    return {"pack": row[0], "delta": row[1], "kind": row[2]}


def _appended(text: str) -> str:
    """A continuation's text between its header block and its trailer."""
    start = text.index("\n\n") + 2
    end = text.rstrip("\n").rfind("\n") + 1
    return text[start:end]


def test_copy_records_the_handoff_writes_the_file_and_uses_the_clipboard(fixed_store, db_path):
    given = []

    def clipboard(text: str) -> str:
        given.append(text)
        return "pyperclip"

    result = fixed_store.copy([P1, P2], label="Claude: thesis chapter 3", clipboard=clipboard)
    assert set(result) >= {"handoff_id", "label", "digest", "continuation_of", "text", "file", "clipboard", "bytes",
                           "tokens", "entries", "warnings"}
    assert result["handoff_id"].startswith("hnd_") and result["continuation_of"] is None
    assert given == [result["text"]] and result["clipboard"] == "pyperclip"
    path = Path(result["file"])
    assert path == db_path.parent / "handoffs" / f"{result['handoff_id']}.md"
    assert path.read_text(encoding="utf-8") == result["text"]
    assert path.stat().st_mode & 0o077 == 0  # private to the user
    assert result["digest"] == trailer_digests(result["text"])[0]
    assert result["bytes"] == len(result["text"].encode())
    assert [e["page_id"] for e in result["entries"]] == [P1, P2]
    listed = fixed_store.handoffs()["handoffs"]
    assert len(listed) == 1 and listed[0]["handoff_id"] == result["handoff_id"]
    assert listed[0]["entries"] == result["entries"] and listed[0]["digest"] == result["digest"]
    assert _stored(db_path, result["handoff_id"])["pack"] == ContextPack.from_content(body_of(result["text"])).to_json()


def test_without_a_clipboard_the_copy_is_file_only(fixed_store):
    result = fixed_store.copy([P1], label="chat")
    assert result["clipboard"] == "file-only" and Path(result["file"]).exists()
    broken = fixed_store.copy([P2], label="chat 2", clipboard=lambda text: 1 / 0)
    assert broken["clipboard"] == "file-only"


def test_a_label_starts_one_chat_only(fixed_store):
    fixed_store.copy([P1], label="chat")
    with pytest.raises(PcpError) as err:
        fixed_store.copy([P2], label="chat")
    assert err.value.code == "conflict" and "--continue" in err.value.message
    with pytest.raises(PcpError) as err:
        fixed_store.copy_continue("no such chat")
    assert err.value.code == "not_found"


def test_an_append_only_continuation_carries_only_the_new_text(fixed_store, db_path):
    first = fixed_store.copy([P1, P2], label="chat")
    second = fixed_store.copy_continue("chat", [P3, P4])
    old, new = first["digest"], second["digest"]
    text = second["text"]
    assert text.startswith(f"continues pcp-bundle {old}\n")
    assert "Keep everything you already have" in text and "Disregard" not in text
    assert trailer_digests(text) == (new, old)
    assert second["continuation_of"] == old
    old_body = body_of(first["text"])
    new_body = ContextPack.from_bytes(_stored(db_path, second["handoff_id"])["pack"].encode()).content
    assert new_body.startswith(old_body)
    assert _appended(text) == new_body[len(old_body):]
    assert "Chapter 3 outline" not in text and "有限乘积" not in text  # nothing of the earlier entries again
    assert [e["n"] for e in second["entries"]] == [3, 4]
    assert [e["page_id"] for e in second["entries"]] == [P3, P4]


def test_the_stored_delta_rebuilds_the_new_body_from_the_old_pack(fixed_store, db_path):
    first = fixed_store.copy([P1], label="chat")
    second = fixed_store.copy_continue("chat", [P2, P4])
    held = ContextPack.from_content(body_of(first["text"]))  # what a program kept from the first copy
    delta = ContextPackDelta.from_bytes(_stored(db_path, second["handoff_id"])["delta"].encode())
    rebuilt = apply_delta(held, delta)
    assert rebuilt.content == body_of(first["text"]) + _appended(second["text"])
    assert rebuilt.digest == second["digest"]
    assert delta.kept_chunks >= len(held.chunks) - 1


def test_a_revised_page_is_disregarded_by_number_and_ids_and_appended_at_its_new_head(fixed_store):
    first = fixed_store.copy([P1, P2], label="chat")
    rev = fixed_store.revise_page(P1, R1, content="Chapter 3, second draft.\n")
    second = fixed_store.copy_continue("chat")
    text = second["text"]
    assert f"Disregard entry 1 (page {P1}, revision {R1}): revised; its current revision is entry 3 below." in text
    assert [(e["n"], e["page_id"], e["revision_id"]) for e in second["entries"]] == [(3, P1, rev["revision_id"])]
    assert "Chapter 3, second draft." in _appended(text)
    third = fixed_store.copy_continue("chat", [P3])
    assert "Disregard" not in third["text"]  # said once is enough
    assert [e["n"] for e in third["entries"]] == [4]  # numbers are never reused in a chat
    assert first["entries"][0]["n"] == 1


def test_withdrawn_pages_are_dropped_and_named(fixed_store):
    fixed_store.copy([P1, P2, P4], label="chat")
    fixed_store.tombstone_page(P2, "wrong")
    fixed_store.archive_page(P4, "done")
    second = fixed_store.copy_continue("chat", [P3])
    text = second["text"]
    assert "Disregard entry 2 (page " + P2 in text and "tombstoned in the user's store" in text
    assert "Disregard entry 3 (page " + P4 in text and "archived in the user's store" in text
    assert [e["page_id"] for e in second["entries"]] == [P3]
    fixed_store.restore_page(P4, "back")
    third = fixed_store.copy_continue("chat", [P2, P4])  # given again explicitly: new entries
    assert [e["n"] for e in third["entries"]] == [5, 6]


def test_only_withdrawals_still_make_a_continuation_without_entries(fixed_store):
    first = fixed_store.copy([P1, P2], label="chat")
    fixed_store.archive_page(P2, "done")
    second = fixed_store.copy_continue("chat")
    assert second["entries"] == [] and "No new entries." in second["text"]
    assert trailer_digests(second["text"]) == (first["digest"], first["digest"])
    with pytest.raises(PcpError) as err:
        fixed_store.copy_continue("chat")
    assert err.value.code == "invalid" and "Nothing new" in err.value.message


def test_the_preamble_stays_byte_identical_and_new_scopes_are_named(fixed_store, db_path):
    first = fixed_store.copy([P1], label="chat")
    other = write(fixed_store, "user:prefs", "Prefers short answers.")
    second = fixed_store.copy_continue("chat", [other["page_id"]])
    assert 'New scopes since the first handoff: "user:prefs".' in second["text"]
    assert [w["code"] for w in second["warnings"]] == ["scope_mix"]
    body = ContextPack.from_bytes(_stored(db_path, second["handoff_id"])["pack"].encode()).content
    preamble = body_of(first["text"])[: body_of(first["text"]).index("## [1]")]
    assert body.startswith(preamble) and 'Scopes: "project:thesis"\n' in preamble
    third = fixed_store.copy_continue("chat", [P2])
    assert "New scopes" not in third["text"] and third["warnings"] == []


def test_strict_refuses_with_warnings_and_records_nothing(fixed_store, db_path):
    secret = write(fixed_store, "project:thesis", "deploy key\n-----BEGIN OPENSSH PRIVATE KEY-----\nabc\n")
    called = []
    with pytest.raises(PcpError) as err:
        fixed_store.copy([P1, secret["page_id"]], label="chat", strict=True, clipboard=called.append)
    assert err.value.code == "invalid" and "Entry 2" in err.value.message and "private key" in err.value.message
    assert called == [] and fixed_store.handoffs()["handoffs"] == []
    assert not (db_path.parent / "handoffs").exists() or not list((db_path.parent / "handoffs").iterdir())
    fixed_store.copy([P1], label="chat", strict=True)
    with pytest.raises(PcpError) as err:
        fixed_store.copy_continue("chat", [secret["page_id"]], strict=True)
    assert err.value.code == "invalid"
    assert len(fixed_store.handoffs()["handoffs"]) == 1
    loose = fixed_store.copy_continue("chat", [secret["page_id"]])
    assert [w["code"] for w in loose["warnings"]] == ["secret"] and loose["warnings"][0]["n"] == 2


def test_continuation_budget_applies_to_the_copied_text(fixed_store):
    fixed_store.copy([P1], label="chat")
    second = fixed_store.copy_continue("chat", [P2, P4], max_tokens=400)
    assert second["tokens"] <= 400
    assert [e["detail"] for e in second["entries"]][0] == "payload"
    assert second["cut"] and second["cut"][0]["page_id"] == P4
