"""Every single-byte mutation and every truncation of a canonical pack or delta is rejected.

Only ContextPackError may escape: any other exception type (KeyError, TypeError,
UnicodeDecodeError, binascii.Error, RecursionError, ...) is a bug.
"""

from __future__ import annotations

import pytest

from ctxpack import ContextPack, ContextPackDelta, ContextPackError, apply_delta

from ctxpack_helpers import ERROR_CODES

REPLACEMENTS = [0x00, 0x20, ord("0"), ord("1"), ord("9"), ord("A"), ord("a"), ord("f"), ord('"'), ord("}"), ord(","), ord("="), ord("\\"), 0xFF]

PACK_TEXTS = {
    "empty": ("", 512),
    "one-chunk": ("hello\nworld\n", 512),
    "multi-chunk": ("alpha line\nbeta line\ngamma line\ndelta\n", 12),
    "cjk": ("紧致性\n拓扑空间\n紧致性\n", 8),
    "emoji": ("ok 😀\n🇫🇷 flag\nx😀y😀z\n", 6),
    "cr-and-pieces": ("a\rb\r\nccccccccccccc\n", 5),
}


def _mutations(data: bytes):
    for pos in range(len(data)):
        original = data[pos]
        seen = {original}
        for value in REPLACEMENTS + [original ^ 0x01, original ^ 0x20, original ^ 0x80]:
            if value in seen:
                continue
            seen.add(value)
            yield pos, value, data[:pos] + bytes([value]) + data[pos + 1 :]


def _truncations(data: bytes):
    for n in range(len(data)):
        yield n, data[:n]


def _expect_pack_rejected(mutated: bytes, strict: bool, what: str) -> None:
    try:
        ContextPack.from_bytes(mutated, strict=strict)
    except ContextPackError as exc:
        assert exc.code in ERROR_CODES, f"{what}: unknown code {exc.code!r}"
        return
    except Exception as exc:  # noqa: BLE001 - this is exactly what we are checking
        pytest.fail(f"{what}: {type(exc).__name__} escaped instead of ContextPackError: {exc!r}; input={mutated!r}")
    pytest.fail(f"{what}: accepted (strict={strict}): {mutated!r}")


@pytest.mark.parametrize("strict", [True, False], ids=["strict", "lenient"])
@pytest.mark.parametrize("name", list(PACK_TEXTS))
def test_every_single_byte_mutation_of_a_pack_is_rejected(name, strict):
    text, max_bytes = PACK_TEXTS[name]
    data = ContextPack.from_content(text, max_chunk_bytes=max_bytes).to_bytes()
    assert ContextPack.from_bytes(data, strict=strict).to_bytes() == data
    count = 0
    for pos, value, mutated in _mutations(data):
        _expect_pack_rejected(mutated, strict, f"{name} byte {pos} {data[pos]:#04x}->{value:#04x}")
        count += 1
    assert count >= 10 * len(data)


@pytest.mark.parametrize("strict", [True, False], ids=["strict", "lenient"])
@pytest.mark.parametrize("name", list(PACK_TEXTS))
def test_every_truncation_of_a_pack_is_rejected(name, strict):
    text, max_bytes = PACK_TEXTS[name]
    data = ContextPack.from_content(text, max_chunk_bytes=max_bytes).to_bytes()
    for n, truncated in _truncations(data):
        _expect_pack_rejected(truncated, strict, f"{name} truncated to {n}")


def test_pack_sizes_are_smallish_but_multi_chunk():
    for name, (text, max_bytes) in PACK_TEXTS.items():
        pack = ContextPack.from_content(text, max_chunk_bytes=max_bytes)
        assert len(pack.to_bytes()) < 600, name
    assert len(ContextPack.from_content(*PACK_TEXTS["multi-chunk"]).chunks) >= 3
    assert len(ContextPack.from_content(*PACK_TEXTS["cjk"]).chunks) >= 3
    assert len(ContextPack.from_content(*PACK_TEXTS["emoji"]).chunks) >= 3


def test_appended_bytes_are_rejected():
    data = ContextPack.from_content("hello\n").to_bytes()
    for suffix in (b"\n", b" ", b"\x00", b"}", b"{}", b"\r\n"):
        with pytest.raises(ContextPackError):
            ContextPack.from_bytes(data + suffix)
    # lenient mode tolerates trailing whitespace (it is only non-canonical) but not garbage
    for suffix in (b"\x00", b"}", b"{}", b"x"):
        with pytest.raises(ContextPackError):
            ContextPack.from_bytes(data + suffix, strict=False)


def test_utf8_bom_is_rejected_in_strict_mode():
    data = ContextPack.from_content("hello\n").to_bytes()
    with pytest.raises(ContextPackError):
        ContextPack.from_bytes(b"\xef\xbb\xbf" + data)


# --- deltas ----------------------------------------------------------------------

DELTA_CASES = {
    "append": ("line one\nline two\n", "line one\nline two\nline three\n", 12),
    "cjk-append": ("紧致性\n拓扑\n", "紧致性\n拓扑空间\n紧致性😀\n", 8),
    "emoji-rewrite": ("a😀b\nkeep\n", "a😀c\nkeep\nmore 🇫🇷\n", 6),
    "empty-base": ("", "fresh text\nsecond\n", 8),
    "to-empty": ("gone\nsoon\n", "", 8),
    "identical": ("same\nsame\nsame\n", "same\nsame\nsame\n", 5),
    "multi-kept": ("aa\nbb\ncc\ndd\nee\nff\ngg\nhh\nii\njj\nkk\n", "aa\nbb\ncc\ndd\nee\nff\ngg\nhh\nii\njj\nkk\nll\n", 4),
}


def _expect_delta_rejected(base: ContextPack, mutated: bytes, strict: bool, what: str) -> str:
    try:
        delta = ContextPackDelta.from_bytes(mutated, strict=strict)
    except ContextPackError as exc:
        assert exc.code in ERROR_CODES, f"{what}: unknown code {exc.code!r}"
        return exc.code
    except Exception as exc:  # noqa: BLE001
        pytest.fail(f"{what}: {type(exc).__name__} escaped from ContextPackDelta.from_bytes: {exc!r}; input={mutated!r}")
    try:
        rebuilt = apply_delta(base, delta)
    except ContextPackError as exc:
        assert exc.code in ("base_mismatch", "kept_chunks", "target_mismatch"), f"{what}: code {exc.code!r}"
        return exc.code
    except Exception as exc:  # noqa: BLE001
        pytest.fail(f"{what}: {type(exc).__name__} escaped from apply_delta: {exc!r}; input={mutated!r}")
    pytest.fail(f"{what}: mutated delta accepted by apply_delta (strict={strict}): {mutated!r} -> {rebuilt.to_bytes()!r}")


@pytest.mark.parametrize("strict", [True, False], ids=["strict", "lenient"])
@pytest.mark.parametrize("name", list(DELTA_CASES))
def test_every_single_byte_mutation_of_a_delta_is_rejected(name, strict):
    base_text, target_text, max_bytes = DELTA_CASES[name]
    base = ContextPack.from_content(base_text, max_bytes)
    target = ContextPack.from_content(target_text, max_bytes)
    data = ContextPackDelta.between(base, target).to_bytes()
    assert apply_delta(base, ContextPackDelta.from_bytes(data, strict=strict)).to_bytes() == target.to_bytes()
    codes = set()
    for pos, value, mutated in _mutations(data):
        codes.add(_expect_delta_rejected(base, mutated, strict, f"{name} byte {pos} {data[pos]:#04x}->{value:#04x}"))
    # mutations of the digests must at least be caught by apply_delta
    assert {"base_mismatch", "target_mismatch"} <= codes


@pytest.mark.parametrize("strict", [True, False], ids=["strict", "lenient"])
@pytest.mark.parametrize("name", list(DELTA_CASES))
def test_every_truncation_of_a_delta_is_rejected(name, strict):
    base_text, target_text, max_bytes = DELTA_CASES[name]
    base = ContextPack.from_content(base_text, max_bytes)
    target = ContextPack.from_content(target_text, max_bytes)
    data = ContextPackDelta.between(base, target).to_bytes()
    for n, truncated in _truncations(data):
        _expect_delta_rejected(base, truncated, strict, f"{name} truncated to {n}")


def test_delta_is_bound_to_its_base():
    base_text, target_text, max_bytes = DELTA_CASES["append"]
    base = ContextPack.from_content(base_text, max_bytes)
    target = ContextPack.from_content(target_text, max_bytes)
    delta = ContextPackDelta.from_bytes(ContextPackDelta.between(base, target).to_bytes())
    for other in ("", "line one\n", "line one\nline two\n\n", "line one\nline tw0\n"):
        with pytest.raises(ContextPackError) as info:
            apply_delta(ContextPack.from_content(other, max_bytes), delta)
        assert info.value.code == "base_mismatch"
