"""One writer of the many-writer fault run, through one shell: the sync agent, the async agent
(`AsyncFlowState`), the session API (`fs.begin`) or an MCP server driven by a client.

The agents' model is scripted: it reads its prompt as a model would (the index, the refusals
of its last step) and writes the request of `fault_writer_jobs`. The session and MCP writers
are a host doing the same with the calls a host makes. Every writer reports what it did as
events (`begun`, `answered`, `guard`, `failed`, `index`), plain dicts: a writer in another
process prints them as JSON lines.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from flowstate.api import FlowState
from flowstate.async_api import AsyncFlowState
from flowstate.engine.step import AgentConfig
from flowstate.engine.tools import Tool
from flowstate.errors import StoreUnavailable, UsageError
from flowstate.llm.scripted import Message, ScriptedModel, unregister
from flowstate.models import Outcome
from flowstate.settings import Neo4jSettings
from flowstate.store import AsyncStore, Repository, Store
from flowstate_bench.fault_writer_jobs import (
    Belief,
    job_of,
    lowered,
    mark,
    newer_than,
    request_text,
    token_of,
)

T = TypeVar("T")
KINDS = ("sync", "async", "session", "mcp")
Emit = Callable[[dict[str, Any]], None]
OUTAGE_S = 180.0  # how long a writer waits for the server to come back before it fails
ATTEMPTS = 30  # revisions of one request before the writer gives up on it (a finding)
AGENT_CONFIG = AgentConfig(max_steps=2 * ATTEMPTS)
_REQUEST = re.compile(r"# User request \((r\d+)\)")


@dataclass(frozen=True)
class WriterJob:
    """Requests `first`..`last` of writer `writer`, through the shell `kind`."""

    settings: Neo4jSettings
    namespace: str
    writer: int
    kind: str
    first: int
    last: int
    pause_s: float = 0.02

    def event(self, name: str, n: int, **more: Any) -> dict[str, Any]:
        return {"event": name, "writer": self.writer, "kind": self.kind, "n": n, **more}


class GaveUp(Exception):
    """A request still refused after ATTEMPTS revisions."""


def run_writer(job: WriterJob, emit: Emit) -> None:
    """Run the job's requests one after another; every failure is an event, never raised."""
    with _patiently(lambda: Store.connect(job.settings, ensure_schema=False)) as store:
        repo = Repository(store, job.namespace)
        run = {"sync": _sync_agent, "async": _async_agent, "session": _session, "mcp": _mcp}
        run[job.kind](job, store, repo, emit)


def _patiently(connect: Callable[[], T]) -> T:
    """Connect, waiting out a server that is being restarted (the driver retries transactions
    on its own, but not the first connection)."""
    deadline = time.monotonic() + OUTAGE_S
    while True:
        try:
            return connect()
        except StoreUnavailable:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


async def _apatiently(connect: Callable[[], Awaitable[T]]) -> T:
    deadline = time.monotonic() + OUTAGE_S
    while True:
        try:
            return await connect()
        except StoreUnavailable:
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.5)


def _failed(job: WriterJob, n: int, e: BaseException) -> dict[str, Any]:
    return job.event("failed", n, error=f"{type(e).__name__}: {e}"[:600], type=type(e).__name__)


def _counter(repo: Repository) -> Callable[[], int]:
    return lambda: repo.stamp().committed


# --- the agents ------------------------------------------------------------------------------


class _Policy:
    """The agent writer's scripted model: the request of `fault_writer_jobs`, step by step."""

    def __init__(self, job: WriterJob, counter: Callable[[], int], emit: Emit) -> None:
        self.job, self.counter, self.emit = job, counter, emit
        self.belief = Belief()
        self.calls: dict[str, int] = {}
        self.before: dict[str, int] = {}

    def __call__(self, messages: list[Message]) -> dict[str, Any]:
        prompt = messages[-1]["content"]
        index, _, rest = prompt.partition("# User request")
        token = token_of(rest)
        n = int(token.split("-")[1]) if "-" in token else 0
        job, rid = job_of(n), _REQUEST.search(prompt)
        own = rid.group(1) if rid else ""
        active, _, rejected = rest.partition("# Rejected at your previous step")
        target = self.belief.learn(index + rejected, own)
        calls = self.calls[token] = self.calls.get(token, 0) + 1
        if calls == 1:
            self.emit(self.job.event("begun", n, request_id=own))
            delta = [mark(token)] + ([lowered(token, target)] if job == "lower" else [])
            access = [target] if job == "pay" else []
            return {"delta": delta, "access": access, "action": _tool("pause")}
        missing = [] if f"mark of token={token}" in active else [mark(token)]
        if job == "lower" and newer_than(rejected):
            self.emit(self.job.event("revised", n, request_id=own))
            mine = f"lowered by token={token}" in active
            revised = [{"op": "remove", "key": "budget"}] if mine else []
            return {"delta": [*missing, *revised, lowered(token, target)], "action": _final(token)}
        if job == "pay" and "pay_hotel(" not in active:
            revealed = active.partition("## Revealed past states")[2]
            opened = re.search(r"r\d+\.budget", revealed)
            self.before[token] = self.counter()
            cites = [opened.group(0) if opened else target]
            return {"delta": missing, "action": {**_tool("pay_hotel", token=token), "cites": cites}}
        if token in self.before:
            before, after = self.before.pop(token), self.counter()
            self.emit(self.job.event("guard", n, request_id=own, before=before, after=after))
        return {"delta": missing, "action": _final(token)}


def _tool(name: str, **arguments: Any) -> dict[str, Any]:
    return {"type": "tool", "name": name, "arguments": arguments}


def _final(token: str) -> dict[str, Any]:
    return {"type": "final", "answer": f"token={token}", "summary": f"Did token={token}"}


def _agent_tools(job: WriterJob) -> list[Any]:
    def pause() -> str:
        """Holds the request open a moment, so that other writers' requests run meanwhile."""
        time.sleep(job.pause_s)
        return "paused"

    def pay_hotel(token: str) -> str:
        """Pays the hotel (spends money)."""
        return f"paid for {token}"

    return [pause, Tool.from_function(pay_hotel, consequential=True)]


def _answered(job: WriterJob, n: int, result: Any, emit: Emit) -> None:
    if result.outcome is Outcome.ANSWERED:
        emit(job.event("answered", n, request_id=result.request_id, token=result.answer))
    else:
        emit(job.event("ended", n, request_id=result.request_id, outcome=result.outcome.value))


def _model_of(agent: Any) -> str | None:
    """The model name the agent counts its index's tokens with."""
    name = getattr(agent.model, "model", None)
    return name if isinstance(name, str) else None


def _scripted(job: WriterJob, policy: _Policy) -> ScriptedModel:
    name = f"many-{job.namespace}-{job.writer}-{job.first}"
    unregister(name)
    return ScriptedModel.policy(name, policy)


def _sync_agent(job: WriterJob, store: Store, repo: Repository, emit: Emit) -> None:
    model = _scripted(job, _Policy(job, _counter(repo), emit))
    fs = FlowState(store, job.namespace)
    agent = fs.agent(model.client(), _agent_tools(job), config=AGENT_CONFIG, approve=lambda _: True)
    try:
        for n in range(job.first, job.last + 1):
            try:
                _answered(job, n, agent.run(request_text(job.writer, n)), emit)
            except Exception as e:  # noqa: BLE001 - every failure is a finding
                emit(_failed(job, n, e))
        agent.refresh_index()
        fresh = fs.index(AGENT_CONFIG.index_budget_tokens, _model_of(agent)).text
        emit(job.event("index", job.last, equal=agent.index.render().text == fresh))
    finally:
        unregister(model.name)


def _async_agent(job: WriterJob, store: Store, repo: Repository, emit: Emit) -> None:
    model = _scripted(job, _Policy(job, _counter(repo), emit))

    async def main() -> None:
        astore = await _apatiently(lambda: AsyncStore.connect(job.settings, ensure_schema=False))
        afs = AsyncFlowState(astore, job.namespace)
        try:
            agent = await afs.agent(
                model.client(), _agent_tools(job), config=AGENT_CONFIG, approve=lambda _: True
            )
            for n in range(job.first, job.last + 1):
                try:
                    _answered(job, n, await agent.arun(request_text(job.writer, n)), emit)
                except Exception as e:  # noqa: BLE001 - every failure is a finding
                    emit(_failed(job, n, e))
            await agent.refresh_index()
            fresh = (await afs.index(AGENT_CONFIG.index_budget_tokens, _model_of(agent))).text
            emit(job.event("index", job.last, equal=agent.index.render().text == fresh))
        finally:
            await astore.close()

    try:
        asyncio.run(main())
    finally:
        unregister(model.name)


# --- the hosts: the session API and MCP ------------------------------------------------------


class _SessionHost:
    """The host's calls on `fs.begin` sessions: None when a call went through, else why not."""

    def __init__(self, fs: FlowState) -> None:
        self.fs = fs
        self.session: Any = None

    async def begin(self, text: str) -> tuple[str, str]:
        self.session = self.fs.begin(text)
        return self.session.request_id, self.session.index()

    async def index(self) -> str:
        return str(self.session.index())

    async def reveal(self, ids: list[str]) -> None:
        self.session.reveal(ids)

    async def record(self, delta: list[dict[str, Any]]) -> str | None:
        recorded = self.session.record(delta)
        return None if recorded.applied else "; ".join(recorded.rejections)

    async def guard(self, tool: str, arguments: dict[str, Any], cites: list[str]) -> None:
        self.session.guard(tool, arguments, cites)

    async def commit(self, answer: str, summary: str) -> str | None:
        try:
            self.session.commit(answer, summary)
        except UsageError as e:
            return str(e)
        return None


class _McpHost:
    """The same calls as MCP tool calls of a client connected to a FlowState MCP server."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self.rid = ""

    async def _call(self, name: str, /, **arguments: Any) -> tuple[str | None, dict[str, Any]]:
        wire = (await self.client.call_tool(name, arguments)).model_dump(
            mode="json", by_alias=True, exclude_none=True
        )
        text = "".join(c.get("text", "") for c in wire.get("content", []))
        return (text or "refused") if wire.get("isError") else None, wire.get(
            "structuredContent"
        ) or {}

    async def begin(self, text: str) -> tuple[str, str]:
        error, out = await self._call("memory_begin", text=text)
        if error is not None:
            raise UsageError(error)
        self.rid = out["request_id"]
        return self.rid, out["index"]

    async def index(self) -> str:
        error, out = await self._call("memory_index", request_id=self.rid)
        return error or out.get("text", "")

    async def reveal(self, ids: list[str]) -> None:
        await self._call("memory_reveal", request_id=self.rid, ids=ids)

    async def record(self, delta: list[dict[str, Any]]) -> str | None:
        return (await self._call("memory_record", request_id=self.rid, delta=delta))[0]

    async def guard(self, tool: str, arguments: dict[str, Any], cites: list[str]) -> None:
        await self._call("memory_guard", request_id=self.rid, tool=tool, arguments=arguments,
                         cites=cites)  # fmt: skip

    async def commit(self, answer: str, summary: str) -> str | None:
        return (await self._call("memory_commit", request_id=self.rid, answer=answer,
                                 summary=summary))[0]  # fmt: skip


async def _host_request(
    job: WriterJob, n: int, host: Any, belief: Belief, counter: Callable[[], int], emit: Emit
) -> None:
    """One request as a host drives it: begin, reveal, record (revised while refused), pay
    under the guard, commit (revised while refused)."""
    token, job_name = f"{job.writer}-{n}", job_of(n)
    rid, index = await host.begin(request_text(job.writer, n))
    emit(job.event("begun", n, request_id=rid))
    target = belief.learn(index, rid)
    if job_name != "note":
        await host.reveal([target])
    delta = [mark(token)] + ([lowered(token, target)] if job_name == "lower" else [])
    why = await host.record(delta)
    for _ in range(ATTEMPTS):  # refused as a whole: nothing of it applied
        if why is None:
            break
        if newer_than(why) is None:
            raise GaveUp(why)
        emit(job.event("revised", n, request_id=rid))
        target = belief.learn(why + await host.index(), rid)
        why = await host.record([mark(token), lowered(token, target)])
    await asyncio.sleep(job.pause_s)
    if job_name == "pay":
        before = counter()
        await host.guard("pay_hotel", {"token": token}, [target])
        emit(job.event("guard", n, request_id=rid, before=before, after=counter()))
    for _ in range(ATTEMPTS):
        why = await host.commit(f"token={token}", f"Did token={token}")
        if why is None:
            emit(job.event("answered", n, request_id=rid, token=f"token={token}"))
            return
        if job_name != "lower" or newer_than(why) is None:
            raise GaveUp(why)
        emit(job.event("revised", n, request_id=rid))
        target = belief.learn(why + await host.index(), rid)
        await host.record([{"op": "remove", "key": "budget"}, lowered(token, target)])
    raise GaveUp(f"{rid} still refused after {ATTEMPTS} revisions")


async def _host_requests(job: WriterJob, host: Any, repo: Repository, emit: Emit) -> None:
    belief, counter = Belief(), _counter(repo)
    for n in range(job.first, job.last + 1):
        try:
            await _host_request(job, n, host, belief, counter, emit)
        except Exception as e:  # noqa: BLE001 - every failure is a finding
            emit(_failed(job, n, e))


def _session(job: WriterJob, store: Store, repo: Repository, emit: Emit) -> None:
    fs = FlowState(store, job.namespace)
    asyncio.run(_host_requests(job, _SessionHost(fs), repo, emit))
    fresh = FlowState(store, job.namespace).shown_index().text
    emit(job.event("index", job.last, equal=fs.shown_index().text == fresh))


def _mcp(job: WriterJob, store: Store, repo: Repository, emit: Emit) -> None:
    from flowstate.mcp.memory import Memory
    from flowstate.mcp.server import build_server
    from flowstate.mcp.settings import McpSettings

    memory = Memory(lambda say: FlowState(store, job.namespace), 1800.0, lambda _: None)
    memory.start()
    memory.get(30)
    server, _ = build_server(memory, McpSettings(namespace=job.namespace))
    # The server sets up logging at INFO for its own records; litellm would then log every
    # scripted call of the agent writers alongside.
    logging.getLogger("LiteLLM").setLevel(logging.WARNING)

    async def main() -> None:
        async with _client(server) as client:
            host = _McpHost(client)
            await _host_requests(job, host, repo, emit)
            _, out = await host._call("memory_index")
            fresh = FlowState(store, job.namespace).shown_index().text
            emit(job.event("index", job.last, equal=out.get("text") == fresh))

    try:
        asyncio.run(main())
    finally:
        memory.close()


@contextlib.asynccontextmanager
async def _client(server: Any) -> AsyncIterator[Any]:
    """A client session connected to `server` in this process (either MCP SDK line)."""
    try:
        from mcp import Client  # 2.x
    except ImportError:  # 1.x
        from mcp.shared.memory import (  # type: ignore[attr-defined]
            create_connected_server_and_client_session,
        )

        async with create_connected_server_and_client_session(server._mcp_server) as client:
            yield client
        return
    async with Client(server) as client:
        yield client
