"""The MCP server over one namespace: the tools of `catalog`, the index as a resource, the
transports. It answers `initialize` before Neo4j is reached (see `memory`)."""

from __future__ import annotations

import contextlib
import functools
import logging
import threading
import time
from collections.abc import Iterator
from typing import Any

import anyio

from flowstate.mcp import catalog, sdk
from flowstate.mcp.auth import BearerToken, check_binding
from flowstate.mcp.memory import RETRY_WAIT_S, WAIT_S, Memory
from flowstate.mcp.settings import McpSettings
from flowstate.mcp.tools import MemoryTools, Refused
from flowstate.mcp.warmup import warm_up

log = logging.getLogger("flowstate.mcp")
VERSION = "0.1.0"
PROGRESS_S = 2.0  # how often a call waiting for the connection tells its client so

INSTRUCTIONS = """\
FlowState memory: typed states (preference, constraint, environment, decision, artifact) from
past requests, and the rules that keep them right. A simple fact the user states:
memory_remember. To find what is known: memory_search or memory_index, then memory_reveal
(shown ids only, at most 8 per call). For work with tools, per user request: memory_begin(text)
gives a request_id, a handle and the index; pass both on every call for that request;
memory_observe keeps a tool result as citable evidence;
memory_record adds, updates or removes this request's states (past states are never edited:
SUPERSEDE them); memory_guard before any action with consequences; memory_commit(answer,
summary) at the end. An error result means nothing was applied: read the reason and send a
corrected call."""

READ_ONLY_INSTRUCTIONS = """\
FlowState memory, read-only: typed states from past requests. memory_search or memory_index,
then memory_reveal (shown ids only, at most 8 per call); memory_why for a state's evidence,
memory_history for the requests."""


def build_server(memory: Memory, settings: McpSettings) -> tuple[Any, MemoryTools]:
    """The server (of the installed SDK line) and its tools, over `memory`."""
    specs = catalog.listed(read_only=settings.read_only, allow_forget=settings.allow_forget)
    tools = MemoryTools(memory, settings.page_chars, specs, settings.draft_ttl_s)
    listed = [
        sdk.tool(
            spec.name,
            spec.title,
            spec.description,
            spec.args.model_json_schema(),
            spec.out.model_json_schema(),
            spec.annotations(),
        )
        for spec in specs
    ]

    async def call(
        name: str, arguments: dict[str, Any], client: str | None, progress: sdk.Progress
    ) -> sdk.Reply:
        started = time.perf_counter()
        if not await connected(memory, progress):
            return sdk.Reply(str(memory.not_ready()), error=True)
        try:  # blocking Neo4j work off the event loop, so pings and cancels are answered
            text, structured = await anyio.to_thread.run_sync(tools.call, name, arguments, client)
        except Refused as e:
            log.info("%s refused: %s", name, e)
            return sdk.Reply(str(e), error=True)
        except Exception as e:  # a bug of ours: said in one line, never a traceback to the host
            log.error("%s failed: %s: %s", name, type(e).__name__, e)
            return sdk.Reply(f"internal error in {name}: {type(e).__name__}", error=True)
        log.debug("%s done in %.1f ms", name, (time.perf_counter() - started) * 1000)
        return sdk.Reply(text, structured)

    instructions = READ_ONLY_INSTRUCTIONS if settings.read_only else INSTRUCTIONS
    server = sdk.server(f"flowstate-{settings.namespace}", instructions, VERSION, listed, call)

    def index_text(page: int) -> str:
        try:
            text, _ = tools.call("memory_index", {"page": page})
        except Refused as e:
            return f"(not available: {e})"
        return text

    @server.resource("flowstate://index", mime_type="text/plain")
    async def index() -> str:
        """The Historical State Index (first page; the template flowstate://index/{page})."""
        return await anyio.to_thread.run_sync(index_text, 1)

    @server.resource("flowstate://index/{page}", mime_type="text/plain")
    async def index_page(page: int) -> str:
        """One page of the Historical State Index."""
        return await anyio.to_thread.run_sync(index_text, int(page))

    return server, tools


async def connected(memory: Memory, progress: sdk.Progress, wait_s: float = WAIT_S) -> bool:
    """Whether the memory's connection attempt has ended (connected or failed) within
    `wait_s`; meanwhile the client hears what is under way every `PROGRESS_S`."""
    if memory.wait(0):
        return True
    if memory.failed:  # said within RETRY_WAIT_S, not waited out at every call
        wait_s = min(wait_s, RETRY_WAIT_S)
    began = time.monotonic()
    while (left := wait_s - (time.monotonic() - began)) > 0:
        await progress(round(time.monotonic() - began, 1), wait_s, f"FlowState: {memory.phase}")
        if await anyio.to_thread.run_sync(memory.wait, min(PROGRESS_S, left)):
            return True
    return memory.wait(0)


@contextlib.contextmanager
def expiring(memory: Memory, tools: MemoryTools, every_s: float) -> Iterator[None]:
    """Discard abandoned requests in the background, so that their drafts do not pile up."""
    stop = threading.Event()

    def sweep() -> None:
        while not stop.wait(every_s):
            if memory.ready() is None:
                continue
            with contextlib.suppress(Exception):  # the database may be away; try next time
                for request_id in tools.expire():
                    log.info("discarded request %s: idle for its --draft-ttl", request_id)

    thread = threading.Thread(target=sweep, name="flowstate-mcp-expiry", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=5)
        memory.close()


def serve(
    memory: Memory,
    settings: McpSettings,
    transport: str,
    host: str = "127.0.0.1",
    port: int = 8765,
) -> None:
    """Serve until stopped (stdin closed for stdio, a signal for HTTP)."""
    token = settings.token.get_secret_value() if settings.token else None
    if transport == "streamable-http":
        check_binding(host, token)
    server, tools = build_server(memory, settings)
    if settings.warm_up:
        memory.warm = functools.partial(warm_up, tools=tools, stop=memory.closing)
    memory.start()
    with expiring(memory, tools, max(1.0, min(30.0, settings.draft_ttl_s / 4))):
        if transport == "stdio":
            sdk.run_stdio(server)
            return
        import uvicorn  # a dependency of the mcp SDK's HTTP transport

        app = sdk.http_app(server, host)
        asgi = BearerToken(app, token) if token else app
        uvicorn.run(asgi, host=host, port=port, log_level="warning", log_config=None)
