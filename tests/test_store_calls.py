"""Every store call in the front ends is type-checked: no module of pcp_tui names a store operation in a string
(getattr(store, name), call("list_pages", ...)) except the app's child-process reader (pcp_tui/reads.py), whose
transport must carry the name across the process boundary and whose StoreReader gives it the Store's types."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TRANSPORT = {"pcp_tui/reads.py"}
# Calls that take a word which happens to spell an operation's name, never to call it: key bindings, commands
# and progress tasks named after a screen ("bulk_delete"), a settings key ("sync_folder"), the CLI's renderer.
WORD_TAKERS = {"bindings", "Progress", "startswith", "get", "Command", "run_store"}


def store_operations() -> set[str]:
    """The Store facade's public operations: the methods it binds in __init__ and those it defines."""
    tree = ast.parse((ROOT / "store" / "facade.py").read_text())
    store = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Store")
    names: set[str] = set()
    properties = {n.name for n in store.body if isinstance(n, ast.FunctionDef)
                  and any(ast.unparse(d) == "property" for d in n.decorator_list)}
    for node in ast.walk(store):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Attribute):
            for target in node.targets:
                if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) \
                        and target.value.id == "self":
                    names.add(target.attr)
        elif isinstance(node, ast.FunctionDef) and node.name in {n.name for n in store.body
                                                                  if isinstance(n, ast.FunctionDef)}:
            names.add(node.name)
    return {n for n in names if not n.startswith("_")} - {"open", "close", "with_session"} - properties


def string_calls(source: str, operations: set[str]) -> list[tuple[int, str]]:
    """Where `source` reaches a store operation by a name in a string."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        if isinstance(node.func, ast.Name) and node.func.id in {"getattr", "hasattr"} and len(node.args) >= 2:
            name = node.args[1]
            owner = ast.unparse(node.args[0])
            if isinstance(name, ast.Constant):
                if name.value in operations:
                    found.append((node.lineno, ast.unparse(node)))
            elif "store" in owner or owner == "st":  # a computed name on a store
                found.append((node.lineno, ast.unparse(node)))
            continue
        callee = node.func.attr if isinstance(node.func, ast.Attribute) else ast.unparse(node.func)
        if callee in WORD_TAKERS:
            continue
        for arg in [*node.args, *(k.value for k in node.keywords)]:
            # an operation's name of two words or more (one-word ones, "export" or "doctor", also name the
            # CLI's renderers and the app's tabs and worker groups)
            if isinstance(arg, ast.Constant) and arg.value in operations and "_" in str(arg.value):
                found.append((node.lineno, ast.unparse(node)))
    return found


def test_the_operation_list_is_read():
    operations = store_operations()
    assert {"list_pages", "search_pages", "read_pages", "write_page", "archive_page", "sync_status"} <= operations


def test_only_the_reader_transport_names_store_operations_in_strings():
    operations = store_operations()
    offenders = []
    for path in sorted((ROOT / "pcp_tui").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel in TRANSPORT:
            continue
        offenders += [f"{rel}:{line}: {code}" for line, code in string_calls(path.read_text(), operations)]
    assert not offenders, "store operations called by name (call the typed method instead):\n" + "\n".join(offenders)


def test_the_check_sees_each_way_of_naming_an_operation():
    operations = store_operations()
    for code in ('getattr(store, f"{kind}_page")(page_id, reason)', 'getattr(self.app.store, name)()',
                 'self.app.read("page-window", "list_pages", limit=10)', 'await self._op("search_pages", query)',
                 'getattr(st, "describe_capabilities")()', 'reads.call("inspector", "read_pages", ids)'):
        assert string_calls(code, operations), code
    for code in ('st.list_pages(limit=10)', 'getattr(store, "path", "")', 'commands.bindings("bulk_delete")',
                 'run_store(ctx, lambda st: st.doctor(), "doctor")'):
        assert not string_calls(code, operations), code
