"""One test per parser rule of ctxpack v1, each naming its error code.

Malformed inputs are built by editing a parsed dict and re-serializing canonically,
recomputing digest/byte_count where needed so that ONLY the rule under test fails.
"""

from __future__ import annotations

import base64
import json

import pytest

from ctxpack import ContextPack, ContextPackDelta, ContextPackError, apply_delta

from ctxpack_helpers import (
    DELTA_SCHEMA,
    PACK_SCHEMA,
    b64,
    canon,
    delta_obj,
    digest_of_b64,
    fix_byte_count,
    pack_obj,
    pack_obj_from_b64,
)

RAW = [b"alpha\n", "紧致性\n".encode(), "😀 ok\n".encode(), b"end"]
BASE_RAW = [b"line one\n", b"line two\n"]
TARGET_RAW = [b"line one\n", b"line two\n", b"line three\n"]


def good_pack() -> dict:
    return pack_obj(list(RAW))


def good_delta() -> dict:
    return delta_obj(list(BASE_RAW), list(TARGET_RAW))


def pack_error(data: bytes, strict: bool = True) -> str:
    with pytest.raises(ContextPackError) as info:
        ContextPack.from_bytes(data, strict=strict)
    return info.value.code


def delta_error(data: bytes, strict: bool = True) -> str:
    with pytest.raises(ContextPackError) as info:
        ContextPackDelta.from_bytes(data, strict=strict)
    return info.value.code


def both_modes(fn, data: bytes) -> set[str]:
    return {fn(data, strict=True), fn(data, strict=False)}


def test_fixtures_are_valid():
    pack = ContextPack.from_bytes(canon(good_pack()))
    assert pack.chunks == tuple(RAW)
    assert pack.content == b"".join(RAW).decode()
    delta = ContextPackDelta.from_bytes(canon(good_delta()))
    base = ContextPack.from_bytes(canon(pack_obj(BASE_RAW)))
    assert apply_delta(base, delta).to_bytes() == canon(pack_obj(TARGET_RAW))


# --- invalid_json ------------------------------------------------------------------

NOT_JSON = [
    pytest.param(b"", id="empty"),
    pytest.param(b"not json", id="text"),
    pytest.param(b"{", id="open-brace"),
    pytest.param(b'{"schema":', id="cut"),
    pytest.param(b"{'schema': 'ctxpack.pack.v1'}", id="single-quotes"),
    pytest.param(b"\xff\xfe{}", id="not-utf8"),
    pytest.param(b"\x00", id="nul"),
]
NOT_OBJECT = [
    pytest.param(b"[]", id="empty-array"),
    pytest.param(b"[{}]", id="array-of-object"),
    pytest.param(b'"ctxpack.pack.v1"', id="string"),
    pytest.param(b"1", id="number"),
    pytest.param(b"null", id="null"),
    pytest.param(b"true", id="true"),
]


@pytest.mark.parametrize("data", NOT_JSON + NOT_OBJECT)
def test_invalid_json_pack(data):
    assert both_modes(pack_error, data) == {"invalid_json"}


@pytest.mark.parametrize("data", NOT_JSON + NOT_OBJECT)
def test_invalid_json_delta(data):
    assert both_modes(delta_error, data) == {"invalid_json"}


def test_invalid_json_non_utf8_byte_inside_a_string():
    data = canon(good_pack()).replace(b"ctxpack.pack.v1", b"ctxpack.pack.v\xff")
    assert both_modes(pack_error, data) == {"invalid_json"}
    data = canon(good_delta()).replace(b"ctxpack.delta.v1", b"ctxpack.delta.v\xe9")
    assert both_modes(delta_error, data) == {"invalid_json"}


def test_invalid_json_utf16_is_not_utf8_json():
    # json.loads(bytes) would auto-detect UTF-16; the spec demands UTF-8 JSON.
    text = canon(good_pack()).decode("utf-8")
    for encoding in ("utf-16", "utf-16-le", "utf-32"):
        assert both_modes(pack_error, text.encode(encoding)) == {"invalid_json"}, encoding


def test_invalid_json_duplicate_keys():
    obj = good_pack()
    data = canon(obj)
    # duplicate "schema" key with the same value: still rejected (ambiguous object)
    dup = data[:-1] + b',"schema":"ctxpack.pack.v1"}'
    assert both_modes(pack_error, dup) == {"invalid_json"}
    dup = b'{"byte_count":1,' + data[1:]
    assert both_modes(pack_error, dup) == {"invalid_json"}
    ddata = canon(good_delta())
    assert both_modes(delta_error, ddata[:-1] + b',"kept_chunks":2}') == {"invalid_json"}


@pytest.mark.parametrize("constant", [b"NaN", b"Infinity", b"-Infinity"])
def test_invalid_json_nan_and_infinity(constant):
    data = canon(good_pack())
    total = str(good_pack()["total_bytes"]).encode()
    bad = data.replace(b'"total_bytes":' + total, b'"total_bytes":' + constant)
    assert bad != data
    assert both_modes(pack_error, bad) == {"invalid_json"}
    ddata = canon(good_delta())
    bad = ddata.replace(b'"kept_chunks":2', b'"kept_chunks":' + constant)
    assert both_modes(delta_error, bad) == {"invalid_json"}


def test_invalid_json_deep_nesting_is_a_context_pack_error():
    data = b"[" * 100_000 + b"]" * 100_000
    assert both_modes(pack_error, data) == {"invalid_json"}
    assert both_modes(delta_error, data) == {"invalid_json"}
    data = b'{"a":' * 50_000 + b"1" + b"}" * 50_000
    assert both_modes(pack_error, data) == {"invalid_json"}


def test_invalid_json_trailing_garbage():
    data = canon(good_pack())
    assert both_modes(pack_error, data + b"{}") == {"invalid_json"}
    assert both_modes(pack_error, data + b"x") == {"invalid_json"}


# --- non_canonical -----------------------------------------------------------------


def _noncanonical_variants(obj: dict) -> dict[str, bytes]:
    canonical = canon(obj)
    variants = {
        "indent": json.dumps(obj, sort_keys=True, indent=1, ensure_ascii=False).encode(),
        "spaces": json.dumps(obj, sort_keys=True, ensure_ascii=False).encode(),
        "key-order": json.dumps(dict(reversed(list(obj.items()))), separators=(",", ":"), ensure_ascii=False).encode(),
        "trailing-newline": canonical + b"\n",
        "leading-space": b" " + canonical,
        "crlf": canonical + b"\r\n",
        # escapes where canonical JSON writes the raw character: all pack/delta strings
        # are ASCII, so escape an ASCII letter and a '/' of a Base64 chunk.
        "escaped-letter": canonical.replace(b'"schema":"ctxpack', b'"schema":"\\u0063txpack', 1),
    }
    if b"/" in canonical:
        variants["escaped-slash"] = canonical.replace(b"/", b"\\/", 1)
    for name, data in variants.items():
        assert data != canonical, name
        assert json.loads(data) == obj, name
    return variants


def _slash_pack() -> dict:
    # "?>" / "???" encode with '/' in standard Base64: make sure a chunk has one
    raw = [b"???\n", "性😀x".encode(), b"end"]
    obj = pack_obj(raw)
    assert any("/" in s for s in obj["chunk_bytes"])
    return obj


@pytest.mark.parametrize("variant", ["indent", "spaces", "key-order", "trailing-newline", "leading-space", "crlf", "escaped-letter", "escaped-slash"])
def test_non_canonical_pack(variant):
    obj = _slash_pack()
    data = _noncanonical_variants(obj)[variant]
    assert pack_error(data) == "non_canonical"
    lenient = ContextPack.from_bytes(data, strict=False)
    assert lenient.to_bytes() == canon(obj)
    assert lenient.byte_count == obj["byte_count"]


@pytest.mark.parametrize("variant", ["indent", "spaces", "key-order", "trailing-newline", "leading-space", "crlf", "escaped-letter"])
def test_non_canonical_delta(variant):
    obj = good_delta()
    data = _noncanonical_variants(obj)[variant]
    assert delta_error(data) == "non_canonical"
    lenient = ContextPackDelta.from_bytes(data, strict=False)
    assert lenient.to_bytes() == canon(obj)
    base = ContextPack.from_bytes(canon(pack_obj(BASE_RAW)))
    assert apply_delta(base, lenient).to_bytes() == canon(pack_obj(TARGET_RAW))


def test_non_canonical_escaped_slash_in_delta():
    obj = delta_obj([b"a\n"], [b"a\n", b"???\n"])
    data = canon(obj)
    assert b"/" in data
    bad = data.replace(b"/", b"\\/", 1)
    assert delta_error(bad) == "non_canonical"
    assert ContextPackDelta.from_bytes(bad, strict=False).to_bytes() == data


def test_non_canonical_ascii_escapes_of_whole_document():
    # ensure_ascii=True changes nothing for an all-ASCII pack: it must be accepted
    obj = good_pack()
    data = json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()
    assert data == canon(obj)
    assert ContextPack.from_bytes(data).to_bytes() == data


def test_non_canonical_is_checked_last():
    """Decision: in strict mode non_canonical comes after every other check."""
    obj = good_pack()
    spaced = lambda o: json.dumps(o, sort_keys=True, indent=2, ensure_ascii=False).encode()  # noqa: E731
    bad = dict(obj, digest="sha256:" + "0" * 64)
    assert pack_error(spaced(bad)) == "digest_mismatch"
    bad = dict(obj, digest="SHA256:" + "0" * 64)
    assert pack_error(spaced(bad)) == "digest_format"
    bad = dict(obj, total_bytes=obj["total_bytes"] + 1)
    assert pack_error(spaced(bad)) == "total_bytes"
    bad = dict(obj, byte_count=obj["byte_count"] + 1)
    assert pack_error(spaced(bad)) == "byte_count"
    bad = dict(obj, total_bytes=float(obj["total_bytes"]))
    assert pack_error(spaced(bad)) == "integer"
    bad = dict(obj, schema="ctxpack.pack.v2")
    assert pack_error(spaced(bad)) == "schema"
    bad = dict(obj)
    del bad["digest"]
    assert pack_error(spaced(bad)) == "fields"
    bad = dict(obj, chunk_bytes=["YR=="])
    assert pack_error(spaced(bad)) == "base64"
    # the byte_count of a non-canonical pack is the canonical length, never its own length
    data = spaced(obj)
    bad = dict(obj, byte_count=len(data))
    assert pack_error(spaced(bad), strict=False) == "byte_count"
    assert pack_error(spaced(bad), strict=True) == "byte_count"
    # delta
    dobj = good_delta()
    assert delta_error(spaced(dict(dobj, kept_chunks=True))) == "integer"
    assert delta_error(spaced(dict(dobj, base_digest="x"))) == "digest_format"


# --- fields ------------------------------------------------------------------------


@pytest.mark.parametrize("missing", ["byte_count", "chunk_bytes", "digest", "schema", "total_bytes"])
def test_fields_missing_pack(missing):
    obj = good_pack()
    del obj[missing]
    if missing != "byte_count":
        fix_byte_count(obj)
    assert both_modes(pack_error, canon(obj)) == {"fields"}


@pytest.mark.parametrize("extra", [("extra", 1), ("Schema", "ctxpack.pack.v1"), ("byte_count ", 1), ("", None), ("base_digest", "sha256:" + "0" * 64)])
def test_fields_extra_pack(extra):
    obj = good_pack()
    obj[extra[0]] = extra[1]
    fix_byte_count(obj)
    assert both_modes(pack_error, canon(obj)) == {"fields"}


def test_fields_delta_fields_in_a_pack_and_vice_versa():
    assert both_modes(pack_error, canon(good_delta())) == {"fields"}
    assert both_modes(delta_error, canon(good_pack())) == {"fields"}
    assert both_modes(pack_error, b"{}") == {"fields"}
    assert both_modes(delta_error, b"{}") == {"fields"}


@pytest.mark.parametrize("missing", ["base_digest", "kept_chunks", "new_chunks", "schema", "target_digest"])
def test_fields_missing_delta(missing):
    obj = good_delta()
    del obj[missing]
    assert both_modes(delta_error, canon(obj)) == {"fields"}


@pytest.mark.parametrize("extra", [("byte_count", 250), ("digest", "sha256:" + "0" * 64), ("x", [])])
def test_fields_extra_delta(extra):
    obj = good_delta()
    obj[extra[0]] = extra[1]
    assert both_modes(delta_error, canon(obj)) == {"fields"}


@pytest.mark.parametrize("value", ["YWJj", {"0": "YWJj"}, None, 1, True])
def test_fields_chunk_bytes_not_an_array(value):
    obj = good_pack()
    obj["chunk_bytes"] = value
    fix_byte_count(obj)
    assert both_modes(pack_error, canon(obj)) == {"fields"}


@pytest.mark.parametrize("value", ["bGluZSB0aHJlZQo=", {"0": "bGluZSB0aHJlZQo="}, None, 0])
def test_fields_new_chunks_not_an_array(value):
    obj = good_delta()
    obj["new_chunks"] = value
    assert both_modes(delta_error, canon(obj)) == {"fields"}


def test_fields_checked_before_schema():
    obj = good_pack()
    obj["schema"] = "nope"
    del obj["digest"]
    assert pack_error(canon(obj)) == "fields"


# --- schema ------------------------------------------------------------------------

BAD_SCHEMAS = ["ctxpack.pack.v2", "ctxpack.pack.v1 ", "CTXPACK.PACK.V1", "", "ctxpack.delta.v1", 1, None, ["ctxpack.pack.v1"], {"v": 1}]


@pytest.mark.parametrize("schema", BAD_SCHEMAS)
def test_schema_pack(schema):
    obj = good_pack()
    obj["schema"] = schema
    fix_byte_count(obj)
    assert both_modes(pack_error, canon(obj)) == {"schema"}


@pytest.mark.parametrize("schema", ["ctxpack.delta.v2", "ctxpack.pack.v1", "", 1, None, ["ctxpack.delta.v1"]])
def test_schema_delta(schema):
    obj = good_delta()
    obj["schema"] = schema
    assert both_modes(delta_error, canon(obj)) == {"schema"}


def test_schema_checked_before_chunks():
    obj = good_pack()
    obj["schema"] = "ctxpack.pack.v0"
    obj["chunk_bytes"] = [1]
    fix_byte_count(obj)
    assert pack_error(canon(obj)) == "schema"


# --- base64 ------------------------------------------------------------------------

BAD_B64 = [
    pytest.param(1, id="int"),
    pytest.param(None, id="null"),
    pytest.param(True, id="bool"),
    pytest.param(["YQ=="], id="list"),
    pytest.param({"b": "YQ=="}, id="object"),
    pytest.param("YQ", id="missing-padding"),
    pytest.param("YQ=", id="short-padding"),
    pytest.param("YQ===", id="extra-padding"),
    pytest.param("YR==", id="nonzero-trailing-bits-1"),
    pytest.param("YWJ=", id="nonzero-trailing-bits-2"),
    pytest.param("YWJj ZGVm", id="space-inside"),
    pytest.param("YWJj\nZGVm", id="newline-inside"),
    pytest.param(" YWJj", id="leading-space"),
    pytest.param("YWJj\n", id="trailing-newline"),
    pytest.param("YW*j", id="bad-alphabet"),
    pytest.param("5oCn8J-YgHg=", id="urlsafe-minus"),
    pytest.param("Pz8_", id="urlsafe-underscore"),
    pytest.param("YQ==YQ==", id="padding-in-middle"),
    pytest.param("=YQ=", id="leading-padding"),
    pytest.param("Y", id="one-char"),
    pytest.param("YWJjZ", id="bad-length"),
    pytest.param("YWJj\u00e9", id="non-ascii"),
    pytest.param("ＹＷＪｊ", id="fullwidth-digits"),
    pytest.param("YWJj\x00", id="nul"),
]


def test_base64_fixture_sanity():
    assert base64.b64encode("性😀x".encode()).decode() == "5oCn8J+YgHg="
    assert base64.b64encode(b"???").decode() == "Pz8/"
    assert base64.b64decode("YR==") == base64.b64decode("YQ==") == b"a"


@pytest.mark.parametrize("bad", BAD_B64)
def test_base64_pack(bad):
    obj = pack_obj_from_b64(["YWxwaGEK", bad], total_bytes=7)
    assert both_modes(pack_error, canon(obj)) == {"base64"}
    obj = pack_obj_from_b64([bad], total_bytes=1)
    assert both_modes(pack_error, canon(obj)) == {"base64"}


@pytest.mark.parametrize("bad", BAD_B64)
def test_base64_delta(bad):
    obj = good_delta()
    obj["new_chunks"] = [bad]
    assert both_modes(delta_error, canon(obj)) == {"base64"}


def test_base64_checked_before_digest_format():
    obj = pack_obj_from_b64(["YR=="], total_bytes=1)
    obj["digest"] = "md5:abc"
    fix_byte_count(obj)
    assert pack_error(canon(obj)) == "base64"


# --- chunk_size --------------------------------------------------------------------


def test_chunk_size_empty_chunk_pack():
    for chunks in ([""], ["YQ==", ""], ["", "YQ=="]):
        obj = pack_obj_from_b64(chunks, total_bytes=sum(len(base64.b64decode(c)) for c in chunks))
        assert both_modes(pack_error, canon(obj)) == {"chunk_size"}, chunks


def test_chunk_size_empty_chunk_delta():
    obj = good_delta()
    obj["new_chunks"] = [""]
    assert both_modes(delta_error, canon(obj)) == {"chunk_size"}
    obj["new_chunks"] = ["bGluZSB0aHJlZQo=", ""]
    assert both_modes(delta_error, canon(obj)) == {"chunk_size"}


# --- utf8 --------------------------------------------------------------------------

BAD_UTF8 = [
    pytest.param(b"\x80", id="lone-continuation"),
    pytest.param("紧".encode()[:2], id="cjk-cut-in-half"),
    pytest.param("😀".encode()[:3], id="emoji-cut"),
    pytest.param(b"ab" + "😀".encode()[1:], id="emoji-tail"),
    pytest.param(b"\xed\xa0\x80", id="encoded-surrogate"),
    pytest.param(b"\xc0\xaf", id="overlong"),
    pytest.param(b"\xff", id="ff"),
    pytest.param(b"\xf4\x90\x80\x80", id="above-max-codepoint"),
]


@pytest.mark.parametrize("raw", BAD_UTF8)
def test_utf8_pack(raw):
    obj = pack_obj([b"fine\n", raw])
    assert both_modes(pack_error, canon(obj)) == {"utf8"}


@pytest.mark.parametrize("raw", BAD_UTF8)
def test_utf8_delta(raw):
    obj = good_delta()
    obj["new_chunks"] = [b64(raw)]
    assert both_modes(delta_error, canon(obj)) == {"utf8"}


def test_utf8_is_checked_per_chunk_even_if_the_join_is_valid():
    whole = "紧".encode()
    obj = pack_obj([whole[:1], whole[1:]])
    assert both_modes(pack_error, canon(obj)) == {"utf8"}


# --- digest_format -----------------------------------------------------------------


def _bad_digests(good: str) -> list:
    hexpart = good[len("sha256:") :]
    return [
        "sha256:" + hexpart.upper(),
        "SHA256:" + hexpart,
        "sha512:" + hexpart,
        "sha256-" + hexpart,
        "sha256:" + hexpart[:-1],
        "sha256:" + hexpart + "0",
        "sha256:" + hexpart[:-1] + "g",
        "sha256: " + hexpart[:-1],
        hexpart,
        "",
        "sha256:",
        " sha256:" + hexpart,
        "sha256:" + hexpart + "\n",
        "sha256:" + "٠" * 64,  # Arabic-Indic digits: str.isdigit() but not hex
        "sha256:" + "ａ" * 64,  # fullwidth letters
        1,
        None,
        [good],
    ]


def test_digest_format_pack():
    obj = good_pack()
    for bad in _bad_digests(obj["digest"]):
        tampered = dict(obj, digest=bad)
        fix_byte_count(tampered)
        assert both_modes(pack_error, canon(tampered)) == {"digest_format"}, bad


@pytest.mark.parametrize("field", ["base_digest", "target_digest"])
def test_digest_format_delta(field):
    obj = good_delta()
    for bad in _bad_digests(obj[field]):
        tampered = dict(obj)
        tampered[field] = bad
        assert both_modes(delta_error, canon(tampered)) == {"digest_format"}, bad


# --- digest_mismatch ---------------------------------------------------------------


def test_digest_mismatch_other_hex():
    obj = good_pack()
    for bad in ("sha256:" + "0" * 64, "sha256:" + "f" * 64, digest_of_b64([]), obj["digest"][:-1] + ("0" if obj["digest"][-1] != "0" else "1")):
        tampered = dict(obj, digest=bad)
        fix_byte_count(tampered)
        assert both_modes(pack_error, canon(tampered)) == {"digest_mismatch"}, bad


def test_digest_mismatch_chunk_changed_keeping_old_digest():
    obj = good_pack()
    for chunks in (obj["chunk_bytes"][::-1], obj["chunk_bytes"][:-1] + [b64(b"enD")], obj["chunk_bytes"][1:] + obj["chunk_bytes"][:1]):
        tampered = dict(obj, chunk_bytes=chunks)
        fix_byte_count(tampered)
        assert both_modes(pack_error, canon(tampered)) == {"digest_mismatch"}


def test_digest_covers_chunk_boundaries():
    # same text, other cut: a different (valid) pack with its own digest
    one = pack_obj([b"abcd"])
    two = pack_obj([b"ab", b"cd"])
    assert one["digest"] != two["digest"]
    tampered = dict(two, digest=one["digest"])
    fix_byte_count(tampered)
    assert pack_error(canon(tampered)) == "digest_mismatch"


def test_digest_mismatch_checked_before_integer():
    obj = good_pack()
    tampered = dict(obj, digest="sha256:" + "0" * 64, total_bytes=1.5)
    fix_byte_count(tampered)
    assert pack_error(canon(tampered)) == "digest_mismatch"


def test_any_valid_chunking_is_accepted():
    """The parser checks the listed rules, not how the chunks were cut (other chunkers interoperate)."""
    for raw in ([b"a", b"b"], [b"x" * 2000], [b"\n", b"\n"], ["紧".encode(), b"\r"]):
        data = canon(pack_obj(raw))
        pack = ContextPack.from_bytes(data)
        assert pack.chunks == tuple(raw)
        assert pack.to_bytes() == data


# --- integer -----------------------------------------------------------------------


def _float_fixed_point(obj: dict) -> dict:
    """A pack whose byte_count is a JSON float equal to the canonical length of its own serialization."""
    n = fix_byte_count(obj)["byte_count"]
    for candidate in range(n, n + 8):
        obj["byte_count"] = float(candidate)
        if len(canon(obj)) == candidate:
            return obj
    raise AssertionError("no float fixed point")


@pytest.mark.parametrize("value", ["float-equal", "float-exp", "true", "string", "negative", "negative-zero-float", "big-float"])
def test_integer_total_bytes(value):
    raw = [b"a"]  # total_bytes == 1 so that True == 1 and 1.0 == 1 would slip through a lax check
    obj = pack_obj(raw)
    obj["total_bytes"] = {
        "float-equal": 1.0,
        "float-exp": 1e0,
        "true": True,
        "string": "1",
        "negative": -1,
        "negative-zero-float": -0.0,
        "big-float": 1e300,
    }[value]
    fix_byte_count(obj)
    assert both_modes(pack_error, canon(obj)) == {"integer"}


def test_integer_total_bytes_negative_zero():
    obj = pack_obj([])
    obj["total_bytes"] = 0
    data = canon(obj).replace(b'"total_bytes":0', b'"total_bytes":-0')
    # -0 is a JSON integer equal to 0 but not the canonical spelling: non_canonical in strict mode,
    # and the lenient reader takes it as 0
    assert pack_error(data) == "non_canonical"
    assert ContextPack.from_bytes(data, strict=False).total_bytes == 0


@pytest.mark.parametrize("value", ["float-equal", "true", "string", "negative", "null", "list"])
def test_integer_byte_count(value):
    obj = good_pack()
    if value == "float-equal":
        _float_fixed_point(obj)
        assert isinstance(obj["byte_count"], float)
        assert obj["byte_count"] == len(canon(obj))
    else:
        obj["byte_count"] = {"true": True, "string": str(obj["byte_count"]), "negative": -obj["byte_count"], "null": None, "list": [obj["byte_count"]]}[value]
    assert both_modes(pack_error, canon(obj)) == {"integer"}


def test_integer_checked_before_total_bytes():
    obj = good_pack()
    obj["total_bytes"] = 2.5
    fix_byte_count(obj)
    assert pack_error(canon(obj)) == "integer"
    obj = good_pack()
    obj["total_bytes"] = obj["total_bytes"] + 1
    obj["byte_count"] = "x"
    assert pack_error(canon(obj)) == "integer"


@pytest.mark.parametrize("value", [2.0, True, False, "2", -1, -2, None, [2], 2.5])
def test_integer_kept_chunks(value):
    obj = good_delta()
    obj["kept_chunks"] = value
    assert both_modes(delta_error, canon(obj)) == {"integer"}


def test_integer_kept_chunks_true_equal_to_one():
    # base has one chunk, so kept_chunks=true would "work" if bools were accepted
    obj = delta_obj([b"a\n"], [b"a\n", b"b\n"])
    assert obj["kept_chunks"] == 1
    assert ContextPackDelta.from_bytes(canon(obj)).kept_chunks == 1
    obj["kept_chunks"] = True
    assert both_modes(delta_error, canon(obj)) == {"integer"}
    obj["kept_chunks"] = 1.0
    assert both_modes(delta_error, canon(obj)) == {"integer"}


def test_large_integers_are_integers():
    obj = good_pack()
    obj["total_bytes"] = 10**30
    fix_byte_count(obj)
    assert both_modes(pack_error, canon(obj)) == {"total_bytes"}
    dobj = good_delta()
    dobj["kept_chunks"] = 10**30
    delta = ContextPackDelta.from_bytes(canon(dobj))
    base = ContextPack.from_bytes(canon(pack_obj(BASE_RAW)))
    with pytest.raises(ContextPackError) as info:
        apply_delta(base, delta)
    assert info.value.code == "kept_chunks"


# --- total_bytes / byte_count ------------------------------------------------------


@pytest.mark.parametrize("offset", [-1, 1, 100])
def test_total_bytes(offset):
    obj = good_pack()
    obj["total_bytes"] = obj["total_bytes"] + offset
    fix_byte_count(obj)
    assert both_modes(pack_error, canon(obj)) == {"total_bytes"}


def test_total_bytes_zero_for_non_empty_and_nonzero_for_empty():
    obj = good_pack()
    obj["total_bytes"] = 0
    fix_byte_count(obj)
    assert both_modes(pack_error, canon(obj)) == {"total_bytes"}
    obj = pack_obj([])
    obj["total_bytes"] = 1
    fix_byte_count(obj)
    assert both_modes(pack_error, canon(obj)) == {"total_bytes"}


def test_total_bytes_counts_bytes_not_characters():
    raw = ["紧致性😀".encode()]
    obj = pack_obj(raw)
    assert obj["total_bytes"] == 13
    obj["total_bytes"] = 4  # characters
    fix_byte_count(obj)
    assert both_modes(pack_error, canon(obj)) == {"total_bytes"}


@pytest.mark.parametrize("offset", [-1, 1, -100, 1000])
def test_byte_count(offset):
    obj = good_pack()
    obj["byte_count"] = obj["byte_count"] + offset
    assert both_modes(pack_error, canon(obj)) == {"byte_count"}


def test_byte_count_zero():
    obj = good_pack()
    obj["byte_count"] = 0
    assert both_modes(pack_error, canon(obj)) == {"byte_count"}


def test_byte_count_is_a_true_fixed_point_across_digit_boundaries():
    # sizes around 100 and 1000 bytes of canonical length exercise the digit-count change
    for n in range(0, 900, 7):
        raw = [b"x" * n] if n else []
        pack = ContextPack.from_content("x" * n, max_chunk_bytes=max(n, 4))
        assert pack.to_bytes() == canon(pack_obj(raw)), n
        assert pack.byte_count == len(pack.to_bytes()), n


def test_byte_count_large_pack_matches_length():
    text = "".join(f"line {i} 紧致性 😀 {'x' * (i % 70)}\n" for i in range(3000))
    pack = ContextPack.from_content(text)
    data = pack.to_bytes()
    assert pack.byte_count == len(data)
    assert json.loads(data)["byte_count"] == len(data)
    assert data == canon(pack_obj(list(pack.chunks)))


# --- apply_delta: base_mismatch, kept_chunks, target_mismatch ------------------------


def _base() -> ContextPack:
    return ContextPack.from_bytes(canon(pack_obj(BASE_RAW)))


def test_base_mismatch():
    delta = ContextPackDelta.from_bytes(canon(good_delta()))
    for other in ([], [b"line one\n"], [b"line one\n", b"line two\n", b"line three\n"], [b"line one\nline two\n"]):
        other_pack = ContextPack.from_bytes(canon(pack_obj(other)))
        with pytest.raises(ContextPackError) as info:
            apply_delta(other_pack, delta)
        assert info.value.code == "base_mismatch"


def test_base_mismatch_checked_first():
    obj = good_delta()
    obj["kept_chunks"] = 99
    obj["target_digest"] = "sha256:" + "0" * 64
    delta = ContextPackDelta.from_bytes(canon(obj))
    with pytest.raises(ContextPackError) as info:
        apply_delta(ContextPack.from_content("unrelated\n"), delta)
    assert info.value.code == "base_mismatch"


@pytest.mark.parametrize("kept", [3, 4, 1000])
def test_kept_chunks_beyond_base(kept):
    obj = good_delta()
    obj["kept_chunks"] = kept
    # target digest consistent with what such a delta would claim: only kept_chunks is wrong
    delta = ContextPackDelta.from_bytes(canon(obj))
    assert delta.kept_chunks == kept
    with pytest.raises(ContextPackError) as info:
        apply_delta(_base(), delta)
    assert info.value.code == "kept_chunks"


def test_kept_chunks_beyond_base_even_when_the_target_digest_would_match():
    # kept=3 over a 2-chunk base: Python slicing would silently clamp to 2 and the
    # target digest would then match; the spec's check 2 must still fire.
    obj = good_delta()
    obj["kept_chunks"] = 3
    delta = ContextPackDelta.from_bytes(canon(obj))
    with pytest.raises(ContextPackError) as info:
        apply_delta(_base(), delta)
    assert info.value.code == "kept_chunks"


def test_kept_chunks_equal_to_base_length_is_fine():
    obj = delta_obj(BASE_RAW, BASE_RAW)
    assert obj["kept_chunks"] == 2 and obj["new_chunks"] == []
    assert apply_delta(_base(), ContextPackDelta.from_bytes(canon(obj))).to_bytes() == canon(pack_obj(BASE_RAW))


@pytest.mark.parametrize(
    "edit",
    [
        pytest.param({"kept_chunks": 1}, id="kept-1"),
        pytest.param({"kept_chunks": 0}, id="kept-0"),
        pytest.param({"new_chunks": [b64(b"line thre3\n")]}, id="new-chunk-changed"),
        pytest.param({"new_chunks": []}, id="new-chunks-dropped"),
        pytest.param({"new_chunks": [b64(b"line three\n"), b64(b"x")]}, id="new-chunk-added"),
        pytest.param({"new_chunks": [b64(b"line "), b64(b"three\n")]}, id="same-bytes-other-cut"),
        pytest.param({"target_digest": "sha256:" + "0" * 64}, id="target-digest"),
    ],
)
def test_target_mismatch(edit):
    obj = good_delta()
    obj.update(edit)
    delta = ContextPackDelta.from_bytes(canon(obj))
    with pytest.raises(ContextPackError) as info:
        apply_delta(_base(), delta)
    assert info.value.code == "target_mismatch"


def test_delta_from_bytes_does_not_need_the_base():
    # kept_chunks beyond any base, and arbitrary (well-formed) digests, parse fine
    obj = good_delta()
    obj["kept_chunks"] = 10**6
    obj["base_digest"] = "sha256:" + "a" * 64
    obj["target_digest"] = "sha256:" + "b" * 64
    delta = ContextPackDelta.from_bytes(canon(obj))
    assert delta.to_bytes() == canon(obj)
    assert delta.base_digest == "sha256:" + "a" * 64


def test_schema_constants_in_fixtures():
    assert good_pack()["schema"] == PACK_SCHEMA
    assert good_delta()["schema"] == DELTA_SCHEMA


def test_integer_with_many_digits_is_rejected_cleanly():
    # A 5000-digit number is a valid JSON integer, but CPython's int/str digit limit
    # (4300) makes json.loads fail. RFC 8259 lets a parser limit number range, so the
    # spec leaves the code open between invalid_json (parser limit) and total_bytes
    # (the first rule that really fails); what matters is a ContextPackError.
    obj = good_pack()
    data = canon(obj).replace(b'"total_bytes":%d' % obj["total_bytes"], b'"total_bytes":' + b"9" * 5000)
    assert data != canon(obj)
    assert both_modes(pack_error, data) <= {"total_bytes", "invalid_json"}
    ddata = canon(good_delta()).replace(b'"kept_chunks":2', b'"kept_chunks":' + b"9" * 5000)
    try:
        delta = ContextPackDelta.from_bytes(ddata)
    except ContextPackError as exc:
        assert exc.code == "invalid_json"
    else:
        with pytest.raises(ContextPackError) as info:
            apply_delta(_base(), delta)
        assert info.value.code == "kept_chunks"
