"""Issue 14 from the command line: `pcp delete` with filters, --plan with its digest, --yes --plan-digest,
--resume, refusals in one line; a deletion killed with SIGKILL (or stopped with Ctrl-C) then resumed ends
where an uninterrupted one does."""

from __future__ import annotations

import json
import os
import shutil
import signal
from peewee import sqlite3  # the store's SQLite: two libraries in one process break each other's locks
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pcp_tui import cli

REPO = Path(__file__).resolve().parents[2]
OLD, NEW = "2025-06-01T00:00:00Z", "2026-06-01T00:00:00Z"
FILTER = ["--scope", "project:big", "--observed-before", "2026-01-01T00:00:00Z"]


def run(capsys: pytest.CaptureFixture[str], db: Path, *args: str, json_out: bool = True) -> tuple[int, str, str]:
    capsys.readouterr()
    rc = cli.main(["--db", str(db), *(["--json"] if json_out else []), *args])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return rc, out, err


def ok(capsys: pytest.CaptureFixture[str], db: Path, *args: str) -> Any:
    rc, out, err = run(capsys, db, *args)
    assert rc == 0 and err == "", (out, err)
    return json.loads(out)


def failure(capsys: pytest.CaptureFixture[str], db: Path, *args: str, code: str) -> str:
    """A refusal for people: exit 1, nothing on stdout, one line on stderr ending in its code."""
    rc, out, err = run(capsys, db, *args, json_out=False)
    assert rc == 1 and out == "" and len(err.splitlines()) == 1 and err.rstrip().endswith(f"({code})"), err
    return err


@pytest.fixture
def small(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    from store import Store

    monkeypatch.delenv("PCP_DB", raising=False)
    monkeypatch.setenv("COLUMNS", "160")
    db = tmp_path / "s.db"
    with Store.open(db) as st:
        for i in range(12):
            st.write_page("project:old", content=f"invoice {i} to the old address", facets={"title": f"Invoice {i}"})
        st.write_page("project:old", content="a note to keep")
        st.write_page("project:new", content="invoice to the old address, filed in the new project")
    return db


def test_plan_then_yes_with_the_digest(capsys, small):
    flt = ["--scope", "project:old", "--query", "old address", "--mode", "exact"]
    plan = ok(capsys, small, "delete", *flt, "--plan")
    assert plan["pages"] == 12 and plan["digest"].startswith("sha256:")
    assert [p["title"] for p in plan["first_pages"]][:2] == ["Invoice 0", "Invoice 1"]
    rc, human, _ = run(capsys, small, "delete", *flt, "--plan", json_out=False)
    assert rc == 0 and "Bulk deletion plan" in human and "Invoice 0" in human and plan["digest"] in human
    receipt = ok(capsys, small, "delete", *flt, "--yes", "--reason", "moved house", "--plan-digest", plan["digest"],
                 "--batch-size", "5")
    assert receipt["state"] == "complete" and receipt["completed"] == "12/12" and receipt["batch_size"] == 5
    assert ok(capsys, small, "delete", "--scope", "project:old", "--plan")["pages"] == 1
    assert ok(capsys, small, "delete", "--scope", "project:new", "--plan")["pages"] == 1
    rc, human, _ = run(capsys, small, "delete", "--resume", receipt["receipt_id"], json_out=False)
    assert rc == 0 and "Deleted 12 of 12 pages" in human and receipt["receipt_id"] in human


def test_refusals_are_one_line(capsys, small):
    plan = ok(capsys, small, "delete", "--scope", "project:old", "--plan")
    ok(capsys, small, "write", "--namespace", "project:old", "--content", "one more")
    err = failure(capsys, small, "delete", "--scope", "project:old", "--yes", "--reason", "r",
                  "--plan-digest", plan["digest"], code="conflict")
    assert "plan again" in err
    assert "auto" in failure(capsys, small, "delete", "--query", "invoice", "--mode", "auto", "--plan",
                             code="unsupported")
    failure(capsys, small, "delete", "--query", "invoice", "--plan", code="invalid")  # a query needs its mode
    failure(capsys, small, "delete", "--resume", "del_01NOTADELETION00000000000000", code="not_found")
    for argv in (["delete", "--plan"],  # neither a page nor filters
                 ["delete", "--scope", "project:old", "--yes", "--reason", "r"],  # --yes needs --plan-digest
                 ["delete", "pg_x", "--scope", "project:old", "--plan"],
                 ["delete", "--scope", "project:old", "--cascade", "--plan"],
                 ["delete", "--resume", "del_x", "--scope", "project:old"]):
        rc, out, err = run(capsys, small, *argv, json_out=False)
        assert rc == 2 and err.splitlines()[-1].startswith("pcp delete: error: "), argv
    model = ["--as-model", "m", "--grant", "*=delete,read,search"]
    rc, out, err = run(capsys, small, *model, "delete", "--scope", "project:old", "--plan", json_out=False)
    assert rc == 1 and err.rstrip().endswith("(forbidden)")


def test_one_page_delete_is_unchanged(capsys, small):
    page = ok(capsys, small, "write", "--namespace", "project:one", "--content", "just this")["page_id"]
    assert ok(capsys, small, "delete", page, "--plan")["page_id"] == page
    receipt = ok(capsys, small, "delete", page, "--reason", "gone", "--yes")
    assert receipt["page_ids"] == [page]


# --- interrupted runs, in real processes ----------------------------------------------------------


def _ten_thousand(db: Path) -> None:
    """10,000 pages written in bulk; 1,000 of them (project:big, observed in 2025) are the selection."""
    from store import Store

    with Store.open(db) as st:
        st.write_pages_bulk(({"content": f"page {i} on harbor logistics {i}", "observed_at": OLD if i % 9 == 0
                              else NEW, "facets": {"title": f"Big {i}"}} for i in range(9000)), "project:big")
        st.write_pages_bulk(({"content": f"other page {i}", "observed_at": OLD} for i in range(1000)),
                            "project:other")
        a, b = st.search_pages("", scopes=["project:big"], mode="temporal", limit=2)["hits"]
        st.link_pages(a["page_id"], "related_to", b["page_id"])


def _pcp(db: Path, *args: str, stop: str = "") -> subprocess.Popen[str]:
    """`pcp --db DB ARGS` in a child; `stop` is where it stops itself (store/stops.py), if anywhere."""
    env = {k: v for k, v in os.environ.items() if k not in ("PCP_DB", "PCP_TEST_STOP")}
    if stop:
        env["PCP_TEST_STOP"] = stop
    return subprocess.Popen([sys.executable, "-m", "pcp_tui.cli", "--db", str(db), *args], cwd=REPO, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _completed(db: Path) -> tuple[str, int] | None:
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)
    try:
        row = con.execute("SELECT receipt_id, completed FROM bulk_deletion").fetchone()
    except sqlite3.OperationalError:
        return None
    finally:
        con.close()
    return (row[0], row[1]) if row else None


def _end_state(db: Path) -> dict[str, Any]:
    """Everything but ids and times of the deletion itself: pages, revisions, relations, statistics, export."""
    from store import Store

    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        state = {t: sorted(con.execute(f'SELECT * FROM "{t}"').fetchall(), key=repr)
                 for t in ("page", "revision", "relation", "scope", "term_stat", "scope_stat")}
        state["deleted_revision"] = sorted(con.execute("SELECT revision_id, page_id FROM deleted_revision"))
        state["receipts"] = [(json.loads(p), json.loads(c)) for p, c in
                             con.execute("SELECT page_ids, counts FROM deletion_receipt")]
        state["bulk"] = sorted(con.execute("SELECT digest, page_ids, total, completed, state, counts FROM bulk_deletion"))
    finally:
        con.close()
    with Store.open(db) as st:
        out = db.parent / "export.jsonl"
        st.export(out)
        state["export"] = [line for line in out.read_text(encoding="utf-8").splitlines()
                           if json.loads(line)["kind"] not in ("pcp.export.v1", "pcp.export.end", "receipt")]
        out.unlink()
        state["hits"] = sorted(h["page_id"] for h in st.search_pages("harbor logistics", mode="text", limit=50)["hits"])
    return state


@pytest.fixture(scope="module")
def big_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("big") / "s.db"
    _ten_thousand(db)
    return db


def _copy(src: Path, where: Path) -> Path:
    where.mkdir()
    shutil.copyfile(src, where / "s.db")
    return where / "s.db"


def _plan_digest(db: Path) -> str:
    done = subprocess.run([sys.executable, "-m", "pcp_tui.cli", "--db", str(db), "--json", "delete", *FILTER,
                           "--plan"], cwd=REPO, capture_output=True, text=True, timeout=120)
    plan = json.loads(done.stdout)
    assert plan["pages"] == 1000, plan
    return str(plan["digest"])


@pytest.mark.slow
def test_sigkill_mid_delete_then_resume_ends_like_an_uninterrupted_run(big_store, tmp_path):
    reference, killed = _copy(big_store, tmp_path / "ref"), _copy(big_store, tmp_path / "kill")
    digest = _plan_digest(reference)
    erase = [*FILTER, "--yes", "--reason", "old harbor pages", "--plan-digest", digest, "--batch-size", "10"]
    whole = _pcp(reference, "--json", "delete", *erase)
    out, err = whole.communicate(timeout=300)
    assert whole.returncode == 0, err
    assert json.loads(out)["completed"] == "1000/1000"

    proc = _pcp(killed, "--json", "delete", *erase, stop="bulk-delete-batch:4")  # killed inside the 4th batch
    proc.communicate(timeout=300)
    assert proc.returncode == -signal.SIGKILL
    receipt_id, completed = _completed(killed) or ("", 0)
    assert completed == 30  # batches are whole: three committed, the fourth not at all
    con = sqlite3.connect(f"file:{killed}?mode=ro", uri=True)
    try:
        left = con.execute("SELECT COUNT(*) FROM page").fetchone()[0]
    finally:
        con.close()
    assert left == 10_000 - completed  # whole pages only: every page dealt with is gone, no other

    resumed = _pcp(killed, "--json", "delete", "--resume", receipt_id)
    out, err = resumed.communicate(timeout=300)
    assert resumed.returncode == 0, err
    assert json.loads(out)["completed"] == "1000/1000"
    assert _end_state(killed) == _end_state(reference)


@pytest.mark.slow
def test_ctrl_c_stops_between_batches_and_says_how_to_resume(big_store, tmp_path):
    db = _copy(big_store, tmp_path / "int")
    digest = _plan_digest(db)
    proc = _pcp(db, "delete", *FILTER, "--yes", "--reason", "old", "--plan-digest", digest, "--batch-size", "10",
                stop="bulk-delete-batched:2!INT")  # Ctrl-C once the second batch has committed
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 130, err
    receipt_id, completed = _completed(db) or ("", 0)
    assert completed == 20
    assert f"pcp delete --resume {receipt_id}" in err and "whole pages only" in err and "Traceback" not in err
    resumed = _pcp(db, "delete", "--resume", receipt_id)
    out, err = resumed.communicate(timeout=300)
    assert resumed.returncode == 0 and "Deleted 1,000 of 1,000 pages" in out, err


def test_a_resumed_deletion_says_which_pages_were_already_gone(capsys, small):
    """A stopped deletion resumed after its pages were erased another way (a second deletion meanwhile):
    the receipt counts them as dealt with, and the line says how many this deletion erased itself."""
    from store import Store

    flt = {"scopes": ["project:old"], "query": "old address", "mode": "exact"}
    with Store.open(small) as st:
        plan = st.plan_bulk_delete(flt)
        started = st.begin_bulk_delete(flt, "moved house", plan["digest"], batch_size=5)  # recorded, nothing erased
        for page_id in started["page_ids"][:7]:
            st.delete_page(page_id, "erased one by one meanwhile")
    rc, human, err = run(capsys, small, "delete", "--resume", started["receipt_id"], json_out=False)
    assert rc == 0, err
    assert "Deleted 12 of 12 pages (5 erased by this deletion, 7 already gone)" in " ".join(human.split())
    receipt = ok(capsys, small, "delete", "--resume", started["receipt_id"])
    assert receipt["counts"]["pages"] == 5 and receipt["pages_done"] == 12
