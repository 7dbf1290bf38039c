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


def _ms(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return {"p50": round(statistics.median(ordered), 2), "p95": round(p95, 2), "n": len(ordered)}


async def _session(
    command: str, args: list[str], env: dict[str, str], errlog: Any = None
) -> tuple[Any, Any]:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    stack = AsyncExitStack()
    params = StdioServerParameters(command=command, args=args, env=env)
    streams = stdio_client(params, errlog=errlog) if errlog is not None else stdio_client(params)
    read, write = await stack.enter_async_context(streams)
    session = await stack.enter_async_context(ClientSession(read, write))
    await session.initialize()
    return session, stack


def _ok(result: Any, what: str) -> Any:
    if getattr(result, "is_error", None) or getattr(result, "isError", None):
        raise click.ClickException(f"{what} failed: {result.content[0].text[:300]}")
    structured = getattr(result, "structured_content", None)
    return structured if structured is not None else getattr(result, "structuredContent", None)


class _Server:
    """A `flowstate mcp` spawned over stdio, its log in a file: the bench waits for the line
    that says it warmed up (or connected, without the warm-up) before it times anything."""

    def __init__(self, flowstate: str, uri: str, namespace: str, *flags: str, **env: str):
        self.args = ["mcp", "-N", namespace, *flags]
        self.env = {**os.environ, "FLOWSTATE_NEO4J_URI": uri, **env}
        fd, self.path = tempfile.mkstemp(prefix="flowstate-mcp-", suffix=".log")
        self.log = os.fdopen(fd, "w+")  # closed and removed by `close`
        self.flowstate, self.namespace = flowstate, namespace

    async def open(self, until: str = "warmed up", wait_s: float = 180) -> Any:
        started = time.perf_counter()
        session, self.stack = await _session(self.flowstate, self.args, self.env, self.log)
        while until not in Path(self.path).read_text(errors="replace"):
            if time.perf_counter() - started > wait_s:
                raise click.ClickException(f"no '{until}' in {wait_s:.0f} s: {self.tail()}")
            await asyncio.sleep(0.05)
        self.ready_s = round(time.perf_counter() - started, 2)
        return session

    def close(self) -> None:
        self.log.close()
        Path(self.path).unlink(missing_ok=True)

    def tail(self) -> str:
        return Path(self.path).read_text(errors="replace")[-600:]


async def _call(s: Any, into: dict[str, list[float]], name: str, args: dict[str, Any]) -> Any:
    """One tools/call, timed from sending it to its parsed reply. The Python SDK client's
    check of the structured content against the tool's output schema (jsonschema, which
    costs up to tens of ms the first time per schema) comes after, untimed, for every server
    alike: it is the client's cost, not the server's."""
    import mcp.types as types

    from flowstate.mcp.sdk import LINE

    request: Any = types.CallToolRequest(
        method="tools/call", params=types.CallToolRequestParams(name=name, arguments=args)
    )
    if LINE == 1:
        request = types.ClientRequest(request)  # type: ignore[operator, call-arg, unused-ignore]
    started = time.perf_counter()
    result = await s.send_request(request, types.CallToolResult)
    into.setdefault(name, []).append((time.perf_counter() - started) * 1000)
    if not getattr(result, "is_error", None) and not getattr(result, "isError", None):
        check = getattr(s, "validate_tool_result", None) or s._validate_tool_result
        await check(name, result)
    return _ok(result, name)


async def _fs_fact(s: Any, i: int, into: dict[str, list[float]]) -> None:
    """One fact written and read back: memory_remember, then memory_reveal of its state."""
    fact = {"summary": f"Prefers window seat number {i}", "category": "preference"}
    out = await _call(s, into, "memory_remember", fact)
    await _call(s, into, "memory_reveal", {"ids": [out["state_id"]]})


async def _nm_fact(s: Any, i: int, into: dict[str, list[float]], tag: str) -> None:
    """The same with mcp-neo4j-memory: create_entities, then find_memories_by_name."""
    name = f"bench-{tag}-{i}"
    entity = {"name": name, "type": "preference", "observations": [f"window seat {i}"]}
    await _call(s, into, "create_entities", {"entities": [entity]})
    await _call(s, into, "find_memories_by_name", {"names": [name]})


async def _four_calls(s: Any, i: int, into: dict[str, list[float]]) -> None:
    begun = await _call(s, into, "memory_begin", {"text": f"fact {i}"})
    held = {"request_id": begun["request_id"], "handle": begun["handle"]}
    op = {"op": "add", "key": "seat", "category": "preference", "summary": f"seat {i}"}
    await _call(s, into, "memory_record", {**held, "delta": [{**op, "content": f"seat {i}"}]})
    await _call(s, into, "memory_commit", {**held, "answer": "ok"})
    rid = held["request_id"]
    await _call(s, into, "memory_reveal", {"ids": [f"{rid}.seat"]})


def _rounds(into: dict[str, list[float]], names: list[str], warm: int) -> dict[str, Any]:
    """p50/p95 of each call and of their sum per round, the warm rounds left out."""
    totals = [sum(parts) for parts in zip(*(into[n] for n in names), strict=True)][warm:]
    return {"round": _ms(totals), **{n: _ms(into[n][warm:]) for n in names}}


async def _duel(
    flowstate: str,
    neo4j_memory: str | None,
    uri: str,
    rounds: int,
    warm: int,
    baseline: str | None = None,
) -> dict[str, Any]:
    """One client, both servers on the same Neo4j, rounds interleaved (who goes first moves
    round by round): one fact written and read back by each, `warm` rounds left out. With
    `baseline` (another build's `flowstate` command), its server takes its turn too."""
    server = _Server(flowstate, uri, f"bench_mcp_{uuid.uuid4().hex[:8]}", "--allow-forget")
    fs = await server.open()
    async with AsyncExitStack() as stack:
        stack.push_async_exit(server.stack)
        old, old_server = None, None
        before: dict[str, list[float]] = {}
        if baseline:
            old_server = _Server(baseline, uri, f"bench_mcp_{uuid.uuid4().hex[:8]}")
            old = await old_server.open("connected")
            stack.push_async_exit(old_server.stack)
        nm = None
        if neo4j_memory:
            env = {**os.environ, "NEO4J_URL": uri, "NEO4J_URI": uri, "NEO4J_USERNAME": "neo4j"}
            env.setdefault("NEO4J_PASSWORD", "password")  # ignored by a server without auth
            nm, nm_stack = await _session(neo4j_memory, ["--db-url", uri], env)
            stack.push_async_exit(nm_stack)
        mine: dict[str, list[float]] = {}
        theirs: dict[str, list[float]] = {}
        tag = uuid.uuid4().hex[:8]
        turns: list[Callable[[int], Awaitable[None]]] = [lambda i: _fs_fact(fs, i, mine)]
        if old is not None:
            turns.append(lambda i: _fs_fact(old, i, before))
        if nm is not None:
            turns.append(lambda i: _nm_fact(nm, i, theirs, tag))
        for i in range(warm + rounds):
            for n in range(len(turns)):  # who goes first moves round by round
                await turns[(i + n) % len(turns)](i)
        four: dict[str, list[float]] = {}
        for i in range(warm + rounds):
            await _four_calls(fs, i, four)
        figures: dict[str, Any] = {
            "flowstate": _rounds(mine, ["memory_remember", "memory_reveal"], warm),
            "flowstate_four_calls": _rounds(
                four, ["memory_begin", "memory_record", "memory_commit", "memory_reveal"], warm
            ),
        }
        if old is not None:
            figures["baseline"] = _rounds(before, ["memory_remember", "memory_reveal"], warm)
        if nm is not None:
            figures["mcp_neo4j_memory"] = _rounds(
                theirs, ["create_entities", "find_memories_by_name"], warm
            )
            figures["ratio_p50"] = round(
                figures["flowstate"]["round"]["p50"] / figures["mcp_neo4j_memory"]["round"]["p50"],
                2,
            )
            names = [f"bench-{tag}-{i}" for i in range(warm + rounds)]
            await nm.call_tool("delete_entities", {"entityNames": names})
    for spawned in (server, old_server):
        if spawned is not None:
            _forget(uri, spawned.namespace)
            spawned.close()
    return figures


async def _every_tool(s: Any, i: int, into: dict[str, list[float]]) -> None:
    """Each tool once (reads of a request too), in the order a host might call them."""
    fact = await _call(
        s, into, "memory_remember", {"summary": f"Seat {i}", "category": "preference"}
    )
    state = fact["state_id"]
    await _call(s, into, "memory_reveal", {"ids": [state]})
    await _call(s, into, "memory_index", {})
    await _call(s, into, "memory_search", {"query": "seat"})
    await _call(s, into, "memory_why", {"state_id": state})
    await _call(s, into, "memory_history", {})
    begun = await _call(s, into, "memory_begin", {"text": f"Book seat {i}"})
    held = {"request_id": begun["request_id"], "handle": begun["handle"]}
    seen = await _call(
        s, into, "memory_observe", {**held, "tool": "seats", "arguments": {}, "output": "12A"}
    )
    add = {"op": "add", "key": "seat", "category": "decision", "summary": f"Seat {i} chosen"}
    delta = [{**add, "content": "12A", "evidence": [seen["observation_id"]]}]
    await _call(s, into, "memory_record", {**held, "delta": delta})
    cites = [f"{held['request_id']}.seat"]
    guard = {**held, "tool": "book", "arguments": {}, "cites": cites}
    await _call(s, into, "memory_guard", guard)
    await _call(s, into, "memory_commit", {**held, "answer": "booked"})
    other = await _call(s, into, "memory_begin", {"text": f"Another seat {i}"})
    await _call(s, into, "memory_discard", {k: other[k] for k in ("request_id", "handle")})


async def _first_calls(flowstate: str, uri: str, warm_up: bool, passes: int = 6) -> dict[str, Any]:
    """A server just spawned on a namespace never used: the first call of each tool against
    its median over the next passes."""
    env = {"FLOWSTATE_MCP_WARM_UP": str(warm_up).lower()}
    namespace = f"bench_first_{uuid.uuid4().hex[:8]}"
    server = _Server(flowstate, uri, namespace, **env)
    s = await server.open("warmed up" if warm_up else "connected")
    into: dict[str, list[float]] = {}
    async with server.stack:
        for i in range(passes):
            await _every_tool(s, i, into)
    _forget(uri, namespace)
    server.close()
    tools: dict[str, Any] = {}
    for name, samples in into.items():
        per_pass = len(samples) // passes  # memory_begin runs twice a pass
        first, later = samples[0], samples[per_pass:]
        median = statistics.median(later)
        tools[name] = {"first": round(first, 1), "warm_p50": round(median, 1),
                       "ratio": round(first / median, 2)}  # fmt: skip
    worst = max(tools.items(), key=lambda kv: kv[1]["ratio"])
    return {"ready_s": server.ready_s, "worst": {worst[0]: worst[1]["ratio"]}, "tools": tools}


async def _search(flowstate: str, uri: str, namespace: str, rounds: int, warm: int) -> Any:
    """memory_search over a read-only server on a namespace of `states` states."""
    server = _Server(flowstate, uri, namespace, "--read-only")
    s = await server.open()
    into: dict[str, list[float]] = {}
    words = ["deploy window", "billing api", "schema migration", "latency budget", "cache"]
    async with server.stack:
        for i in range(warm + rounds):
            await _call(s, into, "memory_search", {"query": words[i % len(words)]})
    server.close()
    return _ms(into["memory_search"][warm:])


def _forget(uri: str, namespace: str) -> None:
    from flowstate.api import FlowState

    with FlowState.connect(uri, namespace=namespace) as fs:
        fs.repository.forget_namespace()


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
    """Spawn to `initialize` answered; then a host's first `memory_remember`, sent at once,
    with a progressToken: how long it took, whether it succeeded first time, how many
    progress notifications came; and when the server's log said Neo4j was ready, connected,
    and warmed up (seconds after spawn)."""
    with tempfile.NamedTemporaryFile("w+", prefix="flowstate-cold-", suffix=".log") as log:
        return await _cold_logged(flowstate, env, until_ready_s, log)


async def _cold_logged(
    flowstate: str, env: dict[str, str], until_ready_s: float, log: Any
) -> dict[str, Any]:
    started = time.perf_counter()
    session, stack = await _session(flowstate, ["mcp", "-N", "bench_cold"], env, log)
    figures: dict[str, Any] = {"initialize_ms": round((time.perf_counter() - started) * 1000, 1)}
    said: dict[str, float] = {}
    marks = {"Neo4j ready": " ready at bolt://", "connected": "connected:", "warmed": "warmed up"}

    async def watch() -> None:
        while len(said) < len(marks):
            text = Path(log.name).read_text(errors="replace")
            for mark, line in marks.items():
                if line in text and mark not in said:
                    said[mark] = round(time.perf_counter() - started, 2)
            await asyncio.sleep(0.05)

    notices: list[str] = []

    async def progress(done: float, total: float | None, message: str | None) -> None:
        notices.append(message or "")

    watcher = asyncio.ensure_future(watch())
    async with stack:
        fact = {"summary": "Lives in Porto", "category": "environment"}
        sent = time.perf_counter()
        first = await session.call_tool("memory_remember", fact, progress_callback=progress)
        figures["first_call_ok"] = not (getattr(first, "is_error", None) or False)
        figures["first_call_landed_s"] = round(time.perf_counter() - started, 2)
        figures["first_call_waited_s"] = round(time.perf_counter() - sent, 2)
        figures["first_call"] = first.content[0].text[:160]
        figures["progress_notifications"] = len(notices)
        while not figures["first_call_ok"] and time.perf_counter() - started < until_ready_s:
            result = await session.call_tool("memory_index", {})
            if not (getattr(result, "is_error", None) or getattr(result, "isError", None)):
                figures["ready_s"] = round(time.perf_counter() - started, 1)
                break
            await asyncio.sleep(0.5)
        await asyncio.sleep(0.2)
    watcher.cancel()
    figures["log_s"] = said
    if "Neo4j ready" in said and figures["first_call_ok"]:
        figures["landed_after_neo4j_ready_s"] = round(
            figures["first_call_landed_s"] - said["Neo4j ready"], 2
        )
    if "FLOWSTATE_NEO4J_URI" in env:
        _forget(env["FLOWSTATE_NEO4J_URI"], "bench_cold")
    return figures


def _cold_unconfigured(flowstate: str, until_ready_s: float) -> dict[str, Any]:
    """No Neo4j configured, nothing on the managed server's port: the server starts one
    (spare ports, a throw-away data folder). First on a new data folder, then again on the
    same folder once its Neo4j is stopped (a host spawning the server the next day)."""
    data = tempfile.mkdtemp(prefix="flowstate-bench-cold-")
    env = {k: v for k, v in os.environ.items() if k != "FLOWSTATE_NEO4J_URI"}
    env |= {
        "FLOWSTATE_LOCAL_DATA_DIR": data,
        "FLOWSTATE_LOCAL_BOLT_PORT": str(_free_port()),
        "FLOWSTATE_LOCAL_HTTP_PORT": str(_free_port()),
    }
    stop = [flowstate, "neo4j", "stop"]
    figures = {}
    try:
        for run in ("new_data_folder", "restarted"):
            figures[run] = asyncio.run(_cold(flowstate, env, until_ready_s))
            subprocess.run(stop, env=env, capture_output=True, timeout=120, check=False)
    finally:
        subprocess.run(stop, env=env, capture_output=True, timeout=120, check=False)
        shutil.rmtree(data, ignore_errors=True)
    return figures


def _extras() -> dict[str, Any]:
    """What the figures depend on besides the machine: the SDK lines and the [rust] extra."""
    from importlib.metadata import PackageNotFoundError, version

    found: dict[str, str] = {}
    for package in ("mcp", "neo4j", "neo4j-rust-ext"):
        try:
            found[package] = version(package)
        except PackageNotFoundError:
            found[package] = ""
    return {"rust": bool(found.pop("neo4j-rust-ext")), **found}


def _search_namespace(uri: str, states: int) -> str:
    """The bench's namespace of `states` states (built once, reused; see `namespaces`)."""
    from flowstate.settings import Neo4jSettings
    from flowstate.store import Store
    from flowstate_bench.namespaces import ensure

    with Store.connect(Neo4jSettings(uri=uri)) as store:
        return ensure(store, states).repo.namespace


def run_mcp_bench(
    uri: str,
    rounds: int,
    neo4j_memory: str | None,
    unconfigured: bool,
    warm: int = 2,
    search_states: int = 10_000,
    baseline: str | None = None,
) -> dict[str, Any]:
    flowstate = shutil.which("flowstate") or str(Path(sys.executable).with_name("flowstate"))
    report: dict[str, Any] = {"neo4j": uri, "rounds": rounds, "warm_rounds": warm}
    report["extras"] = _extras()
    report["load_before"] = [round(x, 2) for x in os.getloadavg()]
    report["bare_bolt"] = _bare(uri, rounds)
    duel = _duel(flowstate, neo4j_memory, uri, rounds, warm, baseline)
    report["one_fact"] = asyncio.run(duel)
    report["first_calls"] = asyncio.run(_first_calls(flowstate, uri, warm_up=True))
    report["first_calls_no_warm_up"] = asyncio.run(_first_calls(flowstate, uri, warm_up=False))
    if search_states:
        namespace = _search_namespace(uri, search_states)
        search = asyncio.run(_search(flowstate, uri, namespace, rounds, warm))
        report[f"search_{search_states}_states"] = search
    report["bare_bolt_after"] = _bare(uri, rounds)  # the machine's drift across the run
    configured = {**os.environ, "FLOWSTATE_NEO4J_URI": uri}
    report["cold_start_configured"] = asyncio.run(_cold(flowstate, configured, 30))
    if unconfigured:
        report["cold_start_unconfigured"] = _cold_unconfigured(flowstate, 300)
    report["load_after"] = [round(x, 2) for x in os.getloadavg()]
    return report
