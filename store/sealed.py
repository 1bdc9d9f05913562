"""Sealed files: ChaCha20-Poly1305 in chunks, for what an encrypted store writes beside itself.

Handoff copies of an encrypted store are sealed under a key derived (HKDF-SHA256) from the store's database
key; `pcp export --encrypt` seals an export under scrypt of a passphrase. The format (all integers big-endian):

    magic   8 bytes   b"PCPSEAL1"
    kdf     1 byte    1: HKDF-SHA256 of the store's key (salt below, info b"pcp sealed file")
                      2: scrypt of a passphrase; then log2(n), r, p as 1 byte each
    salt    16 bytes
    prefix  7 bytes   random nonce prefix
    chunks  each: 4-byte plaintext length (at most 1 MiB), then ciphertext and its 16-byte tag;
            nonce = prefix + 4-byte chunk counter + 1 byte (1 on the last chunk, else 0);
            associated data: every header byte above
A file that ends before a chunk flagged last, or has bytes after it, is refused (truncated or spliced).
"""

from __future__ import annotations

import os
import struct
from pathlib import Path
from typing import IO, Iterator

from .errors import Invalid

MAGIC = b"PCPSEAL1"
KDF_STORE_KEY = 1
KDF_SCRYPT = 2
CHUNK = 1 << 20
TAG = 16
INFO = b"pcp sealed file"


def is_sealed(path: Path) -> bool:
    try:
        with open(path, "rb") as fh:
            return fh.read(len(MAGIC)) == MAGIC
    except OSError:
        return False


def _store_subkey(store_key: bytes, salt: bytes) -> bytes:
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.kdf.hkdf import HKDF

    return HKDF(algorithm=hashes.SHA256(), length=32, salt=salt, info=INFO).derive(store_key)


def _header(kdf: int, salt: bytes, prefix: bytes, log2n: int = 0, r: int = 0, p: int = 0) -> bytes:
    params = bytes([log2n, r, p]) if kdf == KDF_SCRYPT else b""
    return MAGIC + bytes([kdf]) + params + salt + prefix


class Sealer:
    """Writes a sealed stream to `fh`: write() any amount, close() seals the last chunk."""

    def __init__(self, fh: IO[bytes], *, store_key: bytes | None = None, passphrase: str | None = None) -> None:
        from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305

        from . import crypt

        salt, prefix = os.urandom(16), os.urandom(7)
        if store_key is not None:
            key, header = _store_subkey(store_key, salt), _header(KDF_STORE_KEY, salt, prefix)
        elif passphrase is not None:
            n, r, p = crypt.SCRYPT["n"], crypt.SCRYPT["r"], crypt.SCRYPT["p"]
            key = crypt.scrypt_key(passphrase, salt, n, r, p)
            header = _header(KDF_SCRYPT, salt, prefix, n.bit_length() - 1, r, p)
        else:
            raise ValueError("a sealed file needs a store key or a passphrase")
        self._aead, self._fh, self._prefix, self._aad = ChaCha20Poly1305(key), fh, prefix, header
        self._buffer = bytearray()
        self._counter = 0
        fh.write(header)

    def _emit(self, data: bytes, last: bool) -> None:
        nonce = self._prefix + struct.pack(">IB", self._counter, 1 if last else 0)
        self._fh.write(struct.pack(">I", len(data)) + self._aead.encrypt(nonce, data, self._aad))
        self._counter += 1

    def write(self, data: bytes) -> int:
        self._buffer += data
        while len(self._buffer) > CHUNK:
            self._emit(bytes(self._buffer[:CHUNK]), False)
            del self._buffer[:CHUNK]
        return len(data)

    def close(self) -> None:
        self._emit(bytes(self._buffer), True)
        self._buffer.clear()


def _read_exact(fh: IO[bytes], size: int) -> bytes:
    data = fh.read(size)
    if len(data) != size:
        raise Invalid("The sealed file is truncated; nothing was read from it.")
    return data


def unseal(fh: IO[bytes], *, store_key: bytes | None = None, passphrase: str | None = None) -> Iterator[bytes]:
    """The plaintext chunks of a sealed stream, each checked before it is given out."""
    from cryptography.exceptions import InvalidTag
    from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305

    from . import crypt

    head = fh.read(len(MAGIC) + 1)
    if len(head) != len(MAGIC) + 1 or head[: len(MAGIC)] != MAGIC:
        raise Invalid("This is not a pcp sealed file (no PCPSEAL1 header).")
    kdf = head[-1]
    if kdf == KDF_SCRYPT:
        params = _read_exact(fh, 3)
        log2n, r, p = params
        if not 17 <= log2n <= 24 or not 1 <= r <= 64 or not 1 <= p <= 16:
            raise Invalid("The sealed file's scrypt parameters are out of range; nothing was read from it.")
        if passphrase is None:
            raise Invalid("The sealed file needs its passphrase: set PCP_PASSPHRASE_FILE or run pcp at a terminal.")
        salt, prefix = _read_exact(fh, 16), _read_exact(fh, 7)
        key = crypt.scrypt_key(passphrase, salt, 1 << log2n, r, p)
        aad = head + params + salt + prefix
    elif kdf == KDF_STORE_KEY:
        if store_key is None:
            raise Invalid("The sealed file opens only with its encrypted store's key (through pcp).")
        salt, prefix = _read_exact(fh, 16), _read_exact(fh, 7)
        key, aad = _store_subkey(store_key, salt), head + salt + prefix
    else:
        raise Invalid("The sealed file names an unknown key derivation; nothing was read from it.")
    aead = ChaCha20Poly1305(key)
    counter = 0
    while True:
        (size,) = struct.unpack(">I", _read_exact(fh, 4))
        if size > CHUNK:
            raise Invalid("The sealed file has an oversized chunk; nothing more was read from it.")
        sealed = _read_exact(fh, size + TAG)
        for last in (0, 1):
            try:
                plain = aead.decrypt(prefix + struct.pack(">IB", counter, last), sealed, aad)
            except InvalidTag:
                continue
            break
        else:
            raise Invalid("The sealed file does not open with this key or was altered; nothing more was read.")
        counter += 1
        yield plain
        if last:
            if fh.read(1):
                raise Invalid("The sealed file has bytes after its last chunk; it was altered.")
            return


def seal_bytes(data: bytes, store_key: bytes) -> bytes:
    import io

    out = io.BytesIO()
    sealer = Sealer(out, store_key=store_key)
    sealer.write(data)
    sealer.close()
    return out.getvalue()


def open_bytes(blob: bytes, store_key: bytes) -> bytes:
    import io

    return b"".join(unseal(io.BytesIO(blob), store_key=store_key))
