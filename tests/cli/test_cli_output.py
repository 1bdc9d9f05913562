"""Issue 33: help for every option with an example per command, output that reads at 80 columns and in a pipe,
`pcp list`, a clamped --limit said out loud, and an import that found nothing saying where it looked."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import click
import pytest
from rich.cells import cell_len

from pcp_tui import cli

REPO = Path(__file__).resolve().parents[2]
LONG_NS = "agent:claude-code:users-someone-projects-a-rather-long-project:0d3b22c1-ba90-4fd3-b8d2-056ffc626725"


def every_command(group: click.Group, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], click.Command]]:
    found: list[tuple[tuple[str, ...], click.Command]] = []
    ctx = click.Context(group, info_name="pcp")
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        assert command is not None
        found.append(((*path, name), command))
        if isinstance(command, click.Group):
            found.extend(every_command(command, (*path, name)))
    return found


def test_every_command_and_option_has_help_and_every_command_an_example(capsys: pytest.CaptureFixture[str]) -> None:
    commands = every_command(cli.pcp)
    assert len(commands) >= 35
    missing = []
    for path, command in commands:
        if not (command.help or "").strip():
            missing.append(f"pcp {' '.join(path)}: no help text")
        for param in command.params:
            if isinstance(param, click.Option) and not param.hidden and not (param.help or "").strip():
                missing.append(f"pcp {' '.join(path)} {param.opts[0]}: no help text")
        assert cli.main([*path, "--help"]) == 0
        shown = capsys.readouterr().out
        assert shown.startswith(f"usage: pcp {' '.join(path)}"), shown
        assert "Example:" in shown and "pcp" in shown.split("Example:")[1], f"pcp {' '.join(path)} --help: no example"
    assert not missing, "\n".join(missing)


def pcp(db: Path, *args: str, columns: int | None = None, tty: bool = False) -> subprocess.CompletedProcess[str]:
    """`pcp` in a child, its stdout a pipe; with `columns`, as a terminal that wide would render it."""
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "PCP_DB")}
    if columns:
        env["COLUMNS"] = str(columns)
    return subprocess.run([sys.executable, "-m", "pcp_tui.cli", "--db", str(db), *args], capture_output=True,
                          text=True, cwd=REPO, env=env, timeout=120)


@pytest.fixture
def filled(tmp_path: Path) -> Path:
    from store import Store

    db = tmp_path / "s.db"
    with Store.open(db) as st:
        for ns, title in ((LONG_NS, "A long agent session about the harbor ferry timetable"),
                          ("project:alpha", "Ferry times"), ("conversation:chatgpt:abc", "Harbor notes")):
            st.create_scope(ns, display_name=title)
            for day in range(1, 4):
                st.write_page(ns, content=f"# {title} {day}\n\nThe ferry leaves the harbor at 7:{40 + day} on "
                                          f"weekdays, and later on Sundays: a long line of words about it.",
                              media_type="text/markdown", observed_at=f"2026-01-0{day}T09:00:00Z")
    return db


def test_scopes_at_80_columns_keep_every_namespace_whole_and_a_pipe_gets_one_line_each(filled: Path) -> None:
    shown = pcp(filled, "scopes", columns=80).stdout.splitlines()
    assert LONG_NS in shown  # alone and whole on its line: copied, it is the namespace
    assert all(cell_len(line) <= 80 for line in shown if line != LONG_NS), shown
    assert "…" not in "\n".join(shown)
    piped = pcp(filled, "scopes").stdout.splitlines()
    assert len(piped) == 3 and all(len(line.split("\t")) == 6 for line in piped), piped
    assert {line.split("\t")[0] for line in piped} == {LONG_NS, "project:alpha", "conversation:chatgpt:abc"}


def test_search_at_80_columns_gives_the_snippet_the_width_and_a_pipe_one_line_a_hit(filled: Path) -> None:
    shown = pcp(filled, "search", "ferry harbor weekdays", columns=80).stdout.splitlines()
    assert all(cell_len(line) <= 80 for line in shown), shown
    snippets = [line for line in shown if "weekdays" in line]
    assert snippets and all(cell_len(line.strip()) >= 40 for line in snippets), shown  # not squeezed to a column
    wide = pcp(filled, "search", "ferry harbor weekdays", columns=160).stdout
    assert "Snippet" in wide and "Date" in wide  # a wide terminal still gets the table
    piped = pcp(filled, "search", "ferry harbor weekdays").stdout.splitlines()
    assert len(piped) == 9 and all(line.startswith("pg_") and len(line.split("\t")) == 6 for line in piped), piped
    assert all("\n" not in line and "│" not in line for line in piped)


def test_list_pages_through_pages_oldest_first_and_in_a_pipe(filled: Path) -> None:
    newest = json.loads(pcp(filled, "--json", "list", "--scope", "project:alpha").stdout)
    oldest = json.loads(pcp(filled, "--json", "list", "--scope", "project:alpha", "--sort", "oldest").stdout)
    assert [h["date"][:10] for h in newest["hits"]] == ["2026-01-03", "2026-01-02", "2026-01-01"]
    assert [h["page_id"] for h in oldest["hits"]] == [h["page_id"] for h in reversed(newest["hits"])]
    assert all("score" not in h and {"page_id", "revision_id", "namespace", "title", "date"} <= set(h)
               for h in newest["hits"])
    first = json.loads(pcp(filled, "--json", "list", "--limit", "4").stdout)
    rest = json.loads(pcp(filled, "--json", "list", "--limit", "4", "--cursor", first["next_cursor"]).stdout)
    ids = [h["page_id"] for h in first["hits"] + rest["hits"]]
    assert len(ids) == len(set(ids)) == 8
    shown = pcp(filled, "list", columns=80).stdout.splitlines()
    assert all(cell_len(line) <= 80 for line in shown if LONG_NS not in line), shown
    piped = pcp(filled, "list").stdout.splitlines()
    assert len(piped) == 9 and all(len(line.split("\t")) == 5 for line in piped)


def test_a_limit_over_the_maximum_is_clamped_with_a_note_for_people_only(filled: Path) -> None:
    human = pcp(filled, "list", "--limit", "1000", columns=100)
    assert human.returncode == 0 and "--limit 1000 is more than 100" in human.stderr
    machine = pcp(filled, "--json", "list", "--limit", "1000")
    assert machine.returncode == 0 and machine.stderr == "" and len(json.loads(machine.stdout)["hits"]) == 9


def test_an_import_that_found_nothing_says_so_and_where_it_looked(tmp_path: Path) -> None:
    empty = tmp_path / "projects"
    empty.mkdir()
    done = pcp(tmp_path / "s.db", "import", "claude-code", str(empty), columns=80)
    assert done.returncode == 0, done.stderr
    assert f"Nothing to import: no claude-code history found in {empty}" in " ".join(done.stdout.split())


def test_an_import_report_keeps_each_line_whole_in_a_pipe(tmp_path: Path) -> None:
    export = REPO / "tests" / "data" / "exports" / "chatgpt-danny-avila-LibreChat-3.json"
    done = pcp(tmp_path / "s.db", "import", "chatgpt", str(export))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    created = [line for line in lines if line.strip().startswith("created")]
    assert created and all(line.rstrip().endswith(")") or "]" in line for line in created), lines
    assert not any(line.strip() in ("created)", "created") for line in lines)  # no count cut from its line
    assert any(line.startswith("Report kept: pcp import-report imp_") for line in lines)


@pytest.mark.parametrize("argv", [["bundle", "--query", "ferry", "--out"],
                                  ["export", "--format", "memory-profile", "--yes", "--out"]])
def test_out_never_writes_through_a_link(filled: Path, tmp_path: Path, argv: list[str]) -> None:
    """`--out` naming a link to a file elsewhere wrote over that file (and made it 0600): it is refused now, and
    the file the link points to keeps its bytes and its mode."""
    if argv[0] == "export":  # a memory to export
        memory = tmp_path / "memory.txt"
        memory.write_text("I prefer tea to coffee.\nI live near the harbor.\n")
        assert pcp(filled, "import", "memory", str(memory), "--from", "chatgpt").returncode == 0
    elsewhere = tmp_path / "elsewhere.txt"
    elsewhere.write_text("someone else's file\n")
    elsewhere.chmod(0o644)
    link = tmp_path / "out.md"
    link.symlink_to(elsewhere)
    done = pcp(filled, *argv, str(link))
    assert done.returncode == 1 and "is a link" in done.stderr and "Nothing was written" in done.stderr, done
    assert elsewhere.read_text() == "someone else's file\n" and (elsewhere.stat().st_mode & 0o777) == 0o644
    assert link.is_symlink()


def test_a_hostile_choice_is_named_not_echoed_whole(filled: Path) -> None:
    """`--sort` with 5,000 characters echoed all of them back in its one-line refusal."""
    out = pcp(filled, "list", "--sort", "x" * 5000)
    assert out.returncode != 0 and "--sort must be one of recent, oldest, title" in out.stderr
    assert len(out.stderr) < 300 and "x" * 61 not in out.stderr
