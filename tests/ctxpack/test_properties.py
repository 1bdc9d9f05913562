"""Property tests for ctxpack over arbitrary Unicode text (hypothesis)."""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from ctxpack import ContextPack, ContextPackDelta, ContextPackError, apply_delta, split_content

from ctxpack_helpers import canon, delta_obj, pack_bytes, reference_split

# One named profile for this suite, applied per test (not loaded globally, so other
# suites keep their own settings). CTXPACK_HYPOTHESIS_EXAMPLES scales it up locally.
_EXAMPLES = int(os.environ.get("CTXPACK_HYPOTHESIS_EXAMPLES", "120"))
settings.register_profile(
    "ctxpack",
    deadline=None,
    max_examples=_EXAMPLES,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
PROFILE = settings.get_profile("ctxpack")

# --- strategies -------------------------------------------------------------------

# Characters that stress the chunker: ASCII, LF and CR, 2-byte Latin, 3-byte CJK,
# 4-byte emoji, combining marks, NUL, U+2028 (a "line separator" that must NOT end a line).
_SPECIAL = st.sampled_from(
    ["\n", "\n", "\n", "\r", " ", "a", "Z", "é", "ß", "紧", "致", "性", "😀", "🇫", "\u0301", "\x00", "\u2028", "\x85", "\t"]
)
_ANY_CHAR = st.characters(codec="utf-8")  # every code point except surrogates
_CJK = st.characters(min_codepoint=0x4E00, max_codepoint=0x9FFF)
_EMOJI = st.characters(min_codepoint=0x1F300, max_codepoint=0x1FAFF)

_CHAR = st.one_of(_SPECIAL, _ANY_CHAR, _CJK, _EMOJI)

texts = st.one_of(
    st.text(_CHAR, max_size=300),
    # LF-heavy short lines
    st.text(st.sampled_from(["\n", "a", "紧", "😀", "\r"]), max_size=200),
    # long lines (often longer than the chunk size)
    st.lists(st.text(_CHAR, min_size=0, max_size=700), max_size=4).map("\n".join),
    st.text(st.sampled_from(["x", "é", "紧", "😀"]), min_size=0, max_size=1500),
)
chunk_sizes = st.one_of(st.integers(min_value=4, max_value=64), st.sampled_from([4, 5, 6, 7, 8, 12, 64, 512]))


# --- chunking -----------------------------------------------------------------------


@PROFILE
@given(text=texts, max_bytes=chunk_sizes)
@example(text="", max_bytes=4)
@example(text="\n", max_bytes=4)
@example(text="😀😀", max_bytes=4)
@example(text="a😀", max_bytes=4)
@example(text="abcd\nefgh", max_bytes=4)
@example(text="abc\r\nd", max_bytes=4)
@example(text="ab\n紧致性😀x紧致性😀x\nend", max_bytes=8)
def test_chunks_are_well_formed(text, max_bytes):
    chunks = split_content(text, max_bytes)
    encoded = text.encode("utf-8")
    assert b"".join(chunks) == encoded
    for chunk in chunks:
        assert type(chunk) is bytes
        assert 0 < len(chunk) <= max_bytes
        chunk.decode("utf-8")  # valid UTF-8 on its own: cuts fall on character boundaries
    if not text:
        assert list(chunks) == []


@PROFILE
@given(text=texts, max_bytes=chunk_sizes)
def test_chunks_match_spec_oracle(text, max_bytes):
    """Greedy whole lines; overlong lines cut greedily at code points into their own chunks."""
    assert list(split_content(text, max_bytes)) == reference_split(text, max_bytes)


@PROFILE
@given(text=texts, max_bytes=chunk_sizes)
def test_chunking_is_deterministic(text, max_bytes):
    assert list(split_content(text, max_bytes)) == list(split_content(text, max_bytes))
    assert ContextPack.from_content(text, max_bytes) == ContextPack.from_content(text, max_chunk_bytes=max_bytes)


@PROFILE
@given(text=texts, extra=texts, max_bytes=chunk_sizes)
@example(text="aaaaaa", extra="a\n", max_bytes=4)
@example(text="xx\nab", extra="cdefgh", max_bytes=4)
@example(text="ab\n", extra="cd", max_bytes=4)
def test_appending_keeps_all_chunks_but_the_last(text, extra, max_bytes):
    before = list(split_content(text, max_bytes))
    after = list(split_content(text + extra, max_bytes))
    keep = before[:-1]
    assert after[: len(keep)] == keep


# --- pack round trips ------------------------------------------------------------


@PROFILE
@given(text=texts, max_bytes=chunk_sizes)
@example(text="a\rb\r\nc\n\r", max_bytes=4)
def test_pack_round_trip(text, max_bytes):
    pack = ContextPack.from_content(text, max_chunk_bytes=max_bytes)
    assert pack.content == text
    assert pack.chunks == tuple(split_content(text, max_bytes))
    assert pack.total_bytes == len(text.encode("utf-8"))
    wire = pack.to_bytes()
    assert wire == pack_bytes(list(pack.chunks))  # exact canonical bytes, digest and byte_count
    assert pack.byte_count == len(wire)
    assert pack.to_json() == wire.decode("utf-8")
    parsed = ContextPack.from_bytes(wire)
    assert parsed == pack
    assert parsed.to_bytes() == wire
    assert parsed.content == text
    assert parsed.digest == pack.digest
    assert parsed.chunks == pack.chunks
    assert ContextPack.from_bytes(wire, strict=False).to_bytes() == wire


@PROFILE
@given(text=texts)
def test_default_chunk_size_is_512(text):
    assert ContextPack.from_content(text) == ContextPack.from_content(text, max_chunk_bytes=512)
    assert ContextPack.from_content(text).to_bytes() == pack_bytes(reference_split(text, 512))


@PROFILE
@given(text=texts, max_bytes=chunk_sizes)
def test_pack_is_ascii_only_on_the_wire(text, max_bytes):
    # Base64 chunks + hex digest: the canonical pack is pure ASCII whatever the text.
    ContextPack.from_content(text, max_bytes).to_bytes().decode("ascii")


# --- deltas ----------------------------------------------------------------------


@PROFILE
@given(base_text=texts, target_text=texts, max_bytes=chunk_sizes)
@example(base_text="", target_text="", max_bytes=4)
@example(base_text="abc\n", target_text="", max_bytes=4)
@example(base_text="", target_text="abc\n", max_bytes=4)
@example(base_text="a\nb\nc\n", target_text="a\nb\nc\n", max_bytes=4)
@example(base_text="a\nb\nc\n", target_text="a\nX\nc\n", max_bytes=4)
def test_delta_reproduces_target(base_text, target_text, max_bytes):
    base = ContextPack.from_content(base_text, max_bytes)
    target = ContextPack.from_content(target_text, max_bytes)
    delta = ContextPackDelta.between(base, target)
    assert delta.base_digest == base.digest
    assert delta.target_digest == target.digest
    # kept_chunks is the longest common prefix; new_chunks the rest of the target
    expected = delta_obj(list(base.chunks), list(target.chunks))
    assert delta.kept_chunks == expected["kept_chunks"]
    assert isinstance(delta.new_chunks, tuple)
    assert delta.new_chunks == target.chunks[delta.kept_chunks :]
    assert delta.to_bytes() == canon(expected)

    rebuilt = apply_delta(base, delta)
    assert rebuilt.to_bytes() == target.to_bytes()
    assert rebuilt.content == target_text

    wire = delta.to_bytes()
    parsed = ContextPackDelta.from_bytes(wire)
    assert parsed.to_bytes() == wire
    assert parsed.kept_chunks == delta.kept_chunks
    assert parsed.new_chunks == delta.new_chunks
    # the receiver only has the base pack's bytes and the delta's bytes
    rebuilt2 = apply_delta(ContextPack.from_bytes(base.to_bytes()), parsed)
    assert rebuilt2.to_bytes() == target.to_bytes()
    assert rebuilt2.content == target_text


@PROFILE
@given(text=texts, extra=texts, max_bytes=chunk_sizes)
def test_append_only_delta_keeps_the_prefix(text, extra, max_bytes):
    base = ContextPack.from_content(text, max_bytes)
    target = ContextPack.from_content(text + extra, max_bytes)
    delta = ContextPackDelta.between(base, target)
    assert delta.kept_chunks >= max(len(base.chunks) - 1, 0)
    assert apply_delta(base, ContextPackDelta.from_bytes(delta.to_bytes())).content == text + extra


@PROFILE
@given(base_text=texts, target_text=texts, base_max=chunk_sizes, target_max=chunk_sizes)
def test_delta_between_packs_of_different_chunk_sizes(base_text, target_text, base_max, target_max):
    # between() works on any two packs; the receiver rebuilds the target exactly
    base = ContextPack.from_content(base_text, base_max)
    target = ContextPack.from_content(target_text, target_max)
    wire = ContextPackDelta.between(base, target).to_bytes()
    rebuilt = apply_delta(base, ContextPackDelta.from_bytes(wire))
    assert rebuilt.to_bytes() == target.to_bytes()
    assert rebuilt.chunks == target.chunks


# --- invalid text -------------------------------------------------------------------


@PROFILE
@given(
    prefix=st.text(_CHAR, max_size=40),
    suffix=st.text(_CHAR, max_size=40),
    surrogate=st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF),
    max_bytes=chunk_sizes,
)
def test_lone_surrogate_is_rejected(prefix, suffix, surrogate, max_bytes):
    text = prefix + surrogate + suffix
    with pytest.raises(ContextPackError) as info:
        split_content(text, max_bytes)
    assert info.value.code == "utf8"
    with pytest.raises(ContextPackError) as info:
        ContextPack.from_content(text, max_chunk_bytes=max_bytes)
    assert info.value.code == "utf8"


@pytest.mark.parametrize("bad", [b"\xff", b"abc\x80", b"\xe7\xb4", b"ok\n\xed\xa0\x80", b"\xc0\xaf"])
def test_invalid_utf8_bytes_rejected(bad):
    with pytest.raises(ContextPackError) as info:
        split_content(bad, 512)
    assert info.value.code == "utf8"


@pytest.mark.parametrize("max_bytes", [-1, 0, 1, 2, 3])
def test_max_chunk_bytes_below_4_rejected(max_bytes):
    with pytest.raises(ContextPackError) as info:
        split_content("hello\n", max_bytes)
    assert info.value.code == "chunk_size"
    with pytest.raises(ContextPackError) as info:
        ContextPack.from_content("hello\n", max_chunk_bytes=max_bytes)
    assert info.value.code == "chunk_size"


def test_max_chunk_bytes_below_4_rejected_even_for_empty_text():
    with pytest.raises(ContextPackError) as info:
        split_content("", 3)
    assert info.value.code == "chunk_size"


def test_four_bytes_fits_any_character():
    assert list(split_content("😀😀", 4)) == ["😀".encode(), "😀".encode()]


# --- value semantics -----------------------------------------------------------------


def test_packs_compare_by_value_and_are_immutable():
    a = ContextPack.from_content("same\ntext\n")
    b = ContextPack.from_bytes(a.to_bytes())
    assert a == b
    assert not (a != b)
    assert a != ContextPack.from_content("other\n")
    for attr in ("chunks", "digest", "total_bytes", "byte_count"):
        with pytest.raises(AttributeError):
            setattr(a, attr, getattr(a, attr))
    assert a.to_bytes() == b.to_bytes()


def test_deltas_compare_by_value_and_are_immutable():
    base = ContextPack.from_content("a\n", 4)
    target = ContextPack.from_content("a\nb\n", 4)
    d1 = ContextPackDelta.between(base, target)
    d2 = ContextPackDelta.from_bytes(d1.to_bytes())
    assert d1 == d2
    for attr in ("base_digest", "target_digest", "kept_chunks", "new_chunks"):
        with pytest.raises(AttributeError):
            setattr(d1, attr, getattr(d1, attr))


@pytest.mark.parametrize("sep", ["\r", "\r\n", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"])
def test_only_lf_ends_a_line(sep):
    # "Nothing else ends a line (CR stays inside the line)": str.splitlines() would cut here.
    text = f"ab{sep}cd\nef"
    encoded = text.encode()
    max_bytes = len(f"ab{sep}cd\n".encode())
    # the first line fits exactly, so it is one chunk; "ef" starts the next chunk
    assert list(split_content(text, max_bytes)) == [f"ab{sep}cd\n".encode(), b"ef"]
    # with room for everything there is exactly one chunk
    assert list(split_content(text, len(encoded))) == [encoded]
    # an overlong line containing the separator is cut by size, not at the separator
    long_line = "x" * 3 + sep + "y" * 9
    assert list(split_content(long_line, 8)) == reference_split(long_line, 8)
    assert b"".join(split_content(long_line, 8)) == long_line.encode()
