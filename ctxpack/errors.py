"""The one error type of ctxpack, with its stable codes."""

from __future__ import annotations

ERROR_CODES = (
    "invalid_json",
    "non_canonical",
    "fields",
    "schema",
    "base64",
    "utf8",
    "digest_format",
    "digest_mismatch",
    "total_bytes",
    "byte_count",
    "integer",
    "base_mismatch",
    "kept_chunks",
    "target_mismatch",
    "chunk_size",
)


class ContextPackError(ValueError):
    """A pack or delta broke a rule of ctxpack v1; `.code` names the rule."""

    def __init__(self, code: str, message: str) -> None:
        if code not in ERROR_CODES:  # a programming error, not a user one
            raise AssertionError(f"unknown ctxpack error code {code!r}")
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
