"""The Store's foundation: opening, sessions, one transaction and one audit event per operation."""

from __future__ import annotations

import contextlib
import functools
import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Concatenate, Iterator, ParamSpec, TypeVar

import peewee as pw

from . import ids, paths
from .access import AccessSession
from .bulkwrite import INSERTS
from .constants import LIMITS as LIMITS  # re-exported: the limits live in store/constants.py
from .db import install_schema, make_models, open_database
from .errors import Conflict, Forbidden, Invalid, PcpError, not_found
from .names import SkeletonIndex
from .owners import owner_ids
from .types import Scope as ScopeInfo

P = ParamSpec("P")
R = TypeVar("R")
Row = TypeVar("Row")
S = TypeVar("S", bound="Part")


def default_path() -> Path:
    """$PCP_DB, else <user data dir>/pcp/context.db."""
    return paths.chosen_path(None)


AUDIT_SQL = INSERTS["audit_event"]
# json.dumps with these options would build an encoder on every call; one encoder serves them all.
_ENCODER = json.JSONEncoder(ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def dumps(value: Any) -> str:
    """Compact, deterministic JSON for stored columns."""
    return _ENCODER.encode(value)


def named_rows(cursor: Any, row: Callable[..., Row]) -> list[Row]:
    """The rows of an executed SELECT as `row` (a NamedTuple whose fields are the SELECT's column names).

    The column names are checked against the fields, so a SELECT list and its row type cannot
    drift apart silently (name a computed or repeated column with AS).
    """
    names = tuple(d[0] for d in cursor.description or ())
    fields: tuple[str, ...] = getattr(row, "_fields")  # noqa: B009 (a NamedTuple class, typed as its constructor)
    if names != fields:
        raise TypeError(f"SELECT columns {names} do not match the row fields {fields}.")
    return [row(*r) for r in cursor.fetchall()]


@dataclass
class Call:
    """What one operation touched, for its audit event (metadata only, never content or query text)."""

    operation: str
    scopes: set[str] = field(default_factory=set)
    counts: dict[str, int] = field(default_factory=dict)
    receipt_id: str | None = None  # the deletion receipt this event belongs to (bulk deletion links its events)


def operation(
    name: str, *, write: bool = False, always_audit: bool = False,
) -> Callable[[Callable[Concatenate[S, Call, P], R]], Callable[Concatenate[S, P], R]]:
    """Run a part's method in one transaction and record its audit event.

    The method takes the `Call` it records into as its first argument after `self`; the
    decorated method does not (callers never pass it).

    Writes take the write lock up front (BEGIN IMMEDIATE) so two processes queue on the
    busy timeout instead of failing to upgrade a read lock. An allowed mutation's audit
    event commits with it; a denied or failed call writes only its audit event, in a
    transaction of its own.
    """

    def decorate(fn: Callable[Concatenate[S, Call, P], R]) -> Callable[Concatenate[S, P], R]:
        @functools.wraps(fn)
        def wrapper(self: S, /, *args: P.args, **kwargs: P.kwargs) -> R:
            call = Call(name)
            started = time.perf_counter()
            with self._failures_audited(call, started):
                settle_erasures(self._db)
                if write:
                    with self._db.atomic("IMMEDIATE"):
                        result = fn(self, call, *args, **kwargs)
                        self._append_audit(call, "allowed", started)
                else:
                    with self._db.atomic():
                        result = fn(self, call, *args, **kwargs)
                    if always_audit or not self.session.is_owner:
                        with self._db.atomic("IMMEDIATE"):
                            self._append_audit(call, "allowed", started)
                return result

        return wrapper

    return decorate


WAL_PENDING_KEY = "wal_erasure_pending"  # meta: JSON list of receipt ids whose erased text may remain in the WAL


def truncate_wal(db: pw.SqliteDatabase) -> bool:
    """Fold the WAL into the database and truncate it, without waiting: False while a reader holds a snapshot.

    The checkpoint runs with no busy wait, so it never holds other writers up (pcp-core.md section 6).
    """
    if db.in_transaction():
        return False
    (timeout,) = db.execute_sql("PRAGMA busy_timeout").fetchone()
    db.execute_sql("PRAGMA busy_timeout = 0")
    try:
        busy, log, done = db.execute_sql("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    except pw.OperationalError:  # another connection holds the write lock right now
        return False
    finally:
        db.execute_sql(f"PRAGMA busy_timeout = {int(timeout)}")
    return bool(busy == 0 and log == done)


def pending_erasures(db: pw.SqliteDatabase) -> list[str]:
    """Receipt ids whose erased text may still be in the WAL (a reader held a snapshot at delete time)."""
    row = db.execute_sql("SELECT value FROM meta WHERE key = ?", (WAL_PENDING_KEY,)).fetchone()
    return list(json.loads(row[0])) if row else []


def settle_erasures(db: pw.SqliteDatabase) -> None:
    """Finish a pending WAL erasure once no reader needs the old snapshot (called before every operation)."""
    if db.in_transaction() or not pending_erasures(db) or not truncate_wal(db):
        return
    with db.atomic("IMMEDIATE"):
        db.execute_sql("DELETE FROM meta WHERE key = ?", (WAL_PENDING_KEY,))
    truncate_wal(db)  # and leave the WAL empty again after that small write


def _storage_error(exc: Exception) -> PcpError:
    text = str(exc)
    # SQLite rolls back by itself when the disk fills, so the error that surfaces is often the failed
    # rollback after it ("cannot rollback - no transaction is active"): look at what it was handling.
    seen: BaseException | None = exc
    while seen is not None:
        if "disk is full" in str(seen):
            return Invalid("The disk is full and nothing was written; free some space and try again.")
        seen = seen.__context__
    if "locked" in text or "busy" in text:
        return Conflict("The store is busy with another writer; try again in a moment.")
    if "readonly" in text or "read-only" in text:
        return Invalid("The store file is read-only; make it writable or choose another with --db.")
    return Invalid(f"The store could not complete the operation ({text}).")


@dataclass
class StoreContext:
    """What every part of a Store works on: one database, its models, the calling session and the owner."""

    db: pw.SqliteDatabase
    models: Any
    path: Path
    session: AccessSession
    owner_id: str
    index_salt: bytes
    skeletons: SkeletonIndex = field(default_factory=SkeletonIndex)  # of the scopes, for look-alike names


def open_context(path: str | os.PathLike[str] | None = None, session: AccessSession | None = None,
                 migrate: bool = True, create: bool = True) -> StoreContext:
    """Open the store at `path` (default: $PCP_DB or the user data dir), creating it when missing if `create`.

    migrate=False refuses (Conflict) a store whose schema is older instead of migrating it."""
    target = Path(path).expanduser() if path is not None else default_path()
    db = open_database(target, create)
    models = make_models(db)
    try:
        install_schema(db, models, migrate)
        owner_id, salt = _ensure_owner(db, models)
    except PcpError:
        db.close()
        raise
    except pw.OperationalError as exc:
        db.close()
        raise _storage_error(exc) from None
    except pw.DatabaseError as exc:
        db.close()
        raise Invalid(f"{target} is not a pcp store or is damaged ({exc}).") from None
    return StoreContext(db, models, target, session or AccessSession.owner(), owner_id, salt)


def _ensure_owner(db: pw.SqliteDatabase, models: Any) -> tuple[str, bytes]:
    """The store's owner id and full-text index salt, minted once at creation."""
    def read() -> dict[str, str]:
        rows = models.Meta.select().where(models.Meta.key.in_(["owner_id", "index_salt"]))
        return {r.key: r.value for r in rows}

    found = read()
    if len(found) < 2:
        with db.atomic("IMMEDIATE"):
            found = read()
            if "owner_id" not in found:
                models.Meta.create(key="owner_id", value=ids.new_id("usr"))
                models.Meta.create(key="created_at", value=ids.now())
            if "index_salt" not in found:
                models.Meta.create(key="index_salt", value=os.urandom(16).hex())
            found = read()
    return found["owner_id"], bytes.fromhex(found["index_salt"])


class Part:
    """One area of the store's operations, over the shared context.

    The attributes every operation body uses (`_db`, `_m`, `session`, `owner_id`, `_salt`,
    `path`) read the context, so all parts of one Store see the same owner even after an
    import adopts another. Parts that need another part get it in their constructor.
    """

    def __init__(self, ctx: StoreContext) -> None:
        self.ctx = ctx

    @property
    def _db(self) -> pw.SqliteDatabase:
        return self.ctx.db

    @property
    def _m(self) -> Any:
        return self.ctx.models

    @property
    def path(self) -> Path:
        return self.ctx.path

    @property
    def session(self) -> AccessSession:
        return self.ctx.session

    @property
    def owner_id(self) -> str:
        return self.ctx.owner_id

    @owner_id.setter
    def owner_id(self, value: str) -> None:
        self.ctx.owner_id = value

    @property
    def _salt(self) -> bytes:
        return self.ctx.index_salt

    def _owner_ids(self) -> set[str]:
        """The owner's ids: this store's and those of stores that joined with their history (pcp-core section 2)."""
        return owner_ids(self._db, self.owner_id)

    # --- audit ---

    def _append_audit(self, call: Call, decision: str, started: float, error_code: str | None = None) -> None:
        self._db.execute_sql(AUDIT_SQL, self._audit_row(call, decision, started, error_code))

    def _audit_row(self, call: Call, decision: str, started: float, error_code: str | None = None) -> tuple[Any, ...]:
        """The audit event of `call` as it stands now (AUDIT_SQL's values)."""
        return (ids.new_id("evt"), ids.now(), self.session.principal_type, self.session.principal_id, call.operation,
                dumps(sorted(call.scopes)), decision, dumps(call.counts),
                round((time.perf_counter() - started) * 1000, 3), error_code, call.receipt_id)

    @contextlib.contextmanager
    def _failures_audited(self, call: Call, started: float, into: list[tuple[Any, ...]] | None = None) -> Iterator[None]:
        """Turn storage errors into contract errors and record every failed or denied call (with `into`, its audit
        row is put there for the caller to write, not written)."""
        try:
            yield
        except PcpError as exc:
            self._audit_failure(call, exc, started, into)
            raise
        except pw.OperationalError as exc:
            err = _storage_error(exc)
            self._audit_failure(call, err, started, into)
            raise err from None
        except pw.DatabaseError as exc:
            raise Invalid(f"The store file {self.path} is damaged or not a pcp store ({exc}).") from None

    def _audit_failure(self, call: Call, exc: PcpError, started: float,
                       into: list[tuple[Any, ...]] | None = None) -> None:
        decision = "denied" if exc.code == "forbidden" else "failed"
        if into is not None:
            into.append(self._audit_row(call, decision, started, exc.code))
            return
        try:
            with self._db.atomic("IMMEDIATE"):
                self._append_audit(call, decision, started, exc.code)
        except pw.DatabaseError:
            pass  # the store cannot record; the caller still gets the original error

    # --- access helpers used by every operation group ---

    def _require(self, call: Call, permission: str, namespace: str) -> None:
        call.scopes.add(namespace)
        if not self.session.allows(permission, namespace):
            raise Forbidden(f"This session may not {permission.replace('_', ' ')} in scope {namespace}.")

    def _require_somewhere(self, permission: str) -> None:
        if not self.session.may_anywhere(permission):
            raise Forbidden(f"This session has no {permission.replace('_', ' ')} permission.")

    def _scope_filter(self, permission: str, column: str = "s.namespace") -> tuple[str, list[Any]]:
        return self.session.namespace_filter(permission, column)

    def _named_scopes(self, call: Call, scopes: Any, permission: str) -> list[str]:
        """Explicitly named scopes must all be granted (forbidden otherwise, never a silent filter)."""
        if scopes is None:
            return []
        if isinstance(scopes, str):
            scopes = [scopes]
        names = [str(s) for s in scopes if str(s).strip()]
        for ns in names:
            self._require(call, permission, ns)
        return names

    def _page_row(self, page_id: str, call: Call, need: str = "read") -> Any:
        """The page if this session may see it (same not_found otherwise) and holds `need` there."""
        m = self._m
        if ids.id_kind(page_id) == "rev":
            rev = m.Revision.select(m.Revision.page).where(m.Revision.revision_id == page_id).first()
            page_key = rev.page_id if rev is not None else None
            query = m.Page.select(m.Page, m.Scope).join(m.Scope).where(m.Page.id == page_key)
        elif ids.id_kind(page_id) == "pg":
            query = m.Page.select(m.Page, m.Scope).join(m.Scope).where(m.Page.page_id == page_id)
        else:
            raise not_found("page", page_id)
        page = query.first()
        if page is None:
            raise not_found("page", page_id)
        ns = page.scope.namespace
        visible = self.session.allows("read", ns) or self.session.allows(need, ns)
        if page.status == "tombstoned" and not self.session.allows("audit", ns):
            visible = False
        if not visible:
            raise not_found("page", page_id)
        call.scopes.add(ns)
        if not self.session.allows(need, ns):
            raise Forbidden(f"This session may not {need.replace('_', ' ')} in scope {ns}.")
        return page

    def _scope_dict(self, scope: Any, page_count: int, last_activity: str | None,
                    owners: set[str] | None = None) -> ScopeInfo:
        """A scope as listed; a row that keeps an aliased owner id is shown as the owner's, as hits and revisions
        are (one owner, pcp-core section 2: no session, a model's least, sees the alias)."""
        owner = scope.owner_id
        if owner != self.owner_id and owner in (self._owner_ids() if owners is None else owners):
            owner = self.owner_id
        return {
            "namespace": scope.namespace,
            "display_name": scope.display_name,
            "description": scope.description,
            "parent": scope.parent,
            "visibility": scope.visibility,
            "owner_id": owner,
            "permissions": sorted(self.session.permissions_in(scope.namespace)),
            "page_count": page_count,
            "last_activity": last_activity,
        }

    def _resolve_revision(self, ident: str, call: Call) -> tuple[Any, Any]:
        """(page, revision) for a page id (its head) or a revision id, if visible to this session."""
        m = self._m
        page = self._page_row(ident, call, "read")
        if ids.id_kind(ident) == "rev":
            rev = m.Revision.get(m.Revision.revision_id == ident)
        else:
            rev = m.Revision.get_by_id(page.head)
        return page, rev

    def _context_key(self, context_id: str) -> str:
        """A suppression context as stored and matched: a model client's contexts are its own.

        The owner's context ids are kept verbatim; any other principal's are qualified by its
        identity, so no client can hide pages from another client's or the owner's searches.
        """
        if self.session.is_owner:
            return context_id
        return f"{self.session.principal_type}:{json.dumps(self.session.principal_id)}/{context_id}"

    def _scope_row(self, namespace: str) -> Any:
        return self._m.Scope.get_or_none(self._m.Scope.namespace == namespace)
