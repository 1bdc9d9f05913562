"""What `pcp mcp` tells a client about its tools before the store is loaded: the store's limits as plain values,
and JSON Schemas derived from the store's result types (store/types.py); the closed word lists are in shared.py.

The values here are copies, so that answering `initialize` and `tools/list` never imports the store
(tests/mcp/test_mcp_protocol.py checks every one against store.constants).
"""

from __future__ import annotations

import types
import typing
from typing import Any, Union

READ_TOOLS = ("describe", "list_scopes", "search_pages", "read_pages")
WRITE_TOOLS = ("write_page", "revise_page", "link_pages", "ingest_event", "suppress_pages", "recommend_tombstone")
TOOLSETS = {"read": READ_TOOLS, "write": READ_TOOLS + WRITE_TOOLS}
MAX_HITS = 50
MAX_IDS = 20
MAX_READ_CHARS = 64_000
MAX_QUERY_CHARS = 2_000
MAX_LIST = 100


def json_schema(tp: Any) -> dict[str, Any]:
    """The JSON Schema of a TypedDict (or a type inside one): keys, required keys, nested types; extra keys allowed."""
    if tp is Any or tp is object:
        return {}
    if tp is type(None) or tp is None:
        return {"type": "null"}
    if tp is bool:
        return {"type": "boolean"}
    if tp is int:
        return {"type": "integer"}
    if tp is float:
        return {"type": "number"}
    if tp is str:
        return {"type": "string"}
    if isinstance(tp, type) and typing.is_typeddict(tp):
        hints = typing.get_type_hints(tp)
        return {"type": "object", "properties": {k: json_schema(v) for k, v in hints.items()},
                "required": sorted(getattr(tp, "__required_keys__", ()))}
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin in (Union, types.UnionType):
        return {"anyOf": [json_schema(a) for a in args]}
    if origin is list:
        return {"type": "array", "items": json_schema(args[0]) if args else {}}
    if origin is dict:
        return {"type": "object", "additionalProperties": json_schema(args[1]) if len(args) == 2 else {}}
    raise TypeError(f"no JSON Schema for {tp!r}")
