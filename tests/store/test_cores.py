"""When a long write may start a helper process (store/cores.py, issue 31): asked for, never, or while a core is
free; never where it cannot run."""

from __future__ import annotations

import pytest

from store import cores

ENV = "PCP_SOME_HELPER"


@pytest.mark.parametrize("choice, n, load, wanted", [
    ("1", 1, 9.0, True),  # asked for: whatever the machine
    ("0", 8, 0.0, False),  # never
    ("", 2, 0.4, True),  # a core free besides the writer
    ("", 2, 1.6, False),  # both cores busy
    ("", 4, 3.4, True),
    ("", 4, 3.5, False),
    ("", 1, 0.0, False),  # one core: a helper only takes turns with the writer
])
def test_a_helper_is_wanted_when_asked_for_or_while_a_core_is_free(monkeypatch, choice, n, load, wanted):
    monkeypatch.setenv(ENV, choice)
    monkeypatch.setattr(cores, "cores", lambda: n)
    monkeypatch.setattr(cores.os, "getloadavg", lambda: (load, load, load))
    assert cores.helper_wanted(ENV) is wanted


def test_no_helper_where_it_cannot_run_or_the_load_is_unknown(monkeypatch):
    monkeypatch.setattr(cores, "cores", lambda: 8)
    monkeypatch.setattr(cores.os, "getloadavg", lambda: (0.0, 0.0, 0.0))
    monkeypatch.delenv(ENV, raising=False)
    assert cores.helper_wanted(ENV)
    monkeypatch.setattr(cores.sys, "frozen", True, raising=False)  # a frozen build's executable does not run -c
    assert not cores.helper_wanted(ENV) and not (monkeypatch.setenv(ENV, "1") or cores.helper_wanted(ENV))
    monkeypatch.delattr(cores.sys, "frozen")
    monkeypatch.delenv(ENV)
    monkeypatch.delattr(cores.os, "getloadavg")  # Windows: no load average, no helper unless asked for
    assert not cores.helper_wanted(ENV)
    monkeypatch.setenv(ENV, "1")
    assert cores.helper_wanted(ENV)
