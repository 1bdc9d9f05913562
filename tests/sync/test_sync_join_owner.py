"""One owner after a join (issue 30 item 3, pcp-core section 2): two stores that both hold history join through the
sync folder; the owner's search, scope list, audit log and export treat the joined store's owner id as the owner's,
and a model client learns nothing of it."""

from __future__ import annotations

import hashlib
import json
from functools import partial
from pathlib import Path

import pytest

from store import AccessSession, Forbidden, Invalid, Store
from store.core import dumps
from store.ids import new_id
from test_sync_folder import run
from test_sync_join_history import _history

MODEL = {"notes:B": ["search", "read", "list_scopes", "audit"]}


def _joined(stores, tmp_path: Path, clock) -> tuple[Path, Path, dict[str, str]]:
    """a and b, each with history of its own (b's owner wrote and a model searched on b before the join), paired
    and joined through a sync folder, then synced until both hold everything: (a, b, owner ids by letter)."""
    folder = tmp_path / "f"
    a, b = stores(2)
    seeds = {"A": _history(a, "A", "shared", clock), "B": _history(b, "B", "private", clock)}
    with Store.open(b) as st:
        st.with_session(AccessSession.model_client("m", MODEL)).search_pages("note")
    with Store.open(a) as st:
        code = st.sync_pair(folder)["code"]
    with Store.open(b) as st:
        assert st.sync_join(folder, code, merge=True)["merged"]
    for _ in range(2):
        run(a, folder)
        run(b, folder)
    return a, b, {k: v["owner"] for k, v in seeds.items()}


def _owner_events(st: Store) -> list[str]:
    """Every event of the owner's in this store's audit log (principal type `user`), newest first."""
    out, cursor = [], None
    while True:
        got = st.audit_log(limit=500, cursor=cursor)
        out += [e["event_id"] for e in got["events"] if e["principal_type"] == "user"]
        cursor = got["next_cursor"]
        if cursor is None:
            return out


def test_the_owners_search_scopes_and_audit_log_treat_both_ids_as_one_owner(stores, tmp_path, clock, capsys):
    """Before: scopes made on the joining store listed its old owner id beside the owner's (hits and revisions said
    the owner's), and the audit log filtered by either owner id found nothing."""
    a, b, owners = _joined(stores, tmp_path, clock)
    with Store.open(b) as st:
        before_join = [e["event_id"] for e in st.audit_log(operation="write_page", limit=50)["events"]]
    assert len(before_join) == 4  # b's owner wrote these while b's owner id was still its own
    for p in (a, b):
        with Store.open(p) as st:
            assert st.owner_id == owners["A"] and st.sync.owner_ids() == set(owners.values())
            # search: the owner's pages of both ids, filtered by author, all the owner's
            hits = st.search_pages("note", mode="exact", filters={"actor_types": ["user"]}, limit=50)["hits"]
            assert sorted({h["namespace"] for h in hits}) == ["notes:A", "notes:B"] and len(hits) == 6
            assert {h["owner_id"] for h in hits} == {owners["A"]}
            # scopes: listed as the owner's; the row made on b keeps b's id (no row rewritten)
            listed = {s["namespace"]: s["owner_id"] for s in st.list_scopes()["scopes"]}
            assert set(listed.values()) == {owners["A"]} and set(listed) == {"notes:A", "notes:B", "project:thesis"}
            row = st._db.execute_sql("SELECT owner_id FROM scope WHERE namespace = 'notes:B'").fetchone()
            assert row[0] == owners["B"]
            # audit log: either id names the owner; its events whatever id it held then, no model client's
            everything = _owner_events(st)
            for who in (owners["A"], owners["B"]):
                named = st.audit_log(principal=who, limit=500)
                assert [e["event_id"] for e in named["events"]] == everything
                assert {e["principal_type"] for e in named["events"]} == {"user"}
            if p == b:
                assert set(before_join) <= set(everything)
            assert st.audit_log(principal=new_id("usr"), limit=50)["events"] == []  # a stranger's id: nothing
    from pcp_tui.cli import main

    assert main(["--db", str(b), "--json", "audit", "--principal", owners["B"], "--operation", "write_page"]) == 0
    assert [e["event_id"] for e in json.loads(capsys.readouterr().out)["events"]] == before_join
    assert main(["--db", str(b), "--json", "scopes"]) == 0
    assert {s["owner_id"] for s in json.loads(capsys.readouterr().out)["scopes"]} == {owners["A"]}


def _model_view(st: Store) -> dict:
    m = st.with_session(AccessSession.model_client("m", MODEL))
    hits = m.search_pages("note", mode="exact", limit=50)["hits"]
    read = m.read_pages([h["page_id"] for h in hits])["results"]
    return {"scopes": m.list_scopes()["scopes"], "hits": hits, "read": read,
            "audit": m.audit_log(limit=50)["events"]}


def test_a_model_session_learns_nothing_from_the_join(stores, tmp_path, clock):
    """Before: a model with list_scopes on the joined store's scope saw that store's old owner id (an alias)."""
    a, b, owners = _joined(stores, tmp_path, clock)
    for p in (a, b):
        with Store.open(p) as st:
            view = _model_view(st)
            seen = json.dumps(view)
            assert owners["B"] not in seen  # the alias appears nowhere a model can read
            assert [s["namespace"] for s in view["scopes"]] == ["notes:B"]
            assert {h["namespace"] for h in view["hits"]} == {"notes:B"} and len(view["hits"]) == 3
            assert {s["owner_id"] for s in view["scopes"]} == {h["owner_id"] for h in view["hits"]} == {owners["A"]}
            m = st.with_session(AccessSession.model_client("m", MODEL))
            # an owner id, the owner's or its alias, widens nothing: the model's own trail only, as for any name
            for who in (owners["A"], owners["B"], "owner"):
                assert m.audit_log(principal=who, limit=50)["events"] == []
            assert {e["principal_id"] for e in m.audit_log(limit=500)["events"]} <= {"m"}
            # the owner's other scopes stay out of reach, and no error names an owner id
            for call in (partial(m.search_pages, "note", scopes=["notes:A"]), partial(m.list_scopes, "notes:A"),
                         m.sync_status):
                try:
                    got = call()
                except Forbidden as err:
                    assert "usr_" not in str(err)
                else:
                    assert "usr_" not in json.dumps(got) and not got.get("scopes")


def _rewrite(src: Path, out: Path, change) -> None:
    """The export at src with `change` applied to each record, its closing digest made again (a careful forger)."""
    lines = src.read_text(encoding="utf-8").splitlines()
    body = [dumps(change(json.loads(x))) + "\n" for x in lines[:-1]]
    data = "".join(body).encode("utf-8")
    out.write_bytes(data + (dumps({"kind": "pcp.export.end", "sha256": hashlib.sha256(data).hexdigest()}) + "\n").encode())


def test_the_joined_export_keeps_both_ids_as_one_owner_and_refuses_a_strangers_scope(stores, tmp_path, clock):
    """Before: an export whose scope named an owner id that was neither its owner's nor an alias it listed was
    imported as it was: a second owner inside a one-owner store."""
    a, b, owners = _joined(stores, tmp_path, clock)
    export = tmp_path / "a.jsonl"
    with Store.open(a) as st:
        st.export(export)
    records = [json.loads(x) for x in export.read_text(encoding="utf-8").splitlines()]
    assert records[0]["owner_id"] == owners["A"]
    assert records[0]["owner_aliases"] == [{"alias": owners["B"], "owner": owners["A"]}]
    scopes = {r["namespace"]: r["owner_id"] for r in records if r["kind"] == "scope"}
    assert scopes["notes:B"] == owners["B"] and scopes["notes:A"] == owners["A"]  # rows kept as they are
    fresh, = stores(1, "fresh")
    with Store.open(fresh) as st:
        assert st.import_export(export)["owner_id"] == owners["A"]
        assert st.sync.owner_ids() == set(owners.values())
        assert {s["owner_id"] for s in st.list_scopes()["scopes"]} == {owners["A"]}
    stranger = new_id("usr")
    forged = tmp_path / "forged.jsonl"
    _rewrite(export, forged, lambda r: {**r, "owner_id": stranger} if r.get("namespace") == "notes:B"
             and r["kind"] == "scope" else r)
    empty, = stores(1, "empty")
    for target in (empty, b):
        with Store.open(target) as st:
            before = st._db.execute_sql("SELECT COUNT(*) FROM scope").fetchone()[0]
            with pytest.raises(Invalid) as err:
                st.import_export(forged)
            said = str(err.value)
            assert stranger in said and "(scope)" in said and "nothing was imported" in said and "\n" not in said
            assert st._db.execute_sql("SELECT COUNT(*) FROM scope").fetchone()[0] == before
            assert stranger not in st.sync.owner_ids()
    # the alias listed for the stranger makes it one of the owner's ids: then it imports
    listed = tmp_path / "listed.jsonl"
    _rewrite(forged, listed, lambda r: {**r, "owner_aliases": [*r["owner_aliases"], {"alias": stranger,
                                                                                      "owner": owners["A"]}]}
             if r["kind"] == "pcp.export.v1" else r)
    with Store.open(empty) as st:
        st.import_export(listed)
        assert stranger in st.sync.owner_ids()
        assert {s["owner_id"] for s in st.list_scopes()["scopes"]} == {owners["A"]}


def test_a_model_client_over_mcp_never_sees_the_alias(stores, tmp_path, clock):
    """The same through the official MCP client on the joined store (`pcp mcp`, stdio): every tool result and
    resource it can reach names one owner id. Before: list_scopes' structured result held the alias."""
    mcp = pytest.importorskip("mcp")
    import sys

    import anyio
    from mcp.client.stdio import StdioServerParameters, stdio_client

    a, b, owners = _joined(stores, tmp_path, clock)
    args = ["-m", "pcp_tui.cli", "--db", str(b), "mcp", "--client-id", "m", "--grant",
            "notes:B=search,read,list_scopes,audit"]
    params = StdioServerParameters(command=sys.executable, args=args, cwd=str(Path(__file__).resolve().parents[2]))

    async def scenario() -> list[str]:
        seen: list[str] = []
        with anyio.fail_after(30):
            async with stdio_client(params) as (read, write):
                async with mcp.ClientSession(read, write) as session:
                    await session.initialize()
                    for tool, arguments in (("list_scopes", {}), ("search_pages", {"query": "note", "mode": "exact"})):
                        got = await session.call_tool(tool, arguments)
                        seen.append(json.dumps(got.model_dump(mode="json", by_alias=True)))
                    pages = [h["page_id"] for h in json.loads(seen[-1])["structuredContent"]["hits"]]
                    got = await session.call_tool("read_pages", {"ids": pages})
                    seen.append(json.dumps(got.model_dump(mode="json", by_alias=True)))
                    listed = await session.list_resources()
                    seen.append(json.dumps(listed.model_dump(mode="json", by_alias=True)))
                    for res in listed.resources:
                        seen.append(json.dumps((await session.read_resource(res.uri)).model_dump(mode="json", by_alias=True)))
        return seen

    seen = anyio.run(scenario)
    assert len(json.loads(seen[1])["structuredContent"]["hits"]) == 3
    for text in seen:
        assert owners["B"] not in text  # the joined store's old id appears nowhere ...
    assert owners["A"] in seen[0]  # ... the scope is listed with the owner's id
