"""Each store its own identity (issue 30): an Ed25519 key pair that signs its change files and an X25519 key
pair that new folder keys are sealed to, and the owner's list of stores (who is paired, who unpaired whom).

The list lives in the store's meta table:
- `sync_identity`: this store's two private keys (a copy of the store file holds them: a stolen backup is a
  lost machine, and `--unpair` is the answer to both);
- `sync_members`: store id -> {sign, seal (public keys, hex), by (the store whose pairing code it joined with,
  itself for the first one), lifts (revocations of it its new join lifted)};
- `sync_revocations`: id -> {by, target, seen (the revocation ids its signer knew), keep (a confirmation:
  the store kept in a dispute), at}.

A store takes a member, revocation or confirmation from a change file only when the file verified under its
signer's listed key and the record is the signer's own (`by` is the signer): no store speaks for another.

Standing, from the list alone (so every store that holds the same list reaches the same answer):
- an unpairing signed by a store that is itself unpaired (by a third store) stands only if that third store
  knew of it when it unpaired the signer; what the signer claims to have known decides nothing;
- two stores that unpaired each other are a dispute: both are held until a confirmation (an unpairing made
  while the dispute is shown) names the lost one, a third store's outweighing the two disputants';
- a join lifts the unpairings its introducer knew of; the stores a revoked store introduced go with it, but
  for the stores that unpaired it.
"""

from __future__ import annotations

import json
import secrets
from typing import Any

from cryptography.exceptions import InvalidSignature, InvalidTag
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from ..core import dumps
from ..owners import ALIASES, aliases, owner_ids

IDENTITY = "sync_identity"
MEMBERS = "sync_members"
REVOCATIONS = "sync_revocations"
MAX_MEMBERS = 256  # stores on one folder: the header that lists them stays small and bounded
_RAW = serialization.Encoding.Raw
_PRIV = serialization.PrivateFormat.Raw
_PUB = serialization.PublicFormat.Raw
_NONE = serialization.NoEncryption()


def _meta(db: Any, key: str, default: Any) -> Any:
    row = db.execute_sql("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return json.loads(row[0]) if row else default


def _set_meta(db: Any, key: str, value: Any) -> None:
    db.execute_sql("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, dumps(value)))


class Identity:
    """This store's private keys (minted once, at its first pairing or sync)."""

    def __init__(self, db: Any) -> None:
        found = _meta(db, IDENTITY, None)
        if found is None:
            found = {"sign": Ed25519PrivateKey.generate().private_bytes(_RAW, _PRIV, _NONE).hex(),
                     "seal": X25519PrivateKey.generate().private_bytes(_RAW, _PRIV, _NONE).hex()}
            with db.atomic("IMMEDIATE"):
                if _meta(db, IDENTITY, None) is None:
                    _set_meta(db, IDENTITY, found)
            found = _meta(db, IDENTITY, found)
        self._sign = Ed25519PrivateKey.from_private_bytes(bytes.fromhex(found["sign"]))
        self._seal = X25519PrivateKey.from_private_bytes(bytes.fromhex(found["seal"]))
        self.sign_pub = self._sign.public_key().public_bytes(_RAW, _PUB).hex()
        self.seal_pub = self._seal.public_key().public_bytes(_RAW, _PUB).hex()

    def sign(self, data: bytes) -> bytes:
        return self._sign.sign(data)

    def unseal(self, blob_hex: Any, info: bytes) -> bytes | None:
        """A key sealed to this store (seal_to), or None when it is not (or is damaged)."""
        try:
            blob = bytes.fromhex(blob_hex)
            eph = X25519PublicKey.from_public_bytes(blob[:32])
            key = _hkdf(self._seal.exchange(eph), info + blob[:32])
            return ChaCha20Poly1305(key).decrypt(blob[32:44], blob[44:], info)
        except (ValueError, TypeError, InvalidTag):
            return None


def seal_to(seal_pub_hex: str, secret: bytes, info: bytes) -> str:
    """`secret` sealed to one store's X25519 key (an ephemeral key pair, HKDF, ChaCha20-Poly1305), as hex."""
    eph = X25519PrivateKey.generate()
    eph_pub = eph.public_key().public_bytes(_RAW, _PUB)
    key = _hkdf(eph.exchange(X25519PublicKey.from_public_bytes(bytes.fromhex(seal_pub_hex))), info + eph_pub)
    nonce = secrets.token_bytes(12)
    return (eph_pub + nonce + ChaCha20Poly1305(key).encrypt(nonce, secret, info)).hex()


def verify(sign_pub_hex: str, signature: bytes, data: bytes) -> bool:
    try:
        Ed25519PublicKey.from_public_bytes(bytes.fromhex(sign_pub_hex)).verify(signature, data)
    except (InvalidSignature, ValueError, TypeError):
        return False
    return True


def _hkdf(key: bytes, info: bytes) -> bytes:
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=info).derive(key)


# --- the list of stores ---


def members(db: Any) -> dict[str, dict[str, Any]]:
    return dict(_meta(db, MEMBERS, {}))


def revocations(db: Any) -> dict[str, dict[str, Any]]:
    return dict(_meta(db, REVOCATIONS, {}))


def save(db: Any, found_members: dict[str, Any] | None = None, found_revs: dict[str, Any] | None = None,
         found_aliases: list[dict[str, Any]] | None = None) -> None:
    """Write the list (inside the caller's transaction)."""
    if found_members is not None:
        _set_meta(db, MEMBERS, found_members)
    if found_revs is not None:
        _set_meta(db, REVOCATIONS, found_revs)
    if found_aliases is not None:
        _set_meta(db, ALIASES, found_aliases)


def valid_member(rec: Any) -> bool:
    return (isinstance(rec, dict) and _is_hex(rec.get("sign"), 32) and _is_hex(rec.get("seal"), 32)
            and isinstance(rec.get("store"), str) and isinstance(rec.get("by"), str)
            and isinstance(rec.get("lifts", []), list) and all(isinstance(x, str) for x in rec.get("lifts", [])))


def valid_revocation(rec: Any) -> bool:
    keep = rec.get("keep") if isinstance(rec, dict) else None
    return (isinstance(rec, dict) and all(isinstance(rec.get(k), str) for k in ("id", "by", "target"))
            and isinstance(rec.get("seen", []), list) and all(isinstance(x, str) for x in rec.get("seen", []))
            and (keep is None or (isinstance(keep, str) and keep != rec["target"])))


def _is_hex(value: Any, n: int) -> bool:
    if not isinstance(value, str) or len(value) != 2 * n:
        return False
    try:
        bytes.fromhex(value)
    except ValueError:
        return False
    return True


class Standing:
    """Who is in good standing, computed from the list: revoked stores, and disputes (two stores that
    revoked each other, until the owner confirms which one is lost)."""

    def __init__(self, found_members: dict[str, dict[str, Any]], found_revs: dict[str, dict[str, Any]]) -> None:
        self.members = found_members
        self.revs = found_revs
        # A join lifts the revocations its introducer knew of, unless the introducer is itself revoked.
        lifts = {sid: set(m.get("lifts", [])) for sid, m in found_members.items() if m.get("by") != sid}
        lifted = set().union(*lifts.values()) if lifts else set()
        for _ in range(len(found_members) + 1):
            revoked, disputes = self._compute(lifted)
            now = set().union(*(v for sid, v in lifts.items() if found_members[sid].get("by") not in revoked)) \
                if lifts else set()
            if now == lifted:
                break
            lifted = now
        self.revoked = revoked
        self.disputes = disputes
        self.disputed = {s for pair in disputes for s in pair}

    def _compute(self, lifted: set[str]) -> tuple[set[str], list[tuple[str, str]]]:
        revokes = {k: r for k, r in self.revs.items() if r.get("keep") is None and k not in lifted}
        confirms = [r for r in self.revs.values() if r.get("keep") is not None]
        memo: dict[str, bool] = {}

        def void(rid: str, stack: frozenset[str]) -> bool:
            """Signed by a store that is itself unpaired (by a third store, in a revocation that stands), and the
            store that unpaired it did not know of it then (its `seen`): made after, or in the dark. What the signer
            claims to have known decides nothing (a lost machine's `seen` is whatever it writes)."""
            if rid in memo:
                return memo[rid]
            if rid in stack:
                return False
            r = revokes[rid]
            against = [k for k, s in revokes.items() if k != rid and s["target"] == r["by"] and s["by"] != r["target"]]
            standing = [k for k in against if not void(k, stack | {rid})]
            out = bool(standing) and not any(rid in revokes[k].get("seen", []) for k in standing)
            memo[rid] = out
            return out

        active = [r for k, r in revokes.items() if not void(k, frozenset())]
        pairs = {(r["by"], r["target"]) for r in active}
        disputes: list[tuple[str, str]] = []
        revoked: set[str] = set()
        for by, target in sorted(pairs):
            if (target, by) not in pairs:
                revoked.add(target)
            elif by < target:
                settled = _settle(by, target, confirms)
                if settled is None:
                    disputes.append((by, target))
                else:
                    revoked.add(settled)
        # The stores paired with a revoked store's codes go with it (a lost machine can pair a store of its own),
        # all but the stores that revoked it.
        revokers = {r["by"] for r in active}
        changed = True
        while changed:
            changed = False
            for sid, m in self.members.items():
                if sid not in revoked and m.get("by") in revoked and m.get("by") != sid and sid not in revokers:
                    revoked.add(sid)
                    changed = True
        return revoked, disputes

    def good(self, store: str) -> bool:
        return store in self.members and store not in self.revoked and store not in self.disputed


def _settle(a: str, b: str, confirms: list[dict[str, Any]]) -> str | None:
    """The store of a dispute the owner confirmed as lost (None while unconfirmed or contradicted); a
    confirmation from a third store outweighs the two disputing ones', a later one an earlier one it saw."""
    found = [c for c in confirms if {c["keep"], c["target"]} == {a, b}]
    pool = [c for c in found if c["by"] not in (a, b)] or found
    latest = [c for c in pool if not any(c["id"] in o.get("seen", []) for o in pool if o is not c)]
    verdicts = {c["target"] for c in latest}
    return verdicts.pop() if len(verdicts) == 1 else None


__all__ = ["Identity", "Standing", "aliases", "members", "owner_ids", "revocations", "save", "seal_to", "verify"]
