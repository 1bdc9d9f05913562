"""No run-time import circle in pcp_tui or store (issue 32): read from source with `ast`, so a loop that
happens to work today (an import moved into a function to dodge it) is still found. Imports under
`if TYPE_CHECKING:` do not count; imports inside functions do (they run on first call)."""

from import_graph import cycle_in, graph, strongly_connected


def test_pcp_tui_and_store_have_no_run_time_import_circle():
    edges = graph("pcp_tui", "store")
    assert len(edges) > 100  # the walk found the packages (a wrong root would pass vacuously)
    circles = [c for c in strongly_connected(edges) if len(c) > 1]
    described = "\n".join(f"{len(c)} modules import each other: {', '.join(c)}\n  e.g. {' -> '.join(cycle_in(c, edges))}"
                          for c in circles)
    assert not circles, f"run-time import circles (break each with a lower module both sides can import):\n{described}"


def test_the_walk_sees_function_level_imports_and_skips_type_checking_ones(tmp_path, monkeypatch):
    """The graph's own rules, on a three-module package built here."""
    import import_graph

    package = tmp_path / "loop"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("def f():\n    from . import b\n")
    (package / "b.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import c\n"
                                  "from .a import f\n")
    (package / "c.py").write_text("from . import b\n")
    monkeypatch.setattr(import_graph, "ROOT", tmp_path)
    edges = graph("loop")
    assert edges["loop.a"] == {"loop.b": 2} and edges["loop.b"] == {"loop.a": 4, "typing": 1}
    assert [c for c in strongly_connected(edges) if len(c) > 1] == [["loop.a", "loop.b"]]
