"""Peewee's database over SQLCipher (store/crypt.py holds the keys and the driver): apart from crypt, so that
reading whether a store is encrypted and unwrapping its key (`pcp mcp` does both before it answers its client)
loads no Peewee."""

from __future__ import annotations

from typing import Any

import peewee as pw

from .crypt import connect_raw, driver
from .errors import Invalid


class CipherDatabase(pw.SqliteDatabase):
    """Peewee's SQLite database over sqlcipher3, keyed with a raw key on every new connection."""

    def __init__(self, database: str, key: bytes, **kwargs: Any) -> None:
        self._cipher_key = bytes(key)
        self.cipher: dict[str, Any] | None = None  # None: pcp's settings (CIPHER)
        super().__init__(database, **kwargs)

    def _connect(self) -> Any:
        sqlcipher = driver()
        peewee_db: Any = self  # Peewee's private members (untyped in its stubs)
        conn = connect_raw(self.database, self._cipher_key, self.cipher, timeout=peewee_db._timeout,
                           **self.connect_params)
        try:
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        except sqlcipher.DatabaseError:
            conn.close()
            raise Invalid(f"The key does not open the store {self.database}; nothing was changed.") from None
        try:
            peewee_db._add_conn_hooks(conn)  # the registered functions, as Peewee's own _connect does
        except Exception:
            conn.close()
            raise
        return conn
