"""Layers point one way: pcp_tui -> store -> ctxpack; store and ctxpack never draw; the front ends other than the
app never import Textual or the app."""

import subprocess
import sys

import pytest
from import_graph import graph, reachable


@pytest.mark.parametrize("module", ["ctxpack", "ctxpack.cli", "store"])
def test_core_layers_do_not_import_ui_libraries(module):
    code = (
        f"import sys, {module}\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in {'textual', 'rich', 'pcp_tui'})\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"{module} pulled in {out.stdout.strip()}"


def test_ctxpack_uses_only_the_standard_library():
    code = (
        "import sys\nbefore = set(sys.modules)\nimport ctxpack, ctxpack.cli\n"
        "new = {m.split('.')[0] for m in set(sys.modules) - before}\n"
        "std = set(sys.stdlib_module_names) | {'ctxpack'}\n"
        "print(','.join(sorted(new - std)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


# What each front-end package may import at module import, besides store, ctxpack and outside libraries
# (README, Layout). Opening the app is a function-level import (`pcp`, `pcp demo`); nothing else is.
FRONT_ENDS = {
    "pcp_tui.cli": {"pcp_tui.text", "pcp_tui.shared", "pcp_tui.capture"},  # Rich for people; the capture agents
    "pcp_tui.mcp": {"pcp_tui.serve.guard", "pcp_tui.shared"},  # the MCP server: --http sits behind the same local guard
    "pcp_tui.serve": set(),  # `pcp serve`: textual-serve runs the app in a child process
    "pcp_tui.capture": set(),  # the agents' hook: standard library until it forks
    "pcp_tui.text": set(),
    "pcp_tui.shared": set(),  # what several front ends do the same way
}


@pytest.mark.parametrize("package", sorted(FRONT_ENDS))
def test_the_front_ends_reach_neither_textual_nor_the_app_through_their_imports(package):
    """Walks every module-level import (ast, transitively through the project) from each module of the package."""
    edges = graph("pcp_tui", "store", "ctxpack", module_level_only=True)
    own = [m for m in edges if m == package or m.startswith(package + ".")]
    assert own, package
    allowed = FRONT_ENDS[package]
    for module in own:
        for reached, path in reachable(module, edges).items():
            top = reached.split(".")[0]
            inside = reached == package or reached.startswith(package + ".")
            assert top != "textual", f"{module} imports Textual: {' -> '.join(path)}"
            assert top != "pcp_tui" or inside or reached in allowed or reached == "pcp_tui", \
                f"{module} reaches {reached}, outside what {package} may import: {' -> '.join(path)}"


@pytest.mark.parametrize("package", ["pcp_tui.cli", "pcp_tui.mcp", "pcp_tui.serve", "pcp_tui.capture"])
def test_importing_every_module_of_a_front_end_loads_no_textual(package):
    """The same at run time, so a library that pulls Textual in (textual-serve, the MCP SDK) is caught too."""
    code = (
        "import importlib, pkgutil, sys\n"
        f"package = importlib.import_module({package!r})\n"
        "names = [m.name for m in pkgutil.walk_packages(package.__path__, package.__name__ + '.')\n"
        "         if not m.name.endswith('.__main__')]  # (running the command is not importing it)\n"
        "for name in names: importlib.import_module(name)\n"
        "print(len(names), ','.join(sorted(m for m in sys.modules if m.split('.')[0] == 'textual')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    count, _, loaded = out.stdout.strip().partition(" ")
    assert int(count) >= 2 and loaded == "", f"{package} pulled in {loaded}"
