"""One writer of the many-writer fault run, through one shell: the sync agent, the async agent
(`AsyncFlowState`), the session API (`fs.begin`) or an MCP server driven by a client.

The agents' model is scripted: it reads its prompt as a model would (the index, the refusals
of its last step) and writes the request of `fault_writer_jobs`. The session and MCP writers
are a host doing the same with the calls a host makes (`fault_writer_hosts`). Every writer
reports what it did as
events (`begun`, `answered`, `guard`, `failed`, `index`), plain dicts: a writer in another
process prints them as JSON lines.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from flowstate.api import FlowState
from flowstate.async_api import AsyncFlowState
from flowstate.engine.step import AgentConfig
from flowstate.engine.tools import Tool
from flowstate.errors import StoreUnavailable
from flowstate.llm.scripted import Message, ScriptedModel, unregister
from flowstate.models import Outcome
from flowstate.store import AsyncStore, Repository, Store
from flowstate_bench.fault_writer_hosts import mcp_writer, session_writer
from flowstate_bench.fault_writer_jobs import (
    ATTEMPTS,
    Belief,
    Emit,
    WriterJob,
    commit_counter,
    failed_event,
    index_settled,
    job_of,
    lowered,
    mark,
    newer_than,
    request_text,
    token_of,
)

T = TypeVar("T")
KINDS = ("sync", "async", "session", "mcp")
OUTAGE_S = 180.0  # how long a writer waits for the server to come back before it fails
AGENT_CONFIG = AgentConfig(max_steps=2 * ATTEMPTS)
_REQUEST = re.compile(r"# User request \((r\d+)\)")


def run_writer(job: WriterJob, emit: Emit) -> None:
    """Run the job's requests one after another; every failure is an event, never raised."""
    with _patiently(lambda: Store.connect(job.settings, ensure_schema=False)) as store:
        repo = Repository(store, job.namespace)
        run = {
            "sync": _sync_agent,
            "async": _async_agent,
            "session": session_writer,
            "mcp": mcp_writer,
        }
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
            return {
                "delta": [*missing, *revised, lowered(token, target)],
                "action": _final(token),
            }
        if job == "pay" and "pay_hotel(" not in active:
            revealed = active.partition("## Revealed past states")[2]
            opened = re.search(r"r\d+\.budget", revealed)
            self.before[token] = self.counter()
            cites = [opened.group(0) if opened else target]
            return {
                "delta": missing,
                "action": {**_tool("pay_hotel", token=token), "cites": cites},
            }
        if token in self.before:
            before, after = self.before.pop(token), self.counter()
            self.emit(self.job.event("guard", n, request_id=own, before=before, after=after))
        return {"delta": missing, "action": _final(token)}


def _tool(name: str, **arguments: Any) -> dict[str, Any]:
    return {"type": "tool", "name": name, "arguments": arguments}


def _final(token: str) -> dict[str, Any]:
    return {
        "type": "final",
        "answer": f"token={token}",
        "summary": f"Did token={token}",
    }


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
    model = _scripted(job, _Policy(job, commit_counter(repo), emit))
    fs = FlowState(store, job.namespace)
    agent = fs.agent(model.client(), _agent_tools(job), config=AGENT_CONFIG, approve=lambda _: True)
    try:
        for n in range(job.first, job.last + 1):
            try:
                _answered(job, n, agent.run(request_text(job.writer, n)), emit)
            except Exception as e:  # noqa: BLE001 - every failure is a finding
                emit(failed_event(job, n, e))

        async def followed() -> str:
            agent.refresh_index()
            return agent.index.render().text

        async def rebuilt() -> str:
            return fs.index(AGENT_CONFIG.index_budget_tokens, _model_of(agent)).text

        equal = asyncio.run(index_settled(commit_counter(repo), followed, rebuilt))
        emit(job.event("index", job.last, equal=equal))
    finally:
        unregister(model.name)


def _async_agent(job: WriterJob, store: Store, repo: Repository, emit: Emit) -> None:
    model = _scripted(job, _Policy(job, commit_counter(repo), emit))

    async def main() -> None:
        astore = await _apatiently(lambda: AsyncStore.connect(job.settings, ensure_schema=False))
        afs = AsyncFlowState(astore, job.namespace)
        try:
            agent = await afs.agent(
                model.client(),
                _agent_tools(job),
                config=AGENT_CONFIG,
                approve=lambda _: True,
            )
            for n in range(job.first, job.last + 1):
                try:
                    _answered(job, n, await agent.arun(request_text(job.writer, n)), emit)
                except Exception as e:  # noqa: BLE001 - every failure is a finding
                    emit(failed_event(job, n, e))

            async def followed() -> str:
                await agent.refresh_index()
                return agent.index.render().text

            async def rebuilt() -> str:
                budget, model_name = AGENT_CONFIG.index_budget_tokens, _model_of(agent)
                return (await afs.index(budget, model_name)).text

            equal = await index_settled(commit_counter(repo), followed, rebuilt)
            emit(job.event("index", job.last, equal=equal))
        finally:
            await astore.close()

    try:
        asyncio.run(main())
    finally:
        unregister(model.name)


# --- the hosts: the session API and MCP ------------------------------------------------------
