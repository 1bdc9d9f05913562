"""`pcp delete`: one page (with its plan), or every page a filter selects, in batches that can be resumed."""

from __future__ import annotations

import signal
import threading
from typing import TYPE_CHECKING, Any

import click

from ..base import present, Group, flat, given, command
from ..options import bulk_filters, check_plan_or_yes, plan_or_yes
from ..run import progress, run_store

if TYPE_CHECKING:
    from store import Store

FILTER_FLAGS = {"scope": "--scope", "query": "--query", "mode": "--mode", "status": "--status",
                "actor_type": "--actor-type", "media_type": "--media-type", "relation_type": "--relation-type",
                "observed_before": "--observed-before", "observed_after": "--observed-after",
                "created_before": "--created-before", "created_after": "--created-after", "in_page": "--in"}


def register(cli: Group) -> None:
    cli.add_command(delete)


@command(example="pcp delete pg_... --plan\n"
                       "pcp delete pg_... --yes --reason \"pasted a password\"\n"
                       "pcp delete --scope project:old --query harbor --mode text --plan\n"
                       "pcp delete --scope project:old --query harbor --mode text --yes --reason old "
                       "--plan-digest D")
@click.argument("page_id", required=False, metavar="[PAGE_ID]")
@click.option("--cascade", is_flag=True, help="also erase pages derived from it (one page only)")
@bulk_filters
@plan_or_yes(resume=True)
@click.pass_context
def delete(ctx: click.Context, /, page_id: str | None, cascade: bool, plan_digest: str | None, batch_size: int | None,
           reason: str | None, plan: bool, yes: bool, resume: str | None, **filters: Any) -> int:
    """Erase a page, or every page the filters select, for good (plan first)."""
    check_plan_or_yes(ctx, plan, yes, reason, resume)
    given_filters = [flag for name, flag in FILTER_FLAGS.items() if filters[name] not in (None, ())]
    _check_usage(ctx, page_id, cascade, plan_digest, batch_size, yes, resume, given_filters)
    if resume is None and page_id:
        if plan:
            return run_store(ctx, lambda st: st.plan_delete(page_id, cascade=cascade), "delete_plan")
        return run_store(ctx, lambda st: st.delete_page(page_id, present(reason, "--reason"), cascade=cascade),
                         "receipt")
    if plan:
        return run_store(ctx, lambda st: st.plan_bulk_delete(bulk_filter(filters)), "bulk_delete_plan")

    def erase(st: Store) -> Any:
        if resume is not None:
            st.bulk_deletion(resume)  # not_found before any bar is drawn
            return erase_in_batches(ctx, st, resume, first=False)
        started = st.begin_bulk_delete(bulk_filter(filters), present(reason, "--reason"),
                                       present(plan_digest, "--plan-digest"), **given(batch_size=batch_size))
        return erase_in_batches(ctx, st, started["receipt_id"], first=True)

    return run_store(ctx, erase, "bulk_receipt")


def _check_usage(ctx: click.Context, page_id: str | None, cascade: bool, plan_digest: str | None,
                 batch_size: int | None, yes: bool, resume: str | None, filtered: list[str]) -> None:
    """One page, or filters, or --resume; each with only the options that apply to it."""
    if resume is not None:
        extra = filtered + (["PAGE_ID"] if page_id else []) + (["--plan-digest"] if plan_digest else [])
        if extra or cascade:
            raise click.UsageError(f"--resume continues the recorded pages; {', '.join(extra) or '--cascade'} does "
                                   "not apply to it", ctx)
        return
    if page_id and filtered:
        raise click.UsageError(f"give a PAGE_ID or filters ({', '.join(filtered)}), not both", ctx)
    if page_id:
        if plan_digest or batch_size:
            raise click.UsageError("--plan-digest and --batch-size apply to a deletion by filter", ctx)
        return
    if not filtered:
        raise click.UsageError("give a PAGE_ID, filters (--scope, --query, --status, ... see --help) or "
                               "--resume DEL_ID", ctx)
    if cascade:
        raise click.UsageError("--cascade applies to one PAGE_ID, not to a deletion by filter", ctx)
    if yes and not plan_digest:
        raise click.UsageError("--yes with filters needs --plan-digest D: run with --plan first and pass its digest",
                               ctx)


def bulk_filter(f: dict[str, Any]) -> dict[str, Any]:
    """The store's bulk-deletion filter from the flags given (empty when none is)."""
    return given(scopes=list(f["scope"]) or None, query=f["query"], mode=f["mode"],
                 lifecycle_status=flat(f["status"]) or None, actor_types=flat(f["actor_type"]) or None,
                 media_types=flat(f["media_type"]) or None, relation_types=flat(f["relation_type"]) or None,
                 observed_before=f["observed_before"], observed_after=f["observed_after"],
                 created_before=f["created_before"], created_after=f["created_after"], in_page=f["in_page"])


def erase_in_batches(ctx: click.Context, st: Store, receipt_id: str, first: bool) -> Any:
    """Run a recorded bulk deletion with a bar on stderr; Ctrl-C stops it between batches (whole pages only).

    A second Ctrl-C stops at once: the batch under way is rolled back, so whole pages only still holds."""
    stop = threading.Event()
    previous = None

    def on_interrupt(signum: int, frame: Any) -> None:
        if stop.is_set():
            raise KeyboardInterrupt
        stop.set()

    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGINT, on_interrupt)
    try:
        with progress(ctx, "deleting") as bar:
            def report(done: int, total: int | None, what: str = "pages") -> None:
                if bar is not None:
                    bar(done, total, what)
                if stop.is_set():
                    raise KeyboardInterrupt

            try:
                run = st.run_bulk_delete if first else st.resume_bulk_delete  # (a resume is audited as one)
                return run(receipt_id, progress=report)
            except KeyboardInterrupt:
                status = st.bulk_deletion(receipt_id)
                raise KeyboardInterrupt(
                    f"stopped after {status['completed']} pages (whole pages only); continue with: "
                    f"pcp delete --resume {receipt_id}") from None
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)
