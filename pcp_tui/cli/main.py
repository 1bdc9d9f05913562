"""The `pcp` command line: every PCP Core operation as a subcommand (shared/spec/cli.md), on click.

Exit status 0 on success; 1 for an operation error (`{"error": {"code", "message"}}` on stdout with --json, one
line on stderr without); 2 for a usage error (code `usage`); 130 when interrupted. With --json every subcommand
prints exactly one JSON document. No traceback ever reaches the user. The commands live in `commands/`, one
module per family; this module only maps what happens to exit statuses and output.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Sequence

import click

from . import base
from .base import PROG, CliError, Globals, Group, emit_json, fail
from .commands import app as app_commands
from .commands import capture, delete, encrypt, handoff, imports, pages, sync

__all__ = ["main", "pcp"]


@click.group(cls=Group, invoke_without_command=True, help="A local PCP (Paged Context Protocol) context store.",
             epilog="Global options go before the subcommand. See `pcp COMMAND --help`.",
             example="pcp                      (the app)\npcp search \"ferry times\"\npcp --json read pg_...")
@click.option("--db", metavar="PATH", help="store file (default $PCP_DB, else the user data dir)")
@click.option("--json", "as_json", is_flag=True, help="print exactly one JSON document")
@click.option("--as-model", metavar="ID", help="act as a model client principal instead of the owner")
@click.option("--grant", "grants", multiple=True, metavar="NS=PERMS",
              help="with --as-model, repeatable: NS (or *) gets comma-separated permissions")
@click.pass_context
def pcp(ctx: click.Context, db: str | None, as_json: bool, as_model: str | None, grants: tuple[str, ...]) -> int:
    ctx.obj = Globals(db=db, json=as_json, as_model=as_model, grants=list(grants))
    if ctx.invoked_subcommand is not None:
        return 0
    if not as_json and base.at_terminal():
        return app_commands.open_app(ctx, None)
    if as_json:
        raise click.UsageError("a subcommand is required with --json", ctx)
    click.echo(ctx.get_help())  # not at a terminal (a pipe, a script): the app cannot run here
    return 0


for family in (app_commands, pages, delete, imports, sync, handoff, capture, encrypt):
    family.register(pcp)


def _wants_json(argv: Sequence[str]) -> bool:
    head = list(argv[: list(argv).index("--")]) if "--" in argv else list(argv)
    return "--json" in head


def _context_of(args: list[str]) -> click.Context:
    """The context of the (sub)command the words name, for its usage line (a parse error may come without)."""
    ctx = click.Context(pcp, info_name=PROG)
    for word in args:
        group = ctx.command
        sub = group.get_command(ctx, word) if isinstance(group, click.Group) else None
        if sub is not None:
            ctx = click.Context(sub, info_name=word, parent=ctx)
    return ctx


def _usage(exc: click.UsageError, as_json: bool, args: list[str]) -> int:
    ctx = exc.ctx or _context_of(args)
    where = ctx.command_path
    if as_json:
        emit_json({"error": {"code": "usage", "message": f"{where}: {exc.format_message()}"}})
    else:
        sys.stderr.write(ctx.get_usage() + "\n")
        sys.stderr.write(f"{where}: error: {exc.format_message()}\n")
    return 2


def main(argv: Sequence[str] | None = None) -> int:
    """Run `pcp`; returns the exit status."""
    args = list(sys.argv[1:] if argv is None else argv)
    if capture.is_hook_call(args):
        return capture.hook_main(args)
    as_json = _wants_json(args)
    try:
        with pcp.make_context(PROG, args) as ctx:  # (not pcp.main: it prints its own lines for ^C and a pipe)
            result = pcp.invoke(ctx)
        return result if isinstance(result, int) else 0
    except click.exceptions.Exit as exc:  # --help printed its text
        return exc.exit_code
    except click.UsageError as exc:
        return _usage(exc, as_json, args)
    except CliError as exc:
        return fail(exc.code, exc.message, as_json)
    except (click.Abort, KeyboardInterrupt) as exc:
        message = str(exc) or "interrupted"  # a bulk deletion says how far it got and how to resume
        if as_json:
            emit_json({"error": {"code": "interrupted", "message": message}})
        else:
            sys.stderr.write(f"{PROG}: {message}\n")
        return 130
    except BrokenPipeError:
        with contextlib.suppress(Exception):  # the reader went away; say nothing more
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115
        return 1
    except Exception as exc:  # noqa: BLE001 - the last line of defence: one line, never a traceback
        from store import PcpError

        if isinstance(exc, PcpError):  # refused before the store was opened
            return fail(exc.code, exc.message, as_json)
        detail = " ".join(f"{type(exc).__name__}: {exc}".split())
        if as_json:
            emit_json({"error": {"code": "internal", "message": detail}})
        else:
            sys.stderr.write(f"{PROG}: internal error: {detail}\n")
        return 1
