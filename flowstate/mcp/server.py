"""The MCP server over one namespace: tools, the index as a resource, the transports."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

from mcp.server import MCPServer

from flowstate.api import FlowState
from flowstate.mcp.auth import BearerToken, check_binding
from flowstate.mcp.requests import OpenRequests
from flowstate.mcp.settings import McpSettings
from flowstate.mcp.tools import TOOL_NAMES, MemoryTools

INSTRUCTIONS = """\
FlowState memory: typed states (preference, constraint, environment, decision, artifact) from
past requests, and the rules that keep them right. Per user request: memory_begin(text) gives
a request_id and the index; memory_reveal opens past states you need (shown ids only, at most
8 per call); memory_observe keeps a tool result as citable evidence; memory_record adds,
updates or removes this request's states (past states are never edited: SUPERSEDE them);
memory_guard before any action with consequences; memory_commit(answer, summary) at the end.
A tool error means the step was refused: read the reasons and send a corrected call."""


def build_server(fs: FlowState, settings: McpSettings) -> tuple[MCPServer, OpenRequests]:
    """The server for `fs`'s namespace (bound here for its whole life) and its open request."""
    requests = OpenRequests(fs.repository, settings.draft_ttl_s)
    tools = MemoryTools(fs, requests, settings.page_chars)
    server = MCPServer(name=f"flowstate-{fs.namespace}", instructions=INSTRUCTIONS, version="0.1.0")
    for name in TOOL_NAMES:
        server.tool(name=name)(getattr(tools, name))

    @server.resource("flowstate://index", mime_type="text/plain")
    def index() -> str:
        """The Historical State Index (first page; the template flowstate://index/{page})."""
        return tools.memory_index(1)

    @server.resource("flowstate://index/{page}", mime_type="text/plain")
    def index_page(page: int) -> str:
        """One page of the Historical State Index."""
        return tools.memory_index(page)

    return server, requests


@contextlib.contextmanager
def expiring(requests: OpenRequests, every_s: float) -> Iterator[None]:
    """Discard an abandoned request in the background, so that it never holds the lease."""
    stop = threading.Event()

    def sweep() -> None:
        while not stop.wait(every_s):
            with contextlib.suppress(Exception):  # the database may be away; try next time
                requests.expire()

    thread = threading.Thread(target=sweep, name="flowstate-mcp-expiry", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=5)
        requests.shutdown()


def serve(
    fs: FlowState,
    settings: McpSettings,
    transport: str,
    host: str = "127.0.0.1",
    port: int = 8765,
) -> None:
    """Serve until stopped (stdin closed for stdio, a signal for HTTP)."""
    token = settings.token.get_secret_value() if settings.token else None
    if transport == "streamable-http":
        check_binding(host, token)
    server, requests = build_server(fs, settings)
    with expiring(requests, max(1.0, min(30.0, settings.draft_ttl_s / 4))):
        if transport == "stdio":
            server.run("stdio")
            return
        import uvicorn  # a dependency of the mcp SDK's HTTP transport

        app = server.streamable_http_app(host=host)
        asgi = BearerToken(app, token) if token else app
        uvicorn.run(asgi, host=host, port=port, log_level="warning")
