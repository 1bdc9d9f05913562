"""Issue 30, item 5: namespaces that cannot be confused (pcp-core.md section 2).

New namespaces are NFC, hold no control, format (zero-width, bidi) or line characters, and a name that
reads like an existing scope's (the same Unicode TR39 skeleton) is refused for a model client and needs
the owner's confirmation. Existing scopes are never renamed: `pcp doctor` lists those that would now be
refused. The model-client journey goes through the real MCP server with the official client.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from store import AccessSession, Conflict, Forbidden, Invalid, Store
from store.names import LookAlike, shown, skeleton

REPO = Path(__file__).resolve().parents[2]
OWNER_SCOPE = "project:alpha"
# The look-alikes of the issue: each reads as project:alpha in the app and in `pcp scopes`.
LOOK_ALIKES = {
    "zero-width space": "project:alpha\u200b",
    "soft hyphen": "project:al\u00adpha",
    "right-to-left override": "project:\u202ealpha",
    "Cyrillic a": "project:\u0430lpha",
    "fullwidth a": "project:\uff41lpha",
    "line separator": "project:alpha\u2028x",
}
REFUSED_CHARACTER = {"zero-width space", "soft hyphen", "right-to-left override", "line separator"}
MODEL_GRANTS = {"project:*": {"write", "manage_scope", "list_scopes", "search", "read"}}


@pytest.fixture
def owned(tmp_path):
    st = Store.open(tmp_path / "s.db")
    st.write_page(OWNER_SCOPE, content="The owner's alpha notes.")
    yield st
    st.close()


def _scopes(st) -> list[str]:
    return [s["namespace"] for s in st.list_scopes(limit=50)["scopes"]]


@pytest.mark.parametrize("kind", sorted(LOOK_ALIKES))
def test_a_model_client_cannot_create_a_look_alike_of_the_owners_scope(owned, kind):
    ns = LOOK_ALIKES[kind]
    model = owned.with_session(AccessSession.model_client("m", MODEL_GRANTS))
    for attempt in (lambda: model.write_page(ns, content="planted"), lambda: model.create_scope(ns)):
        with pytest.raises(Invalid if kind in REFUSED_CHARACTER else Conflict) as caught:
            attempt()
        assert OWNER_SCOPE not in caught.value.message.replace(shown(ns), "")  # it learns no other scope's name
        assert "\n" not in caught.value.message and "\u2028" not in caught.value.message
    assert _scopes(owned) == [OWNER_SCOPE]
    failed = owned.audit_log(decision="failed", limit=10)["events"]
    assert [e["principal_id"] for e in failed[:2]] == ["m", "m"]


def test_an_nfd_twin_is_the_nfc_scope_never_a_second_one(tmp_path):
    with Store.open(tmp_path / "s.db") as st:
        st.write_page("project:caf\u00e9", content="NFC first.")
        model = st.with_session(AccessSession.model_client("m", MODEL_GRANTS))
        page = model.write_page("project:cafe\u0301", content="NFD second.")  # what macOS file names give
        assert _scopes(st) == ["project:caf\u00e9"]
        read = st.read_pages([page["page_id"]], projections=["manifest"])["results"][0]
        assert read["revision"]["namespace"] == "project:caf\u00e9"
        with pytest.raises(Conflict, match="already exists"):
            model.create_scope("project:cafe\u0301")
        st.create_scope("notes:Cafe\u0301 NFD")  # a new NFD name is stored in NFC
        assert "notes:Caf\u00e9 NFD" in _scopes(st)


def test_the_owner_confirms_a_look_alike_and_a_model_never_can(owned):
    with pytest.raises(LookAlike) as caught:
        owned.create_scope(LOOK_ALIKES["Cyrillic a"])
    assert caught.value.existing == OWNER_SCOPE
    assert "U+0430 CYRILLIC SMALL LETTER A" in caught.value.message and "--confirm-lookalike" in caught.value.message
    model = owned.with_session(AccessSession.model_client("m", MODEL_GRANTS))
    with pytest.raises(Forbidden):
        model.create_scope(LOOK_ALIKES["fullwidth a"], confirm_lookalike=True)
    owned.create_scope(LOOK_ALIKES["Cyrillic a"], confirm_lookalike=True)
    assert LOOK_ALIKES["Cyrillic a"] in _scopes(owned)
    with pytest.raises(Invalid, match="format"):  # confirmation never lets an invisible character in
        owned.create_scope(LOOK_ALIKES["zero-width space"], confirm_lookalike=True)


def test_skeletons_follow_unicode_confusables():
    assert skeleton("project:\u0430lpha") == skeleton("project:alpha") == skeleton("project:\uff41lpha")
    assert skeleton("project:app1") == skeleton("project:appl")  # digit one and small L
    assert skeleton("project:alpha") != skeleton("project:Alpha")


def _legacy_scope(st, ns: str) -> None:
    """A scope an older pcp made before the rules (its create path took any name without surrounding spaces)."""
    st._db.execute_sql("INSERT INTO scope (namespace, owner_id, visibility, display_name, created_at, updated_at) "
                       "VALUES (?, ?, 'private', ?, '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z')",
                       (ns, st.owner_id, ns))


def test_doctor_reports_existing_scopes_that_would_now_be_refused_and_renames_none(owned, tmp_path):
    for ns in (LOOK_ALIKES["zero-width space"], LOOK_ALIKES["Cyrillic a"], "notes:cafe\u0301"):
        _legacy_scope(owned, ns)
    report = owned.doctor()["scope_names"]
    assert {r["namespace"]: r["why"] for r in report} == {
        "project:alpha\\u200b": "holds U+200B ZERO WIDTH SPACE, an invisible format character (zero-width, bidi); "
                                 "looks like project:alpha",
        "project:\\u0430lpha": "looks like project:alpha",
        "notes:cafe\\u0301": "is not in NFC (Unicode's composed form)",
    }
    # kept as they are, and still written to by name
    owned.write_page(LOOK_ALIKES["zero-width space"], content="still reachable")
    assert LOOK_ALIKES["zero-width space"] in _scopes(owned)
    owned.close()
    out = subprocess.run([sys.executable, "-m", "pcp_tui.cli", "--db", str(tmp_path / "s.db"), "doctor"],
                         capture_output=True, text=True, cwd=REPO, env={**os.environ, "COLUMNS": "200"})
    assert out.returncode == 0, out.stderr
    assert "project:alpha\\u200b holds U+200B ZERO WIDTH SPACE" in out.stdout and "\u200b" not in out.stdout


def _pcp(db: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pcp_tui.cli", "--db", str(db), *args], capture_output=True,
                          text=True, cwd=REPO)


def test_pcp_scope_create_asks_the_owner_to_confirm_a_look_alike(owned, tmp_path):
    owned.close()
    db = tmp_path / "s.db"
    refused = _pcp(db, "--json", "scope", "create", LOOK_ALIKES["Cyrillic a"])
    assert refused.returncode == 1
    error = json.loads(refused.stdout)["error"]
    assert error["code"] == "conflict" and "project:alpha" in error["message"] and "--confirm-lookalike" in error["message"]
    as_model = _pcp(db, "--as-model", "m", "--grant", "project:*=write,manage_scope", "--json", "scope", "create",
                    LOOK_ALIKES["Cyrillic a"], "--confirm-lookalike")
    assert as_model.returncode == 1 and json.loads(as_model.stdout)["error"]["code"] == "forbidden"
    made = _pcp(db, "--json", "scope", "create", LOOK_ALIKES["Cyrillic a"], "--confirm-lookalike")
    assert made.returncode == 0, made.stdout + made.stderr
    with Store.open(db) as st:
        assert sorted(_scopes(st)) == sorted([OWNER_SCOPE, LOOK_ALIKES["Cyrillic a"]])


def test_an_mcp_client_cannot_write_into_a_look_alike_scope(owned, tmp_path):
    pytest.importorskip("mcp")
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    owned.close()
    db = tmp_path / "s.db"

    async def scenario() -> list[tuple[bool, str]]:
        args = ["-m", "pcp_tui.cli", "--db", str(db), "mcp", "--client-id", "m", "--toolset", "write",
                "--grant", "project:*=write,manage_scope,list_scopes,search,read"]
        params = StdioServerParameters(command=sys.executable, args=args, cwd=str(REPO))
        out = []
        with anyio.fail_after(60):
            async with stdio_client(params) as (read, write):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    for ns in LOOK_ALIKES.values():
                        result = await session.call_tool("write_page", {"namespace": ns, "content": "planted"})
                        out.append((bool(result.is_error), "\n".join(getattr(b, "text", "") for b in result.content)))
        return out

    results = anyio.run(scenario)
    assert all(is_error for is_error, _ in results), results
    assert not any(OWNER_SCOPE in text.replace(shown(ns), "") for ns, (_, text) in
                   zip(LOOK_ALIKES.values(), results, strict=True))
    with Store.open(db) as st:
        assert _scopes(st) == [OWNER_SCOPE]
        assert "planted" not in json.dumps(st.search_pages("planted", mode="exact")["hits"])
