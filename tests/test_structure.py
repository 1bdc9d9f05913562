"""House rules of the code's shape (issue 32), read from source with `ast`: each shared rule lives in one module."""

from __future__ import annotations

import ast

from import_graph import ROOT, modules

SOURCE = modules("pcp_tui", "store")


def _tree(name: str) -> ast.Module:
    return ast.parse(SOURCE[name].read_text(encoding="utf-8"), str(SOURCE[name]))


def test_which_file_is_the_store_is_decided_in_store_paths_only():
    """$PCP_DB, $PCP_DEMO_DB and the user data dir are read by store/paths.py alone: the app, the `pcp` command,
    the MCP server, `pcp serve` and the capture hook all ask it, so they cannot drift apart."""
    readers = []
    for name in SOURCE:
        if name == "store.paths":
            continue
        for node in ast.walk(_tree(name)):
            if isinstance(node, ast.Constant) and node.value in ("PCP_DB", "PCP_DEMO_DB"):
                readers.append(f"{name}:{node.lineno} reads ${node.value}")
            if isinstance(node, ast.Attribute) and node.attr == "user_data_dir":
                readers.append(f"{name}:{node.lineno} calls user_data_dir")
    assert len(SOURCE) > 100 and readers == [], "use store.paths (chosen_path, named_path, demo_path):\n" + \
        "\n".join(readers)
