"""`pcp import` and `pcp export` end to end through the command line."""

import json
from pathlib import Path

from pcp_tui.cli import main

EXPORTS = Path(__file__).resolve().parents[1] / "data" / "exports"  # vendored (tests/data/exports/SOURCES.md)


def run(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_import_chatgpt_then_reimport_adds_nothing(tmp_path, capsys):
    db = str(tmp_path / "s.db")
    src = str(EXPORTS / "chatgpt-danny-avila-LibreChat-1.json")
    code, out, _ = run(capsys, "--db", db, "--json", "import", "chatgpt", src)
    first = json.loads(out)
    assert code == 0 and first["conversations"] == 1 and first["messages"] == 11 and first["created"] == 12
    code, out, _ = run(capsys, "--db", db, "--json", "import", "chatgpt", src)
    again = json.loads(out)
    assert code == 0 and again["created"] == 0 and again["unchanged"] == 12


def test_malformed_json_is_one_line_naming_the_position_and_writes_nothing(tmp_path, capsys):
    db = str(tmp_path / "s.db")
    bad = tmp_path / "conversations.json"
    bad.write_text('[{"title": "x", "mapping": {]', encoding="utf-8")
    code, out, err = run(capsys, "--db", db, "import", "chatgpt", str(bad))
    assert code == 1 and out == ""
    assert len(err.strip().splitlines()) == 1 and "line 1, column" in err and "conversations.json" in err
    code, out, _ = run(capsys, "--db", db, "--json", "search", "")
    assert json.loads(out)["hits"] == []


def test_export_then_import_export_round_trips(tmp_path, capsys):
    db, other = str(tmp_path / "s.db"), str(tmp_path / "t.db")
    run(capsys, "--db", db, "write", "--namespace", "project:a", "--content", "Decision: ship on Friday")
    out_file = str(tmp_path / "all.jsonl")
    code, out, _ = run(capsys, "--db", db, "--json", "export", "--out", out_file)
    exported = json.loads(out)
    assert code == 0 and exported["counts"]["pages"] == 1 and Path(out_file).exists()
    code, out, _ = run(capsys, "--db", other, "--json", "import", "export", out_file)
    assert code == 0 and json.loads(out)["added"]["page"] == 1
    code, out, _ = run(capsys, "--db", other, "--json", "search", "friday")
    assert [h["title"] for h in json.loads(out)["hits"]] == ["Decision: ship on Friday"]


def test_import_of_an_unknown_source_is_a_bad_value(tmp_path, capsys):
    code, out, err = run(capsys, "--db", str(tmp_path / "s.db"), "--json", "import", "gemini", "x.json")
    assert code == 1 and json.loads(out)["error"]["code"] == "invalid"


def test_import_claude_code_with_and_without_tools(tmp_path, capsys):
    src = str(Path(__file__).resolve().parents[1] / "data" / "agents" / "claude-code" / "kfischer-okarin")
    db = str(tmp_path / "s.db")
    code, out, _ = run(capsys, "--db", db, "--json", "import", "claude-code", src)
    assert code == 0
    first = json.loads(out)
    assert first["source"] == "claude-code" and first["created"] > 0
    code, out, _ = run(capsys, "--db", db, "--json", "import", "claude-code", src, "--with-tools")
    again = json.loads(out)
    assert code == 0 and again["revised"] == 0 and again["created"] > 0  # only the tool pages are new
    code, _, err = run(capsys, "--db", db, "import", "claude-code", src, "--namespace", "x")
    assert code != 0 and "--namespace" in err
    code, _, err = run(capsys, "--db", db, "import", "chatgpt")
    assert code != 0 and "PATH" in err


def test_import_codex_from_codex_home(tmp_path, capsys, monkeypatch):
    home = Path(__file__).resolve().parents[1] / "data" / "agents" / "codex" / "codemie-code"
    monkeypatch.setenv("CODEX_HOME", str(home))
    db = str(tmp_path / "s.db")
    code, out, _ = run(capsys, "--db", db, "--json", "import", "codex")  # no PATH: $CODEX_HOME
    assert code == 0
    first = json.loads(out)
    assert (first["source"], first["conversations"], first["messages"]) == ("codex", 3, 22)
    code, out, _ = run(capsys, "--db", db, "--json", "import", "codex", str(home))
    assert code == 0 and json.loads(out)["created"] == 0


def test_import_gemini(tmp_path, capsys):
    src = str(Path(__file__).resolve().parents[1] / "data" / "agents" / "gemini")
    db = str(tmp_path / "s.db")
    code, out, _ = run(capsys, "--db", db, "--json", "import", "gemini", src)
    assert code == 0
    report = json.loads(out)
    # codemie-code's two sessions (the derived .jsonl replays one of them), entireio-cli's two and the derived one
    # with injected turns
    assert (report["source"], report["conversations"]) == ("gemini", 5)
    assert any("rewind" in s["item"] for s in report["skipped"])


def test_import_shows_the_report_and_import_report_shows_it_again(tmp_path, capsys):
    db = str(tmp_path / "s.db")
    src = str(EXPORTS / "chatgpt-danny-avila-LibreChat-3.json")
    code, out, _ = run(capsys, "--db", db, "import", "chatgpt", src)
    assert code == 0 and "Report kept: pcp import-report imp_" in out
    assert "created" in out and "Corrupted entry" in out
    import_id = out.split("pcp import-report ")[1].split()[0]
    code, out, _ = run(capsys, "--db", db, "--json", "import-report", "--last")
    last = json.loads(out)
    assert code == 0 and last["import_id"] == import_id and len(last["entries"]) == 4
    code, out, _ = run(capsys, "--db", db, "import-report", import_id)
    assert code == 0 and import_id in out and "chatgpt-danny-avila-LibreChat-3.json" in out
    code, _, err = run(capsys, "--db", db, "import-report", "imp_01JZZZZZZZZZZZZZZZZZZZZZZZ")
    assert code != 0


LOOK_ALIKE = "project:\u0430lpha"  # a Cyrillic а: reads as project:alpha


def _export_with_a_look_alike(tmp_path, capsys) -> tuple[str, str]:
    """The owner's store `mine` holds project:alpha; an export of the same owner carries project:аlpha too (made,
    as a look-alike can only be, with the owner's confirmation in the store it came from)."""
    first, mine = str(tmp_path / "first.db"), str(tmp_path / "mine.db")
    run(capsys, "--db", first, "write", "--namespace", "project:alpha", "--content", "The owner's alpha notes.")
    base = str(tmp_path / "base.jsonl")
    assert run(capsys, "--db", first, "export", "--out", base)[0] == 0
    assert run(capsys, "--db", mine, "import", "export", base)[0] == 0  # the same owner on a second store
    assert run(capsys, "--db", first, "scope", "create", LOOK_ALIKE, "--confirm-lookalike")[0] == 0
    run(capsys, "--db", first, "write", "--namespace", LOOK_ALIKE, "--content", "Notes that pose as alpha's.")
    odd = str(tmp_path / "odd.jsonl")
    assert run(capsys, "--db", first, "export", "--out", odd)[0] == 0
    return mine, odd


def test_an_export_scope_that_reads_like_one_of_the_store_needs_the_owners_confirmation(tmp_path, capsys):
    """Issue 30, item 5: scopes that `import export` brings were not look-alike checked (`doctor` named them)."""
    mine, odd = _export_with_a_look_alike(tmp_path, capsys)
    before = Path(mine).read_bytes()
    code, out, err = run(capsys, "--db", mine, "import", "export", odd)
    assert code != 0 and out == "" and len(err.strip().splitlines()) == 1, err
    assert "project:\\u0430lpha reads like this store's scope project:alpha" in err and "--confirm-lookalike" in err
    code, out, _ = run(capsys, "--db", mine, "--json", "scopes")
    assert [s["namespace"] for s in json.loads(out)["scopes"]] == ["project:alpha"]  # nothing was imported
    code, out, err = run(capsys, "--db", mine, "import", "chatgpt", str(EXPORTS / "chatgpt-danny-avila-LibreChat-1.json"),
                         "--confirm-lookalike")
    assert code != 0 and "--confirm-lookalike applies to `import export` only" in err
    code, out, _ = run(capsys, "--db", mine, "--json", "import", "export", odd, "--confirm-lookalike")
    assert code == 0 and json.loads(out)["added"]["page"] == 1
    code, out, _ = run(capsys, "--db", mine, "--json", "search", "pose")
    assert [h["namespace"] for h in json.loads(out)["hits"]] == [LOOK_ALIKE]
    assert before != Path(mine).read_bytes()


def test_a_restore_with_helper_processes_gives_back_every_line_of_real_chats(tmp_path, capsys, monkeypatch):
    """Real chat exports in through `pcp import`, `pcp export`, then `pcp import export` into an empty store with
    the restore's helper processes doing the rows (issue 31), and `pcp export` again: the same lines, and the
    chats' words found."""
    import store.restore as restore
    import store.restore_file as restore_file

    monkeypatch.setenv("PCP_RESTORE_HELPERS", "1")
    monkeypatch.setattr(restore_file, "HELPERS_MIN_BYTES", 0)  # (these files are small)
    monkeypatch.setattr(restore_file, "TASK_PAGES", 5)
    helped: list[int] = []
    as_rows = restore.Restore._rows
    monkeypatch.setattr(restore.Restore, "_rows", lambda self, rows: (helped.append(len(rows.pages)),
                                                                       as_rows(self, rows))[1])
    started: list[object] = []
    start = restore_file.Helpers.start.__func__  # type: ignore[attr-defined]
    monkeypatch.setattr(restore_file.Helpers, "start", classmethod(
        lambda cls, *a, **kw: (started.append(start(cls, *a, **kw)), started[-1])[1]))
    db, other = str(tmp_path / "s.db"), str(tmp_path / "t.db")
    for kind, source in (("chatgpt", "chatgpt-danny-avila-LibreChat-1.json"), ("chatgpt", "chatgpt-Sinity-polylogue-1.json"),
                         ("claude", "claude-simonw-claude-to-sqlite-1.json")):
        assert run(capsys, "--db", db, "import", kind, str(EXPORTS / source))[0] == 0
    first, again = tmp_path / "first.jsonl", tmp_path / "again.jsonl"
    assert run(capsys, "--db", db, "export", "--out", str(first))[0] == 0
    assert run(capsys, "--db", other, "import", "export", str(first))[0] == 0
    assert [h is not None for h in started] == [True] and sum(helped) >= 10  # helper processes made the rows
    assert run(capsys, "--db", other, "export", "--out", str(again))[0] == 0
    assert again.read_text(encoding="utf-8").splitlines()[1:-1] == first.read_text(encoding="utf-8").splitlines()[1:-1]
    code, out, _ = run(capsys, "--db", other, "--json", "search", "Assist user with summary")
    assert code == 0 and "Assist user with summary" in [h["title"] for h in json.loads(out)["hits"]]


def _imported_with_and_without_the_helper(tmp_path, capsys, monkeypatch, imports: list[list[str]]):
    """Each `pcp import` of `imports` run into two stores of one salt: one.db in one process, helped.db with the
    import's helper process planning every item (issue 31; forced on, for these small files; every answer waited
    for). Each store exported to <name>.jsonl. The helpers started, and the export lines of one.db, both mapped
    (minted ids and store times); the test compares helped.jsonl's."""
    import shutil

    from export_helpers import mapped_export_lines
    from store import Store, import_helper

    monkeypatch.setattr(import_helper, "HELPER_FROM_CHARS", 0)
    monkeypatch.setattr(import_helper, "WAIT", True)  # (every item waited for: the helper plans them all)
    started: list[import_helper.ImportHelper] = []
    start = import_helper.start
    monkeypatch.setattr(import_helper, "start", lambda *a: (started.append(start(*a)), started[-1])[1])
    with Store.open(tmp_path / "empty.db"):
        pass  # (both stores of one salt: long words are sealed with the store's key)
    for name, helper in (("one", "0"), ("helped", "1")):
        db = tmp_path / f"{name}.db"
        shutil.copyfile(tmp_path / "empty.db", db)
        monkeypatch.setenv(import_helper.ENV, helper)
        for args in imports:
            assert run(capsys, "--db", str(db), "import", *args)[0] == 0
        assert run(capsys, "--db", str(db), "export", "--out", str(tmp_path / f"{name}.jsonl"))[0] == 0
    return [h for h in started if h is not None], mapped_export_lines(tmp_path / "one.jsonl")


def test_pcp_import_with_the_planning_helper_writes_what_one_process_writes(tmp_path, capsys, monkeypatch):
    """Real ChatGPT exports in through `pcp import chatgpt` twice: once with the chat import's helper process
    planning every conversation, once in one process. Both stores export the same lines, and a message's words
    are found."""
    from export_helpers import mapped_export_lines

    sources = ["chatgpt-danny-avila-LibreChat-1.json", "chatgpt-Sinity-polylogue-1.json",
               "chatgpt-0xsalt-chatgpt_conversation_extractor-1.json"]
    helped, lines = _imported_with_and_without_the_helper(tmp_path, capsys, monkeypatch,
                                                          [["chatgpt", str(EXPORTS / source)] for source in sources])
    assert len(helped) == len(sources) and all(h.helped > 0 and h.planned_here == 0 for h in helped)
    assert all(h.exited() for h in helped)
    assert len(lines) > 50 and mapped_export_lines(tmp_path / "helped.jsonl") == lines
    code, out, _ = run(capsys, "--db", str(tmp_path / "helped.db"), "--json", "search", "Assist user with summary")
    assert code == 0 and "Assist user with summary" in [h["title"] for h in json.loads(out)["hits"]]


def test_pcp_import_claude_code_with_the_planning_helper_writes_what_one_process_writes(tmp_path, capsys, monkeypatch):
    """Every vendored real Claude Code transcript in through `pcp import claude-code` twice: once with the helper
    process reading the files and planning every session, once in one process. Both stores export the same lines,
    and a prompt's words are found."""
    from export_helpers import mapped_export_lines

    source = Path(__file__).resolve().parents[1] / "data" / "agents" / "claude-code"
    helped, lines = _imported_with_and_without_the_helper(tmp_path, capsys, monkeypatch,
                                                          [["claude-code", str(source)]])
    assert len(helped) == 1 and helped[0].helped > 10 and helped[0].planned_here == 0 and helped[0].exited()
    assert len(lines) > 100 and mapped_export_lines(tmp_path / "helped.jsonl") == lines
    code, out, _ = run(capsys, "--db", str(tmp_path / "helped.db"), "--json", "search", "file creation editing")
    assert code == 0 and json.loads(out)["hits"]
