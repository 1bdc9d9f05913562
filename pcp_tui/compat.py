"""Every use of a framework's private code (Textual, Rich, textual-serve, the MCP SDK), in one place.

Each has a comment saying why no public API does it and the upstream issue where there is one;
tests/test_compat.py fails when upstream changes what it relies on. Imports no Textual at module import:
the `pcp` command and the MCP server use their parts of it without loading the app's framework.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.segment import Segment

from .text import printable

if TYPE_CHECKING:
    from mcp.server.lowlevel import Server as LowlevelServer
    from mcp.server.mcpserver import MCPServer
    from textual.geometry import Size
    from textual.widget import Widget
    from textual.widgets._footer import FooterKey as FooterKeyType
    from textual.widgets._footer import KeyGroup as KeyGroupType


__all__ = ["FooterKeyType", "KeyGroupType", "SafeConsole", "ServeAppHook", "SizeUpdateHook", "ToggleButtonHook", "footer_parts",
           "lowlevel_server", "scroll_update", "set_footer_key_enabled",
           "withdraw_request_handlers"]  # (the two types for annotations only: the footer's widgets)


# --- Rich ---


class SafeConsole(Console):
    """A console whose text never carries a control character to the terminal: stored text (an import, a
    model's write) with ESC ] 2 (window title) or ESC ] 52 (clipboard) is printed as visible symbols (ESC as
    ␛, printable). Rich's own control segments (cursor moves, styles) pass as they are.

    Private: Console._render_buffer is the one place every printed segment goes through. Rich's public
    RenderHook sees renderables, not the segments a Progress or Live display adds after it; no upstream issue
    asks for a segment hook (none found)."""

    def _render_buffer(self, buffer: Iterable[Segment]) -> str:
        return super()._render_buffer(
            segment if segment.control else Segment(printable(segment.text), segment.style)
            for segment in buffer)


# --- Textual ---


class ToggleButtonHook:
    """A mixin (before Checkbox among the bases) whose `drawn_button` draws a toggle button's box.

    Private: ToggleButton._button is the property ToggleButton.render draws the box with; Textual has no public
    way to draw the box differently by state (its X shows in both states, only the colour differs). No upstream
    issue found."""

    @property
    def _button(self) -> Any:
        return self.drawn_button()

    def drawn_button(self) -> Any:
        raise NotImplementedError


class SizeUpdateHook:
    """A mixin (before a scroll view among the bases) that lets `size_unchanged` skip a resize.

    Private: ScrollView._size_updated is where a layout pass hands a scroll view its sizes; Textual has no
    public hook before it repaints the scrollbars (on_resize comes after). No upstream issue found."""

    def size_unchanged(self, size: Size, container_size: Size) -> bool:
        return False

    def _size_updated(self, size: Size, virtual_size: Size, container_size: Size, layout: bool = True) -> bool:
        if self.size_unchanged(size, container_size):  # a layout pass elsewhere: nothing to redo here
            return False
        # (a mixin: mypy cannot see the scroll view after it among the bases)
        return bool(super()._size_updated(size, virtual_size, container_size, layout))  # type: ignore[misc]


def scroll_update(widget: Widget, virtual_size: Size) -> None:
    """Update a scroll view's scrollbars for a new virtual size, asking for a layout pass only when one comes
    or goes. Private: Widget._scroll_update; the public `virtual_size` reactive always asks for a layout pass
    of the screen. No upstream issue found."""
    widget._scroll_update(virtual_size)


def footer_parts() -> tuple[type[FooterKeyType], type[KeyGroupType]]:
    """The footer's key and key-group widgets. Private: textual.widgets._footer (Textual exports only
    Footer); FitFooter changes the keys in place instead of composing them again. No upstream issue found."""
    from textual.widgets._footer import FooterKey, KeyGroup

    return FooterKey, KeyGroup


def set_footer_key_enabled(key: FooterKeyType, enabled: bool) -> None:
    """Private: FooterKey keeps its state in `_disabled` (its constructor's `disabled`; a click then rings)."""
    key._disabled = not enabled


# --- the MCP SDK ---


def lowlevel_server(server: MCPServer) -> LowlevelServer[Any]:
    """The SDK's low-level server under MCPServer, which runs a session over pcp's own stdio streams (the
    SDK's stdio runner does the same). Private: MCPServer._lowlevel_server."""
    return server._lowlevel_server


def withdraw_request_handlers(server: MCPServer, methods: Iterable[str]) -> None:
    """Answer `methods` as unknown (and stop advertising their capabilities): MCPServer registers prompts,
    resources, completion and logging handlers whether or not anything is behind them.
    Private: the low-level server's `_request_handlers`. Upstream:
    https://github.com/modelcontextprotocol/python-sdk/issues/2473 (capabilities declared unconditionally)."""
    handlers = lowlevel_server(server)._request_handlers
    for method in methods:
        handlers.pop(method, None)


# --- textual-serve ---


class ServeAppHook:
    """A mixin (before textual_serve.server.Server among the bases) calling `configure_app` with the aiohttp
    application it builds, to add middleware, and `announce` once the port listens. Private: Server._make_app;
    textual-serve takes no middleware, and its own `serve` prints from on_startup, before the port is bound (its
    run_app's `print` hook, which runs once the sites have started, is given a no-op). No upstream issue found."""

    def configure_app(self, app: Any) -> None:
        pass

    def announce(self) -> None:
        pass

    def serve(self, debug: bool = False) -> None:
        """textual-serve's Server.serve, with `announce` as aiohttp's after-listen `print` hook."""
        import asyncio
        import signal

        from aiohttp import web

        server: Any = self
        server.debug = debug
        server.initialize_logging()
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        for signum in (signal.SIGINT, signal.SIGTERM):  # set before the address is printed
            loop.add_signal_handler(signum, server.request_exit)
        web.run_app(server._make_app(), host=server.host, port=server.port, handle_signals=False, loop=loop,
                    print=lambda *_: self.announce())

    async def _make_app(self) -> Any:
        app = await super()._make_app()  # type: ignore[misc]  # (a mixin: the server follows it)
        self.configure_app(app)
        return app
