"""`ctxpack selftest`: every rule of ctxpack v1, checked against this implementation."""

from __future__ import annotations

import base64
import functools
import hashlib
import json
from typing import Any, Callable, Iterator

from .chunking import split_content
from .errors import ContextPackError
from .pack import PACK_SCHEMA, ContextPack, ContextPackDelta, apply_delta, canonical_json

VECTORS = (
    (
        "",
        512,
        b'{"byte_count":161,"chunk_bytes":[],"digest":"sha256:795560be8d22a80a17c8e15ef722ccc35494919cee25812780eecd534a459f60","schema":"ctxpack.pack.v1","total_bytes":0}',
    ),
    (
        "hello\nworld\n",
        512,
        b'{"byte_count":180,"chunk_bytes":["aGVsbG8Kd29ybGQK"],"digest":"sha256:6690723525f847908acf0ab86eb03517ca9831fa1883d450a63e2e33b366f4f2","schema":"ctxpack.pack.v1","total_bytes":12}',
    ),
    (
        "ab\n紧致性😀x紧致性😀x\nend",
        8,
        '{"byte_count":234,"chunk_bytes":["YWIK","57Sn6Ie0","5oCn8J+YgHg=","57Sn6Ie0","5oCn8J+YgHg=","Cg==","ZW5k"],"digest":"sha256:c137af3d4de75521be4fd7cb4df9268148a2d3c5e8656348c36980301ab2979a","schema":"ctxpack.pack.v1","total_bytes":35}'.encode(),
    ),
)
VECTOR4_BASE = b'{"byte_count":191,"chunk_bytes":["bGluZSBvbmUK","bGluZSB0d28K"],"digest":"sha256:17c5ba846665b30279739a6a95872f2b410490a056c45e153804445dc3143a4f","schema":"ctxpack.pack.v1","total_bytes":18}'
VECTOR4_DELTA = b'{"base_digest":"sha256:17c5ba846665b30279739a6a95872f2b410490a056c45e153804445dc3143a4f","kept_chunks":2,"new_chunks":["bGluZSB0aHJlZQo="],"schema":"ctxpack.delta.v1","target_digest":"sha256:e916622c4bc7391b68d50e7292a47c48c1ef67e5a54e1ea973e6e96510309218"}'


def _pack_obj(raw_chunks: list[bytes], **override: object) -> dict[str, Any]:
    """A consistent pack object built by hand (independent of ContextPack), then overridden."""
    strings = [base64.b64encode(c).decode() for c in raw_chunks]
    digest = "sha256:" + hashlib.sha256(canonical_json({"chunk_bytes": strings, "schema": PACK_SCHEMA})).hexdigest()
    obj = {"schema": PACK_SCHEMA, "chunk_bytes": strings, "digest": digest, "total_bytes": sum(map(len, raw_chunks)), "byte_count": 0}
    for _ in range(4):
        obj["byte_count"] = len(canonical_json(obj))
    obj.update(override)
    return obj


def _expect(code: str, fn: Callable[[], object]) -> None:
    try:
        fn()
    except ContextPackError as exc:
        if exc.code != code:
            raise AssertionError(f"expected {code}, got {exc.code}") from None
        return
    raise AssertionError(f"expected {code}, nothing was raised")


def _checks() -> Iterator[tuple[str, Callable[[], None]]]:
    for i, (text, size, wire) in enumerate(VECTORS, 1):
        def vector(text: str = text, size: int = size, wire: bytes = wire) -> None:
            pack = ContextPack.from_content(text, size)
            assert pack.to_bytes() == wire, "bytes differ from the vector"
            assert ContextPack.from_bytes(wire) == pack and pack.content == text
        yield f"vector {i}: canonical pack bytes", vector

    def vector4() -> None:
        base = ContextPack.from_content("line one\nline two\n", 12)
        target = ContextPack.from_content("line one\nline two\nline three\n", 12)
        assert base.to_bytes() == VECTOR4_BASE, "base bytes differ"
        delta = ContextPackDelta.between(base, target)
        assert delta.to_bytes() == VECTOR4_DELTA, "delta bytes differ"
        assert apply_delta(base, ContextPackDelta.from_bytes(VECTOR4_DELTA)).to_bytes() == target.to_bytes()
    yield "vector 4: delta bytes and rebuild", vector4

    def chunk_rules() -> None:
        assert split_content("a\nb\nc\n", 4) == [b"a\nb\n", b"c\n"]
        assert split_content("x\r\ny", 512) == [b"x\r\ny"], "CR must stay inside the line"
        assert split_content("") == []
        assert split_content("ab\ncdefghij\nk", 4) == [b"ab\n", b"cdef", b"ghij", b"\n", b"k"]
        for c in split_content("😀" * 9, 5):
            assert len(c) <= 5 and c.decode("utf-8")
    yield "chunking: whole lines, greedy, CR kept, overlong lines cut on characters", chunk_rules

    def append_keeps_prefix() -> None:
        a = split_content("one\ntwo\nthree\n" * 20, 16)
        b = split_content("one\ntwo\nthree\n" * 20 + "four", 16)
        assert b[: len(a) - 1] == a[:-1]
    yield "chunking: appending keeps every chunk but the last", append_keeps_prefix

    yield "chunking: max_chunk_bytes < 4 -> chunk_size", lambda: _expect("chunk_size", lambda: split_content("x", 3))
    yield "chunking: lone surrogate -> utf8", lambda: _expect("utf8", lambda: split_content("a\ud800b"))

    good = canonical_json(_pack_obj([b"hello\n", "紧致性\n".encode()]))

    def parses() -> None:
        assert ContextPack.from_bytes(good).to_bytes() == good
    yield "parse: a hand-built canonical pack is accepted", parses

    bad_inputs = [
        ("not UTF-8", "invalid_json", b"\xff" + good),
        ("not JSON", "invalid_json", good[:-1]),
        ("not an object", "invalid_json", b"[]"),
        ("missing field", "fields", canonical_json({k: v for k, v in _pack_obj([b"a"]).items() if k != "total_bytes"})),
        ("extra field", "fields", canonical_json(_pack_obj([b"a"], extra=1))),
        ("wrong schema", "schema", canonical_json(_pack_obj([b"a"], schema="ctxpack.pack.v2"))),
        ("invalid Base64", "base64", canonical_json(_pack_obj([b"a"], chunk_bytes=["YQ="]))),
        ("URL-safe Base64", "base64", canonical_json(_pack_obj([b"a"], chunk_bytes=["-_8="]))),
        ("non-zero trailing bits", "base64", canonical_json(_pack_obj([b"a"], chunk_bytes=["YR=="]))),
        ("empty chunk", "chunk_size", canonical_json(_pack_obj([b""]))),
        ("chunk not UTF-8 on its own", "utf8", canonical_json(_pack_obj(["紧".encode()[:2]]))),
        ("digest format", "digest_format", canonical_json(_pack_obj([b"a"], digest="sha256:" + "A" * 64))),
        ("digest mismatch", "digest_mismatch", canonical_json(_pack_obj([b"a"], digest="sha256:" + "0" * 64))),
        ("float integer", "integer", canonical_json(_pack_obj([b"a"], total_bytes=1.0))),
        ("boolean integer", "integer", canonical_json(_pack_obj([b"a"], total_bytes=True))),
        ("negative integer", "integer", canonical_json(_pack_obj([b"a"], byte_count=-1))),
        ("total_bytes disagrees", "total_bytes", canonical_json(_pack_obj([b"a"], total_bytes=2))),
        ("byte_count disagrees", "byte_count", canonical_json(_pack_obj([b"a"], byte_count=7))),
        ("whitespace (strict)", "non_canonical", json.dumps(_pack_obj([b"a"]), sort_keys=True).encode()),
    ]
    for name, code, data in bad_inputs:
        def bad_input(code: str = code, data: bytes = data) -> None:
            _expect(code, functools.partial(ContextPack.from_bytes, data))

        yield f"parse: {name} -> {code}", bad_input

    def lenient() -> None:
        loose = json.dumps(_pack_obj([b"a"]), indent=1).encode()
        assert ContextPack.from_bytes(loose, strict=False).content == "a"
        _expect("digest_mismatch", lambda: ContextPack.from_bytes(
            json.dumps(_pack_obj([b"a"], digest="sha256:" + "0" * 64), indent=1).encode(), strict=False))
    yield "parse: strict=False accepts non-canonical JSON, keeps every other check", lenient

    base = ContextPack.from_content("a\nb\n", 4)
    target = ContextPack.from_content("a\nc\n", 4)
    delta = ContextPackDelta.between(base, target)
    other = ContextPack.from_content("z\n", 4)

    yield "apply: wrong base -> base_mismatch", lambda: _expect("base_mismatch", lambda: apply_delta(other, delta))
    yield "apply: kept beyond base -> kept_chunks", lambda: _expect(
        "kept_chunks", lambda: apply_delta(base, ContextPackDelta(base.digest, target.digest, 3, [])))
    yield "apply: forged chunks -> target_mismatch", lambda: _expect(
        "target_mismatch", lambda: apply_delta(base, ContextPackDelta(base.digest, target.digest, 1, [b"d\n"])))

    def tamper_sweep() -> None:
        wire = base.to_bytes()
        for pos in range(len(wire)):
            mutated = wire[:pos] + bytes([wire[pos] ^ 0x01]) + wire[pos + 1:]
            _expect_any(functools.partial(ContextPack.from_bytes, mutated))
            _expect_any(functools.partial(ContextPack.from_bytes, wire[:pos]))
    yield "parse: every single-byte flip and truncation of a pack is rejected", tamper_sweep


def _expect_any(fn: Callable[[], object]) -> None:
    try:
        fn()
    except ContextPackError:
        return
    raise AssertionError("tampered input was accepted")


def run(write: Callable[[str], None] = print) -> bool:
    """Run every check, write one line each; True when all pass."""
    failures = 0
    for name, check in _checks():
        try:
            check()
        except Exception as exc:  # a selftest reports every failure, whatever its type
            failures += 1
            write(f"FAIL  {name}: {exc}")
        else:
            write(f"ok    {name}")
    write("selftest passed" if failures == 0 else f"selftest FAILED: {failures} check(s)")
    return failures == 0
