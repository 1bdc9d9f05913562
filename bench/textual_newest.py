"""Run the app's non-snapshot tests against the newest Textual, to learn whether its pin can move.

    python bench/textual_newest.py [--keep] [pytest arguments...]

Makes a virtual environment in a temporary folder, installs pcp there with its test extras (the pinned
Textual first), then upgrades Textual (and what it needs) to the newest release the package index has, and
runs tests/test_compat.py (the private framework code pcp relies on, all in pcp_tui/compat.py) and tests/tui
without the snapshot tests (their pictures are drawn by the pinned Textual). Prints the Textual version and
pytest's summary; exits with pytest's status. Outside .ci/run: a new Textual must never break CI, this says
when the pin in pyproject.toml can move.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TESTS = ["tests/test_compat.py", "tests/tui", "--ignore=tests/tui/test_snapshots.py", "-p", "no:cacheprovider"]


def run(*command: str, quiet: bool = False) -> subprocess.CompletedProcess[str]:
    print("$", " ".join(command), flush=True)
    return subprocess.run(command, cwd=ROOT, text=True, check=False,
                          stdout=subprocess.PIPE if quiet else None, stderr=subprocess.STDOUT if quiet else None)


def version(python: Path, package: str) -> str:
    done = subprocess.run([str(python), "-c", f"import importlib.metadata as m; print(m.version({package!r}))"],
                          text=True, capture_output=True, check=False)
    return done.stdout.strip() or "?"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keep", action="store_true", help="keep the virtual environment (its path is printed)")
    args, pytest_args = parser.parse_known_args()  # the rest goes to pytest (e.g. -n 2 -x)
    folder = Path(tempfile.mkdtemp(prefix="pcp-textual-newest-"))
    venv = folder / "venv"
    python = venv / "bin" / "python"
    steps = [
        (sys.executable, "-m", "venv", str(venv)),
        (str(python), "-m", "pip", "install", "-q", "-e", ".[test]", "pytest-xdist"),
        # pcp pins Textual: pip says the newest one conflicts with the pin, and installs it as asked
        (str(python), "-m", "pip", "install", "-q", "--upgrade", "textual"),
    ]
    pinned = "?"
    for step in steps:
        if run(*step).returncode != 0:
            print(f"could not set up the environment in {folder} (step above failed)", file=sys.stderr)
            return 2
        if step is steps[1]:
            pinned = version(python, "textual")
    newest = version(python, "textual")
    done = run(str(python), "-m", "pytest", "-q", *TESTS, *pytest_args)
    print(f"\nTextual pinned {pinned}, tested {newest} (rich {version(python, 'rich')}): "
          f"{'the tests pass' if done.returncode == 0 else f'pytest exited {done.returncode}'}")
    if args.keep:
        print(f"environment kept: {venv}")
    else:
        subprocess.run(["rm", "-rf", str(folder)], check=False)
    return done.returncode


if __name__ == "__main__":
    sys.exit(main())
