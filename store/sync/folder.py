"""`pcp sync DIR`: the owner's stores exchange change files through a folder (a USB stick, a synced folder).

Layout: DIR/<store id>/NNNNNNNN.pcs, each store writing only its own folder; DIR/offers/<id>.offer while
a pairing waits for its code. A change file is one header line (JSON: format, version, store, seq, epoch,
key chain) and then the records (JSON lines, zlib) in chunks sealed with ChaCha20-Poly1305, the header, the
chunk's place and whether it is the last bound in as associated data: nothing in it is readable, and one
changed byte anywhere (or a file cut short) makes it fail to open.

Keys never leave the paired stores. Pairing mints a random key; the one-time code shown on the first
machine (never written to the folder) opens the offer on the second, which takes the key from it. The key
of epoch n + 1 is derived one way from the key of epoch n (HKDF), the epoch being the number of deletion
receipts a store holds, so it moves on with every delete. Erasure in the folder is by keys:
- after a delete (here or received), a store rewrites its own files as one base file under the new
  epoch's key, from its state after the erasure, and removes the old ones;
- a store forgets the key of an older epoch once no store's files need it any more, so the copies of the
  old files a sync tool may keep in its own version history can no longer be opened by anyone.
"""

from __future__ import annotations

import base64
import json
import os
import re
import secrets
import zlib
from pathlib import Path
from typing import Any, Callable, Iterator

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from .. import ids
from ..core import dumps
from ..errors import Invalid
from ..files import make_private_dirs
from ..types import FolderSyncResult, PairOffer, SyncApplied
from . import records
from .ops import SyncOps

FORMAT = "pcp.sync"
VERSION = 1
KEYS = "sync_keys"  # meta: {"chain": id, "epoch": n, "key": hex} the oldest epoch key still needed
OUT = "sync_out"  # meta: {"seq": n, "marks": {...}, "epoch": n, "chain": id} of this store's last file
FILE_RE = re.compile(r"(\d{8})\.pcs\Z")
STORE_RE = re.compile(r"sto_[0-9A-Z]{26}\Z")
MAX_HEADER = 4096
MAX_OFFER = 64 << 10  # bytes: a pairing offer is a few hundred; anything larger in offers/ is not one
MAX_SEALED = 64 << 20  # bytes of one sealed chunk (a chunk holds ~1 MiB of records, or one record of a page at most)


# --- keys ---


def _hkdf(key: bytes, info: bytes, salt: bytes | None = None) -> bytes:
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=salt, info=info).derive(key)


def _step(key: bytes, frm: int, to: int) -> bytes:
    """The key of epoch `to` from the key of epoch `frm` (one way: an older key cannot be had from a newer)."""
    for n in range(frm, to):
        key = _hkdf(key, b"pcp sync epoch " + str(n + 1).encode())
    return key


def _code_key(code: str, salt: bytes) -> bytes:
    raw = _decode_code(code)
    return _hkdf(raw, b"pcp sync pairing offer", salt)


def _new_code() -> tuple[str, bytes]:
    raw = secrets.token_bytes(16)
    text = base64.b32encode(raw).decode("ascii").rstrip("=")
    return "-".join(text[i:i + 4] for i in range(0, len(text), 4)), raw


def _decode_code(code: str) -> bytes:
    text = re.sub(r"[\s-]", "", str(code)).upper()
    try:
        raw = base64.b32decode(text + "=" * (-len(text) % 8))
    except (ValueError, TypeError):
        raise Invalid("That is not a pairing code (it is the groups of letters and digits the first store showed).") from None
    if len(raw) != 16:
        raise Invalid("That pairing code is incomplete; type all of it.")
    return raw


class Folder:
    """One store's view of a sync folder."""

    def __init__(self, ops: SyncOps, folder: str | os.PathLike[str]) -> None:
        self.ops = ops
        self.dir = Path(folder).expanduser()
        self.db = ops._db
        self.meter = _Meter(None)

    # --- meta ---

    def _meta(self, key: str) -> Any:
        row = self.db.execute_sql("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else None

    def _set_meta(self, key: str, value: Any) -> None:
        with self.db.atomic("IMMEDIATE"):
            self.db.execute_sql("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, dumps(value)))

    def epoch(self) -> int:
        return int(self.db.execute_sql("SELECT COUNT(*) FROM deletion_receipt").fetchone()[0])

    def keys(self) -> dict[str, Any]:
        found = self._meta(KEYS)
        if not found:
            raise Invalid(f"This store is not paired for {self.dir}: run `pcp sync {self.dir} --pair` on your first "
                          "machine and `pcp sync DIR --join CODE` here.")
        return dict(found)

    def key_for(self, epoch: int) -> bytes | None:
        k = self.keys()
        if epoch < k["epoch"]:
            return None  # forgotten: no store needs it any more
        return _step(bytes.fromhex(k["key"]), k["epoch"], epoch)

    # --- pairing ---

    def _require_folder(self) -> None:
        if self.dir.exists() and not self.dir.is_dir():
            raise Invalid(f"{self.dir} is not a folder; sync through a folder your stores share.")

    def _inside(self, path: Path) -> Path:
        """A folder pcp writes in (or removes from) inside the sync folder: never a link out of it."""
        if path.is_symlink():
            raise Invalid(f"{path} is a symbolic link; pcp writes only inside {self.dir} (remove the link, then sync).")
        return path

    def pair(self, rekey: bool = False) -> PairOffer:
        """Offer this store's key to a second store: returns the one-time code to type there."""
        self._require_folder()
        found = self._meta(KEYS)
        if found is None or rekey:
            found = {"chain": "chn_" + ids.ulid(), "epoch": self.epoch(), "key": secrets.token_bytes(32).hex()}
            self._set_meta(KEYS, found)
        code, raw = _new_code()
        salt = secrets.token_bytes(16)
        offers = self._inside(self.dir / "offers")
        make_private_dirs(offers)
        body = dumps({"owner_id": self.ops.owner_id, "store": self.ops.store_id, **found}).encode()
        header = dumps({"format": FORMAT, "version": VERSION, "kind": "offer", "salt": salt.hex()}).encode()
        nonce = secrets.token_bytes(12)
        sealed = ChaCha20Poly1305(_hkdf(raw, b"pcp sync pairing offer", salt)).encrypt(nonce, body, header)
        name = f"{ids.ulid()}.offer"
        _write_atomic(offers / name, header + b"\n" + nonce + sealed)
        return {"code": code, "offer": str(offers / name), "store_id": self.ops.store_id}

    def join(self, code: str) -> dict[str, Any]:
        """Take the key of the offer this code opens (adopting the owner if this store is empty); the offer goes."""
        self._require_folder()
        offers = self.dir / "offers"
        for path in sorted(offers.glob("*.offer")) if offers.is_dir() else []:
            try:
                with open(path, "rb") as fh:
                    data = fh.read(MAX_OFFER + 1)
                head, rest = data.split(b"\n", 1)
                header = json.loads(head)
                if len(data) > MAX_OFFER or not isinstance(header, dict) or not isinstance(header.get("version", 0), int):
                    continue  # not an offer pcp wrote: whoever put it there, it opens nothing
                if header.get("version", 0) > VERSION:
                    raise Invalid(f"{path.name} was written by a newer pcp (sync format {header.get('version')}); upgrade pcp.")
                body = json.loads(ChaCha20Poly1305(_code_key(code, bytes.fromhex(header["salt"]))).decrypt(
                    rest[:12], rest[12:], head))
            except (InvalidTag, ValueError, KeyError, TypeError, RecursionError, OSError):
                continue
            if not isinstance(body, dict):
                continue
            side = self.ops.check_owner(body["owner_id"], False)
            self._set_meta(KEYS, {k: body[k] for k in ("chain", "epoch", "key")})
            try:
                path.unlink()  # one time: the offer is gone once taken
            except OSError:
                pass
            return {"owner_id": self.ops.owner_id, "adopted_owner": side == "adopted", "paired_with": body["store"]}
        raise Invalid(f"No pairing offer in {offers} opens with that code (typed wrong, or already used?).")

    def unpair(self, store: str) -> None:
        """Refuse a lost store's files from now on (here, and on every store that reads this one's files)."""
        if not STORE_RE.match(str(store)):
            raise Invalid(f"{str(store)[:40]!r} is not a store id (`pcp sync DIR --status` lists them).")
        if store == self.ops.store_id:
            raise Invalid("That is this store; unpair it from another of your stores.")
        with self.db.atomic("IMMEDIATE"):
            self.db.execute_sql("INSERT INTO sync_peer (peer_id, revoked) VALUES (?, 1) ON CONFLICT(peer_id) DO UPDATE "
                                "SET revoked = 1", (store,))
            self._bump_out()  # the next file carries the revocation even when nothing else changed

    def _bump_out(self) -> None:
        out = self._meta(OUT) or {}
        out["pending"] = True
        self.db.execute_sql("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (OUT, dumps(out)))

    # --- one sync ---

    def sync(self, progress: Any = None) -> FolderSyncResult:
        """Take in the other stores' new files, then write this store's own. `progress(done, total, what)` is
        called as it goes: kB of change files checked, then taken in, then (total 0: unknown) the writing."""
        self._require_folder()
        keys = self.keys()
        make_private_dirs(self.dir)
        mine = self.ops.store_id
        self._inside(self.dir / mine)  # refused before anything is taken in
        result: FolderSyncResult = {"folder": str(self.dir), "store_id": mine, "read": [], "wrote": None,
                                    "compacted": False, "refused": [], "skipped": [], "erased_pages": [],
                                    "deleted_while_revised": [], "conflicts": 0}
        peers = sorted(p for p in self.dir.iterdir() if p.is_dir() and STORE_RE.match(p.name) and p.name != mine) \
            if self.dir.is_dir() else []
        self.meter = meter = _Meter(progress)
        meter.start("checking change files", sum(self._pending_bytes(p) for p in peers if p.name not in self.ops.revoked()))
        # Open every new file first: an unpairing any of them carries applies before anything is taken in.
        opened = {p.name: self._collect(p, keys, result) for p in peers if p.name not in self.ops.revoked()}
        unpaired = {store for files in opened.values() for *_, stores in files for store in stores}
        if unpaired - self.ops.revoked() - {mine}:
            self.ops.apply(f"{mine}@unpair", ({"kind": "unpair", "store": s} for s in sorted(unpaired - {mine})))
        meter.start("taking in changes", sum(_size(path) for files in opened.values() for _, _, path, _ in files))
        for peer_dir in peers:
            if peer_dir.name in self.ops.revoked():
                for f in sorted(peer_dir.iterdir()):
                    if FILE_RE.match(f.name):
                        result["refused"].append({"file": str(f), "reason": f"store {peer_dir.name} was unpaired"})
                continue
            self._take_peer(peer_dir, opened.get(peer_dir.name, []), keys, result)
        meter.start("writing this store's changes", 0)
        self._write_own(result)
        self._forget_old_keys(peers)
        self.ops.finished()  # a sync that only wrote (or found nothing new) is this store's last sync too
        return result

    def _files(self, peer_dir: Path, skipped: list[str] | None = None) -> dict[int, Path]:
        out = {}
        for f in peer_dir.iterdir():
            m = FILE_RE.match(f.name)
            if m:
                out[int(m.group(1))] = f
            elif f.is_file() and skipped is not None:
                skipped.append(str(f))  # a sync tool's "conflicted copy", a temporary file: not ours
        return out

    def _pending_bytes(self, peer_dir: Path) -> int:
        """The size of the peer's files not taken in yet (at most what _collect opens)."""
        done = int(self._peer_state(peer_dir.name).get("seq", 0))
        return sum(_size(path) for seq, path in self._files(peer_dir).items() if seq > done)

    def _peer_state(self, peer: str) -> dict[str, Any]:
        row = self.db.execute_sql("SELECT marks FROM sync_peer WHERE peer_id = ?", (f"{peer}@folder",)).fetchone()
        return json.loads(row[0]) if row else {}

    def _collect(self, peer_dir: Path, keys: dict[str, Any], result: FolderSyncResult) -> list[Opened]:
        """The peer's files not taken in yet, opened, in order: from its newest base file (which replaces the
        ones before it) or the one after the last taken, up to the first missing or refused file."""
        peer = peer_dir.name
        files = self._files(peer_dir, result["skipped"])
        done = int(self._peer_state(peer).get("seq", 0))
        seq = done + 1
        for candidate in sorted(files, reverse=True):
            if candidate <= done:
                break
            head = _peek_header(files[candidate])
            if head is not None and head.get("base"):
                seq = candidate
                break
        out = []
        while seq in files:
            got = self._verify(files[seq], peer, seq, keys)
            if isinstance(got, str):
                result["refused"].append({"file": str(files[seq]), "reason": got})
                break  # retried next time; later files wait for it
            out.append((seq, got[0], files[seq], got[1]))
            seq += 1
        latest = max(files) if files else None
        head = _peek_header(files[latest]) if latest is not None else None
        if head is not None and isinstance(head.get("epoch"), int):
            with self.db.atomic("IMMEDIATE"):
                self.db.execute_sql("INSERT INTO sync_peer (peer_id, epoch) VALUES (?, ?) ON CONFLICT(peer_id) DO UPDATE "
                                    "SET epoch = excluded.epoch", (f"{peer}@folder", head["epoch"]))
        return out

    def _take_peer(self, peer_dir: Path, files: list[Opened], keys: dict[str, Any], result: FolderSyncResult) -> None:
        """Apply each verified file in its own transaction, remembering it as taken in the same one."""
        added: dict[str, int] = {}
        for seq, header, path, _ in files:
            recs = self._records(path, peer_dir.name, seq, keys)
            applied: SyncApplied = self.ops.apply(f"{peer_dir.name}@folder", recs, {"seq": seq, "epoch": header["epoch"]},
                                                  foreign=True)
            self.ops.finish_erasures(applied)
            for k, v in applied["added"].items():
                added[k] = added.get(k, 0) + v
            result["erased_pages"] += applied["erased_pages"]
            result["deleted_while_revised"] += applied["deleted_while_revised"]
            result["conflicts"] += applied["conflicts"]
        result["read"].append({"store_id": peer_dir.name, "files": len(files), "added": added})

    def _check(self, path: Path, peer: str, seq: int, keys: dict[str, Any]) -> tuple[dict[str, Any], bytes, bytes] | str:
        """(header, header line, file key) of a change file, or the one-line reason it is refused."""
        head = _read_head(path)
        if head is None:
            return "not a pcp change file, or half written (retried next time)"
        try:
            header = json.loads(head)
        except ValueError:
            header = None
        if not isinstance(header, dict) or header.get("format") != FORMAT:
            return "not a pcp change file, or half written (retried next time)"
        if not isinstance(header.get("version"), int) or header["version"] > VERSION:
            return f"written by a newer pcp (sync format {header.get('version')}, this one reads {VERSION}); upgrade pcp"
        if header.get("store") != peer or header.get("seq") != seq:
            return "its header does not match its place in the folder (moved or modified)"
        if header.get("chain") != keys["chain"]:
            return "sealed with another key: a store not paired with this one (or paired afresh since)"
        epoch = header.get("epoch")
        key = self.key_for(epoch) if isinstance(epoch, int) else None
        if key is None:
            return "sealed with a key this store has forgotten (written before a delete); retried after that store syncs"
        return header, head, _file_key(key, peer, seq)

    def _verify(self, path: Path, peer: str, seq: int, keys: dict[str, Any]) -> tuple[dict[str, Any], set[str]] | str:
        """Open every sealed chunk once (nothing is applied): (header, stores it unpairs), or why it is refused."""
        checked = self._check(path, peer, seq, keys)
        if isinstance(checked, str):
            return checked
        header, head, key = checked
        unpaired: set[str] = set()
        try:
            for chunk in _unseal(path, head, key, self.meter.advance):
                if b'"kind":"unpair"' in chunk:
                    unpaired |= {json.loads(line)["store"] for line in chunk.splitlines() if b'"kind":"unpair"' in line}
        except _Unsealed:
            return "does not authenticate: modified, damaged or half written, or from a store not paired with this one"
        except OSError as exc:
            return f"cannot read it ({exc.strerror or exc}); retried next time"
        return header, unpaired

    def _open(self, path: Path, peer: str, seq: int, keys: dict[str, Any]) -> tuple[dict[str, Any], bytes] | str:
        """(header, all its records as JSON lines) of a change file, or the one-line reason it is refused."""
        checked = self._check(path, peer, seq, keys)
        if isinstance(checked, str):
            return checked
        header, head, key = checked
        try:
            return header, b"".join(_unseal(path, head, key))
        except _Unsealed:
            return "does not authenticate: modified, damaged or half written, or from a store not paired with this one"

    def _records(self, path: Path, peer: str, seq: int, keys: dict[str, Any]) -> Iterator[dict[str, Any]]:
        """The records of a verified file, a chunk at a time (a file changed since is refused, nothing applied)."""
        checked = self._check(path, peer, seq, keys)
        if isinstance(checked, str):
            raise Invalid(f"{path}: {checked}")
        _, head, key = checked
        try:
            for chunk in _unseal(path, head, key, self.meter.advance):
                for line in chunk.splitlines():
                    if line:
                        yield json.loads(line)
        except _Unsealed:
            raise Invalid(f"{path} changed while it was read; nothing of it was taken in (sync again).") from None

    def _write_own(self, result: FolderSyncResult) -> None:
        keys = self.keys()
        mine = self.ops.store_id
        own = self._inside(self.dir / mine)
        make_private_dirs(own)
        out = self._meta(OUT) or {}
        epoch = self.epoch()
        existing = self._files(own)
        seq = max([int(out.get("seq", 0)), *existing]) + 1
        compact = bool(existing) and (out.get("epoch") != epoch or out.get("chain") != keys["chain"])
        # A folder that does not hold this store's last file (a new folder, another one synced through since, the
        # files taken away) gets all of it, in a base file: a file of what is new since would leave its readers
        # without what went elsewhere, or waiting for a file that is not there. (So syncing through two folders
        # in turn writes the whole store each time; one folder per set of machines is the cheap way.)
        full = compact or int(out.get("seq", 0)) not in existing
        with self.db.atomic():
            upto = records.top_marks(self.db)
            since: dict[str, int] = {} if full or not out.get("marks") else records.lowered(self.db, out["marks"])
            skip = {} if full else self.ops.foreign_ranges()
            news = any(r["kind"] != "scope" for r in records.changes(self.db, self.ops.owner_id, since, upto, skip))
        if not full and not out.get("pending") and not news:
            self._set_meta(OUT, {**out, "marks": upto})  # nothing of this store's own since its last file
            return
        revoked = [{"kind": "unpair", "store": s} for s in sorted(self.ops.revoked())]
        key = self.key_for(epoch)
        if key is None:
            # Paired with a key that has moved past deletes this store has not taken in yet (the offering store
            # has not written its files here yet): nothing of this store's is written until it has caught up.
            return
        header = dumps({"format": FORMAT, "version": VERSION, "store": mine, "seq": seq, "epoch": epoch,
                        "chain": keys["chain"], "base": full, "written_at": ids.now()}).encode()
        target = own / f"{seq:08d}.pcs"
        with self.db.atomic():  # one snapshot of this store while its records stream into the file
            recs = records.changes(self.db, self.ops.owner_id, since, upto, skip)
            _write_atomic(target, lambda fh: _seal(fh, header, _file_key(key, mine, seq), _chain(recs, revoked)))
        if full:  # (the base file replaces this store's files before it here)
            for old_seq, path in existing.items():
                if old_seq < seq:
                    try:
                        path.unlink()
                    except OSError:
                        pass
        self._set_meta(OUT, {"seq": seq, "marks": upto, "epoch": epoch, "chain": keys["chain"]})
        result["wrote"] = str(target)
        result["compacted"] = compact

    def _forget_old_keys(self, peers: list[Path]) -> None:
        """Move the oldest key kept up to the oldest epoch any paired store's files still need."""
        keys = self.keys()
        need = self.epoch()
        revoked = self.ops.revoked()
        for peer_dir in peers:
            if peer_dir.name in revoked:
                continue
            files = self._files(peer_dir)
            done = int(self._peer_state(peer_dir.name).get("seq", 0))
            for seq, path in files.items():
                head = _peek_header(path)
                if head is None or not isinstance(head.get("epoch"), int) or head.get("chain") != keys["chain"]:
                    continue
                if seq > done or seq == max(files):
                    need = min(need, head["epoch"])
        if need > keys["epoch"]:
            new = _step(bytes.fromhex(keys["key"]), keys["epoch"], need)
            self._set_meta(KEYS, {"chain": keys["chain"], "epoch": need, "key": new.hex()})


def _chain(*parts: Any) -> Iterator[dict[str, Any]]:
    for part in parts:
        yield from part


def _file_key(key: bytes, store: str, seq: int) -> bytes:
    return _hkdf(key, f"pcp sync file {store} {seq}".encode())


def _peek_header(path: Path) -> dict[str, Any] | None:
    try:
        with open(path, "rb") as fh:
            head = fh.readline(MAX_HEADER + 1)
        value = json.loads(head)
    except (OSError, ValueError):
        return None
    return value if isinstance(value, dict) else None


Opened = tuple[int, dict[str, Any], Path, set[str]]  # seq, header, file, stores it unpairs
CHUNK = 1 << 20  # bytes of JSON lines per sealed chunk: files of any size are written and read in flat memory


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


class _Meter:
    """A sync's progress a phase at a time, in kB of change files: progress(done, total, what)."""

    def __init__(self, progress: Callable[[int, int, str], None] | None) -> None:
        self.progress, self.what, self.done, self.total = progress, "", 0, 0

    def start(self, what: str, total: int) -> None:
        if self.progress is not None and self.what and self.total:
            self.progress(-(-self.total // 1024), -(-self.total // 1024), self.what)  # the phase before ends full
        self.what, self.done, self.total = what, 0, total
        self._report()

    def advance(self, n: int) -> None:
        self.done += n
        self._report()

    def _report(self) -> None:
        if self.progress is not None:
            total = -(-self.total // 1024)  # whole kB, rounded up: a small file is 1 kB, not 0 (unknown)
            self.progress(min(self.done // 1024, total), total, self.what)


class _Unsealed(Exception):
    """A chunk failed to authenticate (or the chunks do not end where the file does)."""


def _aad(head: bytes, index: int, last: bool) -> bytes:
    return head + b"\n" + index.to_bytes(8, "big") + (b"\x01" if last else b"\x00")


def _seal(fh: Any, head: bytes, key: bytes, recs: Iterator[dict[str, Any]]) -> None:
    """Header line, then chunks [length][nonce][sealed zlib JSON lines], each bound to its place and to
    whether it is the last (so a file cut at a chunk boundary does not open either)."""
    aead = ChaCha20Poly1305(key)
    fh.write(head + b"\n")
    index = 0
    buf: list[bytes] = []
    size = 0

    def flush(last: bool) -> None:
        nonlocal index, buf, size
        nonce = secrets.token_bytes(12)
        sealed = aead.encrypt(nonce, zlib.compress(b"".join(buf), 6), _aad(head, index, last))
        fh.write(len(sealed).to_bytes(4, "big") + nonce + sealed)
        index, buf, size = index + 1, [], 0

    for rec in recs:
        line = (dumps(rec) + "\n").encode("utf-8")
        if size and size + len(line) > CHUNK:
            flush(False)
        buf.append(line)
        size += len(line)
    flush(True)


def _unseal(path: Path, head: bytes, key: bytes, advance: Callable[[int], None] | None = None) -> Iterator[bytes]:
    """The chunks of a change file, opened in order; `advance(bytes)` after each (progress)."""
    aead = ChaCha20Poly1305(key)
    total = path.stat().st_size
    with open(path, "rb") as fh:
        fh.seek(len(head) + 1)
        index = 0
        while True:
            size = int.from_bytes(fh.read(4), "big")
            if size == 0 or size > MAX_SEALED:
                raise _Unsealed()  # never read that much on a header's word
            nonce = fh.read(12)
            sealed = fh.read(size)
            if len(nonce) != 12 or len(sealed) != size:
                raise _Unsealed()
            last = fh.tell() >= total
            try:
                chunk = zlib.decompress(aead.decrypt(nonce, sealed, _aad(head, index, last)))
            except (InvalidTag, zlib.error):
                raise _Unsealed() from None
            if advance is not None:
                advance(16 + size)
            yield chunk
            if last:
                return
            index += 1


def _read_head(path: Path) -> bytes | None:
    try:
        with open(path, "rb") as fh:
            line = fh.readline(MAX_HEADER + 1)
    except OSError:
        return None
    return line[:-1] if line.endswith(b"\n") else None


def _write_atomic(target: Path, data: bytes | Callable[[Any], None]) -> None:
    """Write beside the target and rename into place, so a reader sees the whole file or none."""
    tmp = target.with_name(f".{target.name}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "wb") as fh:
            if callable(data):
                data(fh)
            else:
                fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        try:
            tmp.unlink()
        except OSError:
            pass
        raise


__all__ = ["FORMAT", "Folder", "VERSION"]
