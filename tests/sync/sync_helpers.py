"""Helpers for the sync tests."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path


def export_lines(path: Path, out: Path) -> list[str]:
    """A store's full export, header and closing digest aside, as sorted lines (the order of two concurrent
    revisions of one page, and of handoff records, follows each store's arrival order)."""
    from store import Store

    with Store.open(path) as st:
        st.export(out)
    lines = out.read_text(encoding="utf-8").splitlines()
    out.unlink()
    return sorted(lines[1:-1])


def sync(a: Path, b: Path) -> dict:
    from store import Store

    with Store.open(a) as st:
        return st.sync_with(b)


def killed_mid_sync(db: Path, call: str, target: Path, after: int) -> subprocess.CompletedProcess:
    """Run `Store.open(db).<call>(target)` (sync_with or sync_folder) in a child process that SIGKILLs
    itself as it takes in its `after`-th record; the finished process (its return code is -SIGKILL)."""
    root = Path(__file__).resolve().parents[2]
    script = textwrap.dedent(f"""
        import os, signal, sys
        sys.path.insert(0, {str(root)!r})
        from store import Store
        from store.sync import ops
        seen = [0]
        take = ops._Run.take
        def dying(self, rec):
            seen[0] += 1
            if seen[0] == {after}:
                os.kill(os.getpid(), signal.SIGKILL)
            return take(self, rec)
        ops._Run.take = dying
        with Store.open({str(db)!r}) as st:
            st.{call}({str(target)!r})
    """)
    proc = subprocess.run([sys.executable, "-c", script], cwd=root, env={**os.environ}, capture_output=True)
    assert proc.returncode == -signal.SIGKILL, proc.stderr.decode()
    return proc


def forge(signer: Path, folder: Path, *, store: str | None = None, seq: int | None = None, epoch: int | None = None,
          chunks: list[bytes] | None = None, deflated: list[bytes] | None = None, header: dict | None = None) -> Path:
    """A change file written with `signer`'s own keys (its signing key, the folder key it holds) but content of the
    test's choosing: what a store that holds a key can put in the folder. `chunks`: JSON-lines bytes of each chunk
    (deflated here); `deflated`: chunk bodies as given (already zlib, or not zlib at all)."""
    import secrets
    import zlib

    from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305

    from store import Store
    from store.core import dumps
    from store.sync import folder as fm
    from store.sync.identity import Identity

    with Store.open(signer) as st:
        view = fm.Folder(st.sync, folder)
        keys = view.keys()
        ident = Identity(st._db)
        store = store or st.sync.store_id
    epoch = keys["epoch"] if epoch is None else epoch
    sub = folder / store
    sub.mkdir(parents=True, exist_ok=True)
    if seq is None:
        seq = max([int(p.stem) for p in sub.glob("*.pcs")] + [0]) + 1
    key = fm._file_key(fm._step(bytes.fromhex(keys["key"]), keys["epoch"], epoch), store, seq)
    head = dumps({"format": fm.FORMAT, "version": fm.VERSION, "store": store, "seq": seq, "epoch": epoch,
                  "chain": keys["chain"], "base": False, "written_at": "2026-01-01T00:00:00.000Z",
                  **(header or {})}).encode()
    bodies = deflated if deflated is not None else [zlib.compress(c) for c in (chunks or [b""])]
    out = bytearray(head + b"\n" + ident.sign(b"pcp sync header\n" + head).hex().encode() + b"\n")
    aead = ChaCha20Poly1305(key)
    for i, body in enumerate(bodies):
        last = i == len(bodies) - 1
        nonce = secrets.token_bytes(12)
        sealed = aead.encrypt(nonce, body, fm._aad(head, i, last))
        out += len(sealed).to_bytes(4, "big") + nonce + sealed + ident.sign(fm._signed(head, i, last, nonce, sealed))
    target = sub / f"{seq:08d}.pcs"
    target.write_bytes(bytes(out))
    return target
