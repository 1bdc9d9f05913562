"""The SQLite schema (Peewee models, private to store/), connection settings and migrations.

Long because: the Peewee models and the migrations that change them are read together (one schema, its versions)."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from types import SimpleNamespace
from contextlib import contextmanager
from typing import Any, Callable, Iterator

import peewee as pw

from . import crypt, index, scope_titles
from .cipher_db import CipherDatabase
from .errors import Conflict, Invalid
from .files import make_private_dirs, make_private_file, narrow, store_files
from .paths import require_store
from . import stops

try:
    import fcntl
except ImportError:  # Windows: no announcement; a bulk write lets the lock go after every group instead
    fcntl = None  # type: ignore[assignment]

SCHEMA_VERSION = 9
UPGRADE_HINT = index.UPGRADE_HINT
MIN_SQLITE = (3, 43, 0)  # FTS5 contentless_delete (3.43) and secure-delete (3.42)

PRAGMAS = (
    ("journal_mode", "wal"),
    ("foreign_keys", 1),
    ("busy_timeout", 60_000),
    ("secure_delete", 1),  # overwrite deleted content in freed pages (pcp-core.md section 6)
    ("synchronous", "normal"),
    ("cache_size", -32_000),
    ("temp_store", "memory"),
    # Reads map the file instead of copying each page through read(): a search at a million pages looks up
    # thousands of revision and page rows, and that took 40 % less time mapped. Only reads are mapped
    # (SQLite writes with write()), so erasure and the WAL are as before; a store larger than this is read
    # through the map up to this size and by read() beyond it.
    ("mmap_size", 1 << 31),
)

# SQLCipher serves no memory-mapped reads of an encrypted file: decrypted pages live in SQLite's page cache
# instead, so an encrypted store's cache may grow to 256 MB (bench/store_bench.py --encrypted, 100,000 pages:
# question p95 2.7x plain with 32 MB, 1.7x with 256 MB). It grows only as pages are read.
ENCRYPTED_CACHE_KB = 262_144
ENCRYPTED_PRAGMAS = tuple((name, -ENCRYPTED_CACHE_KB if name == "cache_size" else value) for name, value in PRAGMAS)

# Revisions are immutable: the database itself refuses to update one.
IMMUTABLE_TRIGGER = (
    "CREATE TRIGGER IF NOT EXISTS revision_immutable BEFORE UPDATE ON revision "
    "BEGIN SELECT RAISE(ABORT, 'revisions are immutable'); END"
)


def make_models(db: pw.Database) -> SimpleNamespace:
    """Model classes bound to one database (each Store has its own)."""

    class Base(pw.Model):
        class Meta:
            database = db
            legacy_table_names = False

    class Meta(Base):
        key = pw.TextField(primary_key=True)
        value = pw.TextField()

    class Scope(Base):
        namespace = pw.TextField(unique=True)
        owner_id = pw.TextField()
        visibility = pw.TextField(default="private")
        display_name = pw.TextField()
        description = pw.TextField(null=True)
        parent = pw.TextField(null=True, index=True)
        created_at = pw.TextField()
        updated_at = pw.TextField()

    class Page(Base):
        page_id = pw.TextField(unique=True)
        scope = pw.ForeignKeyField(Scope, on_delete="RESTRICT", index=False)  # led by the composite indexes
        head = pw.IntegerField(null=True)  # revision.id of the head
        head_revision_id = pw.TextField(null=True)
        status = pw.TextField(default="active")  # latest lifecycle event: active|archived|tombstoned
        superseded = pw.IntegerField(default=0)  # live `supersedes` relations pointing here
        title = pw.TextField(default="")
        media_type = pw.TextField(null=True)
        actor_type = pw.TextField()
        created_at = pw.TextField()
        updated_at = pw.TextField()
        sort_time = pw.TextField()  # head's observed_at, else created_at

        class Meta:
            indexes = (
                (("scope", "status", "sort_time"), False),
                (("status", "sort_time"), False),
            )  # and TITLE_INDEX (a collation Peewee's index tuples cannot name), RANK_INDEXES

    class Revision(Base):
        revision_id = pw.TextField(unique=True)
        page = pw.ForeignKeyField(Page, on_delete="CASCADE", index=False)  # (page, seq) leads with it
        seq = pw.IntegerField()
        previous_revision_id = pw.TextField(null=True)
        scope = pw.ForeignKeyField(Scope, on_delete="RESTRICT", index=False)
        created_at = pw.TextField()
        observed_at = pw.TextField(null=True)
        valid_from = pw.TextField(null=True)
        valid_to = pw.TextField(null=True)
        actor_type = pw.TextField()
        actor_id = pw.TextField()
        media_type = pw.TextField(null=True)
        content = pw.TextField(null=True)
        content_digest = pw.TextField(null=True)
        title = pw.TextField(default="")
        facets = pw.TextField(default="{}")
        source_refs = pw.TextField(default="[]")
        provenance = pw.TextField(default="[]")

        class Meta:
            indexes = ((("page", "seq"), True),)

    class ProvenanceInput(Base):
        revision = pw.ForeignKeyField(Revision, on_delete="CASCADE")
        page = pw.ForeignKeyField(Page, on_delete="CASCADE")  # the page of `revision`
        input_revision_id = pw.TextField(index=True)
        input_page = pw.IntegerField(null=True, index=True)  # page.id of the input, if known

    class Relation(Base):
        relation_id = pw.TextField(unique=True)
        relation_type = pw.TextField()
        from_page = pw.ForeignKeyField(Page, on_delete="CASCADE", backref="outgoing")
        from_revision_id = pw.TextField()
        to_page = pw.ForeignKeyField(Page, on_delete="CASCADE", backref="incoming")
        to_revision_id = pw.TextField()
        created_at = pw.TextField()
        actor_type = pw.TextField()
        actor_id = pw.TextField()
        retracted = pw.IntegerField(default=0)

        class Meta:
            indexes = ((("from_page", "relation_type"), False), (("to_page", "relation_type"), False))

    class Retraction(Base):
        event_id = pw.TextField(unique=True)
        relation = pw.ForeignKeyField(Relation, on_delete="CASCADE", unique=True)
        actor_type = pw.TextField()
        actor_id = pw.TextField()
        reason = pw.TextField()
        created_at = pw.TextField()

    class LifecycleEvent(Base):
        event_id = pw.TextField(unique=True)
        page = pw.ForeignKeyField(Page, on_delete="CASCADE")
        from_status = pw.TextField()
        to_status = pw.TextField()
        actor_type = pw.TextField()
        actor_id = pw.TextField()
        reason = pw.TextField()
        created_at = pw.TextField()

    class Suppression(Base):
        page = pw.ForeignKeyField(Page, on_delete="CASCADE")
        context_id = pw.TextField()
        reason = pw.TextField(null=True)
        expires_at = pw.TextField(null=True)
        actor_type = pw.TextField()
        actor_id = pw.TextField()
        created_at = pw.TextField()

        class Meta:
            indexes = ((("context_id", "page"), True),)

    class Recommendation(Base):
        recommendation_id = pw.TextField(unique=True)
        page = pw.ForeignKeyField(Page, on_delete="CASCADE")
        action = pw.TextField(default="tombstone")
        reason = pw.TextField()
        actor_type = pw.TextField()
        actor_id = pw.TextField()
        status = pw.TextField(default="pending")
        created_at = pw.TextField()

    class Idempotency(Base):
        principal = pw.TextField()
        operation = pw.TextField()
        key = pw.TextField()
        body_digest = pw.TextField()
        result = pw.TextField()
        page = pw.ForeignKeyField(Page, null=True, on_delete="CASCADE")
        created_at = pw.TextField()

        class Meta:
            indexes = ((("principal", "operation", "key"), True),)

    class SourcePage(Base):
        """Adapters find their pages by source id (e.g. chatgpt:<conversation>:<message>), never by similarity."""

        source_key = pw.TextField(primary_key=True)
        page = pw.ForeignKeyField(Page, on_delete="CASCADE")
        body_digest = pw.TextField()

    class ExportRecord(Base):
        path = pw.TextField()
        format = pw.TextField()
        scopes = pw.TextField()  # JSON list of namespaces, or null for everything
        created_at = pw.TextField()

    class DeletionReceipt(Base):
        receipt_id = pw.TextField(unique=True)
        namespace = pw.TextField(null=True)
        page_ids = pw.TextField()
        revision_ids = pw.TextField()
        counts = pw.TextField()
        actor_type = pw.TextField()
        actor_id = pw.TextField()
        reason = pw.TextField()
        created_at = pw.TextField()

    class DeletedRevision(Base):
        revision_id = pw.TextField(primary_key=True)
        page_id = pw.TextField(index=True)
        receipt_id = pw.TextField()

    class Handoff(Base):
        """One copy handed to a chat (handoff.md): the body's ctxpack pack, its delta from the previous copy."""

        handoff_id = pw.TextField(unique=True)
        label = pw.TextField()
        created_at = pw.TextField()
        kind = pw.TextField()  # bundle | continuation
        digest = pw.TextField(index=True)  # of the body as copied (a later erasure does not change it)
        continuation_of = pw.TextField(null=True)  # digest of the previous body in this chat
        previous = pw.IntegerField(null=True)  # handoff.id of that previous copy
        first_handed_at = pw.TextField()  # the preamble's date, the same for the whole chat
        preamble_bytes = pw.IntegerField()
        base_entries = pw.IntegerField(default=0)  # entries of the body that earlier copies carried
        header = pw.TextField(default="[]")  # a continuation's disregard notes (JSON)
        new_scopes = pw.TextField(default="[]")  # scopes a continuation named as new (JSON)
        scopes = pw.TextField(default="[]")  # every scope the chat has been told of (JSON)
        pack = pw.TextField()  # canonical ctxpack pack of the body
        delta = pw.TextField(null=True)  # ctxpack delta from the previous copy's pack
        bytes = pw.IntegerField()  # of the copied text
        tokens = pw.IntegerField()
        file = pw.TextField()
        clipboard = pw.TextField()

        class Meta:
            indexes = ((("label", "id"), False),)

    class HandoffEntry(Base):
        """Every entry of a copy's full body; `new` marks those its copied text carried."""

        handoff = pw.ForeignKeyField(Handoff, on_delete="CASCADE")
        n = pw.IntegerField()
        page_id = pw.TextField(null=True, index=True)  # None once erased
        revision_id = pw.TextField(null=True, index=True)
        namespace = pw.TextField(null=True)
        status = pw.TextField(null=True)  # lifecycle status when copied
        at_head = pw.IntegerField(default=1)  # copied as the page's head (a revised head replaces it)
        detail = pw.TextField()  # payload | excerpt | summary | reference | erased
        bytes = pw.IntegerField()  # of the entry block in the body
        tokens = pw.IntegerField()
        new = pw.IntegerField(default=1)
        live = pw.IntegerField(default=1)  # 0 once a continuation told the chat to disregard it

        class Meta:
            indexes = ((("handoff", "n"), True),)

    class AuditEvent(Base):
        event_id = pw.TextField(unique=True)
        time = pw.TextField()
        principal_type = pw.TextField()
        principal_id = pw.TextField()
        operation = pw.TextField()
        scopes = pw.TextField(default="[]")
        decision = pw.TextField()
        counts = pw.TextField(default="{}")
        duration_ms = pw.FloatField()
        error_code = pw.TextField(null=True)
        receipt_id = pw.TextField(null=True)  # links the events of one bulk deletion to its receipt

    class BulkDeletion(Base):
        """A bulk deletion, recorded before it erases anything: the exact page set, its digest, how far it got."""

        receipt_id = pw.TextField(unique=True)
        digest = pw.TextField()  # of the sorted page ids (what the plan showed)
        page_ids = pw.TextField()  # JSON list, sorted: the recorded set a resume continues (never the filter)
        total = pw.IntegerField()
        completed = pw.IntegerField(default=0)  # pages of `page_ids` dealt with, in order
        state = pw.TextField(default="pending")  # pending | complete
        filters = pw.TextField()  # the filter's names and values, never the query text
        counts = pw.TextField(default="{}")  # what the batches erased so far
        export_files = pw.TextField(default="[]")  # the plan's export files (their dead temporaries go at the end)
        batch_size = pw.IntegerField()
        actor_type = pw.TextField()
        actor_id = pw.TextField()
        reason = pw.TextField()
        created_at = pw.TextField()
        updated_at = pw.TextField()

    class ImportRun(Base):
        """One import: what it was given and its totals (the import report, issue 15)."""

        import_id = pw.TextField(unique=True)
        source = pw.TextField()
        path = pw.TextField(null=True)
        started_at = pw.TextField()
        finished_at = pw.TextField()
        summary = pw.TextField(default="{}")  # the totals (JSON): conversations, messages, created, ...

    class ImportEntry(Base):
        """One line of an import report: a conversation or session that came in, or an item that did not."""

        run = pw.ForeignKeyField(ImportRun, on_delete="CASCADE", index=True)
        n = pw.IntegerField()
        file = pw.TextField(null=True)  # the source file, as the user gave it
        item = pw.TextField()  # a source key, or what was skipped
        page_id = pw.TextField(null=True, index=True)  # the page it became (titles are read live from it)
        outcome = pw.TextField()  # created | revised | unchanged | skipped
        reason = pw.TextField(null=True)
        counts = pw.TextField(default="{}")  # its messages: created, unchanged, revised (JSON)

    models = SimpleNamespace(
        ImportRun=ImportRun, ImportEntry=ImportEntry,
        Meta=Meta, Scope=Scope, Page=Page, Revision=Revision, ProvenanceInput=ProvenanceInput,
        Relation=Relation, Retraction=Retraction, LifecycleEvent=LifecycleEvent, Suppression=Suppression,
        Recommendation=Recommendation, Idempotency=Idempotency, SourcePage=SourcePage, ExportRecord=ExportRecord, DeletionReceipt=DeletionReceipt,
        DeletedRevision=DeletedRevision, AuditEvent=AuditEvent, Handoff=Handoff, HandoffEntry=HandoffEntry,
        BulkDeletion=BulkDeletion,
    )
    models.all = [
        Meta, Scope, Page, Revision, ProvenanceInput, Relation, Retraction, LifecycleEvent, Suppression,
        Recommendation, Idempotency, SourcePage, ExportRecord, DeletionReceipt, DeletedRevision, AuditEvent,
        Handoff, HandoffEntry, ImportRun, ImportEntry, BulkDeletion,
    ]
    return models


def _fold(value: object) -> str | None:
    return value.casefold() if isinstance(value, str) else None


@contextmanager
def unmapped(db: pw.SqliteDatabase) -> Iterator[None]:
    """This thread's connection reads with read() meanwhile (a pass over the whole store, an export:
    mapping gains nothing there, and every mapped page would count in the process's resident memory)."""
    db.execute_sql("PRAGMA mmap_size=0")
    try:
        yield
    finally:
        db.execute_sql(f"PRAGMA mmap_size={dict(PRAGMAS)['mmap_size']}")


def open_database(path: Path, create: bool = True) -> pw.SqliteDatabase:
    """Open the SQLite file with the store's pragmas on every connection; a missing store is created only with
    `create` (store/paths.py), and a file that is not a pcp store is refused before anything touches it."""
    if require_store(path, create):
        try:
            make_private_dirs(path.parent)
        except OSError as exc:
            raise Invalid(f"Cannot create the store directory {path.parent}: {exc.strerror or exc}.") from None
    if path.exists():
        if not os.access(path, os.W_OK) or not os.access(path.parent, os.W_OK):
            raise Invalid(f"The store file {path} is read-only; make it writable or choose another with --db.")
    else:
        try:
            make_private_file(path)  # SQLite gives its -wal and -shm files the store file's mode
        except OSError as exc:
            raise Invalid(f"Cannot create the store file {path}: {exc.strerror or exc}.") from None
    for own in store_files(path):
        narrow(own)
    if crypt.is_encrypted(path):
        # SQLCipher with its own SQLite; the key is unwrapped once per process (keychain, passphrase, or
        # handed over a pipe by the parent) and applied to each connection before anything else.
        db: pw.SqliteDatabase = CipherDatabase(str(path), crypt.unlock(path), pragmas=ENCRYPTED_PRAGMAS,
                                                     timeout=60, autoconnect=True)
        sqlite_version = crypt.sqlite_version()
    else:
        db = pw.SqliteDatabase(str(path), pragmas=PRAGMAS, timeout=60, autoconnect=True)
        # The driver Peewee chose (pysqlite3 when installed, else the standard sqlite3).
        peewee: Any = pw
        sqlite_version = str(peewee.sqlite3.sqlite_version)
    db.register_function(_fold, "pcp_fold", 1, deterministic=True)
    announce_waits(db, path)
    version = tuple(int(x) for x in sqlite_version.split("."))
    if version < MIN_SQLITE:
        raise Invalid(
            f"SQLite {sqlite_version} is too old for pcp (needs {'.'.join(map(str, MIN_SQLITE))} or newer); "
            "install pysqlite3-binary."
        )
    return db


WAITING_SUFFIX = "-waiting"
# (never through a link: nothing is written outside the store's folder)
_WAITING_FLAGS = os.O_RDWR | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0)


def fold_wal(db: pw.SqliteDatabase) -> None:
    """Copy the WAL's frames into the database file now, without the write lock and without waiting for readers
    (PASSIVE: what a reader or writer still needs stays; nothing is raised when it cannot go on)."""
    with contextlib.suppress(pw.OperationalError):
        db.execute_sql("PRAGMA wal_checkpoint(PASSIVE)")


def waiting_file(db: pw.SqliteDatabase) -> str | None:
    """The file beside the store where writers say they wait for the write lock (None: not announced here)."""
    return getattr(db, "pcp_waiting", None) if fcntl is not None else None


def announce_waits(db: pw.SqliteDatabase, path: Path) -> None:
    """Every write transaction (BEGIN IMMEDIATE or EXCLUSIVE) of this database that has to wait for the write
    lock says so while it waits: a shared flock on the store's WAITING_SUFFIX file, taken when a first try
    without waiting finds the lock taken and let go once it has the lock (or gave up). A long bulk write
    (store/bulkwrite.Groups) lets the lock go between two groups only while someone waits, so it does not
    sleep when nobody does. The flock is never held with the write lock, and a bulk write only tests it
    without blocking: no deadlock. The file exists only once a writer has had to wait."""
    if fcntl is None:
        return
    target = str(path.with_name(path.name + WAITING_SUFFIX))
    begin = db.begin
    peewee_db: Any = db  # (an attribute of our own on Peewee's object)
    peewee_db.pcp_waiting = target

    def announced_begin(lock_type: str | None = None) -> None:
        if not lock_type:  # a deferred transaction (a read first) waits for nothing here
            begin(lock_type)
            return
        conn = db.connection()
        patience = conn.execute("PRAGMA busy_timeout").fetchone()[0]
        conn.execute("PRAGMA busy_timeout=0")
        try:
            begin(lock_type)
            return  # the lock was free (the common case: nothing to say)
        except pw.OperationalError as exc:
            if "locked" not in str(exc) and "busy" not in str(exc):
                raise
        finally:
            conn.execute(f"PRAGMA busy_timeout={int(patience)}")
        try:  # a descriptor of its own: flocks of one open file would be shared by the threads that use it
            fd = os.open(target, _WAITING_FLAGS | os.O_CREAT, 0o600)
        except OSError:  # (cannot create it: the bulk writer's bounded yield still lets us in)
            begin(lock_type)
            return
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_SH)
            except OSError:  # (a file system without flock: unannounced, as a writer that is not pcp's)
                pass
            stops.reached("write-waiting")  # tests stop a writer here: announced, not yet in
            begin(lock_type)
        finally:
            os.close(fd)  # (lets the flock go)

    peewee_db.begin = announced_begin


def writers_waiting(db: pw.SqliteDatabase) -> bool | None:
    """Whether a writer of this store says it waits for the write lock (None: this store cannot tell)."""
    target = waiting_file(db)
    if target is None:
        return None
    try:
        fd = os.open(target, _WAITING_FLAGS)
    except FileNotFoundError:
        return False  # (no writer of this store ever had to wait)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:
        return None
    finally:
        os.close(fd)
    return False


def install_schema(db: pw.SqliteDatabase, models: SimpleNamespace, migrate: bool = True) -> int:
    """Create or migrate the schema; returns the schema version now in force.

    With migrate=False an older store is refused (Conflict) instead of changed: a model server
    never starts a migration."""
    with db.atomic("IMMEDIATE"):
        tables = set(db.get_tables())
        if "meta" not in tables:
            db.create_tables(models.all)
            # FTS5 secure-delete (set inside): deleted tokens are removed from index segments, not just masked.
            index.create(db.cursor())
            db.execute_sql(TITLE_INDEX)
            for sql in RANK_INDEXES:
                db.execute_sql(sql)
            db.execute_sql(IMMUTABLE_TRIGGER)
            create_sync_tables(db)
            models.Meta.create(key="schema_version", value=str(SCHEMA_VERSION))
            return SCHEMA_VERSION
        row = models.Meta.get_or_none(models.Meta.key == "schema_version")
        version = int(row.value) if row else 0
        if version > SCHEMA_VERSION:
            raise Invalid(
                f"This store was written by a newer pcp (schema {version}, this one knows {SCHEMA_VERSION}); upgrade pcp."
            )
        if version < SCHEMA_VERSION and not migrate:
            raise Conflict(f"This store has schema {version} and needs an upgrade to {SCHEMA_VERSION}: {UPGRADE_HINT}.")
        for step in range(version, SCHEMA_VERSION):
            MIGRATIONS[step](db, models)
            models.Meta.update(value=str(step + 1)).where(models.Meta.key == "schema_version").execute()
        if index.needs_reindex(db.cursor()):  # another analyser wrote the index's rows
            if not migrate:
                raise Conflict(f"This store's search index needs rebuilding: {UPGRADE_HINT}.")
            index.start_reindex(db.cursor())
        return SCHEMA_VERSION


def needs_migration(db: pw.SqliteDatabase) -> bool:
    """Whether opening this store would change its schema (a model server refuses such a store)."""
    tables = set(db.get_tables())
    if "meta" not in tables:
        return False
    row = db.execute_sql("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    return (int(row[0]) if row else 0) < SCHEMA_VERSION or index.needs_reindex(db.cursor())


def _to_v2(db: pw.SqliteDatabase, models: SimpleNamespace) -> None:
    """Schema 2: the analysed full-text index with per-scope statistics, filled in resumable batches."""
    index.start_upgrade(db.cursor())


def _migrate_import_reports(db: pw.SqliteDatabase, models: SimpleNamespace) -> None:
    """Schema 3: the import reports (import_run, import_entry)."""
    db.create_tables([models.ImportRun, models.ImportEntry])


def _migrate_bulk_deletions(db: pw.SqliteDatabase, models: SimpleNamespace) -> None:
    """Schema 4: the bulk_deletion table and the audit events' receipt_id (bulk deletion, issue 14)."""
    db.create_tables([models.BulkDeletion])
    columns = {c.name for c in db.get_columns("audit_event")}
    if "receipt_id" not in columns:
        db.execute_sql("ALTER TABLE audit_event ADD COLUMN receipt_id TEXT")


# Title order ignores case ("apple" beside "Apple", before "banana"); ASCII folding, SQLite's NOCASE.
TITLE_INDEX = "CREATE INDEX IF NOT EXISTS page_scope_title_nocase ON page (scope_id, title COLLATE NOCASE, id)"


def _migrate_title_order(db: pw.SqliteDatabase, models: SimpleNamespace) -> None:
    """Schema 5: the title index folds case, so the title order does."""
    db.execute_sql(TITLE_INDEX)
    db.execute_sql('DROP INDEX IF EXISTS "page_scope_id_title"')


# The tables whose rows travel between synced stores (store/sync/records.py TABLES, in the same order).
SYNC_TRAVELLING = ("deletion_receipt", "page", "revision", "relation", "retraction", "lifecycle_event", "suppression",
                   "sync_unsuppress", "recommendation", "source_page", "idempotency", "handoff")
# What sync between the owner's stores keeps (store/sync): peers and how far their changes were taken in,
# erased page ids, pages whose duplicate collapsed into another, open revision conflicts, lifted suppressions.
SYNC_TABLES = (
    "CREATE TABLE IF NOT EXISTS sync_peer (peer_id TEXT PRIMARY KEY, marks TEXT NOT NULL DEFAULT '{}', "
    "last_sync TEXT, revoked INTEGER NOT NULL DEFAULT 0, epoch INTEGER)",
    "CREATE TABLE IF NOT EXISTS sync_gone_page (page_id TEXT PRIMARY KEY, receipt_id TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS sync_alias (page_id TEXT PRIMARY KEY, winner_page_id TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS sync_conflict (page_id INTEGER PRIMARY KEY REFERENCES page(id) ON DELETE CASCADE, "
    "revision_ids TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS sync_unsuppress (key TEXT PRIMARY KEY, page_id TEXT NOT NULL, context_id TEXT NOT NULL, "
    "lifted_at TEXT NOT NULL)",
    # A lifted suppression travels as a record of its own (the row itself is gone).
    "CREATE TRIGGER IF NOT EXISTS sync_unsuppress_log AFTER DELETE ON suppression BEGIN "
    "INSERT OR REPLACE INTO sync_unsuppress (key, page_id, context_id, lifted_at) "
    "SELECT OLD.context_id || ' ' || p.page_id, p.page_id, OLD.context_id, strftime('%Y-%m-%dT%H:%M:%fZ', 'now') "
    "FROM page p WHERE p.id = OLD.page_id; END",
    # ... and an erased page leaves no such record naming it.
    "CREATE TRIGGER IF NOT EXISTS sync_unsuppress_forget AFTER DELETE ON page BEGIN "
    "DELETE FROM sync_unsuppress WHERE page_id = OLD.page_id; END",
    # Sync finds changes as rows after a rowid mark; SQLite gives a deleted top rowid out again, so a
    # delete that lowers a table's top rowid is logged, and the next sync looks again from there.
    "CREATE TABLE IF NOT EXISTS sync_reuse (n INTEGER PRIMARY KEY AUTOINCREMENT, tbl TEXT NOT NULL, floor INTEGER NOT NULL)",
    *(f"CREATE TRIGGER IF NOT EXISTS sync_reuse_{t} AFTER DELETE ON {t} "
      f"WHEN OLD.rowid > (SELECT COALESCE(MAX(rowid), 0) FROM {t}) BEGIN "
      f"INSERT INTO sync_reuse (tbl, floor) VALUES ('{t}', (SELECT COALESCE(MAX(rowid), 0) FROM {t})); END"
      for t in SYNC_TRAVELLING),
)


def create_sync_tables(db: pw.SqliteDatabase) -> None:
    for sql in SYNC_TABLES:
        db.execute_sql(sql)


def _migrate_sync(db: pw.SqliteDatabase, models: SimpleNamespace) -> None:
    """Schema 6: the sync tables (store/sync); nothing existing changes."""
    create_sync_tables(db)


def _migrate_erasure(db: pw.SqliteDatabase, models: SimpleNamespace) -> None:
    """Schema 7 (issue 28), erased means gone from the index and the scope names too:
    - the `contentless_delete` table could only tombstone an erased row, so every revision is indexed again
      into one whose rows are deleted with their values (resumable batches; the old table, and every term
      it kept, goes at the end);
    - conversation and session scopes an importer named after their title get a neutral name (source and
      day); the title is read live from the conversation page instead (store/scope_titles.py)."""
    if index.needs_reindex(db.cursor()):
        index.start_reindex(db.cursor())
    scope_titles.rename_titled_scopes(db)


def _to_v8(db: pw.SqliteDatabase, models: SimpleNamespace) -> None:
    """Schema 8 (issue 34): the days relative time names ("yesterday", "上周") beside each revision's text, derived
    for the existing revisions in resumable batches (store/upgrade.py)."""
    index.start_dates(db.cursor())


# What a search tests of each candidate (a revision's page and scope; the page's head, status and scope), in
# indexes narrow enough that a question's thousand candidates touch a few database pages of ids instead of a
# thousand pages of text (store/ranking.py narrow_tables): on an encrypted store, which maps nothing, every
# page read is a read, a check and a decryption.
RANK_INDEXES = (
    "CREATE INDEX IF NOT EXISTS revision_rank ON revision (id, page_id, scope_id)",
    "CREATE INDEX IF NOT EXISTS page_rank ON page (id, head, status, superseded, scope_id)",
)


def _to_v9(db: pw.SqliteDatabase, models: SimpleNamespace) -> None:
    """Schema 9 (issue 38): the narrow indexes search tests its candidates against (a few seconds at a million
    pages; nothing else changes)."""
    for sql in RANK_INDEXES:
        db.execute_sql(sql)


# MIGRATIONS[n] upgrades schema version n to n + 1, inside the open transaction.
MIGRATIONS: dict[int, Callable[[pw.SqliteDatabase, SimpleNamespace], None]] = {
    1: _to_v2, 2: _migrate_import_reports, 3: _migrate_bulk_deletions, 4: _migrate_title_order, 5: _migrate_sync,
    6: _migrate_erasure, 7: _to_v8, 8: _to_v9}
