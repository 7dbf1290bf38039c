"""The sync agent: a thin shell over one step machine (`engine.driver`) and one set of store
plans (`engine.agent_core`); `engine.async_agent` is the asyncio shell over the same two.

The driver decides every step; a shell performs the I/O it asks for (the model call, Neo4j
reads and writes, the tool, the approver) and feeds back what came of it. The Active State is
saved as a draft after every step (while the next model call runs) and before every tool call
and the commit, so a crashed process can `resume()` or `discard()` the interrupted request.
"""

from __future__ import annotations

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
from flowstate.engine.index import HistoricalIndex
from flowstate.engine.lease import WriterLease
from flowstate.engine.step import AgentConfig
from flowstate.engine.tools import Tool
from flowstate.errors import UsageError
from flowstate.llm.client import Completion, ModelClient
from flowstate.models.active import ActiveState
from flowstate.models.records import Relation
from flowstate.models.step import StepOutput
from flowstate.safety.redaction import Redactor
from flowstate.store.namespace_node import Stamp
from flowstate.store.repository import Repository

__all__ = ["Agent", "AgentConfig", "RunResult"]


class Agent(AgentCore[Repository]):
    """Runs requests against one namespace's memory with one model and a set of tools.

    Building it reads the namespace's index (sync I/O); for asyncio use `AsyncAgent`.
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
        loaded at `stamp`, when given; else it is taken to be current)."""
        super().__init__(repo, model, tools, config, approve, redact)
        if index is None:
            self.refresh_index()
        else:
            self.adopt(index, stamp if stamp is not None else repo.stamp())

    def run(self, text: str) -> RunResult:
        """Run one request to its end and commit what it created."""
        asynchronous = [name for name, t in self.logic.tools.items() if t.is_async]
        if asynchronous:
            raise UsageError(
                f"tool(s) {', '.join(asynchronous)} are async (async def): "
                "use `await agent.arun(...)` on an AsyncAgent (AsyncFlowState)"
            )
        with self.lease():
            return self._drive(self.driver(self.begin(text), Start.NEW))

    def pending(self) -> str | None:
        """The id of an interrupted request of this namespace, if there is one."""
        draft = self.repo.load_draft()
        return draft[0] if draft else None

    def resume(self) -> RunResult:
        """Continue an interrupted request from its last saved step."""
        with self.lease():
            return self._drive(self.resumed(self.repo.load_draft()))

    def discard(self) -> str | None:
        """Drop an interrupted request; nothing of it was committed. Returns its id."""
        with self.lease():  # never from under a request that another process is running
            return self.repo.run(self.discard_plan())

    def begin(self, text: str) -> ActiveState:
        """Check a new request and give it the next id (a session begins with it too)."""
        return self.repo.run(self.begin_plan(text))

    def refresh_index(self, relations: Iterable[Relation] = ()) -> None:
        """Bring the index up to date (see `AgentCore.refresh_plan`)."""
        self.repo.run(self.refresh_plan(relations))

    def store_command(self, command: Command) -> Any:
        """Perform one of the driver's Neo4j commands (a session calls it too)."""
        return self.repo.run(self.store_plan(command))

    def lease(self) -> WriterLease:
        """The namespace's writer lease for this agent (held while a request runs)."""
        return WriterLease(self.repo, self.config.lease_seconds, self.writer)

    def _drive(self, driver: StepDriver) -> RunResult:
        with self.keeping_inflight(driver):
            command = driver.start()
            while not isinstance(command, Done):
                command = driver.send(self._perform(command))
        self.refresh_index(command.bundle.relations)
        return command.result

    def _perform(self, command: Command) -> Any:
        """Do what the driver asked, synchronously; return what came of it."""
        if isinstance(command, CallModel):
            return self._call_model(command)
        if isinstance(command, Approve):
            assert self.approve is not None  # the rules refuse consequential calls without one
            return approver_outcome(self.approve, command.approval)
        if isinstance(command, RunTool):
            return command.tool.call(command.arguments)
        if isinstance(command, Progress):
            return self.stepped(command.active)
        return self.store_command(command)

    def _call_model(self, command: CallModel) -> Completion[StepOutput]:
        """The model call, with the last step's draft saved meanwhile in a thread (write-behind):
        the save is joined before the reply is acted on, and its failure wins over the reply
        (which is kept for resume)."""
        prompt = self.prompt_for(command)
        messages = prompt.messages()  # rendered once, as sent
        reply, self.unsaved_reply = self.unsaved_reply, None
        if reply is not None:  # asked before the database failed: never asked twice
            with self.keeping_reply(reply):
                if command.save is not None:
                    self.store_command(command.save)
        elif command.save is None:
            reply = self.client.complete(messages, command.reply)
        else:
            saving = _Background(self.store_command, command.save)
            try:
                reply = self.client.complete(messages, command.reply)
            finally:
                with self.keeping_reply(reply):
                    saving.join()
        return self.called(prompt, reply)


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
