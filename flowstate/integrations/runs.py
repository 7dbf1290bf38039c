"""One framework run as one FlowState request: begun (or picked up from its draft) when the run
starts, a step of the session for every memory tool, tool result and guarded call, committed
when the run ends, discarded when it fails, left for a resume when the process stops.

`Run` drives a `Session` (sync front door), `AsyncRun` an `AsyncSession`; `ThreadedRun` gives a
`Run` the async methods, each call in a worker thread, for an async framework over a sync
`FlowState`. One call of a run at a time: a model turn's parallel tool calls take turns.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from flowstate.compact import render
from flowstate.compact.arguments import Refused, bounded
from flowstate.errors import FlowStateError, StoreError, UsageError
from flowstate.integrations import memory as m
from flowstate.models.records import MAX_REQUEST_TEXT_CHARS

if TYPE_CHECKING:
    from flowstate.api import FlowState
    from flowstate.async_api import AsyncFlowState
    from flowstate.engine.agent import RunResult
    from flowstate.engine.async_session import AsyncSession
    from flowstate.engine.session import Guarded, Session

OnBegin = Callable[[str, str], object]


@dataclass(frozen=True)
class Resume:
    """The open request a run picks up: its id and the handle its client was given (what
    `on_begin` was told when the request began)."""

    request_id: str
    handle: str


def stored_answer(answer: str) -> str:
    """A run's answer as its request keeps it: a framework's output longer than a request may
    hold is kept cut, saying so (the run's own output is the framework's, unchanged), so what
    the run recorded still commits."""
    if len(answer) <= MAX_REQUEST_TEXT_CHARS:
        return answer
    note = f"... [cut: the answer had {len(answer):,} characters]"
    return answer[: MAX_REQUEST_TEXT_CHARS - len(note)] + note


def user_text(text: str) -> str:
    if not text.strip():
        raise UsageError("the run has no user text to begin a FlowState request with")
    return text


@contextlib.contextmanager
def refusals() -> Iterator[None]:
    """A refused memory call as the model reads it; a database failure fails the run."""
    try:
        yield
    except StoreError:
        raise
    except FlowStateError as e:
        raise Refused(bounded(str(e))) from e


def _picked_up(session: Session | AsyncSession) -> None:
    if session.closed:
        raise UsageError(f"request {session.request_id} is already committed: nothing to resume")


class Run:
    """A run's request over the sync front door."""

    def __init__(self, fs: FlowState, session: Session, *, picked_up: bool) -> None:
        self.fs = fs
        self.session = session
        self.picked_up = picked_up
        # What the engine's prefetch opened when the request began: in every instruction.
        self.prefetched = list(session.active.revealed.values())
        self.summary = ""  # the last one the model gave through memory_record
        self._lock = threading.RLock()

    @classmethod
    def start(
        cls, fs: FlowState, text: str, resume: Resume | None, on_begin: OnBegin | None
    ) -> Run:
        if resume is not None:
            session = fs.session(resume.request_id, resume.handle)
            _picked_up(session)
            return cls(fs, session, picked_up=True)
        session = fs.begin(user_text(text))
        assert session.handle is not None
        try:
            if on_begin is not None:
                on_begin(session.request_id, session.handle)
        except BaseException:
            session.discard()
            raise
        return cls(fs, session, picked_up=False)

    @property
    def request_id(self) -> str:
        return self.session.request_id

    @property
    def handle(self) -> str:
        assert self.session.handle is not None  # a client's session always has one
        return self.session.handle

    def instructions(self) -> str:
        with self._lock:
            index = self.session.index()
        return m.instructions(
            index, self.session.active if self.picked_up else None, self.prefetched
        )

    def call(self, name: str, arguments: Any) -> str:
        """A memory tool's result text; `Refused` with the reason."""
        args = m.parse(name, arguments)
        with self._lock, refusals():
            session = self.session
            if isinstance(args, m.RevealArgs):
                first = args.page == 1  # a later page re-reads what is open: no new step
                opened = session.reveal(args.ids) if first else session.opened(args.ids)
                return m.revealed_text(opened, args)
            if isinstance(args, m.RecordArgs):
                text = m.recorded_text(session.record(m.ops(args)))
                self.summary = args.summary or self.summary
                return text
            hits = self.fs.search(args.query, args.limit)
            session.shown([h.id for h in hits])
            return render.search(hits, args.query)[1]

    def observe(self, tool: str, arguments: dict[str, Any], output: str, is_error: bool) -> str:
        with self._lock:
            return self.session.observe(tool, arguments, output, is_error=is_error)

    def guard(self, tool: str, arguments: dict[str, Any], cites: list[str]) -> Guarded:
        with self._lock:
            return self.session.guard(tool, arguments, cites)

    def commit(self, answer: str) -> RunResult:
        with self._lock:
            try:
                kept = stored_answer(answer)
                return self.session.commit(kept, m.summary_of(self.summary, kept))
            except BaseException:
                self.leave()  # the draft (and a commit cut short) stays to resume
                raise

    def fail(self) -> None:
        """The run failed: nothing of it is kept (its draft stays if the database is down)."""
        with self._lock:
            try:
                self.session.discard()
            except FlowStateError:
                self.leave()

    def leave(self) -> None:
        """The process is stopping: let the hold go, the draft stays to resume."""
        self.session.__exit__(None, None, None)


class AsyncRun:
    """A run's request over the async front door (`Run`'s methods, awaited)."""

    def __init__(self, fs: AsyncFlowState, session: AsyncSession, *, picked_up: bool) -> None:
        self.fs = fs
        self.session = session
        self.picked_up = picked_up
        self.prefetched = list(session.active.revealed.values())
        self.summary = ""
        self._lock = asyncio.Lock()

    @classmethod
    async def start(
        cls, fs: AsyncFlowState, text: str, resume: Resume | None, on_begin: OnBegin | None
    ) -> AsyncRun:
        if resume is not None:
            session = await fs.session(resume.request_id, resume.handle)
            _picked_up(session)
            return cls(fs, session, picked_up=True)
        session = await fs.begin(user_text(text))
        assert session.handle is not None
        try:
            if on_begin is not None:
                on_begin(session.request_id, session.handle)
        except BaseException:
            await session.discard()
            raise
        return cls(fs, session, picked_up=False)

    @property
    def request_id(self) -> str:
        return self.session.request_id

    @property
    def handle(self) -> str:
        assert self.session.handle is not None  # a client's session always has one
        return self.session.handle

    async def instructions(self) -> str:
        async with self._lock:
            index = await self.session.index()
        return m.instructions(
            index, self.session.active if self.picked_up else None, self.prefetched
        )

    async def call(self, name: str, arguments: Any) -> str:
        args = m.parse(name, arguments)
        async with self._lock:
            with refusals():
                session = self.session
                if isinstance(args, m.RevealArgs):
                    first = args.page == 1
                    opened = await session.reveal(args.ids) if first else session.opened(args.ids)
                    return m.revealed_text(opened, args)
                if isinstance(args, m.RecordArgs):
                    text = m.recorded_text(await session.record(m.ops(args)))
                    self.summary = args.summary or self.summary
                    return text
                hits = await self.fs.search(args.query, args.limit)
                await session.shown([h.id for h in hits])
                return render.search(hits, args.query)[1]

    async def observe(
        self, tool: str, arguments: dict[str, Any], output: str, is_error: bool
    ) -> str:
        async with self._lock:
            return await self.session.observe(tool, arguments, output, is_error=is_error)

    async def guard(self, tool: str, arguments: dict[str, Any], cites: list[str]) -> Guarded:
        async with self._lock:
            return await self.session.guard(tool, arguments, cites)

    async def commit(self, answer: str) -> RunResult:
        async with self._lock:
            try:
                kept = stored_answer(answer)
                return await self.session.commit(kept, m.summary_of(self.summary, kept))
            except BaseException:
                await self.leave()
                raise

    async def fail(self) -> None:
        async with self._lock:
            try:
                await self.session.discard()
            except FlowStateError:
                await self.leave()

    async def leave(self) -> None:
        await self.session.__aexit__(None, None, None)


class ThreadedRun:
    """`AsyncRun`'s methods over a sync `Run`, each call in a worker thread (the event loop
    never waits on Neo4j)."""

    def __init__(self, run: Run) -> None:
        self.run = run

    @classmethod
    async def start(
        cls, fs: FlowState, text: str, resume: Resume | None, on_begin: OnBegin | None
    ) -> ThreadedRun:
        return cls(await asyncio.to_thread(Run.start, fs, text, resume, on_begin))

    @property
    def request_id(self) -> str:
        return self.run.request_id

    @property
    def handle(self) -> str:
        return self.run.handle

    async def instructions(self) -> str:
        return await asyncio.to_thread(self.run.instructions)

    async def call(self, name: str, arguments: Any) -> str:
        return await asyncio.to_thread(self.run.call, name, arguments)

    async def observe(
        self, tool: str, arguments: dict[str, Any], output: str, is_error: bool
    ) -> str:
        return await asyncio.to_thread(self.run.observe, tool, arguments, output, is_error)

    async def guard(self, tool: str, arguments: dict[str, Any], cites: list[str]) -> Guarded:
        return await asyncio.to_thread(self.run.guard, tool, arguments, cites)

    async def commit(self, answer: str) -> RunResult:
        return await asyncio.to_thread(self.run.commit, answer)

    async def fail(self) -> None:
        await asyncio.to_thread(self.run.fail)

    async def leave(self) -> None:
        await asyncio.to_thread(self.run.leave)


async def start_async(
    fs: FlowState | AsyncFlowState, text: str, resume: Resume | None, on_begin: OnBegin | None
) -> AsyncRun | ThreadedRun:
    """A run's request for an async framework, over either front door."""
    from flowstate.async_api import AsyncFlowState

    if isinstance(fs, AsyncFlowState):
        return await AsyncRun.start(fs, text, resume, on_begin)
    return await ThreadedRun.start(fs, text, resume, on_begin)


@contextlib.contextmanager
def ended_on_error(run: Run) -> Iterator[None]:
    """A run that raises discards its request; one cancelled, or in a process that is
    stopping, leaves it open to resume."""
    try:
        yield
    except Exception:
        run.fail()
        raise
    except BaseException:
        run.leave()
        raise


@contextlib.asynccontextmanager
async def async_ended_on_error(run: AsyncRun | ThreadedRun) -> AsyncIterator[None]:
    """`ended_on_error` for an async framework."""
    try:
        yield
    except Exception:
        await run.fail()
        raise
    except BaseException:
        await run.leave()
        raise
