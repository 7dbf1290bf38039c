"""A host's side of the MCP tests: the scripted tool calls a host model would make, and the
check that they left exactly what the agent loop leaves for the same steps.

Results are read as MCP puts them on the wire (`model_dump(by_alias=True)`: `isError`,
`structuredContent`, `inputSchema`), so the same helpers work with either SDK line."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from flowstate.api import FlowState
from flowstate.mcp.memory import Memory
from flowstate.mcp.sdk import in_memory_client
from flowstate.mcp.server import build_server
from flowstate.mcp.settings import McpSettings
from flowstate.store import Repository, Store
from tests.neo4j.test_session import HOTEL, SEARCH, facts, first_request, loop_twin


@dataclass
class Called:
    error: bool
    text: str
    data: dict[str, Any] | None  # the structured content


def wire(model: Any) -> dict[str, Any]:
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


# The handles memory_begin gave each client, by request id (kept on the client object):
# `call` passes a request's handle as a host following the server's instructions does, unless
# the test passes one itself (`handle=NO_HANDLE` sends none).
NO_HANDLE = object()


async def call(client: Any, tool: str, /, **arguments: Any) -> Called:
    handles: dict[str, str] = vars(client).setdefault("_test_handles", {})
    rid = arguments.get("request_id")
    if isinstance(rid, str) and "handle" not in arguments and rid in handles:
        arguments["handle"] = handles[rid]
    if arguments.get("handle") is NO_HANDLE:
        del arguments["handle"]
    result = wire(await client.call_tool(tool, arguments))
    text = "".join(c.get("text", "") for c in result.get("content", []))
    data = result.get("structuredContent")
    if tool == "memory_begin" and data and "handle" in data:
        handles[data["request_id"]] = data["handle"]
    return Called(bool(result.get("isError")), text, data)


async def ok(client: Any, tool: str, /, **arguments: Any) -> dict[str, Any]:
    done = await call(client, tool, **arguments)
    assert not done.error, f"{tool}: {done.text}"
    assert done.data is not None, f"{tool}: no structured content"
    return done.data


async def tools_of(client: Any) -> dict[str, dict[str, Any]]:
    return {t["name"]: t for t in wire(await client.list_tools())["tools"]}


async def book_a_hotel(client: Any) -> str:
    """Begin, reveal a past state, observe a tool output, record a state, commit."""
    assert "r1.budget" in (await ok(client, "memory_index"))["text"]
    begun = await ok(client, "memory_begin", text="Book a hotel in Lisbon")
    assert begun["request_id"] == "r2" and "r1.budget" in begun["index"]
    opened = await ok(client, "memory_reveal", request_id="r2", ids=["r1.budget"])
    assert [s["content"] for s in opened["states"]] == ["At most 150 EUR per night"]
    tool, arguments, output = SEARCH
    observed = await ok(
        client, "memory_observe", request_id="r2", tool=tool, arguments=arguments, output=output
    )
    assert observed == {"observation_id": "r2.o1"}
    recorded = await ok(client, "memory_record", request_id="r2", delta=[HOTEL])
    assert recorded == {"states": ["r2.hotel"]}
    committed = await ok(
        client, "memory_commit", request_id="r2", answer="Booked Casa Azul", summary="Hotel booked"
    )
    assert committed["states_added"] == ["r2.hotel"] and committed["outcome"] == "answered"
    assert "already_committed" not in committed  # said only when it is true
    return "r2"


def first_requests(store: Store, *namespaces: str) -> None:
    for namespace in namespaces:
        first_request(store, namespace)


def assert_same_as_the_agent_loop(store: Store, hosted: Repository, twin: Repository) -> None:
    """`hosted` got the host's calls; the agent loop now takes the same steps in `twin`."""
    agent = loop_twin(store, twin.namespace)
    assert facts(hosted.bundles()[-1]) == facts(twin.bundles()[-1])
    assert hosted.open_requests() == []
    assert hosted.bundles()[-1].request.usage.prompt_tokens == 0  # FlowState called no model
    index = FlowState(store, hosted.namespace).index(model="host").text
    assert index == agent.index.render().text


def memory_over(store: Store, namespace: str, *, read_only: bool = False):
    """A server's Memory over a store the test owns, connected at once."""
    memory = Memory(lambda say: FlowState(store, namespace, read_only=read_only), print)
    memory.start()
    memory.get(30)
    return memory


def hosted(
    store: Store,
    namespace: str,
    script: Callable[[Any], Awaitable[Any]],
    *,
    read_only: bool = False,
    **settings: Any,
) -> Any:
    """Run `script` against a fresh server over `namespace`, through an in-process client."""
    ttl = settings.pop("draft_ttl_s", 1800)
    memory = memory_over(store, namespace, read_only=read_only)
    config = McpSettings(namespace=namespace, read_only=read_only, draft_ttl_s=ttl, **settings)
    server, _ = build_server(memory, config)

    async def run() -> Any:
        async with in_memory_client(server) as client:
            return await script(client)

    try:
        return asyncio.run(run())
    finally:
        memory.close()
