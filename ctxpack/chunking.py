"""Line-greedy chunking of UTF-8 text (ctxpack v1 `split_content`)."""

from __future__ import annotations

from .errors import ContextPackError

MIN_CHUNK_BYTES = 4


def encode_text(text: str | bytes) -> bytes:
    """Return the strict UTF-8 bytes of `text` (bytes are validated, not re-encoded)."""
    if isinstance(text, (bytes, bytearray, memoryview)):
        data = bytes(text)
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ContextPackError("utf8", f"input is not valid UTF-8 at byte {exc.start}") from None
        return data
    if not isinstance(text, str):
        raise TypeError(f"text must be str or bytes, not {type(text).__name__}")
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ContextPackError(
            "utf8", f"input is not valid Unicode text (lone surrogate at index {exc.start})"
        ) from None


def split_content(text: str | bytes, max_chunk_bytes: int = 512) -> list[bytes]:
    """Split text into chunks of whole lines, each at most `max_chunk_bytes` UTF-8 bytes."""
    if isinstance(max_chunk_bytes, bool) or not isinstance(max_chunk_bytes, int):
        raise TypeError("max_chunk_bytes must be an int")
    if max_chunk_bytes < MIN_CHUNK_BYTES:
        raise ContextPackError(
            "chunk_size", f"max_chunk_bytes must be at least {MIN_CHUNK_BYTES}, got {max_chunk_bytes}"
        )
    return split_bytes(encode_text(text), max_chunk_bytes)


def split_bytes(data: bytes, max_chunk_bytes: int) -> list[bytes]:
    """Chunk already-validated UTF-8 bytes.

    LF is one byte in UTF-8 and never part of a longer sequence, so line ends can be
    found on the bytes directly; the greedy rule "append whole lines while they fit"
    is the same as "cut after the last LF inside the window".
    """
    chunks: list[bytes] = []
    n = len(data)
    start = 0
    find = data.find
    rfind = data.rfind
    while start < n:
        limit = start + max_chunk_bytes
        if limit >= n:
            chunks.append(data[start:])
            break
        cut = rfind(b"\n", start, limit)
        if cut >= 0:
            chunks.append(data[start : cut + 1])
            start = cut + 1
            continue
        # The line starting here is longer than the chunk size: cut it on code point
        # boundaries (never before a continuation byte 0b10xxxxxx); its last piece is
        # a chunk of its own.
        line_end = find(b"\n", start)
        line_end = n if line_end < 0 else line_end + 1
        piece = start
        while piece < line_end:
            stop = piece + max_chunk_bytes
            if stop >= line_end:
                stop = line_end
            else:
                while data[stop] & 0xC0 == 0x80:
                    stop -= 1
            chunks.append(data[piece:stop])
            piece = stop
        start = line_end
    return chunks
