"""Issue 30, item 5: agent-session namespaces that cannot be confused, sessions that stay in their project,
and importers that never read through a link out of the folder they import.

The sessions are the vendored real files (tests/data/agents/SOURCES.md), copied with fresh ids and
another cwd where a test needs several projects.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

import import_helpers as h
from store import AccessSession, Store
from store.adapters import agents
from store.adapters.agents import CLAIMED, LINK_FOLDER, LINK_OUT, project_slug, session_namespace
from store.adapters.claude_code import import_claude_code
from store.adapters.codex import import_codex
from store.adapters.gemini import import_gemini
from store.names import new_namespace, refused_character, skeleton

AGENTS = Path(__file__).resolve().parents[1] / "data" / "agents"
CLAUDE = AGENTS / "claude-code" / "kfischer-okarin" / "-Users-user-project"
MAIN = "b3edadab-bca0-4054-9b41-f7ffa6941260"
MAIN_FILE = CLAUDE / f"{MAIN}.jsonl"
CODEX_TUI = "019e1625-789d-76c0-80ab-3724b5ddb799"
CODEX_FILE = AGENTS / "codex" / "codemie-code" / "sessions" / "2026" / "05" / "11" / (
    f"rollout-2026-05-11T11-26-55-{CODEX_TUI}.jsonl")
GEMINI_HASH = "907f20644716c92a8309a8b7c1ceec79d422233ff220b7fdb8772b360bd8273f"
GEMINI_FILE = (AGENTS / "gemini" / "codemie-code" / "tmp" / GEMINI_HASH / "chats"
               / "session-2026-01-16T11-01-file-ops-37b7abef.json")
GEMINI_JSONL = (AGENTS / "gemini" / "derived" / "tmp" / GEMINI_HASH / "chats"
                / "session-2026-01-16T11-01-37b7abef.jsonl")
TWINS = ["/srv/App", "/srv/app", "/srv/my app", "/srv/my-app", "/a/b-c", "/a-b/c"]


def _records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _claude_copy(folder: Path, n: int, cwd: str, marker: str, session_id: str | None = None,
                 name: str | None = None, first_at: str | None = None) -> str:
    """The real main session again, with fresh uuids, its own session id, `cwd`, and `marker` in its first prompt."""
    sid = session_id or f"00000000-0000-4000-8000-{n:012d}"
    uuids = sorted({r[k] for r in _records(MAIN_FILE) for k in ("uuid", "parentUuid") if r.get(k)})
    text = MAIN_FILE.read_text()
    for i, u in enumerate(uuids):
        text = text.replace(u, f"{n:08x}-{i:04x}-4000-8000-000000000000")
    out = []
    first = True
    for rec in (json.loads(line) for line in text.splitlines() if line.strip()):
        if "sessionId" in rec:
            rec["sessionId"] = sid
        if "cwd" in rec:
            rec["cwd"] = cwd
        if first_at and "timestamp" in rec:
            rec["timestamp"] = first_at
        if first and rec.get("type") == "user":
            rec["message"]["content"] = f"{marker}: {rec['message']['content']}"
            first = False
        out.append(json.dumps(rec))
    folder.mkdir(parents=True, exist_ok=True)
    (folder / (name or f"{sid}.jsonl")).write_text("\n".join(out) + "\n")
    return sid


def _session_scope(store, sid: str) -> str:
    [ns] = [ns for ns in h.scopes(store) if ns.endswith(":" + sid)]
    return ns


def _texts(store, ns: str) -> str:
    return "\n".join(p["revision"]["payload"]["content"] for p in h.pages(store, [ns], projections=("payload",)))


# --- names ---

@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(min_size=1, max_size=40).map(lambda t: "/" + t), min_size=2, max_size=2, unique=True))
def test_different_cwds_never_share_a_project_slug_and_every_slug_passes(cwds):
    a, b = cwds
    assert project_slug(a, "x") != project_slug(b, "x")
    for cwd in cwds:
        slug = project_slug(cwd, "x")
        assert refused_character(slug) is None and new_namespace(slug) == slug and ":" not in slug
        assert len(session_namespace("claude-code", slug, MAIN)) <= 200


def test_the_twins_of_the_issue_get_six_namespaces_case_kept():
    slugs = [project_slug(cwd, "x") for cwd in TWINS]
    assert len(set(slugs)) == 6
    assert slugs[0] == "srv/App" and slugs[1] == "srv/app" and slugs[3] == "srv/my-app"
    assert slugs[2].startswith("srv/my-app~")  # a space is not shown: the digest of the exact cwd says which
    assert project_slug(None, "-srv-app") != project_slug("/-srv-app", "x")  # a folder name is never a cwd's slug


# --- Claude Code: collisions and claims ---

def test_projects_whose_slugs_collided_on_main_are_apart_and_a_grant_shows_one(store, tmp_path):
    projects = tmp_path / "projects"
    sids = {cwd: _claude_copy(projects / f"p{n}", n, cwd, f"secret of {cwd}") for n, cwd in enumerate(TWINS)}
    import_claude_code(store, projects)
    spaces = {cwd: _session_scope(store, sid) for cwd, sid in sids.items()}
    projects_ns = {ns.rsplit(":", 1)[0] for ns in spaces.values()}
    assert len(projects_ns) == 6
    for cwd, ns in spaces.items():
        text = _texts(store, ns)
        assert f"secret of {cwd}:" in text
        assert [c for c in TWINS if c != cwd and f"secret of {c}:" in text] == []
    # the README's per-project grant: a model granted /srv/app's project reads that project only
    project = spaces["/srv/app"].rsplit(":", 1)[0]
    with Store.open(store.path, session=AccessSession.model_client("m", {project + ":*": {"search", "read"}})) as model:
        found = "\n".join(hit["snippet"] for hit in model.search_pages("secret", mode="text", limit=50)["hits"])
    assert "secret of /srv/app:" in found
    assert [c for c in TWINS if c != "/srv/app" and f"secret of {c}:" in found] == []


def test_a_session_id_claimed_from_another_project_folder_is_reported_never_merged(store, tmp_path):
    projects = tmp_path / "projects"
    (projects / "-Users-user-project").mkdir(parents=True)
    shutil.copy(MAIN_FILE, projects / "-Users-user-project" / MAIN_FILE.name)
    # another project's folder holds a file whose records carry the session's id (and claim to be older)
    _claude_copy(projects / "-srv-evil", 7, "/srv/evil", "planted", session_id=MAIN, name="planted.jsonl",
                 first_at="2020-01-01T00:00:00.000Z")
    report = import_claude_code(store, projects)
    assert not [n for n in h.scopes(store) if "evil" in n]  # on main the whole session moved there
    ns = _session_scope(store, MAIN)
    assert "planted" not in _texts(store, ns)
    assert "Hello I want to have some test conversation" in _texts(store, ns)
    assert ns == f"agent:claude-code:Users/user/project:{MAIN}"
    assert [s["item"] for s in report.skipped if CLAIMED in s["reason"]] == [f"claude-code session {MAIN} in -srv-evil"]


def test_a_claim_in_a_later_import_is_reported_and_the_session_stays(store, tmp_path):
    import_claude_code(store, CLAUDE)
    before = {n: s["page_count"] for n, s in h.scopes(store).items()}
    _claude_copy(tmp_path / "-srv-evil", 7, "/srv/evil", "planted", session_id=MAIN, name=f"{MAIN}.jsonl")
    report = import_claude_code(store, tmp_path / "-srv-evil")
    assert any(CLAIMED in s["reason"] and MAIN in s["item"] for s in report.skipped)
    assert {n: s["page_count"] for n, s in h.scopes(store).items()} == before


def test_sessions_already_in_a_store_keep_their_namespace(store, tmp_path, monkeypatch):
    """A store filled by the slug rule before issue 30 (lower case, "-" for "/"): its sessions stay where they
    are when they grow, new sessions get the new names."""
    old_slug = agents.legacy_project_slug
    monkeypatch.setattr(agents, "project_slug", old_slug)
    monkeypatch.setattr(agents, "session_namespace", lambda source, slug, sid: f"agent:{source}:{slug}:{sid}")
    project = tmp_path / "-Users-user-project"
    lines = MAIN_FILE.read_text().splitlines()
    project.mkdir()
    (project / MAIN_FILE.name).write_text("\n".join(lines[:10]) + "\n")
    import_claude_code(store, project)
    old_ns = f"agent:claude-code:users-user-project:{MAIN}"
    assert old_ns in h.scopes(store)
    monkeypatch.undo()
    (project / MAIN_FILE.name).write_text("\n".join(lines) + "\n")  # the session grew
    new_sid = _claude_copy(project, 3, "/Users/user/project", "a new session")
    report = import_claude_code(store, project)
    assert report.created > 0
    assert [n for n in h.scopes(store) if n.endswith(MAIN)] == [old_ns]
    assert _session_scope(store, new_sid) == f"agent:claude-code:Users/user/project:{new_sid}"
    assert len(h.pages(store, [old_ns])) == len(h.pages(store)) - len(h.pages(store, [_session_scope(store, new_sid)]))


# --- Codex: one cwd per session id ---

def test_codex_a_session_id_claimed_with_another_cwd_is_reported_never_merged(store, tmp_path):
    home = tmp_path / "codex"
    day = home / "sessions" / "2026" / "05" / "11"
    day.mkdir(parents=True)
    shutil.copy(CODEX_FILE, day / CODEX_FILE.name)
    planted = []
    for rec in _records(CODEX_FILE):
        if rec["type"] == "session_meta":
            rec["payload"]["cwd"] = "/srv/evil"
            rec["payload"]["timestamp"] = "2020-01-01T00:00:00.000Z"
        planted.append(json.dumps(rec))
    (day / "rollout-2020-01-01T00-00-00-planted.jsonl").write_text("\n".join(planted) + "\n")
    report = import_codex(store, home)
    assert any(CLAIMED in s["reason"] and CODEX_TUI in s["item"] for s in report.skipped)
    assert _session_scope(store, CODEX_TUI).startswith("agent:codex:Users/Sample_User/")
    assert not [n for n in h.scopes(store) if "evil" in n]


# --- links out of the folder ---

def _secret_claude_file(outside: Path) -> Path:
    outside.mkdir(parents=True, exist_ok=True)
    _claude_copy(outside, 9, "/home/other", "outside secret", session_id="99999999-0000-4000-8000-000000000009")
    return outside / "99999999-0000-4000-8000-000000000009.jsonl"


def test_claude_code_skips_links_out_of_the_folder_and_says_so(store, tmp_path):
    projects = tmp_path / "projects"
    (projects / "-Users-user-project").mkdir(parents=True)
    (projects / "kept").mkdir()
    shutil.copy(MAIN_FILE, projects / "kept" / "main.txt")  # not a session file by its name
    (projects / "-Users-user-project" / MAIN_FILE.name).symlink_to(projects / "kept" / "main.txt")  # stays inside
    secret = _secret_claude_file(tmp_path / "outside")
    (projects / "-Users-user-project" / "linked.jsonl").symlink_to(secret)
    (projects / "linked-project").symlink_to(tmp_path / "outside", target_is_directory=True)
    report = import_claude_code(store, projects)
    assert "outside secret" not in "\n".join(_texts(store, ns) for ns in h.scopes(store))
    assert {"item": "claude-code file -Users-user-project/linked.jsonl", "reason": LINK_OUT} in report.skipped
    assert {"item": "claude-code folder linked-project/", "reason": LINK_FOLDER} in report.skipped
    # a link whose target stays in the folder is read
    assert "Hello I want to have some test conversation" in _texts(store, _session_scope(store, MAIN))


def test_codex_skips_links_out_of_the_folder_and_says_so(store, tmp_path):
    home = tmp_path / "codex"
    day = home / "sessions" / "2026" / "05" / "11"
    day.mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    text = CODEX_FILE.read_text().replace("Find all", "outside secret Find all")
    (outside / CODEX_FILE.name).write_text(text)
    (day / CODEX_FILE.name).symlink_to(outside / CODEX_FILE.name)
    report = import_codex(store, home)
    assert h.page_count(store) == 0
    label = f"codex file sessions/2026/05/11/{CODEX_FILE.name}"
    assert {"item": label, "reason": LINK_OUT} in report.skipped


def test_gemini_skips_links_out_of_the_folder_and_says_so(store, tmp_path):
    chats = tmp_path / "tmp" / GEMINI_HASH / "chats"
    chats.mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    shutil.copy(GEMINI_FILE, outside / GEMINI_FILE.name)
    (chats / GEMINI_FILE.name).symlink_to(outside / GEMINI_FILE.name)
    report = import_gemini(store, tmp_path / "tmp")
    assert h.page_count(store) == 0
    assert {"item": f"gemini file {GEMINI_HASH}/chats/{GEMINI_FILE.name}", "reason": LINK_OUT} in report.skipped


@pytest.mark.parametrize("importer,name", [(import_claude_code, "x.jsonl"),
                                           (import_codex, "rollout-2026-01-01T00-00-00-x.jsonl"),
                                           (import_gemini, "session-x.jsonl"), (import_gemini, "session-x.json")])
def test_a_link_swapped_in_after_the_walk_is_not_read(store, tmp_path, importer, name, monkeypatch):
    """The check is made again when the file is opened (the walk and the read are apart in time)."""
    folder = tmp_path / "in"
    real = {"x.jsonl": MAIN_FILE, "rollout-2026-01-01T00-00-00-x.jsonl": CODEX_FILE, "session-x.json": GEMINI_FILE,
            "session-x.jsonl": GEMINI_JSONL}[name]
    secret = tmp_path / "outside" / real.name  # a real session of the importer's own kind
    secret.parent.mkdir()
    shutil.copy(real, secret)
    target = folder / "sessions" / name
    target.parent.mkdir(parents=True)
    target.write_text("")
    walked = agents.regular_files

    def swap(*args, **kwargs):
        out = walked(*args, **kwargs)
        target.unlink()
        target.symlink_to(secret)
        return out

    monkeypatch.setattr(agents, "regular_files", swap)
    for module in ("claude_code", "codex", "gemini"):
        monkeypatch.setattr(f"store.adapters.{module}.regular_files", swap, raising=False)
    report = importer(store, folder)
    assert h.page_count(store) == 0
    assert any(s["reason"] == LINK_OUT for s in report.skipped), report.skipped


def test_a_plain_project_name_that_reads_like_another_gets_its_digest(store, tmp_path):
    """`/srv/app1` and `/srv/appl` are both plain, but read alike (digit one, small L): the second takes a digest."""
    _claude_copy(tmp_path / "p" / "a", 1, "/srv/app1", "one")
    _claude_copy(tmp_path / "p" / "b", 2, "/srv/appl", "ell")
    import_claude_code(store, tmp_path / "p")
    names = [ns for ns in h.scopes(store)]
    assert len({skeleton(ns) for ns in names}) == len(names) == 5
    assert "agent:claude-code:srv/app1" in names and [ns for ns in names if ns.startswith("agent:claude-code:srv/appl~")]
