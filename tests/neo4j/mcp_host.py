"""A host's side of the MCP tests: the scripted tool calls a host model would make, and the
check that they left exactly what the agent loop leaves for the same steps."""

from __future__ import annotations

import json
from typing import Any

from mcp import Client

from flowstate.api import FlowState
from flowstate.store import Repository, Store
from tests.neo4j.test_session import HOTEL, SEARCH, facts, first_request, loop_twin


async def call(client: Client, tool: str, /, **arguments: Any) -> tuple[bool, str]:
    """(is_error, text) of one tool call."""
    result = await client.call_tool(tool, arguments)
    return bool(result.is_error), "".join(getattr(c, "text", "") for c in result.content)


async def ok(client: Client, tool: str, /, **arguments: Any) -> str:
    failed, text = await call(client, tool, **arguments)
    assert not failed, f"{tool}: {text}"
    return text


async def book_a_hotel(client: Client) -> str:
    """Begin, reveal a past state, observe a tool output, record a state, commit."""
    assert "r1.budget" in await ok(client, "memory_index")
    begun = await ok(client, "memory_begin", text="Book a hotel in Lisbon")
    request_id = begun.splitlines()[0].removeprefix("request_id: ")
    assert request_id == "r2" and "r1.budget" in begun
    opened = json.loads(await ok(client, "memory_reveal", request_id="r2", ids=["r1.budget"]))
    assert [s["content"] for s in opened["states"]] == ["At most 150 EUR per night"]
    tool, arguments, output = SEARCH
    observed = await ok(
        client, "memory_observe", request_id="r2", tool=tool, arguments=arguments, output=output
    )
    assert json.loads(observed) == {"observation_id": "r2.o1"}
    recorded = await ok(client, "memory_record", request_id="r2", delta=[HOTEL])
    assert json.loads(recorded) == {"applied": True, "states": ["r2.hotel"]}
    committed = json.loads(
        await ok(
            client,
            "memory_commit",
            request_id="r2",
            answer="Booked Casa Azul",
            summary="Hotel booked",
        )
    )
    assert committed["states_added"] == ["r2.hotel"] and committed["outcome"] == "answered"
    return request_id


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
