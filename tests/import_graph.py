"""The project's import graph read from source with `ast` (no import runs), for the structure tests.

An edge A -> B means module A imports module B when it runs: at module level or inside a function body.
Imports under `if TYPE_CHECKING:` are left out (they never run). `from pkg import name` points at the submodule
`pkg.name` when there is one, else at `pkg` itself; a parent package's own `__init__` is not an edge.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Import:
    target: str  # a project module, or the top-level name of an outside one ("textual")
    line: int
    module_level: bool  # False: inside a function (runs when the function does)


def modules(*packages: str) -> dict[str, Path]:
    """Every module of `packages` by dotted name."""
    found = {}
    for package in packages:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or \
        (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _statements(tree: ast.AST) -> list[tuple[ast.Import | ast.ImportFrom, bool]]:
    """Each run-time import statement with whether it runs at module import (not inside a def or lambda)."""
    found: list[tuple[ast.Import | ast.ImportFrom, bool]] = []

    def walk(node: ast.AST, top: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child.test):
                for other in child.orelse:
                    visit(other, top)
                continue
            visit(child, top)

    def visit(node: ast.AST, top: bool) -> None:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found.append((node, top))
        walk(node, top and not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)))

    walk(tree, True)
    return found


def imports(name: str, known: dict[str, Path]) -> list[Import]:
    """What module `name` imports at run time: project modules by dotted name, others by top-level name."""
    path = known[name]
    here = name if path.name == "__init__.py" else name.rpartition(".")[0]

    def project(dotted: str) -> str | None:
        while dotted and dotted not in known:
            dotted = dotted.rpartition(".")[0]
        return dotted or None

    out = []
    for node, top in _statements(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        else:
            base = node.module or ""
            if node.level:
                package = here
                for _ in range(node.level - 1):
                    package = package.rpartition(".")[0]
                base = f"{package}.{base}" if base else package
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]
        for target in targets:
            inside = project(target)
            out.append(Import(inside or target.split(".")[0], node.lineno, top))
    return [i for i in out if i.target != name]


def graph(*packages: str, module_level_only: bool = False) -> dict[str, dict[str, int]]:
    """module -> {imported project module: first line}, over `packages` (edges to modules outside them kept)."""
    known = modules(*packages)
    edges: dict[str, dict[str, int]] = {}
    for name in known:
        edges[name] = {}
        for i in imports(name, known):
            if (i.module_level or not module_level_only) and i.target not in edges[name]:
                edges[name][i.target] = i.line
    return edges


def strongly_connected(edges: dict[str, dict[str, int]]) -> list[list[str]]:
    """Tarjan's strongly connected components of the graph (iterative: no recursion limit)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in edges:
        if start in index:
            continue
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in edges:
                    continue
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    found.append(sorted(component))
    return found


def cycle_in(component: list[str], edges: dict[str, dict[str, int]]) -> list[str]:
    """One concrete loop through a component: `module (line N)` steps, N the line of the import taken."""
    members = set(component)
    start = component[0]
    # breadth-first from start back to start, inside the component
    previous: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for child in sorted(edges[node]):
                if child not in members:
                    continue
                if child == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(previous[path[-1]])
                    path.reverse()
                    path.append(start)
                    return [f"{a} (line {edges[a][b]})" for a, b in zip(path, path[1:], strict=False)] + [start]
                if child not in previous:
                    previous[child] = node
                    following.append(child)
        frontier = following
    return component


def reachable(start: str, edges: dict[str, dict[str, int]]) -> dict[str, list[str]]:
    """Every module (project or outside) reachable from `start`, with one import path to it."""
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for child in sorted(edges.get(node, {})):
                if child not in paths:
                    paths[child] = paths[node] + [child]
                    following.append(child)
        frontier = following
    return paths
