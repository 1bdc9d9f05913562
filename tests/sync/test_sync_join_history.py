"""Existing stores join (issue 30, pcp-core section 2: one owner with several owner ids): a store that already
holds history joins explicitly, keeps its ids and owner ids, and its owner id becomes an alias."""

from __future__ import annotations

import json

import pytest

from sync_helpers import export_lines
from store import Conflict, Store
from test_sync_folder import run


def _history(path, tag: str, visibility: str, clock) -> dict[str, str]:
    """A store used for a while on its own: a scope of its own, the shared project, and a chat label all use."""
    with Store.open(path) as st:
        clock.advance()
        st.create_scope("project:thesis", display_name=f"Thesis as {tag} named it", visibility=visibility)
        st.create_scope(f"notes:{tag}")
        for i in range(3):
            st.write_page(f"notes:{tag}", content=f"{tag} note {i} on its own machine")
        w = st.write_page("project:thesis", content=f"{tag}'s chapter draft")
        st.copy([w["page_id"]], label="Claude: thesis", clipboard=lambda text: None)
        return {"owner": st.owner_id, "page": w["page_id"]}


def test_three_stores_with_history_join_and_end_as_one(stores, tmp_path, clock, capsys):
    """Before: `--join` on a store with history was refused ("That store belongs to another owner")."""
    folder = tmp_path / "f"
    a, b, c = stores(3)
    seeds = {tag: _history(p, tag, vis, clock) for p, tag, vis in
             ((a, "A", "shared"), (b, "B", "private"), (c, "C", "shared"))}
    # b: the join shows what merges, refuses without a yes, and merges with one
    with Store.open(a) as st:
        code_b = st.sync_pair(folder)["code"]
    with Store.open(b) as st:
        plan = st.sync_join_plan(folder, code_b)
        assert plan["merge"] and plan["owner_id"] == seeds["A"]["owner"]
        assert {s["namespace"]: s["pages"] for s in plan["scopes"]} == {"notes:B": 3, "project:thesis": 1}
        assert plan["shared_namespaces"] == ["project:thesis"] and plan["shared_labels"] == ["Claude: thesis"]
        assert plan["relabel"] == {"Claude: thesis": "Claude: thesis (2)"}
        with pytest.raises(Conflict) as err:
            st.sync_join(folder, code_b)
        assert "--yes" in str(err.value) and "\n" not in str(err.value)
        assert st.owner_id == seeds["B"]["owner"]  # refused: nothing changed
    from pcp_tui.cli import main

    assert main(["--db", str(b), "--json", "sync", str(folder), "--join", code_b, "--yes"]) == 0
    joined = json.loads(capsys.readouterr().out)
    assert joined["merged"] and joined["relabelled"] == {"Claude: thesis": "Claude: thesis (2)"}
    for _ in range(2):
        run(a, folder)
        run(b, folder)
    # c joins once a holds b's history (pairing one machine at a time, as the README says)
    with Store.open(a) as st:
        code_c = st.sync_pair(folder)["code"]
    with Store.open(c) as st:
        plan = st.sync_join_plan(folder, code_c)
        assert plan["relabel"] == {"Claude: thesis": "Claude: thesis (3)"}
        st.sync_join(folder, code_c, merge=True)
    for _ in range(2):
        for p in (a, b, c):
            run(p, folder)
    lines = [export_lines(p, tmp_path / "e.jsonl") for p in (a, b, c)]
    assert lines[0] == lines[1] == lines[2]
    assert sum('"kind":"page"' in x for x in lines[0]) == 3 * 4
    owners = {tag: s["owner"] for tag, s in seeds.items()}
    for p in (a, b, c):
        with Store.open(p) as st:
            assert st.owner_id == owners["A"]
            assert st.sync.owner_ids() == set(owners.values())
            scopes = {s["namespace"]: s for s in st.list_scopes()["scopes"]}
            thesis = scopes["project:thesis"]  # one scope: the stricter visibility, the older name
            assert thesis["visibility"] == "private" and thesis["display_name"] == "Thesis as A named it"
            assert thesis["page_count"] == 3
            assert scopes["notes:B"]["owner_id"] == owners["A"]  # listed as the owner's (one owner) ...
            kept = st._db.execute_sql("SELECT owner_id FROM scope WHERE namespace = 'notes:B'").fetchone()[0]
            assert kept == owners["B"]  # ... while the row keeps its owner id
            labels = sorted({h["label"] for h in st.handoffs(limit=50)["handoffs"]})
            assert labels == ["Claude: thesis", "Claude: thesis (2)", "Claude: thesis (3)"]
            hits = st.search_pages("chapter draft", mode="exact")["hits"]
            assert len(hits) == 3
    # every owner check treats the aliased ids as one owner: an export of b imports into c, `--with` syncs
    with Store.open(b) as st:
        st.export(tmp_path / "b.jsonl")
    with Store.open(c) as st:
        assert st.import_export(tmp_path / "b.jsonl")["owner_id"] == owners["A"]
    fresh, = stores(1, "fresh")
    with Store.open(fresh) as st:
        st.import_export(tmp_path / "b.jsonl")  # a fresh store from the export knows the aliases too
        assert st.sync.owner_ids() == set(owners.values())
    with Store.open(a) as st:
        assert st.sync_with(fresh)["peer"]


def test_joining_at_a_terminal_shows_the_merge_and_asks(stores, tmp_path, clock, monkeypatch, capsys):
    from pcp_tui import cli

    folder = tmp_path / "f"
    a, b = stores(2)
    _history(a, "A", "shared", clock)
    _history(b, "B", "private", clock)
    with Store.open(a) as st:
        code = st.sync_pair(folder)["code"]
    monkeypatch.setattr(cli.base, "at_terminal", lambda: True)
    answers = iter(["n", "y"])
    monkeypatch.setattr("builtins.input", lambda prompt: next(answers))
    assert cli.main(["--db", str(b), "sync", str(folder), "--join", code]) == 1
    said = capsys.readouterr()
    assert "notes:B" in said.out and "Claude: thesis (2)" in said.out and "Not joined" in said.err
    with Store.open(b) as st:
        assert st.sync.owner_ids() == {st.owner_id}  # nothing changed
    assert cli.main(["--db", str(b), "sync", str(folder), "--join", code]) == 0
    with Store.open(b) as st:
        assert len(st.sync.owner_ids()) == 2
