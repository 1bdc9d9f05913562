"""Result shapes of the MCP tools that are not one store operation's result (the others are store/types.py's)."""

from typing import TypedDict

from store.types import Capabilities


class DescribeResult(TypedDict):
    """describe: who this session is, what it may do, and the store's capabilities."""

    client_id: str
    toolset: str
    tools: list[str]
    grants: dict[str, list[str]]
    never_available: list[str]
    context_id: str
    capabilities: Capabilities


__all__ = ["DescribeResult"]
