"""Re-indexing an older store (schema 1 -> 2; event dates for schema 7 -> 8) as a user runs it: bounded batches, each its own
IMMEDIATE transaction, so a killed upgrade resumes where the last committed batch ended.

The schema migration (store.db) only creates the new index and marks the old revisions; the
work itself happens here, started by the `pcp` command and the app, never by a model server.
"""

from __future__ import annotations

from . import index
from .constants import Progress
from .core import Call, Part, operation
from .errors import Forbidden
from .types import UpgradeResult, UpgradeStatus

DEFAULT_BATCH = 2000


class UpgradeOps(Part):
    """Re-indexing the revisions an older schema left, in resumable batches."""

    def index_upgrade_status(self) -> UpgradeStatus | None:
        """{"done", "total"} revisions while an index upgrade is pending; None when the index is current."""
        with self._db.atomic():
            state = index.pending_progress(self._db.cursor())
        return None if state is None else {"done": state[0], "total": state[1]}

    def upgrade_index(self, progress: Progress | None = None, batch: int = DEFAULT_BATCH) -> UpgradeResult:
        """Re-index every revision left by an older schema, `batch` revisions per transaction (owner only).

        Returns {"upgraded": revisions re-indexed by this call, "total": revisions of the upgrade}.
        Nothing to do returns {"upgraded": 0, "total": 0}.
        """
        if not self.session.is_owner:
            raise Forbidden("Only the owner may upgrade the store's index.")
        size = max(1, int(batch))
        status = self.index_upgrade_status()
        if status is None:
            return {"upgraded": 0, "total": 0}
        start, total = status["done"], status["total"]
        if progress:
            progress(start, total, "revisions")
        finished = False
        while not finished:
            finished = self._upgrade_batch(size)
            status = self.index_upgrade_status()
            if progress:
                progress(total if status is None else status["done"], total, "revisions")
        try:  # fold the WAL (and the dropped legacy index's pages) into the database file
            self._db.execute_sql("PRAGMA wal_checkpoint(TRUNCATE)")
        except Exception:  # noqa: BLE001 - a busy reader delays truncation; the next checkpoint completes it
            pass
        return {"upgraded": total - start, "total": total}

    @operation("upgrade_index", write=True)
    def _upgrade_batch(self, call: Call, size: int) -> bool:
        """One batch in one IMMEDIATE transaction (with its audit event); True when the upgrade is done."""
        cur = self._db.cursor()
        before = index.pending_progress(cur)
        done = index.pending_batch(cur, self._salt, size)
        after = index.pending_progress(cur)
        call.counts["revisions"] = (before[1] if after is None else after[0]) - before[0] if before else 0
        return done
