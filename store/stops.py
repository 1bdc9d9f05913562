"""Test-only stop points: a process told to stop itself at a chosen point of long work, as a power cut would.

Tests that kill a child mid-import or mid-deletion must not race it from outside (a poll of the database loses
under load). Instead the child is started with PCP_TEST_STOP, and stops itself where the test says:

    PCP_TEST_STOP="import-unit:5"                  SIGKILL the 5th time an import unit is about to commit
    PCP_TEST_STOP="import-group:1,import-unit:1"   after the first group committed, at the next unit
    PCP_TEST_STOP="bulk-delete-batched:3!INT"      SIGINT (Ctrl-C) once the third batch has committed

Stages are passed in order: each counts its point until its number is reached, and the last one sends the
signal (SIGKILL unless `!NAME` says otherwise). Unset, `reached` costs one comparison.
"""

from __future__ import annotations

import os
import signal

_SPEC = os.environ.get("PCP_TEST_STOP", "")


def _parse(spec: str) -> tuple[list[tuple[str, int]], signal.Signals]:
    spec, _, name = spec.partition("!")
    stages = []
    for part in filter(None, (p.strip() for p in spec.split(","))):
        point, _, count = part.partition(":")
        stages.append((point, int(count or 1)))
    return stages, signal.Signals[f"SIG{name or 'KILL'}"]


_STAGES, _SIGNAL = _parse(_SPEC) if _SPEC else ([], signal.SIGKILL)
_seen = [0, 0]  # [stage index, passes of that stage's point]


def reached(point: str) -> None:
    """Mark that this process passed `point`; stop it here if that is where PCP_TEST_STOP says."""
    if not _STAGES or _seen[0] >= len(_STAGES) or _STAGES[_seen[0]][0] != point:
        return
    _seen[1] += 1
    if _seen[1] < _STAGES[_seen[0]][1]:
        return
    _seen[0], _seen[1] = _seen[0] + 1, 0
    if _seen[0] == len(_STAGES):
        os.kill(os.getpid(), _SIGNAL)
