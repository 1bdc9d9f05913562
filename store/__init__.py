"""PCP Core store over Peewee/SQLite: one `Store` facade returning plain data.

Layers point one way (pcp_tui -> store -> ctxpack); this package never imports Textual or Rich.
"""

from .access import ALL_PERMISSIONS, AccessSession
from .core import LIMITS, default_path
from .deletion import DeletionOps
from .errors import Conflict, Cycle, Forbidden, Invalid, LimitExceeded, NotFound, PcpError, Unsupported
from .export import ExportOps
from .handoff import HandoffOps
from .importing import ImportOps, ImportUnit, PageRef
from .lifecycle import LifecycleOps
from .reads import PROJECTIONS, PROTOCOL_VERSION, SEARCH_MODES, ReadOps
from .search import SearchOps
from .upgrade import UpgradeOps
from .writes import WriteOps


class Store(HandoffOps, ExportOps, SearchOps, LifecycleOps, DeletionOps, UpgradeOps):
    """The PCP Core operations on one SQLite file, as seen by one access session."""


__all__ = [
    "ALL_PERMISSIONS", "AccessSession", "Conflict", "Cycle", "Forbidden", "Invalid", "LIMITS", "LimitExceeded",
    "NotFound", "PROJECTIONS", "PROTOCOL_VERSION", "PcpError", "SEARCH_MODES", "Store", "Unsupported", "default_path",
]
