"""The MCP server's edges: every request gets an answer, and every error starts with its contract code.

Gaps of the SDK's defaults are closed here. A request whose JSON carries a lone
surrogate (``"\\ud800"``) fails the SDK's parser before its id is known, so it was
never answered: such lines are answered here, as `invalid`. Arguments of the wrong type
fail the SDK's validation with a multi-line dump: they become one `invalid:` line
naming the fields (never echoing the values, which are the caller's data), and are audited like a store
failure (as is a call of an unknown tool). When stdin closes, the requests still pending are answered before
the server exits.
"""

from __future__ import annotations

import io
import json
import sys
from typing import Any, AsyncIterator, Awaitable, Callable

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from pydantic import ValidationError

SURROGATE_MESSAGE = ("invalid: the request holds text that is not valid Unicode (a lone surrogate escape such as "
                     "\\ud800); send the text as UTF-8.")


def package_version() -> str:
    """pcp's version, as installed (serverInfo.version)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("pcp")
    except PackageNotFoundError:
        return "0+unknown"


class PcpServer(MCPServer):
    """MCPServer whose tool errors all read `code: message`, whose refusals are audited, and whose tools list
    their outputSchema (built when first listed, so that answering `initialize` needs none of it)."""

    output_schemas: Callable[[], dict[str, dict[str, Any]]] | None = None
    on_refusal: Callable[[str, str], Awaitable[None]] | None = None

    async def list_tools(self) -> Any:
        tools = await super().list_tools()
        schemas = self.output_schemas() if self.output_schemas is not None else {}
        for tool in tools:
            tool.output_schema = schemas.get(tool.name)
            tool.input_schema = {**tool.input_schema, "additionalProperties": False}  # see call_tool
        return tools

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        tool = self._tool_manager.get_tool(name)
        if tool is not None:
            # The SDK drops an argument it does not know; a model that misnamed one would never learn why.
            known = (tool.parameters or {}).get("properties") or {}
            unknown = [str(key) for key in arguments if key not in known]
            if unknown:
                refused = ToolError(unknown_arguments(name, unknown, list(known)))
                if self.on_refusal is not None:
                    await self.on_refusal(name, str(refused))
                raise refused
        try:
            return await super().call_tool(name, arguments, context)
        except UnexpectedToolError as exc:
            raise ToolError(f"internal: the tool {name} failed unexpectedly ({type(exc.__cause__).__name__}).") from exc
        except ToolError as exc:
            if isinstance(exc.__cause__, ValidationError):
                refused = ToolError(argument_errors(exc.__cause__))
            elif str(exc).split(":", 1)[0] not in CODES:
                refused = ToolError(f"invalid: {exc}")
            else:
                raise
            if self.on_refusal is not None:
                await self.on_refusal(name, str(refused))
            raise refused from exc.__cause__


DRAIN_SECONDS = 120  # how long requests pending at end of input may still take

CODES = {"not_found", "forbidden", "conflict", "invalid", "cycle", "limit", "unsupported", "internal"}


def unknown_arguments(tool: str, unknown: list[str], known: list[str]) -> str:
    """One line naming the arguments a tool does not take (each cut short: they are the caller's text)."""
    names = ", ".join(f"`{name[:60]}`" for name in unknown[:5]) + (" …" if len(unknown) > 5 else "")
    return (f"invalid: {tool} takes no argument {names}; its arguments are {', '.join(known) or 'none'}.")


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


def _request_id(line: str) -> Any:
    """The id of a JSON-RPC request line (None for a notification or a line that is no request)."""
    try:
        message = json.loads(line)
    except (ValueError, RecursionError):
        return None
    if isinstance(message, dict) and "method" in message and isinstance(message.get("id"), (str, int)):
        return message["id"]
    return None


def _answered_id(text: str) -> Any:
    try:
        message = json.loads(text)
    except (ValueError, RecursionError):
        return None
    if isinstance(message, dict) and ("result" in message or "error" in message):
        return message.get("id")
    return None


class _Stdout:
    """Whole lines to the client, one writer at a time (the SDK's writer and the refusals share it); it keeps
    count of the requests not yet answered."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream
        self._lock = anyio.Lock()
        self.pending: set[Any] = set()
        self.all_answered = anyio.Event()

    async def write(self, text: str) -> None:
        async with self._lock:
            await self._stream.write(text)
            await self._stream.flush()
        if self.pending:
            for line in text.splitlines():
                self.pending.discard(_answered_id(line))
            if not self.pending:
                self.all_answered.set()

    async def flush(self) -> None:
        return None


class _Stdin:
    """The client's lines, less those answered here."""

    def __init__(self, stream: Any, stdout: _Stdout, server: PcpServer | None = None) -> None:
        self._stream = stream
        self._stdout = stdout
        self._server = server

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[str]:
        async for line in self._stream:
            answer = refusal_for(line) if "\\u" in line else None
            if answer is None:
                ident = _request_id(line)
                if ident is not None:
                    self._stdout.pending.add(ident)
                    self._stdout.all_answered = anyio.Event()
                yield line
            elif answer:
                await self._stdout.write(answer + "\n")
                await self._audit(line)
        # stdin closed: the requests already read are answered before the session ends
        if self._stdout.pending:
            with anyio.move_on_after(DRAIN_SECONDS):
                await self._stdout.all_answered.wait()


    async def _audit(self, line: str) -> None:
        """A tools/call refused here is audited like one the SDK refused."""
        on_refusal = getattr(self._server, "on_refusal", None)
        if on_refusal is None or '"tools/call"' not in line:
            return
        message = json.loads(line)
        if not isinstance(message, dict) or message.get("method") != "tools/call":
            return
        params = message.get("params")
        name = params.get("name") if isinstance(params, dict) else None
        await on_refusal(name if isinstance(name, str) and not _has_lone_surrogate(name) else "", SURROGATE_MESSAGE)


async def run_stdio(server: MCPServer) -> None:
    """Serve `server` over stdin and stdout, answering every request."""
    from mcp.server.stdio import stdio_server

    stdout = _Stdout(anyio.wrap_file(io.TextIOWrapper(sys.stdout.buffer, encoding="utf-8", write_through=True)))
    stdin = _Stdin(anyio.wrap_file(io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace")), stdout,
                   server if isinstance(server, PcpServer) else None)
    lowlevel = server._lowlevel_server  # the SDK's own stdio runner does the same
    async with stdio_server(stdin=stdin, stdout=stdout) as (read_stream, write_stream):  # type: ignore[arg-type]
        await lowlevel.run(read_stream, write_stream, lowlevel.create_initialization_options())
