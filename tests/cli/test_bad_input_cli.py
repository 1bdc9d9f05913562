"""Bad input through the command line (issue 12 items 18, 21, 25): a contract code, never `internal`."""

from __future__ import annotations

import hashlib
import json

import pytest

from pcp_tui.cli import main

DEEP = "[" * 100_000 + "]" * 100_000


def run(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def _error(out: str) -> dict:
    return json.loads(out)["error"]


def test_deeply_nested_chat_export_is_invalid(tmp_path, capsys):
    src = tmp_path / "conversations.json"
    src.write_text(DEEP)
    code, out, _ = run(capsys, "--db", str(tmp_path / "s.db"), "--json", "import", "chatgpt", str(src))
    err = _error(out)
    assert code != 0 and err["code"] == "invalid" and "nested too deeply" in err["message"]


def test_deeply_nested_events_line_is_invalid(tmp_path, capsys):
    src = tmp_path / "events.jsonl"
    src.write_text(DEEP + "\n")
    code, out, _ = run(capsys, "--db", str(tmp_path / "s.db"), "--json", "import", "events", str(src))
    err = _error(out)
    assert err["code"] == "invalid" and "nested too deeply" in err["message"]


def test_deeply_nested_export_line_is_invalid(tmp_path, capsys):
    head = json.dumps({"kind": "pcp.export.v1", "owner_id": None}) + "\n" + DEEP + "\n"
    end = json.dumps({"kind": "pcp.export.end", "sha256": hashlib.sha256(head.encode()).hexdigest()}) + "\n"
    src = tmp_path / "x.jsonl"
    src.write_text(head + end)
    code, out, _ = run(capsys, "--db", str(tmp_path / "s.db"), "--json", "import", "export", str(src))
    err = _error(out)
    assert err["code"] == "invalid" and "nested too deeply" in err["message"]


def test_deeply_nested_facets_are_invalid(tmp_path, capsys):
    deep_obj = '{"a":' * 100_000 + "1" + "}" * 100_000
    code, out, _ = run(capsys, "--db", str(tmp_path / "s.db"), "--json", "write", "--namespace", "project:a", "--content", "x",
                       "--facets", deep_obj)
    assert _error(out)["code"] == "invalid"
    moderately = '{"a":' * 100 + "1" + "}" * 100
    code, out, _ = run(capsys, "--db", str(tmp_path / "s.db"), "--json", "write", "--namespace", "project:a", "--content", "x",
                       "--facets", moderately)
    err = _error(out)
    assert err["code"] == "invalid" and "at most 64 levels" in err["message"]


EDGES = ["0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59-14:00"]


@pytest.mark.parametrize("edge", EDGES)
def test_edge_timestamps_are_invalid_in_search_ingest_and_suppress(tmp_path, capsys, edge):
    db = str(tmp_path / "s.db")
    code, out, _ = run(capsys, "--db", db, "--json", "write", "--namespace", "project:a", "--content", "x")
    page_id = json.loads(out)["page_id"]
    for argv in (["search", "x", "--after", edge], ["search", "x", "--before", edge],
                 ["ingest", "--namespace", "project:a", "--idempotency-key", "k1", "--content", "y",
                  "--observed-at", edge],
                 ["suppress", page_id, "--context", "task:1", "--expires", edge]):
        code, out, err = run(capsys, "--db", db, "--json", *argv)
        error = _error(out)
        assert code != 0 and error["code"] == "invalid" and "outside the years 1 to 9999" in error["message"], argv


def test_years_before_1000_are_stored_with_four_digits(tmp_path):
    from store import ids

    assert ids.parse_time("0999-06-01T00:00:00Z") == "0999-06-01T00:00:00.000Z"


@pytest.mark.parametrize("argv", [
    [b"write", b"--namespace", b"project:a", b"--content", b"caf\xe9"],
    [b"write", b"--namespace", b"project:\xff", b"--content", b"x"],
    [b"search", b"\xfe\xfe"],
    [b"read", b"pg_\xff"],
])
def test_command_line_text_that_is_not_utf8_is_invalid_and_audited(tmp_path, argv):
    import subprocess
    import sys

    from store import Store

    db = tmp_path / "s.db"
    Store.open(db).close()  # read and search refuse a missing store
    proc = subprocess.run([sys.executable.encode(), b"-m", b"pcp_tui.cli", b"--db", str(db).encode(), b"--json", *argv],
                          capture_output=True)
    error = json.loads(proc.stdout)["error"]
    assert proc.returncode == 1 and error["code"] == "invalid" and "not valid UTF-8" in error["message"], proc
    assert b"codec" not in proc.stdout + proc.stderr
    from store import Store

    st = Store.open(db)
    events = st.audit_log()["events"]
    st.close()
    assert [(e["decision"], e["error_code"]) for e in events][:1] == [("failed", "invalid")]
