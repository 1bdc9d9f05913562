"""`pcp mcp --http`: the MCP server over streamable HTTP, on 127.0.0.1 only, behind the local guard.

A request passes when it comes from this machine, addresses 127.0.0.1 or localhost at the served port
(Host), carries no Origin or the server's own (a web page elsewhere is refused), and sends the store's
bearer token (`Authorization: Bearer ...`, the token `pcp mcp --show-token` prints). The session, its
grants and its audit are those of stdio: one PcpMcp serves every HTTP session.
"""

from __future__ import annotations

import signal
import socket
import sys
from pathlib import Path
from typing import Any

from store import stops

from ..serve.guard import LocalGuard
from .token import token, token_path

PATH = "/mcp"


class Guarded:
    """ASGI middleware: every HTTP request through the guard; a refused one gets one line of text."""

    def __init__(self, app: Any, guard: LocalGuard) -> None:
        self.app = app
        self.guard = guard

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers") or []}
        origin = headers.get("origin")
        auth = headers.get("authorization", "")
        bearer = auth[7:].strip() if auth[:7].lower() == "bearer " else None
        why = self.guard.refusal(remote=(scope.get("client") or ("",))[0], host=headers.get("host"), origin=origin,
                                 token=bearer, websocket=False)
        if why is None and origin is not None and origin not in self.guard.origins():
            why = "a request from a web page of another origin is refused"
        if why is None:
            await self.app(scope, receive, send)
            return
        status = 401 if why == self.guard.token_hint else 403
        body = f"pcp: refused: {why}.\n".encode()
        extra = [(b"www-authenticate", b'Bearer realm="pcp"')] if status == 401 else []
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-type", b"text/plain; charset=utf-8"),
                                (b"content-length", str(len(body)).encode())] + extra})
        await send({"type": "http.response.body", "body": body})


def run(pcp: Any, db_path: Path, port: int) -> int:
    """Listen on 127.0.0.1:`port` (0: a free port) until Ctrl-C; prints the address on stderr."""
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(128)  # before the address is printed: a client that connects at once waits, never refused
    port = sock.getsockname()[1]
    guard = LocalGuard(port, token(db_path),
                       token_hint=f"send the token of `pcp mcp --show-token` (kept in {token_path(db_path)}) "
                                  "as Authorization: Bearer <token>")
    app = Guarded(pcp.server.streamable_http_app(streamable_http_path=PATH, host="127.0.0.1"), guard)
    config = uvicorn.Config(app, log_level="warning", timeout_graceful_shutdown=1, lifespan="on")
    server = uvicorn.Server(config)
    interrupted = []

    def stop(signum: int, frame: Any) -> None:
        # Ctrl-C before uvicorn takes SIGINT (it serves then stops at once), and the Ctrl-C it raises again once
        # it has stopped. Set here, not inherited: a process started in the background inherits SIGINT ignored,
        # and a Ctrl-C that came before uvicorn's own handler was lost: the server served on.
        interrupted.append(signum)
        server.should_exit = True

    previous = signal.signal(signal.SIGINT, stop)
    try:
        print(f"pcp: MCP over HTTP on http://127.0.0.1:{port}{PATH} for model client {pcp.client_id!r} "
              f"(bearer token: pcp mcp --show-token; ctrl+c stops)", file=sys.stderr, flush=True)
        stops.reached("mcp-http-listening")  # tests send the Ctrl-C here, before uvicorn runs
        server.run(sockets=[sock])
    finally:
        signal.signal(signal.SIGINT, previous)
    if interrupted:
        raise KeyboardInterrupt  # pcp: interrupted, exit code 130
    return 0
