"""The four vectors of the ctxpack v1 spec, byte for byte."""

from __future__ import annotations

import base64
import json

import pytest

from ctxpack import ContextPack, ContextPackDelta, ContextPackError, apply_delta, split_content

from ctxpack_helpers import canon, delta_obj, pack_bytes, reference_split

V1_TEXT = ""
V1_PACK = (
    b'{"byte_count":161,"chunk_bytes":[],"digest":"sha256:795560be8d22a80a17c8e15ef722ccc35494919cee25812780eecd534a459f60",'
    b'"schema":"ctxpack.pack.v1","total_bytes":0}'
)
V2_TEXT = "hello\nworld\n"
V2_PACK = (
    b'{"byte_count":180,"chunk_bytes":["aGVsbG8Kd29ybGQK"],'
    b'"digest":"sha256:6690723525f847908acf0ab86eb03517ca9831fa1883d450a63e2e33b366f4f2",'
    b'"schema":"ctxpack.pack.v1","total_bytes":12}'
)
V3_TEXT = "ab\n紧致性😀x紧致性😀x\nend"
V3_PACK = (
    b'{"byte_count":234,"chunk_bytes":["YWIK","57Sn6Ie0","5oCn8J+YgHg=","57Sn6Ie0","5oCn8J+YgHg=","Cg==","ZW5k"],'
    b'"digest":"sha256:c137af3d4de75521be4fd7cb4df9268148a2d3c5e8656348c36980301ab2979a",'
    b'"schema":"ctxpack.pack.v1","total_bytes":35}'
)
V4_BASE_TEXT = "line one\nline two\n"
V4_TARGET_TEXT = "line one\nline two\nline three\n"
V4_BASE = (
    b'{"byte_count":191,"chunk_bytes":["bGluZSBvbmUK","bGluZSB0d28K"],'
    b'"digest":"sha256:17c5ba846665b30279739a6a95872f2b410490a056c45e153804445dc3143a4f",'
    b'"schema":"ctxpack.pack.v1","total_bytes":18}'
)
V4_DELTA = (
    b'{"base_digest":"sha256:17c5ba846665b30279739a6a95872f2b410490a056c45e153804445dc3143a4f",'
    b'"kept_chunks":2,"new_chunks":["bGluZSB0aHJlZQo="],"schema":"ctxpack.delta.v1",'
    b'"target_digest":"sha256:e916622c4bc7391b68d50e7292a47c48c1ef67e5a54e1ea973e6e96510309218"}'
)

PACK_VECTORS = [
    pytest.param(V1_TEXT, 512, V1_PACK, id="v1-empty"),
    pytest.param(V2_TEXT, 512, V2_PACK, id="v2-hello-world"),
    pytest.param(V3_TEXT, 8, V3_PACK, id="v3-overlong-cjk-emoji"),
    pytest.param(V4_BASE_TEXT, 12, V4_BASE, id="v4-base"),
]


def _digest(pack_bytes_: bytes) -> str:
    return json.loads(pack_bytes_)["digest"]


def test_helpers_reproduce_the_spec_vectors():
    """Sanity check of the test helpers themselves against the spec's bytes."""
    for text, max_bytes, expected in [(V1_TEXT, 512, V1_PACK), (V2_TEXT, 512, V2_PACK), (V3_TEXT, 8, V3_PACK), (V4_BASE_TEXT, 12, V4_BASE)]:
        assert pack_bytes(reference_split(text, max_bytes)) == expected
    base = reference_split(V4_BASE_TEXT, 12)
    target = reference_split(V4_TARGET_TEXT, 12)
    assert canon(delta_obj(base, target)) == V4_DELTA


@pytest.mark.parametrize("text,max_bytes,expected", PACK_VECTORS)
def test_pack_vector_bytes(text, max_bytes, expected):
    pack = ContextPack.from_content(text, max_chunk_bytes=max_bytes)
    assert pack.to_bytes() == expected
    assert isinstance(pack.to_bytes(), bytes)
    assert pack.to_json() == expected.decode("utf-8")
    assert isinstance(pack.to_json(), str)


@pytest.mark.parametrize("text,max_bytes,expected", PACK_VECTORS)
def test_pack_vector_attributes(text, max_bytes, expected):
    pack = ContextPack.from_content(text, max_chunk_bytes=max_bytes)
    obj = json.loads(expected)
    assert pack.digest == obj["digest"]
    assert pack.total_bytes == obj["total_bytes"]
    assert pack.byte_count == obj["byte_count"] == len(expected)
    assert isinstance(pack.chunks, tuple)
    assert all(type(c) is bytes for c in pack.chunks)
    assert pack.chunks == tuple(base64.b64decode(s) for s in obj["chunk_bytes"])
    assert pack.content == text
    assert isinstance(pack.content, str)


@pytest.mark.parametrize("text,max_bytes,expected", PACK_VECTORS)
def test_pack_vector_parses_and_round_trips(text, max_bytes, expected):
    parsed = ContextPack.from_bytes(expected)
    assert parsed.to_bytes() == expected
    assert parsed.content == text
    assert parsed.digest == _digest(expected)
    assert parsed == ContextPack.from_content(text, max_chunk_bytes=max_bytes)
    lenient = ContextPack.from_bytes(expected, strict=False)
    assert lenient.to_bytes() == expected


@pytest.mark.parametrize("text,max_bytes,expected", PACK_VECTORS)
def test_split_content_vector(text, max_bytes, expected):
    chunks = split_content(text, max_bytes)
    assert list(chunks) == [base64.b64decode(s) for s in json.loads(expected)["chunk_bytes"]]
    assert all(type(c) is bytes for c in chunks)


def test_vector3_chunks_explicitly():
    # "ab\n" fits; the overlong line is cut at code-point boundaries into pieces of <= 8 bytes;
    # its trailing LF piece is its own chunk and "end" starts a new chunk.
    assert list(split_content(V3_TEXT, 8)) == [
        b"ab\n",
        "紧致".encode(),
        "性😀x".encode(),
        "紧致".encode(),
        "性😀x".encode(),
        b"\n",
        b"end",
    ]


def test_split_content_default_is_512():
    text = "x" * 600
    assert [len(c) for c in split_content(text)] == [512, 88]
    assert ContextPack.from_content(text).chunks == tuple(split_content(text, 512))


def test_vector4_delta_bytes():
    base = ContextPack.from_content(V4_BASE_TEXT, max_chunk_bytes=12)
    target = ContextPack.from_content(V4_TARGET_TEXT, max_chunk_bytes=12)
    assert base.to_bytes() == V4_BASE
    delta = ContextPackDelta.between(base, target)
    assert delta.to_bytes() == V4_DELTA
    obj = json.loads(V4_DELTA)
    assert delta.base_digest == obj["base_digest"] == base.digest
    assert delta.target_digest == obj["target_digest"] == target.digest
    assert delta.kept_chunks == 2
    assert isinstance(delta.new_chunks, tuple)
    assert delta.new_chunks == (b"line three\n",)


def test_vector4_target_pack_digest():
    target = ContextPack.from_content(V4_TARGET_TEXT, max_chunk_bytes=12)
    assert target.digest == json.loads(V4_DELTA)["target_digest"]
    assert target.chunks == (b"line one\n", b"line two\n", b"line three\n")
    assert target.to_bytes() == pack_bytes([b"line one\n", b"line two\n", b"line three\n"])


def test_vector4_apply_delta_reproduces_target():
    base = ContextPack.from_bytes(V4_BASE)
    delta = ContextPackDelta.from_bytes(V4_DELTA)
    assert delta.to_bytes() == V4_DELTA
    rebuilt = apply_delta(base, delta)
    target = ContextPack.from_content(V4_TARGET_TEXT, max_chunk_bytes=12)
    assert isinstance(rebuilt, ContextPack)
    assert rebuilt.content == V4_TARGET_TEXT
    assert rebuilt.to_bytes() == target.to_bytes()
    assert rebuilt == target
    assert rebuilt.digest == json.loads(V4_DELTA)["target_digest"]


def test_vector4_delta_against_wrong_base_is_rejected():
    delta = ContextPackDelta.from_bytes(V4_DELTA)
    wrong_base = ContextPack.from_bytes(V2_PACK)
    with pytest.raises(ContextPackError) as info:
        apply_delta(wrong_base, delta)
    assert info.value.code == "base_mismatch"


def test_error_is_a_value_error():
    assert issubclass(ContextPackError, ValueError)
    with pytest.raises(ValueError):
        ContextPack.from_bytes(b"not json")
