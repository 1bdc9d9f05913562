"""A read-only database file gives one line and exit 1 (run as an unprivileged user, since root ignores modes)."""

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from store import Store

NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]


def _as_nobody(args, **kw):
    return subprocess.run([*NOBODY, sys.executable, *args], capture_output=True, text=True, timeout=60, **kw)


@pytest.fixture
def readonly_store():
    # Outside pytest's private (0700) temp root, so that an unprivileged user can reach it.
    folder = Path(tempfile.mkdtemp(prefix="pcp-ro-"))
    folder.chmod(0o755)
    db = folder / "s.db"
    st = Store.open(db)
    st.write_page("project:a", content="kept as it is")
    st.close()
    for suffix in ("-wal", "-shm"):
        if (folder / f"s.db{suffix}").exists():
            (folder / f"s.db{suffix}").unlink()
    db.chmod(0o444)
    if os.geteuid() == 0:
        if shutil.which("setpriv") is None or _as_nobody(["-c", "import store"]).returncode != 0:
            pytest.skip("no unprivileged user can run this interpreter here")
        runner = _as_nobody
    else:
        def runner(args):
            return subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=60)
    yield db, runner
    shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.parametrize("argv", [["search", "kept"], ["write", "--namespace", "project:a", "--content", "new"]])
def test_read_only_database_file_is_one_line_exit_1(readonly_store, argv):
    db, run = readonly_store
    before = db.read_bytes()
    out = run(["-m", "pcp_tui.cli", "--db", str(db), *argv])
    assert out.returncode == 1
    assert "Traceback" not in out.stderr + out.stdout
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "read-only" in lines[0]
    assert db.read_bytes() == before
