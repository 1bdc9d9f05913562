"""Bringing history in and taking it out: import, import-report, export."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from .. import base
from ..base import present, CliError, Group, OneOf, json_mode, command
from ..run import progress, run_store, write_out

if TYPE_CHECKING:
    from store import Store


def import_sources() -> list[str]:
    """What `pcp import` takes: the store's importers (store.adapters.IMPORTERS) and a pcp export; read when a
    command line names one, so the command starts without loading the store."""
    from store.adapters import IMPORTERS

    return [*IMPORTERS, "export"]


def register(cli: Group) -> None:
    for cmd in (import_, import_report, export):
        cli.add_command(cmd)


@command(name="import", example="pcp import chatgpt ~/Downloads/chatgpt-export.zip\n"
                                      "pcp import claude-code            (every session under ~/.claude/projects)\n"
                                      "pcp import memory memory.txt --from chatgpt")
@click.argument("source", metavar="SOURCE", type=OneOf(choices=import_sources))
@click.argument("path", metavar="[PATH]", required=False)
@click.option("--namespace", metavar="NS", help="put everything into this one scope")
@click.option("--with-tools", is_flag=True,
              help="coding agents: also store tool calls and results as pages (they often hold secrets)")
@click.option("--from", "memory_from", type=OneOf("chatgpt", "claude"), metavar="chatgpt|claude",
              help="import memory: whose memory the text is (as you copied it out of the vendor's settings)")
@click.option("--confirm-lookalike", is_flag=True,
              help="import export: bring in a scope whose name reads like one of this store's (a look-alike)")
@click.pass_context
def import_(ctx: click.Context, source: str, path: str | None, namespace: str | None, with_tools: bool,
            memory_from: str | None, confirm_lookalike: bool) -> int:
    """Bring history in: SOURCE is chatgpt, claude, markdown, events, export, memory, or the coding agents
    claude-code, codex, gemini.

    PATH: an export file (.json or .zip), a notes folder, or a .jsonl file; for claude-code its sessions folder
    or one .jsonl (default ~/.claude/projects); for codex CODEX_HOME, its sessions folder or one rollout file
    (default ~/.codex); for gemini its tmp folder, one project's, or one session file (default ~/.gemini/tmp)."""
    from store.adapters import IMPORTERS

    agent = source in IMPORTERS and IMPORTERS[source].kind == "agent"
    if agent:
        if namespace:
            raise CliError("invalid", f"--namespace does not apply to `import {source}`: sessions go to "
                                      f"agent:{source}:<project>:<session>.")
    else:
        if path is None:
            raise CliError("invalid", f"`import {source}` needs a PATH.")
        if (source == "memory") != (memory_from is not None):
            raise CliError("invalid", "`import memory FILE` needs --from chatgpt|claude, and --from goes only with it.")
        if with_tools:
            raise CliError("invalid", "--with-tools applies to coding-agent sessions only.")
        if source == "export" and namespace:
            raise CliError("invalid", "--namespace does not apply to `import export`: it keeps every scope.")
    if confirm_lookalike and source != "export":
        raise CliError("invalid", f"--confirm-lookalike applies to `import export` only; `import {source}` names its "
                                  "scopes so that none reads like another.")

    as_json = json_mode(ctx)

    def run(st: Store) -> Any:
        with progress(ctx, f"importing {source}") as update:
            if source == "export":
                return st.import_export(present(path, "PATH"), progress=update, confirm_lookalike=confirm_lookalike)
            run_import = IMPORTERS[source].run
            if agent:
                report = run_import(st, path, with_tools=with_tools, progress=update)
            elif source == "memory" and path is not None and memory_from is not None:  # (both checked above)
                report = run_import(st, path, memory_from, namespace=namespace, progress=update)
            else:
                report = run_import(st, path, namespace=namespace, progress=update)
        summary = _with_report(st, dict(report.to_dict()))
        # For people, where it looked (an import that found nothing says so); the JSON stays the summary.
        return summary if as_json else {**summary, "looked_in": report.path or path}

    return run_store(ctx, run, "import_report", creates=True)


def _with_report(st: Store, summary: dict[str, Any]) -> dict[str, Any]:
    """The summary, and the kept report's lines (per file and conversation) shown after it."""
    if summary.get("import_id"):
        summary = {**summary, "report": st.import_report(summary["import_id"])["entries"]}
    return summary


@command(name="import-report", example="pcp import-report            (the last import)\n"
                                             "pcp import-report imp_...")
@click.argument("import_id", metavar="[ID]", required=False)
@click.option("--last", is_flag=True, help="the last import (the default)")
@click.pass_context
def import_report(ctx: click.Context, import_id: str | None, last: bool) -> int:
    """What an import brought in and what it skipped, and why (default: the last one)."""
    if import_id is not None and last:
        raise click.UsageError("give an import ID or --last, not both", ctx)
    return run_store(ctx, lambda st: st.import_report(import_id), "kept_import_report")


@command(example="pcp export --out everything.jsonl\n"
                       "pcp export --format markdown --scope project:thesis --out thesis-notes/\n"
                       "pcp export --format memory-profile --out memory.md")
@click.option("--scope", multiple=True, metavar="NS",
              help="repeatable; default: every scope (memory-profile: every *:memory scope)")
@click.option("--format", "fmt", type=OneOf("jsonl", "markdown", "memory-profile"), default="jsonl",
              metavar="jsonl|markdown|memory-profile", help="JSON Lines (default), a Markdown folder, or memory")
@click.option("--out", required=True, metavar="PATH", help="file (jsonl, memory-profile) or folder (markdown)")
@click.option("--yes", "write_profile", is_flag=True,
              help="memory-profile: write it without asking (it is shown first either way)")
@click.option("--encrypt", "sealed", is_flag=True,
              help="seal the JSON Lines file with a passphrase (ChaCha20-Poly1305; pcp import export reads it)")
@click.pass_context
def export(ctx: click.Context, scope: tuple[str, ...], fmt: str, out: str, write_profile: bool, sealed: bool) -> int:
    """Take everything out (JSON Lines, a Markdown folder, or your memory as one text)."""
    if fmt == "memory-profile":
        return run_store(ctx, lambda st: _memory_profile(ctx, st, scope, out, write_profile), "memory_profile")
    if write_profile:
        raise click.UsageError("--yes goes with --format memory-profile", ctx)
    if sealed and fmt != "jsonl":
        raise click.UsageError("--encrypt seals a JSON Lines export; drop --format or --encrypt", ctx)

    def run(st: Store) -> Any:
        from ...encrypt import export_passphrase

        passphrase = export_passphrase(st.path, sealed)  # and the warning that an encrypted store's export is plain
        with progress(ctx, "exporting") as update:
            return st.export(out, scopes=list(scope) or None, progress=update, format=fmt, passphrase=passphrase)

    return run_store(ctx, run, "export_done")


def _memory_profile(ctx: click.Context, st: Store, scope: tuple[str, ...], out: str, write: bool) -> Any:
    """The memory as one text: shown, then written to --out when confirmed (a terminal) or with --yes."""
    from store.adapters.memory import memory_profile

    result = memory_profile(st, list(scope) or None)
    if not write and not json_mode(ctx) and base.at_terminal():
        from .. import render

        render.memory_profile(render.make_console(), {**result, "path": out, "written": False, "asking": True})
        write = input(f"Write it to {out}? [y/N] ").strip().lower() in ("y", "yes")
        result["shown"] = True
    if write:
        write_out(st, out, result["text"])
    return {**result, "path": out, "written": bool(write)}
