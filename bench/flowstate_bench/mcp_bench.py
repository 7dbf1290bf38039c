"""`flowstate bench mcp`: what a host waits for, measured through a real MCP client over stdio.

- the one-fact round trip: `memory_remember` then `memory_reveal` of the state it made, and
  the same fact through `memory_begin` / `memory_record` / `memory_commit` / `memory_reveal`;
- beside them, in the same run and on the same Neo4j, a bare Bolt single-node write
  transaction and a `RETURN 1` round trip;
- optionally Neo4j Labs' `mcp-neo4j-memory` (its command given with --neo4j-memory):
  `create_entities` then `find_memories_by_name`, the same write and read back;
- the cold start: process spawn to the answer to `initialize`, with Neo4j configured, and
  with none configured and nothing running on the managed server's port (the server then
  starts one in the background), with how long until the first tool call succeeds.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import click

Step = Callable[[Any, int], Awaitable[None]]


def _ms(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return {"p50": round(statistics.median(ordered), 2), "p95": round(p95, 2), "n": len(ordered)}


async def _session(command: str, args: list[str], env: dict[str, str]) -> tuple[Any, Any]:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    stack = AsyncExitStack()
    params = StdioServerParameters(command=command, args=args, env=env)
    read, write = await stack.enter_async_context(stdio_client(params))
    session = await stack.enter_async_context(ClientSession(read, write))
    await session.initialize()
    return session, stack


async def _timed(session: Any, step: Step, rounds: int, warmup: int = 3) -> dict[str, float]:
    samples = []
    for i in range(warmup + rounds):
        started = time.perf_counter()
        await step(session, i)
        if i >= warmup:
            samples.append((time.perf_counter() - started) * 1000)
    return _ms(samples)


def _ok(result: Any, what: str) -> Any:
    if getattr(result, "is_error", None) or getattr(result, "isError", None):
        raise click.ClickException(f"{what} failed: {result.content[0].text[:300]}")
    structured = getattr(result, "structured_content", None)
    return structured if structured is not None else getattr(result, "structuredContent", None)


async def _flowstate(flowstate: str, uri: str, rounds: int) -> dict[str, Any]:
    namespace = f"bench_mcp_{uuid.uuid4().hex[:8]}"
    env = {**os.environ, "FLOWSTATE_NEO4J_URI": uri}
    session, stack = await _session(flowstate, ["mcp", "-N", namespace, "--allow-forget"], env)
    async with stack:

        async def remember(s: Any, i: int) -> None:
            fact = {"summary": f"Prefers window seat number {i}", "category": "preference"}
            out = _ok(await s.call_tool("memory_remember", fact), "memory_remember")
            _ok(await s.call_tool("memory_reveal", {"ids": [out["state_id"]]}), "memory_reveal")

        async def three_calls(s: Any, i: int) -> None:
            begun = _ok(await s.call_tool("memory_begin", {"text": f"fact {i}"}), "memory_begin")
            held = {"request_id": begun["request_id"], "handle": begun["handle"]}
            op = {"op": "add", "key": "seat", "category": "preference", "summary": f"seat {i}"}
            delta = {**held, "delta": [{**op, "content": f"seat {i}"}]}
            _ok(await s.call_tool("memory_record", delta), "memory_record")
            _ok(await s.call_tool("memory_commit", {**held, "answer": "ok"}), "commit")
            rid = held["request_id"]
            _ok(await s.call_tool("memory_reveal", {"ids": [f"{rid}.seat"]}), "memory_reveal")

        figures = {
            "remember_and_read": await _timed(session, remember, rounds),
            "begin_record_commit_and_read": await _timed(session, three_calls, rounds),
        }
        await session.call_tool("memory_forget", {"id": "r1"})
    _forget(uri, namespace)
    return figures


def _forget(uri: str, namespace: str) -> None:
    from flowstate.api import FlowState

    with FlowState.connect(uri, namespace=namespace) as fs:
        fs.repository.forget_namespace()


async def _neo4j_memory(command: str, uri: str, rounds: int) -> dict[str, Any]:
    tag = uuid.uuid4().hex[:8]
    env = {**os.environ, "NEO4J_URL": uri, "NEO4J_URI": uri, "NEO4J_USERNAME": "neo4j"}
    env.setdefault("NEO4J_PASSWORD", "password")  # ignored by a server without auth
    session, stack = await _session(command, ["--db-url", uri], env)
    names: list[str] = []
    async with stack:

        async def write_and_read(s: Any, i: int) -> None:
            name = f"bench-{tag}-{i}"
            names.append(name)
            entity = {"name": name, "type": "preference", "observations": [f"window seat {i}"]}
            _ok(await s.call_tool("create_entities", {"entities": [entity]}), "create_entities")
            found = await s.call_tool("find_memories_by_name", {"names": [name]})
            _ok(found, "find_memories_by_name")

        figures = {"create_and_find": await _timed(session, write_and_read, rounds)}
        await session.call_tool("delete_entities", {"entityNames": names})
    return figures


def _bare(uri: str, rounds: int) -> dict[str, Any]:
    import neo4j

    with neo4j.GraphDatabase.driver(uri, auth=None) as driver:
        tag = uuid.uuid4().hex[:8]

        def timed(query: str) -> dict[str, float]:
            samples = []
            for i in range(rounds + 3):
                started = time.perf_counter()
                driver.execute_query(query, {"tag": tag, "i": i})
                if i >= 3:
                    samples.append((time.perf_counter() - started) * 1000)
            return _ms(samples)

        figures = {
            "return_1": timed("RETURN 1"),
            "single_node_write": timed("CREATE (:BenchMcpProbe {tag: $tag, i: $i})"),
        }
        driver.execute_query("MATCH (n:BenchMcpProbe {tag: $tag}) DELETE n", {"tag": tag})
    return figures


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def _cold(flowstate: str, env: dict[str, str], until_ready_s: float) -> dict[str, Any]:
    """Spawn to `initialize` answered; then how long until a tool call succeeds."""
    started = time.perf_counter()
    session, stack = await _session(flowstate, ["mcp", "-N", "bench_cold"], env)
    figures: dict[str, Any] = {"initialize_ms": round((time.perf_counter() - started) * 1000, 1)}
    async with stack:
        first = await session.call_tool("memory_index", {})
        figures["first_call"] = first.content[0].text[:160]
        while time.perf_counter() - started < until_ready_s:
            result = await session.call_tool("memory_index", {})
            if not (getattr(result, "is_error", None) or getattr(result, "isError", None)):
                figures["ready_s"] = round(time.perf_counter() - started, 1)
                break
            await asyncio.sleep(0.5)
    return figures


def _cold_unconfigured(flowstate: str, until_ready_s: float) -> dict[str, Any]:
    """No Neo4j configured, nothing on the managed server's port: it starts one (spare ports
    and a throw-away data folder), stopped afterwards."""
    data = tempfile.mkdtemp(prefix="flowstate-bench-cold-")
    env = {k: v for k, v in os.environ.items() if k != "FLOWSTATE_NEO4J_URI"}
    env |= {
        "FLOWSTATE_LOCAL_DATA_DIR": data,
        "FLOWSTATE_LOCAL_BOLT_PORT": str(_free_port()),
        "FLOWSTATE_LOCAL_HTTP_PORT": str(_free_port()),
    }
    try:
        return asyncio.run(_cold(flowstate, env, until_ready_s))
    finally:
        stop = [flowstate, "neo4j", "stop"]
        subprocess.run(stop, env=env, capture_output=True, timeout=120, check=False)
        shutil.rmtree(data, ignore_errors=True)


def run_mcp_bench(
    uri: str, rounds: int, neo4j_memory: str | None, unconfigured: bool
) -> dict[str, Any]:
    flowstate = shutil.which("flowstate") or str(Path(sys.executable).with_name("flowstate"))
    report: dict[str, Any] = {"neo4j": uri, "rounds": rounds}
    report["bare_bolt"] = _bare(uri, rounds)
    report["flowstate_mcp"] = asyncio.run(_flowstate(flowstate, uri, rounds))
    if neo4j_memory:
        report["mcp_neo4j_memory"] = asyncio.run(_neo4j_memory(neo4j_memory, uri, rounds))
    report["bare_bolt_after"] = _bare(uri, rounds)  # the machine's drift across the run
    configured = {**os.environ, "FLOWSTATE_NEO4J_URI": uri}
    report["cold_start_configured"] = asyncio.run(_cold(flowstate, configured, 30))
    if unconfigured:
        report["cold_start_unconfigured"] = _cold_unconfigured(flowstate, 300)
    return report
