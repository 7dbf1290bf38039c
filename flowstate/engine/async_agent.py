"""The async shell: every Neo4j operation on the async driver, the model, async tools and
async approvers awaited, the request hold renewed by an asyncio task.

    agent = AsyncAgent(arepo, model, tools)     # no I/O: the index loads at the first request
    result = await agent.arun("Find us a hotel in Lisbon")

The store work is the same plans the sync `Agent` runs (`engine.agent_core`), awaited on an
`AsyncRepository`. Only a sync tool or a sync approver goes to a thread: it may block.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
from collections.abc import Iterable
from typing import Any

from flowstate.engine.agent_core import AgentCore, Approver
from flowstate.engine.driver import (
    Approve,
    CallModel,
    Command,
    Done,
    Progress,
    RunResult,
    RunTool,
    Start,
    StepDriver,
    approver_outcome,
)
from flowstate.engine.hold import AsyncRequestHold
from flowstate.engine.step import Approval
from flowstate.errors import FlowStateError, ModelError, StoreError
from flowstate.llm.client import Completion
from flowstate.models.records import Relation
from flowstate.models.step import StepOutput
from flowstate.store.async_repository import AsyncRepository
from flowstate.store.holds import OpenRequest


class AsyncAgent(AgentCore[AsyncRepository]):
    """`Agent` for asyncio, over an `AsyncRepository`: `AsyncAgent(repo, model, tools, config,
    approve, redact)`, or `await fs.agent(...)` of an `AsyncFlowState`. Building it does no
    I/O: the index loads at the first request."""

    async def arun(self, text: str) -> RunResult:
        """Run one request to its end and commit what it created."""
        active = await self.repo.run(self.begin_plan(text))
        return await self._drive(self.driver(active, Start.NEW))

    async def apending(self) -> list[OpenRequest]:
        """Every open request of this namespace (running or interrupted), with its holder."""
        return await self.repo.run(self.pending_plan())

    async def aresume(self, request_id: str | None = None) -> RunResult:
        """Continue an interrupted request from its last saved step (see `Agent.resume`)."""
        return await self._drive(await self.repo.run(self.resume_plan(request_id)))

    async def adiscard(self, request_id: str | None = None) -> str:
        """Drop an interrupted request (see `Agent.discard`); its id."""
        return await self.repo.run(self.discard_plan(request_id))

    async def refresh_index(self, relations: Iterable[Relation] = ()) -> None:
        """Bring the index up to date (see `IndexView.refresh_plan`)."""
        await self.repo.run(self.refresh_plan(relations))

    def hold(self, request_id: str) -> AsyncRequestHold:
        """This agent's hold on a request it runs, renewed while the request runs."""
        return AsyncRequestHold(self.repo, request_id, self.writer, self.config.hold_seconds)

    async def _drive(self, driver: StepDriver) -> RunResult:
        rid = driver.active.request_id
        try:
            async with self.hold(rid):
                with self.keeping_inflight(driver):
                    command = driver.start()
                    while not isinstance(command, Done):
                        command = driver.send(await self._perform(command, driver))
        except ModelError:  # before anything was done: nothing is kept
            with contextlib.suppress(FlowStateError):
                await self.repo.run(self.ops.discard_draft(rid, owner=self.writer))
            raise
        # Committed: the result stands. A failed refresh of the cached index is made good at
        # the next request's start (it reads every commit since the stamp it holds).
        with contextlib.suppress(StoreError):
            await self.refresh_index(command.bundle.relations)
        return command.result

    async def _perform(self, command: Command, driver: StepDriver) -> Any:
        if isinstance(command, CallModel):
            return await self._call_model(command, driver)
        if isinstance(command, Approve):
            assert self.approve is not None
            return await awaited_outcome(self.approve, command.approval)
        if isinstance(command, RunTool):
            if command.tool.is_async:
                return await command.tool.acall(command.arguments)
            return await asyncio.to_thread(command.tool.call, command.arguments)  # may block
        if isinstance(command, Progress):
            return self.stepped(command.active)
        return await self.repo.run(self.store_plan(command))

    async def _call_model(self, command: CallModel, driver: StepDriver) -> Completion[StepOutput]:
        """The model call, with the last step's draft saved and the index brought up to date
        meanwhile by a task (write-behind); see `Agent._call_model`."""
        prompt = self.prompt_for(command)
        messages = prompt.messages()  # rendered once, as sent
        reply, self.unsaved_reply = self.unsaved_reply, None
        if reply is not None:  # asked before the database failed: never asked twice
            with self.keeping_reply(reply):
                if command.save is not None:
                    await self.repo.run(self.store_plan(command.save))
            return self.called(prompt, reply)
        upkeep = asyncio.ensure_future(self._between_steps(command))
        try:
            reply = await self.client.acomplete(messages, command.reply)
        except asyncio.CancelledError:
            # Cancelled: the save goes too (its transaction rolls back), so that it cannot
            # land after a resume has committed the request.
            upkeep.cancel()
            with contextlib.suppress(asyncio.CancelledError, FlowStateError):
                await upkeep
            raise
        except BaseException:
            with self.keeping_reply(None):  # the draft is durable even when the call failed
                await upkeep
            raise
        with self.keeping_reply(reply):
            await upkeep  # (a cancellation here cancels the save with it)
        driver.update_index(self.index.render(driver.active.text))
        return self.called(prompt, reply)

    async def _between_steps(self, command: CallModel) -> None:
        if command.save is not None:
            await self.repo.run(self.store_plan(command.save))
        with contextlib.suppress(StoreError):  # stale for a step; the save says if Neo4j is gone
            await self.refresh_index()


async def awaited_outcome(approve: Approver, approval: Approval) -> Any:
    """`approver_outcome` for an approver that may be `async def` (awaited); a plain one
    runs in a thread, since it may block (a terminal prompt)."""
    if not inspect.iscoroutinefunction(approve):
        return await asyncio.to_thread(approver_outcome, approve, approval)
    try:
        return await approve(approval)
    except Exception as e:  # an approver that fails denies; the request goes on
        return e
