"""What the store and its front ends share: permissions, limits, statuses, relation types, batching, progress.

One source: the store's modules and the front ends (the `pcp` command, the app, the MCP
server) import these from here, through `store`'s public surface.
"""

from __future__ import annotations

from typing import Final, Iterator, Protocol, Sequence, TypedDict, TypeVar

T = TypeVar("T")

ALL_PERMISSIONS: Final = frozenset(
    {
        "list_scopes", "search", "read", "audit", "write", "manage_scope", "revise", "link", "ingest",
        "suppress", "archive", "tombstone", "delete", "export", "derive_across_scopes",
    }
)
# Never granted to a model client, whatever its grants say (pcp-core.md section 2).
OWNER_ONLY: Final = frozenset({"tombstone", "delete", "export"})

class Limits(TypedDict):
    max_hits: int
    default_hits: int
    max_ids_per_read: int
    max_chars_per_read: int
    max_payload_chars: int
    namespace_chars: list[int]
    relation_type_chars: list[int]
    max_provenance_inputs: int
    max_list: int
    max_import_bytes: int
    max_json_depth: int
    max_title_chars: int
    max_summary_chars: int
    max_keywords: int
    max_keyword_chars: int
    max_facets_chars: int
    media_type_chars: list[int]
    max_source_refs: int
    max_uri_chars: int
    max_reason_chars: int
    max_query_chars: int


LIMITS: Final[Limits] = {
    "max_hits": 50,
    "default_hits": 20,
    "max_ids_per_read": 20,
    "max_chars_per_read": 64_000,
    "max_payload_chars": 1_000_000,
    "namespace_chars": [1, 200],
    "relation_type_chars": [1, 80],
    "max_provenance_inputs": 256,
    "max_list": 100,
    "max_import_bytes": 1_073_741_824,  # one chat export file or archive member, before parsing
    "max_json_depth": 64,  # nesting of facets and source ref locators
    "max_title_chars": 1_000,
    "max_summary_chars": 10_000,
    "max_keywords": 100,
    "max_keyword_chars": 200,
    "max_facets_chars": 100_000,  # all facets of a revision as compact JSON
    "media_type_chars": [1, 255],
    "max_source_refs": 256,
    "max_uri_chars": 8_192,
    "max_reason_chars": 2_000,
    "max_query_chars": 2_000,
}

# Effective lifecycle statuses of a page (pcp-core.md section 5), in the order the contract lists them.
LIFECYCLE_STATUSES: Final = ("active", "superseded", "archived", "tombstoned")

DERIVATION_TYPES: Final = ("derived_from", "summarizes", "aggregates")
RECOMMENDED_RELATION_TYPES: Final = (
    "contains", "derived_from", "depends_on", "defines", "uses", "supports", "contradicts", "supersedes",
    "inspired_by", "related_to", "responds_to", "continues", "summarizes", "aggregates", "links_to",
)

UNTITLED: Final = "(untitled)"  # the one title shown for a page whose title rule yields nothing

BATCH: Final = 500  # ids per statement, well under SQLite's variable limit


def chunks(values: Sequence[T], size: int = BATCH) -> Iterator[list[T]]:
    """`values` in consecutive slices of at most `size` items."""
    for i in range(0, len(values), size):
        yield list(values[i : i + size])


class Progress(Protocol):
    """The one progress callback of long work (imports, exports, bulk writes, scope deletion).

    Called with the work done so far, the total (None when not known yet) and, from
    exports, imports and importers, what is being counted ("records", "lines",
    "conversations"...). A callback should accept the third argument as optional.
    """

    def __call__(self, done: int, total: int | None, what: str = ..., /) -> None: ...
