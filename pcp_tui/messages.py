"""Messages that thread workers post back to the UI, and the one place that reports worker errors.

Workers never touch widgets: they call the store, then `post_message` one of these. There is one
message class per kind of answer; the node that started the worker handles it with `@on(...)`.
Answers stay the store's plain data (dicts), so what a handler reads is what `--json` prints.

Long because: one small class per kind of answer, each a few lines, kept in one place so a worker and its
handler name the same thing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from textual.message import Message
from textual.message_pump import MessagePump
from textual.worker import Worker, WorkerState

if TYPE_CHECKING:
    from .reading import LoadedPage
    from store import Store
    from store.types import ImportExportResult, ImportSummary
    from store.types import AuditLog, BulkDeletePlan, BulkDeleteReceipt, BundleResult, CopyResult, DeletePlan, ExportResult, HandoffList, Hit, ImportReportResult, LinkResult, Receipt, Revision, Scope, ScopeDeletePlan, StoppedBulkDeletion, SuppressResult, SuppressionContext, TransitionResult, UnlinkResult, UnsuppressResult, WriteResult
    from textual import getters
    from textual.widgets.tree import NodeID

    from .app import PcpApp

Data = dict[str, Any]  # a store answer (revision, hit, scope, plan, receipt, ...), plain JSON-like data


class StoreWorkers(MessagePump):
    """Mixin for screens and widgets that run store calls in workers: errors become notifications.

    Textual calls the `on_worker_state_changed` of every class along the MRO, so a subclass that
    handles the event too must not call this one again through `super()`.
    """

    if TYPE_CHECKING:  # the app these nodes run in, with its store, basket and key_display (app.py imports us)
        app = getters.app(PcpApp)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.state == WorkerState.ERROR and event.worker.error is not None:
            self.app.report_error(event.worker.error)


class Progress(Message):
    """Long work moved on; consecutive reports of one task replace each other in the queue."""

    def __init__(self, task: str, done: int, total: int | None, unit: str = "") -> None:
        super().__init__()
        self.task, self.done, self.total, self.unit = task, done, total, unit

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, Progress) and message.task == self.task


@dataclass
class LookAlikeNamespace(Message):
    """An import's namespace reads like an existing scope's name: the owner is asked to confirm it."""

    source: str
    path: str
    name: str  # the namespace typed
    shown: str  # the namespace, its invisible and non-ASCII characters escaped
    existing: str  # the scope it reads like, escaped the same way
    odd: str  # " (U+0430 CYRILLIC SMALL LETTER A)": what differs, or ""


class StoreReady(Message):
    """The store is open (and filled, for the demo); `empty` says whether it holds any page."""

    def __init__(self, store: Store, empty: bool, demo: bool) -> None:
        super().__init__()
        self.store, self.empty, self.demo = store, empty, demo


class OpenPage(Message):
    """Show this page in the inspector (following a relation, a search pick, a recommendation)."""

    def __init__(self, page_id: str) -> None:
        super().__init__()
        self.page_id = page_id


class StoreChanged(Message):
    """The store changed: every screen and widget that shows store data reloads what it shows.

    The one mechanism for fresh data. The app publishes it (PcpApp.announce_change) after its own
    writes and when its watcher sees another process change the store (`external`); nodes subscribe
    with PcpApp.subscribe_store_changes and handle it with @on(StoreChanged). `page_id` names the page
    this app wrote (None: any), `removed` says pages were erased, `audit_only` that only the audit log
    grew (a model searched, a plan or preview was made): nothing but the audit log needs reloading.
    """

    def __init__(self, page_id: str | None = None, removed: bool = False, *, external: bool = False,
                 audit_only: bool = False) -> None:
        super().__init__()
        self.page_id, self.removed, self.external, self.audit_only = page_id, removed, external, audit_only

    def copy(self) -> StoreChanged:
        """A fresh message for one more subscriber (a message is delivered to one node)."""
        return StoreChanged(self.page_id, self.removed, external=self.external, audit_only=self.audit_only)


@dataclass
class StoreActivity(Message):
    """The watcher (a thread) saw new audit events: `content` when any of them changed the store."""

    content: bool


@dataclass
class BasketChecked(Message):
    """The basket's pages as the store has them now: title and namespace by id (erased pages missing)."""

    found: dict[str, tuple[str, str]]


class BasketChanged(Message):
    """The basket lost erased pages or got new titles: screens that show it redraw it."""


# --- answers of store calls, one class per kind (grouped by the screen or widget that asks) ---

# The main screen and the rights screen


@dataclass
class ScopesLoaded(Message):
    """Every scope the owner can see (list_scopes, all pages of it)."""

    scopes: list[Scope]


@dataclass
class ReviewsCounted(Message):
    """How many tombstone recommendations wait for the owner."""

    count: int


@dataclass
class LifecycleChanged(Message):
    """archive/restore/tombstone/untombstone_page answered; `op` is the one asked for."""

    op: str
    result: TransitionResult


@dataclass
class Unlinked(Message):
    """unlink answered (the relation is retracted)."""

    result: UnlinkResult
    relation: Data


@dataclass
class Unsuppressed(Message):
    """unsuppress_pages answered: the context and the pages whose suppression was lifted."""

    result: UnsuppressResult


@dataclass
class Suppressed(Message):
    """suppress_pages answered."""

    result: SuppressResult


@dataclass
class ContextsKnown(Message):
    """The contexts the owner has pages suppressed in (suppression_contexts), read before the suppress dialog opens."""

    envelope: Revision
    contexts: list[SuppressionContext]


# The link screen


@dataclass
class LinkCandidates(Message):
    """Search hits the page can be linked to (the page itself left out)."""

    hits: list[Hit]


@dataclass
class Linked(Message):
    """link_pages answered with the new relation."""

    relation: LinkResult


# The rights screen


@dataclass
class AuditLoaded(Message):
    """One page of the audit log (events and the cursor of the next page); `first` starts the table over."""

    page: AuditLog
    first: bool = False


@dataclass
class ReceiptsLoaded(Message):
    """Every deletion receipt, and the bulk deletions recorded but not finished."""

    receipts: list[Receipt]
    stopped: list[StoppedBulkDeletion]


@dataclass
class Exported(Message):
    """export answered: where, what format, counts, checksum."""

    result: ExportResult


@dataclass
class ScopePlanned(Message):
    """plan_delete_scope answered: what erasing the scope would remove."""

    plan: ScopeDeletePlan


@dataclass
class ScopeDeleted(Message):
    """delete_scope answered with its receipt."""

    receipt: Receipt


# The revise screen


@dataclass
class ReviseLoaded(Message):
    """The page to revise, with its whole current content (read in parts, never cut); `editor`: E was pressed."""

    envelope: Data
    content: str
    editor: bool


@dataclass
class Revised(Message):
    """revise_page answered with the new revision."""

    result: WriteResult


@dataclass
class ReviseConflicted(Message):
    """revise_page raised Conflict: the store's sentence and the page's head revision now."""

    text: str
    current: Revision


# The recommendations screen


@dataclass
class RecommendationsLoaded(Message):
    """Pending recommendations, each with the page's title and status added."""

    rows: list[Data]


@dataclass
class Tombstoned(Message):
    """tombstone_page answered (from the recommendations screen)."""

    result: Data


# The delete screen


@dataclass
class DeletePlanned(Message):
    """plan_delete answered, with the titles of the pages it names."""

    plan: DeletePlan
    titles: dict[str, str]


@dataclass
class PageDeleted(Message):
    """delete_page answered with its receipt."""

    receipt: Receipt


# The bulk delete screen (many pages at once) and the main screen's selection


@dataclass
class PagesCounted(Message):
    """count_pages answered for the listing `key` (the scope and filters it was asked for)."""

    key: tuple[Any, ...]
    pages: int


@dataclass
class SelectionChecked(Message):
    """Of the pages selected one by one that were `checked`, those the store still has (`found`)."""

    checked: list[str]
    found: set[str]


class SelectionMoved(Message):
    """begin_bulk_delete refused: the pages the filter selects are no longer the planned set."""


@dataclass
class SelectionCounted(Message):
    """plan_bulk_delete answered for "every page matching the current search and filters"."""

    filters: Data
    label: str
    pages: int
    key: tuple[Any, ...]
    again: bool = False  # counted again after a change in the store (no toast; the count follows)


@dataclass
class BulkPlanned(Message):
    """plan_bulk_delete answered for the selection (the dialog's plan)."""

    plan: BulkDeletePlan


@dataclass
class BulkStarted(Message):
    """The bulk deletion is recorded (begin_bulk_delete or a resume), with the titles of its first pages."""

    receipt: BulkDeleteReceipt
    titles: dict[str, str]


@dataclass
class BulkFinished(Message):
    """The erasure ended: complete, or `stopped` between batches (the receipt says how far it got)."""

    receipt: BulkDeleteReceipt
    stopped: bool


# The handoff screen


@dataclass
class BundleBuilt(Message):
    """bundle answered (the preview); `generation` names the basket state it was built for."""

    bundle: BundleResult
    generation: int = 0


@dataclass
class BudgetChecked(Message):
    """A token budget (as typed) was tried on the basket: None, or why it cannot hold the bundle."""

    budget: str
    problem: str | None


@dataclass
class ChatsKnown(Message):
    """The chats of the ledger, newest first (each label once)."""

    labels: list[str]


@dataclass
class Copied(Message):
    """copy or copy_continue answered."""

    result: CopyResult


@dataclass
class NothingNew(Message):
    """copy_continue found nothing new for the chat since its last copy: news, not a failure (its sentence)."""

    sentence: str


@dataclass
class LedgerLoaded(Message):
    """handoffs answered, for one page or (page_id None) for every handoff."""

    ledger: HandoffList
    page_id: str | None


# The welcome screen


@dataclass
class Imported(Message):
    """An import finished with its report."""

    report: ImportExportResult | ImportSummary


@dataclass
class ImportReportLoaded(Message):
    """import_report answered: the kept report of the import just run, line by line."""

    report: ImportReportResult


@dataclass
class ImportFailed(Message):
    """An import raised: `error` is its one-line message, which the import screen shows as its result."""

    error: str


@dataclass
class StoreEmptiness(Message):
    """Whether the store holds any page or scope (F5 on a store emptied since: it welcomes again)."""

    empty: bool


# The sync dialog


@dataclass
class SyncStateLoaded(Message):
    """sync_status answered, with the title and scope of each page in conflict (page id -> (title, namespace))."""

    status: Data
    pages: dict[str, tuple[str, str]]


@dataclass
class Synced(Message):
    """sync_folder answered with its report."""

    result: Data


@dataclass
class PairOffered(Message):
    """sync_pair answered: the one-time code to type on the other machine."""

    offer: Data


@dataclass
class SyncFailed(Message):
    """sync_folder raised; the error itself reaches the user through StoreWorkers."""


@dataclass
class SyncNoted(Message):
    """The main screen's line about sync: last sync and pages in conflict (sync_status)."""

    status: Data


@dataclass
class SemanticSwitched(Message):
    """The owner turned the semantic channel of `auto` on or off (set_semantic's status)."""

    status: Data


# Widgets of the inspector


@dataclass
class PageLoaded(Message):
    """Everything the inspector shows of one page (reading.load_page)."""

    page_id: str
    data: LoadedPage


@dataclass
class ContentMore(Message):
    """More of a long page's content, read from `offset` of `revision_id`; `next_offset` None: it is all there."""

    page_id: str
    revision_id: str
    offset: int
    text: str
    next_offset: int | None
    to_end: bool


@dataclass
class PageGone(Message):
    """The page the inspector shows is not in the store any more (erased meanwhile)."""

    page_id: str


@dataclass
class DiffLoaded(Message):
    """The texts of two revisions to compare."""

    old_text: str
    new_text: str
    old_id: str
    new_id: str


@dataclass
class ProvenanceLoaded(Message):
    """One more level of provenance under a node of the tree."""

    node_id: NodeID
    level: Data


@dataclass
class GraphLoaded(Message):
    """The relation neighbourhood of a page; `empty` is what to say under the page when nothing is linked to it."""

    page_id: str
    graph: Data
    empty: str = ""
