"""`pcp serve` stops on Ctrl-C at once, a browser tab open or not, and says so as every pcp command does (130)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import socket
import subprocess
import sys
from pathlib import Path

import aiohttp

REPO = Path(__file__).resolve().parents[2]


def _listens(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=5).close()
    except ConnectionRefusedError:
        return False
    return True


async def test_ctrl_c_stops_pcp_serve_at_once_with_a_tab_open(tmp_path):
    """The tab's app session is ended on Ctrl-C: it ran on until aiohttp's shutdown timeout (60 s; 23 s here when
    the tab's websocket went quiet), and pcp serve then exited 0 without a word."""
    from store import Store

    Store.open(tmp_path / "s.db").close()
    with socket.socket() as probe:  # a free port (pcp serve takes no port 0)
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {k: v for k, v in os.environ.items() if k != "PCP_DB"}
    proc = subprocess.Popen([sys.executable, "-m", "pcp_tui.cli", "--db", str(tmp_path / "s.db"), "serve", "--port",
                             str(port)], cwd=str(REPO), env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)  # (its app children too)
    try:
        url = re.search(r"http://\S+", proc.stderr.readline()).group(0)  # type: ignore[union-attr]
        jar = aiohttp.CookieJar(unsafe=True)  # (the cookie of 127.0.0.1)
        assert _listens(port)  # (the address is printed once it listens)
        async with aiohttp.ClientSession(cookie_jar=jar, timeout=aiohttp.ClientTimeout(total=60)) as session:
            async with session.get(url) as page:
                assert page.status == 200
            async with session.ws_connect(f"ws://127.0.0.1:{port}/ws",
                                          headers={"Origin": f"http://127.0.0.1:{port}"}) as ws:
                first = await ws.receive(timeout=60)
                assert first.type == aiohttp.WSMsgType.BINARY  # the app runs in the tab
                proc.send_signal(signal.SIGINT)
                async with asyncio.timeout(15):  # at once: well within 15 s, under load too
                    async for _ in ws:  # the tab sees its session end (a browser answers the close)
                        pass
                    code = await asyncio.to_thread(proc.wait)
        assert code == 130 and proc.stderr.read().splitlines()[-1] == "pcp: interrupted"  # type: ignore[union-attr]
    finally:
        with contextlib.suppress(ProcessLookupError):  # a failed run leaves no app behind either
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


# The child's aiohttp site stops before it binds, says so on stderr, and goes on when the test writes a line.
_GATED = """
import runpy, sys
from aiohttp import web
start = web.TCPSite.start
async def gated(self):
    print("at the gate", file=sys.stderr, flush=True)
    sys.stdin.readline()
    await start(self)
web.TCPSite.start = gated
sys.argv = ["pcp", *sys.argv[1:]]
runpy.run_module("pcp_tui.cli", run_name="__main__", alter_sys=True)
"""


def test_pcp_serve_prints_its_address_only_once_it_listens(tmp_path):
    """The address was printed as the server started (textual-serve's on_startup), before its port was bound: an
    address taken at once could be refused. Here the bind waits for the test: the address must come after it, and
    take a connection as soon as it is read."""
    from store import Store

    Store.open(tmp_path / "s.db").close()
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {k: v for k, v in os.environ.items() if k != "PCP_DB"}
    proc = subprocess.Popen([sys.executable, "-c", _GATED, "--db", str(tmp_path / "s.db"), "serve", "--port",
                             str(port)], cwd=str(REPO), env=env, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        assert proc.stderr.readline() == "at the gate\n"  # (not the address first)
        proc.stdin.write("\n")
        proc.stdin.flush()
        assert "pcp: serving the app on http://127.0.0.1:" in proc.stderr.readline()
        assert _listens(port)
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=60) == 130
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
