"""The `Store` facade: one object per store and session whose methods are the PCP Core operations of the
parts it is put together from (the package docstring, store/__init__.py, says how)."""


from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import Any

import peewee as pw

from .access import AccessSession
from .bulk_delete import BulkDeleteOps
from .constants import Progress
from .core import StoreContext, open_context
from .deletion import DeletionOps, ExportFiles
from .errors import Invalid
from .export import ExportOps
from .handoff import HandoffOps
from .handoff_ledger import LedgerOps
from .import_reports import ImportReportOps
from .importing import ImportOps
from .lifecycle import LifecycleOps
from .reads import ReadOps
from .search import SearchOps
from .sync import SyncOps
from .sync import sync_with as _sync_with
from .sync.folder import Folder
from .types import FolderSyncResult, PairOffer, SyncResult, SyncStatus
from .upgrade import UpgradeOps
from .writes import WriteOps


class Store:
    """The PCP Core operations on one SQLite file, as seen by one access session."""

    def __init__(self, ctx: StoreContext) -> None:
        self._ctx = ctx
        writes = WriteOps(ctx)
        reads = ReadOps(ctx)
        search = SearchOps(ctx)
        lifecycle = LifecycleOps(ctx)
        importing = ImportOps(ctx, writes)
        ledger = LedgerOps(ctx)
        handoffs = HandoffOps(ctx, search)
        exports = ExportOps(ctx, sources=[ledger])
        reports = ImportReportOps(ctx)
        deletion = DeletionOps(ctx, erasers=[ExportFiles(ctx), ledger, reports])
        bulk = BulkDeleteOps(ctx, search, deletion)
        upgrade = UpgradeOps(ctx)
        self.sync = SyncOps(ctx, exports, deletion, ledger)
        self.parts = (writes, reads, search, lifecycle, importing, ledger, handoffs, exports, deletion, bulk,
                      upgrade, reports, self.sync)

        # writes
        self.create_scope = writes.create_scope
        self.write_page = writes.write_page
        self.ingest_event = writes.ingest_event
        self.revise_page = writes.revise_page
        self.link_pages = writes.link_pages
        self.unlink = writes.unlink
        self.write_pages_bulk = writes.write_pages_bulk
        # reads
        self.read_pages = reads.read_pages
        self.list_scopes = reads.list_scopes
        self.list_pages = reads.list_pages
        self.count_pages = reads.count_pages
        self.describe_capabilities = reads.describe_capabilities
        self.doctor = reads.doctor
        self.audit_log = reads.audit_log
        # search
        self.search_pages = search.search_pages
        self.set_semantic = search.set_semantic
        self.semantic_status = search.semantic_status
        # lifecycle
        self.archive_page = lifecycle.archive_page
        self.restore_page = lifecycle.restore_page
        self.tombstone_page = lifecycle.tombstone_page
        self.untombstone_page = lifecycle.untombstone_page
        self.recommend_tombstone = lifecycle.recommend_tombstone
        self.list_recommendations = lifecycle.list_recommendations
        self.dismiss_recommendation = lifecycle.dismiss_recommendation
        self.suppress_pages = lifecycle.suppress_pages
        self.unsuppress_pages = lifecycle.unsuppress_pages
        self.suppression_contexts = lifecycle.suppression_contexts
        # deletion
        self.plan_delete = deletion.plan_delete
        self.plan_delete_scope = deletion.plan_delete_scope
        self.delete_page = deletion.delete_page
        self.delete_scope = deletion.delete_scope
        self.list_receipts = deletion.list_receipts
        # bulk deletion (by filter, in batches)
        self.plan_bulk_delete = bulk.plan_bulk_delete
        self.bulk_delete = bulk.bulk_delete
        self.begin_bulk_delete = bulk.begin_bulk_delete
        self.run_bulk_delete = bulk.run_bulk_delete
        self.resume_bulk_delete = bulk.resume_bulk_delete
        self.bulk_deletion = bulk.bulk_deletion
        self.stopped_bulk_deletions = bulk.stopped_bulk_deletions
        # export and import
        self.export = exports.export
        self.import_export = exports.import_export
        self.import_unit = importing.import_unit
        self.bulk_loading = importing.bulk_loading
        self.import_helper = importing.import_helper
        self.source_page_id = importing.source_page_id
        self.source_scope = importing.source_scope
        self.record_import = reports.record_import
        self.import_report = reports.import_report
        # handoffs and their ledger
        self.bundle = handoffs.bundle
        self.copy = handoffs.copy
        self.copy_continue = handoffs.copy_continue
        self.verify = handoffs.verify
        self.handoffs = ledger.handoffs
        self.handoff_copy_text = ledger.handoff_copy_text  # a copy's file, unsealed when the store is encrypted
        # re-indexing a store an older pcp wrote
        self.index_upgrade_status = upgrade.index_upgrade_status
        self.upgrade_index = upgrade.upgrade_index

    # --- sync between the owner's stores (store/sync) ---

    def sync_with(self, other_path: str | os.PathLike[str]) -> SyncResult:
        """Bring this store and the one at `other_path` (same owner, or one of them empty) to the same state."""
        self.sync.require_owner("sync_with")
        if not Path(other_path).expanduser().is_file():
            raise Invalid(f"No store file at {other_path}; to start a new store there, run a pcp command with --db first.")
        with type(self).open(other_path) as other:
            return _sync_with(self.sync, other.sync)

    def sync_status(self) -> SyncStatus:
        """This store's sync state: id, paired or not, peers and their last sync, pages in conflict, the stores
        on its list and any two that unpaired each other (the owner confirms which one is lost)."""
        self.sync.require_owner("sync_status")
        return self.sync.status()

    def sync_folder(self, folder: str | os.PathLike[str], progress: Progress | None = None) -> FolderSyncResult:
        """Read the other stores' change files in `folder`, then write this store's own (`pcp sync DIR`)."""
        self.sync.require_owner("sync_folder")
        return Folder(self.sync, folder).sync(progress)

    def sync_pair(self, folder: str | os.PathLike[str], rekey: bool = False) -> PairOffer:
        """Offer pairing through `folder`: returns the one-time code to type on the second machine."""
        self.sync.require_owner("sync_rekey" if rekey else "sync_pair")
        return Folder(self.sync, folder).pair(rekey)

    def sync_join_plan(self, folder: str | os.PathLike[str], code: str) -> dict[str, Any]:
        """What joining with `code` would merge (writes nothing): this store's scopes and page counts, the
        namespaces both stores hold, the chat labels both use and the names this store's get."""
        self.sync.require_owner("sync_join")
        return Folder(self.sync, folder).join_plan(code)

    def sync_join(self, folder: str | os.PathLike[str], code: str, merge: bool = False) -> dict[str, Any]:
        """Pair with the store that showed `code` (an empty store adopts its owner; a store with history of its
        own joins with merge=True, its owner id becoming an alias of the other's)."""
        self.sync.require_owner("sync_join")
        return Folder(self.sync, folder).join(code, merge)

    def sync_unpair(self, folder: str | os.PathLike[str], store_id: str) -> dict[str, Any]:
        """Refuse a lost store's change files from now on, on every store of the owner, and move the folder key
        on without it (between two stores that unpaired each other: confirm this one as the lost one)."""
        self.sync.require_owner("sync_unpair")
        return Folder(self.sync, folder).unpair(store_id)

    # --- opening ---

    @classmethod
    def open(cls, path: str | os.PathLike[str] | None = None, session: AccessSession | None = None,
             migrate: bool = True, create: bool = True) -> Store:
        """Open the store at `path` (default: $PCP_DB or the user data dir); a missing one is created only with
        `create` (else NotFound), a file that is not a pcp store is refused untouched (store/paths.py);
        migrate=False refuses a store an older pcp wrote (a model server never migrates)."""
        return cls(open_context(path, session, migrate, create))

    def with_session(self, session: AccessSession) -> Store:
        """The same store seen by another principal."""
        return type(self)(replace(self._ctx, session=session))

    def close(self) -> None:
        self._ctx.db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- what callers may read of the context ---

    @property
    def path(self) -> Path:
        return self._ctx.path

    @property
    def session(self) -> AccessSession:
        return self._ctx.session

    @property
    def owner_id(self) -> str:
        return self._ctx.owner_id

    @property
    def _db(self) -> pw.SqliteDatabase:
        """The database (tests and benchmarks run SQL on it directly)."""
        return self._ctx.db
