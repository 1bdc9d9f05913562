"""No test waits a fixed time: no `time.sleep`, `asyncio.sleep` or `pilot.pause(...)` used as a wait.

A fixed wait races a loaded machine (the suite runs on both cores, often beside other work). Tests wait for a
condition with a bound instead: `waits.wait_for` outside the app, `helpers.until` and `helpers.settle` in it.
The only calls left are inside those helpers, each marked on its line with `# wait-helper: <reason>`; a call
that is not a wait at all may say `# not-a-wait: <reason>`.
"""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent
ALLOWED_MARKS = ("# wait-helper:", "# not-a-wait:")


def _waits(tree: ast.AST) -> list[tuple[int, str]]:
    """Calls that wait a time or a round of the event loop: (line, what)."""
    sleeps_by_name = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module in ("time", "asyncio"):
            sleeps_by_name |= {a.asname or a.name for a in node.names if a.name == "sleep"}
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Attribute):
            owner = func.value
            if func.attr == "sleep" and isinstance(owner, ast.Name) and owner.id in ("time", "asyncio"):
                found.append((node.lineno, f"{owner.id}.sleep"))
            elif func.attr == "pause" and isinstance(owner, ast.Name) and owner.id == "pilot":
                found.append((node.lineno, "pilot.pause"))
        elif isinstance(func, ast.Name) and func.id in sleeps_by_name:
            found.append((node.lineno, func.id))
    return sorted(found)


def test_no_test_waits_a_fixed_time_or_a_number_of_pauses():
    offenders = []
    for path in sorted(TESTS.rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        lines = source.splitlines()
        for lineno, what in _waits(ast.parse(source, filename=str(path))):
            line = lines[lineno - 1]
            if not any(mark in line for mark in ALLOWED_MARKS):
                offenders.append(f"{path.relative_to(TESTS)}:{lineno}: {what}: {line.strip()}")
    assert not offenders, "fixed waits (wait for a condition instead):\n" + "\n".join(offenders)


def test_the_scan_finds_each_kind_of_fixed_wait():
    sample = ast.parse(
        "import time, asyncio\nfrom time import sleep as nap\n"
        "async def t(pilot):\n    time.sleep(1)\n    await asyncio.sleep(0)\n    nap(2)\n    await pilot.pause()\n")
    assert [what for _, what in _waits(sample)] == ["time.sleep", "asyncio.sleep", "nap", "pilot.pause"]
