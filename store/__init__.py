"""PCP Core store over Peewee/SQLite: one `Store` facade returning plain data.

Layers point one way (pcp_tui -> store -> ctxpack); this package never imports Textual or Rich.

How a Store is put together: one `StoreContext` (database, models, session, owner id, index
salt, path) and one part per area, each given the context and the other parts it needs:

    writes     WriteOps(ctx)                      scopes, pages, revisions, events, relations, bulk
    reads      ReadOps(ctx)                       read_pages, list_scopes, list_pages, doctor, audit
    search     SearchOps(ctx)                     search_pages
    lifecycle  LifecycleOps(ctx)                  archive, tombstone, recommendations, suppressions
    importing  ImportOps(ctx, writes)             import units for the adapters
    ledger     LedgerOps(ctx)                     the handoff ledger: listing, erasing copies, export
    handoffs   HandoffOps(ctx, search)            bundle, copy, copy_continue, verify
    exports    ExportOps(ctx, sources=[ledger])   export and import_export, ledger records included
    deletion   DeletionOps(ctx, erasers=[export files, ledger])
    bulk       BulkDeleteOps(ctx, search, deletion) forgetting by filter, in batches (store/bulk_delete.py)
    upgrade    UpgradeOps(ctx)                    re-indexing a store an older pcp wrote

Deletion names export files and rewrites handoff copies, and exports carry the ledger, because
those participants are passed in here, not because of any class order.

Every operation returns plain data; its shape is a TypedDict of store/types.py (exported here),
e.g. `search_pages -> SearchResult` whose `hits` are `Hit`s.
"""

from __future__ import annotations

import importlib
import importlib.util
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # what the package offers, as type checkers see it; at run time each name is imported
    # on first use (below), so `import store.paths` or `from store import PcpError` loads only what it needs
    from .access import AccessSession as AccessSession
    from .constants import (
        ALL_PERMISSIONS as ALL_PERMISSIONS, BATCH as BATCH, DERIVATION_TYPES as DERIVATION_TYPES,
        LIFECYCLE_STATUSES as LIFECYCLE_STATUSES, LIMITS as LIMITS, OWNER_ONLY as OWNER_ONLY,
        RECOMMENDED_RELATION_TYPES as RECOMMENDED_RELATION_TYPES, UNTITLED as UNTITLED, Progress as Progress,
        chunks as chunks,
    )
    from .core import StoreContext as StoreContext, default_path as default_path
    from .errors import (
        Conflict as Conflict, Cycle as Cycle, Forbidden as Forbidden, Invalid as Invalid,
        LimitExceeded as LimitExceeded, NotFound as NotFound, PcpError as PcpError, Unsupported as Unsupported,
    )
    from .importing import ImportUnit as ImportUnit, PageRef as PageRef
    from .reads import PROJECTIONS as PROJECTIONS, PROTOCOL_VERSION as PROTOCOL_VERSION, SEARCH_MODES as SEARCH_MODES
    from .titles import page_title as page_title, shown_title as shown_title
    from .types import (
        Actor as Actor, AuditEvent as AuditEvent, AuditLog as AuditLog, BulkDeletePlan as BulkDeletePlan,
        BulkDeleteReceipt as BulkDeleteReceipt, StoppedBulkDeletion as StoppedBulkDeletion,
        StoppedBulkDeletions as StoppedBulkDeletions, BulkPage as BulkPage, BulkWriteResult as BulkWriteResult,
        BundleCut as BundleCut, BundleEntry as BundleEntry, BundleResult as BundleResult,
        BundleWarning as BundleWarning, Capabilities as Capabilities, CapabilityFlags as CapabilityFlags,
        CopyResult as CopyResult, DeletePlan as DeletePlan, DoctorReport as DoctorReport, EraserPlan as EraserPlan,
        ErasurePlan as ErasurePlan, ErrorInfo as ErrorInfo, ExportCounts as ExportCounts,
        ExportFileRef as ExportFileRef, ExportResult as ExportResult, FtsState as FtsState, Handoff as Handoff,
        HandoffList as HandoffList, HandoffRef as HandoffRef, HistoryEntry as HistoryEntry, Hit as Hit,
        LifecycleStep as LifecycleStep, PageLifecycle as PageLifecycle, SuppressionNote as SuppressionNote,
        ImportExportResult as ImportExportResult, ImportRecorded as ImportRecorded,
        ImportReportEntry as ImportReportEntry, ImportReportResult as ImportReportResult,
        ImportSummary as ImportSummary, LinkResult as LinkResult, PageList as PageList, PageSummary as PageSummary,
        Payload as Payload, ProvenanceEvent as ProvenanceEvent, ReadItem as ReadItem, ReadResult as ReadResult,
        Receipt as Receipt, PageCount as PageCount, ReceiptList as ReceiptList, RecommendResult as RecommendResult,
        Recommendation as Recommendation, RecommendationList as RecommendationList, Relation as Relation,
        Relations as Relations, Revision as Revision, Scope as Scope, ScopeDeletePlan as ScopeDeletePlan,
        ScopeList as ScopeList, SearchResult as SearchResult, SemanticStatus as SemanticStatus, SkippedItem as SkippedItem, SourceRef as SourceRef,
        SourceScope as SourceScope, SuppressResult as SuppressResult, SuppressionContext as SuppressionContext,
        SuppressionContextList as SuppressionContextList, SyncApplied as SyncApplied, SyncPeer as SyncPeer,
        SyncResult as SyncResult, SyncStatus as SyncStatus, FolderRead as FolderRead,
        FolderSyncResult as FolderSyncResult, PairOffer as PairOffer, RefusedFile as RefusedFile,
        TransitionResult as TransitionResult, UnfinishedRestore as UnfinishedRestore, UnlinkResult as UnlinkResult,
        UnsuppressResult as UnsuppressResult, UpgradeResult as UpgradeResult, UpgradeStatus as UpgradeStatus,
        VerifiedEntry as VerifiedEntry, VerifyResult as VerifyResult, WriteResult as WriteResult,
    )
    from .facade import Store as Store

# Which names each module of the package offers (tests/store/test_types.py checks this against the imports
# above and __all__).
_OFFERS: dict[str, tuple[str, ...]] = {
    "access": ("AccessSession",),
    "constants": ("ALL_PERMISSIONS", "BATCH", "DERIVATION_TYPES", "LIFECYCLE_STATUSES", "LIMITS", "OWNER_ONLY",
        "Progress", "RECOMMENDED_RELATION_TYPES", "UNTITLED", "chunks"),
    "core": ("StoreContext", "default_path"),
    "errors": ("Conflict", "Cycle", "Forbidden", "Invalid", "LimitExceeded", "NotFound", "PcpError", "Unsupported"),
    "facade": ("Store",),
    "importing": ("ImportUnit", "PageRef"),
    "reads": ("PROJECTIONS", "PROTOCOL_VERSION", "SEARCH_MODES"),
    "titles": ("page_title", "shown_title"),
    "types": ("Actor", "AuditEvent", "AuditLog", "BulkDeletePlan", "BulkDeleteReceipt", "BulkPage",
        "BulkWriteResult", "BundleCut", "BundleEntry", "BundleResult", "BundleWarning", "Capabilities",
        "CapabilityFlags", "CopyResult", "DeletePlan", "DoctorReport", "EraserPlan", "ErasurePlan", "ErrorInfo",
        "ExportCounts", "ExportFileRef", "ExportResult", "FolderRead", "FolderSyncResult", "FtsState", "Handoff",
        "HandoffList", "HandoffRef", "HistoryEntry", "Hit", "ImportExportResult", "ImportRecorded",
        "ImportReportEntry", "ImportReportResult", "ImportSummary", "LifecycleStep", "LinkResult", "PageCount",
        "PageLifecycle", "PageList", "PageSummary", "PairOffer", "Payload", "ProvenanceEvent", "ReadItem",
        "ReadResult", "Receipt", "ReceiptList", "RecommendResult", "Recommendation", "RecommendationList",
        "RefusedFile", "Relation", "Relations", "Revision", "Scope", "ScopeDeletePlan", "ScopeList", "SearchResult",
        "SemanticStatus", "SkippedItem", "SourceRef", "SourceScope", "StoppedBulkDeletion", "StoppedBulkDeletions", "SuppressResult",
        "SuppressionContext", "SuppressionContextList", "SuppressionNote", "SyncApplied", "SyncPeer", "SyncResult",
        "SyncStatus", "TransitionResult", "UnfinishedRestore", "UnlinkResult", "UnsuppressResult", "UpgradeResult",
        "UpgradeStatus", "VerifiedEntry", "VerifyResult", "WriteResult"),
}
_WHERE = {name: module for module, names in _OFFERS.items() for name in names}


def __getattr__(name: str) -> Any:
    """A name of the package, imported from its module on first use (PEP 562): a model server answers its
    client before the store's heavier modules (the database, the index, the parts) are loaded."""
    module = _WHERE.get(name)
    if module is None:
        # A submodule (store.paths, store.crypt): loaded on first use as well, as an eager package had it.
        if name.startswith("__") or importlib.util.find_spec(f"{__name__}.{name}") is None:
            raise AttributeError(f"module 'store' has no attribute {name!r}")
        return importlib.import_module(f".{name}", __name__)
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_WHERE})

__all__ = [
    "ALL_PERMISSIONS", "AccessSession", "BATCH", "Conflict", "Cycle", "DERIVATION_TYPES", "Forbidden", "ImportUnit",
    "Invalid", "LIFECYCLE_STATUSES", "LIMITS", "LimitExceeded", "NotFound", "OWNER_ONLY", "PROJECTIONS",
    "PROTOCOL_VERSION", "PageRef", "PcpError", "Progress", "RECOMMENDED_RELATION_TYPES", "SEARCH_MODES", "Store",
    "StoreContext", "UNTITLED", "Unsupported", "chunks", "default_path", "page_title", "shown_title",
    # the result types (store/types.py)
    "Actor", "AuditEvent", "AuditLog", "BulkDeletePlan", "BulkDeleteReceipt", "StoppedBulkDeletion", "StoppedBulkDeletions", "BulkPage", "BulkWriteResult",
    "BundleCut", "BundleEntry", "BundleResult",
    "BundleWarning", "Capabilities", "CapabilityFlags", "CopyResult", "DeletePlan", "DoctorReport", "EraserPlan",
    "ErasurePlan", "ErrorInfo", "ExportCounts", "ExportFileRef", "ExportResult", "FtsState", "Handoff",
    "HandoffList", "HandoffRef", "HistoryEntry", "Hit", "LifecycleStep", "PageLifecycle", "SuppressionNote", "ImportExportResult", "ImportRecorded", "ImportReportEntry",
    "ImportReportResult", "ImportSummary", "LinkResult",
    "PageList", "PageSummary", "Payload", "ProvenanceEvent", "ReadItem", "ReadResult", "Receipt", "ReceiptList",
    "PageCount", "RecommendResult", "Recommendation", "RecommendationList", "Relation", "Relations", "Revision", "Scope",
    "ScopeDeletePlan", "ScopeList", "SearchResult", "SemanticStatus", "SkippedItem", "SourceRef", "SourceScope", "SuppressResult", "SuppressionContext", "SuppressionContextList", "UnfinishedRestore",
    "SyncApplied", "SyncPeer", "SyncResult", "SyncStatus", "FolderRead", "FolderSyncResult", "PairOffer", "RefusedFile", "TransitionResult", "UnlinkResult", "UnsuppressResult", "UpgradeResult", "UpgradeStatus", "VerifiedEntry",
    "VerifyResult", "WriteResult",
]
