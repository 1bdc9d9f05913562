"""The `pcp` command line: every PCP Core operation as a subcommand (shared/spec/cli.md).

Exit status 0 on success; 1 for an operation error (`{"error": {"code", "message"}}` on
stdout with --json, one line on stderr without); 2 for a usage error (code `usage`).
With --json every subcommand prints exactly one JSON document. No traceback ever
reaches the user. Rich is only imported (through pcp_tui.render) for human output.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from datetime import datetime
from pathlib import Path
from typing import Any, Callable, Sequence

PROG = "pcp"
MCP_PORT = 8765  # pcp mcp --http
INDENT = 2


class UsageError(Exception):
    """Unknown subcommand or option, missing required option: exit 2."""

    def __init__(self, message: str, parser: argparse.ArgumentParser | None = None) -> None:
        super().__init__(message)
        self.message, self.parser = message, parser


class CliError(Exception):
    """An operation error found by the command line itself (bad option value, unreadable file): exit 1."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code, self.message = code, message


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(message, self)


# --- option value converters (they raise CliError, which argparse lets through: code `invalid`) ---


def _int_at_least(minimum: int, what: str) -> Callable[[str], int]:
    def convert(value: str) -> int:
        try:
            number = int(value)
        except ValueError:
            raise CliError("invalid", f"{what} must be an integer, got {value!r}") from None
        if number < minimum:
            raise CliError("invalid", f"{what} must be at least {minimum}, got {number}")
        return number

    return convert


def _timestamp(value: str) -> str:
    text = value.strip()
    try:
        datetime.fromisoformat(text.upper())
    except ValueError:
        raise CliError("invalid", f"not an RFC 3339 timestamp: {value!r}") from None
    return text


def _facets(value: str) -> dict[str, Any]:
    try:
        facets = json.loads(value)
    except RecursionError:
        raise CliError("invalid", "--facets is nested too deeply to read") from None
    except ValueError as exc:
        raise CliError("invalid", f"--facets is not valid JSON: {exc}") from None
    if not isinstance(facets, dict):
        raise CliError("invalid", "--facets must be a JSON object")
    return facets


def _relation(value: str) -> dict[str, str]:
    rtype, sep, target = value.rpartition(":")
    if not sep or not rtype.strip() or not target.strip():
        raise CliError("invalid", f"--relation must be TYPE:ID, got {value!r}")
    return {"relation_type": rtype.strip(), "to": target.strip()}


def _comma_list(value: str) -> list[str]:
    return [part.strip() for part in value.split(",") if part.strip()]


def _one_of(what: str, allowed: Sequence[str]) -> Callable[[str], str]:
    def convert(value: str) -> str:
        if value not in allowed:
            raise CliError("invalid", f"{what} must be one of {', '.join(allowed)}, got {value!r}")
        return value

    return convert


def _flat(lists: list[list[str]] | None) -> list[str]:
    return [item for chunk in lists or [] for item in chunk]


def _given(**kwargs: Any) -> dict[str, Any]:
    return {k: v for k, v in kwargs.items() if v is not None}


# --- the parser ----------------------------------------------------------------------------------


def build_parser() -> _Parser:
    json_flag = _Parser(add_help=False)
    json_flag.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help=argparse.SUPPRESS)
    parser = _Parser(prog=PROG, description="A local PCP (Paged Context Protocol) context store.",
                     epilog="Global options go before the subcommand. See `pcp COMMAND --help`.")
    parser.add_argument("--db", metavar="PATH", help="store file (default $PCP_DB, else the user data dir)")
    parser.add_argument("--json", action="store_true", help="print exactly one JSON document")
    parser.add_argument("--as-model", metavar="ID", help="act as a model client principal instead of the owner")
    parser.add_argument("--grant", action="append", default=[], metavar="NS=PERMS",
                        help="with --as-model, repeatable: NS (or *) gets comma-separated permissions")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    def cmd(name: str, help: str, render: str, func: Callable, parent: Any = sub) -> _Parser:
        p = parent.add_parser(name, help=help, description=help, parents=[json_flag])
        p.set_defaults(func=func, render=render, parser=p)
        return p

    def content_options(p: _Parser, *, write: bool) -> None:
        src = p.add_mutually_exclusive_group()
        src.add_argument("--content", metavar="TEXT")
        src.add_argument("--file", metavar="F", help="read the content from a UTF-8 file")
        src.add_argument("--stdin", action="store_true", help="read the content from standard input")
        p.add_argument("--media-type", metavar="T")
        p.add_argument("--source-ref", action="append", metavar="URI", help="repeatable")
        p.add_argument("--observed-at", type=_timestamp, metavar="TS")
        if write:
            p.add_argument("--title", metavar="T", help="sets facets.title")
            p.add_argument("--facets", type=_facets, metavar="JSON", help="a JSON object")
            p.add_argument("--derived-from", action="append", metavar="REV", help="repeatable provenance input")

    def pages(p: _Parser, *, reason: str | None = "required", nargs: str | None = None) -> None:
        p.add_argument("page_ids" if nargs else "page_id", nargs=nargs, metavar="PAGE_ID")
        if reason:
            p.add_argument("--reason", required=reason == "required", metavar="R")

    def paging(p: _Parser) -> None:
        p.add_argument("--limit", type=_int_at_least(1, "--limit"), metavar="N")
        p.add_argument("--cursor", metavar="C")

    app_only = sub.add_parser("demo", help="open the app on the demo store (your own store is never touched)",
                              description="Open the app on the demo store: --db if given, else $PCP_DEMO_DB, else "
                                          "<data dir>/demo.db; filled with the shipped demo content when empty.")
    app_only.set_defaults(parser=app_only)
    app_only = sub.add_parser("serve", help="the app in a browser tab (textual-serve on 127.0.0.1)",
                              description="Serve the app to a browser on 127.0.0.1 (one app session per tab).")
    app_only.add_argument("--port", type=_int_at_least(1, "--port"), default=8000, metavar="N")
    app_only.add_argument("--demo", action="store_true", help="serve the demo store instead")
    app_only.set_defaults(parser=app_only)
    app_only = sub.add_parser("mcp", help="MCP server for a model client, stdio or --http (needs pip install 'pcp[mcp]')",
                              description="Serve the store to a Model Context Protocol client as a model client "
                                          "principal with exactly the grants given (fixed at start): over stdio, or "
                                          "with --http over streamable HTTP on 127.0.0.1 behind a bearer token. The "
                                          "store must exist (a model server never creates one).")
    app_only.add_argument("--client-id", metavar="ID", help="the model client's principal id (required to serve)")
    app_only.add_argument("--grant", dest="mcp_grants", action="append", default=[], metavar="NS=PERMS",
                          help="repeatable: NS (or *, or a prefix ending in *) gets comma-separated permissions")
    app_only.add_argument("--toolset", type=_one_of("--toolset", ("read", "write")), default="read",
                          metavar="read|write", help="read (default): describe, list_scopes, search_pages, "
                                                     "read_pages; write adds the writing tools")
    app_only.add_argument("--http", action="store_true", help="serve streamable HTTP on 127.0.0.1 instead of stdio")
    app_only.add_argument("--port", dest="mcp_port", type=_int_at_least(0, "--port"), default=MCP_PORT, metavar="N",
                          help=f"with --http: the port (default {MCP_PORT}; 0 picks a free one)")
    app_only.add_argument("--show-token", action="store_true",
                          help="print the HTTP bearer token (kept beside the store, created if missing) and exit")
    app_only.add_argument("--new-token", action="store_true",
                          help="replace the HTTP bearer token with a new one, print it and exit")
    app_only.set_defaults(parser=app_only)
    app_only = sub.add_parser("register", help="register pcp mcp with a model client: claude-code, claude-desktop, "
                                                "codex or gemini (writes its config; --print only shows it)",
                              description="Write the MCP server entry for `pcp mcp` into the client's user-level "
                                          "config (a backup and a diff first; running it again changes nothing). "
                                          "In a terminal it lists your scopes with page counts and asks which to "
                                          "grant; elsewhere --grant is required. Never *, read only unless "
                                          "--toolset write --write NS.")
    app_only.add_argument("client", metavar="CLIENT", type=_one_of("CLIENT", REGISTER_CLIENTS),
                          help=" | ".join(REGISTER_CLIENTS))
    app_only.add_argument("--grant", dest="register_grants", action="append", default=[], metavar="NS[=PERMS]",
                          help="repeatable: a namespace or a prefix ending in * (PERMS default search,read,list_scopes)")
    app_only.add_argument("--toolset", dest="register_toolset", type=_one_of("--toolset", ("read", "write")),
                          default="read", metavar="read|write", help="write needs --write NS")
    app_only.add_argument("--write", dest="write_ns", metavar="NS", help="with --toolset write: the one scope the "
                                                                         "model may write, revise and link in")
    app_only.add_argument("--print", dest="print_only", action="store_true", help="print the entry; write nothing")
    app_only.add_argument("--name", dest="server_name", default="pcp", metavar="NAME",
                          help="the server's name in the client (default pcp)")
    app_only.add_argument("--client-id", dest="register_client_id", metavar="ID",
                          help="the principal id in the audit log (default: CLIENT)")
    app_only.add_argument("--config", dest="config_path", metavar="PATH",
                          help="write this config file instead of the client's usual one")
    app_only.set_defaults(parser=app_only)
    cmd("describe", "the store's capabilities", "capabilities", lambda st, a: st.describe_capabilities())
    cmd("doctor", "integrity check, counts, SQLite version, FTS state", "doctor", lambda st, a: st.doctor())
    p = cmd("scopes", "list the scopes you can see", "scopes",
            lambda st, a: st.list_scopes(**_given(query=a.query, limit=a.limit, cursor=a.cursor)))
    p.add_argument("query", nargs="?")
    paging(p)

    scope = sub.add_parser("scope", help="create or delete a scope", parents=[json_flag])
    scope_sub = scope.add_subparsers(dest="scope_command", metavar="ACTION", required=True, parser_class=_Parser)
    p = cmd("create", "create a scope", "scope_created", lambda st, a: st.create_scope(a.namespace, **_given(
        display_name=a.name, description=a.description, parent=a.parent, visibility=a.visibility,
        confirm_lookalike=a.confirm_lookalike or None)), scope_sub)
    p.add_argument("namespace", metavar="NS")
    p.add_argument("--name", metavar="N")
    p.add_argument("--description", metavar="D")
    p.add_argument("--parent", metavar="NS")
    p.add_argument("--visibility", type=_one_of("--visibility", ("private", "shared")), metavar="private|shared")
    p.add_argument("--confirm-lookalike", action="store_true",
                   help="create it although it reads like an existing scope's name (owner only)")
    p = cmd("delete", "erase every page of a scope, then the scope", "receipt", _scope_delete, scope_sub)
    p.add_argument("namespace", metavar="NS")
    _plan_or_yes(p)

    p = cmd("write", "write a new page", "written", _write)
    p.add_argument("--namespace", required=True, metavar="NS")
    content_options(p, write=True)
    p.add_argument("--relation", action="append", type=_relation, metavar="TYPE:ID", help="repeatable")
    p.add_argument("--idempotency-key", metavar="K")
    p = cmd("revise", "write a new revision (what is not given is carried over)", "written", _revise)
    p.add_argument("page_id", metavar="PAGE_ID")
    p.add_argument("--expected", required=True, metavar="REV", help="the revision you are revising")
    content_options(p, write=True)
    p.add_argument("--idempotency-key", metavar="K")

    p = cmd("read", "read pages or revisions by id", "read", _read)
    p.add_argument("ids", nargs="+", metavar="ID")
    p.add_argument("--projection", action="append", type=_comma_list, metavar="P,P",
                   help="manifest, payload, source_spans, relations, facets, history (default manifest,payload)")
    p.add_argument("--max-chars", type=_int_at_least(0, "--max-chars"), metavar="N")
    p.add_argument("--offset", type=_int_at_least(0, "--offset"), metavar="N",
                   help="one ID only: start the content at character N (a cut read prints its next_offset)")

    p = cmd("search", "search pages", "search", _search)
    p.add_argument("query", nargs="?", default="")
    p.add_argument("--scope", action="append", metavar="NS", help="repeatable")
    p.add_argument("--mode", metavar="MODE", help="auto (default), text, exact, temporal or graph")
    p.add_argument("--status", action="append", type=_comma_list, metavar="S,S", help="lifecycle statuses")
    for flag, meta in (("--relation-type", "T"), ("--media-type", "T"), ("--actor-type", "A")):
        p.add_argument(flag, action="append", type=_comma_list, metavar=meta, help="repeatable")
    p.add_argument("--after", type=_timestamp, metavar="TS", help="stored at or after TS")
    p.add_argument("--before", type=_timestamp, metavar="TS", help="stored before TS")
    p.add_argument("--observed-after", type=_timestamp, metavar="TS",
                   help="happened (observed_at, else stored) at or after TS")
    p.add_argument("--observed-before", type=_timestamp, metavar="TS", help="happened before TS")
    p.add_argument("--context", metavar="C", help="apply this context's suppressions")
    p.add_argument("--all-revisions", action="store_true")
    paging(p)

    p = cmd("link", "link two pages or revisions with a typed relation", "linked", lambda st, a: st.link_pages(
        a.from_id, a.relation_type, a.to_id, **_given(idempotency_key=a.idempotency_key)))
    p.add_argument("from_id", metavar="FROM")
    p.add_argument("relation_type", metavar="TYPE")
    p.add_argument("to_id", metavar="TO")
    p.add_argument("--idempotency-key", metavar="K")
    p = cmd("unlink", "retract a relation", "unlinked", lambda st, a: st.unlink(a.relation_id, a.reason))
    p.add_argument("relation_id", metavar="RELATION_ID")
    p.add_argument("--reason", required=True, metavar="R")

    p = cmd("ingest", "ingest a raw event as a source-backed page", "written",
            lambda st, a: st.ingest_event(_content_kwargs(a), a.namespace, a.idempotency_key))
    p.add_argument("--namespace", required=True, metavar="NS")
    p.add_argument("--idempotency-key", required=True, metavar="K")
    content_options(p, write=False)

    for name, what in (("archive", "archive a page (it leaves ordinary search)"), ("restore", "restore a page"),
                       ("tombstone", "withdraw a page"), ("untombstone", "bring back a tombstoned page")):
        pages(cmd(name, what, "lifecycle", lambda st, a: getattr(st, f"{a.command}_page")(a.page_id, a.reason)))
    pages(cmd("recommend-tombstone", "recommend a tombstone for the owner to review", "recommended",
              lambda st, a: st.recommend_tombstone(a.page_id, a.reason)))
    p = cmd("suppress", "hide pages from searches that pass --context C", "suppressed", lambda st, a: st.suppress_pages(
        list(a.page_ids), a.context, **_given(reason=a.reason, expires_at=a.expires)))
    pages(p, reason="optional", nargs="+")
    p.add_argument("--context", required=True, metavar="C")
    p.add_argument("--expires", type=_timestamp, metavar="TS")
    p = cmd("unsuppress", "lift suppressions in a context", "unsuppressed",
            lambda st, a: st.unsuppress_pages(list(a.page_ids), a.context))
    pages(p, reason=None, nargs="+")
    p.add_argument("--context", required=True, metavar="C")

    p = cmd("delete", "erase a page, or every page a filter selects, for good (plan first)", "receipt", _delete)
    p.add_argument("page_id", nargs="?", metavar="PAGE_ID", help="one page; or leave it out and give filters")
    p.add_argument("--cascade", action="store_true", help="also erase pages derived from it (one page only)")
    _bulk_filters(p)
    _plan_or_yes(p, resume=True)

    p = cmd("import", "bring history in: chatgpt, claude, markdown, events, export, or coding-agent sessions",
            "import_report", _import)
    p.add_argument("source", metavar="SOURCE", type=_one_of("SOURCE", IMPORT_SOURCES),
                   help=" | ".join(IMPORT_SOURCES))
    p.add_argument("path", metavar="PATH", nargs="?",
                   help="export file (.json or .zip), notes folder, or .jsonl file; for claude-code: its sessions "
                        "folder or one .jsonl (default ~/.claude/projects); for codex: CODEX_HOME, its sessions "
                        "folder or one rollout file (default ~/.codex); for gemini: "
                        "its tmp folder, one project's, or one session file (default ~/.gemini/tmp)")
    p.add_argument("--namespace", metavar="NS", help="put everything into this one scope")
    p.add_argument("--with-tools", action="store_true",
                   help="coding agents: also store tool calls and results as pages (they often hold secrets)")
    p.add_argument("--from", dest="memory_from", type=_one_of("--from", ("chatgpt", "claude")), metavar="chatgpt|claude",
                   help="import memory: whose memory the text is (as you copied it out of the vendor's settings)")
    p = cmd("import-report", "what an import brought in and what it skipped, and why (default: the last one)",
            "kept_import_report", lambda st, a: st.import_report(a.import_id))
    which = p.add_mutually_exclusive_group()
    which.add_argument("import_id", metavar="ID", nargs="?", help="an import id (imp_...), as an import prints it")
    which.add_argument("--last", action="store_true", help="the last import (the default)")
    p = cmd("sync", "sync with your other stores: through a folder (DIR), or with another store file (--with)",
            "synced", _sync)
    p.add_argument("folder", metavar="DIR", nargs="?", help="a folder your machines share (USB stick, synced folder)")
    sync_mode = p.add_mutually_exclusive_group()
    sync_mode.add_argument("--with", dest="with_db", metavar="OTHER.db", help="sync with another store file on this machine")
    sync_mode.add_argument("--pair", action="store_true", help="offer pairing: shows a one-time code to type on the other machine")
    sync_mode.add_argument("--join", metavar="CODE", help="pair with the store that showed CODE (an empty store adopts its "
                           "owner; a store with history shows what merges and asks)")
    sync_mode.add_argument("--unpair", metavar="STORE", help="refuse a lost machine's store (its id) from now on, and move "
                           "the folder key on without it")
    p.add_argument("--yes", action="store_true", help="with --join: merge this store's history without asking (scripts)")
    p.add_argument("--rekey", action="store_true", help="with --pair: a fresh key (after --unpair; --join it everywhere)")
    sync_mode.add_argument("--status", action="store_true", help="this store's id, its peers, last sync, conflicts")
    p = cmd("export", "take everything out (JSON Lines, a Markdown folder, or your memory as one text)",
            "export_done", _export)
    p.add_argument("--scope", action="append", metavar="NS",
                   help="repeatable; default: every scope (memory-profile: every *:memory scope)")
    p.add_argument("--format", type=_one_of("--format", ("jsonl", "markdown", "memory-profile")), default="jsonl",
                   metavar="jsonl|markdown|memory-profile")
    p.add_argument("--out", required=True, metavar="PATH", help="file (jsonl, memory-profile) or folder (markdown)")
    p.add_argument("--yes", dest="write_profile", action="store_true",
                   help="memory-profile: write it without asking (it is shown first either way)")

    p = cmd("audit", "the audit log, newest first", "audit", lambda st, a: st.audit_log(**_given(
        decision=a.decision, operation=a.operation, principal=a.principal, limit=a.limit, cursor=a.cursor)))
    p.add_argument("--decision", type=_one_of("--decision", ("allowed", "denied", "failed")),
                   metavar="allowed|denied|failed")
    p.add_argument("--operation", metavar="OP")
    p.add_argument("--principal", metavar="ID")
    paging(p)
    _handoff_commands(cmd, paging)
    _capture_commands(sub, json_flag)
    return parser


def _capture_commands(sub: Any, json_flag: _Parser) -> None:
    """capture install | uninstall | status | run | hook (pcp_tui/capture.py)."""
    capture = sub.add_parser("capture", help="live capture from Claude Code, Codex and Gemini CLI (private by default)",
                             description="Capture coding-agent sessions into the store as they happen: secrets "
                                         "redacted, pasted bundles and tool output left out.", parents=[json_flag])
    capture.set_defaults(parser=capture)
    actions = capture.add_subparsers(dest="capture_command", metavar="ACTION", required=True, parser_class=_Parser)
    agent = {"metavar": "AGENT", "type": _one_of("AGENT", AGENT_SOURCES), "help": " | ".join(AGENT_SOURCES)}
    p = actions.add_parser("install", parents=[json_flag], help="register pcp in the agent's user-level hooks",
                           description="Register pcp in the agent's own hook mechanism (its user-level "
                                       "configuration only; a backup is kept and the diff shown).")
    p.add_argument("agent", **agent)
    scope = p.add_mutually_exclusive_group()
    scope.add_argument("--project", action="store_true", help="capture sessions of the current folder (the default)")
    scope.add_argument("--all", action="store_true", help="capture sessions of every project")
    p = actions.add_parser("uninstall", parents=[json_flag], help="take pcp's entries out of the agent's configuration")
    p.add_argument("agent", **agent)
    actions.add_parser("status", parents=[json_flag], help="what is installed, which projects, the last runs and errors")
    p = actions.add_parser("run", parents=[json_flag], help="capture what the agents' folders hold that is new (timers)")
    p.add_argument("--agent", action="append", type=_one_of("--agent", AGENT_SOURCES), metavar="AGENT",
                   help="repeatable; default: all three")
    p = actions.add_parser("hook", help="what the agent runs after a turn (installed by pcp capture install)")
    p.add_argument("agent", **agent)
    p.add_argument("payload", nargs="?", help=argparse.SUPPRESS)
    for action in actions.choices.values():
        action.set_defaults(parser=action)


def _capture(args: argparse.Namespace, json_mode: bool) -> int:
    """`pcp capture ...` (it opens the store itself, only to write what it captures)."""
    if args.as_model or args.grant:
        raise UsageError("pcp capture runs as the store's owner; --as-model and --grant do not apply", args.parser)
    if args.db is not None and not str(args.db).strip():
        return _fail("invalid", "--db must not be empty", json_mode)
    if args.capture_command == "hook":
        from .capture_hook import run as hook

        return hook(args.agent, args.payload, args.db)
    from . import capture

    try:
        document, text = capture.command(args, ask=input if not json_mode and _at_terminal() else None)
    except capture.CaptureError as exc:
        return _fail("invalid", str(exc), json_mode)
    if json_mode:
        _emit_json(document)
    else:
        sys.stdout.write(text)
    return 0


def _hook_main(argv: list[str]) -> int:
    """`pcp [--db P] capture hook AGENT [PAYLOAD]`, the agent's call: no parser built, exit 0 whatever happens."""
    try:
        at = argv.index("capture")
        db = argv[argv.index("--db") + 1] if "--db" in argv[:at] else None
        rest = argv[at + 2:]
        if not rest or rest[0] not in AGENT_SOURCES:
            return 0
        from .capture_hook import run as hook

        return hook(rest[0], rest[1] if len(rest) > 1 else None, db)
    except Exception:  # noqa: BLE001 - the agent must never see a failure of ours
        return 0


def _is_hook_call(argv: list[str]) -> bool:
    if "capture" not in argv or "-h" in argv or "--help" in argv:
        return False
    at = argv.index("capture")
    head = argv[:at]
    return argv[at + 1:at + 2] == ["hook"] and (not head or len(head) == 2 and head[0] == "--db")


def _handoff_commands(cmd: Callable[..., _Parser], paging: Callable[[_Parser], None]) -> None:
    """bundle, copy, handoffs, verify: handing context to a chat (shared spec handoff.md)."""

    def selection(p: _Parser) -> None:
        p.add_argument("ids", nargs="*", metavar="ID", help="page or revision ids, in the order you want them")
        p.add_argument("--query", metavar="Q", help="add the active pages a search finds")
        p.add_argument("--scope", action="append", metavar="NS", help="repeatable: search (or list) these scopes")

    def budget(p: _Parser) -> None:
        p.add_argument("--max-tokens", type=_int_at_least(1, "--max-tokens"), metavar="N",
                       help="token budget (estimated): later entries degrade to excerpt, summary, reference")

    p = cmd("bundle", "render pages as one bundle to paste into a chat (records nothing)", "bundle", _bundle)
    selection(p)
    budget(p)
    p.add_argument("--out", metavar="F", help="write the bundle to F instead of standard output")
    p = cmd("copy", "copy a bundle (or, with --continue, what changed) to the clipboard and record it",
            "copied", _copy)
    selection(p)
    chat = p.add_mutually_exclusive_group(required=True)
    chat.add_argument("--label", metavar="L", help="name of the target chat, e.g. \"Claude: thesis chapter 3\"")
    chat.add_argument("--continue", dest="continue_label", metavar="L", help="continue the chat labelled L")
    budget(p)
    p.add_argument("--strict", action="store_true", help="refuse (exit 1) when there are warnings")
    p = cmd("handoffs", "the handoff ledger, newest first", "handoffs", lambda st, a: st.handoffs(**_given(
        page_id=a.page, label=a.label, limit=a.limit, cursor=a.cursor)))
    p.add_argument("--page", metavar="ID", help="only the copies that carried this page or revision")
    p.add_argument("--label", metavar="L", help="only the copies for this chat")
    paging(p)
    p = cmd("verify", "check a pasted bundle or continuation (exit 1 when a digest does not match)", "verified",
            _verify)
    p.add_argument("source", nargs="?", default="-", metavar="FILE", help="the pasted text; - or nothing: stdin")
    p.set_defaults(exit_status=lambda result: 0 if result.get("digest_ok") else 1)


def _sync(st: Any, args: argparse.Namespace) -> Any:
    """`pcp sync`: one of --with, --pair, --join, --unpair, --status, or a plain folder sync."""
    if args.status:
        return {"action": "status", **st.sync_status()}
    if args.with_db:
        if args.folder:
            raise UsageError("give either DIR or --with OTHER.db", args.parser)
        return {"action": "with", **st.sync_with(args.with_db)}
    if not args.folder:
        raise UsageError("give the sync folder DIR (or --with OTHER.db)", args.parser)
    if args.rekey and not args.pair:
        raise UsageError("--rekey goes with --pair", args.parser)
    if args.pair:
        return {"action": "pair", **st.sync_pair(args.folder, rekey=args.rekey)}
    if args.yes and not args.join:
        raise UsageError("--yes goes with --join", args.parser)
    if args.join:
        merge = args.yes
        if not merge:
            plan = st.sync_join_plan(args.folder, args.join)
            if plan["merge"]:
                merge = _ask_merge(args, plan)
        joined = st.sync_join(args.folder, args.join, merge=merge)
        with _progress(args, "syncing") as update:
            return {"action": "join", **joined, "sync": st.sync_folder(args.folder, progress=update)}
    if args.unpair:
        unpaired = st.sync_unpair(args.folder, args.unpair)
        with _progress(args, "syncing") as update:
            return {"action": "unpair", **unpaired, "sync": st.sync_folder(args.folder, progress=update)}
    with _progress(args, "syncing") as update:
        return {"action": "folder", **st.sync_folder(args.folder, progress=update)}


def _ask_merge(args: argparse.Namespace, plan: dict[str, Any]) -> bool:
    """A store with history of its own joins only when the person confirms what merges (or gave --yes)."""
    if args.json or not _at_terminal():
        raise CliError("conflict", "This store holds history of its own: `pcp sync DIR --join CODE` at a terminal shows "
                                   "what merges and asks; add --yes to merge without asking.")
    from . import render

    render.join_plan(render.make_console(), plan)
    try:
        answer = input("Join and merge this store's history with the other's? [y/N] ")
    except EOFError:
        answer = ""
    if answer.strip().lower() not in ("y", "yes"):
        raise CliError("conflict", "Not joined: nothing was changed.")
    return True


REGISTER_CLIENTS = ("claude-code", "claude-desktop", "codex", "gemini")
IMPORT_SOURCES = ("chatgpt", "claude", "markdown", "events", "export", "claude-code", "codex", "gemini", "memory")
AGENT_SOURCES = ("claude-code", "codex", "gemini")


def _import(st: Any, args: argparse.Namespace) -> Any:
    from store import adapters

    if args.source in AGENT_SOURCES:
        if args.namespace:
            raise CliError("invalid", f"--namespace does not apply to `import {args.source}`: sessions go to "
                                      f"agent:{args.source}:<project>:<session>.")
        with _progress(args, f"importing {args.source}") as progress:
            importer = getattr(adapters, f"import_{args.source.replace('-', '_')}")
            return _with_report(st, importer(st, args.path, with_tools=args.with_tools, progress=progress).to_dict())
    if args.path is None:
        raise CliError("invalid", f"`import {args.source}` needs a PATH.")
    if (args.source == "memory") != (args.memory_from is not None):
        raise CliError("invalid", "`import memory FILE` needs --from chatgpt|claude, and --from goes only with it.")
    if args.with_tools:
        raise CliError("invalid", "--with-tools applies to coding-agent sessions only.")
    with _progress(args, f"importing {args.source}") as progress:
        if args.source == "export":
            if args.namespace:
                raise CliError("invalid", "--namespace does not apply to `import export`: it keeps every scope.")
            return st.import_export(args.path, progress=progress)
        if args.source == "memory":
            report = adapters.import_memory(st, args.path, args.memory_from, namespace=args.namespace, progress=progress)
            return _with_report(st, dict(report.to_dict()))
        importer = getattr(adapters, f"import_{args.source}")
        return _with_report(st, importer(st, args.path, namespace=args.namespace, progress=progress).to_dict())


def _with_report(st: Any, summary: dict[str, Any]) -> dict[str, Any]:
    """The summary, and the kept report's lines (per file and conversation) shown after it."""
    if summary.get("import_id"):
        summary = {**summary, "report": st.import_report(summary["import_id"])["entries"]}
    return summary


def _export(st: Any, args: argparse.Namespace) -> Any:
    if args.format == "memory-profile":
        return _memory_profile(st, args)
    if args.write_profile:
        raise UsageError("--yes goes with --format memory-profile", args.parser)
    with _progress(args, "exporting") as progress:
        return st.export(args.out, scopes=args.scope or None, progress=progress, format=args.format)


def _memory_profile(st: Any, args: argparse.Namespace) -> Any:
    """The memory as one text: shown, then written to --out when confirmed (a terminal) or with --yes."""
    from store.adapters.memory import memory_profile
    from store.files import open_private, refuse_store_target

    result = memory_profile(st, args.scope or None)
    args.render = "memory_profile"
    write = args.write_profile
    if not write and not args.json and _at_terminal():
        from . import render

        render.memory_profile(render.make_console(), {**result, "path": args.out, "written": False, "asking": True})
        write = input(f"Write it to {args.out}? [y/N] ").strip().lower() in ("y", "yes")
        result["shown"] = True
    if write:
        refuse_store_target(Path(args.out), st.path)
        try:
            with open_private(Path(args.out), "w") as fh:
                fh.write(result["text"])
        except OSError as exc:
            raise CliError("invalid", f"cannot write {args.out!r}: {exc.strerror or exc}") from None
    return {**result, "path": args.out, "written": bool(write)}


def _plan_or_yes(p: _Parser, resume: bool = False) -> None:
    p.add_argument("--reason", metavar="R", help="why (required with --yes)")
    mode = p.add_mutually_exclusive_group(required=True)
    mode.add_argument("--plan", action="store_true", help="show what would be erased; erase nothing")
    mode.add_argument("--yes", action="store_true", help="erase")
    if resume:
        mode.add_argument("--resume", metavar="DEL_ID", help="continue an interrupted bulk deletion (its recorded "
                                                             "pages; the filter is not evaluated again)")


def _bulk_filters(p: _Parser) -> None:
    """`pcp delete` by filter: every matching page (no limit, no ranking); flags, never an expression language."""
    f = p.add_argument_group("filters (instead of PAGE_ID: every page they select)")
    f.add_argument("--scope", action="append", metavar="NS", help="repeatable")
    f.add_argument("--query", metavar="Q", help="pages any revision of which matches Q (needs --mode)")
    f.add_argument("--mode", metavar="text|exact", help="text: every word of Q; exact: Q as a substring")
    f.add_argument("--status", action="append", type=_comma_list, metavar="S,S",
                   help="lifecycle statuses (default: every status, archived and tombstoned included)")
    for flag, meta in (("--actor-type", "A"), ("--media-type", "T"), ("--relation-type", "T")):
        f.add_argument(flag, action="append", type=_comma_list, metavar=meta, help="repeatable")
    f.add_argument("--observed-before", type=_timestamp, metavar="TS", help="happened (observed_at, else stored) before TS")
    f.add_argument("--observed-after", type=_timestamp, metavar="TS", help="happened at or after TS")
    f.add_argument("--created-before", type=_timestamp, metavar="TS", help="stored before TS")
    f.add_argument("--created-after", type=_timestamp, metavar="TS", help="stored at or after TS")
    f.add_argument("--in", dest="in_page", metavar="PAGE_ID", help="this page and every page it contains")
    p.add_argument("--plan-digest", metavar="D", help="with --yes and filters: the digest --plan printed")
    p.add_argument("--batch-size", type=_int_at_least(1, "--batch-size"), metavar="N",
                   help="at most N pages erased per transaction (default 200; fewer when pages are slow to erase)")


# --- subcommands (each returns the JSON document) -------------------------------------------------


def _scope_delete(st: Any, args: argparse.Namespace) -> Any:
    if args.plan:
        args.render = "delete_plan"
        return st.plan_delete_scope(args.namespace)
    with _progress(args, f"deleting {args.namespace}") as progress:
        return st.delete_scope(args.namespace, args.reason, **_given(progress=progress))


def _content_kwargs(args: argparse.Namespace) -> dict[str, Any]:
    kwargs = _given(content=args.text, media_type=args.media_type, observed_at=args.observed_at)
    if args.source_ref:
        kwargs["source_refs"] = [{"uri": uri} for uri in args.source_ref]
    if getattr(args, "derived_from", None):
        kwargs["provenance"] = [{"operation": "derive", "input_revision_ids": list(args.derived_from)}]
    return kwargs


def _write(st: Any, args: argparse.Namespace) -> Any:
    kwargs = _content_kwargs(args)
    facets = dict(args.facets or {})
    if args.title is not None:
        facets["title"] = args.title
    if args.facets is not None or args.title is not None:
        kwargs["facets"] = facets
    if args.relation:
        kwargs["relations"] = list(args.relation)
    return st.write_page(args.namespace, **kwargs, **_given(idempotency_key=args.idempotency_key))


def _revise(st: Any, args: argparse.Namespace) -> Any:
    kwargs = _content_kwargs(args)
    if args.facets is not None:
        kwargs["facets"] = dict(args.facets)
    if args.title is not None:
        if "facets" not in kwargs:  # a new title keeps the other facets of the expected revision
            current = st.read_pages([args.expected], projections=("manifest",))["results"][0]
            if "error" in current:
                raise CliError(current["error"].get("code", "not_found"), current["error"].get("message", ""))
            kwargs["facets"] = dict(current["revision"].get("facets") or {})
        kwargs["facets"]["title"] = args.title
    return st.revise_page(args.page_id, args.expected, **kwargs, **_given(idempotency_key=args.idempotency_key))


def _read(st: Any, args: argparse.Namespace) -> Any:
    projections = _flat(args.projection)
    return st.read_pages(list(args.ids), **_given(projections=tuple(projections) if projections else None,
                                                  max_chars=args.max_chars, offset=args.offset))


def _search(st: Any, args: argparse.Namespace) -> Any:
    from store.validate import query

    query(args.query)  # refused before any work; the store's search applies the same bound
    filters = _given(lifecycle_status=_flat(args.status) or None, relation_types=_flat(args.relation_type) or None,
                     media_types=_flat(args.media_type) or None, actor_types=_flat(args.actor_type) or None,
                     created_after=args.after, created_before=args.before,
                     observed_after=args.observed_after, observed_before=args.observed_before)
    return st.search_pages(query=args.query or "", scopes=tuple(args.scope or ()), mode=args.mode or "auto",
                           filters=filters or None, all_revisions=args.all_revisions,
                           **_given(limit=args.limit, cursor=args.cursor, context_id=args.context))


BULK_FLAGS = ("scope", "query", "mode", "status", "actor_type", "media_type", "relation_type", "observed_before",
              "observed_after", "created_before", "created_after", "in_page")


def _bulk_filter(args: argparse.Namespace) -> dict[str, Any]:
    """The store's bulk-deletion filter from the flags given (empty when none is)."""
    return _given(scopes=args.scope or None, query=args.query, mode=args.mode,
                  lifecycle_status=_flat(args.status) or None, actor_types=_flat(args.actor_type) or None,
                  media_types=_flat(args.media_type) or None, relation_types=_flat(args.relation_type) or None,
                  observed_before=args.observed_before, observed_after=args.observed_after,
                  created_before=args.created_before, created_after=args.created_after, in_page=args.in_page)


def _check_delete_usage(args: argparse.Namespace) -> None:
    """`pcp delete`: one page, or filters, or --resume; each with only the options that apply to it."""
    filtered = [f"--{name.replace('_', '-')}" if name != "in_page" else "--in"
                for name in BULK_FLAGS if getattr(args, name) not in (None, [])]
    if args.resume is not None:
        extra = filtered + (["PAGE_ID"] if args.page_id else []) + (["--plan-digest"] if args.plan_digest else [])
        if extra or args.cascade:
            raise UsageError(f"--resume continues the recorded pages; {', '.join(extra) or '--cascade'} does not "
                             "apply to it", args.parser)
        return
    if args.page_id and filtered:
        raise UsageError(f"give a PAGE_ID or filters ({', '.join(filtered)}), not both", args.parser)
    if args.page_id:
        if args.plan_digest or args.batch_size:
            raise UsageError("--plan-digest and --batch-size apply to a deletion by filter", args.parser)
        return
    if not filtered:
        raise UsageError("give a PAGE_ID, filters (--scope, --query, --status, ... see --help) or --resume DEL_ID",
                         args.parser)
    if args.cascade:
        raise UsageError("--cascade applies to one PAGE_ID, not to a deletion by filter", args.parser)
    if args.yes and not args.plan_digest:
        raise UsageError("--yes with filters needs --plan-digest D: run with --plan first and pass its digest",
                         args.parser)


def _delete(st: Any, args: argparse.Namespace) -> Any:
    _check_delete_usage(args)
    if args.resume is None and args.page_id:
        if args.plan:
            args.render = "delete_plan"
            return st.plan_delete(args.page_id, cascade=args.cascade)
        return st.delete_page(args.page_id, args.reason, cascade=args.cascade)
    args.render = "bulk_receipt"
    if args.plan:
        args.render = "bulk_delete_plan"
        return st.plan_bulk_delete(_bulk_filter(args))
    if args.resume is not None:
        receipt_id = args.resume
        st.bulk_deletion(receipt_id)  # not_found before any bar is drawn
    else:
        started = st.begin_bulk_delete(_bulk_filter(args), args.reason, args.plan_digest,
                                       **_given(batch_size=args.batch_size))
        receipt_id = started["receipt_id"]
    return _erase_in_batches(st, args, receipt_id, first=args.resume is None)


def _erase_in_batches(st: Any, args: argparse.Namespace, receipt_id: str, first: bool) -> Any:
    """Run a recorded bulk deletion with a bar on stderr; Ctrl-C stops it between batches (whole pages only).

    A second Ctrl-C stops at once: the batch under way is rolled back, so whole pages only still holds."""
    import signal
    import threading

    stop = threading.Event()
    previous = None

    def on_interrupt(signum: int, frame: Any) -> None:
        if stop.is_set():
            raise KeyboardInterrupt
        stop.set()

    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGINT, on_interrupt)
    try:
        with _progress(args, "deleting") as bar:
            def progress(done: int, total: int | None, what: str = "pages") -> None:
                if bar is not None:
                    bar(done, total, what)
                if stop.is_set():
                    raise KeyboardInterrupt

            try:
                run = st.run_bulk_delete if first else st.resume_bulk_delete  # (a resume is audited as one)
                return run(receipt_id, progress=progress)
            except KeyboardInterrupt:
                status = st.bulk_deletion(receipt_id)
                raise KeyboardInterrupt(
                    f"stopped after {status['completed']} pages (whole pages only); continue with: "
                    f"pcp delete --resume {receipt_id}") from None
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)


BUNDLE_KEYS = ("text", "digest", "bytes", "tokens", "tokens_exact", "entries", "cut", "warnings")
COPY_KEYS = ("handoff_id", "label", "digest", "continuation_of", "text", "file", "clipboard", "bytes", "tokens",
             "entries", "warnings")


def _bundle(st: Any, args: argparse.Namespace) -> Any:
    result = st.bundle(list(args.ids), query=args.query, scopes=tuple(args.scope or ()), max_tokens=args.max_tokens)
    document = {k: result[k] for k in BUNDLE_KEYS}
    if args.out is not None:
        from store.files import open_private, refuse_store_target

        refuse_store_target(Path(args.out), st.path)
        try:
            with open_private(Path(args.out), "w") as fh:
                fh.write(result["text"])
        except OSError as exc:
            raise CliError("invalid", f"cannot write {args.out!r}: {exc.strerror or exc}") from None
    return document if args.json else {**document, "out": args.out}


def _copy(st: Any, args: argparse.Namespace) -> Any:
    from .clipboard import Clipboard

    clipboard = Clipboard()
    if args.continue_label is not None:
        result = st.copy_continue(args.continue_label, list(args.ids), max_tokens=args.max_tokens,
                                  strict=args.strict, clipboard=clipboard)
    else:
        result = st.copy(list(args.ids), query=args.query, scopes=tuple(args.scope or ()), label=args.label,
                         max_tokens=args.max_tokens, strict=args.strict, clipboard=clipboard)
    document = {k: result[k] for k in COPY_KEYS}
    if args.json:
        return document
    detail = clipboard.report.detail if clipboard.report else "not copied to a clipboard"
    return {**document, "cut": result.get("cut", []), "clipboard_detail": detail}


def _verify(st: Any, args: argparse.Namespace) -> Any:
    if args.source == "-":
        stream = sys.stdin
        if stream is None:
            raise CliError("invalid", "standard input is not available")
        raw = stream.buffer.read() if hasattr(stream, "buffer") else stream.read()
        text = _decode(raw, "standard input") if isinstance(raw, bytes) else raw
    else:
        try:
            with open(args.source, "rb") as fh:
                text = _decode(fh.read(), repr(args.source))
        except OSError as exc:
            raise CliError("invalid", f"cannot read {args.source!r}: {exc.strerror or exc}") from None
    return st.verify(text)


@contextlib.contextmanager
def _progress(args: argparse.Namespace, description: str):
    """A Rich progress bar on stderr for people at a terminal; None (no callback) otherwise."""
    if args.json or not sys.stderr.isatty():
        yield None
        return
    from . import render

    with render.progress(description) as update:
        yield update


def _finish_index_upgrade(st: Any, json_mode: bool) -> None:
    """A store written by an older pcp is re-indexed before its first command (resumable if cut short).

    A person at a terminal sees a progress bar on stderr; a script sees two lines there (none with --json)."""
    if st.index_upgrade_status() is None:
        return
    import store

    owner = st.with_session(store.AccessSession.owner())  # the user running pcp owns the file
    if sys.stderr.isatty():
        from . import render

        with render.progress("upgrading the search index") as update:
            owner.upgrade_index(progress=update)
        return
    if not json_mode:
        sys.stderr.write(f"{PROG}: upgrading the search index of this store (a store written by an older pcp)…\n")
        sys.stderr.flush()
    result = owner.upgrade_index()
    if not json_mode:
        sys.stderr.write(f"{PROG}: search index upgraded ({result['total']:,} revisions).\n")
        sys.stderr.flush()


# --- input, output, errors -----------------------------------------------------------------------


def _read_content(args: argparse.Namespace) -> str | None:
    """The content from --content, --file or --stdin (None when none is given)."""
    if getattr(args, "content", None) is not None:
        return args.content
    if getattr(args, "file", None) is not None:
        try:
            with open(args.file, "rb") as fh:
                data = fh.read()
        except OSError as exc:
            raise CliError("invalid", f"cannot read {args.file!r}: {exc.strerror or exc}") from None
        return _decode(data, repr(args.file))
    if getattr(args, "stdin", False):
        stream = sys.stdin
        if stream is None:
            raise CliError("invalid", "standard input is not available")
        raw = stream.buffer.read() if hasattr(stream, "buffer") else stream.read()
        return _decode(raw, "standard input") if isinstance(raw, bytes) else raw
    return None


def _decode(data: bytes, what: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CliError("invalid", f"{what} is not UTF-8 text (byte {exc.start})") from None


def _json_default(value: Any) -> Any:
    if isinstance(value, (set, frozenset, tuple)):
        return sorted(value) if isinstance(value, (set, frozenset)) else list(value)
    return str(value)


def _emit_json(document: Any) -> None:
    try:
        text = json.dumps(document, ensure_ascii=False, indent=INDENT, default=_json_default)
        sys.stdout.write(text + "\n")
    except UnicodeEncodeError:  # a stdout that cannot take UTF-8: escape instead of failing
        sys.stdout.write(json.dumps(document, ensure_ascii=True, indent=INDENT, default=_json_default) + "\n")
    sys.stdout.flush()


def _fail(code: str, message: str, json_mode: bool) -> int:
    message = str(message) if message else code
    if json_mode:
        _emit_json({"error": {"code": code, "message": message}})
    else:
        sys.stderr.write(f"{PROG}: error: {' '.join(message.split())} ({code})\n")
        sys.stderr.flush()
    return 1


def _usage(exc: UsageError, json_mode: bool) -> int:
    prog = exc.parser.prog if exc.parser is not None else PROG
    if json_mode:
        _emit_json({"error": {"code": "usage", "message": f"{prog}: {exc.message}"}})
    else:
        if exc.parser is not None:
            exc.parser.print_usage(sys.stderr)
        sys.stderr.write(f"{prog}: error: {exc.message}\n")
    return 2


PATH_ARGS = {"db", "file", "path", "out", "source"}  # file names may hold any bytes; the store never keeps them


def _undecodable(args: argparse.Namespace) -> str | None:
    """The first argument whose text is not valid UTF-8 (Python keeps such bytes as lone surrogates)."""
    for name, value in sorted(vars(args).items()):
        if name in PATH_ARGS or name.startswith("_"):
            continue
        for item in value if isinstance(value, (list, tuple)) else [value]:
            if isinstance(item, str):
                try:
                    item.encode("utf-8")
                except UnicodeEncodeError as exc:
                    bad = os.fsencode(item[exc.start])
                    return f"The {name.replace('_', '-')} argument is not valid UTF-8 text (byte 0x{bad[0]:02x}); pass UTF-8."
    return None


def _refuse_undecodable(st: Any, args: argparse.Namespace) -> None:
    message = _undecodable(args)
    if message is not None:
        from store import Invalid
        from store.refusal import audit_refusal

        raise audit_refusal(st, str(args.command).replace("-", "_"), Invalid(message))


def _wants_json(argv: Sequence[str]) -> bool:
    head = list(argv[: list(argv).index("--")]) if "--" in argv else list(argv)
    return "--json" in head


def main(argv: Sequence[str] | None = None) -> int:
    """Run `pcp`; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if _is_hook_call(argv):
        return _hook_main(argv)
    json_mode = _wants_json(argv)
    try:
        return _run(argv, json_mode)
    except UsageError as exc:
        return _usage(exc, json_mode)
    except KeyboardInterrupt as exc:
        message = str(exc) or "interrupted"  # a bulk deletion says how far it got and how to resume
        if json_mode:
            _emit_json({"error": {"code": "interrupted", "message": message}})
        else:
            sys.stderr.write(f"{PROG}: {message}\n")
        return 130
    except BrokenPipeError:
        with contextlib.suppress(Exception):  # the reader went away; say nothing more
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115
        return 1
    except Exception as exc:  # noqa: BLE001 - the last line of defence: one line, never a traceback
        detail = " ".join(f"{type(exc).__name__}: {exc}".split())
        if json_mode:
            _emit_json({"error": {"code": "internal", "message": detail}})
        else:
            sys.stderr.write(f"{PROG}: internal error: {detail}\n")
        return 1


def _at_terminal() -> bool:
    return sys.stdin.isatty() and sys.stdout.isatty()


def _open_app(args: argparse.Namespace, json_mode: bool) -> int:
    """`pcp`, `pcp demo`, `pcp serve`: the app (it has no JSON output and always runs as the owner)."""
    where = args.parser if args.command else None
    if json_mode:
        raise UsageError("the app has no --json output; use a subcommand", where)
    if args.as_model or args.grant:
        raise UsageError("the app runs as the store's owner; --as-model and --grant apply to subcommands", where)
    from . import launch
    from .demo import demo_path

    if args.command == "demo" and not _at_terminal():
        raise UsageError("the app needs a terminal (run it from one, or use pcp serve)", where)
    if args.command == "serve":
        if not args.demo:  # each browser tab opens the store: it must be there (cli.md --db)
            try:
                _existing_store(args.db)
            except CliError as exc:
                return _fail(exc.code, exc.message, False)
        db = demo_path(args.db) if args.demo else launch.store_path(args.db)
        return launch.serve(db, args.port, demo=args.demo)
    if args.command == "demo":
        return launch.run_app(demo_path(args.db), demo=True)
    return launch.run_app(launch.store_path(args.db))


def mcp_store_path(db: str | None) -> Path:
    """The store `pcp mcp` serves (--db, else $PCP_DB, else the default path): it must exist, a model server
    never creates one, and a file that is not a pcp store is refused untouched."""
    return _existing_store(db)


def _mcp(args: argparse.Namespace, json_mode: bool) -> int:
    """`pcp mcp`: the MCP server (stdout belongs to the protocol; errors go to stderr)."""
    if json_mode:
        raise UsageError("pcp mcp speaks MCP on stdout and has no --json output", args.parser)
    if args.as_model or args.grant:
        raise UsageError("pcp mcp takes --client-id and --grant after the subcommand", args.parser)
    tokens = args.show_token or args.new_token
    if not tokens and not args.client_id:
        raise UsageError("pcp mcp needs --client-id ID", args.parser)
    if not tokens and not args.mcp_grants:
        raise UsageError("pcp mcp needs at least one --grant NS=PERMS", args.parser)
    try:
        path = mcp_store_path(args.db)
        if tokens:
            from .mcp_token import token

            print(token(path, new=args.new_token))
            return 0
    except CliError as exc:
        return _fail(exc.code, exc.message, False)
    try:
        from . import mcp_server
    except ImportError as exc:
        if (exc.name or "").split(".")[0] not in ("mcp", "mcp_types"):
            raise
        sys.stderr.write(f"{PROG}: the MCP server needs the mcp package: pip install 'pcp[mcp]'\n")
        return 1
    try:
        if args.http:
            return mcp_server.serve_http(path, args.client_id, args.mcp_grants, args.toolset, args.mcp_port)
        return mcp_server.serve(path, args.client_id, args.mcp_grants, args.toolset)
    except mcp_server.StartError as exc:
        return _fail(exc.code, exc.message, False)


def _register(args: argparse.Namespace, json_mode: bool) -> int:
    """`pcp register CLIENT`: the logic is in pcp_tui.register; here only options in, result out."""
    from . import register

    if args.as_model or args.grant:
        raise UsageError("pcp register takes --grant after the subcommand", args.parser)
    try:
        plan = register.register(
            args.client, mcp_store_path(args.db), grants=args.register_grants, write_ns=args.write_ns,
            toolset=args.register_toolset, name=args.server_name, client_id=args.register_client_id,
            config=args.config_path, print_only=args.print_only, interactive=not json_mode and _at_terminal())
    except register.RegisterError as exc:
        if exc.usage:
            raise UsageError(exc.message, args.parser) from None
        return _fail(exc.code, exc.message, json_mode)
    except CliError as exc:
        return _fail(exc.code, exc.message, json_mode)
    if json_mode:
        _emit_json(plan.to_dict())
        return 0
    from . import render

    render.registered(render.make_console(), plan.to_dict(), args.print_only)
    return 0


def _creates_store(args: argparse.Namespace) -> bool:
    """Whether this command may create a missing store (it writes pages, scopes or imports; cli.md --db)."""
    from store import paths

    name = f"scope {args.scope_command}" if args.command == "scope" else str(args.command)
    return name in paths.CREATING_COMMANDS


def _existing_store(db: str | None) -> Path:
    """The store a command that never creates one works on (--db, $PCP_DB, the default): it must be there."""
    from store import PcpError, paths

    try:
        path = paths.chosen_path(db)
        paths.require_store(path, create=False)
    except PcpError as exc:
        raise CliError(exc.code, exc.message) from None
    return path


def _run(argv: list[str], json_mode: bool) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except CliError as exc:
        return _fail(exc.code, exc.message, json_mode)
    except SystemExit as exc:  # --help printed its text
        return exc.code if isinstance(exc.code, int) else 0
    json_mode = json_mode or bool(args.json)
    if args.command in ("demo", "serve") or (args.command is None and not json_mode and _at_terminal()):
        return _open_app(args, json_mode)
    if args.command is None:
        if json_mode:
            raise UsageError("a subcommand is required with --json", parser)
        parser.print_help()  # not at a terminal (a pipe, a script): the app cannot run here
        return 0
    if args.command == "mcp":
        return _mcp(args, json_mode)
    if args.command == "capture":
        return _capture(args, json_mode)
    if args.command == "register":
        return _register(args, json_mode)
    if args.grant and not args.as_model:
        raise UsageError("--grant needs --as-model", parser)
    if getattr(args, "yes", False) and args.command != "sync" and not getattr(args, "reason", None):
        raise UsageError("--reason is required with --yes", args.parser)
    if args.command == "copy" and args.continue_label is not None and (args.query is not None or args.scope):
        raise UsageError("--query and --scope choose pages for a new chat (--label), not for --continue", args.parser)
    if args.command in ("write", "ingest") and not (args.content is not None or args.file or args.stdin
                                                    or args.source_ref):
        raise UsageError("one of the arguments --content --file --stdin (or --source-ref) is required",
                         args.parser)

    import store

    try:
        args.text = _read_content(args)
        session = None
        if args.as_model:
            session = store.AccessSession.model_client(args.as_model, store.AccessSession.parse_grants(args.grant))
        path = store.paths.chosen_path(args.db)
        st = store.Store.open(path, session=session, create=_creates_store(args))
        try:
            _refuse_undecodable(st, args)
            _finish_index_upgrade(st, json_mode)
            result = args.func(st, args)
        finally:
            with contextlib.suppress(Exception):
                st.close()
    except store.PcpError as exc:
        return _fail(getattr(exc, "code", "invalid"), getattr(exc, "message", None) or str(exc), json_mode)
    except CliError as exc:
        return _fail(exc.code, exc.message, json_mode)
    except BrokenPipeError:
        raise
    except OSError as exc:
        where = f" {exc.filename!r}" if getattr(exc, "filename", None) else ""
        return _fail("invalid", f"{exc.strerror or exc}{where}", json_mode)
    except ValueError as exc:  # a value the store could not parse
        return _fail("invalid", str(exc), json_mode)
    if json_mode:
        _emit_json(result)
    else:
        from . import render

        getattr(render, args.render)(render.make_console(), result)
    return getattr(args, "exit_status", lambda _: 0)(result)


if __name__ == "__main__":
    sys.exit(main())
