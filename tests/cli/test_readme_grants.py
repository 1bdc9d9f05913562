"""Every grant the README shows names scopes that really hold pages once the importers have run.

The store is filled the way a user would fill it from the README: every importer on the repository's
real files (and the Claude export layout and copied memories of tests/data/exports), plus the pages the
README's own `pcp write --namespace` lines create. Each grant example must then match at least one scope
with pages, by the one rule grants use (store.access.pattern_matches)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from store import Store
from store.access import pattern_matches
from store.adapters import (import_chatgpt, import_claude, import_claude_code, import_codex, import_gemini,
                            import_markdown, import_memory)

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"
README = ROOT / "README.md"
FLAG = re.compile(r"--grant[= ]+(?P<q>['\"]?)(?P<spec>[^\s'\"`]+)(?P=q)")
ARRAY = re.compile(r"\"--grant\",\s*\"(?P<spec>[^\"]+)\"")
WRITE = re.compile(r"pcp write --namespace (?P<ns>\S+)")
NOT_EXAMPLES = {"NS", "NS=PERMS", "is"}  # the syntax itself ("--grant NS=PERMS") and prose ("--grant is required")


def readme_grants() -> list[str]:
    text = README.read_text(encoding="utf-8")
    specs = [m.group("spec") for m in FLAG.finditer(text)] + [m.group("spec") for m in ARRAY.finditer(text)]
    assert {s for s in specs if ":" not in s} <= NOT_EXAMPLES
    return sorted({s.partition("=")[0] for s in specs if ":" in s})


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    sys.path.insert(0, str(ROOT / "tests" / "adapters"))
    from test_claude_layout_and_memory import build_export

    tmp = tmp_path_factory.mktemp("readme")
    with Store.open(tmp / "s.db") as st:
        for f in sorted((DATA / "exports").glob("chatgpt-*.json")):
            import_chatgpt(st, f)
        for f in sorted((DATA / "exports").glob("claude-*.json")):
            import_claude(st, f)
        import_claude(st, build_export(tmp / "claude-download"))
        import_memory(st, DATA / "exports" / "chatgpt-memories-copied.txt", "chatgpt")
        import_memory(st, DATA / "exports" / "claude-memory-copied.md", "claude")
        import_markdown(st, DATA / "exports" / "vault-mfarragher-obsidiantools-vault-stub")
        for folder in ("kfischer-okarin", "entireio-cli"):
            import_claude_code(st, DATA / "agents" / "claude-code" / folder)
        import_codex(st, DATA / "agents" / "codex" / "codemie-code")
        for folder in ("codemie-code", "entireio-cli"):
            import_gemini(st, DATA / "agents" / "gemini" / folder / "tmp")
        for m in WRITE.finditer(README.read_text(encoding="utf-8")):
            st.write_page(m.group("ns"), content="written as the README shows")
        namespaces, cursor = [], None
        while True:
            page = st.list_scopes(limit=200, cursor=cursor)
            namespaces += [s["namespace"] for s in page["scopes"] if s["page_count"]]
            cursor = page["next_cursor"]
            if not cursor:
                return namespaces


def test_the_readme_shows_grants_for_every_kind_of_import() -> None:
    grants = readme_grants()
    assert len(grants) >= 8, grants
    for namespace in ("conversation:chatgpt:", "conversation:claude:", "notes:", "agent:claude-code:", "agent:codex:",
                      "claude:memory", "project:"):
        assert any(g.startswith(namespace) for g in grants), f"no README grant for {namespace}"


@pytest.mark.parametrize("grant", readme_grants())
def test_every_readme_grant_matches_a_scope_the_importers_create(grant: str, imported: list[str]) -> None:
    assert any(pattern_matches(grant, ns) for ns in imported), f"the README grants {grant!r}, which matches nothing"


def test_import_tree_folders_hold_nothing_to_grant(imported: list[str]) -> None:
    assert not any(pattern_matches("import:*", ns) for ns in imported)
