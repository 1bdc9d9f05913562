"""`pcp sync`: through a folder your machines share, or with another store file; pairing and unpairing."""

from __future__ import annotations

from typing import Any

import click

from ..base import Group, command
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
@click.option("--join", metavar="CODE", help="pair with the store that showed CODE (an empty store adopts its owner)")
@click.option("--unpair", metavar="STORE", help="refuse a lost machine's store (its id) from now on")
@click.option("--rekey", is_flag=True, help="with --pair: a fresh key (after --unpair; --join it everywhere)")
@click.option("--status", is_flag=True, help="this store's id, its peers, last sync, conflicts")
@click.pass_context
def sync(ctx: click.Context, folder: str | None, with_db: str | None, pair: bool, join: str | None,
         unpair: str | None, rekey: bool, status: bool) -> int:
    """Sync with your other stores: through a folder (DIR), or with another store file (--with)."""
    one_of(ctx, **{"--with": with_db, "--pair": pair, "--join": join, "--unpair": unpair, "--status": status})
    if not status:
        if with_db and folder:
            raise click.UsageError("give either DIR or --with OTHER.db", ctx)
        if not with_db and not folder:
            raise click.UsageError("give the sync folder DIR (or --with OTHER.db)", ctx)
        if rekey and not pair:
            raise click.UsageError("--rekey goes with --pair", ctx)

    def run(st: Any) -> Any:
        if status:
            return {"action": "status", **st.sync_status()}
        if with_db:
            return {"action": "with", **st.sync_with(with_db)}
        if pair:
            return {"action": "pair", **st.sync_pair(folder, rekey=rekey)}
        if join:
            joined = st.sync_join(folder, join)
            with progress(ctx, "syncing") as update:
                return {"action": "join", **joined, "sync": st.sync_folder(folder, progress=update)}
        if unpair:
            st.sync_unpair(folder, unpair)
            with progress(ctx, "syncing") as update:
                return {"action": "unpair", "store_id": unpair, "sync": st.sync_folder(folder, progress=update)}
        with progress(ctx, "syncing") as update:
            return {"action": "folder", **st.sync_folder(folder, progress=update)}

    return run_store(ctx, run, "synced", creates=True)
