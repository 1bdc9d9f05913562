"""A keychain for tests: a real `keyring` backend that keeps its entries in a dict (nothing leaves the process)."""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import keyring
from keyring.backend import KeyringBackend
from keyring.errors import PasswordDeleteError


class MemoryKeychain(KeyringBackend):
    priority = 1  # type: ignore[assignment]

    def __init__(self) -> None:
        super().__init__()
        self.entries: dict[tuple[str, str], str] = {}

    def get_password(self, service: str, username: str) -> str | None:
        return self.entries.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self.entries[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        if self.entries.pop((service, username), None) is None:
            raise PasswordDeleteError(username)


@contextmanager
def memory_keychain() -> Iterator[MemoryKeychain]:
    """Install a MemoryKeychain as keyring's backend for the block; the one before comes back after."""
    from store import crypt

    before = keyring.get_keyring()
    chain = MemoryKeychain()
    keyring.set_keyring(chain)
    try:
        yield chain
    finally:
        keyring.set_keyring(before)
        crypt.forget()


def encrypt_new_store(db_path: Path) -> None:
    """Create an empty store at db_path and encrypt it under a key wrapped by the current keychain."""
    from store import Store, encryption

    Store.open(db_path).close()
    encryption.encrypt(db_path)
