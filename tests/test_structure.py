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


def test_pcp_import_the_import_screen_and_capture_read_the_one_importer_registry():
    """store.adapters.IMPORTERS is the one list: `pcp import` takes its names (and a pcp export), the app's
    import screen lists them (but memory, which needs --from), and capture hooks exactly its agents."""
    from store import adapters
    from store.adapters import IMPORTERS

    from pcp_tui.capture import AGENTS
    from pcp_tui.cli.commands.imports import import_sources
    from pcp_tui.screens.welcome import SOURCES

    assert set(import_sources()) == {*IMPORTERS, "export"}
    assert {value for _, value in SOURCES} == {n for n, i in IMPORTERS.items() if i.kind != "memory"} | {"export"}
    assert set(AGENTS) == {n for n, i in IMPORTERS.items() if i.kind == "agent"}
    assert all(i.run is getattr(adapters, f"import_{n.replace('-', '_')}") for n, i in IMPORTERS.items())
    assert {n for n in adapters.__all__ if n.startswith("import_")} == \
        {f"import_{n.replace('-', '_')}" for n in IMPORTERS}  # no importer left out of the registry


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


# Reasoned exceptions: (module, attribute) -> why. Everything else private stays inside its module.
PRIVATE_EXCEPTIONS = {
    # Documented public names that start with an underscore.
    ("*", "_exit"): "os._exit, the documented way out of a forked child",
    ("*", "_asdict"): "NamedTuple._asdict, a documented method",
    # Private framework code: replaced in issue 32 phase 2 (public hooks, or one module naming the upstream issue).
    # All of it in pcp_tui/compat.py, each use with its reason; tests/test_compat.py fails when upstream changes one.
    ("pcp_tui.compat", "_lowlevel_server"): "the MCP SDK's low-level server (compat.py)",
    ("pcp_tui.compat", "_request_handlers"): "the MCP SDK's request handlers (compat.py)",
    ("pcp_tui.compat", "_scroll_update"): "Textual's scrollbar update without a layout pass (compat.py)",
    # Peewee documents overriding Database._connect to open a connection another way (here: SQLCipher); the
    # override needs what Peewee's own _connect uses: the busy timeout and the registered functions' hooks.
    ("store.cipher_db", "_timeout"): "Peewee's _connect override (SQLCipher): the busy timeout it was given",
    ("store.cipher_db", "_add_conn_hooks"): "Peewee's _connect override (SQLCipher): the functions it registers",
    # The store's own database handle, held by every part: reached through another part or the facade where one
    # store works on another's connection. Phase 2's typed store handle gives these a public seam.
    ("pcp_tui.reads", "_db"): "the app's read child interrupts its own store's SQLite call when superseded",
    ("store.adapters.agents", "_db"): "the importer upgrade pass rewrites rows in the store it imports into",
    ("store.sync", "_db"): "a pull reads the source store in one snapshot",
    ("store.sync.folder", "_db"): "a sync folder works on its store's connection",
    ("store.refusal", "_ctx"): "a refusal before any operation is audited as one (Part over the facade's context)",
    ("store.refusal", "_audit_failure"): "the same: the audit of a failed call, kept in core.Part",
    # Import replay and sync apply write through the writing parts' row-level helpers (one transaction, no
    # second audit event per row); to become public collaborator methods of WriteOps and ExportOps.
    **{("store.importing", name): "export import replays rows through the writing parts' internals"
       for name in ("_db", "_m", "_require", "_insert_revision", "_link", "_salt", "_creatable")},
    **{("store.restore", name): "the restore is the export's reader, split out of export.py (issue 31): it writes "
       "through the export part's own checks, owner adoption, audit and rare-kind readers"
       for name in ("_db", "_salt", "_failures_audited", "_adopt_owner", "_append_audit", "_importer",
                    "_same_or_conflict")},
    **{("store.sync.ops", name): "sync applies records through the export importer's row readers"
       for name in ("_in_receipt", "_in_scope", "_in_relation", "_in_retraction", "_in_suppression", "_in_handoff",
                    "_in_lifecycle_event", "_in_recommendation", "_in_source_page", "_salt", "_db")},
}


def test_no_module_reaches_into_another_modules_privates():
    """A `_name` is used only in the module that defines it: through self or cls, or as a module-local name.
    Parts of the store talk through public methods (search.PageQuery for selections), front ends likewise."""
    found = []
    for name in SOURCE:
        tree = _tree(name)
        defined, imported = set(), set()
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                defined.add(node.name)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                defined.add(node.attr)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                defined.add(node.id)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                for alias in node.names:
                    imported.add((alias.asname or alias.name).split(".")[0])
                    if isinstance(node, ast.ImportFrom) and _private(alias.name):
                        found.append((name, alias.name, node.lineno, f"from {node.module} import {alias.name}"))
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Attribute) and _private(node.attr)):
                continue
            owner = node.value
            if isinstance(owner, ast.Name) and owner.id in ("self", "cls"):
                continue
            if isinstance(owner, ast.Call) and isinstance(owner.func, ast.Name) and owner.func.id == "super":
                continue
            via_import = isinstance(owner, ast.Name) and owner.id in imported
            if via_import or node.attr not in defined:
                found.append((name, node.attr, node.lineno, ast.unparse(node)))
    reaching = [f"{module}:{line} {text}" for module, attr, line, text in found
                if (module, attr) not in PRIVATE_EXCEPTIONS and ("*", attr) not in PRIVATE_EXCEPTIONS]
    assert reaching == [], "make it public (or add a reasoned exception):\n" + "\n".join(sorted(reaching))
    used = {(m, a) for m, a, _, _ in found} | {("*", a) for _, a, _, _ in found}
    assert set(PRIVATE_EXCEPTIONS) <= used, f"exceptions no longer needed: {sorted(set(PRIVATE_EXCEPTIONS) - used)}"


MAX_LINES = 500


def test_a_module_over_500_lines_says_why_in_its_opening_docstring():
    """A file is a room with one purpose: one over MAX_LINES lines either is split by purpose or its docstring
    has a line starting `Long because:` giving the reason."""
    unexplained = []
    for name, path in SOURCE.items():
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines > MAX_LINES:
            doc = ast.get_docstring(_tree(name)) or ""
            if not any(line.startswith("Long because:") for line in doc.splitlines()):
                unexplained.append(f"{path.relative_to(path.parents[len(name.split('.')) - 1])}: {lines} lines")
    assert unexplained == [], "split by purpose, or say why in the docstring (`Long because: ...`):\n" + \
        "\n".join(unexplained)
