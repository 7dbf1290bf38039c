"""The agent: two thin shells, sync and async, over one step machine (`engine.driver`).

The driver decides every step; a shell performs the I/O it asks for (the model call, Neo4j
reads and writes, the tool, the approver) and feeds back what came of it. The Active State is
saved as a draft after every step and before every tool call, so a crashed process can
`resume()` or `discard()` the interrupted request.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from flowstate.engine.driver import (
    Approve,
    CallModel,
    CheckCommitted,
    Command,
    Commit,
    Done,
    FindMissing,
    Progress,
    Reveal,
    Revealed,
    RunResult,
    RunTool,
    SaveDraft,
    Start,
    StepDriver,
    approver_outcome,
)
from flowstate.engine.index import HistoricalIndex
from flowstate.engine.lease import WriterLease
from flowstate.engine.step import AgentConfig, Approval, StepLogic
from flowstate.engine.tools import Tool
from flowstate.errors import NotFoundError, StoreError, UsageError
from flowstate.llm.client import ModelClient
from flowstate.models import ids
from flowstate.models.active import ActiveState
from flowstate.models.records import (
    MAX_REQUEST_TEXT_CHARS,
    Observation,
    Relation,
    Request,
    is_unicode,
)
from flowstate.models.step import StepOutput
from flowstate.safety.redaction import Redactor
from flowstate.store.namespace_node import writer_id
from flowstate.store.repository import Repository

__all__ = ["Agent", "AgentConfig", "RunResult"]

Approver = Callable[[Approval], Any]  # returns True to approve (or an awaitable of it, async)


class Agent:
    """Runs requests against one namespace's memory with one model and a set of tools."""

    def __init__(
        self,
        repo: Repository,
        model: ModelClient,
        tools: Iterable[Tool] = (),
        config: AgentConfig | None = None,
        index: HistoricalIndex | None = None,
        approve: Approver | None = None,
        redact: Redactor[Any] | None = None,
    ) -> None:
        self.repo = repo
        self.redact = redact
        # Called after every step, the final one too (after its commit), e.g. for progress.
        self.on_step: Callable[[ActiveState], None] | None = None
        # The request in flight when the database failed: resume() continues from it, so a
        # step that could not be saved is not lost with the connection.
        self._inflight: ActiveState | None = None
        # The model's reply to the call whose write-behind save failed: resume() saves, then
        # acts on it, instead of asking the model again.
        self._unsaved_reply: Any = None
        self.model = model
        self.config = config or AgentConfig()
        self.logic = StepLogic(list(tools), self.config)
        self.approve = approve
        # One writer per namespace: this agent's name in the lease (host:pid:tag).
        self.writer = writer_id()
        self._stamp = repo.stamp()  # read before loading: a later forget is never missed
        self.index = index or self._load_index()
        self._last_seq = max((r.seq for r in self.index.requests), default=0)

    @property
    def approve(self) -> Approver | None:
        """Decides consequential calls (True approves); with none they are denied."""
        return self._approve

    @approve.setter
    def approve(self, approve: Approver | None) -> None:
        self._approve = approve
        self.logic.has_approver = approve is not None

    # -- sync shell ---------------------------------------------------------------------------

    def run(self, text: str) -> RunResult:
        """Run one request to its end and commit what it created."""
        asynchronous = [name for name, t in self.logic.tools.items() if t.is_async]
        if asynchronous:
            raise UsageError(
                f"tool(s) {', '.join(asynchronous)} are async (async def): "
                "use `await agent.arun(...)`"
            )
        with self.lease():
            return self._drive(self._driver(self.begin(text), Start.NEW))

    def pending(self) -> str | None:
        """The id of an interrupted request of this namespace, if there is one."""
        draft = self.repo.load_draft()
        return draft[0] if draft else None

    def resume(self) -> RunResult:
        """Continue an interrupted request from its last saved step."""
        with self.lease():
            return self._drive(self._resumed(self.repo.load_draft()))

    def discard(self) -> str | None:
        """Drop an interrupted request; nothing of it was committed. Returns its id."""
        with self.lease():  # never from under a request that another process is running
            draft = self.repo.load_draft()
            if draft is None:
                return None
            self.repo.discard_draft(draft[0])
            self._inflight = self._unsaved_reply = None
            return draft[0]

    def _drive(self, driver: StepDriver) -> RunResult:
        try:
            command = driver.start()
            while not isinstance(command, Done):
                command = driver.send(self._perform(command))
        except StoreError:
            self._inflight = driver.active
            raise
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
            if self.on_step is not None:
                self.on_step(command.active)
            return None
        return self.store_command(command)

    def _call_model(self, command: CallModel) -> Any:
        """The model call, with the last step's draft saved meanwhile in a thread (write-behind);
        the save is joined before the reply is acted on, and its failure wins over the reply
        (which is kept for resume)."""
        reply, self._unsaved_reply = self._unsaved_reply, None
        if reply is not None:  # asked before the database failed: never asked twice
            with self._keeping(reply):
                if command.save is not None:
                    self.store_command(command.save)
            return reply
        if command.save is None:
            return self.model.complete(command.messages, StepOutput)
        saving = _Background(self.store_command, command.save)
        try:
            reply = self.model.complete(command.messages, StepOutput)
        finally:
            with self._keeping(reply):
                saving.join()
        return reply

    @contextlib.contextmanager
    def _keeping(self, reply: Any) -> Iterator[None]:
        """Keep `reply` for resume() when the draft save inside fails."""
        try:
            yield
        except StoreError:
            self._unsaved_reply = reply
            raise

    def store_command(self, command: Command) -> Any:
        """Perform one of the driver's Neo4j commands: shared by every shell (the async one
        runs it in a thread, a session calls it too)."""
        if isinstance(command, SaveDraft):
            self.repo.save_draft(
                command.request_id,
                command.payload,
                owner=self.writer,
                lease_s=self.config.lease_seconds,
            )
            return None
        if isinstance(command, Reveal):
            return self._reveal(command)
        if isinstance(command, Commit):
            try:
                # One transaction; it also deletes the draft. Only while this agent holds the lease.
                self.repo.commit(
                    command.bundle, owner=self.writer, lease_s=self.config.lease_seconds
                )
            except NotFoundError as refused:
                return refused
            return None
        if isinstance(command, FindMissing):
            _, missing = _each(self.repo.reveal, sorted(command.state_ids))
            return set(missing)
        if isinstance(command, CheckCommitted):
            return self._committed(command.request_id)
        raise TypeError(f"unknown driver command {command!r}")

    # -- async shell --------------------------------------------------------------------------

    async def arun(self, text: str) -> RunResult:
        """`run` for asyncio: the model, async tools and async approvers are awaited; sync tools
        and Neo4j calls run in a thread."""
        async with self._alease():
            active = await asyncio.to_thread(self.begin, text)
            return await self._adrive(self._driver(active, Start.NEW))

    async def aresume(self) -> RunResult:
        """`resume` for asyncio."""
        async with self._alease():
            draft = await asyncio.to_thread(self.repo.load_draft)
            return await self._adrive(self._resumed(draft))

    async def adiscard(self) -> str | None:
        """`discard` for asyncio."""
        return await asyncio.to_thread(self.discard)

    async def _adrive(self, driver: StepDriver) -> RunResult:
        try:
            command = driver.start()
            while not isinstance(command, Done):
                command = driver.send(await self._aperform(command))
        except StoreError:
            self._inflight = driver.active
            raise
        await asyncio.to_thread(self.refresh_index, command.bundle.relations)
        return command.result

    async def _aperform(self, command: Command) -> Any:
        if isinstance(command, CallModel):
            return await self._acall_model(command)
        if isinstance(command, Approve):
            assert self.approve is not None
            if not inspect.iscoroutinefunction(self.approve):  # may block (a terminal prompt)
                return await asyncio.to_thread(approver_outcome, self.approve, command.approval)
            try:
                return await self.approve(command.approval)
            except Exception as e:  # an approver that fails denies; the request goes on
                return e
        if isinstance(command, RunTool):
            if command.tool.is_async:
                return await command.tool.acall(command.arguments)
            return await asyncio.to_thread(command.tool.call, command.arguments)
        if isinstance(command, Progress):
            return self._perform(command)
        return await asyncio.to_thread(self.store_command, command)

    async def _acall_model(self, command: CallModel) -> Any:
        """`_call_model` for asyncio: the save is a task beside the awaited model call."""
        reply, self._unsaved_reply = self._unsaved_reply, None
        if reply is not None:
            with self._keeping(reply):
                if command.save is not None:
                    await self._aperform(command.save)
            return reply
        if command.save is None:
            return await self.model.acomplete(command.messages, StepOutput)
        saving = asyncio.ensure_future(self._aperform(command.save))  # write-behind
        try:
            reply = await self.model.acomplete(command.messages, StepOutput)
        finally:
            with self._keeping(reply):
                await saving
        return reply

    # -- shared by both shells ----------------------------------------------------------------

    def begin(self, text: str) -> ActiveState:
        """Check a new request and give it the next id (shared by every shell)."""
        if not text.strip():
            raise UsageError("the request text is empty")
        if not is_unicode(text):
            raise UsageError(
                "the request text contains a lone surrogate (an unpaired \\ud800-\\udfff): "
                "send valid Unicode"
            )
        if len(text) > MAX_REQUEST_TEXT_CHARS:
            raise UsageError(
                f"the request has {len(text)} characters; at most {MAX_REQUEST_TEXT_CHARS}"
            )
        interrupted = self.pending()
        if interrupted:
            raise UsageError(
                f"request {interrupted} of namespace {self.repo.namespace!r} was interrupted; "
                "resume() or discard() it first"
            )
        self.refresh_index()
        seq = self.repo.allocate_request_seq()  # never handed out again, even if forgotten
        return ActiveState(
            namespace=self.repo.namespace, request_id=ids.request_id(seq), seq=seq, text=text
        )

    def _resumed(self, draft: tuple[str, str] | None) -> StepDriver:
        inflight, self._inflight = self._inflight, None
        if inflight is not None and (draft is None or draft[0] == inflight.request_id):
            return self._driver(inflight, Start.INFLIGHT)  # newer than any draft it saved
        self._unsaved_reply = None  # it answered the Active State dropped here
        if draft is None:
            raise UsageError(f"no interrupted request in namespace {self.repo.namespace!r}")
        return self._driver(ActiveState.model_validate_json(draft[1]), Start.DRAFT)

    def _driver(self, active: ActiveState, start: Start) -> StepDriver:
        return StepDriver(active, self.index.render(), self.logic, start=start, redact=self.redact)

    def _reveal(self, command: Reveal) -> Revealed:
        states, missing = _each(self.repo.reveal, command.states)
        requests, gone = _each(
            lambda rids: [(rid, self.repo.request_states(rid)) for rid in rids],
            command.requests,
        )
        observations, lost = _each(self.repo.expand, command.observations)
        return Revealed(
            states=states,
            requests=dict(requests),
            observations=[o for o in observations if isinstance(o, Observation)],
            missing=[*missing, *gone, *lost],
        )

    def _committed(self, request_id: str) -> Request | None:
        """The request as committed, when a retried commit already landed (its acknowledgement
        was lost); else None."""
        try:
            return self.repo.get_request(request_id)
        except NotFoundError:
            return None

    def lease(self) -> WriterLease:
        """The namespace's writer lease for this agent (held while a request runs)."""
        return WriterLease(self.repo, self.config.lease_seconds, self.writer)

    def _alease(self) -> _AsyncLease:
        return _AsyncLease(self.lease())

    def _load_index(self) -> HistoricalIndex:
        return HistoricalIndex.load(
            self.repo, self.config.index_budget_tokens, getattr(self.model, "model", None)
        )

    def refresh_index(self, relations: Iterable[Relation] = ()) -> None:
        """Append requests committed since the last look (ours or another process's); rebuild
        the index when something was forgotten or expired meanwhile (the stamp changed)."""
        stamp = self.repo.stamp()
        if stamp != self._stamp:
            self._stamp = stamp
            self.index = self._load_index()
            self._last_seq = max((r.seq for r in self.index.requests), default=0)
            return
        new = self.repo.index(from_seq=self._last_seq + 1)
        rels = list(relations)
        for entry in new:
            self.index.apply_commit(entry, rels)
            self._last_seq = max(self._last_seq, entry.seq)


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


class _AsyncLease:
    """The writer lease entered and left in a thread (it talks to Neo4j)."""

    def __init__(self, lease: WriterLease) -> None:
        self.lease = lease

    async def __aenter__(self) -> WriterLease:
        return await asyncio.to_thread(self.lease.__enter__)

    async def __aexit__(self, *exc: object) -> None:
        await asyncio.to_thread(self.lease.__exit__, None, None, None)


def _each(
    fetch: Callable[[list[str]], list[Any]], wanted: list[str]
) -> tuple[list[Any], list[str]]:
    """`fetch(wanted)`, and when some id is not found, each one alone: (found, missing ids)."""
    if not wanted:
        return [], []
    try:
        return fetch(wanted), []
    except NotFoundError:
        found, missing = [], []
        for one in wanted:
            try:
                found += fetch([one])
            except NotFoundError:
                missing.append(one)
        return found, missing
