"""ctxpack v1 packs and deltas: canonical bytes, strict parsing, prefix-reuse deltas."""

from __future__ import annotations

import binascii
import hashlib
import json
import re
import threading
from typing import Any, Callable, Iterable

from .chunking import split_content
from .errors import ContextPackError

PACK_SCHEMA = "ctxpack.pack.v1"
DELTA_SCHEMA = "ctxpack.delta.v1"
PACK_FIELDS = frozenset({"schema", "chunk_bytes", "digest", "total_bytes", "byte_count"})
DELTA_FIELDS = frozenset({"schema", "base_digest", "target_digest", "kept_chunks", "new_chunks"})
DEFAULT_MAX_CHUNK_BYTES = 512

_DIGEST_RE = re.compile(r"sha256:[0-9a-f]{64}\Z")


def canonical_json(obj: Any) -> bytes:
    """Canonical JSON of the spec: sorted keys, no whitespace, raw UTF-8."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


# --- the quoted, comma-joined Base64 list is the shared core of every serialization ---

def _quoted_b64(chunks: Iterable[bytes]) -> bytes:
    """`"c1","c2",...` with each chunk as standard padded Base64 (empty for no chunks)."""
    parts = [binascii.b2a_base64(c, newline=False) for c in chunks]
    if not parts:
        return b""
    return b'"' + b'","'.join(parts) + b'"'


_DIGEST_HEAD = b'{"chunk_bytes":['
_DIGEST_TAIL = b'],"schema":"' + PACK_SCHEMA.encode() + b'"}'


def _pack_digest(quoted: bytes | memoryview) -> str:
    h = hashlib.sha256(_DIGEST_HEAD)
    h.update(quoted)  # fed in pieces: no copy of the (possibly large) chunk list
    h.update(_DIGEST_TAIL)
    return "sha256:" + h.hexdigest()


# The one shape a canonical pack can have; anything else takes the general (slower) path.
_CANONICAL_PACK = re.compile(
    rb'\{"byte_count":(0|[1-9][0-9]{0,17}),"chunk_bytes":\[(.*)\],"digest":"(sha256:[0-9a-f]{64})",'
    rb'"schema":"ctxpack\.pack\.v1","total_bytes":(0|[1-9][0-9]{0,17})\}\Z',
    re.DOTALL,
)


_PARALLEL_DIGEST_BYTES = 1 << 20


def _start_digest(quoted: bytes) -> Callable[[], str]:
    """Hash a large chunk list on another thread (hashlib releases the GIL) while decoding goes on."""
    if len(quoted) < _PARALLEL_DIGEST_BYTES:
        return lambda: _pack_digest(quoted)
    result: list[str] = []
    worker = threading.Thread(target=lambda: result.append(_pack_digest(quoted)), daemon=True)
    worker.start()

    def wait() -> str:
        worker.join()
        return result[0]

    return wait


_B64 = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
# Before "==" the last character carries 2 data bits (low 4 bits must be zero); before "=", 4 (low 2 zero).
_ZERO_LOW4 = frozenset(_B64[i] for i in range(0, 64, 16))
_ZERO_LOW2 = frozenset(_B64[i] for i in range(0, 64, 4))


def _fast_canonical_pack(data: bytes) -> "ContextPack | None":
    """Verify a canonical pack without a JSON parser; None whenever anything is off.

    A None sends the input through the general parser, which finds the first failing
    rule in the contract's order; this path only ever accepts, it never decides an error.
    """
    m = _CANONICAL_PACK.match(data)
    if m is None:
        return None
    byte_count, quoted, digest, total = int(m.group(1)), m.group(2), m.group(3).decode(), int(m.group(4))
    if byte_count != len(data):
        return None
    digest_of = _start_digest(quoted)
    if not quoted:
        strings: list[bytes] = []
    elif len(quoted) >= 2 and quoted[:1] == b'"' and quoted[-1:] == b'"':
        strings = quoted[1:-1].split(b'","')
    else:
        return None
    a2b = binascii.a2b_base64
    try:
        # Strict decoding rejects any byte outside the alphabet (quotes and commas included),
        # misplaced padding and short quanta.
        chunks = [a2b(s, strict_mode=True) for s in strings]
    except binascii.Error:
        return None
    if not all(chunks):
        return None
    for s in strings:
        # What strict decoding leaves unchecked: non-zero trailing bits before the padding.
        if s[-1] == 61:  # "="
            if s[-2] == 61:
                if s[-3] not in _ZERO_LOW4:
                    return None
            elif s[-2] not in _ZERO_LOW2:
                return None
    # ASCII chunks are valid UTF-8 already (isascii is a fast word scan); only the others are decoded.
    try:
        for c in chunks:
            if not c.isascii():
                c.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if sum(map(len, chunks)) != total or digest_of() != digest:
        return None
    pack = ContextPack._trusted(tuple(chunks), quoted, digest)
    if pack._byte_count != byte_count:
        return None
    object.__setattr__(pack, "_bytes", data)
    return pack


def _pack_bytes(quoted: bytes, digest: str, total_bytes: int, byte_count: int) -> bytes:
    return b"".join(
        (
            b'{"byte_count":',
            str(byte_count).encode(),
            b',"chunk_bytes":[',
            quoted,
            b'],"digest":"',
            digest.encode(),
            b'","schema":"',
            PACK_SCHEMA.encode(),
            b'","total_bytes":',
            str(total_bytes).encode(),
            b"}",
        )
    )


def _byte_count(quoted_len: int, total_bytes: int) -> int:
    """The fixed point of byte_count, computed arithmetically (no re-serialization)."""
    fixed = len(
        b'{"byte_count":,"chunk_bytes":[],"digest":"","schema":"'
        + PACK_SCHEMA.encode()
        + b'","total_bytes":}'
    )
    rest = fixed + quoted_len + len("sha256:") + 64 + len(str(total_bytes))
    digits = len(str(rest))
    while len(str(rest + digits)) != digits:
        digits += 1
    return rest + digits


def _check_chunk_bytes(chunks: Iterable[Any]) -> tuple[bytes, ...]:
    out = tuple(chunks)
    for c in out:
        if not isinstance(c, bytes):
            raise TypeError(f"chunks must be bytes, not {type(c).__name__}")
    for i, c in enumerate(out):
        if not c:
            raise ContextPackError("chunk_size", f"chunk {i} is empty")
    for i, c in enumerate(out):
        try:
            c.decode("utf-8")
        except UnicodeDecodeError:
            raise ContextPackError("utf8", f"chunk {i} is not valid UTF-8 on its own") from None
    return out


class _Frozen:
    __slots__ = ()

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable")


class ContextPack(_Frozen):
    """A verifiable chunked pack of one text (immutable, compares by value)."""

    __slots__ = ("_chunks", "_quoted", "_digest", "_total_bytes", "_byte_count", "_bytes")
    _chunks: tuple[bytes, ...]
    _quoted: bytes
    _digest: str
    _total_bytes: int
    _byte_count: int
    _bytes: bytes | None

    def __init__(self, chunks: Iterable[bytes]) -> None:
        """Build a pack from raw chunks (each non-empty, valid UTF-8 on its own)."""
        checked = _check_chunk_bytes(chunks)
        self._init(checked, _quoted_b64(checked))

    def _init(self, chunks: tuple[bytes, ...], quoted: bytes, digest: str | None = None) -> None:
        setter = object.__setattr__
        setter(self, "_chunks", chunks)
        setter(self, "_quoted", quoted)
        setter(self, "_digest", digest or _pack_digest(quoted))
        total = sum(map(len, chunks))
        setter(self, "_total_bytes", total)
        setter(self, "_byte_count", _byte_count(len(quoted), total))
        setter(self, "_bytes", None)

    @classmethod
    def _trusted(cls, chunks: tuple[bytes, ...], quoted: bytes | None = None, digest: str | None = None) -> "ContextPack":
        pack = object.__new__(cls)
        pack._init(chunks, _quoted_b64(chunks) if quoted is None else quoted, digest)
        return pack

    @classmethod
    def from_content(cls, text: str | bytes, max_chunk_bytes: int = DEFAULT_MAX_CHUNK_BYTES) -> "ContextPack":
        """Pack a text, chunked by `split_content` rules."""
        chunks = split_content(text, max_chunk_bytes)
        return cls._trusted(tuple(chunks))

    @classmethod
    def from_bytes(cls, data: bytes, strict: bool = True) -> "ContextPack":
        """Parse and verify a serialized pack; any broken rule raises ContextPackError."""
        if isinstance(data, (bytes, bytearray, memoryview)):
            fast = _fast_canonical_pack(bytes(data))
            if fast is not None:
                return fast
        obj = _load_object(data)
        _check_fields(obj, PACK_FIELDS, "pack")
        _check_schema(obj, PACK_SCHEMA)
        strings = _check_b64_list(obj["chunk_bytes"], "chunk_bytes")
        chunks = _decode_chunks(strings)
        _check_digest_format(obj["digest"], "digest")
        quoted = _quoted_from_strings(strings)
        digest = _pack_digest(quoted)
        if obj["digest"] != digest:
            raise ContextPackError("digest_mismatch", "pack digest does not match its chunks (tampered or corrupt)")
        _check_integer(obj["total_bytes"], "total_bytes")
        _check_integer(obj["byte_count"], "byte_count")
        total = sum(map(len, chunks))
        if obj["total_bytes"] != total:
            raise ContextPackError("total_bytes", f"total_bytes is {obj['total_bytes']}, the chunks hold {total}")
        pack = cls._trusted(chunks, quoted, digest)
        if obj["byte_count"] != pack._byte_count:
            raise ContextPackError(
                "byte_count", f"byte_count is {obj['byte_count']}, the canonical size is {pack._byte_count}"
            )
        if strict and bytes(data) != pack.to_bytes():
            raise ContextPackError("non_canonical", "pack is not in canonical serialization")
        return pack

    @property
    def chunks(self) -> tuple[bytes, ...]:
        return self._chunks

    @property
    def digest(self) -> str:
        return self._digest

    @property
    def total_bytes(self) -> int:
        return self._total_bytes

    @property
    def byte_count(self) -> int:
        return self._byte_count

    @property
    def content(self) -> str:
        return b"".join(self._chunks).decode("utf-8")

    def to_bytes(self) -> bytes:
        """The canonical serialization (cached: the pack is immutable)."""
        if self._bytes is None:
            data = _pack_bytes(self._quoted, self._digest, self._total_bytes, self._byte_count)
            object.__setattr__(self, "_bytes", data)
            return data
        return self._bytes

    def to_json(self) -> str:
        return self.to_bytes().decode("utf-8")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ContextPack):
            return NotImplemented
        return self._digest == other._digest and self._chunks == other._chunks

    def __hash__(self) -> int:
        return hash(self._digest)

    def __repr__(self) -> str:
        return (
            f"ContextPack(digest={self._digest!r}, chunks={len(self._chunks)}, "
            f"total_bytes={self._total_bytes}, byte_count={self._byte_count})"
        )


class ContextPackDelta(_Frozen):
    """What turns a base pack into a target: keep a prefix of chunks, append new ones."""

    __slots__ = ("_base_digest", "_target_digest", "_kept_chunks", "_new_chunks", "_bytes")
    _base_digest: str
    _target_digest: str
    _kept_chunks: int
    _new_chunks: tuple[bytes, ...]
    _bytes: bytes | None

    def __init__(self, base_digest: str, target_digest: str, kept_chunks: int, new_chunks: Iterable[bytes]) -> None:
        _check_digest_format(base_digest, "base_digest")
        _check_digest_format(target_digest, "target_digest")
        _check_integer(kept_chunks, "kept_chunks")
        setter = object.__setattr__
        setter(self, "_base_digest", base_digest)
        setter(self, "_target_digest", target_digest)
        setter(self, "_kept_chunks", kept_chunks)
        setter(self, "_new_chunks", _check_chunk_bytes(new_chunks))
        setter(self, "_bytes", None)

    @classmethod
    def between(cls, base: ContextPack, target: ContextPack) -> "ContextPackDelta":
        """The delta keeping the longest common chunk prefix of base and target."""
        kept = 0
        for a, b in zip(base.chunks, target.chunks, strict=False):
            if a != b:
                break
            kept += 1
        delta = object.__new__(cls)
        setter = object.__setattr__
        setter(delta, "_base_digest", base.digest)
        setter(delta, "_target_digest", target.digest)
        setter(delta, "_kept_chunks", kept)
        setter(delta, "_new_chunks", target.chunks[kept:])
        setter(delta, "_bytes", None)
        return delta

    @classmethod
    def from_bytes(cls, data: bytes, strict: bool = True) -> "ContextPackDelta":
        """Parse a serialized delta; any broken rule raises ContextPackError."""
        obj = _load_object(data)
        _check_fields(obj, DELTA_FIELDS, "delta")
        _check_schema(obj, DELTA_SCHEMA)
        strings = _check_b64_list(obj["new_chunks"], "new_chunks")
        chunks = _decode_chunks(strings)
        _check_digest_format(obj["base_digest"], "base_digest")
        _check_digest_format(obj["target_digest"], "target_digest")
        _check_integer(obj["kept_chunks"], "kept_chunks")
        delta = cls(obj["base_digest"], obj["target_digest"], obj["kept_chunks"], chunks)
        if strict and bytes(data) != delta.to_bytes():
            raise ContextPackError("non_canonical", "delta is not in canonical serialization")
        return delta

    @property
    def base_digest(self) -> str:
        return self._base_digest

    @property
    def target_digest(self) -> str:
        return self._target_digest

    @property
    def kept_chunks(self) -> int:
        return self._kept_chunks

    @property
    def new_chunks(self) -> tuple[bytes, ...]:
        return self._new_chunks

    def to_bytes(self) -> bytes:
        """The canonical serialization."""
        if self._bytes is None:
            data = b"".join(
                (
                    b'{"base_digest":"',
                    self._base_digest.encode(),
                    b'","kept_chunks":',
                    str(self._kept_chunks).encode(),
                    b',"new_chunks":[',
                    _quoted_b64(self._new_chunks),
                    b'],"schema":"',
                    DELTA_SCHEMA.encode(),
                    b'","target_digest":"',
                    self._target_digest.encode(),
                    b'"}',
                )
            )
            object.__setattr__(self, "_bytes", data)
            return data
        return self._bytes

    def to_json(self) -> str:
        return self.to_bytes().decode("utf-8")

    def _key(self) -> tuple[Any, ...]:
        return (self._base_digest, self._target_digest, self._kept_chunks, self._new_chunks)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ContextPackDelta):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key()[:3])

    def __repr__(self) -> str:
        return (
            f"ContextPackDelta(base={self._base_digest[:19]}..., target={self._target_digest[:19]}..., "
            f"kept_chunks={self._kept_chunks}, new_chunks={len(self._new_chunks)})"
        )


def apply_delta(base: ContextPack, delta: ContextPackDelta) -> ContextPack:
    """Rebuild the target pack from a base and a delta, verifying every step."""
    if delta.base_digest != base.digest:
        raise ContextPackError(
            "base_mismatch", f"delta is for base {delta.base_digest}, not {base.digest}"
        )
    if not 0 <= delta.kept_chunks <= len(base.chunks):
        raise ContextPackError(
            "kept_chunks", f"delta keeps {delta.kept_chunks} chunks but the base has {len(base.chunks)}"
        )
    rebuilt = ContextPack._trusted(base.chunks[: delta.kept_chunks] + delta.new_chunks)
    if rebuilt.digest != delta.target_digest:
        raise ContextPackError(
            "target_mismatch", "rebuilt pack does not match the delta's target digest (corrupt or forged delta)"
        )
    return rebuilt


# --- parsing helpers, each raising the code of the rule it checks ---

def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        raise ValueError("duplicate key in object")
    return obj


def _load_object(data: bytes) -> dict[str, Any]:
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"data must be bytes, not {type(data).__name__}")
    try:
        text = bytes(data).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ContextPackError("invalid_json", f"input is not UTF-8 (byte {exc.start})") from None
    try:
        obj = json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_reject_constant)
    except RecursionError:
        raise ContextPackError("invalid_json", "input nests too deeply") from None
    except ValueError as exc:
        raise ContextPackError("invalid_json", f"input is not JSON ({exc})") from None
    if not isinstance(obj, dict):
        raise ContextPackError("invalid_json", f"input is a JSON {type(obj).__name__}, not an object")
    return obj


def _check_fields(obj: dict[str, Any], expected: frozenset[str], what: str) -> None:
    keys = set(obj)
    if keys != expected:
        missing = sorted(expected - keys)
        extra = sorted(keys - expected)
        parts = []
        if missing:
            parts.append("missing " + ", ".join(map(repr, missing)))
        if extra:
            parts.append("unexpected " + ", ".join(map(repr, extra)))
        raise ContextPackError("fields", f"{what} fields are wrong: {'; '.join(parts)}")


def _check_schema(obj: dict[str, Any], expected: str) -> None:
    if obj["schema"] != expected:
        raise ContextPackError("schema", f"schema must be {expected!r}, got {obj['schema']!r}")


def _check_b64_list(value: Any, field: str) -> list[str]:
    if not isinstance(value, list):
        raise ContextPackError("fields", f"{field} must be an array")
    for i, s in enumerate(value):
        if not isinstance(s, str):
            raise ContextPackError("base64", f"{field}[{i}] is not a string")
    return value


def _decode_chunks(strings: list[str]) -> tuple[bytes, ...]:
    chunks = []
    for i, s in enumerate(strings):
        try:
            raw = binascii.a2b_base64(s.encode("ascii"), strict_mode=True)
        except (UnicodeEncodeError, binascii.Error):
            raise ContextPackError("base64", f"chunk {i} is not valid standard Base64") from None
        # Canonical Base64: re-encoding must give the same string (padding, trailing bits).
        if binascii.b2a_base64(raw, newline=False).decode("ascii") != s:
            raise ContextPackError("base64", f"chunk {i} is not canonical Base64")
        chunks.append(raw)
    for i, c in enumerate(chunks):
        if not c:
            raise ContextPackError("chunk_size", f"chunk {i} is empty")
    for i, c in enumerate(chunks):
        try:
            c.decode("utf-8")
        except UnicodeDecodeError:
            raise ContextPackError("utf8", f"chunk {i} is not valid UTF-8 on its own") from None
    return tuple(chunks)


def _quoted_from_strings(strings: list[str]) -> bytes:
    if not strings:
        return b""
    return ('"' + '","'.join(strings) + '"').encode("ascii")


def _check_digest_format(value: Any, field: str) -> None:
    if not isinstance(value, str) or not _DIGEST_RE.match(value):
        raise ContextPackError("digest_format", f"{field} must be 'sha256:' and 64 lowercase hex digits")


def _check_integer(value: Any, field: str) -> None:
    if type(value) is not int or value < 0:
        raise ContextPackError("integer", f"{field} must be a non-negative JSON integer, got {value!r}")
