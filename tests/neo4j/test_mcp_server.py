"""The MCP server through the SDK's in-memory client, against a real Neo4j: a host's calls
leave what the agent loop leaves; refusals are tool errors; the namespace is the server's."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from mcp import Client

from flowstate.api import FlowState
from flowstate.engine.session import Session
from flowstate.errors import UsageError
from flowstate.mcp.requests import OpenRequest
from flowstate.mcp.server import build_server
from flowstate.mcp.settings import McpSettings
from flowstate.mcp.tools import TOOL_NAMES
from flowstate.store import Repository, Store
from tests.neo4j.engine_helpers import add
from tests.neo4j.mcp_host import (
    assert_same_as_the_agent_loop,
    book_a_hotel,
    call,
    first_requests,
    ok,
)

pytestmark = pytest.mark.neo4j


def hosted(
    store: Store,
    namespace: str,
    script: Callable[[Client], Awaitable[Any]],
    *,
    read_only: bool = False,
    **settings: Any,
) -> Any:
    """Run `script` against a fresh server over `namespace`, through the in-memory client."""
    server, requests = build_server(
        FlowState(store, namespace, read_only=read_only), McpSettings(**settings)
    )

    async def run() -> Any:
        async with Client(server) as client:
            return await script(client)

    try:
        return asyncio.run(run())
    finally:
        requests.shutdown()


def test_a_host_request_over_mcp_commits_what_the_agent_loop_would(
    store: Store, repo: Repository, other_repo: Repository
) -> None:
    first_requests(store, repo.namespace, other_repo.namespace)
    assert hosted(store, repo.namespace, book_a_hotel) == "r2"
    assert_same_as_the_agent_loop(store, repo, other_repo)


def test_the_tools_and_the_index_resource_are_listed_with_typed_parameters(
    store: Store, repo: Repository
) -> None:
    first_requests(store, repo.namespace)

    async def script(client: Client) -> None:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert sorted(tools) == sorted(TOOL_NAMES)
        for tool in tools.values():
            assert tool.description and "namespace" not in tool.input_schema["properties"]
        record = tools["memory_record"].input_schema
        assert record["required"] == ["request_id", "delta"]
        assert "update" in json.dumps(record)  # the delta's ops are in the schema
        read = await client.read_resource("flowstate://index")
        assert "r1.budget" in read.contents[0].text
        assert "r1.budget" in (await client.read_resource("flowstate://index/1")).contents[0].text

    hosted(store, repo.namespace, script)


def test_rule_violations_are_tool_errors_with_the_reasons(store: Store, repo: Repository) -> None:
    first_requests(store, repo.namespace)

    async def script(client: Client) -> None:
        await ok(client, "memory_begin", text="Change the budget")
        failed, text = await call(
            client,
            "memory_record",
            request_id="r2",
            delta=[{"op": "update", "key": "budget", "summary": "200 EUR"}],
        )
        assert failed and "nothing applied" in text and "budget" in text
        failed, text = await call(client, "memory_reveal", request_id="r2", ids=["r9.secret"])
        assert failed and "r9.secret" in text
        failed, text = await call(
            client, "memory_guard", request_id="r2", tool="pay", arguments={}, cites=[]
        )
        assert failed and "do not run pay" in text and "cite the states" in text
        failed, text = await call(client, "memory_record", request_id="r7", delta=[add("x")])
        assert failed and "r7 is not open" in text
        failed, text = await call(client, "memory_begin", text="a second one")
        assert failed and "r2 is open" in text
        await ok(client, "memory_reveal", request_id="r2", ids=["r1.budget"])
        approved = await ok(
            client,
            "memory_guard",
            request_id="r2",
            tool="pay",
            arguments={"eur": 150},
            cites=["r1.budget"],
        )
        assert json.loads(approved)["approved"] is True
        await ok(client, "memory_commit", request_id="r2", answer="kept")

    hosted(store, repo.namespace, script)
    [*_, bundle] = repo.bundles()
    assert [d.approved for d in bundle.decisions] == [False, True]


def test_another_namespace_is_unreachable(
    store: Store, repo: Repository, other_repo: Repository
) -> None:
    first_requests(store, repo.namespace)
    secret = add("secret", "preference", "Other tenant's secret", "do not leak")
    tenant_b = Session.start(other_repo, "tenant b")
    tenant_b.record([secret])
    tenant_b.commit("kept", "b's request")

    async def script(client: Client) -> None:
        assert other_repo.namespace not in await ok(client, "memory_index")
        failed, text = await call(client, "memory_reveal", ids=["r1.secret"])
        assert failed and "not shown" in text
        # A namespace argument is not a parameter of any tool: it changes nothing.
        failed, text = await call(client, "memory_history", namespace=other_repo.namespace)
        assert "b's request" not in text
        await ok(client, "memory_begin", text="mine")
        failed, text = await call(client, "memory_reveal", request_id="r2", ids=["r1.secret"])
        assert failed

    hosted(store, repo.namespace, script)
    assert other_repo.load_draft() is None and len(repo.history()) == 1


def test_read_only_refuses_every_write(store: Store, repo: Repository) -> None:
    first_requests(store, repo.namespace)
    before = repo.counts()

    async def script(client: Client) -> None:
        assert "r1.budget" in await ok(client, "memory_index")
        assert "r1" in await ok(client, "memory_history")
        assert "r1.budget [constraint]" in await ok(client, "memory_why", state_id="r1.budget")
        shown = json.loads(await ok(client, "memory_reveal", ids=["r1.budget"]))
        assert shown["states"][0]["id"] == "r1.budget"
        writes: dict[str, dict[str, Any]] = {
            "memory_begin": {"text": "x"},
            "memory_record": {"request_id": "r2", "delta": [add("x")]},
            "memory_observe": {"request_id": "r2", "tool": "t", "arguments": {}, "output": "o"},
            "memory_guard": {"request_id": "r2", "tool": "t", "arguments": {}, "cites": []},
            "memory_commit": {"request_id": "r2", "answer": "a"},
            "memory_discard": {"request_id": "r2"},
        }
        for tool, arguments in writes.items():
            failed, text = await call(client, tool, **arguments)
            assert failed and "read-only" in text, tool

    hosted(store, repo.namespace, script, read_only=True)
    assert repo.counts() == before and repo.load_draft() is None


def test_a_restarted_server_picks_the_request_up_from_its_draft(
    store: Store, repo: Repository
) -> None:
    first_requests(store, repo.namespace)

    async def start(client: Client) -> None:
        await ok(client, "memory_begin", text="Book a hotel in Lisbon")
        await ok(client, "memory_reveal", request_id="r2", ids=["r1.budget"])

    async def finish(client: Client) -> None:
        await ok(client, "memory_record", request_id="r2", delta=[add("plan", "decision")])
        await ok(client, "memory_commit", request_id="r2", answer="done")

    hosted(store, repo.namespace, start)
    assert repo.load_draft() is not None
    hosted(store, repo.namespace, finish)
    [*_, bundle] = repo.bundles()
    assert [s.id for s in bundle.states] == ["r2.plan"] and repo.load_draft() is None


def test_a_large_reveal_is_paged(store: Store, repo: Repository) -> None:
    long = "x" * 3_900
    session = Session.start(repo, "long")
    session.record([add("big", "artifact", "a long artifact", long)])
    session.commit("kept", "long one")

    async def script(client: Client) -> None:
        await ok(client, "memory_begin", text="read it")
        first = await ok(client, "memory_reveal", request_id="r2", ids=["r1.big"])
        assert len(first) < 1_100 and "page 1 of" in first
        pages = int(first.rsplit("page 1 of ", 1)[1].split(";")[0])
        rest = [
            await ok(client, "memory_reveal", request_id="r2", ids=["r1.big"], page=n)
            for n in range(2, pages + 1)
        ]
        assert all(len(p) < 1_100 for p in rest)
        assert "".join([first, *rest]).count("x") >= len(long)
        failed, _ = await call(client, "memory_reveal", request_id="r2", ids=["r1.big"], page=99)
        assert failed
        await ok(client, "memory_discard", request_id="r2")

    hosted(store, repo.namespace, script, page_chars=1_000)


def test_an_abandoned_request_expires_and_frees_the_namespace(repo: Repository) -> None:
    now = [0.0]
    requests = OpenRequest(repo, ttl_s=60, clock=lambda: now[0])
    session = requests.begin("walked away")
    assert repo.load_draft() is not None and requests.expire() is None
    now[0] = 61
    assert requests.expire() == session.request_id
    assert repo.load_draft() is None
    Session.start(repo, "the next writer").discard()  # the lease was released
    # A draft a stopped server left counts from when this one first saw it.
    Session.start(repo, "left by a stopped server").__exit__(None, None, None)
    assert requests.expire() is None
    now[0] = 130
    assert requests.expire() is not None and repo.load_draft() is None


def test_hostile_arguments_are_never_echoed_in_full(store: Store, repo: Repository) -> None:
    first_requests(store, repo.namespace)
    huge = "r" + "9" * 200_000

    async def script(client: Client) -> None:
        calls: list[tuple[str, dict[str, Any]]] = [
            ("memory_record", {"request_id": huge, "delta": [add("x")]}),
            ("memory_commit", {"request_id": huge, "answer": "a"}),
            ("memory_discard", {"request_id": huge}),
            ("memory_reveal", {"ids": [huge]}),
            ("memory_why", {"state_id": huge}),
        ]
        await ok(client, "memory_begin", text="open")
        calls.append(
            (
                "memory_observe",
                {"request_id": "r2", "tool": "t" * 200_000, "arguments": {}, "output": "o"},
            )  # fmt: skip
        )
        for tool, arguments in calls:
            failed, text = await call(client, tool, **arguments)
            assert failed and len(text) < 4_100, (tool, len(text))

    hosted(store, repo.namespace, script)


def test_a_read_opens_collapsed_requests_and_their_states(store: Store, repo: Repository) -> None:
    for n in range(1, 31):
        session = Session.start(repo, f"request {n}")
        session.record([add(f"k{i}", summary=f"fact {i} of request {n} " * 3) for i in range(8)])
        session.commit("kept", f"request {n} with eight facts")

    async def script(client: Client) -> None:
        index = await ok(client, "memory_index")
        assert "collapsed: access r" in index
        oldest = index.split("collapsed: access ", 1)[1].split("]", 1)[0]
        listed = json.loads(await ok(client, "memory_reveal", ids=[oldest]))
        assert [line.split()[0] for line in listed["requests"][oldest]][:2] == [
            f"{oldest}.k0",
            f"{oldest}.k1",
        ]
        opened = json.loads(await ok(client, "memory_reveal", ids=[f"{oldest}.k1"]))
        assert opened["states"][0]["id"] == f"{oldest}.k1"
        failed, text = await call(client, "memory_reveal", ids=["r99.k1"])
        assert failed and "not shown" in text

    hosted(store, repo.namespace, script, read_only=True)


def test_an_open_draft_and_an_expired_one_are_named_in_the_tools_words(
    store: Store, repo: Repository
) -> None:
    Session.start(repo, "left by a stopped server").__exit__(None, None, None)

    async def script(client: Client) -> None:
        failed, text = await call(client, "memory_begin", text="a new one")
        assert failed and "memory_commit or memory_discard it (request_id r1)" in text
        await ok(client, "memory_discard", request_id="r1")

    hosted(store, repo.namespace, script)
    now = [0.0]
    requests = OpenRequest(repo, ttl_s=60, clock=lambda: now[0])
    session = requests.begin("walked away")
    now[0] = 61
    assert requests.expire() == session.request_id
    with pytest.raises(UsageError, match="discarded after 60 s without a call"):
        requests.get(session.request_id)
