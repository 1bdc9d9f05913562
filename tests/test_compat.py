"""What pcp_tui/compat.py relies on in Textual, Rich, textual-serve and the MCP SDK is still there and still works
as it did: each test fails when upstream renames, removes or rewires the private code pcp uses."""

from __future__ import annotations

import ast
import contextvars
import inspect
import io
from pathlib import Path

from rich.console import Console

from pcp_tui import compat

ROOT = Path(__file__).resolve().parent.parent
FRAMEWORKS = ("textual", "rich", "textual_serve", "mcp")
# Left where it is, for now: Document._render_later sets textual._context.active_app in its worker thread (no
# public setter). Routed through compat.py, tests/tui/test_loop_work.py's "late render dropped" check failed 3
# runs in 7 (0 in 8 as it is); why is not understood yet.
LEFT = {("pcp_tui/widgets/document.py", "textual._context")}


def parameters(function: object) -> list[str]:
    return list(inspect.signature(function).parameters)  # type: ignore[arg-type]


def test_scroll_view_size_updated():
    from textual.scroll_view import ScrollView

    assert "_size_updated" in vars(ScrollView)
    assert parameters(ScrollView._size_updated) == ["self", "size", "virtual_size", "container_size", "layout"]


def test_widget_scroll_update():
    from textual.widget import Widget

    assert parameters(Widget._scroll_update) == ["self", "virtual_size"]


def test_active_app_is_a_context_variable():
    from textual._context import active_app

    assert isinstance(active_app, contextvars.ContextVar)


def test_footer_key_keeps_its_state_in_disabled():
    FooterKey, KeyGroup = compat.footer_parts()
    from textual.widget import Widget

    assert issubclass(FooterKey, Widget) and issubclass(KeyGroup, Widget)
    key = FooterKey("f1", "F1", "Help", "help", disabled=True)
    assert key._disabled is True
    compat.set_footer_key_enabled(key, True)
    assert key._disabled is False
    assert "self._disabled" in inspect.getsource(FooterKey.on_mouse_down)  # a click on a disabled key rings


def test_rich_render_buffer_sees_every_segment():
    """A control sequence in printed text reaches the terminal as visible symbols, styles still apply."""
    assert parameters(Console._render_buffer) == ["self", "buffer"]
    out = io.StringIO()
    console = compat.SafeConsole(file=out, force_terminal=True, color_system="standard", markup=False,
                                 emoji=False, highlight=False)
    from rich.text import Text

    console.print(Text("title \x1b]2;owned\x07 here", style="bold"))
    written = out.getvalue()
    assert "\x1b]2;" not in written and "\x07" not in written
    assert "owned" in written and "\x1b[1m" in written  # the text, and Rich's own style codes


def test_mcp_lowlevel_request_handlers():
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("probe")
    handlers = compat.lowlevel_server(server)._request_handlers
    assert isinstance(handlers, dict) and "prompts/list" in handlers and "tools/list" in handlers
    compat.withdraw_request_handlers(server, ["prompts/list"])
    assert "prompts/list" not in handlers and "tools/list" in handlers


def test_textual_serve_make_app():
    from textual_serve.server import Server

    assert inspect.iscoroutinefunction(Server._make_app) and parameters(Server._make_app) == ["self"]

    class Probe(compat.ServeAppHook, Server):
        configured: list[object] = []

        def configure_app(self, app: object) -> None:
            self.configured.append(app)

    import asyncio

    probe = Probe("true")
    app = asyncio.run(probe._make_app())
    assert Probe.configured == [app]


def test_textual_serve_serve_is_what_the_hook_runs():
    """ServeAppHook.serve runs textual-serve's serve in its own words, but for the after-listen announcement: what
    it calls must still be there, and textual-serve's own must still run aiohttp with signals left to it."""
    from textual_serve.server import Server

    source = inspect.getsource(Server.serve)
    assert "web.run_app(" in source and "handle_signals=False" in source and "self.request_exit" in source
    assert parameters(Server.initialize_logging) == ["self"] and parameters(Server.request_exit) == ["self"]
    server = Server("true", host="127.0.0.1", port=1)
    assert (server.host, server.port) == ("127.0.0.1", 1)


def test_toggle_button_draws_its_box_with_button():
    from textual.widgets._toggle_button import ToggleButton

    assert isinstance(vars(ToggleButton)["_button"], property)
    assert "self._button" in inspect.getsource(ToggleButton.render)


def test_no_private_framework_code_outside_compat():
    """No module of pcp_tui but compat.py imports a framework's private module or touches a framework
    object's private attribute (`_name` on something that is not pcp's own)."""
    offenders = []
    for path in sorted((ROOT / "pcp_tui").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel == "pcp_tui/compat.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] in FRAMEWORKS \
                    and any(part.startswith("_") for part in node.module.split(".")) \
                    and (rel, node.module) not in LEFT:
                offenders.append(f"{rel}:{node.lineno}: from {node.module} import ...")
            if isinstance(node, ast.FunctionDef) and node.name in {"_size_updated", "_render_buffer",
                                                                   "_make_app", "_scroll_update", "_button"}:
                offenders.append(f"{rel}:{node.lineno}: overrides {node.name}")
            if isinstance(node, ast.Attribute) and node.attr in {"_lowlevel_server", "_request_handlers",
                                                                 "_scroll_update", "_disabled", "_size_updated",
                                                                 "_render_buffer", "_make_app"}:
                offenders.append(f"{rel}:{node.lineno}: {ast.unparse(node)}")
    assert not offenders, "private framework code outside pcp_tui/compat.py:\n" + "\n".join(offenders)
