"""`pcp serve` behind the local-server guard (issue 12 item 16): loopback, same origin, a secret; nothing remote."""

from __future__ import annotations

import re
import sys

import pytest
from aiohttp.test_utils import TestClient, TestServer

from pcp_tui.serve.guard import COOKIE, LocalGuard
from pcp_tui.serve.web import GuardedServer

PORT = 8123
HOST = f"127.0.0.1:{PORT}"
ORIGIN = f"http://{HOST}"


@pytest.fixture
async def client():
    guard = LocalGuard(PORT)
    server = GuardedServer(f"{sys.executable} -c pass", guard)
    app = await server._make_app()
    async with TestClient(TestServer(app)) as c:
        yield c, guard


async def test_the_page_needs_the_secret_and_sets_a_strict_cookie(client):
    c, guard = client
    refused = await c.get("/", headers={"Host": HOST})
    assert refused.status == 403 and "secret" in await refused.text()
    wrong = await c.get("/?token=guess", headers={"Host": HOST})
    assert wrong.status == 403
    page = await c.get(f"/?token={guard.secret}", headers={"Host": HOST})
    assert page.status == 200
    cookie = page.headers["Set-Cookie"]
    assert f"{COOKIE}={guard.secret}" in cookie and "HttpOnly" in cookie and "SameSite=Strict" in cookie
    assert page.headers["Referrer-Policy"] == "no-referrer"


async def test_the_served_page_loads_nothing_from_outside_the_machine(client):
    c, guard = client
    html = await (await c.get(f"/?token={guard.secret}", headers={"Host": HOST})).text()
    urls = re.findall(r"(?:href|src)=\"([^\"]+)\"", html) + re.findall(r"url\(\"?([^\")]+)\"?\)", html)
    assert urls
    assert all(u.startswith(f"http://{HOST}/") for u in urls), urls
    assert "googleapis" not in html and "@font-face" in html


async def test_a_rebound_host_name_is_refused(client):
    c, guard = client
    response = await c.get(f"/?token={guard.secret}", headers={"Host": f"evil.example:{PORT}"})
    assert response.status == 403 and "Host" in await response.text()


async def test_a_websocket_from_another_origin_is_refused_even_with_the_secret(client):
    c, guard = client
    headers = {"Host": HOST, "Cookie": f"{COOKIE}={guard.secret}", "Upgrade": "websocket", "Connection": "Upgrade",
               "Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ=="}
    foreign = await c.get("/ws", headers={**headers, "Origin": "http://evil.example"})
    assert foreign.status == 403 and "WebSocket" in await foreign.text()
    no_origin = await c.get("/ws", headers=headers)
    assert no_origin.status == 403
    no_secret = await c.get("/ws", headers={**headers, "Origin": ORIGIN, "Cookie": ""})
    assert no_secret.status == 403


def test_the_guard_refuses_what_is_not_local():
    guard = LocalGuard(PORT)
    ok = dict(remote="127.0.0.1", host=HOST, origin=ORIGIN, token=guard.secret, websocket=True)
    assert guard.refusal(**ok) is None
    assert "this machine" in guard.refusal(**{**ok, "remote": "192.168.1.9"})
    assert guard.url == f"http://127.0.0.1:{PORT}/?token={guard.secret}"
    assert LocalGuard(PORT).secret != guard.secret
