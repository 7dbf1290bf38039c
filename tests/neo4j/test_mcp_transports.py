"""`flowstate mcp` as a real subprocess, driven by clients over stdio and streamable HTTP on
loopback: the Python SDK's, the TypeScript SDK's (under node) and the MCP Inspector CLI (both
from npm, installed into tests/node by `make test-clients`, `make test` or CI), against a real
Neo4j."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from flowstate import FlowState
from flowstate.store import Repository, Store
from tests.neo4j.engine_helpers import add
from tests.neo4j.mcp_host import (
    NO_HANDLE,
    assert_same_as_the_agent_loop,
    book_a_hotel,
    call,
    first_requests,
    ok,
    tools_of,
)

pytestmark = pytest.mark.neo4j

FLOWSTATE = str(Path(sys.executable).parent / "flowstate")
TOKEN = "s3cret-token"
NODE_DIR = Path(__file__).resolve().parents[1] / "node"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _node_tools() -> Path:
    """tests/node with its npm packages; fails (not skips) when they are missing."""
    if shutil.which("node") is None:
        pytest.fail("node is not installed: the MCP tests drive the server with node clients")
    if not (NODE_DIR / "node_modules" / "@modelcontextprotocol" / "sdk").is_dir():
        pytest.fail(f"the node MCP clients are not installed: npm ci --prefix {NODE_DIR}")
    return NODE_DIR


async def _stdio(
    namespace: str, *flags: str, env: dict[str, str] | None = None
) -> tuple[ClientSession, AsyncExitStack]:
    params = StdioServerParameters(
        command=FLOWSTATE, args=["mcp", "-N", namespace, *flags], env=env or dict(os.environ)
    )
    stack = AsyncExitStack()
    read, write = await stack.enter_async_context(stdio_client(params))
    session = await stack.enter_async_context(ClientSession(read, write))
    await session.initialize()
    return session, stack


def _serve_http(namespace: str, *flags: str) -> tuple[subprocess.Popen[bytes], str]:
    port = _free_port()
    env = {**os.environ, "FLOWSTATE_MCP_TOKEN": TOKEN}
    args = ["mcp", "-N", namespace, "--transport", "streamable-http", "--port", str(port)]
    process = subprocess.Popen([FLOWSTATE, *args, *flags], env=env, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return process, f"http://127.0.0.1:{port}/mcp"
        except OSError:
            assert process.poll() is None, process.stderr and process.stderr.read()
            assert time.monotonic() < deadline, "the server did not listen"
            time.sleep(0.2)


@pytest.fixture
def http_server(repo: Repository) -> Iterator[str]:
    """`flowstate mcp` over streamable HTTP on loopback, with a token; its URL."""
    process, url = _serve_http(repo.namespace)
    try:
        yield url
    finally:
        process.terminate()
        process.wait(timeout=30)


def test_over_stdio(store: Store, repo: Repository, other_repo: Repository) -> None:
    first_requests(store, repo.namespace, other_repo.namespace)

    async def run() -> str:
        session, stack = await _stdio(repo.namespace)
        async with stack:
            return await book_a_hotel(session)

    assert asyncio.run(run()) == "r2"
    assert_same_as_the_agent_loop(store, repo, other_repo)


def test_the_environment_turns_read_only_and_forget_on(repo: Repository) -> None:
    async def listed(env: dict[str, str], *flags: str) -> list[str]:
        session, stack = await _stdio(repo.namespace, *flags, env={**os.environ, **env})
        async with stack:
            return sorted(t.name for t in (await session.list_tools()).tools)

    read_only = asyncio.run(listed({"FLOWSTATE_MCP_READ_ONLY": "true"}))
    assert "memory_begin" not in read_only and "memory_index" in read_only
    forget = asyncio.run(listed({"FLOWSTATE_MCP_ALLOW_FORGET": "1"}))
    assert "memory_forget" in forget and "memory_begin" in forget
    # Read-only never lists a deletion: asked for both, the server does not start.
    both = subprocess.run(
        [FLOWSTATE, "mcp", "-N", repo.namespace, "--read-only"],
        env={**os.environ, "FLOWSTATE_MCP_ALLOW_FORGET": "1"},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert both.returncode == 2 and both.stdout == ""
    assert "--read-only and FLOWSTATE_MCP_ALLOW_FORGET=true exclude each other" in both.stderr


def test_over_streamable_http_with_a_token(
    store: Store, repo: Repository, other_repo: Repository, http_server: str
) -> None:
    first_requests(store, repo.namespace, other_repo.namespace)
    headers = {"Authorization": f"Bearer {TOKEN}"}

    async def run() -> str:
        async with AsyncExitStack() as stack:
            read, write, *_ = await stack.enter_async_context(_http_client(http_server, headers))
            session = await stack.enter_async_context(ClientSession(read, write))
            await session.initialize()
            return await book_a_hotel(session)

    assert asyncio.run(run()) == "r2"
    assert_same_as_the_agent_loop(store, repo, other_repo)


@contextlib.asynccontextmanager
async def _http_client(url: str, headers: dict[str, str]) -> AsyncIterator[Any]:
    """The Python SDK's streamable HTTP client, either line (2.x takes an httpx2 client)."""
    try:
        import httpx2
        from mcp.client.streamable_http import streamable_http_client
    except ImportError:  # 1.x
        # The 1.x SDK's name, absent from the installed 2.x that mypy reads.
        from mcp.client.streamable_http import streamablehttp_client  # type: ignore[attr-defined]

        async with streamablehttp_client(url, headers=headers) as streams:
            yield streams
        return
    async with (
        httpx2.AsyncClient(headers=headers, timeout=60) as http,
        streamable_http_client(url, http_client=http) as streams,
    ):
        yield streams


def _typescript_host(*args: str) -> dict[str, Any]:
    node = _node_tools()
    done = subprocess.run(
        ["node", str(node / "host.mjs"), *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return dict(json.loads(done.stdout))


def _check_typescript_run(seen: dict[str, Any], repo: Repository) -> None:
    """What the TypeScript host read: fields of structured results, never text to parse."""
    assert seen["server"]["name"] == f"flowstate-{repo.namespace}"
    assert seen["tools"]["memory_index"]["annotations"]["readOnlyHint"] is True
    assert seen["tools"]["memory_discard"]["annotations"]["destructiveHint"] is True
    assert "memory_forget" not in seen["tools"]
    calls = seen["calls"]
    fact = calls["memory_remember"][0]["structured"]
    assert fact["state_id"] == "r1.prefers_window_seat_trains"
    assert list(calls["memory_search"][0]["structured"]["hits"]) == [fact["state_id"]]
    assert calls["memory_reveal"][0]["structured"]["states"][0]["id"] == fact["state_id"]
    assert calls["memory_begin"][0]["structured"]["request_id"] == "r2"
    good, refused = calls["memory_record"]
    assert good["structured"] == {"states": ["r2.train"]}
    assert refused["isError"] and "nothing applied" in refused["text"]
    assert calls["memory_commit"][0]["structured"]["states_added"] == ["r2.train"]
    assert "r2.train [decision]" in calls["memory_index"][0]["structured"]["text"]
    [*_, bundle] = repo.bundles()
    assert [(r.source, r.type.value, r.target) for r in bundle.relations] == [
        ("r2.train", "DEPENDS_ON", fact["state_id"])
    ]


def test_the_typescript_sdk_client_over_stdio(repo: Repository) -> None:
    seen = _typescript_host("stdio", FLOWSTATE, repo.namespace)
    _check_typescript_run(seen, repo)
    read_only = _typescript_host("stdio", FLOWSTATE, repo.namespace, "--read-only")
    assert all(t["annotations"]["readOnlyHint"] for t in read_only["tools"].values())
    assert "memory_begin" not in read_only["tools"] and len(read_only["tools"]) == 5
    assert read_only["calls"]["memory_search"][0]["structured"]["hits"]


def test_the_typescript_sdk_client_over_streamable_http(repo: Repository, http_server: str) -> None:
    _check_typescript_run(_typescript_host("http", http_server, TOKEN), repo)


def _inspector(namespace: str, *args: str) -> dict[str, Any]:
    node = _node_tools()
    command = [str(node / "node_modules" / ".bin" / "mcp-inspector"), "--cli"]
    # The SDK's stdio transport gives a server only a few variables of its own (HOME, PATH,
    # ...): the server is handed the FlowState settings, as a host's configuration hands them.
    settings = [f"{k}={v}" for k, v in os.environ.items() if k.startswith("FLOWSTATE_")]
    command += [arg for pair in settings for arg in ("-e", pair)]
    done = subprocess.run(
        [*command, FLOWSTATE, "mcp", "-N", namespace, *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ},
    )
    assert done.returncode == 0, (done.stdout[-1000:], done.stderr[-2000:])
    return dict(json.loads(done.stdout))


def test_the_inspector_cli_lists_and_calls(store: Store, repo: Repository) -> None:
    first_requests(store, repo.namespace)
    listed = _inspector(repo.namespace, "--read-only", "--method", "tools/list")
    names = sorted(t["name"] for t in listed["tools"])
    assert names == sorted(
        ["memory_index", "memory_search", "memory_reveal", "memory_why", "memory_history"]
    )
    assert all(t["annotations"]["readOnlyHint"] and t["outputSchema"] for t in listed["tools"])
    found = _inspector(
        repo.namespace,
        "--read-only",
        "--method",
        "tools/call",
        "--tool-name",
        "memory_search",
        "--tool-arg",
        "query=hotel budget",
    )
    assert list(found["structuredContent"]["hits"])[0] == "r1.budget"


def test_an_unauthenticated_http_call_is_refused(http_server: str) -> None:
    import urllib.error
    import urllib.request

    initialize = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}})
    for headers in ({}, {"Authorization": "Bearer wrong"}):
        sent = urllib.request.Request(
            http_server,
            data=initialize.encode(),
            headers={"Content-Type": "application/json", **headers},
        )
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(sent, timeout=30)
        assert refused.value.code == 401


def test_http_off_loopback_needs_a_token(repo: Repository) -> None:
    env = {k: v for k, v in os.environ.items() if k != "FLOWSTATE_MCP_TOKEN"}
    args = ["mcp", "-N", repo.namespace, "--transport", "streamable-http", "--host", "0.0.0.0"]
    done = subprocess.run([FLOWSTATE, *args], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "not loopback" in done.stderr


def test_initialize_is_answered_before_neo4j_and_a_call_says_why_it_waits() -> None:
    """A Neo4j that does not answer: `initialize` and the tool list come at once; a call says
    what is wrong instead of hanging, and no write tool pretends to work."""
    dead = f"bolt://127.0.0.1:{_free_port()}"
    env = {**os.environ, "FLOWSTATE_NEO4J_URI": dead, "FLOWSTATE_NEO4J_RETRY_TIME_S": "1"}

    async def run() -> tuple[float, Any, Any]:
        started = time.perf_counter()
        session, stack = await _stdio("cold_start", env=env)
        answered = time.perf_counter() - started
        async with stack:
            tools = await tools_of(session)
            first = await call(session, "memory_remember", summary="x", category="environment")
            return answered, tools, first

    answered, tools, first = asyncio.run(run())
    assert answered < 10, answered  # imports only; connecting happens in the background
    assert "memory_remember" in tools
    assert first.error and ("not ready yet" in first.text or dead.split("//")[1] in first.text)


def test_a_commit_that_landed_before_its_server_died_is_returned_on_retry(
    store: Store, repo: Repository
) -> None:
    first_requests(store, repo.namespace)
    handles: dict[str, str] = {}

    async def first_server() -> None:
        session, stack = await _stdio(repo.namespace)
        async with stack:
            handles["r2"] = (await ok(session, "memory_begin", text="Book it"))["handle"]
            await ok(session, "memory_record", request_id="r2", delta=[add("plan", "decision")])
            await ok(session, "memory_commit", request_id="r2", answer="done")  # reply "lost"
            _kill(f"flowstate mcp -N {re.escape(repo.namespace)}")

    async def second_server() -> dict[str, Any]:
        session, stack = await _stdio(repo.namespace)
        async with stack:
            mine = handles["r2"]
            other = await call(session, "memory_commit", request_id="r2", answer="x", handle="h")
            assert other.error and "not open to this handle" in other.text
            retried = await ok(
                session, "memory_commit", request_id="r2", answer="done", handle=mine
            )
            late = await call(
                session, "memory_record", request_id="r2", delta=[add("x")], handle=mine
            )
            assert late.error and "already committed" in late.text
            return retried

    with contextlib.suppress(BaseException):  # the first host loses its server
        asyncio.run(first_server())
    retried = asyncio.run(second_server())
    assert retried["already_committed"] is True and retried["states_added"] == ["r2.plan"]
    assert [b.request.id for b in repo.bundles()] == ["r1", "r2"]


def test_a_second_servers_draft_ttl_spares_a_request_another_server_works_on(
    store: Store, repo: Repository
) -> None:
    """Server A works on a request, saving a step every second; server B, with a 3 s
    --draft-ttl, must not discard or take it however long it has seen it, and runs its own
    request beside it. After A is killed, a call with its id picks the request up on B, whole."""
    first_requests(store, repo.namespace)
    worked, killed = threading.Event(), threading.Event()
    handles: dict[str, str] = {}

    async def server_a() -> None:
        a, stack = await _stdio(repo.namespace)
        async with stack:
            handles["r2"] = (await ok(a, "memory_begin", text="long work"))["handle"]
            for n in range(7):
                await ok(a, "memory_record", request_id="r2", delta=[add(f"k{n}")])
                await asyncio.sleep(1)
            worked.set()
            await asyncio.to_thread(killed.wait, 60)

    def host_a() -> None:
        with contextlib.suppress(BaseException):  # its server is killed under it
            asyncio.run(server_a())

    async def run() -> dict[str, Any]:
        b, stack = await _stdio(repo.namespace, "--draft-ttl", "3")
        async with stack:
            assert await asyncio.to_thread(worked.wait, 60)
            beside = await ok(b, "memory_begin", text="second host")  # side by side
            assert beside["request_id"] == "r3"
            mine = handles["r2"]  # the host of A, reconnected to B
            refused = await call(
                b, "memory_record", request_id="r2", delta=[add("taken")], handle=mine
            )
            assert refused.error and "holds it until" in refused.text
            await ok(b, "memory_discard", request_id="r3")
            _kill(f"flowstate mcp -N {re.escape(repo.namespace)}$")  # A only
            killed.set()
            await asyncio.to_thread(thread.join, 60)  # A's process reaped, not a zombie
            picked = await ok(b, "memory_record", request_id="r2", delta=[add("done")], handle=mine)
            committed = await ok(
                b, "memory_commit", request_id="r2", answer="finished", handle=mine
            )
            return {"picked": picked, "committed": committed}

    thread = threading.Thread(target=host_a)
    thread.start()
    try:
        done = asyncio.run(run())
    finally:
        killed.set()
        thread.join(timeout=60)
    assert done["picked"]["states"] == ["r2.done"]
    assert sorted(done["committed"]["states_added"]) == sorted(
        [f"r2.k{n}" for n in range(7)] + ["r2.done"]
    )


def _kill(pattern: str) -> None:
    """kill -9 the processes whose command line matches `pattern`."""
    found = subprocess.run(["pgrep", "-f", pattern], capture_output=True, text=True)
    for pid in found.stdout.split():
        os.kill(int(pid), signal.SIGKILL)


def test_two_servers_remembering_at_once_never_share_an_id(repo: Repository) -> None:
    async def server(tag: str) -> list[str]:
        session, stack = await _stdio(repo.namespace, "--draft-ttl", tag)
        async with stack:
            await ok(session, "memory_index")  # connected
            made = []
            for n in range(10):
                fact = await ok(
                    session, "memory_remember", summary=f"fact {n} of {tag}", category="environment"
                )
                made.append(fact["state_id"].split(".")[0])
            return made

    async def run() -> list[list[str]]:
        return list(await asyncio.gather(server("900"), server("901")))

    first, second = asyncio.run(run())
    assert sorted(first + second, key=lambda r: int(r[1:])) == [f"r{n}" for n in range(1, 21)]
    assert all(len(b.states) == 1 for b in repo.bundles()) and repo.open_requests() == []


def test_the_log_is_one_line_per_event(store: Store, repo: Repository) -> None:
    first_requests(store, repo.namespace)
    params = StdioServerParameters(
        command=FLOWSTATE, args=["mcp", "-N", repo.namespace], env=dict(os.environ)
    )
    log = Path(os.environ.get("TMPDIR", "/tmp")) / f"{repo.namespace}.log"

    async def run() -> None:
        with log.open("w") as errlog:
            async with (
                stdio_client(params, errlog=errlog) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                await ok(session, "memory_index")
                await ok(session, "memory_begin", text="x")
                for _ in range(3):
                    delta = [{"op": "update", "key": "no\nsuch", "summary": "a\nb"}]
                    assert (
                        await call(session, "memory_record", request_id="r2", delta=delta)
                    ).error
                assert (await call(session, "memory_record", request_id="r2", delta="[")).error
                await ok(session, "memory_discard", request_id="r2")

    asyncio.run(run())
    lines = log.read_text().splitlines()
    log.unlink()
    refused = [line for line in lines if "refused" in line]
    assert len(refused) == 4, lines
    pattern = re.compile(r"^\d\d:\d\d:\d\d \w+ [\w.]+: \S")
    assert all(pattern.match(line) for line in lines), lines
    assert not any("Traceback" in line or "│" in line for line in lines)


def test_over_one_http_server_a_host_cannot_touch_another_hosts_request(
    store: Store, repo: Repository, http_server: str
) -> None:
    """Two hosts on one shared server: B knows A's request id (ids are sequential) but not its
    handle, so it can neither write, read, commit nor discard it; A's request is unchanged."""
    first_requests(store, repo.namespace)

    async def run() -> dict[str, Any]:
        async with AsyncExitStack() as stack:
            a, b = await _http_host(stack, http_server), await _http_host(stack, http_server)
            begun = await ok(a, "memory_begin", text="Book a hotel in Lisbon")
            mine = {"request_id": begun["request_id"], "handle": begun["handle"]}
            await ok(a, "memory_reveal", **mine, ids=["r1.budget"])
            await ok(a, "memory_record", **mine, delta=[add("plan", "decision")])
            before = repo.open_request("r2")
            refused = {}
            for handle in (NO_HANDLE, "fsh_guess", begun["handle"][:-1]):
                theirs = {"request_id": "r2", "handle": handle}
                refused[str(handle)] = [
                    await call(b, "memory_record", **theirs, delta=[add("taken")]),
                    await call(b, "memory_commit", **theirs, answer="mine now"),
                    await call(b, "memory_discard", **theirs),
                    await call(b, "memory_observe", **theirs, tool="t", arguments={}, output="x"),
                    await call(b, "memory_reveal", **theirs, ids=["r1.budget"], page=2),
                    await call(b, "memory_index", **theirs),
                ]
            assert repo.open_request("r2") == before  # the draft as A left it
            committed = await ok(a, "memory_commit", **mine, answer="Booked", summary="Hotel")
            retried = await call(b, "memory_commit", request_id="r2", handle="fsh_x", answer="x")
            again = await ok(a, "memory_commit", **mine, answer="Booked")
            return {"refused": refused, "committed": committed, "retried": retried, "again": again}

    out = asyncio.run(run())
    for handle, calls in out["refused"].items():
        for refusal in calls:
            assert refusal.error, (handle, refusal.text)
            if handle == str(NO_HANDLE):  # refused by the schema or, where optional, by the call
                assert "handle: " in refusal.text and "required" in refusal.text
            else:
                assert "not open to this handle" in refusal.text
                assert "Nothing was done" in refusal.text
    assert out["committed"]["states_added"] == ["r2.plan"]
    assert out["retried"].error and "not open to this handle" in out["retried"].text
    assert out["again"]["already_committed"] is True
    [*_, bundle] = repo.bundles()
    assert bundle.request.answer == "Booked" and [s.id for s in bundle.states] == ["r2.plan"]


def test_over_one_http_server_each_host_reads_what_it_was_shown(
    store: Store, repo: Repository, http_server: str
) -> None:
    """Reads outside a request are each HTTP session's own: a host never opens an id that
    only another host was shown."""
    first_requests(store, repo.namespace)
    fs = FlowState(store, repo.namespace)
    s = fs.begin("Book a hotel")
    s.observe("search_hotels", {"city": "Lisbon"}, "Casa Azul, 120 EUR")
    s.record([add("hotel", "decision") | {"evidence": ["r2.o1"]}])
    s.commit("Casa Azul", "Hotel")

    async def run() -> tuple[Any, Any, Any]:
        async with AsyncExitStack() as stack:
            a, b = await _http_host(stack, http_server), await _http_host(stack, http_server)
            await ok(a, "memory_reveal", ids=["r2.hotel"])  # its evidence r2.o1 shown to A
            opened = await call(a, "memory_reveal", ids=["r2.o1"])
            refused = await call(b, "memory_reveal", ids=["r2.o1"])
            await ok(b, "memory_reveal", ids=["r2.hotel"])
            return opened, refused, await call(b, "memory_reveal", ids=["r2.o1"])

    opened, refused, later = asyncio.run(run())
    assert not opened.error and opened.data["observations"][0]["id"] == "r2.o1"
    assert refused.error and "r2.o1: unknown id" in refused.text
    assert not later.error  # once shown to B itself


async def _http_host(stack: AsyncExitStack, url: str) -> Any:
    """A client session of the server at `url`, with the token, kept open by `stack`."""
    headers = {"Authorization": f"Bearer {TOKEN}"}
    read, write, *_ = await stack.enter_async_context(_http_client(url, headers))
    session = await stack.enter_async_context(ClientSession(read, write))
    await session.initialize()
    return session
