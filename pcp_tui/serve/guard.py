"""The guard in front of every local server pcp runs (`pcp serve`, `pcp mcp --http`).

A web page open in the user's browser can reach 127.0.0.1 too, so being local is not
enough. The guard admits a request only when
- it comes from the loopback interface (the server binds 127.0.0.1 only),
- its Host header names 127.0.0.1 or localhost at the served port (a DNS-rebound name is refused),
- it carries the server's secret: in the URL pcp printed (?token=...), after which a
  same-site, HttpOnly cookie carries it, and
- for a WebSocket, its Origin is the server's own origin (a foreign page's socket is refused).
"""

from __future__ import annotations

import hmac
import secrets
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable

LOOPBACK_NAMES = ("127.0.0.1", "localhost")
COOKIE = "pcp_token"


@dataclass(frozen=True)
class LocalGuard:
    """Who may talk to a local server on `port`: the holder of `secret`, from the server's own origin."""

    port: int
    secret: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    token_hint: str = "open the address `pcp serve` printed; it carries the server's secret"

    @property
    def url(self) -> str:
        """The address to open: it carries the secret, so only the user who started the server has it."""
        return f"http://127.0.0.1:{self.port}/?token={self.secret}"

    def origins(self) -> set[str]:
        return {f"http://{name}:{self.port}" for name in LOOPBACK_NAMES}

    def refusal(self, *, remote: str | None, host: str | None, origin: str | None, token: str | None,
                websocket: bool) -> str | None:
        """Why a request is refused, or None when it may pass."""
        if remote not in ("127.0.0.1", "::1"):
            return "only this machine may connect"
        if host not in {f"{name}:{self.port}" for name in LOOPBACK_NAMES}:
            return "the request does not address this local server (Host header)"
        if websocket and origin not in self.origins():
            return "a WebSocket is accepted only from the page this server served"
        if not token or not hmac.compare_digest(token.encode(), self.secret.encode()):
            return self.token_hint
        return None

    def aiohttp_middleware(self) -> Callable[..., Awaitable[Any]]:
        """The guard as aiohttp middleware; a refused request gets 403 and one line of text."""
        from aiohttp import web

        @web.middleware
        async def guard(request: Any, handler: Callable[..., Awaitable[Any]]) -> Any:
            from_url = request.query.get("token")
            websocket = request.headers.get("Upgrade", "").lower() == "websocket"
            why = self.refusal(remote=request.remote, host=request.headers.get("Host"),
                               origin=request.headers.get("Origin"), token=from_url or request.cookies.get(COOKIE),
                               websocket=websocket)
            if why is not None:
                return web.Response(status=403, text=f"pcp: refused: {why}.\n")
            response = await handler(request)
            if from_url and not websocket and isinstance(response, web.Response):
                response.set_cookie(COOKIE, self.secret, httponly=True, samesite="Strict", path="/")
            if isinstance(response, web.Response):
                response.headers.setdefault("Referrer-Policy", "no-referrer")  # the URL holds the secret
                response.headers.setdefault("X-Frame-Options", "DENY")
            return response

        return guard
