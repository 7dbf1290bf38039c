"""The host writers of the many-writer fault run: the session API (`fs.begin`) and an MCP
server driven by a client in this process, each doing the request of `fault_writer_jobs`
with the calls a host makes, and revising it while it is refused."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from flowstate.api import FlowState
from flowstate.compact import render
from flowstate.errors import UsageError
from flowstate.store import Repository, Store
from flowstate_bench.fault_writer_jobs import (
    ATTEMPTS,
    Belief,
    Emit,
    GaveUp,
    WriterJob,
    commit_counter,
    failed_event,
    index_settled,
    job_of,
    lowered,
    mark,
    newer_than,
    request_text,
)

SEARCHED = 50  # search hits a host reads: every budget state of a default run


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

    async def search(self, query: str) -> str:
        hits = self.fs.search(query, SEARCHED)
        self.session.shown([h.id for h in hits])
        return _hit_lines({h.id: render.line(h.category, h.summary, h.superseded_by, None)
                           for h in hits})  # fmt: skip

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
        self.handle = ""  # what memory_begin gave with the request id

    async def _call(self, name: str, /, **arguments: Any) -> tuple[str | None, dict[str, Any]]:
        if "request_id" in arguments:
            arguments["handle"] = self.handle
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
        self.rid, self.handle = out["request_id"], out["handle"]
        return self.rid, out["index"]

    async def index(self) -> str:
        error, out = await self._call("memory_index", request_id=self.rid)
        return error or out.get("text", "")

    async def search(self, query: str) -> str:
        _, out = await self._call("memory_search", query=query, request_id=self.rid, limit=SEARCHED)
        return _hit_lines(out.get("hits", {}))

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


def _hit_lines(hits: dict[str, str]) -> str:
    """Search hits (id -> line) as the index lists states (what a host's model would read)."""
    return "\n".join(f"{k} {v}" for k, v in hits.items())


async def _current(host: Any) -> str:
    """What a host reads to find the current budget after a refusal: index and search."""
    return "\n" + await host.index() + "\n" + await host.search("hotel budget")


async def _host_request(
    job: WriterJob,
    n: int,
    host: Any,
    belief: Belief,
    counter: Callable[[], int],
    emit: Emit,
) -> None:
    """One request as a host drives it: begin, reveal, record (revised while refused), pay
    under the guard, commit (revised while refused)."""
    token, job_name = f"{job.writer}-{n}", job_of(n)
    rid, index = await host.begin(request_text(job.writer, n))
    emit(job.event("begun", n, request_id=rid))
    if job_name != "note":  # what is current now: the index may have folded it away
        index += "\n" + await host.search("hotel budget")
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
        target = belief.learn(why + await _current(host), rid)
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
        target = belief.learn(why + await _current(host), rid)
        await host.record([{"op": "remove", "key": "budget"}, lowered(token, target)])
    raise GaveUp(f"{rid} still refused after {ATTEMPTS} revisions")


async def _host_requests(job: WriterJob, host: Any, repo: Repository, emit: Emit) -> None:
    belief, counter = Belief(), commit_counter(repo)
    for n in range(job.first, job.last + 1):
        try:
            await _host_request(job, n, host, belief, counter, emit)
        except Exception as e:  # noqa: BLE001 - every failure is a finding
            emit(failed_event(job, n, e))


def session_writer(job: WriterJob, store: Store, repo: Repository, emit: Emit) -> None:
    fs = FlowState(store, job.namespace)
    asyncio.run(_host_requests(job, _SessionHost(fs), repo, emit))

    async def followed() -> str:
        return fs.shown_index().text

    async def rebuilt() -> str:
        return FlowState(store, job.namespace).shown_index().text

    equal = asyncio.run(index_settled(commit_counter(repo), followed, rebuilt))
    emit(job.event("index", job.last, equal=equal))


def mcp_writer(job: WriterJob, store: Store, repo: Repository, emit: Emit) -> None:
    from flowstate.mcp.memory import Memory
    from flowstate.mcp.sdk import in_memory_client
    from flowstate.mcp.server import build_server
    from flowstate.mcp.settings import McpSettings

    memory = Memory(lambda say: FlowState(store, job.namespace), lambda _: None)
    memory.start()
    memory.get(30)
    server, _ = build_server(memory, McpSettings(namespace=job.namespace))
    # The server sets up logging at INFO for its own records; litellm would then log every
    # scripted call of the agent writers alongside.
    logging.getLogger("LiteLLM").setLevel(logging.WARNING)

    async def main() -> None:
        async with in_memory_client(server) as client:
            host = _McpHost(client)
            await _host_requests(job, host, repo, emit)

            async def followed() -> str:
                return str((await host._call("memory_index"))[1].get("text"))

            async def rebuilt() -> str:
                return FlowState(store, job.namespace).shown_index().text

            equal = await index_settled(commit_counter(repo), followed, rebuilt)
            emit(job.event("index", job.last, equal=equal))

    try:
        asyncio.run(main())
    finally:
        memory.close()
