"""The handoff ledger (handoff.md "The handoff ledger"): which chats saw a page, deletion that reaches
the stored copies (pcp-core.md section 6), and export/import of the ledger."""

from __future__ import annotations

from peewee import sqlite3  # the store's SQLite: two libraries in one process break each other's locks
from pathlib import Path

import pytest
from ctxpack import ContextPack, ContextPackDelta, apply_delta

from handoff_helpers import P1, P2, P3, P4, R2, trailer_digests, write
from store import PcpError, Store

MARKER = "ZEBRA-QUARTZ-7731-only-in-the-victim"


def _ids(listing: dict) -> list[str]:
    return [h["handoff_id"] for h in listing["handoffs"]]


def test_which_chats_saw_a_page_is_one_query(fixed_store):
    a1 = fixed_store.copy([P1, P2], label="Claude: A")
    b1 = fixed_store.copy([P2, P3], label="GPT: B")
    a2 = fixed_store.copy_continue("Claude: A", [P4])
    assert _ids(fixed_store.handoffs(page_id=P2)) == [b1["handoff_id"], a1["handoff_id"]]
    assert {h["label"] for h in fixed_store.handoffs(page_id=P2)["handoffs"]} == {"Claude: A", "GPT: B"}
    assert _ids(fixed_store.handoffs(page_id=P4)) == [a2["handoff_id"]]
    assert _ids(fixed_store.handoffs(page_id=R2)) == [b1["handoff_id"], a1["handoff_id"]]
    assert _ids(fixed_store.handoffs(label="Claude: A")) == [a2["handoff_id"], a1["handoff_id"]]
    assert fixed_store.handoffs(page_id="pg_01J59999999999999999999999")["handoffs"] == []
    with pytest.raises(PcpError) as err:
        fixed_store.handoffs(page_id="not-an-id")
    assert err.value.code == "invalid"


def test_the_ledger_is_newest_first_and_keyset_paged(fixed_store):
    made = [fixed_store.copy([P1], label=f"chat {i}")["handoff_id"] for i in range(5)]
    first = fixed_store.handoffs(limit=2)
    second = fixed_store.handoffs(limit=2, cursor=first["next_cursor"])
    third = fixed_store.handoffs(limit=2, cursor=second["next_cursor"])
    assert _ids(first) + _ids(second) + _ids(third) == made[::-1]
    assert third["next_cursor"] is None
    item = first["handoffs"][0]
    assert set(item) == {"handoff_id", "label", "digest", "continuation_of", "created_at", "entries", "bytes", "tokens"}
    assert set(item["entries"][0]) == {"n", "page_id", "revision_id", "namespace", "detail", "bytes", "tokens"}


@pytest.fixture
def victim(fixed_store):
    page = write(fixed_store, "project:thesis", f"Victim notes\n{MARKER} and more private words.\n",
                 facets={"title": f"Victim {MARKER}", "summary": f"summary {MARKER}"})
    return page["page_id"]


def _residue(db_path: Path, needle: str) -> list[str]:
    data = needle.encode("utf-8")
    found = []
    for path in [db_path, Path(f"{db_path}-wal"), *sorted((db_path.parent / "handoffs").iterdir())]:
        if path.exists() and data in path.read_bytes():
            found.append(path.name)
    return found


def _chain_is_consistent(db_path: Path) -> None:
    """Every stored pack parses, and every stored delta rebuilds its copy's pack from the previous one."""
    with sqlite3.connect(db_path) as con:
        rows = con.execute("SELECT id, previous, pack, delta FROM handoff ORDER BY id").fetchall()
    packs = {}
    for pk, previous, pack, delta in rows:
        packs[pk] = ContextPack.from_bytes(pack.encode())
        if previous is not None:
            rebuilt = apply_delta(packs[previous], ContextPackDelta.from_bytes(delta.encode()))
            assert rebuilt == packs[pk]


def test_deleting_a_page_erases_it_from_stored_packs_and_files(fixed_store, db_path, victim):
    a1 = fixed_store.copy([P1, victim], label="chat A")
    a2 = fixed_store.copy_continue("chat A", [P2])
    b1 = fixed_store.copy([victim, P3], label="chat B", max_tokens=300)
    assert _residue(db_path, MARKER)
    plan = fixed_store.plan_delete(victim)
    assert plan["handoffs"] == [
        {"handoff_id": a1["handoff_id"], "label": "chat A", "entry": 2},
        {"handoff_id": a2["handoff_id"], "label": "chat A", "entry": 2},
        {"handoff_id": b1["handoff_id"], "label": "chat B", "entry": 1},
    ]
    receipt = fixed_store.delete_page(victim, "user asked")
    assert receipt["counts"]["handoff_entries"] == 3
    assert _residue(db_path, MARKER) == []
    assert _residue(db_path, victim) == ["s.db"]  # the deletion receipt keeps ids, never content
    assert not [f for f in (db_path.parent / "handoffs").iterdir() if victim in f.read_text()]
    with sqlite3.connect(db_path) as con:  # an erased entry keeps its number only
        assert con.execute("SELECT COUNT(*) FROM handoff_entry WHERE page_id = ?", (victim,)).fetchone()[0] == 0
        assert con.execute("SELECT COUNT(*) FROM handoff WHERE header LIKE ?", (f"%{victim}%",)).fetchone()[0] == 0
    files = {h: (db_path.parent / "handoffs" / f"{h}.md").read_text() for h in
             (a1["handoff_id"], a2["handoff_id"], b1["handoff_id"])}
    assert "## [2] erased\n" in files[a1["handoff_id"]] and "Chapter 3 outline" in files[a1["handoff_id"]]
    assert "## [1] erased\n" in files[b1["handoff_id"]] and "Lecture recording" in files[b1["handoff_id"]]
    assert "有限乘积" in files[a2["handoff_id"]]
    _chain_is_consistent(db_path)
    listed = {h["handoff_id"]: h for h in fixed_store.handoffs()["handoffs"]}
    assert listed[a1["handoff_id"]]["entries"][1] == {
        "n": 2, "page_id": None, "revision_id": None, "namespace": None, "detail": "erased",
        "bytes": len("## [2] erased\n\n"), "tokens": 4}
    assert fixed_store.handoffs(page_id=victim)["handoffs"] == []
    # A continuation pasted before the erasure: its own text is unchanged, and it is exactly what the ledger
    # holds for that copy now, so it verifies as this store's (the erased entry reported deleted), never a guess.
    again = fixed_store.verify(a2["text"])
    assert again["digest_ok"] is True and again["origin"] == "this_store"
    assert "deleted" in {e["state"] for e in again["entries"]}
    assert fixed_store.verify(a2["text"].replace("有限乘积", "无限乘积"))["digest_ok"] is False


def test_a_continuation_after_an_erasure_names_the_entry_by_number_only(fixed_store, db_path, victim):
    a1 = fixed_store.copy([P1, victim], label="chat A")
    fixed_store.delete_page(victim, "erase")
    a2 = fixed_store.copy_continue("chat A", [P2])
    assert "Disregard entry 2: erased from the user's store." in a2["text"]
    assert victim not in a2["text"]
    assert trailer_digests(a2["text"])[1] == a1["digest"]  # still continues what the chat holds
    assert fixed_store.verify(a2["text"])["digest_ok"] is True  # rebuilt from the (redacted) ledger copy
    old = fixed_store.verify(a1["text"])
    assert old["digest_ok"] is True and [e["state"] for e in old["entries"]] == ["current", "deleted"]
    _chain_is_consistent(db_path)


def test_deleting_a_scope_erases_its_pages_from_handoffs(fixed_store, db_path):
    secret_scope = write(fixed_store, "user:diary", f"diary {MARKER}\n")
    fixed_store.copy([P1, secret_scope["page_id"]], label="chat")
    receipt = fixed_store.delete_scope("user:diary", "gone")
    assert receipt["counts"]["handoff_entries"] == 1
    assert _residue(db_path, MARKER) == []


def test_the_ledger_survives_export_and_import(fixed_store, tmp_path):
    a1 = fixed_store.copy([P1, P2], label="chat A")
    fixed_store.revise_page(P2, R2, content="revised P2\n")
    a2 = fixed_store.copy_continue("chat A", [P3])
    out = tmp_path / "all.jsonl"
    fixed_store.export(out)
    scoped = tmp_path / "scoped.jsonl"
    fixed_store.export(scoped, scopes=["project:thesis"])
    assert '"kind":"handoff"' in out.read_text() and '"kind":"handoff"' not in scoped.read_text()
    target_dir = tmp_path / "other"
    target_dir.mkdir()
    other = Store.open(target_dir / "s.db")
    try:
        report = other.import_export(out)
        assert report["added"]["handoff"] == 2
        assert other.handoffs() == fixed_store.handoffs()
        assert other.verify(a2["text"])["digest_ok"] is True
        for h in (a1, a2):
            copy = target_dir / "handoffs" / f"{h['handoff_id']}.md"
            assert copy.read_text() == Path(h["file"]).read_text()
        assert "handoff" not in other.import_export(out)["added"]  # idempotent
        a3 = other.copy_continue("chat A", [P4])
        assert [e["n"] for e in a3["entries"]] == [5]
    finally:
        other.close()
