"""An outside attack on `flowstate mcp`'s connection: a Neo4j that dies in the middle of a
session, refusing or black-holed, is said within 2 s per call after the first failure, and
the memory comes back when the server does."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
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

LOST_SERVER_WAITS = (
    "once connected, a call meets a lost server through the driver's managed transaction, "
    "which retries for its retry time: each call waits 15-30 s (or past a host's bound), not "
    "the 2 s a server unreachable at start costs"
)

pytestmark = pytest.mark.neo4j


def _session(
    settings: Neo4jSettings, namespace: str, cut: Callable[[], None], restore: Callable[[], None]
) -> tuple[list[tuple[float, bool, str]], dict[str, Any]]:
    """Two good calls, `cut`, three calls timed (each with a 20 s client bound), `restore`,
    then calls until one succeeds (at most 30 s): the timed calls and the last result."""
    memory = Memory(lambda say: FlowState.connect(settings=settings, namespace=namespace), print)
    server, _ = build_server(memory, McpSettings(namespace=namespace, warm_up=False))
    memory.start()

    async def call(client: Any, i: int) -> dict[str, Any]:
        fact = {"summary": f"Fact number {i}", "category": "environment"}
        return wire(await asyncio.wait_for(client.call_tool("memory_remember", fact), 20))

    async def run() -> tuple[list[tuple[float, bool, str]], dict[str, Any]]:
        told = []
        async with in_memory_client(server) as client:
            for i in range(2):
                assert not (await call(client, i)).get("isError")
            cut()
            for i in range(2, 5):
                started = time.monotonic()
                try:
                    said = await call(client, i)
                    text = said["content"][0]["text"]
                    told.append((time.monotonic() - started, bool(said.get("isError")), text))
                except TimeoutError:
                    told.append((time.monotonic() - started, True, "no answer in 20 s"))
            restore()
            deadline = time.monotonic() + 30
            back: dict[str, Any] = {}
            while time.monotonic() < deadline:
                back = await call(client, 99)
                if not back.get("isError"):
                    break
                await asyncio.sleep(0.5)
        return told, back

    try:
        return asyncio.run(run())
    finally:
        memory.close()


def _settings(neo4j_settings: Neo4jSettings, proxy: BoltProxy) -> Neo4jSettings:
    return neo4j_settings.model_copy(update={"uri": proxy.uri, "connect_timeout_s": 3.0})


def _forget(neo4j_settings: Neo4jSettings, namespace: str) -> None:
    with Store.connect(neo4j_settings) as store:
        Repository(store, namespace).forget_namespace(force=True)


@pytest.mark.xfail(
    strict=True,
    reason=LOST_SERVER_WAITS,
)
def test_a_server_going_down_mid_session_is_said_within_2_s_per_call(
    neo4j_settings: Neo4jSettings, bolt_proxy: BoltProxy, namespace: str
) -> None:
    try:
        told, back = _session(
            _settings(neo4j_settings, bolt_proxy), namespace, bolt_proxy.go_down, bolt_proxy.restore
        )
    finally:
        _forget(neo4j_settings, namespace)
    assert all(error for _, error, _ in told), told
    assert all(took < 2.0 for took, _, _ in told[1:]), told
    assert not back.get("isError"), back


@pytest.mark.xfail(
    strict=True,
    reason=LOST_SERVER_WAITS,
)
def test_a_server_black_holed_mid_session_is_said_within_2_s_per_call(
    neo4j_settings: Neo4jSettings, bolt_proxy: BoltProxy, namespace: str
) -> None:
    def cut() -> None:
        bolt_proxy.go_down()  # the open connections die
        bolt_proxy.black_hole()  # and new ones are accepted, never answered

    try:
        told, back = _session(
            _settings(neo4j_settings, bolt_proxy), namespace, cut, bolt_proxy.restore
        )
    finally:
        _forget(neo4j_settings, namespace)
    assert all(error for _, error, _ in told), told
    assert all(took < 2.0 for took, _, _ in told[1:]), told
    assert not back.get("isError"), back
