"""Typed errors of the PCP Core contract (pcp-core.md section 3)."""

from __future__ import annotations

from .types import ErrorInfo


class PcpError(Exception):
    """Base of every store error: a stable `code` and a one-sentence message for people."""

    code = "invalid"

    def __init__(self, message: str, code: str | None = None) -> None:
        super().__init__(message)
        if code is not None:
            self.code = code
        self.message = message

    def to_dict(self) -> ErrorInfo:
        return {"code": self.code, "message": self.message}


class NotFound(PcpError):
    code = "not_found"


class Forbidden(PcpError):
    code = "forbidden"


class Conflict(PcpError):
    code = "conflict"


class Invalid(PcpError):
    code = "invalid"


class Cycle(PcpError):
    code = "cycle"


class LimitExceeded(PcpError):
    code = "limit"


class Unsupported(PcpError):
    code = "unsupported"


def shown(value: object, limit: int = 60) -> str:
    """A caller's value as it appears in a message: quoted and cut to a short prefix."""
    text = str(value)
    return repr(text if len(text) <= limit else text[:limit] + "…")


_KINDS = {"pg": "page", "rev": "revision", "rel": "relation"}


def not_found(kind: str, ident: str) -> NotFound:
    """The one not-found message, identical for missing and hidden ids."""
    prefix = str(ident)[:8].split("_", 1)[0]
    text = str(ident)
    named = text if len(text) <= 60 else text[:60] + "…"
    return NotFound(f"No {_KINDS.get(prefix, kind)} {named} exists or it is not visible to this session.")
