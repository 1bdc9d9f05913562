"""`pcp serve`: the app in a browser through textual-serve, behind the local-server guard, loading nothing remote."""

from __future__ import annotations

import asyncio
import re
import shlex
import sys
import tempfile
from pathlib import Path
from typing import Any

from textual_serve.server import Server

from ..compat import ServeAppHook
from .guard import LocalGuard

_REMOTE_LINK = re.compile(r"<link[^>]*href=\"https?://[^\"]*\"[^>]*/?>", re.S)
# The font the page asked Google for ships inside textual-serve's own static folder.
_LOCAL_FONT = """<style>
      @font-face { font-family: "Roboto Mono"; font-style: normal;
        src: url("{{ config.static.url }}fonts/RobotoMono-VariableFont_wght.ttf") format("truetype"); }
      @font-face { font-family: "Roboto Mono"; font-style: italic;
        src: url("{{ config.static.url }}fonts/RobotoMono-Italic-VariableFont_wght.ttf") format("truetype"); }
    </style>
"""


def offline_templates(source: Path, target: Path) -> Path:
    """Copy textual-serve's page template with every remote stylesheet replaced by local fonts."""
    target.mkdir(mode=0o700, parents=True, exist_ok=True)
    for template in source.glob("*.html"):
        text = _REMOTE_LINK.sub("", template.read_text(encoding="utf-8"))
        text = text.replace("</head>", _LOCAL_FONT + "  </head>", 1)
        (target / template.name).write_text(text, encoding="utf-8")
    return target


class GuardedServer(ServeAppHook, Server):
    """textual-serve on 127.0.0.1 only, every request through `guard`, the page self-contained."""

    def __init__(self, command: str, guard: LocalGuard, title: str = "pcp") -> None:
        super().__init__(command, host="127.0.0.1", port=guard.port, title=title)
        self.guard = guard
        self._templates_dir = tempfile.TemporaryDirectory(prefix="pcp-serve-")
        self.templates_path = offline_templates(self.templates_path, Path(self._templates_dir.name))

        self.interrupted = False
        self._sessions: set[asyncio.Task[Any]] = set()

    def configure_app(self, app: Any) -> None:
        app.middlewares.append(self.guard.aiohttp_middleware())

    def request_exit(self) -> None:
        self.interrupted = True  # Ctrl-C (textual-serve's SIGINT handler, set before the address is printed)
        super().request_exit()

    async def handle_websocket(self, request: Any) -> Any:
        """One browser tab's app session, kept so that a Ctrl-C can end it."""
        task = asyncio.current_task()
        assert task is not None
        self._sessions.add(task)
        try:
            return await super().handle_websocket(request)
        finally:
            self._sessions.discard(task)

    async def on_shutdown(self, app: Any) -> None:
        # An open tab's session would otherwise run on until aiohttp's shutdown timeout (60 s) after a Ctrl-C:
        # cancelled, it closes its websocket and quits its app (textual-serve's own handling of a cancel).
        for task in list(self._sessions):
            task.cancel()
        await super().on_shutdown(app)

    async def on_startup(self, app: Any) -> None:
        pass  # (textual-serve's prints its logo and an address without the secret, before the port listens)

    def announce(self) -> None:
        """Once the port listens (compat.ServeAppHook.serve)."""
        print(f"pcp: serving the app on {self.guard.url}  (ctrl+c stops)", file=sys.stderr)
        print("pcp: the address carries a secret; anyone who has it can use the app as you.", file=sys.stderr)


def app_command(db: Path | None, demo: bool) -> str:
    """The shell command that starts one app session (what textual-serve runs)."""
    parts = [sys.executable, "-m", "pcp_tui.launch"]
    if db is not None:
        parts += ["--db", str(db.resolve())]
    if demo:
        parts.append("--demo")
    return " ".join(shlex.quote(p) for p in parts)


def serve(db: Path | None, port: int, demo: bool = False) -> int:
    """Serve the app to a browser on 127.0.0.1:port, behind the local-server guard, until interrupted."""
    server = GuardedServer(app_command(db, demo), LocalGuard(port))
    server.serve()
    if server.interrupted:
        raise KeyboardInterrupt  # pcp: interrupted, exit code 130
    return 0
