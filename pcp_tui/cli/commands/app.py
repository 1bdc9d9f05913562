"""The front ends `pcp` starts: the app (`pcp`, `pcp demo`, `pcp serve`), the MCP server, `pcp register`.

None of them has --json output or runs as a model client through the global options; each says so."""

from __future__ import annotations

import sys

import click

from .. import base
from ..base import PROG, AtLeast, CliError, Group, OneOf, emit_json, fail, globals_of, json_mode, command
from ..run import existing_store

MCP_PORT = 8765  # pcp mcp --http
REGISTER_CLIENTS = ("claude-code", "claude-desktop", "codex", "gemini")


def register(cli: Group) -> None:
    for cmd in (demo, serve, mcp, register_client):
        cli.add_command(cmd)


def open_app(ctx: click.Context, command: str | None, port: int = 8000, demo: bool = False) -> int:
    """`pcp`, `pcp demo`, `pcp serve`: the app (it has no JSON output and always runs as the owner)."""
    g = globals_of(ctx)
    if json_mode(ctx):
        raise click.UsageError("the app has no --json output; use a subcommand", ctx)
    if g.as_model or g.grants:
        raise click.UsageError("the app runs as the store's owner; --as-model and --grant apply to subcommands", ctx)
    from store import PcpError
    from store.paths import default_path, demo_path, named_path

    from ... import launch
    from ...encrypt import serve_refusal, unlock_before_app

    if command == "demo" and not base.at_terminal():
        raise click.UsageError("the app needs a terminal (run it from one, or use pcp serve)", ctx)
    if command == "serve":
        if not demo:  # each browser tab opens the store: it must be there (cli.md --db)
            try:
                existing_store(g.db)
            except CliError as exc:
                return fail(exc.code, exc.message, False)
        from ...serve import web

        db = demo_path(g.db) if demo else named_path(g.db)
        refusal = serve_refusal(db if db is not None else default_path())
        if refusal is not None:
            return fail("invalid", refusal, False)
        return web.serve(db, port, demo=demo)
    db = demo_path(g.db) if command == "demo" else named_path(g.db)
    try:  # an encrypted store's passphrase is asked here, before Textual takes the terminal
        unlock_before_app(db if db is not None else default_path())
    except PcpError as exc:
        return fail(exc.code, exc.message, False)
    if command == "demo":
        return launch.run_app(db, demo=True)
    return launch.run_app(db)


@command(example="pcp demo")
@click.pass_context
def demo(ctx: click.Context) -> int:
    """Open the app on the demo store (your own store is never touched): --db if given, else $PCP_DEMO_DB, else
    <data dir>/demo.db; filled with the shipped demo content when empty."""
    return open_app(ctx, "demo")


@command(example="pcp serve --port 8000     (then open http://127.0.0.1:8000)")
@click.option("--port", type=AtLeast(1), default=8000, metavar="N", help="the port on 127.0.0.1 (default 8000)")
@click.option("--demo", "on_demo", is_flag=True, help="serve the demo store instead")
@click.pass_context
def serve(ctx: click.Context, port: int, on_demo: bool) -> int:
    """Serve the app to a browser on 127.0.0.1 (textual-serve; one app session per tab)."""
    return open_app(ctx, "serve", port=port, demo=on_demo)


def mcp_store_path(db: str | None) -> object:
    """The store `pcp mcp` serves (--db, else $PCP_DB, else the default path): it must exist, a model server
    never creates one, and a file that is not a pcp store is refused untouched."""
    return existing_store(db)


@command(example="pcp mcp --client-id claude --grant 'conversation:*=search,read,list_scopes'\n"
                       "pcp mcp --client-id claude --grant 'project:*=search,read' --http --port 0")
@click.option("--client-id", metavar="ID", help="the model client's principal id (required to serve)")
@click.option("--grant", "grants", multiple=True, metavar="NS=PERMS",
              help="repeatable: NS (or *, or a prefix ending in *) gets comma-separated permissions")
@click.option("--toolset", type=OneOf("read", "write"), default="read", metavar="read|write",
              help="read (default): describe, list_scopes, search_pages, read_pages; write adds the writing tools")
@click.option("--http", is_flag=True, help="serve streamable HTTP on 127.0.0.1 instead of stdio")
@click.option("--port", type=AtLeast(0), default=MCP_PORT, metavar="N",
              help=f"with --http: the port (default {MCP_PORT}; 0 picks a free one)")
@click.option("--show-token", is_flag=True,
              help="print the HTTP bearer token (kept beside the store, created if missing) and exit")
@click.option("--new-token", is_flag=True, help="replace the HTTP bearer token with a new one, print it and exit")
@click.pass_context
def mcp(ctx: click.Context, client_id: str | None, grants: tuple[str, ...], toolset: str, http: bool, port: int,
        show_token: bool, new_token: bool) -> int:
    """MCP server for a model client, stdio or --http (needs pip install 'pcp[mcp]').

    Serves the store to a Model Context Protocol client as a model client principal with exactly the grants
    given (fixed at start): over stdio, or with --http over streamable HTTP on 127.0.0.1 behind a bearer token.
    The store must exist (a model server never creates one)."""
    g = globals_of(ctx)
    if json_mode(ctx):
        raise click.UsageError("pcp mcp speaks MCP on stdout and has no --json output", ctx)
    if g.as_model or g.grants:
        raise click.UsageError("pcp mcp takes --client-id and --grant after the subcommand", ctx)
    tokens = show_token or new_token
    if not tokens and not client_id:
        raise click.UsageError("pcp mcp needs --client-id ID", ctx)
    if not tokens and not grants:
        raise click.UsageError("pcp mcp needs at least one --grant NS=PERMS", ctx)
    from store import PcpError

    try:
        path = existing_store(g.db)
        if tokens:
            from ...mcp.token import token

            print(token(path, new=new_token))
            return 0
        from ...encrypt import unlock_early

        unlock_early(path)  # an encrypted store's key now: a missing one is one line here, not a tool error
    except CliError as exc:
        return fail(exc.code, exc.message, False)
    except PcpError as exc:
        return fail(exc.code, exc.message, False)
    try:
        from ...mcp import server as mcp_server
    except ImportError as exc:
        if (exc.name or "").split(".")[0] not in ("mcp", "mcp_types"):
            raise
        sys.stderr.write(f"{PROG}: the MCP server needs the mcp package: pip install 'pcp[mcp]'\n")
        return 1
    assert client_id is not None  # (refused above when missing)
    try:
        if http:
            return mcp_server.serve_http(path, client_id, list(grants), toolset, port)
        return mcp_server.serve(path, client_id, list(grants), toolset)
    except mcp_server.StartError as exc:
        return fail(exc.code, exc.message, False)


@command(name="register", example="pcp register claude-code                 (asks which scopes, at a terminal)\n"
                                        "pcp register codex --grant 'conversation:chatgpt:*' --print")
@click.argument("client", metavar="CLIENT", type=OneOf(*REGISTER_CLIENTS))
@click.option("--grant", "grants", multiple=True, metavar="NS[=PERMS]",
              help="repeatable: a namespace or a prefix ending in * (PERMS default search,read,list_scopes)")
@click.option("--toolset", type=OneOf("read", "write"), default="read", metavar="read|write",
              help="write needs --write NS")
@click.option("--write", "write_ns", metavar="NS", help="with --toolset write: the one scope the model may write, "
                                                        "revise and link in")
@click.option("--print", "print_only", is_flag=True, help="print the entry; write nothing")
@click.option("--name", "server_name", default="pcp", metavar="NAME", help="the server's name in the client (default pcp)")
@click.option("--client-id", metavar="ID", help="the principal id in the audit log (default: CLIENT)")
@click.option("--config", "config_path", metavar="PATH", help="write this config file instead of the client's usual one")
@click.pass_context
def register_client(ctx: click.Context, client: str, grants: tuple[str, ...], toolset: str, write_ns: str | None,
                    print_only: bool, server_name: str, client_id: str | None, config_path: str | None) -> int:
    """Register pcp mcp with a model client: claude-code, claude-desktop, codex or gemini.

    Writes the MCP server entry for `pcp mcp` into the client's user-level config (a backup and a diff first;
    running it again changes nothing). In a terminal it lists your scopes with page counts and asks which to
    grant; elsewhere --grant is required. Never *, read only unless --toolset write --write NS."""
    from ...mcp import register as registration

    g = globals_of(ctx)
    as_json = json_mode(ctx)
    if g.as_model or g.grants:
        raise click.UsageError("pcp register takes --grant after the subcommand", ctx)
    try:
        plan = registration.register(
            client, existing_store(g.db), grants=list(grants), write_ns=write_ns, toolset=toolset, name=server_name,
            client_id=client_id, config=config_path, print_only=print_only,
            interactive=not as_json and base.at_terminal())
    except registration.RegisterError as exc:
        if exc.usage:
            raise click.UsageError(exc.message, ctx) from None
        return fail(exc.code, exc.message, as_json)
    except CliError as exc:
        return fail(exc.code, exc.message, as_json)
    if as_json:
        emit_json(plan.to_dict())
        return 0
    from .. import render

    render.registered(render.make_console(), plan.to_dict(), print_only)
    return 0
