"""The `pcp` command line (shared/spec/cli.md): every Core subcommand, with and without --json,
exit statuses 0/1/2, one JSON document on stdout with --json, one readable line on stderr
without it, and never a traceback.

Most tests call `pcp_tui.cli.main([...])` in-process with capsys; a few run the module in a
subprocess to see exactly what a user sees.
"""

from __future__ import annotations

import io
import json
import os
import re
import shutil
from peewee import sqlite3  # the store's SQLite: two libraries in one process break each other's locks
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pcp_tui import cli

PAGE_RE = re.compile(r"^pg_[0-9A-HJKMNP-TV-Z]{26}$")
REV_RE = re.compile(r"^rev_[0-9A-HJKMNP-TV-Z]{26}$")
ENVELOPE_KEYS = {
    "page_id", "revision_id", "previous_revision_id", "owner_id", "namespace", "visibility", "lifecycle_status",
    "created_at", "observed_at", "valid_from", "valid_to", "created_by", "payload", "source_refs", "facets",
    "provenance", "content_digest",
}
HIT_KEYS = {
    "page_id", "revision_id", "namespace", "owner_id", "lifecycle_status", "title", "snippet", "projection",
    "range", "matched_by", "score", "projections", "created_at", "observed_at", "date", "highlights", "conversation",
}
SCOPE_KEYS = {"namespace", "display_name", "description", "parent", "visibility", "owner_id", "permissions",
              "page_count", "last_activity"}
WRITE_KEYS = {"page_id", "revision_id", "created"}
ERROR_CODES = {"not_found", "forbidden", "conflict", "invalid", "cycle", "limit", "unsupported"}
REPO = Path(__file__).resolve().parents[2]


class Pcp:
    """Runs `pcp --db <tmp> ...` in-process and checks the output discipline of every call."""

    def __init__(self, db: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
        self.db, self.capsys, self.monkeypatch = db, capsys, monkeypatch

    def run(self, *args: str, json_out: bool = True, stdin: str | bytes | None = None,
            db: str | None = None) -> tuple[int, str, str]:
        argv = ["--db", db or self.db] + (["--json"] if json_out else []) + list(args)
        if stdin is not None:
            raw = stdin.encode("utf-8") if isinstance(stdin, str) else stdin
            self.monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(raw), encoding="utf-8"))
        self.capsys.readouterr()
        rc = cli.main(argv)
        out, err = self.capsys.readouterr()
        assert isinstance(rc, int)
        assert "Traceback" not in out and "Traceback" not in err
        if json_out:
            assert err == "", f"--json wrote to stderr: {err!r}"
            one_document(out)
        return rc, out, err

    def ok(self, *args: str, **kw: Any) -> Any:
        rc, out, err = self.run(*args, **kw)
        assert rc == 0, out
        return json.loads(out)

    def human(self, *args: str, **kw: Any) -> str:
        rc, out, err = self.run(*args, json_out=False, **kw)
        assert rc == 0, err
        assert out.strip(), "human output is empty"
        assert err == ""
        return out

    def error(self, *args: str, code: str, rc: int = 1, **kw: Any) -> str:
        got, out, err = self.run(*args, **kw)
        assert got == rc, out
        doc = json.loads(out)
        assert set(doc) == {"error"} and set(doc["error"]) == {"code", "message"}, doc
        assert doc["error"]["code"] == code, doc
        assert doc["error"]["message"]
        return doc["error"]["message"]

    def human_error(self, *args: str, code: str, **kw: Any) -> str:
        rc, out, err = self.run(*args, json_out=False, **kw)
        assert rc == 1
        assert out == ""
        lines = err.splitlines()
        assert len(lines) == 1, err
        assert lines[0].startswith("pcp: error: ") and lines[0].endswith(f"({code})"), err
        return lines[0]


def one_document(out: str) -> Any:
    """Exactly one JSON document (json.loads refuses anything after it)."""
    assert out.endswith("\n") and out.strip(), repr(out[:200])
    return json.loads(out)


@pytest.fixture
def pcp(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Pcp:
    monkeypatch.delenv("PCP_DB", raising=False)
    monkeypatch.setenv("COLUMNS", "160")
    return Pcp(str(tmp_path / "s.db"), capsys, monkeypatch)


# The seeded store of this test process (its file and ids), made by the first test that asks for it and copied
# for each later one: ~60 tests took it, at 7 pcp commands (~0.4 s) each.
_SEEDED: dict[str, Any] = {}


@pytest.fixture
def seeded(pcp: Pcp, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """A small store: a proof page, a note derived from it, one archived, one tombstoned, a link."""
    if _SEEDED:
        shutil.copyfile(_SEEDED["file"], pcp.db)
        return dict(_SEEDED["ids"])
    ids: dict[str, str] = {}
    a = pcp.ok("write", "--namespace", "project:alpha", "--title", "Tychonoff proof",
               "--content", "# Compactness\n\nThe finite product of compact spaces is compact.")
    b = pcp.ok("write", "--namespace", "project:alpha", "--title", "Proof notes",
               "--content", "Notes on the compactness argument.", "--derived-from", a["revision_id"])
    c = pcp.ok("write", "--namespace", "project:beta", "--title", "Old plan", "--content", "An obsolete plan.")
    d = pcp.ok("write", "--namespace", "project:beta", "--title", "Wrong claim", "--content", "A wrong claim.")
    pcp.ok("archive", c["page_id"], "--reason", "obsolete")
    pcp.ok("tombstone", d["page_id"], "--reason", "wrong")
    rel = pcp.ok("link", b["page_id"], "supports", a["page_id"])
    ids.update(a=a["page_id"], a_rev=a["revision_id"], b=b["page_id"], b_rev=b["revision_id"],
               c=c["page_id"], d=d["page_id"], rel=rel["relation_id"])
    assert [p.name for p in Path(pcp.db).parent.iterdir()] == ["s.db"]  # (closed: nothing beside it to copy)
    kept = tmp_path_factory.mktemp("seeded") / "s.db"
    shutil.copyfile(pcp.db, kept)
    _SEEDED.update(file=kept, ids=dict(ids))
    return ids


# --- every subcommand, with and without --json -------------------------------------------------------

CASES: dict[str, tuple[list[str], Any]] = {
    "describe": (["describe"], {"protocol_version", "search_modes", "projections", "limits", "flags"}),
    "doctor": (["doctor"], {"integrity"}),
    "scopes": (["scopes"], {"scopes", "next_cursor"}),
    "scopes-query": (["scopes", "alpha", "--limit", "5"], {"scopes", "next_cursor"}),
    "scope-create": (["scope", "create", "project:new", "--name", "New", "--description", "A new one",
                      "--parent", "project:alpha", "--visibility", "shared"], SCOPE_KEYS),
    "scope-delete-plan": (["scope", "delete", "project:beta", "--plan"], {"namespace"}),
    "scope-delete": (["scope", "delete", "project:beta", "--reason", "cleanup", "--yes"], {"receipt_id"}),
    "write": (["write", "--namespace", "project:alpha", "--content", "hello"], WRITE_KEYS),
    "revise": (["revise", "{a}", "--expected", "{a_rev}", "--content", "revised"], WRITE_KEYS),
    "read": (["read", "{a}"], {"results"}),
    "read-projections": (["read", "{a}", "{b_rev}", "--projection", "manifest,relations",
                          "--projection", "history", "--max-chars", "100"], {"results"}),
    "search": (["search", "compactness"], {"hits", "next_cursor"}),
    "search-filters": (["search", "--mode", "temporal", "--status", "active,archived", "--scope", "project:beta",
                        "--media-type", "text/markdown", "--actor-type", "user", "--after", "2000-01-01T00:00:00Z",
                        "--before", "2999-01-01T00:00:00Z", "--context", "task:1", "--limit", "3"],
                       {"hits", "next_cursor"}),
    "search-all-revisions": (["search", "plan", "--all-revisions", "--relation-type", "supports"],
                             {"hits", "next_cursor"}),
    "link": (["link", "{a}", "related_to", "{c}", "--idempotency-key", "k1"],
             {"relation_id", "from_page_id", "from_revision_id", "to_page_id", "to_revision_id", "relation_type",
              "created"}),
    "unlink": (["unlink", "{rel}", "--reason", "mistake"], {"relation_id", "retracted", "event_id"}),
    "ingest": (["ingest", "--namespace", "conversation:1", "--idempotency-key", "msg-1", "--content", "hi there",
                "--media-type", "text/plain", "--source-ref", "chat://1/msg/1",
                "--observed-at", "2026-01-02T03:04:05Z"], WRITE_KEYS),
    "archive": (["archive", "{a}", "--reason", "done"], {"page_id", "lifecycle_status", "event_id"}),
    "restore": (["restore", "{c}", "--reason", "needed again"], {"page_id", "lifecycle_status", "event_id"}),
    "tombstone": (["tombstone", "{a}", "--reason", "withdrawn"], {"page_id", "lifecycle_status", "event_id"}),
    "untombstone": (["untombstone", "{d}", "--reason", "was right"], {"page_id", "lifecycle_status", "event_id"}),
    "suppress": (["suppress", "{a}", "{b}", "--context", "task:1", "--reason", "noise",
                  "--expires", "2999-01-01T00:00:00Z"], {"context_id", "suppressed"}),
    "unsuppress": (["unsuppress", "{a}", "--context", "task:1"], {"context_id", "unsuppressed"}),
    "delete-plan": (["delete", "{a}", "--plan", "--cascade"], {"page_id", "pages", "cascade"}),
    "delete": (["delete", "{c}", "--reason", "erase", "--yes"], {"receipt_id", "page_ids"}),
    "audit": (["audit", "--decision", "allowed", "--operation", "write_page", "--limit", "5"],
              {"events", "next_cursor"}),
}


def _fill(argv: list[str], ids: dict[str, str]) -> list[str]:
    return [arg.format(**ids) for arg in argv]


@pytest.mark.parametrize("name", sorted(CASES))
def test_every_subcommand_prints_one_json_document(pcp: Pcp, seeded: dict[str, str], name: str) -> None:
    argv, keys = CASES[name]
    doc = pcp.ok(*_fill(argv, seeded))
    assert isinstance(doc, dict)
    assert keys <= set(doc), f"{name}: missing {keys - set(doc)}"


@pytest.mark.parametrize("name", sorted(CASES))
def test_every_subcommand_prints_for_people(pcp: Pcp, seeded: dict[str, str], name: str) -> None:
    argv, _ = CASES[name]
    out = pcp.human(*_fill(argv, seeded))
    assert not out.lstrip().startswith("{"), "human output should not be JSON"


def test_recommend_tombstone_as_model(pcp: Pcp, seeded: dict[str, str]) -> None:
    model = ["--as-model", "claude", "--grant", "project:*=search,read,suppress"]
    doc = pcp.ok(*model, "recommend-tombstone", seeded["a"], "--reason", "looks wrong")
    assert doc["page_id"] == seeded["a"] and doc["status"] == "pending" and doc["recommendation_id"]
    out = pcp.human(*model, "recommend-tombstone", seeded["b"], "--reason", "also wrong")
    assert seeded["b"] in out
    # a recommendation changes nothing
    assert pcp.ok("read", seeded["a"])["results"][0]["revision"]["lifecycle_status"] == "active"


# --- human output --------------------------------------------------------------------------------


def test_human_output_shows_the_data(pcp: Pcp, seeded: dict[str, str]) -> None:
    out = pcp.human("write", "--namespace", "project:alpha", "--content", "x [bold]not markup[/bold]")
    assert re.match(r"^Wrote pg_\w{26} rev rev_\w{26}$", out.strip()), out
    assert "project:alpha" in pcp.human("scopes") and "project:beta" in pcp.human("scopes")
    search = pcp.human("search", "compactness")
    assert "Tychonoff proof" in search and "project:alpha" in search and "active" in search
    read = pcp.human("read", seeded["a"])
    assert "Tychonoff proof" in read and "finite product of compact spaces" in read and seeded["a"] in read
    page = pcp.ok("search", "markup")["hits"][0]["page_id"]
    assert "[bold]not markup[/bold]" in pcp.human("read", page)  # user text is never Rich markup
    audit = pcp.human("audit")
    assert "write_page" in audit or "write" in audit
    assert "allowed" in audit
    assert "No hits." in pcp.human("search", "zzzqqqxxx-nothing")


def test_scopes_fit_80_columns_never_cut_a_namespace_and_show_every_column_at_160(pcp: Pcp) -> None:
    from rich.cells import cell_len

    long_ns = "agent:claude-code:users-someone-projects-a-rather-long-project:0d3b22c1-ba90-4fd3-b8d2-056ffc626725"
    scopes = {"conversation:chatgpt-tychonoff": "ChatGPT: product of compact spaces",
              "project:alpha": "Alpha — Tychonoff thesis", "user:me": "About me", long_ns: "A long agent session"}
    for ns, name in scopes.items():
        pcp.ok("scope", "create", ns, "--name", name)
        pcp.ok("write", "--namespace", ns, "--content", f"a page of {name}")
    pcp.monkeypatch.setenv("COLUMNS", "80")
    narrow = pcp.human("scopes").splitlines()
    # Issue 33: a namespace is never cut (it is what --scope and --grant need): too long for the table, each scope
    # is a block, its namespace whole on a line of its own (the terminal wraps it; no line break is put in it).
    assert all(cell_len(line) <= 80 for line in narrow if line.strip() not in scopes), narrow
    for ns, name in scopes.items():
        at = narrow.index(ns)  # the namespace alone and whole on its line
        facts = " ".join(line.strip() for line in narrow[at + 1:at + 3])
        assert name in facts and "1 page" in facts and "private, all" in facts, (ns, narrow)
    assert "…" not in "\n".join(narrow)
    pcp.monkeypatch.setenv("COLUMNS", "160")
    wide = pcp.human("scopes").splitlines()
    assert all(cell_len(line) <= 160 for line in wide)
    header = next(line for line in wide if "Namespace" in line)
    assert all(h in header for h in ("Name", "Visibility", "Pages", "Last activity", "Permissions"))
    for ns, name in scopes.items():
        if ns != long_ns:
            assert any(ns in line and name in line and "private" in line for line in wide), (ns, wide)


def test_no_subcommand_prints_help(pcp: Pcp, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main([]) == 0
    out, err = capsys.readouterr()
    assert "usage: pcp" in out and "search" in out and err == ""
    assert cli.main(["--help"]) == 0
    assert cli.main(["write", "--help"]) == 0
    assert "--namespace" in capsys.readouterr().out


# --- usage errors (exit 2) -----------------------------------------------------------------------


@pytest.mark.parametrize("argv", [
    ["bogus"],
    ["copy"],                                          # neither --label nor --continue
    ["copy", "--label", "x", "--continue", "y"],       # both
    ["copy", "--continue", "x", "--query", "q"],       # --query chooses pages for a new chat only
    ["bundle", "--max-tokens"],                        # missing value
    ["demo"],
    ["serve", "--port"],                               # missing value
    ["serve", "--port", "80", "extra"],
    ["mcp"],
    ["search", "--no-such-option"],
    ["write", "--content", "x"],                       # --namespace missing
    ["write", "--namespace", "n"],                     # no content source
    ["write", "--namespace", "n", "--content", "x", "--stdin"],
    ["revise", "pg_x", "--content", "x"],              # --expected missing
    ["read"],
    ["ingest", "--namespace", "n", "--content", "x"],  # --idempotency-key missing
    ["delete", "pg_x", "--reason", "r"],               # neither --plan nor --yes
    ["delete", "pg_x", "--reason", "r", "--plan", "--yes"],
    ["delete", "pg_x", "--yes"],                       # --yes needs --reason
    ["scope"],
    ["scope", "delete", "project:x", "--reason", "r"],
    ["archive", "pg_x"],                               # --reason missing
    ["suppress", "pg_x"],                              # --context missing
    ["--grant", "*=read", "describe"],                 # --grant without --as-model
    ["describe", "--db", "elsewhere.db"],              # global option after the subcommand
])
def test_usage_errors_exit_2(pcp: Pcp, argv: list[str]) -> None:
    rc, out, err = pcp.run(*argv, json_out=False)
    assert rc == 2 and out == ""
    assert "usage:" in err and "error:" in err
    rc, out, _ = pcp.run(*argv)
    assert rc == 2
    doc = json.loads(out)
    assert doc["error"]["code"] == "usage" and doc["error"]["message"]
    assert not Path(pcp.db).exists(), "a usage error must not create the store"


def test_json_without_subcommand_is_a_usage_error(pcp: Pcp) -> None:
    rc, out, _ = pcp.run()
    assert rc == 2 and json.loads(out)["error"]["code"] == "usage"


def test_json_flag_after_the_subcommand_is_accepted(pcp: Pcp, capsys: pytest.CaptureFixture[str]) -> None:
    from store import Store

    Store.open(pcp.db).close()  # describe refuses a missing store
    assert cli.main(["--db", pcp.db, "describe", "--json"]) == 0
    assert one_document(capsys.readouterr().out)["protocol_version"] == "0.4.0-draft"


# --- bad option values (exit 1, code invalid) ---------------------------------------------------


@pytest.mark.parametrize("argv", [
    ["write", "--namespace", "n", "--content", "x", "--facets", "{not json"],
    ["write", "--namespace", "n", "--content", "x", "--facets", "[1, 2]"],
    ["write", "--namespace", "n", "--content", "x", "--facets", '"title"'],
    ["write", "--namespace", "n", "--content", "x", "--observed-at", "yesterday"],
    ["write", "--namespace", "n", "--content", "x", "--relation", "no-colon"],
    ["search", "--after", "2026-13-45"],
    ["search", "--limit", "many"],
    ["search", "--limit", "0"],
    ["read", "pg_x", "--max-chars", "-5"],
    ["scope", "create", "project:x", "--visibility", "public"],
    ["audit", "--decision", "maybe"],
    ["suppress", "pg_x", "--context", "c", "--expires", "soon"],
    ["--as-model", "m", "--grant", "project:alpha=read,fly", "search"],
    ["--as-model", "m", "--grant", "no-equals-sign", "search"],
])
def test_bad_option_values_are_invalid(pcp: Pcp, argv: list[str]) -> None:
    pcp.error(*argv, code="invalid")
    pcp.human_error(*argv, code="invalid")


def test_malformed_facets_write_nothing(pcp: Pcp) -> None:
    pcp.ok("write", "--namespace", "project:alpha", "--content", "kept")
    pcp.error("write", "--namespace", "project:alpha", "--content", "lost words", "--facets", "{", code="invalid")
    assert pcp.ok("search", "lost", "--mode", "exact")["hits"] == []


def test_unknown_mode_and_projection_are_refused(pcp: Pcp, seeded: dict[str, str]) -> None:
    assert pcp.error("search", "x", "--mode", "telepathy", code="unsupported")
    assert pcp.error("read", seeded["a"], "--projection", "hologram", code="unsupported")


# --- operation errors ----------------------------------------------------------------------------


def test_unknown_id_is_not_found(pcp: Pcp, seeded: dict[str, str]) -> None:
    missing = "pg_" + "0" * 26
    pcp.error("read", missing, code="not_found")
    line = pcp.human_error("read", missing, "rev_" + "1" * 26, code="not_found")
    assert "not_found" in line
    pcp.error("archive", missing, "--reason", "r", code="not_found")
    pcp.error("revise", missing, "--expected", seeded["a_rev"], "--content", "x", code="not_found")
    pcp.error("delete", missing, "--plan", code="not_found")
    pcp.error("link", seeded["a"], "supports", missing, code="not_found")


def test_read_some_ids_is_a_success_with_per_result_errors(pcp: Pcp, seeded: dict[str, str]) -> None:
    doc = pcp.ok("read", seeded["a"], "pg_" + "0" * 26)
    first, second = doc["results"]
    assert first["requested_id"] == seeded["a"] and set(first["revision"]) == ENVELOPE_KEYS
    assert second["error"]["code"] == "not_found"
    out = pcp.human("read", seeded["a"], "pg_" + "0" * 26)
    assert "not_found" in out


def test_stale_expected_revision_is_a_conflict(pcp: Pcp, seeded: dict[str, str]) -> None:
    new = pcp.ok("revise", seeded["a"], "--expected", seeded["a_rev"], "--content", "second")
    message = pcp.error("revise", seeded["a"], "--expected", seeded["a_rev"], "--content", "third", code="conflict")
    assert seeded["a_rev"] in message and new["revision_id"] in message
    pcp.human_error("revise", seeded["a"], "--expected", seeded["a_rev"], "--content", "third", code="conflict")


@pytest.mark.parametrize("source", ["stdin", "file"])
def test_oversized_payload_is_limit_and_writes_nothing(pcp: Pcp, tmp_path: Path, source: str) -> None:
    big = "x" * 1_000_000 + "y"
    if source == "stdin":
        message = pcp.error("write", "--namespace", "project:big", "--stdin", stdin=big, code="limit")
    else:
        path = tmp_path / "big.md"
        path.write_text(big, encoding="utf-8")
        message = pcp.error("write", "--namespace", "project:big", "--file", str(path), code="limit")
    assert "1,000,000" in message or "1000000" in message
    assert pcp.ok("search", "--mode", "temporal", "--status", "active,archived,superseded")["hits"] == []
    assert all(s["page_count"] == 0 for s in pcp.ok("scopes")["scopes"])


def test_unreadable_and_non_utf8_files(pcp: Pcp, tmp_path: Path) -> None:
    line = pcp.human_error("write", "--namespace", "n", "--file", str(tmp_path / "missing.md"), code="invalid")
    assert "missing.md" in line
    bad = tmp_path / "latin1.txt"
    bad.write_bytes(b"caf\xe9")
    pcp.error("write", "--namespace", "n", "--file", str(bad), code="invalid")
    pcp.error("write", "--namespace", "n", "--file", str(tmp_path), code="invalid")  # a directory


def test_database_under_a_regular_file(pcp: Pcp, tmp_path: Path) -> None:
    blocker = tmp_path / "blocker"
    blocker.write_text("I am a file")
    db = str(blocker / "sub" / "s.db")
    pcp.error("write", "--namespace", "n", "--content", "x", db=db, code="invalid")
    pcp.human_error("write", "--namespace", "n", "--content", "x", db=db, code="invalid")
    pcp.error("describe", db=db, code="not_found")  # a command that only reads never creates a store


def test_corrupt_database_file(pcp: Pcp, tmp_path: Path) -> None:
    corrupt = tmp_path / "corrupt.db"
    corrupt.write_bytes(b"this is not an SQLite database, just some bytes\n" * 200)
    pcp.error("scopes", db=str(corrupt), code="invalid")
    pcp.human_error("search", "x", db=str(corrupt), code="invalid")


# --- content sources and write options --------------------------------------------------------------


def test_write_options_reach_the_envelope(pcp: Pcp, seeded: dict[str, str], tmp_path: Path) -> None:
    doc = pcp.ok("write", "--namespace", "project:alpha", "--content", "With everything.",
                 "--media-type", "text/plain", "--title", "Everything", "--facets", '{"keywords": ["a", "b"]}',
                 "--source-ref", "file:///notes/1.md", "--source-ref", "https://example.org/2",
                 "--observed-at", "2026-01-02T03:04:05Z", "--relation", f"supports:{seeded['a']}",
                 "--derived-from", seeded["b_rev"], "--idempotency-key", "everything-1")
    assert PAGE_RE.match(doc["page_id"]) and REV_RE.match(doc["revision_id"]) and doc["created"] is True
    result = pcp.ok("read", doc["page_id"], "--projection", "payload,relations")["results"][0]
    rev = result["revision"]
    assert set(rev) == ENVELOPE_KEYS
    assert rev["payload"] == {"media_type": "text/plain", "content": "With everything."}
    assert rev["facets"]["title"] == "Everything" and rev["facets"]["keywords"] == ["a", "b"]
    assert [r["uri"] for r in rev["source_refs"]] == ["file:///notes/1.md", "https://example.org/2"]
    assert rev["observed_at"] == "2026-01-02T03:04:05.000Z"
    assert rev["created_by"]["actor_type"] == "user"
    derive = [p for p in rev["provenance"] if p["operation"] == "derive"]
    assert derive and derive[0]["input_revision_ids"] == [seeded["b_rev"]]
    outgoing = result["relations"]["outgoing"]
    assert [(r["relation_type"], r["to_page_id"]) for r in outgoing] == [("supports", seeded["a"])]
    again = pcp.ok("write", "--namespace", "project:alpha", "--content", "With everything.",
                   "--media-type", "text/plain", "--title", "Everything", "--facets", '{"keywords": ["a", "b"]}',
                   "--source-ref", "file:///notes/1.md", "--source-ref", "https://example.org/2",
                   "--observed-at", "2026-01-02T03:04:05Z", "--relation", f"supports:{seeded['a']}",
                   "--derived-from", seeded["b_rev"], "--idempotency-key", "everything-1")
    assert again == {**doc, "created": False}
    assert "Unchanged" in pcp.human("write", "--namespace", "project:alpha", "--content", "With everything.",
                                    "--media-type", "text/plain", "--title", "Everything", "--facets",
                                    '{"keywords": ["a", "b"]}', "--source-ref", "file:///notes/1.md",
                                    "--source-ref", "https://example.org/2", "--observed-at",
                                    "2026-01-02T03:04:05Z", "--relation", f"supports:{seeded['a']}",
                                    "--derived-from", seeded["b_rev"], "--idempotency-key", "everything-1")
    pcp.error("write", "--namespace", "project:alpha", "--content", "Different body.",
              "--idempotency-key", "everything-1", code="conflict")


def test_file_and_stdin_content(pcp: Pcp, tmp_path: Path) -> None:
    path = tmp_path / "note.md"
    path.write_text("有限乘积保持紧致性的证明\nfrom a file", encoding="utf-8")
    from_file = pcp.ok("write", "--namespace", "project:cjk", "--file", str(path))
    from_stdin = pcp.ok("write", "--namespace", "project:cjk", "--stdin", stdin="piped 证明 text")
    contents = [r["revision"]["payload"]["content"]
                for r in pcp.ok("read", from_file["page_id"], from_stdin["page_id"])["results"]]
    assert contents == ["有限乘积保持紧致性的证明\nfrom a file", "piped 证明 text"]
    rc, out, _ = pcp.run("read", from_file["page_id"])
    assert "有限乘积" in out  # ensure_ascii=False: UTF-8 as is


def test_revise_carries_over_and_title_keeps_other_facets(pcp: Pcp) -> None:
    first = pcp.ok("write", "--namespace", "project:alpha", "--content", "body one", "--title", "One",
                   "--facets", '{"summary": "s1"}', "--source-ref", "file:///a")
    second = pcp.ok("revise", first["page_id"], "--expected", first["revision_id"], "--title", "Two")
    rev = pcp.ok("read", first["page_id"])["results"][0]["revision"]
    assert rev["revision_id"] == second["revision_id"]
    assert rev["previous_revision_id"] == first["revision_id"]
    assert rev["payload"]["content"] == "body one"
    assert rev["facets"] == {"title": "Two", "summary": "s1"}
    assert [r["uri"] for r in rev["source_refs"]] == ["file:///a"]
    out = pcp.human("revise", first["page_id"], "--expected", second["revision_id"], "--stdin", stdin="body three")
    assert out.startswith("Wrote " + first["page_id"])


def test_ingest_is_idempotent(pcp: Pcp) -> None:
    argv = ["ingest", "--namespace", "conversation:7", "--idempotency-key", "evt-7", "--content", "raw message"]
    first = pcp.ok(*argv)
    assert pcp.ok(*argv) == {**first, "created": False}
    rev = pcp.ok("read", first["page_id"])["results"][0]["revision"]
    assert rev["provenance"][0]["operation"] == "ingest"


# --- lifecycle, suppression, deletion ---------------------------------------------------------------


def test_archive_hides_from_search_and_suppress_is_per_context(pcp: Pcp, seeded: dict[str, str]) -> None:
    def found(*extra: str) -> set[str]:
        return {h["page_id"] for h in pcp.ok("search", "compactness", *extra)["hits"]}

    assert seeded["a"] in found()
    pcp.ok("suppress", seeded["a"], "--context", "task:9")
    assert seeded["a"] not in found("--context", "task:9") and seeded["a"] in found()
    pcp.ok("unsuppress", seeded["a"], "--context", "task:9")
    assert seeded["a"] in found("--context", "task:9")
    assert pcp.ok("archive", seeded["a"], "--reason", "done")["lifecycle_status"] == "archived"
    assert seeded["a"] not in found() and seeded["a"] in found("--status", "archived")
    assert pcp.ok("restore", seeded["a"], "--reason", "back")["lifecycle_status"] == "active"


def test_delete_plan_then_yes(pcp: Pcp, seeded: dict[str, str]) -> None:
    plan = pcp.ok("delete", seeded["a"], "--plan")
    assert plan["page_id"] == seeded["a"] and plan["cascade"] is False
    assert seeded["a_rev"] in json.dumps(plan["revisions"]) and seeded["b"] in json.dumps(plan["derived_pages"])
    assert "Deletion plan" in pcp.human("delete", seeded["a"], "--plan")
    assert pcp.ok("read", seeded["a"])["results"][0]["revision"]["page_id"] == seeded["a"]  # plan erased nothing
    receipt = pcp.ok("delete", seeded["a"], "--reason", "right to erase", "--yes")
    assert receipt["receipt_id"].startswith("del_") and seeded["a"] in receipt["page_ids"]
    pcp.error("read", seeded["a"], code="not_found")
    assert pcp.ok("read", seeded["b"])["results"][0]["revision"]["page_id"] == seeded["b"]  # not cascaded


def test_scope_delete(pcp: Pcp, seeded: dict[str, str]) -> None:
    plan = pcp.ok("scope", "delete", "project:beta", "--plan")
    pages = plan["pages"]
    assert plan["namespace"] == "project:beta" and (pages if isinstance(pages, int) else len(pages)) == 2
    assert "project:beta" in pcp.human("scope", "delete", "project:beta", "--reason", "gone", "--yes")
    assert "project:beta" not in {s["namespace"] for s in pcp.ok("scopes")["scopes"]}
    pcp.error("read", seeded["c"], code="not_found")


def test_scopes_paging(pcp: Pcp) -> None:
    for i in range(3):
        pcp.ok("scope", "create", f"project:p{i}", "--name", f"P{i}")
    first = pcp.ok("scopes", "--limit", "2")
    assert len(first["scopes"]) == 2 and first["next_cursor"]
    assert set(first["scopes"][0]) == SCOPE_KEYS
    rest = pcp.ok("scopes", "--limit", "2", "--cursor", first["next_cursor"])
    names = [s["namespace"] for s in first["scopes"] + rest["scopes"]]
    assert sorted(names) == ["project:p0", "project:p1", "project:p2"]
    assert [s["namespace"] for s in pcp.ok("scopes", "p1")["scopes"]] == ["project:p1"]
    pcp.error("scope", "create", "project:p1", code="conflict")


def test_search_hits_have_the_contract_keys(pcp: Pcp, seeded: dict[str, str]) -> None:
    hits = pcp.ok("search", "compactness", "--scope", "project:alpha")["hits"]
    assert hits and all(set(h) == HIT_KEYS for h in hits)
    assert hits[0]["title"] in {"Tychonoff proof", "Proof notes"}


# --- model clients -------------------------------------------------------------------------------


def test_model_client_with_a_read_only_grant(pcp: Pcp, seeded: dict[str, str]) -> None:
    model = ["--as-model", "claude-desktop", "--grant", "project:alpha=search,read"]
    assert pcp.ok(*model, "search", "compactness")["hits"]
    assert pcp.ok(*model, "read", seeded["a"])["results"][0]["revision"]["page_id"] == seeded["a"]
    pcp.error(*model, "write", "--namespace", "project:alpha", "--content", "sneaky", code="forbidden")
    pcp.human_error(*model, "write", "--namespace", "project:alpha", "--content", "sneaky", code="forbidden")
    pcp.error(*model, "delete", seeded["a"], "--reason", "r", "--yes", code="forbidden")
    pcp.error(*model, "delete", seeded["a"], "--plan", code="forbidden")
    pcp.error(*model, "tombstone", seeded["a"], "--reason", "r", code="forbidden")
    pcp.error(*model, "search", "x", "--scope", "project:beta", code="forbidden")
    assert pcp.ok("search", "sneaky", "--mode", "exact")["hits"] == []
    assert pcp.ok("read", seeded["a"])["results"][0]["revision"]["lifecycle_status"] == "active"
    denied = pcp.ok("audit", "--decision", "denied")["events"]
    assert any(e["principal_id"] == "claude-desktop" for e in denied)
    # even a grant naming delete does not let a model delete
    pcp.error("--as-model", "m", "--grant", "*=delete,read", "delete", seeded["a"], "--reason", "r", "--yes",
              code="forbidden")
    assert pcp.ok("--as-model", "m", "describe")["protocol_version"] == "0.4.0-draft"  # needs no permission


# --- the last line of defence ---------------------------------------------------------------------


def test_unexpected_exception_is_one_line(pcp: Pcp, monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    import store

    def boom(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("kaboom\nsecond line")

    monkeypatch.setattr(store.Store, "open", boom)
    rc, out, err = pcp.run("describe", json_out=False)
    assert rc == 1 and out == "" and err == "pcp: internal error: RuntimeError: kaboom second line\n"
    rc, out, _ = pcp.run("describe")
    assert rc == 1 and json.loads(out)["error"]["code"] == "internal"

    def interrupted(*args: Any, **kwargs: Any) -> Any:
        raise KeyboardInterrupt

    monkeypatch.setattr(store.Store, "open", interrupted)
    rc, out, err = pcp.run("describe", json_out=False)
    assert rc == 130 and err == "pcp: interrupted\n"


def test_pcp_db_environment_variable(pcp: Pcp, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "from-env" / "env.db"
    monkeypatch.setenv("PCP_DB", str(target))
    assert cli.main(["--json", "write", "--namespace", "n", "--content", "via env"]) == 0
    assert one_document(capsys.readouterr().out)["created"] is True
    assert target.exists()


# --- a few real processes -------------------------------------------------------------------------


def _proc(*args: str, stdin: str | None = None, env_db: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "PCP_DB"}
    env["PYTHONIOENCODING"] = "utf-8"
    if env_db:
        env["PCP_DB"] = env_db
    done = subprocess.run([sys.executable, "-m", "pcp_tui.cli", *args], input=stdin, capture_output=True,
                          text=True, encoding="utf-8", env=env, cwd=REPO, timeout=120)
    assert "Traceback" not in done.stdout and "Traceback" not in done.stderr, done.stderr
    return done


def test_subprocess_round_trip(tmp_path: Path) -> None:
    db = str(tmp_path / "s.db")
    assert _proc().returncode == 0
    written = _proc("--db", db, "--json", "write", "--namespace", "project:p", "--stdin", stdin="紧致性 via a pipe")
    assert written.returncode == 0 and written.stderr == ""
    page = one_document(written.stdout)["page_id"]
    read = _proc("--db", db, "--json", "read", page)
    assert read.returncode == 0
    assert one_document(read.stdout)["results"][0]["revision"]["payload"]["content"] == "紧致性 via a pipe"
    human = _proc("--db", db, "search", "紧致性")
    assert human.returncode == 0 and "project:p" in human.stdout


def test_subprocess_exit_codes(tmp_path: Path) -> None:
    db = str(tmp_path / "s.db")
    usage = _proc("--db", db, "--json", "frobnicate")
    assert usage.returncode == 2 and json.loads(usage.stdout)["error"]["code"] == "usage"
    plain_usage = _proc("--db", db, "frobnicate")
    assert plain_usage.returncode == 2 and plain_usage.stdout == "" and "usage:" in plain_usage.stderr
    facets = _proc("--db", db, "--json", "write", "--namespace", "n", "--content", "x", "--facets", "{oops")
    assert facets.returncode == 1 and json.loads(facets.stdout)["error"]["code"] == "invalid"
    missing = _proc("--db", db, "read", "pg_" + "0" * 26)
    assert missing.returncode == 1 and missing.stdout == "" and len(missing.stderr.splitlines()) == 1
    assert missing.stderr.endswith("(not_found)\n")


def test_subprocess_oversized_stdin_and_bad_paths(tmp_path: Path) -> None:
    db = str(tmp_path / "s.db")
    big = _proc("--db", db, "--json", "write", "--namespace", "n", "--stdin", stdin="z" * 1_000_001)
    assert big.returncode == 1 and json.loads(big.stdout)["error"]["code"] == "limit"
    empty = _proc("--db", db, "--json", "search", "--mode", "temporal")
    assert empty.returncode == 0 and json.loads(empty.stdout)["hits"] == []
    blocker = tmp_path / "plain-file"
    blocker.write_text("x")
    under = _proc("--db", str(blocker / "dir" / "s.db"), "scopes")
    assert under.returncode == 1 and under.stdout == "" and len(under.stderr.splitlines()) == 1
    assert under.stderr.startswith("pcp: error: ")
    corrupt = tmp_path / "corrupt.db"
    corrupt.write_bytes(os.urandom(8192))
    bad = _proc("--db", str(corrupt), "doctor")
    assert bad.returncode == 1 and bad.stdout == "" and len(bad.stderr.splitlines()) == 1
    via_env = _proc("--json", "describe", env_db=str(corrupt))
    assert via_env.returncode == 1 and json.loads(via_env.stdout)["error"]["code"] == "invalid"


def test_corrupt_sqlite_header_with_garbage_pages(tmp_path: Path) -> None:
    """A file that starts like SQLite but is damaged inside still gives one line, never a traceback."""
    path = tmp_path / "damaged.db"
    con = sqlite3.connect(path)
    con.execute("create table t(x)")
    con.executemany("insert into t values (?)", [("y" * 500,) for _ in range(50)])
    con.commit()
    con.close()
    data = bytearray(path.read_bytes())
    data[100:4096] = os.urandom(4096 - 100)
    path.write_bytes(bytes(data))
    done = _proc("--db", str(path), "scopes")
    assert done.returncode == 1 and done.stdout == "" and len(done.stderr.splitlines()) == 1
