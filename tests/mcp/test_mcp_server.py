"""`pcp mcp`: the real server driven over stdio by the MCP SDK's own client.

Data is set up with the Store directly (owner session) before the server starts; each
test spawns `python -m pcp_tui.cli --db DB mcp --client-id test-client --grant ...`.
"""

from __future__ import annotations

import re
import sys
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, AsyncIterator

import anyio
import pytest

pytest.importorskip("mcp")

from mcp.client.session import ClientSession  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402

import store  # noqa: E402
from pcp_tui import cli  # noqa: E402
from pcp_tui.mcp.schema import READ_TOOLS, WRITE_TOOLS  # noqa: E402

CLIENT = "test-client"
REPO = Path(__file__).resolve().parents[2]
PAGE_RE = re.compile(r"pg_[0-9A-HJKMNP-TV-Z]{26}")
REV_RE = re.compile(r"rev_[0-9A-HJKMNP-TV-Z]{26}")
READ_GRANT = "project:a=search,read,list_scopes"
WRITE_GRANT = "project:a=search,read,list_scopes,write,revise,link,ingest,suppress"


@pytest.fixture()
def seeded(tmp_path: Path) -> dict[str, Any]:
    """Two projects; project:b holds the best match for "compactness" and a link from project:a."""
    db = tmp_path / "store.db"
    st = store.Store.open(db)
    try:
        a1 = st.write_page("project:a", content="Notes on compactness of spaces.\n\nA short note.",
                           facets={"title": "Compactness notes"})
        a2 = st.write_page("project:a", content="A reading list about topology.", facets={"title": "Reading list"})
        b1 = st.write_page("project:b", content="Compactness compactness compactness: the finite product proof. "
                                                "SECRET-B-CONTENT", facets={"title": "Secret compactness proof"})
        st.link_pages(a1["page_id"], "supports", b1["page_id"])
        st.link_pages(b1["page_id"], "derived_from", a2["page_id"])
        st.link_pages(a1["page_id"], "related_to", a2["page_id"])
        big = st.write_page("project:a", content="Long page\n" + ("lorem ipsum dolor sit amet " * 4000),
                            facets={"title": "Long page"})
        st.write_pages_bulk(({"content": f"filler page {i} about compactness"} for i in range(60)), "project:a")
    finally:
        st.close()
    return {"db": db, "a1": a1, "a2": a2, "b1": b1, "big": big}


@asynccontextmanager
async def connect(db: Path, *grants: str, toolset: str | None = None) -> AsyncIterator[ClientSession]:
    args = ["-m", "pcp_tui.cli", "--db", str(db), "mcp", "--client-id", CLIENT]
    for grant in grants:
        args += ["--grant", grant]
    if toolset:
        args += ["--toolset", toolset]
    params = StdioServerParameters(command=sys.executable, args=args, cwd=str(REPO))
    with anyio.fail_after(30):
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                yield session


def run(scenario) -> Any:
    return anyio.run(scenario)


def text_of(result: Any) -> str:
    return "\n".join(block.text for block in result.content if getattr(block, "type", "") == "text")


async def ok(session: ClientSession, tool: str, args: dict[str, Any] | None = None) -> str:
    result = await session.call_tool(tool, args or {})
    text = text_of(result)
    assert not result.is_error, f"{tool} failed: {text}"
    assert text.strip(), f"{tool} returned an empty result"
    return text


async def fails(session: ClientSession, tool: str, args: dict[str, Any] | None = None) -> str:
    result = await session.call_tool(tool, args or {})
    text = text_of(result)
    assert result.is_error, f"{tool} should have failed, got: {text}"
    return text


def test_tool_list_matches_the_toolset(seeded):
    async def scenario():
        async with connect(seeded["db"], READ_GRANT) as s:
            read_names = {t.name for t in (await s.list_tools()).tools}
        async with connect(seeded["db"], WRITE_GRANT, toolset="write") as s:
            tools = (await s.list_tools()).tools
            write_names = {t.name for t in tools}
            assert all(t.description for t in tools)
        return read_names, write_names

    read_names, write_names = run(scenario)
    assert read_names == set(READ_TOOLS) == {"describe", "list_scopes", "search_pages", "read_pages"}
    assert write_names == set(READ_TOOLS) | set(WRITE_TOOLS)
    assert set(WRITE_TOOLS) == {"write_page", "revise_page", "link_pages", "ingest_event", "suppress_pages",
                                "recommend_tombstone"}
    for never in ("tombstone_page", "delete_page", "delete_scope", "export", "untombstone_page"):
        assert never not in write_names


def test_read_only_session_finds_and_reads_but_cannot_write(seeded):
    async def scenario():
        async with connect(seeded["db"], READ_GRANT) as s:
            described = await ok(s, "describe")
            scopes = await ok(s, "list_scopes")
            hits = await ok(s, "search_pages", {"query": "compactness of spaces", "limit": 5})
            page = await ok(s, "read_pages", {"ids": [seeded["a1"]["page_id"]]})
            write = await s.call_tool("write_page", {"namespace": "project:a", "content": "x"})
        async with connect(seeded["db"], READ_GRANT, toolset="write") as s:
            denied = await fails(s, "write_page", {"namespace": "project:a", "content": "should not land"})
            denied_revise = await fails(s, "revise_page", {"page_id": seeded["a1"]["page_id"],
                                                           "expected_revision_id": seeded["a1"]["revision_id"],
                                                           "content": "nope"})
        return described, scopes, hits, page, write, denied, denied_revise

    described, scopes, hits, page, write, denied, denied_revise = run(scenario)
    assert CLIENT in described and "project:a" in described and "recommend_tombstone" in described
    assert "project:a" in scopes and "project:b" not in scopes
    assert seeded["a1"]["page_id"] in hits and seeded["a1"]["revision_id"] in hits and "namespace: project:a" in hits
    assert seeded["a1"]["revision_id"] in page and "Notes on compactness of spaces." in page
    assert "namespace: project:a" in page
    assert write.is_error  # not even listed in the read toolset
    assert denied.startswith("forbidden:") and denied_revise.startswith("forbidden:")
    st = store.Store.open(seeded["db"])
    try:
        assert not st.search_pages("should not land", mode="exact")["hits"]
        assert st.read_pages([seeded["a1"]["page_id"]])["results"][0]["revision"]["revision_id"] == \
            seeded["a1"]["revision_id"]
    finally:
        st.close()


def test_a_session_granted_one_project_never_sees_another(seeded):
    b_page, b_rev = seeded["b1"]["page_id"], seeded["b1"]["revision_id"]
    a1 = seeded["a1"]["page_id"]

    async def scenario():
        out = {}
        async with connect(seeded["db"], READ_GRANT) as s:
            out["text"] = await ok(s, "search_pages", {"query": "compactness", "mode": "text", "limit": 50})
            out["exact"] = await ok(s, "search_pages", {"query": "SECRET-B-", "mode": "exact"})
            out["auto"] = await ok(s, "search_pages", {"query": "finite product proof"})
            out["graph"] = await ok(s, "search_pages", {"query": a1, "mode": "graph"})
            out["graph_b"] = await s.call_tool("search_pages", {"query": b_page, "mode": "graph"})
            out["named_b"] = await fails(s, "search_pages", {"query": "compactness", "scopes": ["project:b"]})
            out["named_star"] = await fails(s, "search_pages", {"query": "compactness", "scopes": ["*"]})
            out["read_b"] = await fails(s, "read_pages", {"ids": [b_page]})
            out["read_b_rev"] = await fails(s, "read_pages", {"ids": [b_rev]})
            out["relations"] = await ok(s, "read_pages", {"ids": [a1, seeded["a2"]["page_id"]],
                                                          "projections": ["manifest", "relations", "history"]})
            out["mixed"] = await ok(s, "read_pages", {"ids": [a1, b_page]})
        return out

    out = run(scenario)
    for key in ("text", "exact", "auto", "graph", "relations", "mixed"):
        if key != "mixed":  # a read names the id the caller asked for, with its per-result not_found
            assert b_page not in out[key], key
        assert b_rev not in out[key], key
        assert "SECRET-B-CONTENT" not in out[key] and "project:b" not in out[key], key
    assert out["exact"].startswith("No pages found")
    graph_b_text = text_of(out["graph_b"])
    assert b_rev not in graph_b_text and "SECRET-B" not in graph_b_text
    assert "project:b" not in graph_b_text.replace(b_page, "")
    assert seeded["a2"]["page_id"] in out["graph"]  # the authorized neighbour is there
    assert "related_to" in out["relations"] and "supports" not in out["relations"]
    assert out["named_b"].startswith("forbidden:") and out["named_star"].startswith("forbidden:")
    assert out["read_b"].startswith("not_found:") and out["read_b_rev"].startswith("not_found:")
    assert "error: not_found" in out["mixed"]


def test_write_revise_link_and_conflicts_as_tool_errors(seeded):
    async def scenario():
        out = {}
        async with connect(seeded["db"], WRITE_GRANT, toolset="write") as s:
            out["written"] = await ok(s, "write_page", {"namespace": "project:a", "content": "Model draft v1",
                                                        "title": "Model draft",
                                                        "derived_from": [seeded["a1"]["revision_id"]]})
            page_id = PAGE_RE.search(out["written"]).group(0)
            rev1 = REV_RE.search(out["written"]).group(0)
            out["revised"] = await ok(s, "revise_page", {"page_id": page_id, "expected_revision_id": rev1,
                                                         "content": "Model draft v2", "summary": "second try"})
            rev2 = REV_RE.search(out["revised"]).group(0)
            out["conflict"] = await fails(s, "revise_page", {"page_id": page_id, "expected_revision_id": rev1,
                                                             "content": "stale"})
            out["missing_expected"] = await s.call_tool("revise_page", {"page_id": page_id, "content": "x"})
            out["link"] = await ok(s, "link_pages", {"from_id": page_id, "relation_type": "derived_from",
                                                     "to_id": seeded["a1"]["page_id"]})
            out["link_b"] = await fails(s, "link_pages", {"from_id": page_id, "relation_type": "uses",
                                                          "to_id": seeded["b1"]["page_id"]})
            out["write_b"] = await fails(s, "write_page", {"namespace": "project:b", "content": "intrusion"})
            out["event"] = await ok(s, "ingest_event", {"namespace": "project:a", "idempotency_key": "evt-1",
                                                        "content": "tool output: 42"})
            out["event_again"] = await ok(s, "ingest_event", {"namespace": "project:a", "idempotency_key": "evt-1",
                                                              "content": "tool output: 42"})
            out["suppress"] = await ok(s, "suppress_pages", {"page_ids": [seeded["a2"]["page_id"]],
                                                             "reason": "off topic"})
            out["after_suppress"] = await ok(s, "search_pages", {"query": "reading list", "mode": "exact"})
            out["recommend"] = await ok(s, "recommend_tombstone", {"page_id": seeded["a2"]["page_id"],
                                                                   "reason": "outdated"})
            out["tombstone"] = await s.call_tool("tombstone_page", {"page_id": seeded["a2"]["page_id"],
                                                                    "reason": "x"})
        return out, page_id, rev1, rev2

    out, page_id, rev1, rev2 = run(scenario)
    assert rev1 != rev2 and page_id in out["revised"]
    assert out["conflict"].startswith("conflict:") and rev1 in out["conflict"] and rev2 in out["conflict"]
    assert out["missing_expected"].is_error
    assert "derived_from" in out["link"]
    assert out["link_b"].startswith("not_found:") and seeded["b1"]["revision_id"] not in out["link_b"]
    assert out["write_b"].startswith("forbidden:")
    assert "already existed" in out["event_again"]
    assert f"mcp:{CLIENT}" in out["suppress"]
    assert seeded["a2"]["page_id"] not in out["after_suppress"]
    assert "pending" in out["recommend"] and out["tombstone"].is_error

    st = store.Store.open(seeded["db"])
    try:
        rev = st.read_pages([page_id])["results"][0]["revision"]
        assert rev["revision_id"] == rev2 and rev["payload"]["content"] == "Model draft v2"
        assert rev["facets"] == {"title": "Model draft", "summary": "second try"}
        assert rev["created_by"] == {"actor_type": "model", "actor_id": CLIENT}
        assert all(p["actor_type"] == "model" and p["actor_id"] == CLIENT for p in rev["provenance"])
        first = st.read_pages([rev1])["results"][0]["revision"]
        assert first["created_by"] == {"actor_type": "model", "actor_id": CLIENT}
        assert any(seeded["a1"]["revision_id"] in p["input_revision_ids"] for p in first["provenance"])
        assert not st.search_pages("intrusion", mode="exact")["hits"]
        # suppression only in the server's own context; the page is still there for everyone else
        assert st.search_pages("reading list", mode="exact")["hits"]
        recs = st.list_recommendations()["recommendations"]
        assert [(r["page_id"], r["actor"]["actor_id"]) for r in recs] == [(seeded["a2"]["page_id"], CLIENT)]
        assert st.read_pages([seeded["a2"]["page_id"]])["results"][0]["revision"]["lifecycle_status"] == "active"
        # audit events name the client: allowed and denied calls alike
        events = st.audit_log(principal=CLIENT, limit=100)["events"]
        assert events and all(e["principal_id"] == CLIENT and e["principal_type"] == "model_client" for e in events)
        ops = {(e["operation"], e["decision"]) for e in events}
        assert ("write_page", "allowed") in ops and ("revise_page", "failed") in ops
        assert ("write_page", "denied") in ops and ("recommend_tombstone", "allowed") in ops
    finally:
        st.close()


def test_results_stay_within_their_limits(seeded):
    big = seeded["big"]["page_id"]

    async def scenario():
        out = {}
        async with connect(seeded["db"], READ_GRANT) as s:
            out["search"] = await ok(s, "search_pages", {"query": "compactness", "limit": 10_000})
            out["small"] = await ok(s, "read_pages", {"ids": [big], "max_chars": 500})
            out["huge"] = await ok(s, "read_pages", {"ids": [big], "max_chars": 10**9})
            out["default"] = await ok(s, "read_pages", {"ids": [big]})
            out["too_many"] = await fails(s, "read_pages", {"ids": [big] * 21})
        return out

    out = run(scenario)
    hits = re.findall(r"^\[\d+\] ", out["search"], flags=re.M)
    assert 1 <= len(hits) <= 50 and "next_cursor:" in out["search"]
    assert all(len(line) < 400 for line in out["search"].splitlines())
    assert "truncated: true" in out["small"] and len(out["small"]) < 2_000
    assert "truncated: true" in out["huge"] and len(out["huge"]) <= 64_000 + 4_000
    assert "truncated: true" in out["default"] and len(out["default"]) <= 16_000 + 4_000
    assert seeded["big"]["revision_id"] in out["small"]
    assert out["too_many"].startswith("limit:")


def test_pcp_mcp_without_the_sdk_says_how_to_install(monkeypatch, capsys, tmp_path):
    import pcp_tui.mcp

    monkeypatch.delitem(sys.modules, "pcp_tui.mcp.server", raising=False)
    monkeypatch.delattr(pcp_tui.mcp, "server", raising=False)
    for name in [m for m in sys.modules if m == "mcp" or m.startswith("mcp.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "mcp", None)
    store.Store.open(tmp_path / "s.db").close()
    code = cli.main(["--db", str(tmp_path / "s.db"), "mcp", "--client-id", CLIENT, "--grant", READ_GRANT])
    err = capsys.readouterr().err
    assert code == 1
    assert err.count("\n") == 1 and "pip install 'pcp[mcp]'" in err


def test_pcp_mcp_usage_errors(capsys, tmp_path):
    db = str(tmp_path / "s.db")
    store.Store.open(db).close()
    assert cli.main(["--db", db, "mcp", "--grant", READ_GRANT]) == 2  # --client-id is required
    assert cli.main(["--db", db, "mcp", "--client-id", CLIENT]) == 2  # at least one grant
    assert cli.main(["--db", db, "mcp", "--client-id", CLIENT, "--grant", READ_GRANT, "--toolset", "admin"]) == 1
    assert cli.main(["--db", db, "mcp", "--client-id", CLIENT, "--grant", "project:a=fly"]) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err and "(invalid)" in err
