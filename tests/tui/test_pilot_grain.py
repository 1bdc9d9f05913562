"""The app tests shorten Pilot's idle granule (waits.PILOT_GRAIN): that only works while Textual's
wait_for_idle reads the module's SLEEP_GRANULARITY when it runs. A Textual that changes this must fail here,
not make the suite silently slow again (or silently ignore the setting)."""

from __future__ import annotations

import inspect

import textual._wait
from waits import PILOT_GRAIN


def test_wait_for_idle_reads_the_granule_at_each_call():
    assert isinstance(textual._wait.SLEEP_GRANULARITY, float)
    source = inspect.getsource(textual._wait.wait_for_idle)
    assert "sleep(SLEEP_GRANULARITY)" in source  # a module global looked up at each call: the fixture's value


def test_every_app_test_runs_with_the_conftest_granule():
    assert textual._wait.SLEEP_GRANULARITY == PILOT_GRAIN  # the autouse fixture applies here as to every app test
