"""Helpers for the sync tests."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path


def export_lines(path: Path, out: Path) -> list[str]:
    """A store's full export, header and closing digest aside, as sorted lines (the order of two concurrent
    revisions of one page, and of handoff records, follows each store's arrival order)."""
    from store import Store

    with Store.open(path) as st:
        st.export(out)
    lines = out.read_text(encoding="utf-8").splitlines()
    out.unlink()
    return sorted(lines[1:-1])


def sync(a: Path, b: Path) -> dict:
    from store import Store

    with Store.open(a) as st:
        return st.sync_with(b)


def killed_mid_sync(db: Path, call: str, target: Path, after: int) -> subprocess.CompletedProcess:
    """Run `Store.open(db).<call>(target)` (sync_with or sync_folder) in a child process that SIGKILLs
    itself as it takes in its `after`-th record; the finished process (its return code is -SIGKILL)."""
    root = Path(__file__).resolve().parents[2]
    script = textwrap.dedent(f"""
        import os, signal, sys
        sys.path.insert(0, {str(root)!r})
        from store import Store
        from store.sync import ops
        seen = [0]
        take = ops._Run.take
        def dying(self, rec):
            seen[0] += 1
            if seen[0] == {after}:
                os.kill(os.getpid(), signal.SIGKILL)
            return take(self, rec)
        ops._Run.take = dying
        with Store.open({str(db)!r}) as st:
            st.{call}({str(target)!r})
    """)
    proc = subprocess.run([sys.executable, "-c", script], cwd=root, env={**os.environ}, capture_output=True)
    assert proc.returncode == -signal.SIGKILL, proc.stderr.decode()
    return proc
