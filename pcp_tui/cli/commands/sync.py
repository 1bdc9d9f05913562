"""`pcp sync`: through a folder your machines share, or with another store file; pairing and unpairing."""

from __future__ import annotations

from typing import Any

import click

from .. import base
from ..base import CliError, Group, command, json_mode
from ..options import one_of
from ..run import progress, run_store


def register(cli: Group) -> None:
    cli.add_command(sync)


@command(example="pcp sync ~/Sync/pcp --pair          (shows a code)\n"
                       "pcp sync ~/Sync/pcp --join CODE     (on the other machine)\n"
                       "pcp sync ~/Sync/pcp                 (from then on)\n"
                       "pcp sync --with ~/other.db")
@click.argument("folder", metavar="[DIR]", required=False)
@click.option("--with", "with_db", metavar="OTHER.db", help="sync with another store file on this machine")
@click.option("--pair", is_flag=True, help="offer pairing: shows a one-time code to type on the other machine")
@click.option("--join", metavar="CODE", help="pair with the store that showed CODE (an empty store adopts its owner; "
                                            "a store with history shows what merges and asks)")
@click.option("--unpair", metavar="STORE", help="refuse a lost machine's store (its id) from now on, and move the "
                                                "folder key on without it")
@click.option("--yes", is_flag=True, help="with --join: merge this store's history without asking (scripts)")
@click.option("--rekey", is_flag=True, help="with --pair: a fresh key (after --unpair; --join it everywhere)")
@click.option("--status", is_flag=True, help="this store's id, its peers, last sync, conflicts")
@click.pass_context
def sync(ctx: click.Context, folder: str | None, with_db: str | None, pair: bool, join: str | None,
         unpair: str | None, yes: bool, rekey: bool, status: bool) -> int:
    """Sync with your other stores: through a folder (DIR), or with another store file (--with)."""
    one_of(ctx, **{"--with": with_db, "--pair": pair, "--join": join, "--unpair": unpair, "--status": status})
    if not status:
        if with_db and folder:
            raise click.UsageError("give either DIR or --with OTHER.db", ctx)
        if not with_db and not folder:
            raise click.UsageError("give the sync folder DIR (or --with OTHER.db)", ctx)
        if rekey and not pair:
            raise click.UsageError("--rekey goes with --pair", ctx)
        if yes and not join:
            raise click.UsageError("--yes goes with --join", ctx)

    def run(st: Any) -> Any:
        if status:
            return {"action": "status", **st.sync_status()}
        if with_db:
            return {"action": "with", **st.sync_with(with_db)}
        if pair:
            return {"action": "pair", **st.sync_pair(folder, rekey=rekey)}
        if join:
            merge = yes
            if not merge:
                plan = st.sync_join_plan(folder, join)
                if plan["merge"]:
                    merge = _ask_merge(ctx, plan)
            joined = st.sync_join(folder, join, merge=merge)
            with progress(ctx, "syncing") as update:
                return {"action": "join", **joined, "sync": st.sync_folder(folder, progress=update)}
        if unpair:
            unpaired = st.sync_unpair(folder, unpair)
            with progress(ctx, "syncing") as update:
                return {"action": "unpair", **unpaired, "sync": st.sync_folder(folder, progress=update)}
        with progress(ctx, "syncing") as update:
            return {"action": "folder", **st.sync_folder(folder, progress=update)}

    return run_store(ctx, run, "synced", creates=True)


def _ask_merge(ctx: click.Context, plan: dict[str, Any]) -> bool:
    """A store with history of its own joins only when the person confirms what merges (or gave --yes)."""
    if json_mode(ctx) or not base.at_terminal():
        raise CliError("conflict", "This store holds history of its own: `pcp sync DIR --join CODE` at a terminal shows "
                                   "what merges and asks; add --yes to merge without asking.")
    from .. import render

    render.join_plan(render.make_console(), plan)
    try:
        answer = input("Join and merge this store's history with the other's? [y/N] ")
    except EOFError:
        answer = ""
    if answer.strip().lower() not in ("y", "yes"):
        raise CliError("conflict", "Not joined: nothing was changed.")
    return True
