"""The current Claude export (a manifest and several archives, memories, projects) and vendor memories in and out.

The archives are assembled here from tests/data/exports/claude-2026-layout (built from the documented
shapes, see SOURCES.md there) and two real Claude conversation exports; counts are checked against the
files themselves."""

from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path

import pytest

import import_helpers as h
from pcp_tui import cli
from store import Store
from store.adapters import import_claude, import_memory

LAYOUT = h.EXPORTS / "claude-2026-layout"
CONVERSATION_FILES = ("claude-osteele-claude-chat-viewer-1.json", "claude-simonw-claude-to-sqlite-2.json")


def build_export(dest: Path) -> Path:
    """The archives as Claude sends them, beside the manifest; returns the manifest's path."""
    dest.mkdir(parents=True, exist_ok=True)

    def archive(name: str, members: list[tuple[str, Path]]) -> None:
        with zipfile.ZipFile(dest / name, "w", zipfile.ZIP_DEFLATED) as zf:
            for arcname, path in members:
                zf.writestr(arcname, path.read_bytes())

    for n, name in enumerate(CONVERSATION_FILES):
        archive(f"conversations-00{n}.zip", [("conversations.json", h.EXPORTS / name)])
    archive("memories-000.zip", [(f"memories/{p.name}", p) for p in sorted((LAYOUT / "memories").iterdir())])
    archive("projects-000.zip", [(f"projects/{p.name}", p) for p in sorted((LAYOUT / "projects").iterdir())])
    archive("light_metadata-000.zip", [("users.json", LAYOUT / "users.json")])
    manifest = next(LAYOUT.glob("manifest-*.json"))
    shutil.copy(manifest, dest / manifest.name)
    return dest / manifest.name


def counted_in_files() -> dict[str, int]:
    conversations = [c for name in CONVERSATION_FILES for c in json.loads((h.EXPORTS / name).read_text())]
    projects = [json.loads(p.read_text()) for p in (LAYOUT / "projects").iterdir()]
    memory = json.loads(next((LAYOUT / "memories").iterdir()).read_text())
    sections = memory["conversations_memory"].count("**") // 2
    docs = sum(1 for p in projects for d in p["docs"] if d["content"].strip())
    return {"conversations": len(conversations), "messages": sum(len(c["chat_messages"]) for c in conversations),
            "projects": len(projects), "docs": docs, "memory_sections": sections,
            "project_memories": len(memory["project_memories"])}


def scope_counts(store) -> dict[str, int]:
    return {s["namespace"]: s["page_count"] for s in store.list_scopes(limit=100)["scopes"] if s["page_count"]}


def test_the_manifest_layout_imports_conversations_projects_and_memory_with_exact_counts(store, tmp_path):
    manifest = build_export(tmp_path / "download")
    files = counted_in_files()
    assert files == {"conversations": 3, "messages": 26, "projects": 2, "docs": 3, "memory_sections": 3,
                     "project_memories": 2}
    report = import_claude(store, manifest).to_dict()
    assert (report["conversations"], report["messages"]) == (files["conversations"], files["messages"])
    # 2 project pages + 3 documents + 3 memory sections + 2 project memories (one of a deleted project)
    assert report["notes"] == 10 and report["created"] == 10 + 3 + 26
    skipped = {s["item"]: s["reason"] for s in report["skipped"]}
    assert "account details" in skipped["light_metadata-000.zip"]
    assert "design chats" in skipped["design_chats-000.zip"]
    assert "only its name" in next(r for i, r in skipped.items() if i.endswith("architecture.pdf"))
    counts = scope_counts(store)
    assert counts["claude:memory"] == 4  # 3 sections of the account's memory + the deleted project's memory
    assert counts["claude:project:Billing service"] == 4  # the project, 2 documents, its memory
    assert counts["claude:project:Half marathon"] == 2
    assert sum(n for ns, n in counts.items() if ns.startswith("conversation:claude:")) == 3 + 26
    assert "email" not in json.dumps([p["revision"] for p in h.pages(store, projections=("manifest", "payload"))])
    project = next(p for p in h.pages(store, ["claude:project:Billing service"], ("manifest", "payload", "relations"))
                   if p["revision"]["facets"].get("kind") == "project")
    assert "## Instructions\n\nYou help maintain a Go billing service." in project["revision"]["payload"]["content"]
    assert len([r for r in project["relations"]["outgoing"] if r["relation_type"] == "contains"]) == 3
    assert project["revision"]["source_refs"][0]["uri"].startswith("claude-export:projects-000.zip!projects/")
    # The same export again, as a folder of archives or as one zip holding them: nothing new.
    again = import_claude(store, tmp_path / "download").to_dict()
    assert (again["created"], again["revised"], again["unchanged"]) == (0, 0, 39)
    outer = tmp_path / "all.zip"
    with zipfile.ZipFile(outer, "w") as zf:
        for p in sorted((tmp_path / "download").glob("*.zip")):
            zf.write(p, p.name)
    assert import_claude(store, outer).to_dict()["created"] == 0


def test_an_archive_missing_beside_the_manifest_is_named(store, tmp_path):
    manifest = build_export(tmp_path / "download")
    (tmp_path / "download" / "projects-000.zip").unlink()
    report = import_claude(store, manifest).to_dict()
    assert any(s["item"] == "projects-000.zip" and "not found beside the manifest" in s["reason"]
               for s in report["skipped"])
    assert report["conversations"] == 3 and "claude:project:Billing service" not in scope_counts(store)


def test_the_older_memories_json_array_imports(store, tmp_path):
    memory = json.loads(next((LAYOUT / "memories").iterdir()).read_text())
    path = tmp_path / "memories.json"
    path.write_text(json.dumps([memory]))
    report = import_claude(store, path).to_dict()
    assert report["notes"] == 5 and scope_counts(store) == {"claude:memory": 5}


def test_copied_memories_import_one_page_per_section(store):
    report = import_memory(store, h.EXPORTS / "chatgpt-memories-copied.txt", "chatgpt").to_dict()
    assert report["notes"] == 1 and report["created"] == 1
    page = h.pages(store, ["chatgpt:memory"], ("manifest", "payload"))[0]["revision"]
    assert page["facets"]["items"] == 4 and page["facets"]["section"] == "Saved memories"
    assert page["payload"]["content"].splitlines()[-1] == "- Has a dog named Biscuit."
    assert import_memory(store, h.EXPORTS / "chatgpt-memories-copied.txt", "chatgpt").to_dict()["unchanged"] == 1


def test_a_copied_claude_memory_revises_what_the_export_brought(store, tmp_path):
    import_claude(store, build_export(tmp_path / "download"))
    report = import_memory(store, h.EXPORTS / "claude-memory-copied.md", "claude").to_dict()
    assert (report["created"], report["revised"], report["unchanged"]) == (0, 1, 2)  # "Work context" grew a sentence
    work = next(p for p in h.pages(store, ["claude:memory"], ("manifest", "payload", "history"))
                if p["revision"]["facets"].get("section") == "Work context")
    assert "on-call runbooks" in work["revision"]["payload"]["content"] and len(work["history"]) == 2


def _cli(argv, capsys):
    code = cli.main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_memory_profile_is_shown_then_written_and_imports_back(tmp_path, capsys):
    db, out = tmp_path / "s.db", tmp_path / "profile.md"
    assert _cli(["--db", str(db), "import", "memory", str(h.EXPORTS / "chatgpt-memories-copied.txt"), "--from",
                 "chatgpt"], capsys)[0] == 0
    assert _cli(["--db", str(db), "import", "memory", str(h.EXPORTS / "claude-memory-copied.md"), "--from", "claude"],
                capsys)[0] == 0
    code, shown, _ = _cli(["--db", str(db), "export", "--format", "memory-profile", "--out", str(out)], capsys)
    assert code == 0 and not out.exists() and "Not written" in shown
    assert "## Saved memories\n\n- Prefers answers in British English." in shown
    assert "## Top of mind\n\n- Preparing a talk" in shown
    code, _, _ = _cli(["--db", str(db), "export", "--format", "memory-profile", "--out", str(out), "--yes"], capsys)
    assert code == 0 and out.read_text() in shown  # what was written is what was shown
    with Store.open(tmp_path / "other.db") as other:
        report = import_memory(other, out, "claude").to_dict()
        assert report["notes"] == 4  # Saved memories + the 3 sections
        items = sum(p["revision"]["facets"]["items"] for p in h.pages(other, ["claude:memory"]))
    assert items == 4 + 1 + 1 + 2


def test_memory_profile_warns_of_a_secret(tmp_path, capsys):
    db, memo = tmp_path / "s.db", tmp_path / "m.txt"
    memo.write_text("Uses the key sk-proj-" + "a1B2c3D4e5F6g7H8i9J0kLmN" + " for scripts.\n")
    assert _cli(["--db", str(db), "import", "memory", str(memo), "--from", "chatgpt"], capsys)[0] == 0
    code, out, err = _cli(["--db", str(db), "--json", "export", "--format", "memory-profile", "--out",
                           str(tmp_path / "p.md")], capsys)
    document = json.loads(out)
    assert code == 0 and document["written"] is False
    assert [w["code"] for w in document["warnings"]] == ["possible_secret"]
    assert "a1B2c3D4" in document["text"] and "a1B2c3D4" not in document["warnings"][0]["message"]


@pytest.mark.parametrize("argv, says", [
    (["import", "memory", "x.txt"], "needs --from"),
    (["import", "chatgpt", "x.json", "--from", "claude"], "--from goes only with it"),
])
def test_memory_usage_errors(tmp_path, capsys, argv, says):
    code, _, err = _cli(["--db", str(tmp_path / "s.db"), *argv], capsys)
    assert code == 1 and says in err


def test_a_hostile_manifest_reads_only_archives_beside_it(store, tmp_path):
    download = tmp_path / "download"
    build_export(download)
    outside = tmp_path / "outside"
    outside.mkdir()
    shutil.move(str(download / "projects-000.zip"), outside / "projects-000.zip")
    (download / "projects-000.zip").symlink_to(outside / "projects-000.zip")  # a link planted at an archive's name
    manifest = download / "manifest-evil.json"
    manifest.write_text(json.dumps({"files": ["../outside/projects-000.zip", "https://x/../../conversations-000.zip",
                                              "memories-000.zip?sig=1", "/etc/passwd", "conversations-000.zip.exe"]}))
    report = import_claude(store, manifest).to_dict()
    assert report["conversations"] == 2  # conversations-000.zip only: osteele's two
    assert any(s["item"] == "projects-000.zip" for s in report["skipped"])  # the link is not followed
    assert "claude:project:Billing service" not in scope_counts(store) and "claude:memory" in scope_counts(store)


def test_archives_past_the_import_limit_are_refused_whole(store, tmp_path, monkeypatch):
    from store.constants import LIMITS
    from store.errors import LimitExceeded

    manifest = build_export(tmp_path / "download")
    monkeypatch.setitem(LIMITS, "max_import_bytes", 60_000)  # each archive fits, what they unpack to does not
    with pytest.raises(LimitExceeded, match="nothing was imported"):
        import_claude(store, manifest)
    assert scope_counts(store) == {}


def test_an_archive_three_levels_deep_is_not_read(store, tmp_path):
    inner = tmp_path / "memories-000.zip"
    with zipfile.ZipFile(inner, "w") as zf:
        zf.write(next((LAYOUT / "memories").iterdir()), "memories/a.json")
    middle = tmp_path / "projects-000.zip"
    with zipfile.ZipFile(middle, "w") as zf:
        zf.write(inner, "memories-000.zip")
    outer = tmp_path / "all.zip"
    with zipfile.ZipFile(outer, "w") as zf:
        zf.write(middle, "projects-000.zip")
    report = import_claude(store, outer).to_dict()
    assert any("inside an archive inside an archive" in s["reason"] for s in report["skipped"])
    assert scope_counts(store) == {}
