"""`pcp sync DIR`: the owner's stores exchange change files through a folder (a USB stick, a synced folder).

Layout: DIR/<store id>/<seq>.pcs, each store writing only its own folder; DIR/offers/<id>.offer while a
pairing waits for its code, and DIR/offers/<id>.reply once the second store took it.

A change file (format 2) is a header line (JSON: format, version, store, seq, epoch, chain, and the signer's
part of the list of stores: the stores it paired, the stores it unpaired, owner ids it joined, the folder key
sealed to each store in good standing), the header's Ed25519 signature (hex, its own line), then the records
(JSON lines, zlib) in chunks sealed with ChaCha20-Poly1305 under the folder key, each chunk signed too. A
file is taken in only when it is signed by the key listed for its store (issue 30): the subfolder and the
header's store id name the key, they do not vouch for it. The signature is checked before anything costly.

Each store has its own key pairs (identity.py). Pairing mints the folder key; the one-time code shown on the
first machine (never written to the folder) opens the offer on the second, which takes the key and the list
of stores from it and leaves a reply (sealed under the code) with its public keys; the first store lists it
at its next sync, and the others learn it from the first store's signed header. Unpairing a store signs a
revocation and moves the folder key on: the new key is sealed to every store in good standing (not to the
revoked one), so the others take it at their next sync and the lost machine can neither write accepted
files nor read new ones.

The key of epoch n + 1 is derived one way from the key of epoch n (HKDF), the epoch being the number of
deletion receipts a store holds, so it moves on with every delete. Erasure in the folder is by keys:
- after a delete (here or received), a store rewrites its own files as one base file under the new
  epoch's key, from its state after the erasure, and removes the old ones;
- a store forgets the key of an older epoch once no store's verified files need it any more, so the copies
  of the old files a sync tool may keep in its own version history can no longer be opened by anyone.

Long because: the change-file format, its signatures and sealing, pairing and revocation are one protocol whose
checks are read together; the file format is the piece to carve out next.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import queue
import re
import secrets
import stat
import threading
import zlib
from pathlib import Path
from typing import Any, BinaryIO, Callable, ContextManager, Iterator


from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from .. import ids
from ..core import dumps
from ..db import fold_wal
from ..errors import Conflict, Invalid, PcpError
from ..files import make_private_dirs
from ..jsonsafe import depth_of, loads
from ..types import FolderSyncResult, PairOffer, SyncApplied
from . import identity, records
from .identity import Identity, Standing
from .ops import SyncOps, is_empty

FORMAT = "pcp.sync"
VERSION = 2  # 1: no store signatures (pcp before issue 30): such files are refused, the stores pair again
KEYS = "sync_keys"  # meta: {"chain": id, "epoch": n, "key": hex, "granted": [stores that may hold it]}
OUT = "sync_out"  # meta: {"seq": n, "marks": {...}, "epoch": n, "chain": id} of this store's last file
OFFERS = "sync_offers"  # meta: {offer id: {"reply": hex key that opens its reply, "at": time}}
FILE_RE = re.compile(r"(\d{1,18})\.pcs\Z")  # any digit count (a store's 100,000,000th file has 9)
STORE_RE = re.compile(r"sto_[0-9A-Z]{26}\Z")
OFFER_RE = re.compile(r"([0-9A-Z]{26})\.(offer|reply)\Z")
MAX_HEADER = 256 << 10  # bytes of a header line: the list of stores and their sealed keys, never records
MAX_OFFER = 1 << 20  # bytes of a pairing offer or reply (the list of stores, names for the join's summary)
MAX_SEALED = 64 << 20  # bytes of one sealed chunk (a chunk holds ~1 MiB of records, or one record of a page at most)
MAX_INFLATE = 16 << 20  # bytes one chunk may inflate to: a record holds at most one page (1,000,000 chars)
MAX_AHEAD = 64  # epochs a file may be ahead of this store's key: stepping the key further is refused
MAX_DEPTH = 64  # nesting of a record (facets and locators are shallow)
MAX_LISTED = 2000  # namespaces and chat labels an offer carries for the join's summary
SIG = 64


# --- keys ---


def _hkdf(key: bytes, info: bytes, salt: bytes | None = None) -> bytes:
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=salt, info=info).derive(key)


def _step(key: bytes, frm: int, to: int) -> bytes:
    """The key of epoch `to` from the key of epoch `frm` (one way: an older key cannot be had from a newer)."""
    for n in range(frm, to):
        key = _hkdf(key, b"pcp sync epoch " + str(n + 1).encode())
    return key


def _code_key(raw: bytes, salt: bytes, what: bytes = b"offer") -> bytes:
    return _hkdf(raw, b"pcp sync pairing " + what, salt)


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


def _grant_info(chain: str, epoch: int) -> bytes:
    return f"pcp sync grant {chain} {epoch}".encode()


class _Refused(Exception):
    """One change file refused, with the one-line reason."""


class Folder:
    """One store's view of a sync folder."""

    def __init__(self, ops: SyncOps, folder: str | os.PathLike[str]) -> None:
        self.ops = ops
        self.dir = Path(folder).expanduser()
        self.db = ops._db
        self.meter = _Meter(None)
        self._headers: dict[Path, tuple[dict[str, Any], bytes] | str] = {}

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

    def standing(self) -> Standing:
        return Standing(identity.members(self.db), identity.revocations(self.db))

    def _ensure_listed(self, ident: Identity) -> None:
        """This store on its own list (the first store to pair is its own introducer)."""
        mine = self.ops.store_id
        found = identity.members(self.db)
        if mine not in found:
            found[mine] = {"store": mine, "sign": ident.sign_pub, "seal": ident.seal_pub, "by": mine, "lifts": []}
            with self.db.atomic("IMMEDIATE"):
                identity.save(self.db, found)

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
        """Offer this store's key and list to a second store: returns the one-time code to type there."""
        self._require_folder()
        ident = Identity(self.db)
        self._ensure_listed(ident)
        mine = self.ops.store_id
        found = self._meta(KEYS)
        if found is None or rekey:
            found = {"chain": "chn_" + ids.ulid(), "epoch": self.epoch(), "key": secrets.token_bytes(32).hex(),
                     "granted": [mine]}
            self._set_meta(KEYS, found)
            self._bump_out()
        code, raw = _new_code()
        salt = secrets.token_bytes(16)
        offers = self._inside(self.dir / "offers")
        make_private_dirs(offers)
        offer_id = ids.ulid()
        pending = self._meta(OFFERS) or {}
        pending[offer_id] = {"reply": _code_key(raw, salt, b"reply").hex(), "at": ids.now()}
        self._set_meta(OFFERS, pending)
        db = self.db
        body = dumps({
            "owner_id": self.ops.owner_id, "store": mine, "chain": found["chain"], "epoch": found["epoch"],
            "key": found["key"], "members": identity.members(db), "revocations": identity.revocations(db),
            "aliases": identity.aliases(db),
            "namespaces": [r[0] for r in db.execute_sql("SELECT namespace FROM scope ORDER BY namespace LIMIT ?",
                                                        (MAX_LISTED,))],
            "labels": [r[0] for r in db.execute_sql("SELECT DISTINCT label FROM handoff ORDER BY label LIMIT ?",
                                                    (MAX_LISTED,))],
        }).encode()
        header = dumps({"format": FORMAT, "version": VERSION, "kind": "offer", "salt": salt.hex()}).encode()
        nonce = secrets.token_bytes(12)
        sealed = ChaCha20Poly1305(_code_key(raw, salt)).encrypt(nonce, body, header)
        _write_atomic(offers / f"{offer_id}.offer", header + b"\n" + nonce + sealed)
        return {"code": code, "offer": str(offers / f"{offer_id}.offer"), "store_id": mine}

    def _open_offer(self, code: str) -> tuple[Path, str, bytes, dict[str, Any]]:
        """(offer file, offer id, code, its body) of the offer this code opens."""
        raw = _decode_code(code)
        offers = self.dir / "offers"
        for path in sorted(offers.iterdir()) if offers.is_dir() and not offers.is_symlink() else []:
            m = OFFER_RE.match(path.name)
            if not m or m.group(2) != "offer":
                continue
            got = _open_small(path, raw, b"offer")
            if isinstance(got, dict):
                if got["version"] > VERSION:
                    raise Invalid(f"{path.name} was written by a newer pcp (sync format {got['version']}); upgrade pcp.")
                body = got["body"]
                if _valid_offer(body):
                    return path, m.group(1), raw, body
        raise Invalid(f"No pairing offer in {offers} opens with that code (typed wrong, or already used?).")

    def join_plan(self, code: str) -> dict[str, Any]:
        """What a join with this code would merge (nothing is written): this store's scopes with their page
        counts, the namespaces both stores hold, the chat labels both use and what this store's become."""
        self._require_folder()
        _, _, _, body = self._open_offer(code)
        return self._plan(body)

    def _plan(self, body: dict[str, Any]) -> dict[str, Any]:
        db = self.db
        theirs = str(body["owner_id"])
        same = theirs in identity.owner_ids(db, self.ops.owner_id) or self.ops.owner_id in {
            a.get("alias") for a in body.get("aliases", []) if isinstance(a, dict)}
        empty = is_empty(self.ctx)
        scopes = [{"namespace": r[0], "pages": r[1]} for r in db.execute_sql(
            "SELECT s.namespace, (SELECT COUNT(*) FROM page p WHERE p.scope_id = s.id) FROM scope s ORDER BY s.namespace")]
        their_ns = set(body.get("namespaces", []))
        their_labels = set(body.get("labels", []))
        mine_labels = [r[0] for r in db.execute_sql("SELECT DISTINCT label FROM handoff ORDER BY label")]
        taken = their_labels | set(mine_labels)
        relabel: dict[str, str] = {}
        for label in mine_labels:
            if label in their_labels:
                n = 2
                while f"{label} ({n})" in taken:
                    n += 1
                relabel[label] = f"{label} ({n})"
                taken.add(relabel[label])
        return {"paired_with": body["store"], "owner_id": theirs, "this_owner_id": self.ops.owner_id,
                "merge": not empty and not same, "scopes": scopes,
                "shared_namespaces": sorted(s["namespace"] for s in scopes if s["namespace"] in their_ns),
                "shared_labels": sorted(relabel), "relabel": relabel}

    @property
    def ctx(self) -> Any:
        return self.ops.ctx

    def join(self, code: str, merge: bool = False) -> dict[str, Any]:
        """Take the key and list of the offer this code opens, and leave a reply with this store's keys; the offer
        goes. An empty store adopts the owner; a store with history of its own joins only with `merge` (its owner
        id becomes an alias of the other's: a signed record in its next file)."""
        self._require_folder()
        path, offer_id, raw, body = self._open_offer(code)
        mine = self.ops.store_id
        if body["store"] == mine:
            raise Invalid("That code is this store's own offer; type it on your other machine.")
        plan = self._plan(body)
        if plan["merge"] and not merge:
            raise Conflict(f"This store holds history of its own (owner {self.ops.owner_id}); joining merges it with "
                           f"{body['store']}'s: run `pcp sync DIR --join CODE` at a terminal to see what merges, or add --yes.")
        ident = Identity(self.db)
        db = self.db
        side = "same"
        with db.atomic("IMMEDIATE"):
            if not plan["merge"]:
                side = self.ops.check_owner(body["owner_id"], False, [a.get("alias") for a in body["aliases"]])
            found_aliases = _merge_aliases(identity.aliases(db), body["aliases"])
            if plan["merge"]:
                found_aliases.append({"alias": self.ops.owner_id, "owner": body["owner_id"], "store": mine, "at": ids.now()})
                for old, new in plan["relabel"].items():
                    db.execute_sql("UPDATE handoff SET label = ? WHERE label = ?", (new, old))
                db.execute_sql("UPDATE meta SET value = ? WHERE key = 'owner_id'", (body["owner_id"],))
                self.ops.owner_id = body["owner_id"]
            found = identity.members(db)
            for sid, m in body["members"].items():
                if sid not in found or sid == body["store"]:
                    found[sid] = m
            found[mine] = {"store": mine, "sign": ident.sign_pub, "seal": ident.seal_pub, "by": body["store"],
                           "lifts": []}
            revs = identity.revocations(db)
            revs.update({k: v for k, v in body["revocations"].items() if k not in revs})
            identity.save(db, found, revs, found_aliases)
            db.execute_sql("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (KEYS, dumps(
                {"chain": body["chain"], "epoch": body["epoch"], "key": body["key"],
                 "granted": sorted(set(body["members"]) | {mine})})))
            # a store joining again (after an unpairing) starts over on the new key with a whole file
            db.execute_sql("DELETE FROM sync_peer WHERE peer_id = ? AND revoked = 1", (mine,))
        reply = dumps({"store": mine, "sign": ident.sign_pub, "seal": ident.seal_pub, "at": ids.now()}).encode()
        header = dumps({"format": FORMAT, "version": VERSION, "kind": "reply"}).encode()
        nonce = secrets.token_bytes(12)
        salt = bytes.fromhex(_offer_salt(path))
        sealed = ChaCha20Poly1305(_code_key(raw, salt, b"reply")).encrypt(nonce, reply, header)
        _write_atomic(path.with_name(f"{offer_id}.reply"), header + b"\n" + nonce + sealed)
        try:
            path.unlink()  # one time: the offer is gone once taken
        except OSError:
            pass
        return {"owner_id": self.ops.owner_id, "adopted_owner": side == "adopted", "paired_with": body["store"],
                "merged": plan["merge"], "relabelled": plan["relabel"]}

    def _take_replies(self) -> list[str]:
        """List the stores that answered this store's offers (their reply, sealed under the offer's code)."""
        pending = self._meta(OFFERS) or {}
        offers = self.dir / "offers"
        joined = []
        for offer_id, info in sorted(pending.items()):
            path = offers / f"{offer_id}.reply"
            got = _open_small(path, bytes.fromhex(info["reply"]), None)
            if not isinstance(got, dict):
                continue
            rep = got["body"]
            if not (isinstance(rep, dict) and STORE_RE.match(str(rep.get("store")))
                    and identity.valid_member({**rep, "by": self.ops.store_id})) or rep["store"] == self.ops.store_id:
                continue
            db = self.db
            with db.atomic("IMMEDIATE"):
                found = identity.members(db)
                revs = identity.revocations(db)
                sid = rep["store"]
                found[sid] = {"store": sid, "sign": rep["sign"], "seal": rep["seal"], "by": self.ops.store_id,
                              "lifts": sorted(k for k, r in revs.items() if r["target"] == sid)}
                identity.save(db, found)
                keys = self.keys()
                keys["granted"] = sorted(set(keys.get("granted") or []) | {sid})
                db.execute_sql("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (KEYS, dumps(keys)))
                pending.pop(offer_id)
                db.execute_sql("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (OFFERS, dumps(pending)))
                db.execute_sql("DELETE FROM sync_peer WHERE peer_id = ? AND revoked = 1", (sid,))
                self._bump_out()
            joined.append(sid)
            try:
                path.unlink()
            except OSError:
                pass
        return joined

    def unpair(self, store: str) -> dict[str, Any]:
        """Refuse a lost store's files from now on (here, and on every store that reads this one's files): a
        signed revocation, and a new folder key sealed to every store in good standing but that one. Between
        two stores that unpaired each other it is the owner's confirmation of which one is lost."""
        if not STORE_RE.match(str(store)):
            raise Invalid(f"{str(store)[:40]!r} is not a store id (`pcp sync DIR --status` lists them).")
        if store == self.ops.store_id:
            raise Invalid("That is this store; unpair it from another of your stores.")
        self.keys()
        ident = Identity(self.db)
        self._ensure_listed(ident)
        mine = self.ops.store_id
        before = self.standing()
        keep = next((a if b == store else b for a, b in before.disputes if store in (a, b)), None)
        db = self.db
        with db.atomic("IMMEDIATE"):
            revs = identity.revocations(db)
            rid = "rvk_" + ids.ulid()
            revs[rid] = {"id": rid, "by": mine, "target": store, "seen": sorted(revs), "keep": keep, "at": ids.now()}
            identity.save(db, None, revs)
            db.execute_sql("INSERT INTO sync_peer (peer_id, revoked) VALUES (?, 1) ON CONFLICT(peer_id) DO UPDATE "
                           "SET revoked = 1", (store,))
            self._rekey(self.standing())
            self._bump_out()  # the next file carries the revocation even when nothing else changed
        return {"store_id": store, "confirmed": keep is not None, "kept": keep}

    def _rekey(self, standing: Standing) -> dict[str, Any]:
        """A new folder key, for the stores in good standing (inside the caller's transaction)."""
        mine = self.ops.store_id
        keys = {"chain": "chn_" + ids.ulid(), "epoch": self.epoch(), "key": secrets.token_bytes(32).hex(),
                "granted": sorted({s for s in standing.members if standing.good(s)} | {mine})}
        self.db.execute_sql("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (KEYS, dumps(keys)))
        return keys

    def _tainted(self, keys: dict[str, Any], standing: Standing) -> bool:
        """The folder key may be held by a store no longer in good standing."""
        granted = set(keys.get("granted") or standing.members)
        return bool(granted & (standing.revoked | standing.disputed) - {self.ops.store_id})

    def _bump_out(self) -> None:
        out = self._meta(OUT) or {}
        out["pending"] = True
        self.db.execute_sql("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (OUT, dumps(out)))

    # --- one sync ---

    def sync(self, progress: Any = None) -> FolderSyncResult:
        """Take in the other stores' new files, then write this store's own. `progress(done, total, what)` is
        called as it goes: kB of change files checked, then taken in, then (total 0: unknown) the writing."""
        self._require_folder()
        self.keys()
        make_private_dirs(self.dir)
        mine = self.ops.store_id
        self._inside(self.dir / mine)  # refused before anything is taken in
        ident = Identity(self.db)
        self._ensure_listed(ident)
        result: FolderSyncResult = {"folder": str(self.dir), "store_id": mine, "read": [], "wrote": None,
                                    "compacted": False, "refused": [], "skipped": [], "erased_pages": [],
                                    "deleted_while_revised": [], "conflicts": 0}
        self.meter = meter = _Meter(progress)
        self._take_replies()
        meter.start("checking change files", self._pending_bytes())
        opened = self._scan(result)
        standing = self.standing()
        self._adopt_grant(ident, opened, standing)
        keys = self.keys()
        meter.start("taking in changes", sum(_size(path) for files in opened.values() for _, _, _, path in files))
        before = self.ops.foreign_ranges()
        for peer in sorted(opened):
            if not standing.good(peer):
                why = ("it and another store unpaired each other: confirm on one of your stores which one is lost "
                       "(`pcp sync DIR --unpair STORE`)") if peer in standing.disputed else f"store {peer} was unpaired"
                for _, _, _, path in opened[peer]:
                    result["refused"].append({"file": str(path), "reason": why})
                continue
            self._take_peer(peer, opened[peer], keys, result)
        meter.start("writing this store's changes", 0)
        took = _spans_minus(self.ops.foreign_ranges(), before)  # rows this sync took in: this folder's files hold them
        self._write_own(result, ident, self.standing(), took)
        self._forget_old_keys(standing)
        self.ops.finished()  # a sync that only wrote (or found nothing new) is this store's last sync too
        return result

    def _scan(self, result: FolderSyncResult) -> dict[str, list[Opened]]:
        """The listed stores' files not taken in yet, their headers verified, in order; what those headers say of
        the list of stores is taken in first (a store learnt there is scanned too). Subfolders of stores never
        seen in a verified file are left alone."""
        mine = self.ops.store_id
        opened: dict[str, list[Opened]] = {}
        dirs = [p for p in sorted(self.dir.iterdir()) if STORE_RE.match(p.name) and p.name != mine
                and not p.is_symlink() and p.is_dir()] if self.dir.is_dir() else []
        while True:
            listed = identity.members(self.db)
            todo = [p for p in dirs if p.name in listed and p.name not in opened]
            if not todo:
                break
            for peer_dir in todo:  # a store learnt from these headers is scanned in the next round
                files = opened[peer_dir.name] = self._collect(peer_dir, listed[peer_dir.name], result)
                for _, header, _, _ in files:
                    self._learn(peer_dir.name, header)
        listed = identity.members(self.db)
        for p in dirs:
            if p.name in listed:
                continue
            found = self._files(p)
            newest = found[max(found)] if found else None
            if newest is not None and _older_format(newest):  # (read without trust: it only words a refusal)
                result["refused"].append({"file": str(newest), "reason": (
                    "written by an older pcp (sync format 1, no store signatures); upgrade pcp there and pair the "
                    "stores again (--pair, then --join)")})
            else:
                result["skipped"].append(str(p))
        return opened

    def _pending_bytes(self) -> int:
        """The size of the listed stores' files not taken in yet (at most what _scan checks)."""
        listed = identity.members(self.db)
        total = 0
        for sid in listed:
            if sid != self.ops.store_id and (self.dir / sid).is_dir():
                done = int(self._peer_state(sid).get("seq", 0))
                total += sum(_size(p) for seq, p in self._files(self.dir / sid).items() if seq > done)
        return total

    def _learn(self, signer: str, header: dict[str, Any]) -> bool:
        """Take in the signer's own part of the list from a verified header: stores it paired, revocations it
        signed, owner ids it joined. True when something was new."""
        db = self.db
        found = identity.members(db)
        revs = identity.revocations(db)
        found_aliases = identity.aliases(db)
        new = False
        for rec in header.get("members") or []:
            if not identity.valid_member(rec) or rec["by"] != signer or rec["store"] == signer \
                    or not STORE_RE.match(rec["store"]) or len(found) >= identity.MAX_MEMBERS:
                continue
            known = found.get(rec["store"])
            lifts = sorted(x for x in rec.get("lifts", []) if revs.get(x, {}).get("target") == rec["store"])
            if known is None:
                found[rec["store"]] = {k: rec[k] for k in ("store", "sign", "seal", "by")} | {"lifts": lifts}
                new = True
            elif set(lifts) - set(known.get("lifts", [])):
                # joined again through the signer: the signer is its introducer now (keys never change here)
                found[rec["store"]] = {**known, "by": signer, "lifts": sorted(set(known.get("lifts", [])) | set(lifts))}
                new = True
        for rec in header.get("revocations") or []:
            if identity.valid_revocation(rec) and rec["by"] == signer and rec["id"] not in revs and len(revs) < 10_000:
                revs[rec["id"]] = {k: rec.get(k) for k in ("id", "by", "target", "seen", "keep", "at")}
                new = True
        for rec in header.get("aliases") or []:
            if (isinstance(rec, dict) and rec.get("store") == signer and _is_usr(rec.get("alias"))
                    and _is_usr(rec.get("owner"))
                    and not any(a.get("alias") == rec["alias"] for a in found_aliases)):
                found_aliases.append({k: rec.get(k) for k in ("alias", "owner", "store", "at")})
                new = True
        if new:
            with db.atomic("IMMEDIATE"):
                identity.save(db, found, revs, found_aliases)
        return new

    def _adopt_grant(self, ident: Identity, opened: dict[str, list[Opened]], standing: Standing) -> None:
        """Take a newer folder key sealed to this store by a store in good standing (after an unpairing)."""
        keys = self.keys()
        tainted = self._tainted(keys, standing)
        best = None
        for peer, files in opened.items():
            if not standing.good(peer):
                continue
            for _, header, _, _ in files:
                grants = header.get("grants")
                if (isinstance(grants, dict) and self.ops.store_id in grants and header.get("chain") != keys["chain"]
                        and isinstance(header.get("chain"), str) and (tainted or header["chain"] > keys["chain"])
                        and (best is None or header["chain"] > best[1]["chain"])):
                    best = (peer, header)
        if best is None:
            return
        peer, header = best
        key = ident.unseal(header["grants"][self.ops.store_id], _grant_info(header["chain"], header["epoch"]))
        if key is None or len(key) != 32:
            return
        self._set_meta(KEYS, {"chain": header["chain"], "epoch": header["epoch"], "key": key.hex(),
                              "granted": sorted(set(header["grants"]) | {peer, self.ops.store_id})})

    def _files(self, peer_dir: Path, skipped: list[str] | None = None) -> dict[int, Path]:
        """The change files of a store's folder by number; anything else (a sync tool's "conflicted copy", a
        temporary file, a link, a FIFO named like a change file) is not ours, and is named in `skipped`."""
        out = {}
        try:
            entries = list(os.scandir(peer_dir))
        except OSError:
            return {}
        for entry in entries:
            m = FILE_RE.match(entry.name)
            if m and entry.is_file(follow_symlinks=False):
                out[int(m.group(1))] = Path(entry.path)
            elif skipped is not None and not entry.name.startswith("."):
                skipped.append(entry.path)
        return out

    def _peer_state(self, peer: str) -> dict[str, Any]:
        row = self.db.execute_sql("SELECT marks FROM sync_peer WHERE peer_id = ?", (f"{peer}@folder",)).fetchone()
        return json.loads(row[0]) if row else {}

    def _header(self, path: Path, peer: str, seq: int, member: dict[str, Any]) -> tuple[dict[str, Any], bytes] | str:
        """(header, header line) of a change file whose header is signed by `member`'s key, or why it is refused."""
        if path in self._headers:
            return self._headers[path]
        got = _check_header(path, peer, seq, member)
        self._headers[path] = got
        return got

    def _collect(self, peer_dir: Path, member: dict[str, Any], result: FolderSyncResult) -> list[Opened]:
        """The peer's files not taken in yet, headers verified, in order: from its newest verified base file (which
        replaces the ones before it) or the one after the last taken, up to the first missing or refused file."""
        peer = peer_dir.name
        files = self._files(peer_dir, result["skipped"])
        done = int(self._peer_state(peer).get("seq", 0))
        seq = done + 1
        for candidate in sorted(files, reverse=True):
            if candidate <= done:
                break
            got = self._header(files[candidate], peer, candidate, member)
            if not isinstance(got, str) and got[0].get("base"):
                seq = candidate
                break
        out = []
        while seq in files:
            got = self._header(files[seq], peer, seq, member)
            if isinstance(got, str):
                result["refused"].append({"file": str(files[seq]), "reason": got})
                break  # retried next time; later files wait for it
            out.append((seq, got[0], got[1], files[seq]))
            self.meter.advance(_size(files[seq]))
            seq += 1
        if out:  # the epoch of its newest verified file: what decides which keys it still needs
            with self.db.atomic("IMMEDIATE"):
                self.db.execute_sql("INSERT INTO sync_peer (peer_id, epoch) VALUES (?, ?) ON CONFLICT(peer_id) DO UPDATE "
                                    "SET epoch = excluded.epoch", (f"{peer}@folder", out[-1][1]["epoch"]))
        return out

    def _file_key(self, header: dict[str, Any], keys: dict[str, Any]) -> bytes | str:
        if header.get("chain") != keys["chain"]:
            return "sealed with another key: a store not paired with this one (or paired afresh since)"
        epoch = header["epoch"]
        if epoch < keys["epoch"]:
            return "sealed with a key this store has forgotten (written before a delete); retried after that store syncs"
        if epoch - max(keys["epoch"], self.epoch()) > MAX_AHEAD:
            # Never stepped that far on a header's word; a store in good standing seals the key of its file's epoch
            # to each listed store in its signed header, so one far behind takes it from there.
            grants = header.get("grants")
            granted = Identity(self.db).unseal(grants.get(self.ops.store_id), _grant_info(keys["chain"], epoch)) \
                if isinstance(grants, dict) else None
            if granted is None or len(granted) != 32:
                return (f"its epoch ({epoch}) is more than {MAX_AHEAD} ahead of this store's and its header holds no key "
                        "for this store; pair this store again (`--join` with a new code)")
            return _file_key(granted, header["store"], header["seq"])
        return _file_key(_step(bytes.fromhex(keys["key"]), keys["epoch"], epoch), header["store"], header["seq"])

    def _open(self, path: Path, peer: str, seq: int, keys: dict[str, Any]) -> tuple[dict[str, Any], bytes] | str:
        """(header, all its records as JSON lines) of a change file, or the one-line reason it is refused."""
        member = identity.members(self.db).get(peer)
        if member is None:
            return f"store {peer} is not on this store's list"
        got = _check_header(path, peer, seq, member)
        if isinstance(got, str):
            return got
        key = self._file_key(got[0], keys)
        if isinstance(key, str):
            return key
        try:
            return got[0], b"".join(dumps(r).encode() + b"\n" for r in _records(path, got[1], key, member["sign"]))
        except _Refused as exc:
            return str(exc)

    def _take_peer(self, peer: str, files: list[Opened], keys: dict[str, Any], result: FolderSyncResult) -> None:
        """Apply each verified file in its own transaction, remembering it as taken in the same one; a file that
        fails is refused (named), nothing of it applied, and the peer's later files wait for it."""
        added: dict[str, int] = {}
        taken = 0
        member = identity.members(self.db)[peer]
        for seq, header, head, path in files:
            key = self._file_key(header, keys)
            if isinstance(key, str):
                result["refused"].append({"file": str(path), "reason": key})
                break
            try:
                recs = _records(path, head, key, member["sign"], self.meter.advance)
                applied: SyncApplied = self.ops.apply(f"{peer}@folder", recs, {"seq": seq, "epoch": header["epoch"]},
                                                      foreign=True)
            except _Refused as exc:
                result["refused"].append({"file": str(path), "reason": str(exc)})
                break
            except PcpError as exc:
                result["refused"].append({"file": str(path), "reason": _one_line(exc.message)})
                break
            except Exception as exc:  # noqa: BLE001 - one broken file is that file's refusal, never the whole sync's
                result["refused"].append({"file": str(path), "reason": _one_line(
                    f"could not be taken in ({type(exc).__name__}: {exc}); nothing of it was applied")})
                break
            self.ops.finish_erasures(applied)
            taken += 1
            for k, v in applied["added"].items():
                added[k] = added.get(k, 0) + v
            result["erased_pages"] += applied["erased_pages"]
            result["deleted_while_revised"] += applied["deleted_while_revised"]
            result["conflicts"] += applied["conflicts"]
        result["read"].append({"store_id": peer, "files": taken, "added": added})

    def _write_own(self, result: FolderSyncResult, ident: Identity, standing: Standing,
                   took: dict[str, list[tuple[int, int]]]) -> None:
        keys = self.keys()
        if self._tainted(keys, standing):
            with self.db.atomic("IMMEDIATE"):
                keys = self._rekey(standing)
        mine = self.ops.store_id
        own = self._inside(self.dir / mine)
        make_private_dirs(own)
        out = self._meta(OUT) or {}
        epoch = self.epoch()
        last = int(out.get("seq", 0))
        existing = {s: p for s, p in self._files(own).items() if s <= last}  # only the files this store wrote
        seq = last + 1
        compact = bool(existing) and (out.get("epoch") != epoch or out.get("chain") != keys["chain"])
        # A folder that does not hold this store's last file (a new folder, another one synced through since, the
        # files taken away) gets all of it, in a base file: a file of what is new since would leave its readers
        # without what went elsewhere, or waiting for a file that is not there. (So syncing through two folders
        # in turn writes the whole store each time; one folder per set of machines is the cheap way.)
        full = compact or last not in existing
        with self.db.atomic():
            upto = records.top_marks(self.db)
            since: dict[str, int] = {} if full or not out.get("marks") else records.lowered(self.db, out["marks"])
            # A base file leaves out only the rows this very sync took in from this folder's files, which hold them
            # (a store joining a folder repeated the whole folder otherwise, under one snapshot of itself); after a
            # rekey (`compact`: older files may no longer open) it holds everything.
            skip = self.ops.foreign_ranges() if not full else {} if compact else took
            news = any(r["kind"] != "scope" for r in records.changes(self.db, self.ops.owner_id, since, upto, skip))
        if not full and not out.get("pending") and not news:
            self._set_meta(OUT, {**out, "marks": upto})  # nothing of this store's own since its last file
            return
        key = self.key_for(epoch)
        if key is None:
            # Paired with a key that has moved past deletes this store has not taken in yet (the offering store
            # has not written its files here yet): nothing of this store's is written until it has caught up.
            return
        db = self.db
        grants = {sid: identity.seal_to(m["seal"], key, _grant_info(keys["chain"], epoch))
                  for sid, m in sorted(standing.members.items()) if sid != mine and standing.good(sid)}
        header = dumps({
            "format": FORMAT, "version": VERSION, "store": mine, "seq": seq, "epoch": epoch, "chain": keys["chain"],
            "base": full, "written_at": ids.now(), "grants": grants,
            "members": [m for m in identity.members(db).values() if m.get("by") == mine and m["store"] != mine],
            "revocations": [r for r in identity.revocations(db).values() if r["by"] == mine],
            "aliases": [a for a in identity.aliases(db) if a.get("store") == mine],
        }).encode()
        if len(header) > MAX_HEADER:
            raise Invalid(f"This store's list of paired stores no longer fits a change file's header ({MAX_HEADER} bytes).")
        target = own / f"{seq:08d}.pcs"
        # One snapshot of this store while its records are read (lazily: in `_seal`, inside `self.db.atomic`). While
        # it lasts no other writer's frames can be folded back, so the WAL grows by all they write: it is folded now,
        # so that the snapshot reads the database file alone and the next writer starts the WAL afresh, and the
        # records are compressed, sealed and written by another thread meanwhile, so the snapshot lasts the reading.
        fold_wal(self.db)
        recs = records.changes(self.db, self.ops.owner_id, since, upto, skip)
        _write_atomic(target, lambda fh: _seal(fh, header, ident, _file_key(key, mine, seq), recs, self.db.atomic))
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

    def _forget_old_keys(self, standing: Standing) -> None:
        """Move the oldest key kept up to the oldest epoch the stores in good standing still need, as their verified
        files say (an unverified header decides nothing)."""
        keys = self.keys()
        need = self.epoch()
        for sid in standing.members:
            if sid == self.ops.store_id or not standing.good(sid):
                continue
            row = self.db.execute_sql("SELECT epoch FROM sync_peer WHERE peer_id = ?", (f"{sid}@folder",)).fetchone()
            if row is not None and isinstance(row[0], int):
                need = min(need, row[0])
        if need > keys["epoch"]:
            new = _step(bytes.fromhex(keys["key"]), keys["epoch"], need)
            self._set_meta(KEYS, {**keys, "epoch": need, "key": new.hex()})


def _is_usr(value: Any) -> bool:
    return isinstance(value, str) and ids.id_kind(value) == "usr"


def _merge_aliases(mine: list[dict[str, Any]], theirs: Any) -> list[dict[str, Any]]:
    out = list(mine)
    for a in theirs if isinstance(theirs, list) else []:
        if isinstance(a, dict) and _is_usr(a.get("alias")) and not any(x["alias"] == a["alias"] for x in out):
            out.append({k: a.get(k) for k in ("alias", "owner", "store", "at")})
    return out


def _valid_offer(body: Any) -> bool:
    if not isinstance(body, dict) or not _is_usr(body.get("owner_id")):
        return False
    if not STORE_RE.match(str(body.get("store"))) or not isinstance(body.get("chain"), str):
        return False
    if not isinstance(body.get("epoch"), int) or not isinstance(body.get("key"), str) or len(body["key"]) != 64:
        return False
    members = body.get("members")
    if not isinstance(members, dict) or not all(identity.valid_member(m) and m["store"] == k for k, m in members.items()):
        return False
    revs = body.get("revocations")
    if not isinstance(revs, dict) or not all(identity.valid_revocation(r) and r["id"] == k for k, r in revs.items()):
        return False
    return all(isinstance(body.get(k, []), list) for k in ("aliases", "namespaces", "labels"))


def _offer_salt(path: Path) -> str:
    fh = _open_regular(path)
    if fh is None:
        raise Invalid(f"{path} went away while it was read; ask for a new code.")
    with fh:
        return str(json.loads(fh.readline(MAX_OFFER))["salt"])


def _open_small(path: Path, secret: bytes, what: bytes | None) -> dict[str, Any] | None:
    """An offer (what=b"offer": keyed by the code and the offer's salt) or a reply (what=None: `secret` is the key)
    opened: {"version", "body"}, or None for anything pcp did not write for this code."""
    fh = _open_regular(path)
    if fh is None:
        return None
    try:
        with fh:
            data = fh.read(MAX_OFFER + 1)
        if len(data) > MAX_OFFER:
            return None
        head, rest = data.split(b"\n", 1)
        header = loads(head, path.name)
        if not isinstance(header, dict) or not isinstance(header.get("version", 0), int):
            return None
        if header.get("version", 0) > VERSION:
            return {"version": header["version"], "body": None}
        key = _code_key(secret, bytes.fromhex(header["salt"])) if what is not None else secret
        body = loads(ChaCha20Poly1305(key).decrypt(rest[:12], rest[12:], head), path.name)
        if depth_of(body, MAX_DEPTH) > MAX_DEPTH:
            return None
    except (InvalidTag, ValueError, KeyError, TypeError, PcpError, OSError):
        return None
    return {"version": header["version"], "body": body}


def _check_header(path: Path, peer: str, seq: int, member: dict[str, Any]) -> tuple[dict[str, Any], bytes] | str:
    """Signature first: the header line is taken only when it verifies under the peer's listed key."""
    fh = _open_regular(path)
    if fh is None:
        return "not a regular file, or gone (retried next time)"
    with fh:
        try:
            line = fh.readline(MAX_HEADER + 1)
            sig_line = fh.readline(2 * SIG + 2)
        except OSError as exc:
            return f"cannot read it ({exc.strerror or exc}); retried next time"
    if not line.endswith(b"\n"):
        return "not a pcp change file, or half written (retried next time)"
    head = line[:-1]
    try:  # bounded (a header line is at most MAX_HEADER bytes, nesting refused), and refusing decides nothing
        header = loads(head, path.name)
    except (PcpError, ValueError, UnicodeDecodeError):
        return "not a pcp change file, or half written (retried next time)"
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        return "not a pcp change file, or half written (retried next time)"
    if not isinstance(header.get("version"), int) or header["version"] > VERSION:
        return f"written by a newer pcp (sync format {header.get('version')}, this one reads {VERSION}); upgrade pcp"
    if header["version"] < VERSION:
        return "written by an older pcp (sync format 1, no store signatures); upgrade pcp there and pair the stores again"
    try:
        signature = bytes.fromhex(sig_line.decode("ascii").strip()) if sig_line.endswith(b"\n") else b""
    except (UnicodeDecodeError, ValueError):
        signature = b""
    if len(signature) != SIG:
        return "not a pcp change file, or half written (retried next time)"
    if not identity.verify(member["sign"], signature, b"pcp sync header\n" + head):
        return f"not signed by store {peer}'s key (forged, damaged, or written by a store not paired with this one)"
    if depth_of(header, MAX_DEPTH) > MAX_DEPTH:
        return "not a pcp change file"
    if header.get("store") != peer or header.get("seq") != seq:
        return "its header does not match its place in the folder (moved or modified)"
    if not isinstance(header.get("epoch"), int) or header["epoch"] < 0 or not isinstance(header.get("chain"), str):
        return "its header names no key"
    return header, head


def _older_format(path: Path) -> bool:
    fh = _open_regular(path)
    if fh is None:
        return False
    with fh:
        try:
            head = loads(fh.readline(MAX_HEADER + 1), path.name)
        except (PcpError, ValueError, UnicodeDecodeError, OSError):
            return False
    return isinstance(head, dict) and head.get("format") == FORMAT and head.get("version") == 1


def _one_line(text: str) -> str:
    return " ".join(str(text).split())[:300]


def _file_key(key: bytes, store: str, seq: int) -> bytes:
    return _hkdf(key, f"pcp sync file {store} {seq}".encode())


def _open_regular(path: Path) -> BinaryIO | None:
    """The file opened for reading only if it is a regular file: never a FIFO (opened without blocking, so a
    FIFO named like a change file cannot hang a sync), a device, or a link."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            return None
        os.set_blocking(fd, True)
        return open(fd, "rb")
    except OSError:
        os.close(fd)
        return None


Opened = tuple[int, dict[str, Any], bytes, Path]  # seq, verified header, header line, file
CHUNK = 1 << 20  # bytes of JSON lines per sealed chunk: files of any size are written and read in flat memory
SEAL_AHEAD = 4  # chunks read ahead of the one being sealed (memory: a few CHUNKs)
# zlib's level for a change file's chunks: 3 compresses JSON lines 2.8x faster than 6, into 5 % more bytes (a
# store's own file is read under one snapshot of it, which lasts as long as the slower of reading and sealing)
ZLIB_LEVEL = 3


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


def _aad(head: bytes, index: int, last: bool) -> bytes:
    return head + b"\n" + index.to_bytes(8, "big") + (b"\x01" if last else b"\x00")


def _signed(head: bytes, index: int, last: bool, nonce: bytes, sealed: bytes) -> bytes:
    return b"pcp sync chunk\n" + _aad(head, index, last) + nonce + sealed


def _seal(fh: Any, head: bytes, ident: Identity, key: bytes, recs: Iterator[dict[str, Any]],
          reading: Callable[[], ContextManager[Any]] = contextlib.nullcontext) -> None:
    """Header line, its signature, then chunks [length][nonce][sealed zlib JSON lines][signature], each bound
    to its place and to whether it is the last (so a file cut at a chunk boundary does not open either).

    `recs` is read inside `reading()` (a store's snapshot), in this thread; the chunks are compressed, sealed and
    written in order by another thread (zlib and the cipher let go of the interpreter lock), at most SEAL_AHEAD
    behind, so the snapshot ends when the last record is read, not when the last chunk is written."""
    aead = ChaCha20Poly1305(key)
    fh.write(head + b"\n" + ident.sign(b"pcp sync header\n" + head).hex().encode() + b"\n")
    chunks: queue.Queue[tuple[bytes, bool] | None] = queue.Queue(maxsize=SEAL_AHEAD)
    failed: list[BaseException] = []

    def sealer() -> None:
        index = 0
        while (item := chunks.get()) is not None:
            if failed:
                continue  # (drained until the reader stops)
            data, last = item
            try:
                nonce = secrets.token_bytes(12)
                sealed = aead.encrypt(nonce, zlib.compress(data, ZLIB_LEVEL), _aad(head, index, last))
                fh.write(len(sealed).to_bytes(4, "big") + nonce + sealed
                         + ident.sign(_signed(head, index, last, nonce, sealed)))
            except BaseException as exc:  # (disk full): the reader stops at its next chunk and raises it
                failed.append(exc)
            index += 1

    thread = threading.Thread(target=sealer, name="pcp-sync-seal", daemon=True)
    thread.start()
    try:
        with reading():
            buf: list[bytes] = []
            size = 0
            for rec in recs:
                line = (dumps(rec) + "\n").encode("utf-8")
                if size and size + len(line) > CHUNK:
                    if failed:
                        break
                    chunks.put((b"".join(buf), False))
                    buf, size = [], 0
                buf.append(line)
                size += len(line)
            if not failed:
                chunks.put((b"".join(buf), True))
    except BaseException as exc:  # (^C, a read that failed): the chunks read ahead are not sealed, only drained
        failed.append(exc)
        raise
    finally:
        chunks.put(None)
        thread.join()
    if failed:
        raise failed[0]


def _inflate(data: bytes) -> bytes:
    """zlib, at most MAX_INFLATE bytes out (a small chunk can claim gigabytes)."""
    inflater = zlib.decompressobj()
    try:
        out = inflater.decompress(data, MAX_INFLATE)
    except zlib.error:
        raise _Refused("a chunk does not inflate (damaged)") from None
    if inflater.unconsumed_tail or not inflater.eof:
        raise _Refused(f"a chunk inflates to more than {MAX_INFLATE >> 20} MiB; nothing of it was applied")
    return out


def _records(path: Path, head: bytes, key: bytes, sign_pub: str,
             advance: Callable[[int], None] | None = None) -> Iterator[dict[str, Any]]:
    """The records of a change file whose header verified, a chunk at a time: each chunk's signature is checked
    before it is opened, it inflates within bounds, and every line is a bounded JSON object (else _Refused)."""
    fh = _open_regular(path)
    if fh is None:
        raise _Refused("not a regular file, or gone (retried next time)")
    aead = ChaCha20Poly1305(key)
    with fh:
        total = os.fstat(fh.fileno()).st_size
        if fh.readline(MAX_HEADER + 1) != head + b"\n":
            raise _Refused("changed while it was read; nothing of it was taken in (sync again)")
        fh.readline(2 * SIG + 2)
        index = 0
        while True:
            size = int.from_bytes(fh.read(4), "big")
            if size == 0 or size > MAX_SEALED:
                raise _Refused("does not authenticate: modified, damaged or half written")  # never read that much
            nonce = fh.read(12)
            sealed = fh.read(size)
            signature = fh.read(SIG)
            if len(nonce) != 12 or len(sealed) != size or len(signature) != SIG:
                raise _Refused("does not authenticate: modified, damaged or half written")
            last = fh.tell() >= total
            if not identity.verify(sign_pub, signature, _signed(head, index, last, nonce, sealed)):
                raise _Refused("a chunk is not signed by its store's key (modified, or forged with the folder key)")
            try:
                plain = aead.decrypt(nonce, sealed, _aad(head, index, last))
            except InvalidTag:
                raise _Refused("does not authenticate: modified, damaged or half written") from None
            chunk = _inflate(plain)
            for number, line in enumerate(_lines(chunk)):
                try:
                    rec = loads(line, f"record {number + 1} of chunk {index + 1}")
                except PcpError as exc:
                    raise _Refused(_one_line(exc.message)) from None
                except (ValueError, UnicodeDecodeError):
                    raise _Refused(f"record {number + 1} of chunk {index + 1} is not valid JSON") from None
                if not isinstance(rec, dict) or depth_of(rec, MAX_DEPTH) > MAX_DEPTH:
                    raise _Refused(f"record {number + 1} of chunk {index + 1} is not a record")
                yield rec
            if advance is not None:
                advance(16 + size + SIG)
            if last:
                return
            index += 1


_LINE = re.compile(rb"[^\n]+")


def _lines(chunk: bytes) -> Iterator[bytes]:
    """The non-empty lines of a chunk, one at a time (a chunk of 16 MiB of newlines makes no list of millions)."""
    for m in _LINE.finditer(chunk):
        yield m.group()


def _spans_minus(spans: dict[str, list[tuple[int, int]]],
                 less: dict[str, list[tuple[int, int]]]) -> dict[str, list[tuple[int, int]]]:
    """The rowid ranges (a, b] of `spans` not in `less`, per table."""
    out: dict[str, list[tuple[int, int]]] = {}
    for table, ranges in spans.items():
        cuts = sorted(less.get(table, []))
        kept: list[tuple[int, int]] = []
        for a, b in ranges:
            for c, d in cuts:
                if d <= a or c >= b:
                    continue
                if c > a:
                    kept.append((a, c))
                a = max(a, d)
                if a >= b:
                    break
            if a < b:
                kept.append((a, b))
        if kept:
            out[table] = kept
    return out


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
