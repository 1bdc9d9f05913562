"""Fixtures for the app tests: a deterministic demo store (fixed ids and clock), an app factory, a big store."""

from __future__ import annotations

import itertools
import shutil
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

SIZE = (120, 40)


@pytest.fixture(autouse=True)
def _pilot_grain(monkeypatch):
    """Pilot's idle granule for every app test: waits.PILOT_GRAIN says why."""
    import textual._wait

    from waits import PILOT_GRAIN

    monkeypatch.setattr(textual._wait, "SLEEP_GRANULARITY", PILOT_GRAIN)


BASE = datetime(2026, 4, 1, 12, 0, 0, tzinfo=timezone.utc)
CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


class FixedClock:
    """Store ids and times from a counter, so screens and snapshots are the same on every run."""

    def __init__(self) -> None:
        self.serial = itertools.count(1)
        self.minted = 0

    def now(self) -> str:
        import store.ids as ids

        # Time moves with the ids minted, not with the clock reads: a read in a background worker (an audit
        # event's time, a status) may come a little earlier or later, and must not move what a screen shows.
        return ids.format_time(BASE + timedelta(seconds=self.minted + 1))

    def ulid(self) -> str:
        n = next(self.serial)
        self.minted = n
        value = ((int(BASE.timestamp() * 1000) + n) << 80) | n
        return "".join(CROCKFORD[(value >> (5 * i)) & 31] for i in reversed(range(26)))

    def install(self, monkeypatch: pytest.MonkeyPatch) -> FixedClock:
        import store.ids as ids

        monkeypatch.setattr(ids, "now", self.now)
        monkeypatch.setattr(ids, "ulid", self.ulid)
        return self

    def skip(self, minted: int) -> None:
        """Go on from where a clock that minted `minted` ids stands (a store filled by one, then copied)."""
        self.serial = itertools.count(minted + 1)
        self.minted = minted


@pytest.fixture
def fixed_clock(monkeypatch):
    """Store ids and times from a counter (FixedClock)."""
    return FixedClock().install(monkeypatch)


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    """Run in a temporary folder so the store path on screen is the same relative name every time."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PCP_CONFIG_DIR", str(tmp_path / "config"))
    return tmp_path


@pytest.fixture
def demo_store(workdir, fixed_clock, store_kind, _demo_template):
    """The shipped demo world in demo.db; yields (store, refs: demo ref -> page id). Encrypted (under a
    memory keychain) for the tests marked `encrypted`, in their second run."""
    from store import Store

    from pcp_tui import demo

    if store_kind == "encrypted":
        from encrypted_extra import require

        require()
        from keychain import encrypt_new_store, memory_keychain

        with memory_keychain():
            encrypt_new_store(Path("demo.db"))
            st = Store.open(Path("demo.db"))
            refs = demo.fill(st)
            yield st, refs
            st.close()
        return
    template, refs, minted = _demo_template
    shutil.copyfile(template, "demo.db")  # what Store.open and demo.fill make under a fresh fixed clock...
    fixed_clock.skip(minted)  # ... and the clock where they leave it
    st = Store.open(Path("demo.db"))
    yield st, dict(refs)
    st.close()


@pytest.fixture(scope="session")
def _demo_template(tmp_path_factory):
    """The demo world filled once per test process under a fresh fixed clock, closed: (its file, its refs, the ids
    minted). Filling it again for each of the ~240 tests that take demo_store cost ~35 s of the suite's time."""
    from store import Store

    from pcp_tui import demo

    path = tmp_path_factory.mktemp("demo") / "demo.db"
    with pytest.MonkeyPatch.context() as monkeypatch:
        clock = FixedClock().install(monkeypatch)
        st = Store.open(path)
        refs = demo.fill(st)
        st.close()
    return path, refs, clock.minted


@pytest.fixture
def empty_store(workdir, fixed_clock):
    from store import Store

    st = Store.open(Path("empty.db"))
    yield st
    st.close()


@pytest.fixture
def make_app(workdir):
    """make_app(store, **kw): the app on that store, pinned theme, no blinking, no desktop clipboard.

    The store watcher (changes by other processes) is off unless a test asks for it (watch_interval=...),
    so nothing reloads on its own in the middle of a test or a snapshot.
    """
    from pcp_tui.app import PcpApp

    def make(store, **kw):
        kw.setdefault("theme", "pcp-dark")
        kw.setdefault("watch_interval", 0)
        return PcpApp(store.path, store=store, config_folder=workdir / "config", cursor_blink=False,
                      use_pyperclip=False, **kw)

    return make


@pytest.fixture(scope="session")
def big_store_path(tmp_path_factory):
    """A 100,000-page store built once with write_pages_bulk (two scopes)."""
    from store import Store

    path = tmp_path_factory.mktemp("big") / "big.db"
    st = Store.open(path)
    st.write_pages_bulk(({"content": f"Bulk page {i}: notes about topic {i % 97}.",
                          "facets": {"title": f"Bulk {i:06d}"},
                          "observed_at": f"2025-{1 + i % 12:02d}-{1 + i % 28:02d}T{i % 24:02d}:00:00Z"}
                         for i in range(99_000)), "project:bulk", batch_size=5000)
    st.write_pages_bulk(({"content": f"Other page {i}", "facets": {"title": f"Other {i:04d}"}} for i in range(1_000)),
                        "project:other", batch_size=1000)
    st.close()
    return path


# Snapshots live in tests/tui/snapshots/<test file>/ (pytest-textual-snapshot's snap_compare looks the
# extension class up in its module at call time, so a subclass there moves the folder).
try:
    import pytest_textual_snapshot as _pts

    class _SnapshotsHere(_pts.SVGImageExtension):
        @classmethod
        def dirname(cls, *, test_location) -> str:
            return str(Path(test_location.filepath).parent / "snapshots" / test_location.basename)

    _pts.SVGImageExtension = _SnapshotsHere

    @pytest.fixture
    def snap_compare(snap_compare, request):
        """The plugin's snap_compare, which on a mismatch also says what differs, as text: its HTML report is not
        kept where CI runs, and a snapshot that failed there once could not be told from its `assert False`."""

        def compare(*args, **kw) -> bool:
            if snap_compare(*args, **kw):
                return True
            import pickle

            data = pickle.loads(_pts.node_to_report_path(request.node).read_bytes())
            raise AssertionError("the screen differs from its snapshot:\n" + svg_difference(data[1], data[2]))

        return compare
except ImportError:  # pragma: no cover - the snapshot tests are skipped without the plugin
    pass


def svg_lines(svg: str) -> list[str]:
    """The text of a Textual SVG screenshot, one line per terminal row (cells placed by their x position)."""
    import html
    import re

    rows: dict[float, list[tuple[float, str]]] = {}
    for m in re.finditer(r'<text class="[^"]*" x="([\d.]+)" y="([\d.]+)"[^>]*>([^<]*)</text>', svg):
        rows.setdefault(float(m.group(2)), []).append((float(m.group(1)), html.unescape(m.group(3))))
    lines = []
    for y in sorted(rows):
        line = ""
        for x, text in sorted(rows[y]):
            line = line.ljust(round(x / 12.2)) + text  # Textual's SVG cell is 12.2 px wide
        lines.append(line.rstrip())
    return lines


def svg_difference(expected: str, actual: str) -> str:
    """What differs between two screenshots: their text lines, or, when the text is the same, their styles."""
    import difflib

    diff = list(difflib.unified_diff(svg_lines(expected), svg_lines(actual), "snapshot", "now", lineterm="", n=1))
    if diff:
        return "\n".join(diff[:80])
    styles = list(difflib.unified_diff(expected.splitlines(), actual.splitlines(), "snapshot", "now", lineterm="", n=0))
    return "the text is the same; styles differ:\n" + "\n".join(line[:200] for line in styles[:40])


@pytest.fixture
def zebras(workdir):
    """The ZEBRAS notes (tests/tui/helpers.py) in a store of their own (the semantic channel's app tests)."""
    from helpers import zebra_store

    st = zebra_store()
    yield st
    st.close()
