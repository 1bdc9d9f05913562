"""`pcp serve`: the app in a browser through textual-serve, behind the local-server guard, loading nothing remote."""

from __future__ import annotations

import re
import shlex
import sys
import tempfile
from pathlib import Path
from typing import Any

from textual_serve.server import Server

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


class GuardedServer(Server):
    """textual-serve on 127.0.0.1 only, every request through `guard`, the page self-contained."""

    def __init__(self, command: str, guard: LocalGuard, title: str = "pcp") -> None:
        super().__init__(command, host="127.0.0.1", port=guard.port, title=title)
        self.guard = guard
        self._templates_dir = tempfile.TemporaryDirectory(prefix="pcp-serve-")
        self.templates_path = offline_templates(self.templates_path, Path(self._templates_dir.name))

    async def _make_app(self) -> Any:
        app = await super()._make_app()
        app.middlewares.append(self.guard.aiohttp_middleware())
        return app

    async def on_startup(self, app: Any) -> None:
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
    GuardedServer(app_command(db, demo), LocalGuard(port)).serve()
    return 0
