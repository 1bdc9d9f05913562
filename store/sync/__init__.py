"""Sync between the owner's own stores (issue 17): the records that travel (records.py), applying them
once (ops.py), two stores on one machine (`sync_with`) and a shared folder (folder.py)."""

from __future__ import annotations

from typing import Any

from ..types import SyncApplied, SyncResult
from .ops import SyncOps, conflicts_of, is_empty, store_id

__all__ = ["SyncOps", "conflicts_of", "is_empty", "pull", "store_id", "sync_with"]


def pull(into: SyncOps, source: SyncOps, relay: bool = True, added: dict[str, Any] | None = None,
         skip: dict[str, Any] | None = None) -> SyncApplied:
    """Take into `into` what `source` has that `into` has not taken from it yet (one snapshot of the source;
    `into` writes in groups). `added` is filled with the rowid ranges `into` wrote; `skip` (ranges `source`
    wrote from `into`'s records in this same sync) is left out."""
    peer = source.store_id
    since = into.marks(peer)
    with source._db.atomic():  # one snapshot of the source while the records stream over
        upto, recs = source.outgoing(since, skip)
        result = into.apply(peer, recs, upto, added=added)
    into.finish_erasures(result)
    return result


def sync_with(mine: SyncOps, other: SyncOps) -> SyncResult:
    """Both stores end with the union of what they hold (the same owner's, or one of them empty)."""
    if mine.store_id == other.store_id:
        raise _same_store()
    side = mine.check_owner(other.owner_id, is_empty(other.ctx), other.owner_ids())
    if side == "theirs":
        other.check_owner(mine.owner_id, False, mine.owner_ids())
    added: dict[str, Any] = {}
    taken = pull(mine, other, added=added)
    given = pull(other, mine, skip=added)  # what `mine` just took from `other` does not go back
    mine.finished()
    other.finished()
    return {"peer": other.store_id, "owner_id": mine.owner_id, "adopted_owner": side == "adopted",
            "taken": taken, "given": given}


def _same_store() -> Any:
    from ..errors import Invalid

    return Invalid("That is this same store; sync needs another store of yours.")
