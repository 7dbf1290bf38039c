"""The one module that imports the MCP Python SDK, for both of its lines: 1.x (`FastMCP`, which
langchain-mcp-adapters and fastmcp still need) from 1.10 on, and 2.x (`MCPServer`).

Both lines' servers answer `tools/list` with their `list_tools()` and `tools/call` with their
`call_tool()`; FlowState overrides those two, so that its own tool table (`catalog`) decides
what is listed, its own models validate the arguments (short errors, never the SDK's), and
each result carries FlowState's text block beside its structured content. Types are built
from their wire form (camelCase), which both lines accept.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import mcp.types as types

try:  # 2.x
    from mcp.server import MCPServer as _Server

    LINE = 2
except ImportError:  # 1.x
    from mcp.server.fastmcp import FastMCP as _Server  # type: ignore[no-redef, attr-defined]

    LINE = 1


@dataclass(frozen=True)
class Reply:
    """One tool result: the text the model reads, the structured content (None on error)."""

    text: str
    structured: dict[str, Any] | None = None
    error: bool = False


# How a call tells its client how it goes: progress, total (None: unknown), a message. Sent
# as notifications/progress when the client's request carried a progressToken, else nothing.
Progress = Callable[[float, float | None, str], Awaitable[None]]
# A tool call: its name, arguments, the client it came from (None: not named), its progress.
Call = Callable[[str, dict[str, Any], str | None, Progress], Awaitable[Reply]]


class _ToolError(Exception):
    """How a 1.x server is told a call failed: its message becomes the error result's text."""


def tool(
    name: str,
    title: str,
    description: str,
    input_schema: dict[str, Any],
    output_schema: dict[str, Any],
    annotations: dict[str, Any],
) -> types.Tool:
    return types.Tool.model_validate(
        {
            "name": name,
            "title": title,
            "description": description,
            "inputSchema": input_schema,
            "outputSchema": output_schema,
            "annotations": annotations,
        }
    )


def server(name: str, instructions: str, version: str, tools: list[types.Tool], call: Call) -> Any:
    """A server of the installed SDK line that lists `tools` and answers with `call`."""
    schemas = {t.name: t.model_dump(by_alias=True)["inputSchema"] for t in tools}

    class FlowStateServer(_Server):
        async def list_tools(self) -> list[types.Tool]:
            return list(tools)

        async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
            progress = _progress(self, context)
            return _result(await call(name, arguments or {}, _client(self, context), progress))

        def _tool_input_schema(self, name: str) -> dict[str, Any] | None:
            return schemas.get(name)  # 2.x checks Mcp-Param headers against it

    if LINE == 2:
        return FlowStateServer(name=name, instructions=instructions, version=version)
    return FlowStateServer(name=name, instructions=instructions)


def _client(server: Any, context: Any) -> str | None:
    """The client a call came from, where the transport names it: the `Mcp-Session-Id` of a
    streamable HTTP session. None over stdio (one client per server), in memory, or over
    stateless HTTP (the protocol keeps no session there)."""
    with contextlib.suppress(Exception):  # no request context, or no HTTP request in it
        if context is None and LINE == 1:
            context = server.get_context()
        session_id = context.request_context.request.headers.get("mcp-session-id")
        return str(session_id) if session_id else None
    return None


def _progress(server: Any, context: Any) -> Progress:
    """`Progress` for the request under way: the SDK sends it only when the client asked."""

    async def report(progress: float, total: float | None, message: str) -> None:
        with contextlib.suppress(Exception):  # no request context (a direct call): no one asked
            ctx = server.get_context() if context is None and LINE == 1 else context
            await ctx.report_progress(progress, total, message)

    return report


def _result(reply: Reply) -> Any:
    content = [types.TextContent(type="text", text=reply.text)]
    if LINE == 1:
        if reply.error:
            raise _ToolError(reply.text)
        return content, reply.structured  # 1.10's low-level server takes this pair
    return types.CallToolResult.model_validate(
        {
            "content": [c.model_dump(by_alias=True, exclude_none=True) for c in content],
            "structuredContent": reply.structured,
            "isError": reply.error,
        }
    )


def run_stdio(app: Any) -> None:
    app.run("stdio")


def http_app(app: Any, host: str) -> Any:
    """The streamable HTTP ASGI app at /mcp (DNS-rebinding checks for a loopback host)."""
    if LINE == 2:
        return app.streamable_http_app(host=host)
    app.settings.host = host
    return app.streamable_http_app()


@contextlib.asynccontextmanager
async def in_memory_client(server: Any) -> AsyncIterator[Any]:
    """A client session connected to `server` (`flowstate.mcp.server.build(...)`) in this
    process, for tests and benchmarks that drive the tools without a transport."""
    if LINE == 2:
        from mcp import Client

        async with Client(server) as client:
            yield client
        return
    # The 1.x SDK's helper, absent from the installed 2.x that mypy reads.
    from mcp.shared.memory import (  # type: ignore[attr-defined, unused-ignore]
        create_connected_server_and_client_session,
    )

    async with create_connected_server_and_client_session(server._mcp_server) as client:
        yield client
