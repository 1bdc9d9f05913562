"""The built wheel holds every package, the themes and the data files of the source tree.

The wheel is built from a copy of the checkout (so build/ and *.egg-info never land in it) with the
build backend already installed (`pip wheel --no-deps --no-build-isolation`: no index, no network).
What it must hold is read from the source tree, not from pyproject.toml, so a new subpackage or
data file that the packaging leaves out makes this fail.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("ctxpack", "store", "pcp_tui")
NOT_SHIPPED = (".git", ".venv", "build", "dist", "*.egg-info", "__pycache__", ".pytest_cache", ".hypothesis",
               ".mypy_cache", ".ruff_cache", "tests", "bench", "*.db", "*.db-wal", "*.db-shm")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    """The names in the wheel built from this checkout, and the open zip to read files from."""
    src = tmp_path_factory.mktemp("src") / "pcp"
    shutil.copytree(ROOT, src, ignore=shutil.ignore_patterns(*NOT_SHIPPED))
    out = tmp_path_factory.mktemp("wheel")
    run = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
                          "-q", "-w", str(out), str(src)], capture_output=True, text=True)
    assert run.returncode == 0, (
        "pip wheel failed (the test extra installs the build backend: pip install -e '.[test]'):\n"
        + run.stdout + run.stderr)
    [built] = out.glob("pcp-*.whl")
    with zipfile.ZipFile(built) as zf:
        yield zf


def _source_packages() -> list[Path]:
    """Every package directory (one with __init__.py) under the top-level packages, relative to ROOT."""
    return sorted(init.parent.relative_to(ROOT) for name in PACKAGES for init in (ROOT / name).rglob("__init__.py")
                  if "__pycache__" not in init.parts)


def test_every_package_and_module_is_in_the_wheel(wheel):
    names = set(wheel.namelist())
    packages = _source_packages()
    assert Path("store/adapters") in packages and Path("pcp_tui/widgets") in packages  # the walk found them
    missing = [str(module.relative_to(ROOT)) for pkg in packages for module in (ROOT / pkg).glob("*.py")
               if module.relative_to(ROOT).as_posix() not in names]
    assert missing == []


def test_themes_ship_inside_pcp_tui(wheel):
    names = set(wheel.namelist())
    themes = sorted(p.name for p in (ROOT / "themes").iterdir() if p.is_file())
    assert {"__init__.py", "pcp-dark.toml", "pcp-light.toml"} <= set(themes)
    assert [t for t in themes if f"pcp_tui/themes/{t}" not in names] == []
    assert not any(n.startswith("themes/") for n in names)  # the folder is pcp_tui.themes, not a package of its own


def test_data_files_ship_and_nothing_else_from_the_checkout(wheel):
    names = set(wheel.namelist())
    data = sorted(p.relative_to(ROOT).as_posix() for p in [*(ROOT / "pcp_tui").glob("*.tcss"),
                                                             *(ROOT / "pcp_tui" / "data").glob("*.jsonl"),
                                                             *(ROOT / "store" / "data").iterdir()])
    assert "pcp_tui/app.tcss" in data and "pcp_tui/data/demo.jsonl" in data
    assert {"store/data/confusables.txt", "store/data/LICENSE-UNICODE.txt"} <= set(data)  # the look-alike rule's table
    assert [d for d in data if d not in names] == []
    demo = wheel.read("pcp_tui/data/demo.jsonl").decode("utf-8")
    assert demo == (ROOT / "pcp_tui" / "data" / "demo.jsonl").read_text(encoding="utf-8")
    tops = {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")}
    assert tops == set(PACKAGES)  # no tests, bench or stray top-level modules


def test_metadata_declares_the_commands_and_the_web_server(wheel):
    [entry_points] = [n for n in wheel.namelist() if n.endswith(".dist-info/entry_points.txt")]
    text = wheel.read(entry_points).decode("utf-8")
    assert "pcp = pcp_tui.cli:main" in text and "ctxpack = ctxpack.cli:main" in text
    [metadata] = [n for n in wheel.namelist() if n.endswith(".dist-info/METADATA")]
    requires = [line.split(":", 1)[1].strip() for line in wheel.read(metadata).decode("utf-8").splitlines()
                if line.startswith("Requires-Dist:")]
    assert any(r.startswith("textual-serve") for r in requires)  # `pcp serve` needs it at run time
