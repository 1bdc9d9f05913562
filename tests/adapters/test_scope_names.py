"""Issue 28: a scope is never named after message text.

An imported conversation's or session's scope stores a neutral name (its source and day); `list_scopes`,
`pcp scopes` and the app show the conversation page's current title beside it, read live, so an erased
title goes with its page: after every page of a session is erased, no byte of its title is in the
database, the WAL, an export or the next sync file. Older stores are renamed by the schema 7 migration."""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path

import pytest

from pcp_tui import cli
from store import Store
from store.adapters import import_chatgpt, import_claude_code
from store.sync.folder import Folder

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "store"))
import pcpstore_helpers as h  # noqa: E402

DATA = Path(__file__).resolve().parents[1] / "data"
SID = "5f0c2a9e-1b7d-4c3a-9e21-7d4b8a6f0c11"
# The first line of the first prompt is the session's title: made-up words, so any 16 bytes of it are its own.
TITLE = "Quillfeather vault rotation for the Marrowdale ledger of Zennick Obruvian"
NEUTRAL = re.compile(r"^(ChatGPT|Claude|Claude Code|Codex|Gemini) (conversation|session), (\d{4}-\d\d-\d\d|undated)$")


def session_file(folder: Path) -> Path:
    """One Claude Code session (two turns) as the CLI writes it."""
    project = folder / "-Users-someone-vaults"
    project.mkdir(parents=True)
    base = {"isSidechain": False, "userType": "external", "cwd": "/Users/someone/vaults", "sessionId": SID,
            "version": "2.0.74", "gitBranch": "main"}
    lines = [
        {**base, "parentUuid": None, "type": "user", "uuid": "u1", "timestamp": "2025-12-20T09:18:54.653Z",
         "message": {"role": "user", "content": TITLE + "\nKeep the Quillfeather keys apart from the Marrowdale ones."}},
        {**base, "parentUuid": "u1", "type": "assistant", "uuid": "a1", "timestamp": "2025-12-20T09:19:10.000Z",
         "message": {"role": "assistant", "model": "claude-sonnet-4-5", "id": "msg_1", "type": "message",
                     "content": [{"type": "text", "text": "I will rotate the vault keys in three steps."}]}},
    ]
    path = project / f"{SID}.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return project


def pcp_out(db: Path, *args: str, capsys: pytest.CaptureFixture[str]) -> str:
    assert cli.main(["--db", str(db), *args]) == 0
    return capsys.readouterr().out


def opened(db: Path, folder: Path) -> bytes:
    """Every sync file this store can open in the folder, decrypted (what a paired store reads)."""
    out = b""
    with Store.open(db) as st:
        view = Folder(st.sync, folder)
        keys = view.keys()
        files = sorted(folder.glob("sto_*/*.pcs"))
        assert files
        for f in files:
            got = view._open(f, f.parent.name, int(f.stem), keys)
            assert not isinstance(got, str), got
            out += b"".join(json.dumps(json.loads(x), ensure_ascii=False).encode() for x in got[1].splitlines())
    return out


def test_an_erased_sessions_title_leaves_no_byte_anywhere(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    a, b, folder = tmp_path / "a" / "s.db", tmp_path / "b" / "s.db", tmp_path / "folder"
    a.parent.mkdir()
    b.parent.mkdir()
    with Store.open(a) as st:
        code = st.sync_pair(folder)["code"]
    with Store.open(b) as st:
        st.sync_join(folder, code)
    with Store.open(a) as st:
        import_claude_code(st, session_file(tmp_path / "projects"))
        ns = next(s["namespace"] for s in st.list_scopes(limit=100)["scopes"] if s["namespace"].endswith(SID))
    # the stored name is neutral; the title is shown beside it, read from the conversation page
    shown = {s["namespace"]: s for s in json.loads(pcp_out(a, "--json", "scopes", capsys=capsys))["scopes"]}
    assert shown[ns]["display_name"] == "Claude Code session, 2025-12-20"
    assert shown[ns]["title"] == TITLE
    line = next(line for line in pcp_out(a, "scopes", capsys=capsys).splitlines() if ns[:60] in line)
    assert "Claude Code session, 2025-12-20 · Quillfeather vault rotation" in line
    with Store.open(a) as st:
        st.sync_folder(folder)
    assert TITLE.encode() in opened(a, folder)  # test setup: the title travels while its page lives
    # erase every page of the session (the scope stays)
    with Store.open(a) as st:
        flt = {"scopes": [ns]}
        plan = st.plan_bulk_delete(flt)
        assert plan["pages"] >= 3
        st.bulk_delete(flt, "forget that session", plan["digest"])
        st.sync_folder(folder)  # the next sync file, written after the erasure
        st.export(tmp_path / "export.jsonl")
        left = {s["namespace"]: s for s in st.list_scopes(limit=100)["scopes"]}
    assert ns in left and "title" not in left[ns]  # the scope is there, its title went with its page
    assert TITLE not in pcp_out(a, "scopes", capsys=capsys)
    title = TITLE.encode()
    windows = h.windows(title) | h.windows(TITLE.casefold().encode())
    assert h.find_residue(h.files_beside(a), windows) == []
    assert h.find_residue([tmp_path / "export.jsonl"], windows) == []
    synced = opened(a, folder)
    assert b"forget that session" in synced  # (the file is the new one: it carries the deletion receipt)
    assert not any(w in synced for w in windows)


def test_chat_imports_name_conversation_scopes_neutrally(store):
    import_chatgpt(store, DATA / "exports" / "chatgpt-danny-avila-LibreChat-1.json")
    scopes = [s for s in store.list_scopes(limit=100)["scopes"] if s["namespace"].startswith("conversation:")]
    assert scopes
    for s in scopes:
        assert NEUTRAL.match(s["display_name"]), s
        assert s["title"] and s["title"] != s["display_name"]
        conv = h.read1(store, next(p["page_id"] for p in store.list_pages(scopes=[s["namespace"]], limit=200)["pages"]
                                   if p["title"] == s["title"]))
        assert conv["revision"]["facets"]["title"] == s["title"]


def test_a_model_without_read_sees_no_title(store):
    import_chatgpt(store, DATA / "exports" / "chatgpt-danny-avila-LibreChat-1.json")
    ns = next(s["namespace"] for s in store.list_scopes(limit=100)["scopes"] if s["namespace"].startswith("conversation:"))
    listing = h.model(store, {ns: ["list_scopes"]}).list_scopes()["scopes"]
    assert [s["namespace"] for s in listing] == [ns] and "title" not in listing[0]
    reader = h.model(store, {ns: ["list_scopes", "read"]}).list_scopes()["scopes"]
    assert reader[0]["title"]


def test_the_upgrade_renames_scopes_named_after_titles(tmp_path):
    """A store written before (tests/data/stores/main-69a0c76.db: chat exports and Claude Code sessions)."""
    db = tmp_path / "old.db"
    shutil.copy(DATA / "stores" / "main-69a0c76.db", db)
    con = h.sqlite3.connect(str(db))
    try:
        before = dict(con.execute("SELECT namespace, display_name FROM scope"))
        titles = {r[0] for r in con.execute("SELECT title FROM page")}
    finally:
        con.close()
    titled = [ns for ns, name in before.items() if name in titles and ns.startswith(("conversation:", "agent:"))]
    assert len(titled) > 5, "test setup: the old importers named scopes after titles"
    with Store.open(db) as st:
        st.upgrade_index()
        after = {s["namespace"]: s for s in st.list_scopes(limit=100)["scopes"]}
    for ns in titled:
        assert NEUTRAL.match(after[ns]["display_name"]), after[ns]
        assert after[ns]["title"] == before[ns]  # shown beside it, live
    untouched = [ns for ns in before if not ns.startswith(("conversation:", "agent:"))]
    assert untouched and all(after[ns]["display_name"] == before[ns] for ns in untouched)
