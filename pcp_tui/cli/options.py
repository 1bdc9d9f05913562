"""Option groups several commands share (as sqlite-utils' output_options): each rule written once."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import click

from .base import AtLeast, CommaList, JsonObject, Timestamp

F = TypeVar("F", bound=Callable[..., Any])

# A list longer than its maximum is clamped by the store; the CLI says so (human output only).
LIST_MAXIMUM = 100


def _apply(fn: F, options: Sequence[Callable[[Any], Any]]) -> F:
    for option in reversed(options):
        fn = option(fn)
    return fn


def paging(fn: F) -> F:
    """--limit N --cursor C (keyset paging)."""
    return _apply(fn, [
        click.option("--limit", type=AtLeast(1), metavar="N",
                     help=f"at most N items (default 20; more than {LIST_MAXIMUM} is clamped to {LIST_MAXIMUM})"),
        click.option("--cursor", metavar="C", help="continue where the last page of results ended (its next_cursor)"),
    ])


def content(write: bool) -> Callable[[F], F]:
    """Where the text comes from, and what describes it (write, revise, ingest)."""
    def decorate(fn: F) -> F:
        options = [
            click.option("--content", metavar="TEXT", help="the text itself"),
            click.option("--file", metavar="F", help="read the content from a UTF-8 file"),
            click.option("--stdin", is_flag=True, help="read the content from standard input"),
            click.option("--media-type", metavar="T", help="e.g. text/markdown (default text/plain)"),
            click.option("--source-ref", multiple=True, metavar="URI", help="repeatable: where the text came from"),
            click.option("--observed-at", type=Timestamp(), metavar="TS",
                         help="when it happened (RFC 3339), if not now"),
        ]
        if write:
            options += [
                click.option("--title", metavar="T", help="sets facets.title"),
                click.option("--facets", type=JsonObject(), metavar="JSON", help="a JSON object of facets"),
                click.option("--derived-from", multiple=True, metavar="REV",
                             help="repeatable: a revision this text was derived from (provenance)"),
            ]
        return _apply(fn, options)
    return decorate


def plan_or_yes(resume: bool = False) -> Callable[[F], F]:
    """The two steps of every erasure: --plan shows, --yes erases (with --reason); --resume continues one."""
    def decorate(fn: F) -> F:
        options = [
            click.option("--reason", metavar="R", help="why (required with --yes; kept in the receipt)"),
            click.option("--plan", is_flag=True, help="show what would be erased; erase nothing"),
            click.option("--yes", is_flag=True, help="erase"),
        ]
        if resume:
            options.append(click.option("--resume", metavar="DEL_ID", help=(
                "continue an interrupted bulk deletion (its recorded pages; the filter is not evaluated again)")))
        return _apply(fn, options)
    return decorate


def check_plan_or_yes(ctx: click.Context, plan: bool, yes: bool, reason: str | None, resume: str | None = None) -> None:
    """Exactly one of --plan, --yes (and --resume where it exists); --yes needs --reason."""
    chosen = [flag for flag, on in (("--plan", plan), ("--yes", yes), ("--resume", resume is not None)) if on]
    if not chosen:
        allowed = "--plan or --yes" + (" (or --resume DEL_ID)" if "resume" in ctx.params else "")
        raise click.UsageError(f"one of {allowed} is required", ctx)
    if len(chosen) > 1:
        raise click.UsageError(f"{chosen[0]} and {chosen[1]} cannot go together", ctx)
    if yes and not reason:
        raise click.UsageError("--reason is required with --yes", ctx)


def one_of(ctx: click.Context, **given: object) -> None:
    """At most one of these options (the names as flags)."""
    on = [name for name, value in given.items() if value not in (None, False, (), [])]
    if len(on) > 1:
        raise click.UsageError(f"{on[0]} and {on[1]} cannot go together", ctx)


def repeated_lists(flag: str, metavar: str, help: str) -> Callable[[F], F]:
    """A repeatable option whose values may each be a comma list."""
    return click.option(flag, multiple=True, type=CommaList(), metavar=metavar, help=help)


def bulk_filters(fn: F) -> F:
    """`pcp delete` by filter: every matching page (no limit, no ranking); flags, never an expression language."""
    return _apply(fn, [
        click.option("--scope", multiple=True, metavar="NS", help="filter: repeatable"),
        click.option("--query", metavar="Q", help="filter: pages any revision of which matches Q (needs --mode)"),
        click.option("--mode", metavar="text|exact", help="text: every word of Q; exact: Q as a substring"),
        repeated_lists("--status", "S,S", "filter: lifecycle statuses (default every status, archived and "
                                          "tombstoned included)"),
        repeated_lists("--actor-type", "A", "filter: repeatable"),
        repeated_lists("--media-type", "T", "filter: repeatable"),
        repeated_lists("--relation-type", "T", "filter: repeatable"),
        click.option("--observed-before", type=Timestamp(), metavar="TS",
                     help="filter: happened (observed_at, else stored) before TS"),
        click.option("--observed-after", type=Timestamp(), metavar="TS", help="filter: happened at or after TS"),
        click.option("--created-before", type=Timestamp(), metavar="TS", help="filter: stored before TS"),
        click.option("--created-after", type=Timestamp(), metavar="TS", help="filter: stored at or after TS"),
        click.option("--in", "in_page", metavar="PAGE_ID", help="filter: this page and every page it contains"),
        click.option("--plan-digest", metavar="D", help="with --yes and filters: the digest --plan printed"),
        click.option("--batch-size", type=AtLeast(1), metavar="N",
                     help="at most N pages erased per transaction (default 200; fewer when pages are slow to erase)"),
    ])


def selection(fn: F) -> F:
    """The pages of a bundle or a copy: ids in order, and what a search adds."""
    return _apply(fn, [
        click.argument("ids", nargs=-1, metavar="[ID]..."),
        click.option("--query", metavar="Q", help="add the active pages a search finds"),
        click.option("--scope", multiple=True, metavar="NS", help="repeatable: search (or list) these scopes"),
        click.option("--max-tokens", type=AtLeast(1), metavar="N",
                     help="token budget (estimated): later entries degrade to excerpt, summary, reference"),
    ])
