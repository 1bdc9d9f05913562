"""Write tests/data/stores/encrypted-v8/store.db (and its key file store.db.key) with the store code of commit
510c454 (schema 8) on sqlcipher3-binary 0.6.0 (SQLCipher 4.12.0), what pcp shipped before it moved to
sqlcipher3 0.6.4 (SQLCipher 4.19) and schema 9. The key is wrapped by the passphrase PASSPHRASE (scrypt).
Today's pcp must open it unchanged: the same file format, the schema 9 upgrade, the same answers.

Run from outside the repository with a virtual environment holding that commit's code and sqlcipher3-binary
(see README.md beside this file):

    python3 -m venv /tmp/v8 && mkdir /tmp/pcp-510c454 && git archive 510c454 | tar -x -C /tmp/pcp-510c454
    /tmp/v8/bin/pip install -e '/tmp/pcp-510c454[encrypt]' 'sqlcipher3-binary==0.6.0'
    cd /tmp && /tmp/v8/bin/python /path/to/make_encrypted_v8_store.py OUT_DIR
"""

from __future__ import annotations

import sys
from pathlib import Path

from store import Store, crypt, encryption

PASSPHRASE = "fixture passphrase for the v8 store"
PAGES = [
    ("project:garden", "Tomato blight plan\n\nCopper spray every ten days from June; the Moneymaker rows first."),
    ("project:garden", "Compost notes\n\nThe second bin needs turning before the frost; add the leaf litter."),
    ("project:travel", "Lisbon in October\n\nTram 28 early in the morning, then the tile museum in Xabregas."),
]


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    path = out / "store.db"
    with Store.open(path) as st:
        for ns, text in PAGES:
            st.write_page(ns, content=text)
        gone = st.write_page("project:travel", content="Withdrawn: the ferry timetable was wrong.")
        st.tombstone_page(gone["page_id"], "wrong timetable")
        assert st._db.execute_sql("SELECT value FROM meta WHERE key='schema_version'").fetchone()[0] == "8"
    encryption.encrypt(path, passphrase=PASSPHRASE)
    assert crypt.driver().connect(":memory:").execute("PRAGMA cipher_version").fetchone()[0].startswith("4.12.0")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
