"""`pcp bundle / copy / handoffs / verify` (shared spec cli.md, handoff.md "JSON of the commands")."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pyperclip
import pytest

from handoff_helpers import P1, P2, P3, P4, write
from pcp_tui import cli, clipboard

BUNDLE_KEYS = {"text", "digest", "bytes", "tokens", "tokens_exact", "entries", "cut", "warnings"}
COPY_KEYS = {"handoff_id", "label", "digest", "continuation_of", "text", "file", "clipboard", "bytes", "tokens",
             "entries", "warnings"}
ENTRY_KEYS = {"n", "page_id", "revision_id", "namespace", "detail", "bytes", "tokens"}


@pytest.fixture
def pcp(fixed_store, db_path, capsys, monkeypatch):
    """Run `pcp --db <fixed store> ...` in-process; returns (exit status, stdout, stderr)."""

    def fail(text):
        raise pyperclip.PyperclipException("Pyperclip could not find a copy/paste mechanism for your system.")

    monkeypatch.setattr(pyperclip, "copy", fail)  # a machine without a clipboard (CI, SSH)
    monkeypatch.setattr(clipboard, "TTY_PATH", str(db_path.parent / "no-tty"))

    def run(*args: str, stdin: str | None = None) -> tuple[int, str, str]:
        if stdin is not None:
            monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin.encode()), encoding="utf-8"))
        capsys.readouterr()
        rc = cli.main(["--db", str(db_path), *args])
        out, err = capsys.readouterr()
        assert "Traceback" not in out + err
        if "--json" in args:
            assert err == ""
            json.loads(out)
        return rc, out, err

    return run


def test_bundle_json_has_exactly_the_documented_shape(pcp, fixed_store):
    rc, out, _ = pcp("--json", "bundle", P1, P2, "--max-tokens", "100000")
    doc = json.loads(out)
    assert rc == 0 and set(doc) == BUNDLE_KEYS
    assert all(set(e) == ENTRY_KEYS for e in doc["entries"]) and doc["tokens_exact"] is False
    assert doc["text"] == fixed_store.bundle([P1, P2])["text"]


def test_bundle_prints_the_text_for_people_with_sizes_on_stderr(pcp, fixed_store):
    rc, out, err = pcp("bundle", P1, P2)
    assert rc == 0 and out == fixed_store.bundle([P1, P2])["text"]
    assert "2 entries" in err and "tokens (estimated)" in err


def test_bundle_out_writes_the_file(pcp, fixed_store, tmp_path):
    target = tmp_path / "bundle.md"
    rc, out, err = pcp("bundle", P1, "--out", str(target))
    assert rc == 0 and out == "" and str(target) in err
    assert target.read_text(encoding="utf-8") == fixed_store.bundle([P1])["text"]


def test_bundle_warnings_and_cuts_are_listed_for_people(pcp, fixed_store):
    other = write(fixed_store, "user:prefs", "token = \"abcd1234efgh5678\"")
    rc, out, err = pcp("bundle", P1, P4, other["page_id"], "--max-tokens", "700")
    assert rc == 0
    assert "warning: This bundle mixes" in err and "warning: Entry 3" in err and "abcd1234efgh5678" not in err
    assert "cut: entry 2" in err


def test_an_empty_selection_is_one_line_and_exit_1(pcp):
    rc, out, err = pcp("bundle")
    assert rc == 1 and out == "" and err.count("\n") == 1 and "Nothing to bundle" in err
    rc, out, _ = pcp("--json", "copy", "--label", "x", "--query", "zzzznothing")
    assert rc == 1 and json.loads(out)["error"]["code"] == "invalid"


def test_copy_json_shape_and_honest_file_only_clipboard(pcp, db_path):
    rc, out, _ = pcp("--json", "copy", P1, P2, "--label", "Claude: ch3")
    doc = json.loads(out)
    assert rc == 0 and set(doc) == COPY_KEYS
    assert doc["clipboard"] == "file-only" and doc["continuation_of"] is None
    assert Path(doc["file"]).parent == db_path.parent / "handoffs"
    assert Path(doc["file"]).read_text(encoding="utf-8") == doc["text"]
    assert "\x1b]52" not in out


def test_copy_for_people_says_it_is_not_on_the_clipboard(pcp):
    rc, out, err = pcp("copy", P1, "--label", "chat")
    assert rc == 0
    assert out.startswith("Not on the clipboard") and "pyperclip found no clipboard" in out and "file:" in out


def test_copy_uses_osc52_only_on_a_terminal(pcp, monkeypatch):
    written = []

    class Tty(io.BytesIO):
        def close(self):
            written.append(self.getvalue())

    monkeypatch.setattr(clipboard, "open_tty", lambda: Tty())
    rc, out, _ = pcp("--json", "copy", P1, "--label", "chat")
    doc = json.loads(out)
    assert doc["clipboard"] == "osc52" and written and written[0].startswith(b"\x1b]52;c;")
    assert "\x1b" not in out


def test_copy_continue_and_handoffs_and_verify(pcp, tmp_path):
    _, out, _ = pcp("--json", "copy", P1, "--label", "chat")
    first = json.loads(out)
    rc, out, _ = pcp("--json", "copy", "--continue", "chat", P2, P3)
    second = json.loads(out)
    assert rc == 0 and set(second) == COPY_KEYS and second["continuation_of"] == first["digest"]
    assert [e["n"] for e in second["entries"]] == [2, 3]
    rc, out, _ = pcp("--json", "handoffs", "--page", P2)
    listing = json.loads(out)
    assert [h["handoff_id"] for h in listing["handoffs"]] == [second["handoff_id"]]
    assert set(listing) == {"handoffs", "next_cursor"}
    rc, out, _ = pcp("handoffs", "--label", "chat")
    assert rc == 0 and "chat" in out and "continuation" in out
    pasted = tmp_path / "pasted.md"
    pasted.write_text(second["text"], encoding="utf-8")
    rc, out, _ = pcp("--json", "verify", str(pasted))
    doc = json.loads(out)
    assert rc == 0 and doc["digest_ok"] is True and doc["kind"] == "continuation"
    assert set(doc) == {"digest_ok", "digest", "origin", "kind", "entries"} and doc["origin"] == "this_store"
    assert [e["state"] for e in doc["entries"]] == ["current"] * 3
    rc, out, _ = pcp("verify", "-", stdin=first["text"])
    assert rc == 0 and out.startswith("Digest OK")


def test_verify_exits_1_when_the_digest_does_not_match(pcp, tmp_path):
    _, out, _ = pcp("--json", "bundle", P1, P2)
    text = json.loads(out)["text"].replace("Compactness", "Compactnesz")
    rc, out, _ = pcp("--json", "verify", "-", stdin=text)
    assert rc == 1 and json.loads(out)["digest_ok"] is False
    rc, out, err = pcp("verify", "-", stdin=text)
    assert rc == 1 and out.startswith("Digest does not match")
    rc, out, err = pcp("verify", str(tmp_path / "missing.md"))
    assert rc == 1 and "cannot read" in err


def test_strict_refuses_with_exit_1_and_copies_nothing(pcp, fixed_store, db_path):
    risky = write(fixed_store, "project:thesis", "ghp_" + "x1" * 20)
    rc, out, _ = pcp("--json", "copy", P1, risky["page_id"], "--label", "chat", "--strict")
    err = json.loads(out)["error"]
    assert rc == 1 and err["code"] == "invalid" and "Entry 2" in err["message"]
    assert "x1x1x1x1" not in err["message"]
    assert not (db_path.parent / "handoffs").exists() or not any((db_path.parent / "handoffs").iterdir())
    rc, out, err_text = pcp("copy", P1, risky["page_id"], "--label", "chat")
    assert rc == 0 and "warning: Entry 2" in err_text


def test_model_clients_are_forbidden(pcp):
    for args in (["bundle", P1], ["copy", P1, "--label", "m"], ["handoffs"]):
        rc, out, _ = pcp("--json", "--as-model", "m1", "--grant", "*=read,search,export", *args)
        assert rc == 1 and json.loads(out)["error"]["code"] == "forbidden"


def test_label_and_continue_are_exclusive_and_one_is_required(pcp, db_path):
    for args in (["copy", P1], ["copy", P1, "--label", "a", "--continue", "b"],
                 ["copy", "--continue", "a", "--scope", "project:thesis"]):
        rc, out, err = pcp(*args)
        assert rc == 2 and out == "" and "usage:" in err
