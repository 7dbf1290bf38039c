"""A host does not notice a slow start: a tool call waits for the connection under way (up
to 45 s, beyond the 10 s it once waited) and hears how it goes when it asked; a server that
is down or never answers is said within 2 s per call after the first failure."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest

from flowstate import FlowState
from flowstate.mcp.memory import Memory
from flowstate.mcp.sdk import in_memory_client
from flowstate.mcp.server import build_server
from flowstate.mcp.settings import McpSettings
from flowstate.settings import Neo4jSettings
from flowstate.store import Repository, Store
from tests.neo4j.bolt_proxy import BoltProxy
from tests.neo4j.mcp_host import wire

pytestmark = pytest.mark.neo4j
FACT = {"summary": "Lives in Porto", "category": "environment"}


def test_a_call_during_a_slow_start_waits_for_it_and_hears_how_it_goes(
    store: Store, repo: Repository
) -> None:
    opened = threading.Event()

    def slow_open(say: Any) -> FlowState:
        say("starting the managed local server (a test's)")
        opened.wait(30)
        return FlowState(store, repo.namespace)

    memory = Memory(slow_open, lambda message: None)
    server, _ = build_server(memory, McpSettings(namespace=repo.namespace))
    memory.start()
    heard: list[tuple[float, float | None, str | None]] = []

    async def progress(done: float, total: float | None, message: str | None) -> None:
        heard.append((done, total, message))

    async def run() -> tuple[dict[str, Any], float]:
        threading.Timer(12.0, opened.set).start()  # longer than the 10 s a call once waited
        async with in_memory_client(server) as client:
            started = time.monotonic()
            result = await client.call_tool("memory_remember", FACT, progress_callback=progress)
            return wire(result), time.monotonic() - started

    try:
        result, took = asyncio.run(run())
    finally:
        opened.set()
        memory.close()
    assert not result.get("isError"), result
    assert result["structuredContent"]["state_id"] == "r1.lives_porto"
    assert 11 < took < 40, took
    assert len(heard) >= 4, heard  # every 2 s while it waited
    assert all(total == 45 for _, total, _ in heard)
    assert "starting the managed local server" in (heard[0][2] or "")
    assert [done for done, _, _ in heard] == sorted(done for done, _, _ in heard)


def _told_quickly(settings: Neo4jSettings, namespace: str, calls: int) -> list[tuple[float, str]]:
    """Each call's time and error text, against a memory that cannot connect."""
    memory = Memory(lambda say: FlowState.connect(settings=settings, namespace=namespace), print)
    server, _ = build_server(memory, McpSettings(namespace=namespace))
    memory.start()

    async def run() -> list[tuple[float, str]]:
        told = []
        async with in_memory_client(server) as client:
            for _ in range(calls):
                started = time.monotonic()
                result = wire(await client.call_tool("memory_remember", FACT))
                assert result.get("isError"), result
                told.append((time.monotonic() - started, result["content"][0]["text"]))
        return told

    try:
        return asyncio.run(run())
    finally:
        memory.close()


def test_a_black_holed_server_is_said_within_2_s_per_call_after_the_first_failure(
    neo4j_settings: Neo4jSettings, bolt_proxy: BoltProxy, namespace: str
) -> None:
    bolt_proxy.black_hole()
    settings = neo4j_settings.model_copy(
        update={"uri": bolt_proxy.uri, "connect_timeout_s": 3.0, "retry_time_s": 0.0}
    )
    told = _told_quickly(settings, namespace, 4)
    first, later = told[0], told[1:]
    assert 2.5 < first[0] < 40, first  # the first attempt's connect timeout, waited once
    assert "handshake" in first[1] or bolt_proxy.uri in first[1], first
    assert all(took < 2.0 for took, _ in later), later
    # A later call says why the last attempt failed, and that another is under way.
    assert all(bolt_proxy.uri in text for _, text in later), later


def test_a_server_that_is_down_is_said_within_2_s_per_call(
    neo4j_settings: Neo4jSettings, bolt_proxy: BoltProxy, namespace: str
) -> None:
    settings = neo4j_settings.model_copy(update={"uri": "bolt://127.0.0.1:1"})
    told = _told_quickly(settings, namespace, 4)
    assert all(took < 2.0 for took, _ in told), told
    assert all("127.0.0.1:1" in text for _, text in told), told
