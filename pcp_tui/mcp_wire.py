"""The MCP server's edges: every request gets an answer, and every error starts with its contract code.

Two gaps of the SDK's defaults are closed here. A request whose JSON carries a lone
surrogate (``"\\ud800"``) fails the SDK's parser before its id is known, so it was
never answered: such lines are answered here, as `invalid`. Arguments of the wrong type
fail the SDK's validation with a multi-line dump: they become one `invalid:` line
naming the fields (never echoing the values, which are the caller's data).
"""

from __future__ import annotations

import io
import json
import sys
from typing import Any, AsyncIterator

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from pydantic import ValidationError

SURROGATE_MESSAGE = ("invalid: the request holds text that is not valid Unicode (a lone surrogate escape such as "
                     "\\ud800); send the text as UTF-8.")


class PcpServer(MCPServer):
    """MCPServer whose tool errors all read `code: message`."""

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        try:
            return await super().call_tool(name, arguments, context)
        except UnexpectedToolError as exc:
            raise ToolError(f"internal: the tool {name} failed unexpectedly ({type(exc.__cause__).__name__}).") from exc
        except ToolError as exc:
            if isinstance(exc.__cause__, ValidationError):
                raise ToolError(argument_errors(exc.__cause__)) from exc.__cause__
            if str(exc).split(":", 1)[0] not in CODES:
                raise ToolError(f"invalid: {exc}") from exc
            raise


CODES = {"not_found", "forbidden", "conflict", "invalid", "cycle", "limit", "unsupported", "internal"}


def argument_errors(error: ValidationError) -> str:
    """One line naming each wrong argument and what it should be."""
    parts = []
    for item in error.errors():
        where = ".".join(str(p) for p in item.get("loc", ()) if p != "arguments") or "arguments"
        parts.append(f"{where}: {item.get('msg', 'wrong type')}")
    return "invalid: " + "; ".join(dict.fromkeys(parts)) + "."


def _has_lone_surrogate(value: Any) -> bool:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                return True
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


def refusal_for(line: str) -> str | None:
    """The answer to a line the SDK cannot read because of a lone surrogate; None for any other line.

    A notification (no id) gets no answer, as JSON-RPC says."""
    try:
        message = json.loads(line)
    except (ValueError, RecursionError):
        return None
    if not _has_lone_surrogate(message):
        return None
    if not isinstance(message, dict) or "id" not in message or _has_lone_surrogate(message.get("id")):
        return ""
    ident = message["id"]
    if message.get("method") == "tools/call":
        body: dict = {"result": {"content": [{"type": "text", "text": SURROGATE_MESSAGE}], "isError": True}}
    else:
        body = {"error": {"code": -32602, "message": SURROGATE_MESSAGE}}
    return json.dumps({"jsonrpc": "2.0", "id": ident, **body})


class _Stdout:
    """Whole lines to the client, one writer at a time (the SDK's writer and the refusals share it)."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream
        self._lock = anyio.Lock()

    async def write(self, text: str) -> None:
        async with self._lock:
            await self._stream.write(text)
            await self._stream.flush()

    async def flush(self) -> None:
        return None


class _Stdin:
    """The client's lines, less those answered here."""

    def __init__(self, stream: Any, stdout: _Stdout) -> None:
        self._stream = stream
        self._stdout = stdout

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[str]:
        async for line in self._stream:
            answer = refusal_for(line) if "\\u" in line else None
            if answer is None:
                yield line
            elif answer:
                await self._stdout.write(answer + "\n")


async def run_stdio(server: MCPServer) -> None:
    """Serve `server` over stdin and stdout, answering every request."""
    from mcp.server.stdio import stdio_server

    stdout = _Stdout(anyio.wrap_file(io.TextIOWrapper(sys.stdout.buffer, encoding="utf-8", write_through=True)))
    stdin = _Stdin(anyio.wrap_file(io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace")), stdout)
    lowlevel = server._lowlevel_server  # the SDK's own stdio runner does the same
    async with stdio_server(stdin=stdin, stdout=stdout) as (read_stream, write_stream):  # type: ignore[arg-type]
        await lowlevel.run(read_stream, write_stream, lowlevel.create_initialization_options())
