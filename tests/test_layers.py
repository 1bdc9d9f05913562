"""Layers point one way: pcp_tui -> store -> ctxpack; store and ctxpack never draw."""

import subprocess
import sys

import pytest


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


@pytest.mark.parametrize("module", ["pcp_tui.cli", "pcp_tui.cli.commands.pages", "pcp_tui.mcp.server"])
def test_the_command_line_and_the_mcp_server_do_not_import_textual(module):
    code = (
        f"import sys, {module}\n"
        "print(','.join(sorted(m for m in sys.modules if m.split('.')[0] == 'textual')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"{module} pulled in {out.stdout.strip()}"
