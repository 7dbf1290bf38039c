"""`Session` for asyncio: the same steps (`flowstate.engine.session_core`) on the async
driver, the request's hold renewed by an asyncio task.

    session = await afs.begin("Book the hotel we talked about")
    print(await session.index())
    await session.record([{"op": "add", "key": "hotel", "category": "decision", ...}])
    await session.commit("Booked Casa Azul", "Hotel booked in Lisbon")

An `async def` approver is awaited; a plain one runs in a thread (it may block).
"""

from __future__ import annotations

import asyncio
import contextlib
import weakref
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from flowstate.engine.async_agent import awaited_outcome
from flowstate.engine.driver import Approve, RunResult, Start
from flowstate.engine.hold import AsyncRequestHold
from flowstate.engine.index import HistoricalIndex
from flowstate.engine.opening import Opened
from flowstate.engine.request_plans import RequestPlans
from flowstate.engine.session_core import (
    Guarded,
    Recorded,
    SessionCore,
    Steps,
    claim,
    host_agent,
    pickup_plan,
)
from flowstate.engine.step import AgentConfig, Approval
from flowstate.models.active import ActiveState
from flowstate.safety.redaction import Redactor
from flowstate.store.async_repository import AsyncRepository
from flowstate.store.namespace_node import Stamp
from flowstate.store.plans import adrive

T = TypeVar("T")
_RELEASING: set[asyncio.Task[None]] = set()  # releases of dropped sessions, kept till done


def _let_go(hold: AsyncRequestHold, loop: asyncio.AbstractEventLoop) -> None:
    """Release a dropped session's hold on its event loop (the collector may run anywhere)."""
    with contextlib.suppress(RuntimeError):  # the loop is closed: the hold lapses instead
        loop.call_soon_threadsafe(_release_soon, hold)


def _release_soon(hold: AsyncRequestHold) -> None:
    task = asyncio.ensure_future(hold.__aexit__(None, None, None))
    _RELEASING.add(task)
    task.add_done_callback(_RELEASING.discard)


class AsyncSession(SessionCore[AsyncRepository]):
    """One request driven by a host, on the async driver. Build it with
    `await AsyncFlowState.begin(...)` (or `await AsyncFlowState.resume(...)`)."""

    def __init__(self, agent: RequestPlans[AsyncRepository], active: ActiveState) -> None:
        """No I/O: `_hold` takes the request's hold, renewed by a task."""
        super().__init__(agent, active)
        self._calls = asyncio.Lock()
        self._hold: AsyncRequestHold | None = None
        self._abandon: weakref.finalize[Any, AsyncSession] | None = None

    @classmethod
    async def start(
        cls,
        repo: AsyncRepository,
        text: str,
        *,
        config: AgentConfig | None = None,
        approve: Callable[[Approval], Any] | None = None,
        redact: Redactor[Any] | None = None,
        index: tuple[HistoricalIndex, Stamp] | None = None,
    ) -> AsyncSession:
        """`Session.start` on the async driver."""
        agent = host_agent(repo, config, approve, redact, index)
        active = await repo.run(agent.begin_plan(text))
        handle = claim(active)  # before the first draft save, which keeps its hash
        session = cls(agent, active)
        session.handle = handle
        await session._take_hold()
        try:
            await session._run(session._open(Start.NEW))
        except BaseException:
            await session._release()
            raise
        return session

    @classmethod
    async def resume(
        cls,
        repo: AsyncRepository,
        request_id: str,
        *,
        handle: str | None = None,
        config: AgentConfig | None = None,
        approve: Callable[[Approval], Any] | None = None,
        redact: Redactor[Any] | None = None,
    ) -> AsyncSession:
        """`Session.resume` on the async driver."""
        agent = host_agent(repo, config, approve, redact)
        active, result, holder = await repo.run(pickup_plan(agent, request_id, handle))
        session = cls(agent, active)
        session._adopt(handle, holder, result)
        await session._take_hold()
        try:
            if result is None:
                await session._run(session._pick_up())
        except BaseException:
            await session._release()
            raise
        session._picked_up(result)
        if session.closed:
            await session._release()
        return session

    async def __aenter__(self) -> AsyncSession:
        return self

    async def __aexit__(self, *exc: object) -> None:
        """Leaving the block without a commit keeps the draft (see `Session.__exit__`)."""
        await self._release()

    async def index(self) -> str:
        """The Historical State Index, exactly as an agent's prompt shows it."""
        return await self._run(self._index())

    async def record(self, delta: Sequence[dict[str, Any]]) -> Recorded:
        """Add, update or remove states of this request: all of the delta or none of it."""
        return await self._run(self._record(delta))

    async def reveal(self, ids: Sequence[str]) -> Opened:
        """Open past states (or collapsed requests) that were shown (see `Session.reveal`)."""
        return await self._run(self._reveal(ids))

    async def shown(self, state_ids: Sequence[str]) -> None:
        """Count search hits as shown, saved in the draft at once (see `Session.shown`)."""
        await self._run(self._shown(state_ids))

    async def observe(
        self, tool: str, arguments: dict[str, Any], output: str, *, is_error: bool = False
    ) -> str:
        """Keep a raw tool result the host got, citable as evidence; its id."""
        return await self._run(self._observe(tool, arguments, output, is_error))

    async def guard(self, tool: str, arguments: dict[str, Any], cites: Sequence[str]) -> Guarded:
        """The rule for a consequential action (see `Session.guard`); recorded either way."""
        return await self._run(self._guard(tool, arguments, cites))

    async def commit(self, answer: str, summary: str = "") -> RunResult:
        """End the request in one transaction (see `Session.commit`)."""
        return await self._run(self._commit(answer, summary))

    async def discard(self) -> str:
        """Drop the request; nothing of it is committed. Its id."""
        return await self._run(self._discard())

    async def _run(self, steps: Steps[T]) -> T:
        """Perform `steps` on the async driver, one call at a time (a request is one sequence
        of steps, whichever tasks call it); a request they closed lets its hold go."""
        async with self._calls:
            self.touch()
            try:
                return await adrive(steps, self._serve)
            finally:
                self.touch()
                if self.closed:
                    await self._release()

    async def _serve(self, need: Any) -> Any:
        if isinstance(need, Approve):
            assert self._agent.approve is not None  # a host agent always has one
            return await awaited_outcome(self._agent.approve, need.approval)
        return await self._agent.repo.run(need)

    async def _take_hold(self) -> None:
        agent = self._agent
        hold = AsyncRequestHold(
            agent.repo, self.request_id, agent.writer, agent.config.hold_seconds
        )
        self._hold = await hold.__aenter__()
        # Dropped without commit, discard or leaving its block: its hold is let go on its loop.
        self._abandon = weakref.finalize(self, _let_go, hold, asyncio.get_running_loop())

    def _holding(self) -> bool:
        return self._hold is not None

    async def _release(self) -> None:
        if self._abandon is not None:
            self._abandon.detach()
        if self._hold is not None:
            hold, self._hold = self._hold, None
            await hold.__aexit__(None, None, None)
