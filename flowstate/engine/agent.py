"""The sync agent: a thin shell over one step machine (`engine.driver`) and one set of store
plans (`engine.agent_core`); `engine.async_agent` is the asyncio shell over the same two.

The driver decides every step; a shell performs the I/O it asks for (the model call, Neo4j
reads and writes, the tool, the approver) and feeds back what came of it. The Active State is
saved as a draft after every step (while the next model call runs) and before every tool call
and the commit, so a crashed process can `resume()` or `discard()` the interrupted request.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterable
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
from flowstate.engine.hold import RequestHold
from flowstate.engine.index import HistoricalIndex
from flowstate.engine.step import AgentConfig
from flowstate.engine.tools import Tool
from flowstate.errors import FlowStateError, ModelError, StoreError, UsageError
from flowstate.llm.client import Completion, ModelClient
from flowstate.models.active import ActiveState
from flowstate.models.records import Relation
from flowstate.models.step import StepOutput
from flowstate.safety.redaction import Redactor
from flowstate.store.holds import OpenRequest
from flowstate.store.namespace_node import Stamp
from flowstate.store.repository import Repository

__all__ = ["Agent", "AgentConfig", "RunResult"]


class Agent(AgentCore[Repository]):
    """Runs requests against one namespace's memory with one model and a set of tools.

    Building it does no I/O: the index loads at the first request. For asyncio use
    `AsyncAgent`.
    """

    def __init__(
        self,
        repo: Repository,
        model: ModelClient | None,
        tools: Iterable[Tool] = (),
        config: AgentConfig | None = None,
        approve: Approver | None = None,
        redact: Redactor[Any] | None = None,
        index: HistoricalIndex | None = None,
        stamp: Stamp | None = None,
    ) -> None:
        """`index`, when given, is used as this namespace's index instead of loading it (as
        loaded at `stamp`, when given; else it is taken to be current, which reads the stamp)."""
        super().__init__(repo, model, tools, config, approve, redact)
        if index is not None:
            self.adopt(index, stamp if stamp is not None else repo.stamp())

    def run(self, text: str) -> RunResult:
        """Run one request to its end and commit what it created."""
        asynchronous = [name for name, t in self.logic.tools.items() if t.is_async]
        if asynchronous:
            raise UsageError(
                f"tool(s) {', '.join(asynchronous)} are async (async def): "
                "use `await agent.arun(...)` on an AsyncAgent (AsyncFlowState)"
            )
        return self._drive(self.driver(self.begin(text), Start.NEW))

    def pending(self) -> list[OpenRequest]:
        """Every open request of this namespace (running or interrupted), with its holder."""
        return self.repo.run(self.pending_plan())

    def resume(self, request_id: str | None = None) -> RunResult:
        """Continue an interrupted request from its last saved step: `request_id`, or this
        agent's own one, or the only one no live writer holds."""
        return self._drive(self.repo.run(self.resume_plan(request_id)))

    def discard(self, request_id: str | None = None) -> str:
        """Drop an interrupted request (chosen as by `resume`); nothing of it was committed.
        Never one another live writer is running. Its id."""
        return self.repo.run(self.discard_plan(request_id))

    def begin(self, text: str) -> ActiveState:
        """Check a new request and give it the next id (loading the index the first time)."""
        return self.repo.run(self.begin_plan(text))

    def refresh_index(self, relations: Iterable[Relation] = ()) -> None:
        """Bring the index up to date (see `IndexView.refresh_plan`)."""
        self.repo.run(self.refresh_plan(relations))

    def store_command(self, command: Command) -> Any:
        """Perform one of the driver's Neo4j commands."""
        return self.repo.run(self.store_plan(command))

    def hold(self, request_id: str) -> RequestHold:
        """This agent's hold on a request it runs, renewed while the request runs."""
        return RequestHold(self.repo, request_id, self.writer, self.config.hold_seconds)

    def _drive(self, driver: StepDriver) -> RunResult:
        rid = driver.active.request_id
        try:
            with self.hold(rid), self.keeping_inflight(driver):
                command = driver.start()
                while not isinstance(command, Done):
                    command = driver.send(self._perform(command, driver))
        except ModelError:  # before anything was done: nothing is kept
            with contextlib.suppress(FlowStateError):
                self.repo.run(self.ops.discard_draft(rid, owner=self.writer))
            raise
        # Committed: the result stands. A failed refresh of the cached index is made good at
        # the next request's start (it reads every commit since the stamp it holds).
        with contextlib.suppress(StoreError):
            self.refresh_index(command.bundle.relations)
        return command.result

    def _perform(self, command: Command, driver: StepDriver) -> Any:
        """Do what the driver asked, synchronously; return what came of it."""
        if isinstance(command, CallModel):
            return self._call_model(command, driver)
        if isinstance(command, Approve):
            assert self.approve is not None  # the rules refuse consequential calls without one
            return approver_outcome(self.approve, command.approval)
        if isinstance(command, RunTool):
            return command.tool.call(command.arguments)
        if isinstance(command, Progress):
            return self.stepped(command.active)
        return self.store_command(command)

    def _call_model(self, command: CallModel, driver: StepDriver) -> Completion[StepOutput]:
        """The model call; meanwhile, in a thread, the last step's draft is saved
        (write-behind) and the index brought up to date for the next prompt (others may have
        committed). Both are joined before the reply is acted on; a failed save wins over the
        reply (which is kept for resume)."""
        prompt = self.prompt_for(command)
        messages = prompt.messages()  # rendered once, as sent
        reply, self.unsaved_reply = self.unsaved_reply, None
        if reply is not None:  # asked before the database failed: never asked twice
            with self.keeping_reply(reply):
                if command.save is not None:
                    self.store_command(command.save)
            return self.called(prompt, reply)
        upkeep = _Background(self._between_steps, command)
        try:
            reply = self.client.complete(messages, command.reply)
        finally:
            with self.keeping_reply(reply):
                upkeep.join()
        driver.update_index(self.index.render(driver.active.text))
        return self.called(prompt, reply)

    def _between_steps(self, command: CallModel) -> None:
        if command.save is not None:
            self.store_command(command.save)
        with contextlib.suppress(StoreError):  # stale for a step; the save says if Neo4j is gone
            self.refresh_index()


class _Background:
    """`fn(arg)` in a thread of its own; `join()` waits for it and raises what it raised."""

    def __init__(self, fn: Callable[[Any], Any], arg: Any) -> None:
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(fn, arg), daemon=True)
        self._thread.start()

    def _run(self, fn: Callable[[Any], Any], arg: Any) -> None:
        try:
            fn(arg)
        except BaseException as e:  # handed to the caller's thread by join()
            self._error = e

    def join(self) -> None:
        self._thread.join()
        if self._error is not None:
            raise self._error
