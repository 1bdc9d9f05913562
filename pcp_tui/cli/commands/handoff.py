"""Handing context to a chat (shared/spec/handoff.md): bundle, copy, handoffs, verify."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import click

from ..base import CliError, Group, given, json_mode, command
from ..options import paging, selection
from ..run import decode, read_stdin, run_store, write_out
from .pages import clamped

if TYPE_CHECKING:
    from store import Store

BUNDLE_KEYS = ("text", "digest", "bytes", "tokens", "tokens_exact", "entries", "cut", "warnings")
COPY_KEYS = ("handoff_id", "label", "digest", "continuation_of", "text", "file", "clipboard", "bytes", "tokens",
             "entries", "warnings")


def register(cli: Group) -> None:
    for cmd in (bundle, copy, handoffs, verify):
        cli.add_command(cmd)


@command(example="pcp bundle --scope project:thesis --max-tokens 4000 --out context.md")
@selection
@click.option("--out", metavar="F", help="write the bundle to F instead of standard output")
@click.pass_context
def bundle(ctx: click.Context, ids: tuple[str, ...], query: str | None, scope: tuple[str, ...],
           max_tokens: int | None, out: str | None) -> int:
    """Render pages as one bundle to paste into a chat (records nothing)."""
    as_json = json_mode(ctx)

    def run(st: Store) -> Any:
        result = st.bundle(list(ids), query=query, scopes=tuple(scope), max_tokens=max_tokens)
        fields: Mapping[str, Any] = result
        document = {k: fields[k] for k in BUNDLE_KEYS}
        if out is not None:
            write_out(st, out, result["text"])
        return document if as_json else {**document, "out": out}

    return run_store(ctx, run, "bundle")


@command(example="pcp copy pg_A pg_B --label \"Claude: thesis chapter 3\"\n"
                       "pcp copy --continue \"Claude: thesis chapter 3\"      (only what changed since)")
@selection
@click.option("--label", metavar="L", help="name of the target chat, e.g. \"Claude: thesis chapter 3\"")
@click.option("--continue", "continue_label", metavar="L", help="continue the chat labelled L")
@click.option("--strict", is_flag=True, help="refuse (exit 1) when there are warnings")
@click.pass_context
def copy(ctx: click.Context, ids: tuple[str, ...], query: str | None, scope: tuple[str, ...], max_tokens: int | None,
         label: str | None, continue_label: str | None, strict: bool) -> int:
    """Copy a bundle (or, with --continue, what changed) to the clipboard and record it."""
    if label is None and continue_label is None:
        raise click.UsageError("one of --label L (a new chat) or --continue L is required", ctx)
    if label is not None and continue_label is not None:
        raise click.UsageError("--label and --continue cannot go together", ctx)
    if continue_label is not None and (query is not None or scope):
        raise click.UsageError("--query and --scope choose pages for a new chat (--label), not for --continue", ctx)
    as_json = json_mode(ctx)

    def run(st: Store) -> Any:
        from ...clipboard import Clipboard

        clipboard = Clipboard()
        if continue_label is not None:
            result = st.copy_continue(continue_label, list(ids), max_tokens=max_tokens, strict=strict,
                                      clipboard=clipboard)
        else:
            result = st.copy(list(ids), query=query, scopes=tuple(scope), label=label, max_tokens=max_tokens,
                             strict=strict, clipboard=clipboard)
        fields: Mapping[str, Any] = result
        document = {k: fields[k] for k in COPY_KEYS}
        if as_json:
            return document
        detail = clipboard.report.detail if clipboard.report else "not copied to a clipboard"
        return {**document, "cut": result.get("cut", []), "clipboard_detail": detail}

    return run_store(ctx, run, "copied")


@command(example="pcp handoffs --label \"Claude: thesis chapter 3\"")
@click.option("--page", metavar="ID", help="only the copies that carried this page or revision")
@click.option("--label", metavar="L", help="only the copies for this chat")
@paging
@click.pass_context
def handoffs(ctx: click.Context, page: str | None, label: str | None, limit: int | None, cursor: str | None) -> int:
    """The handoff ledger, newest first."""
    return run_store(ctx, lambda st: st.handoffs(**given(page_id=page, label=label, limit=clamped(limit),
                                                          cursor=cursor)), "handoffs")


@command(example="pbpaste | pcp verify\npcp verify pasted.txt")
@click.argument("source", metavar="[FILE]", required=False, default="-")
@click.pass_context
def verify(ctx: click.Context, source: str) -> int:
    """Check a pasted bundle or continuation (exit 1 when a digest does not match); - or nothing: stdin."""
    if source == "-":
        text = read_stdin()
    else:
        try:
            with open(source, "rb") as fh:
                text = decode(fh.read(), repr(source))
        except OSError as exc:
            raise CliError("invalid", f"cannot read {source!r}: {exc.strerror or exc}") from None
    return run_store(ctx, lambda st: st.verify(text), "verified",
                     exit_status=lambda result: 0 if result.get("digest_ok") else 1)
