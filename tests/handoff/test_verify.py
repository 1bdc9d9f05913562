"""`verify` (handoff.md "Continuing a chat"): pasted text back, its digests, each entry's state now."""

from __future__ import annotations

import pytest

from handoff_helpers import P1, P2, P3, P4, R1, R2, R3, R4, fixed_id
from store import PcpError


def _states(result: dict) -> dict[int, str]:
    return {e["n"]: e["state"] for e in result["entries"]}


def test_an_untouched_bundle_verifies_with_every_entry_current(fixed_store):
    text = fixed_store.bundle([P1, P2, P3])["text"]
    result = fixed_store.verify(text)
    assert set(result) == {"digest_ok", "digest", "origin", "kind", "entries"}
    assert result["digest_ok"] is True and result["kind"] == "bundle"
    assert result["entries"] == [
        {"n": 1, "page_id": P1, "revision_id": R1, "state": "current"},
        {"n": 2, "page_id": P2, "revision_id": R2, "state": "current"},
        {"n": 3, "page_id": P3, "revision_id": R3, "state": "current"},
    ]


def test_a_tampered_bundle_fails_its_digest(fixed_store):
    text = fixed_store.bundle([P1, P2])["text"]
    for tampered in (text.replace("Compactness first", "Compactness last"), text.replace("\n\n## [2]", "\n## [2]"),
                     text.replace("有限", "无限")):
        assert tampered != text
        result = fixed_store.verify(tampered)
        assert result["digest_ok"] is False and len(result["entries"]) == 2


def test_states_newer_revision_tombstoned_archived_deleted_unknown(fixed_store):
    text = fixed_store.bundle([P1, P2, P3, P4])["text"]
    fixed_store.revise_page(P1, R1, content="newer\n")
    fixed_store.tombstone_page(P2, "withdrawn")
    fixed_store.archive_page(P3, "old")
    fixed_store.delete_page(P4, "erase")
    result = fixed_store.verify(text)
    assert result["digest_ok"] is True
    assert _states(result) == {1: "newer_revision", 2: "tombstoned", 3: "archived", 4: "deleted"}
    unknown = text.replace(R4, fixed_id("rev", 99))
    assert _states(fixed_store.verify(unknown))[4] == "unknown"


def test_a_continuation_is_rebuilt_from_the_ledger_and_checked(fixed_store):
    fixed_store.copy([P1, P2], label="chat")
    fixed_store.revise_page(P1, R1, content="newer\n")
    second = fixed_store.copy_continue("chat", [P3])
    result = fixed_store.verify(second["text"])
    assert result["digest_ok"] is True and result["kind"] == "continuation" and result["digest"] == second["digest"]
    assert _states(result) == {1: "newer_revision", 2: "current", 3: "current", 4: "current"}
    tampered = second["text"].replace("Lecture recording", "Lecture recordings")
    assert fixed_store.verify(tampered)["digest_ok"] is False
    wrong_base = second["text"].replace(second["continuation_of"], "sha256:" + "1" * 64, 1)
    assert fixed_store.verify(wrong_base)["digest_ok"] is False


def test_pasting_quirks_leading_blank_lines_and_crlf_line_ends(fixed_store):
    text = fixed_store.bundle([P1, P2])["text"]
    assert fixed_store.verify("\n\n" + text + "\n\n")["digest_ok"] is True
    assert fixed_store.verify(text.rstrip("\n"))["digest_ok"] is True
    assert fixed_store.verify(text.replace("\n", "\r\n"))["digest_ok"] is True


def test_text_without_a_trailer_is_refused(fixed_store):
    with pytest.raises(PcpError) as err:
        fixed_store.verify("just some text\n")
    assert err.value.code == "invalid" and "trailer" in err.value.message
