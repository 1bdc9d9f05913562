"""Sync of two stores on one machine (Store.sync_with, `pcp sync --with`): union, conflicts, deletions, owners.

Every test builds its stores through the public Store surface; "identical" is the full export lines."""

from __future__ import annotations

import itertools
import json
import shutil
from pathlib import Path

import pytest

import pcpstore_helpers as h
from sync_helpers import export_lines, killed_mid_sync, sync
from store import Conflict, Forbidden, Invalid, NotFound, Store

ROOT = Path(__file__).resolve().parents[2]


def _seed(path: Path, tag: str) -> dict[str, str]:
    """A store with a bit of everything, made on store `tag`."""
    made = {}
    with Store.open(path) as st:
        ns = f"work:{tag}"
        st.create_scope(ns, display_name=f"Work {tag}")
        res = st.write_pages_bulk(({"content": f"{tag} bulk page {i} about lanterns"} for i in range(12)), ns)
        assert res["created"] == 12
        a = st.write_page(ns, content=f"{tag}: a page that gets revised")
        b = st.write_page(ns, content=f"{tag}: a page that gets archived", facets={"title": f"{tag} archive me"})
        c = st.write_page(ns, content=f"{tag}: a tombstoned page")
        st.revise_page(a["page_id"], a["revision_id"], content=f"{tag}: revised once")
        st.archive_page(b["page_id"], "old")
        st.tombstone_page(c["page_id"], "wrong")
        rel = st.link_pages(a["page_id"], "supports", b["page_id"])
        st.unlink(rel["relation_id"], "not really")
        st.link_pages(b["page_id"], "supersedes", c["page_id"])
        st.suppress_pages([a["page_id"]], "task:one", reason="noise")
        st.suppress_pages([b["page_id"]], "task:two")
        st.unsuppress_pages([b["page_id"]], "task:two")
        st.recommend_tombstone(a["page_id"], "looks stale")
        st.ingest_event({"content": f"{tag} event"}, ns, idempotency_key=f"key-{tag}")
        made.update(a=a["page_id"], b=b["page_id"], c=c["page_id"])
    return made


@pytest.fixture
def three(stores, tmp_path):
    """Three stores of one owner, each with its own edits (made once, copied per use)."""
    paths = stores(3, "seed")
    sync(paths[1], paths[0])  # paired while empty: one owner, nothing else shared yet
    sync(paths[2], paths[0])
    made = [_seed(path, tag) for path, tag in zip(paths, "ABC", strict=True)]

    def copy(label: str) -> list[Path]:
        out = []
        for i, p in enumerate(paths):
            d = tmp_path / f"{label}{i}"
            d.mkdir()
            shutil.copy(p, d / "context.db")
            out.append(d / "context.db")
        return out

    copy.made = made  # type: ignore[attr-defined]
    return copy


def test_three_stores_every_order_end_identical(three, tmp_path):
    pairs = [(0, 1), (1, 2), (0, 2)]
    results = []
    for n, order in enumerate(itertools.permutations(pairs)):
        paths = three(f"o{n}-")
        for x, y in order:
            sync(paths[x], paths[y])
        lines = [export_lines(p, tmp_path / f"o{n}.jsonl") for p in paths]
        assert lines[0] == lines[1] == lines[2], order
        results.append(lines[0])
    assert all(r == results[0] for r in results)  # and every order ends in the same state
    kinds = {json.loads(line)["kind"] for line in results[0]}
    assert {"scope", "page", "revision", "relation", "retraction", "lifecycle_event", "suppression",
            "recommendation", "receipt"} - kinds == {"receipt"}
    with Store.open(paths[0]) as st:
        assert st.doctor()["counts"]["page"] == 3 * (12 + 3 + 1)


def test_second_sync_adds_nothing(three):
    a, b, _ = three("x")
    first = sync(a, b)
    assert first["taken"]["added"]["page"] == 16 and first["given"]["added"]["page"] == 16
    again = sync(a, b)
    assert again["taken"]["added"] == {} and again["given"]["added"] == {}
    with Store.open(a) as st:  # importer idempotency records travel: B's event, replayed on A, is B's page
        st.ingest_event({"content": "B event"}, "work:B", idempotency_key="key-B")
        assert st.doctor()["counts"]["page"] == 32  # replayed, not written again


def test_status_suppression_and_its_lifting_travel(three):
    a, b, _ = three("y")
    made = three.made[0]
    sync(a, b)
    with Store.open(b) as st:
        assert h.read1(st, made["b"])["revision"]["lifecycle_status"] == "archived"
        assert h.read1(st, made["c"])["revision"]["lifecycle_status"] == "tombstoned"
        assert st._db.execute_sql("SELECT superseded FROM page WHERE page_id = ?", (made["c"],)).fetchone()[0] == 1
        context = [x["page_id"] for x in st.search_pages("revised once", context_id="task:one")["hits"]]
        assert made["a"] not in context and made["a"] in [x["page_id"] for x in st.search_pages("revised once")["hits"]]
        st.restore_page(made["b"], "back")
        st.unsuppress_pages([made["a"]], "task:one")
    sync(b, a)
    with Store.open(a) as st:
        assert h.read1(st, made["b"])["revision"]["lifecycle_status"] == "active"
        assert made["a"] in [x["page_id"] for x in st.search_pages("revised once", context_id="task:one")["hits"]]
    assert export_lines(a, a.parent / "e.jsonl") == export_lines(b, b.parent / "e.jsonl")


def test_concurrent_revisions_keep_both_and_a_revision_on_top_resolves(stores, clock):
    a, b, c = stores(3)
    with Store.open(a) as st:
        st.create_scope("notes")
        w = st.write_page("notes", content="the plan: version one")
    sync(b, a)
    sync(c, a)
    clock.advance()
    with Store.open(a) as st:
        ra = st.revise_page(w["page_id"], w["revision_id"], content="the plan as A sees it")
    with Store.open(b) as st:
        rb = st.revise_page(w["page_id"], w["revision_id"], content="the plan as B sees it")
    sync(a, b)
    sync(b, c)
    heads = set()
    for p in (a, b, c):
        with Store.open(p) as st:
            item = h.read1(st, w["page_id"])
            heads.add((item["current_revision_id"], tuple(item["conflict_revision_ids"])))
            history = {e["revision_id"] for e in h.read1(st, w["page_id"], ("history",))["history"]}
            assert {ra["revision_id"], rb["revision_id"], w["revision_id"]} <= history  # nothing lost
    # Same created_at (the clock stood still): the larger revision id is the head, on every store.
    winner, loser = sorted([ra["revision_id"], rb["revision_id"]], reverse=True)
    assert heads == {(winner, (loser,))}
    with Store.open(c) as st:
        caps = st.describe_capabilities()
        assert caps["flags"]["sync"] and "conflict_revision_ids" in caps["concurrent_revisions"]
        with pytest.raises(Conflict):
            st.revise_page(w["page_id"], w["revision_id"], content="stale")
        done = st.revise_page(w["page_id"], loser, content="merged by hand")  # either head is accepted
        item = h.read1(st, w["page_id"])
        assert item["current_revision_id"] == done["revision_id"] and "conflict_revision_ids" not in item
    sync(c, a)
    sync(a, b)
    for p in (a, b):
        with Store.open(p) as st:
            item = h.read1(st, w["page_id"])
            assert item["current_revision_id"] == done["revision_id"] and "conflict_revision_ids" not in item
    assert export_lines(a, a.parent / "e") == export_lines(b, b.parent / "e") == export_lines(c, c.parent / "e")


SECRET = "Quokka-7731 harbour ledger: the vault combination is 4417-9023-5518"


def test_delete_wins_and_leaves_no_residue_in_any_store(stores, clock):
    a, b, c = stores(3)
    with Store.open(a) as st:
        st.create_scope("private")
        keep = st.write_page("private", content="a page that stays, about lanterns")
        secret = st.write_page("private", content=SECRET)
        st.link_pages(keep["page_id"], "references", secret["page_id"])
    sync(b, a)
    sync(c, b)
    clock.advance()
    with Store.open(a) as st:
        receipt = st.delete_page(secret["page_id"], "never keep this")
    with Store.open(b) as st:  # meanwhile B revised it
        st.revise_page(secret["page_id"], h.read1(st, secret["page_id"])["current_revision_id"],
                       content=SECRET + " and a second line")
    told = sync(b, a)
    assert told["taken"]["erased_pages"] == [secret["page_id"]]
    assert told["taken"]["deleted_while_revised"] == [secret["page_id"]]  # B's user is told
    sync(c, a)
    sync(c, b)
    erased = h.windows(SECRET.encode()) - h.windows(b"a page that stays, about lanterns")
    for p in (a, b, c):
        with Store.open(p) as st:
            with pytest.raises(NotFound):
                st.read_pages([secret["page_id"]])
            assert [r["receipt_id"] for r in st.list_receipts()["receipts"]] == [receipt["receipt_id"]]
            assert h.read1(st, keep["page_id"])["revision"]["payload"]["content"].startswith("a page that stays")
        assert h.find_residue(h.files_beside(p), erased) == [], p
    assert export_lines(a, a.parent / "e") == export_lines(b, b.parent / "e") == export_lines(c, c.parent / "e")


def test_scope_delete_travels(stores):
    a, b = stores(2)
    with Store.open(a) as st:
        st.create_scope("gone")
        st.write_pages_bulk(({"content": f"scope page {i}"} for i in range(20)), "gone")
    sync(b, a)
    with Store.open(b) as st:
        st.delete_scope("gone", "all of it")
    sync(a, b)
    with Store.open(a) as st:
        assert "gone" not in {s["namespace"] for s in st.list_scopes()["scopes"]}
        assert st.doctor()["counts"]["page"] == 0
    assert export_lines(a, a.parent / "e") == export_lines(b, b.parent / "e")


def test_other_owner_refused_in_one_line_and_empty_store_adopts(stores):
    a, b, c = stores(3)
    for p in (a, b):
        with Store.open(p) as st:
            st.create_scope("mine")
    with pytest.raises(Conflict) as err:
        sync(a, b)
    assert "\n" not in str(err.value) and "another owner" in str(err.value)
    res = sync(c, a)
    assert res["adopted_owner"]
    with Store.open(c) as st, Store.open(a) as sa:
        assert st.owner_id == sa.owner_id
    with pytest.raises(Invalid):
        sync(a, a)


def test_model_session_may_not_sync(stores):
    a, b = stores(2)
    with Store.open(a) as st:
        st.create_scope("x")
        model = h.model(st, {"x": ["read", "write"]})
        with pytest.raises(Forbidden):
            model.sync.apply("sto_x", iter(()))


def test_same_chat_export_on_two_stores_gives_no_duplicates(stores, tmp_path):
    from store.adapters import chatgpt

    export = ROOT / "tests" / "data" / "exports" / "chatgpt-danny-avila-LibreChat-1.json"
    a, b, c = stores(3)
    with Store.open(c) as st:
        chatgpt.import_chatgpt(st, export)
        single = st.doctor()["counts"]["page"]
        alone = export_lines(c, tmp_path / "alone.jsonl")
    res = sync(b, a)  # paired while both are empty: b adopts a's owner
    assert res["adopted_owner"]
    for p in (a, b):
        with Store.open(p) as st:
            chatgpt.import_chatgpt(st, export)
            assert st.doctor()["counts"]["page"] == single
    res = sync(a, b)
    assert res["taken"]["collapsed_pages"] or res["given"]["collapsed_pages"]
    for p in (a, b):
        with Store.open(p) as st:
            assert st.doctor()["counts"]["page"] == single
            keys = st._db.execute_sql("SELECT COUNT(*), COUNT(DISTINCT source_key) FROM source_page").fetchone()
            assert keys[0] == keys[1] == single
    lines = export_lines(a, tmp_path / "a.jsonl")
    assert lines == export_lines(b, tmp_path / "b.jsonl")
    assert len(lines) == len(alone)  # one store's import, line for line in number
    for p in (a, b):
        with Store.open(p) as st:  # a re-import finds every page by its source key: still no duplicates
            report = chatgpt.import_chatgpt(st, export)
            assert report.created == 0 and st.doctor()["counts"]["page"] == single


def test_crash_mid_sync_then_rerun_gives_the_same_result(three, tmp_path):
    control = three("ctl")
    sync(control[0], control[1])
    crashed = three("crash")
    killed_mid_sync(crashed[0], "sync_with", crashed[1], after=40)
    with Store.open(crashed[0]) as st:  # nothing of the killed sync landed
        assert st.doctor()["counts"]["page"] == 16
    sync(crashed[0], crashed[1])
    for i in (0, 1):
        assert export_lines(crashed[i], tmp_path / "c.jsonl") == export_lines(control[i], tmp_path / "k.jsonl")


def test_status_names_peers_and_conflicts(stores, clock):
    a, b = stores(2)
    with Store.open(a) as st:
        st.create_scope("n")
        w = st.write_page("n", content="one")
        assert st.sync_status()["peers"] == [] and st.sync_status()["last_sync"] is None
    sync(b, a)
    with Store.open(a) as st:
        st.revise_page(w["page_id"], w["revision_id"], content="two on a")
    with Store.open(b) as st:
        st.revise_page(w["page_id"], w["revision_id"], content="two on b")
    sync(a, b)
    with Store.open(a) as st, Store.open(b) as sb:
        status = st.sync_status()
        assert status["conflicts"] == [w["page_id"]] and not status["paired"]
        assert [p["store_id"] for p in status["peers"]] == [sb.sync.store_id]
        assert status["peers"][0]["via"] == ["with"] and status["last_sync"]


def test_a_rowid_freed_by_a_delete_and_given_again_still_travels(stores):
    a, b = stores(2)
    with Store.open(a) as st:
        st.create_scope("n")
        st.write_page("n", content="first")
        top = st.write_page("n", content="the newest row, deleted next")
    sync(b, a)
    with Store.open(a) as st:
        st.delete_page(top["page_id"], "gone")
        again = st.write_page("n", content="written after the delete, in the freed rowid")
        assert st._db.execute_sql("SELECT MAX(id) FROM page").fetchone()[0] == 2  # SQLite gave rowid 2 again
    res = sync(b, a)
    assert res["taken"]["added"]["page"] == 1
    with Store.open(b) as st:
        assert h.read1(st, again["page_id"])["revision"]["payload"]["content"].startswith("written after")
    assert export_lines(a, a.parent / "e") == export_lines(b, b.parent / "e")


def test_with_a_missing_file_is_refused_and_creates_nothing(stores, tmp_path):
    (a,) = stores(1)
    with pytest.raises(Invalid):
        sync(a, tmp_path / "typo.db")
    assert not (tmp_path / "typo.db").exists()
