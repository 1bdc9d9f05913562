"""The shapes of what the Store returns: one TypedDict per kind of result.

Results stay plain dicts at run time (`pcp --json`, the MCP server, tests and the app read
them as such); these types only tell a type checker, and a reader, which keys each one
has. A key that only some results carry is `NotRequired`. Facets and the free-form
`counts` maps stay open (`dict[str, Any]`, `dict[str, int]`): the contract lets them
carry any key.

No `from __future__ import annotations` here: TypedDict reads `NotRequired` from the
evaluated annotations (Python 3.11), which is what `__required_keys__` reports at run time.

Long because: one TypedDict per kind of result of the Store API (about 75): a reference, no logic.
"""

from typing import Any, NotRequired, TypedDict

from .constants import Limits

# --- revisions: the envelope of pcp-core.md section 1 ---


class Actor(TypedDict):
    actor_type: str
    actor_id: str


class Payload(TypedDict):
    media_type: str
    content: NotRequired[str]  # absent in the manifest projection


class SourceRef(TypedDict):
    uri: str
    locator: NotRequired[dict[str, Any]]  # a JSON object; its keys are the adapter's (pcp-core.md)
    media_type: NotRequired[str]
    content_digest: NotRequired[str]


class ProvenanceEvent(TypedDict):
    operation: str
    actor_type: str
    actor_id: str
    timestamp: str
    input_revision_ids: list[str]
    tool_or_model: NotRequired[str]
    input_deleted: NotRequired[dict[str, str]]  # erased input revision id -> its deletion receipt id


class Revision(TypedDict):
    """A revision exactly as every surface returns it (read_pages, `pcp read --json`, export)."""

    page_id: str
    revision_id: str
    previous_revision_id: str | None
    owner_id: str
    namespace: str
    visibility: str
    lifecycle_status: str
    created_at: str
    observed_at: str | None
    valid_from: str | None
    valid_to: str | None
    created_by: Actor
    payload: Payload | None
    source_refs: list[SourceRef]
    facets: dict[str, Any]
    provenance: list[ProvenanceEvent]
    content_digest: str | None


# --- reading ---


class ErrorInfo(TypedDict):
    code: str
    message: str


class Relation(TypedDict):
    relation_id: str
    relation_type: str
    from_page_id: str
    from_revision_id: str
    to_page_id: str
    to_revision_id: str
    created_at: str
    created_by: Actor


class Relations(TypedDict):
    outgoing: list[Relation]
    incoming: list[Relation]


class HistoryEntry(TypedDict):
    revision_id: str
    created_at: str
    created_by: Actor
    content_digest: str | None
    lifecycle_status: str


class LifecycleStep(TypedDict):
    """One lifecycle change of a page (archive, restore, tombstone, untombstone) and its reason."""

    from_status: str
    to_status: str
    reason: str
    created_at: str
    created_by: Actor


class SuppressionNote(TypedDict):
    """A context in which the page is suppressed (only this session's own contexts)."""

    context_id: str
    reason: str | None
    expires_at: str | None
    created_at: str
    created_by: Actor


class PageLifecycle(TypedDict):
    """The `lifecycle` projection: why the page has its status, and where it is suppressed."""

    events: list[LifecycleStep]
    suppressions: list[SuppressionNote]


class ReadItem(TypedDict):
    """One requested id: either `error`, or the revision read and the projections asked for."""

    requested_id: str
    error: NotRequired[ErrorInfo]
    title: NotRequired[str]
    revision: NotRequired[Revision]
    current_revision_id: NotRequired[str]
    truncated: NotRequired[bool]
    # With the payload: where this part of the content starts, where the next starts (None: nothing is left),
    # and the whole content's length, all in Unicode code points.
    offset: NotRequired[int]
    next_offset: NotRequired[int | None]
    content_chars: NotRequired[int]
    relations: NotRequired[Relations]
    history: NotRequired[list[HistoryEntry]]
    source_spans: NotRequired[list[SourceRef]]
    facets: NotRequired[dict[str, Any]]
    lifecycle: NotRequired[PageLifecycle]
    conflict_revision_ids: NotRequired[list[str]]  # concurrent revisions besides the head (after a sync)


class SyncApplied(TypedDict):
    """What one store took in from another in one sync (store/sync)."""

    peer: str
    added: dict[str, int]  # record kind -> how many were new here
    erased_pages: list[str]  # pages erased here because another store deleted them
    deleted_while_revised: list[str]  # of those, pages revised or made here meanwhile (the user is told)
    conflicts: int  # pages left with concurrent revisions (both kept)
    collapsed_pages: list[str]  # duplicate pages of one source item, folded into the smaller page id


class SyncResult(TypedDict):
    peer: str
    owner_id: str
    adopted_owner: bool
    taken: SyncApplied
    given: SyncApplied


class SyncPeer(TypedDict):
    store_id: str
    last_sync: str | None  # when this store last took its changes in
    revoked: bool  # unpaired: its files are refused
    via: list[str]  # "folder" and/or "with"


class ListedStore(TypedDict):
    store_id: str
    paired_through: str | None  # the store whose code it joined with (itself: the first store)
    revoked: bool
    disputed: bool


class SyncStatus(TypedDict):
    """`pcp sync --status`: this store's id among the owner's stores, its peers, open revision conflicts."""

    store_id: str | None  # None until the store first syncs or pairs (its id is minted then)
    paired: bool  # holds a folder key (pcp sync DIR --pair / --join)
    peers: list[SyncPeer]
    last_sync: str | None  # when this store last finished a sync (a write-only one too), else its peers' latest
    conflicts: list[str]  # pages with concurrent revisions to resolve (at most 1000)
    stores: list[ListedStore]  # the owner's stores this one lists (each with its own signing key)
    disputes: list[list[str]]  # two stores that unpaired each other: the owner confirms which one is lost
    unsigned_pairing: bool  # paired by a pcp before stores signed their files: pair again


class RefusedFile(TypedDict):
    file: str
    reason: str  # one line


class FolderRead(TypedDict):
    store_id: str
    files: int  # change files of that store taken in this time
    added: dict[str, int]


class FolderSyncResult(TypedDict):
    """One `pcp sync DIR`: what came in from each store's files, the file this store wrote, what was refused."""

    folder: str
    store_id: str
    read: list[FolderRead]
    wrote: str | None
    compacted: bool  # this store's files were rewritten as one (after a delete)
    refused: list[RefusedFile]
    skipped: list[str]  # files that are not change files ("conflicted copy", temporary): left alone
    erased_pages: list[str]
    deleted_while_revised: list[str]
    conflicts: int


class PairOffer(TypedDict):
    code: str  # the one-time code to type on the second machine (never written to the folder)
    offer: str
    store_id: str


class ReadResult(TypedDict):
    results: list[ReadItem]


class SourceScope(TypedDict):
    """Where the page an adapter made for a source key lives (Store.source_scope)."""

    namespace: str
    parent: str | None  # the scope's parent namespace
    cwd: str | None  # the page's `cwd` facet (an agent session's working folder)


class Scope(TypedDict):
    namespace: str
    display_name: str
    description: str | None
    parent: str | None
    visibility: str
    owner_id: str
    permissions: list[str]
    page_count: int
    last_activity: str | None
    # An imported conversation's or session's scope: its conversation page's current title, read live
    # (the stored display_name never holds message text); only where the session may read.
    title: NotRequired[str]


class ScopeList(TypedDict):
    scopes: list[Scope]
    next_cursor: str | None


class PageSummary(TypedDict):
    page_id: str
    revision_id: str
    namespace: str
    title: str
    lifecycle_status: str
    media_type: str | None
    actor_type: str
    sort_time: str
    created_at: str
    updated_at: str


class PageList(TypedDict):
    pages: list[PageSummary]
    next_cursor: str | None


class CapabilityFlags(TypedDict):
    event_ingest: bool
    revision_conflicts: bool
    sync: bool
    durable_deletion: bool
    suppression: bool
    access_sessions: bool
    audit_log: bool


class Capabilities(TypedDict):
    protocol_version: str
    search_modes: list[str]
    projections: list[str]
    limits: Limits
    relation_types: list[str]
    relation_types_open: bool
    lifecycle_statuses: list[str]
    concurrent_revisions: str  # the rule for concurrent revisions from synced stores
    flags: CapabilityFlags


class FtsState(TypedDict):
    state: str
    rows: int
    tokenizer: str
    secure_delete: bool


class UnfinishedRestore(TypedDict):
    """A `pcp import export` committed in groups that stopped part way; the same import again completes it."""

    path: str
    sha256: str
    started_at: str
    lines: int


class DoctorReport(TypedDict):
    integrity: str
    sqlite_version: str
    schema_version: int
    path: str
    owner_id: str
    counts: dict[str, int]
    fts: FtsState
    journal_mode: str
    warnings: NotRequired[list[str]]  # e.g. a store folder readable by others
    pending_erasures: NotRequired[list[str]]  # receipt ids whose WAL erasure waits for a reader
    scope_names: NotRequired[list[dict[str, str]]]  # {namespace, why}: names a new scope could not have now
    unfinished_restore: NotRequired[UnfinishedRestore]  # a restore that stopped part way
    encryption: NotRequired[dict[str, Any]]  # {encrypted, cipher, key_file, wrapping_key}: never a secret


class AuditEvent(TypedDict):
    event_id: str
    time: str
    principal_type: str
    principal_id: str
    operation: str
    scopes: list[str]
    decision: str
    counts: dict[str, int]
    duration_ms: float
    error_code: str | None
    receipt_id: NotRequired[str]  # the deletion receipt this event belongs to (a bulk deletion's events)


class AuditLog(TypedDict):
    events: list[AuditEvent]
    next_cursor: str | None


# --- search ---


class Hit(TypedDict):
    """One search hit: never a full payload; `title` is the shown title (store.titles.shown_title)."""

    page_id: str
    revision_id: str
    namespace: str
    owner_id: str
    lifecycle_status: str
    title: str
    date: str  # observed_at when known, else created_at
    snippet: str
    highlights: list[list[int]]  # [start, end] character spans within `snippet`
    projection: str
    range: list[int]  # [start, end] of the snippet within the projection's text
    matched_by: str
    score: float
    projections: list[str]
    created_at: str
    observed_at: str | None
    conversation: str | None  # the page id of the conversation that contains this page (same scope), if any


class SearchResult(TypedDict):
    hits: list[Hit]
    next_cursor: str | None


# --- writing ---


class WriteResult(TypedDict):
    """write_page, ingest_event and revise_page (`created` is False for a replayed idempotency key)."""

    page_id: str
    revision_id: str
    created: bool


class LinkResult(TypedDict):
    relation_id: str
    from_page_id: str
    from_revision_id: str
    to_page_id: str
    to_revision_id: str
    relation_type: str
    created: bool


class UnlinkResult(TypedDict):
    relation_id: str
    retracted: bool
    event_id: str


class BulkWriteResult(TypedDict):
    created: int


# --- lifecycle ---


class TransitionResult(TypedDict):
    """archive, restore, tombstone and untombstone."""

    page_id: str
    lifecycle_status: str
    event_id: str


class RecommendResult(TypedDict):
    recommendation_id: str
    page_id: str
    status: str


class PageCount(TypedDict):
    """count_pages: how many pages list_pages would list with the same filters."""

    pages: int


class Recommendation(TypedDict):
    recommendation_id: str
    page_id: str
    action: str  # tombstone | supersedes
    reason: str
    actor: Actor
    status: str
    created_at: str
    relation_id: NotRequired[str]  # a model's supersedes: the relation the owner confirms or unlinks
    from_page_id: NotRequired[str]  # ... and the newer page


class RecommendationList(TypedDict):
    recommendations: list[Recommendation]


class SuppressResult(TypedDict):
    context_id: str
    suppressed: list[str]


class SuppressionContext(TypedDict):
    context_id: str
    pages: int  # pages it hides now (expired suppressions not counted)
    last_at: str  # when a page was last suppressed in it


class SuppressionContextList(TypedDict):
    contexts: list[SuppressionContext]


class UnsuppressResult(TypedDict):
    context_id: str
    unsuppressed: list[str]


# --- deletion ---


class ExportFileRef(TypedDict):
    """An export file this store wrote that may hold a page (named in a plan, never rewritten)."""

    path: str
    format: str
    created_at: str
    incomplete: NotRequired[bool]  # a killed export's temporary file


class HandoffRef(TypedDict):
    """A handoff copy that carried a page: which chat, which entry."""

    handoff_id: str
    label: str
    entry: int


class EraserPlan(TypedDict, total=False):
    """What the deletion's erasers add to a plan (export files, handoff copies)."""

    export_files: list[ExportFileRef]
    handoffs: list[HandoffRef]
    import_report_entries: int  # import report lines that name these pages (store/import_reports.py)


class ErasurePlan(EraserPlan):
    """What an erasure covers, by id (the body of plan_delete and of a deletion's receipt)."""

    pages: list[str]
    revisions: list[str]
    relations: list[str]
    derived_pages: list[str]  # pages derived from these, left in place (without cascade)
    suppressions: int
    bytes: int
    counts: dict[str, int]


class DeletePlan(ErasurePlan):
    """plan_delete: what delete_page would erase."""

    page_id: str
    cascade: bool


class ScopeDeletePlan(TypedDict):
    """plan_delete_scope: numbers first, ids listed up to 1,000 of each."""

    namespace: str
    pages: int
    revisions: int
    relations: int
    suppressions: int
    bytes: int
    page_ids: list[str]
    revision_ids: list[str]
    relation_ids: list[str]
    derived_pages: list[str]
    counts: dict[str, int]
    handoffs: list[HandoffRef]
    export_files: NotRequired[list[ExportFileRef]]
    import_report_entries: int


class Receipt(TypedDict):
    """A deletion receipt: ids and counts, never content."""

    receipt_id: str
    namespace: str | None
    page_ids: list[str]
    revision_ids: list[str]
    counts: dict[str, int]
    created_at: str
    actor: Actor
    reason: str
    lifecycle_status: NotRequired[str]  # "deleted", on the receipt delete_page / delete_scope return
    wal_erasure: NotRequired[str]  # done | pending (a reader held a snapshot; finished by the next call)


class ReceiptList(TypedDict):
    receipts: list[Receipt]


class BulkPage(TypedDict):
    """One page a bulk deletion plan shows by name."""

    page_id: str
    title: str
    namespace: str


class BulkDeletePlan(TypedDict):
    """plan_bulk_delete: every page the filter selects (no limit, no ranking), numbers first."""

    filters: dict[str, Any]  # the filter as understood (statuses filled in)
    pages: int
    first_pages: list[BulkPage]  # up to 20, in page-id order
    revisions: int
    relations: int
    suppressions: int
    derived_pages: int  # pages outside the set derived from it, left in place
    handoffs: int  # stored handoff copies that carried a selected page
    handoff_entries: int  # their entries that will read "erased"
    export_files: list[ExportFileRef]
    bytes: int
    digest: str  # of the exact sorted page-id set; bulk_delete needs it


class StoppedBulkDeletion(TypedDict):
    """A bulk deletion recorded but not finished (stopped between batches, or cut off): how far it got."""

    receipt_id: str
    state: str  # pending
    pages_done: int
    pages: int
    created_at: str
    updated_at: str
    reason: str


class StoppedBulkDeletions(TypedDict):
    deletions: list[StoppedBulkDeletion]


class BulkDeleteReceipt(TypedDict):
    """A bulk deletion's receipt: recorded before anything is erased, updated per batch (ids and counts only)."""

    receipt_id: str
    digest: str
    state: str  # pending | complete
    completed: str  # "n/N": pages of the recorded set dealt with so far
    pages_done: int
    pages: int
    page_ids: list[str]  # the recorded set, sorted
    counts: dict[str, int]
    filters: dict[str, Any]  # the filter's names and values; a query is recorded as its mode only
    batch_size: int
    created_at: str
    updated_at: str
    actor: Actor
    reason: str
    wal_erasure: NotRequired[str]  # on a completed deletion: done | pending


# --- export and import ---


class ExportCounts(TypedDict):
    scopes: int
    pages: int
    revisions: int


class ExportResult(TypedDict):
    """export: a JSON Lines file (lines, sha256) or a Markdown folder (files)."""

    path: str
    format: str
    counts: ExportCounts
    scopes: list[str] | None  # None for a whole-store export
    lines: NotRequired[int]
    sha256: NotRequired[str]
    files: NotRequired[int]
    encrypted: NotRequired[bool]  # sealed with a passphrase (pcp export --encrypt)


class ImportExportResult(TypedDict):
    path: str
    added: dict[str, int]  # export line kind -> records added
    owner_id: str


class SkippedItem(TypedDict):
    item: str
    reason: str
    line: NotRequired[int]  # the line of an events file


class ImportSummary(TypedDict):
    """What an importer (store.adapters) ends with: its ImportReport.to_dict()."""

    source: str
    conversations: int
    messages: int
    notes: int
    events: int
    created: int
    unchanged: int
    revised: int
    relations: int
    hidden_skipped: int
    empty_skipped: int
    skipped: list[SkippedItem]
    import_id: NotRequired[str]  # its kept report (pcp import-report ID), when the importer keeps one


class ImportRecorded(TypedDict):
    """record_import: the id of the kept report."""

    import_id: str


class ImportReportEntry(TypedDict):
    """One line of an import report: a conversation or session, or a skipped item."""

    file: str | None
    item: str
    page_id: str | None
    outcome: str  # created | revised | unchanged | skipped
    reason: str | None
    counts: dict[str, int]
    title: NotRequired[str]  # the page's title now, or "(erased)"
    erased: NotRequired[bool]


class ImportReportResult(TypedDict):
    """import_report: one import, as kept."""

    import_id: str
    source: str
    path: str | None
    started_at: str
    finished_at: str
    summary: dict[str, Any]
    entries: list[ImportReportEntry]


# --- handoffs and bundles ---


class BundleEntry(TypedDict):
    """An entry of a bundle body (ids None once an erasure replaced it by its marker)."""

    n: int
    page_id: str | None
    revision_id: str | None
    namespace: str | None
    detail: str  # payload | excerpt | summary | reference | erased
    bytes: int
    tokens: int


# `from` is a keyword, hence the functional form.
BundleCut = TypedDict("BundleCut", {"n": int, "page_id": str, "from": str, "to": str, "reason": str})


class BundleWarning(TypedDict):
    """scope_mix (with `scopes`) or secret (with `n`, `page_id`, `kinds`)."""

    code: str
    message: str
    scopes: NotRequired[list[str]]
    n: NotRequired[int]
    page_id: NotRequired[str]
    kinds: NotRequired[list[str]]


class BundleResult(TypedDict):
    text: str
    digest: str
    bytes: int
    tokens: int
    tokens_exact: bool
    entries: list[BundleEntry]
    cut: list[BundleCut]
    warnings: list[BundleWarning]


class CopyResult(TypedDict):
    """copy and copy_continue: the recorded handoff."""

    handoff_id: str
    label: str
    digest: str
    continuation_of: str | None
    text: str
    file: str
    clipboard: str  # pyperclip | osc52 | file-only
    bytes: int
    tokens: int
    tokens_exact: bool
    entries: list[BundleEntry]
    warnings: list[BundleWarning]
    cut: list[BundleCut]


class VerifiedEntry(TypedDict):
    n: int
    page_id: str | None
    revision_id: str | None
    state: str  # current | newer_revision | archived | tombstoned | deleted | unknown


class VerifyResult(TypedDict):
    digest_ok: bool
    digest: str
    kind: str  # bundle | continuation
    entries: list[VerifiedEntry]
    origin: NotRequired[str]  # this_store | unknown: from the ledger of what this store handed out


class Handoff(TypedDict):
    handoff_id: str
    label: str
    digest: str
    continuation_of: str | None
    created_at: str
    entries: list[BundleEntry]  # the entries this copy added
    bytes: int
    tokens: int


class HandoffList(TypedDict):
    handoffs: list[Handoff]
    next_cursor: str | None


class SemanticStatus(TypedDict):
    """The semantic channel of `auto` (pcp semantic): turned on by the owner, installed here, its model's id, and
    why it cannot run here (one line; None when available): the extra missing, or a model file not the one pinned."""

    on: bool
    available: bool
    model: str
    problem: str | None


class UpgradeStatus(TypedDict):
    """Where a pending index upgrade stands (revisions re-indexed so far, revisions to re-index)."""

    done: int
    total: int


class UpgradeResult(TypedDict):
    """What upgrade_index did: revisions re-indexed by this call, revisions of the whole upgrade."""

    upgraded: int
    total: int


__all__ = [
    "UpgradeResult", "UpgradeStatus", "SyncApplied", "SyncPeer", "SyncResult", "SyncStatus", "FolderRead", "FolderSyncResult", "PairOffer",
    "ListedStore", "RefusedFile", "UnfinishedRestore", "StoppedBulkDeletion", "StoppedBulkDeletions", "SuppressionContext", "SuppressionContextList",
        "Actor", "AuditEvent", "AuditLog", "BulkDeletePlan", "BulkDeleteReceipt", "BulkPage", "BulkWriteResult", "BundleCut", "BundleEntry", "BundleResult",
    "BundleWarning", "Capabilities", "CapabilityFlags", "CopyResult", "DeletePlan", "DoctorReport", "EraserPlan",
    "ErasurePlan", "ErrorInfo", "ExportCounts", "ExportFileRef", "ExportResult", "FtsState", "Handoff", "HandoffList", "HandoffRef",
    "HistoryEntry", "Hit", "LifecycleStep", "PageLifecycle", "SuppressionNote", "ImportExportResult", "ImportRecorded", "ImportReportEntry", "ImportReportResult", "ImportSummary", "LinkResult", "PageList", "PageSummary", "Payload",
    "ProvenanceEvent", "ReadItem", "ReadResult", "PageCount", "Receipt", "ReceiptList", "RecommendResult", "Recommendation",
    "RecommendationList", "Relation", "Relations", "Revision", "Scope", "ScopeDeletePlan", "ScopeList",
    "SearchResult", "SemanticStatus", "SkippedItem", "SourceRef", "SourceScope", "SuppressResult", "TransitionResult", "UnlinkResult",
    "UnsuppressResult", "VerifiedEntry", "VerifyResult", "WriteResult",
]
