"""JSON from outside (files, flags, cursors) parsed so that deep nesting is `invalid`, never a crash."""

from __future__ import annotations

import json
from typing import Any

from .errors import Invalid


def loads(data: str | bytes, what: str) -> Any:
    """json.loads, with nesting too deep for the parser refused as Invalid naming `what`.

    json.JSONDecodeError (a ValueError) passes through for the caller's own message.
    """
    try:
        return json.loads(data)
    except RecursionError:
        raise Invalid(f"{what} is nested too deeply (arrays or objects inside one another thousands of levels down); "
                      "nothing was read from it.") from None


def depth_of(value: Any, limit: int) -> int:
    """Nesting depth of a parsed value, counted without recursion and stopping past `limit`."""
    if not isinstance(value, (dict, list)):
        return 0
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        if level > deepest:
            deepest = level
            if deepest > limit:
                return deepest
        for child in item.values() if isinstance(item, dict) else item:
            if isinstance(child, (dict, list)):  # only containers add depth
                stack.append((child, level + 1))
    return deepest
