"""Shared helpers for the ctxpack tests.

Everything here is written from the byte-level contract (shared spec ctxpack-v1.md),
independently of the library, so the tests can build exact expected bytes and
malformed-but-otherwise-consistent inputs.

This module is imported as a top-level module (pytest's default ``prepend`` import
mode puts this folder on ``sys.path``); ``tests/ctxpack`` deliberately has no
``__init__.py`` because a package named ``ctxpack`` there would shadow the library.
"""

from __future__ import annotations

import base64
import hashlib
import json
from typing import Any, Iterable

PACK_SCHEMA = "ctxpack.pack.v1"
DELTA_SCHEMA = "ctxpack.delta.v1"
PACK_FIELDS = {"byte_count", "chunk_bytes", "digest", "schema", "total_bytes"}
DELTA_FIELDS = {"base_digest", "kept_chunks", "new_chunks", "schema", "target_digest"}

ERROR_CODES = frozenset(
    {
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
    }
)


def canon(obj: Any) -> bytes:
    """Canonical JSON as the spec defines it."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode("ascii")


def digest_of_b64(chunk_strings: Iterable[Any]) -> str:
    """`sha256:` + hex over canonical JSON of {"chunk_bytes": [...], "schema": ...}.

    Accepts arbitrary JSON values in the list so that tests can compute the digest
    a malformed pack *would* have if its chunk list were taken at face value.
    """
    body = canon({"chunk_bytes": list(chunk_strings), "schema": PACK_SCHEMA})
    return "sha256:" + hashlib.sha256(body).hexdigest()


def fix_byte_count(obj: dict) -> dict:
    """Set obj['byte_count'] to the fixed point of its canonical length (in place)."""
    guess = 0
    for _ in range(10):
        obj["byte_count"] = guess
        n = len(canon(obj))
        if n == guess:
            return obj
        guess = n
    raise AssertionError("byte_count did not converge")  # pragma: no cover


def pack_obj_from_b64(chunk_strings: list[Any], total_bytes: int | None = None) -> dict:
    """A fully consistent pack dict built from chunk *strings* taken at face value.

    digest is recomputed over exactly these strings and byte_count is the fixed
    point, so a malformed chunk string is the only thing wrong with the result.
    """
    if total_bytes is None:
        total_bytes = 0
        for s in chunk_strings:
            if isinstance(s, str):
                try:
                    total_bytes += len(base64.b64decode(s))
                except Exception:  # noqa: BLE001 - malformed on purpose
                    pass
    obj = {
        "chunk_bytes": list(chunk_strings),
        "digest": digest_of_b64(chunk_strings),
        "schema": PACK_SCHEMA,
        "total_bytes": total_bytes,
    }
    return fix_byte_count(obj)


def pack_obj(raw_chunks: list[bytes]) -> dict:
    """A fully consistent canonical pack dict from raw chunk bytes."""
    return pack_obj_from_b64([b64(c) for c in raw_chunks], sum(len(c) for c in raw_chunks))


def pack_bytes(raw_chunks: list[bytes]) -> bytes:
    return canon(pack_obj(raw_chunks))


def delta_obj(base_raw: list[bytes], target_raw: list[bytes]) -> dict:
    """The delta dict between two chunk lists, computed from the spec."""
    kept = 0
    for a, b in zip(base_raw, target_raw, strict=False):
        if a != b:
            break
        kept += 1
    return {
        "base_digest": digest_of_b64([b64(c) for c in base_raw]),
        "kept_chunks": kept,
        "new_chunks": [b64(c) for c in target_raw[kept:]],
        "schema": DELTA_SCHEMA,
        "target_digest": digest_of_b64([b64(c) for c in target_raw]),
    }


def reference_split(text: str, max_chunk_bytes: int = 512) -> list[bytes]:
    """Straightforward oracle for split_content, written from the spec's prose."""
    assert max_chunk_bytes >= 4
    lines: list[str] = []
    start = 0
    while start < len(text):
        end = text.find("\n", start)
        if end < 0:
            lines.append(text[start:])
            break
        lines.append(text[start : end + 1])
        start = end + 1
    chunks: list[bytes] = []
    current = b""
    for line in lines:
        raw = line.encode("utf-8")
        if len(raw) > max_chunk_bytes:
            if current:
                chunks.append(current)
                current = b""
            piece = b""
            for ch in line:
                cb = ch.encode("utf-8")
                if len(piece) + len(cb) > max_chunk_bytes:
                    chunks.append(piece)
                    piece = b""
                piece += cb
            if piece:
                chunks.append(piece)
            continue
        if current and len(current) + len(raw) > max_chunk_bytes:
            chunks.append(current)
            current = b""
        current += raw
    if current:
        chunks.append(current)
    return chunks


def error_code(exc: BaseException) -> str | None:
    return getattr(exc, "code", None)
