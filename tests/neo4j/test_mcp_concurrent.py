"""Requests running at once in one namespace through two MCP servers (each with its own front
door, as two processes would have), driven by in-process clients: requests open at once commit
under distinct ids; of two commits superseding one past state the second is a tool error that
names the newer state, and the revision commits; `memory_guard` is judged on what the other
server committed (or forgot) before it (docs/deploying-safely.md, "Many writers on one
namespace"). The interleavings are the order of the calls."""

from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest

from flowstate import FlowState
from flowstate.mcp.server import build_server
from flowstate.mcp.settings import McpSettings
from flowstate.store import Repository, Store
from tests.neo4j.engine_helpers import add
from tests.neo4j.mcp_host import call, in_memory_client, memory_over, ok
from tests.neo4j.test_shells_concurrent import BUDGET, lowered, supersessions

pytestmark = pytest.mark.neo4j


@pytest.fixture
def fs(store: Store, repo: Repository) -> FlowState:
    """The namespace with r1.budget committed."""
    fs = FlowState(store, repo.namespace)
    fs.remember([BUDGET], "Our hotel budget is 150 EUR a night", summary="Budget set")
    return fs


def _two_servers(store: Store, namespace: str) -> tuple[Any, Any, list[Any]]:
    """Two MCP servers over one namespace, each with its own front door (as two processes);
    the second may forget."""
    memories = [memory_over(store, namespace) for _ in range(2)]
    settings = [
        McpSettings(namespace=namespace),
        McpSettings(namespace=namespace, allow_forget=True),
    ]
    servers = [build_server(m, c)[0] for m, c in zip(memories, settings, strict=True)]
    return servers[0], servers[1], memories


def _over_mcp(store: Store, namespace: str, script: Any) -> Any:
    first, second, memories = _two_servers(store, namespace)

    async def run() -> Any:
        async with in_memory_client(first) as a, in_memory_client(second) as b:
            return await script(a, b)

    try:
        return asyncio.run(run())
    finally:
        for memory in memories:
            memory.close()


def test_two_mcp_servers_run_requests_at_once_and_both_commit(
    fs: FlowState, store: Store, repo: Repository
) -> None:
    async def script(a: Any, b: Any) -> None:
        assert (await ok(a, "memory_begin", text="first"))["request_id"] == "r2"
        assert (await ok(b, "memory_begin", text="second"))["request_id"] == "r3"
        assert (await ok(a, "memory_begin", text="third"))["request_id"] == "r4"
        assert {r.request_id for r in repo.open_requests()} == {"r2", "r3", "r4"}
        for client, rid in ((b, "r3"), (a, "r4"), (a, "r2")):
            await ok(client, "memory_record", request_id=rid, delta=[add("note")])
            done = await ok(client, "memory_commit", request_id=rid, answer="done", summary=rid)
            assert done["states_added"] == [f"{rid}.note"]
        index = (await ok(b, "memory_index"))["text"]
        assert all(f"r{n}.note" in index for n in (2, 3, 4))

    _over_mcp(store, repo.namespace, script)
    assert [r.id for r in repo.history()] == ["r1", "r2", "r3", "r4"]
    assert repo.open_requests() == []


def test_a_second_mcp_commit_superseding_one_state_is_refused_then_revised(
    fs: FlowState, store: Store, repo: Repository
) -> None:
    async def script(a: Any, b: Any) -> str:
        for client, text in ((a, "budget 120"), (b, "budget 100")):
            rid = (await ok(client, "memory_begin", text=text))["request_id"]
            await ok(client, "memory_reveal", request_id=rid, ids=["r1.budget"])
        await ok(a, "memory_record", request_id="r2", delta=[lowered(120, "r1.budget")])
        await ok(b, "memory_record", request_id="r3", delta=[lowered(100, "r1.budget")])
        await ok(a, "memory_commit", request_id="r2", answer="lowered to 120")
        refused = await call(b, "memory_commit", request_id="r3", answer="lowered to 100")
        assert refused.error
        # What the host's model reads: why, and which state to supersede instead.
        newer = re.search(r"already superseded by (r\d+\.budget)", refused.text)
        assert newer and newer.group(1) == "r2.budget", refused.text
        revised = [{"op": "remove", "key": "budget"}, lowered(100, newer.group(1))]
        await ok(b, "memory_record", request_id="r3", delta=revised)
        done = await ok(b, "memory_commit", request_id="r3", answer="lowered to 100")
        assert done == {
            "outcome": "answered",
            "states_added": ["r3.budget"],
            "revealed": ["r1.budget"],
        }
        return refused.text

    told = _over_mcp(store, repo.namespace, script)
    assert "r1.budget" in told
    assert supersessions(repo) == {
        "r1.budget": "r2.budget",
        "r2.budget": "r3.budget",
        "r3.budget": None,
    }
    assert repo.open_requests() == []


def test_an_mcp_guard_is_judged_on_what_another_server_committed_before_it(
    fs: FlowState, store: Store, repo: Repository
) -> None:
    async def script(a: Any, b: Any) -> None:
        await ok(a, "memory_begin", text="pay the hotel")
        await ok(b, "memory_begin", text="lower the budget")
        for client, rid in ((a, "r2"), (b, "r3")):
            await ok(client, "memory_reveal", request_id=rid, ids=["r1.budget"])
        await ok(b, "memory_record", request_id="r3", delta=[lowered(90, "r1.budget")])
        pay = {"tool": "pay_hotel", "arguments": {"amount": 140}, "cites": ["r1.budget"]}
        approved = await ok(a, "memory_guard", request_id="r2", **pay)
        assert approved == {"decision_id": "r2.a1"}  # r3's supersession is not committed yet
        await ok(b, "memory_commit", request_id="r3", answer="lowered")
        denied = await call(a, "memory_guard", request_id="r2", **pay)
        assert denied.error and "do not run pay_hotel" in denied.text
        assert "r1.budget is superseded by r3.budget" in denied.text
        await ok(a, "memory_commit", request_id="r2", answer="paid once")

    _over_mcp(store, repo.namespace, script)
    assert [(d.id, d.approved) for d in repo.decisions("r2")] == [("r2.a1", True), ("r2.a2", False)]


def test_an_mcp_guard_refuses_a_state_another_server_forgot(
    fs: FlowState, store: Store, repo: Repository
) -> None:
    async def script(a: Any, b: Any) -> None:
        await ok(a, "memory_begin", text="pay the hotel")
        await ok(a, "memory_reveal", request_id="r2", ids=["r1.budget"])
        await ok(b, "memory_forget", id="r1.budget")
        pay = {"tool": "pay_hotel", "arguments": {"amount": 140}, "cites": ["r1.budget"]}
        denied = await call(a, "memory_guard", request_id="r2", **pay)
        assert denied.error and "do not run pay_hotel" in denied.text
        assert "r1.budget was forgotten" in denied.text

    _over_mcp(store, repo.namespace, script)
