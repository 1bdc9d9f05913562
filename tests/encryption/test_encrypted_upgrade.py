"""An encrypted store written by the previous pcp (schema 8, on sqlcipher3-binary 0.6.0: SQLCipher 4.12.0; made by
tests/data/stores/make_encrypted_v8_store.py) opens with today's (sqlcipher3 0.6.4 and newer: SQLCipher 4.19, schema
9): the same key file and passphrase, the schema 9 upgrade inside the encrypted file, the same answers, and the
file still holds none of its text and no SQLite header."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from encrypted_extra import require

require()

from store import Store, crypt  # noqa: E402
from store.db import SCHEMA_VERSION  # noqa: E402

FIXTURE = Path(__file__).resolve().parents[1] / "data" / "stores" / "encrypted-v8"
PASSPHRASE = "fixture passphrase for the v8 store"  # make_encrypted_v8_store.PASSPHRASE
TEXTS = ["Copper spray every ten days from June", "The second bin needs turning before the frost",
         "Tram 28 early in the morning", "the ferry timetable was wrong"]


@pytest.fixture
def old_store(tmp_path, monkeypatch):
    folder = tmp_path / "store"
    shutil.copytree(FIXTURE, folder)
    secret = tmp_path / "passphrase"
    secret.write_text(PASSPHRASE + "\n")
    secret.chmod(0o600)
    monkeypatch.setenv("PCP_PASSPHRASE_FILE", str(secret))
    yield folder / "store.db"
    crypt.forget()


def test_the_fixture_is_an_encrypted_schema_8_store():
    data = (FIXTURE / "store.db").read_bytes()
    assert not data.startswith(b"SQLite format 3")
    assert all(t.encode() not in data for t in TEXTS)


def test_a_store_encrypted_by_the_previous_pcp_opens_upgrades_and_answers_the_same(old_store):
    with Store.open(old_store) as st:
        doctor = st.doctor()
        assert doctor["schema_version"] == SCHEMA_VERSION == 9 and doctor["integrity"] == "ok"
        names = {n for (n,) in st._db.execute_sql("SELECT name FROM sqlite_master WHERE type = 'index'").fetchall()}
        assert {"revision_rank", "page_rank"} <= names
        hits = st.search_pages("copper spray for the tomato blight")["hits"]
        assert hits and hits[0]["title"] == "Tomato blight plan"
        assert st.search_pages("Lisbon tram")["hits"][0]["namespace"] == "project:travel"
        assert not st.search_pages("ferry timetable")["hits"]  # tombstoned there, hidden here
        assert {s["namespace"] for s in st.list_scopes()["scopes"]} >= {"project:garden", "project:travel"}
    data = old_store.read_bytes()
    assert not data.startswith(b"SQLite format 3")
    assert all(t.encode() not in data for t in TEXTS)
