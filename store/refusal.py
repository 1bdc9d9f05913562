"""Calls refused before they reach an operation (e.g. command-line text that is not UTF-8), audited like any failure."""

from __future__ import annotations

import time
from typing import Any

from .core import Call, Part
from .errors import PcpError


def audit_refusal(store: Any, operation: str, error: PcpError) -> PcpError:
    """Record `error` as a failed call of `operation` in the audit log (metadata only); returns it to raise."""
    Part(store._ctx)._audit_failure(Call(operation), error, time.perf_counter())
    return error
