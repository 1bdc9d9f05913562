"""House rules of the code's shape (issue 32), read from source with `ast`: each shared rule lives in one module."""

from __future__ import annotations

import ast

from import_graph import modules

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


def test_the_front_ends_spell_no_closed_word_list_of_the_store_but_in_shared():
    """Search modes, projections, lifecycle statuses and actor types are written out once for the front ends
    (pcp_tui/shared.py, checked against the store by tests/mcp/test_mcp_protocol.py): a tuple, list or Literal
    elsewhere holding every word of one of them is a copy that would drift."""
    from store import LIFECYCLE_STATUSES, PROJECTIONS, SEARCH_MODES
    from store.validate import ACTOR_TYPES

    lists = {"search modes": set(SEARCH_MODES), "projections": set(PROJECTIONS),
             "lifecycle statuses": set(LIFECYCLE_STATUSES), "actor types": set(ACTOR_TYPES)}
    copies = []
    for name in SOURCE:
        if not name.startswith("pcp_tui") or name == "pcp_tui.shared":
            continue
        for node in ast.walk(_tree(name)):
            if isinstance(node, ast.Subscript):
                node = node.slice
            if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
                words = {e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)}
                copies += [f"{name}:{node.lineno} spells the {what}" for what, known in lists.items() if known <= words]
    assert copies == [], "import them from pcp_tui.shared:\n" + "\n".join(copies)
