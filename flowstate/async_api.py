"""The library's front door for asyncio: every Neo4j call on the async driver.

    async with await AsyncFlowState.connect("bolt://127.0.0.1:7687", namespace="trip") as fs:
        agent = await fs.agent(model="gpt-4o-mini", tools=[search_hotels])
        result = await agent.arun("Find us a hotel in Lisbon under 150 EUR")
        print((await fs.index()).text)

Every method of `FlowState` is here with the same name and parameters, awaited, and runs the
same plan on the async driver (`flowstate.engine.front.FrontCore`, and the store's plans for
forgetting, retention, export and import), so nothing blocks the event loop on Neo4j.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import weakref
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, Self

from flowstate.api import as_tools, connection_settings, model_client
from flowstate.engine.agent_core import Approver
from flowstate.engine.async_agent import AsyncAgent
from flowstate.engine.async_session import AsyncSession
from flowstate.engine.browse import AsyncBrowse
from flowstate.engine.driver import RunResult
from flowstate.engine.fact import Fact
from flowstate.engine.front import FrontCore
from flowstate.engine.index import RenderedIndex
from flowstate.engine.lifetimes import Ending, Lifetimes
from flowstate.engine.step import AgentConfig
from flowstate.engine.tools import Tool
from flowstate.errors import FlowStateError, RequestHeld, UsageError
from flowstate.llm.client import ModelClient
from flowstate.llm.scripted import ScriptedModel
from flowstate.models.records import Request, StateNode
from flowstate.models.views import Provenance, RecordView, RevealedState
from flowstate.safety.redaction import Redactor
from flowstate.safety.retention import RetentionPolicy, apply_retention
from flowstate.settings import Neo4jSettings
from flowstate.store import AsyncRepository, AsyncStore, GraphCounts, Removal
from flowstate.store.drafts import forgotten_ids
from flowstate.store.forgetting import NamespaceContents
from flowstate.store.holds import OpenRequest
from flowstate.store.namespace_node import NamespaceSummary
from flowstate.store.search import SearchHit

log = logging.getLogger("flowstate")


class AsyncFlowState:
    """One namespace's memory in Neo4j for asyncio, and the async agents that use it."""

    def __init__(self, store: AsyncStore, namespace: str, *, read_only: bool = False) -> None:
        """Over an `AsyncStore` the caller owns: `close()` leaves it open. No I/O."""
        self.store = store
        self.repository = AsyncRepository(store, namespace, read_only=read_only)
        self._owns_store = False
        self._front = FrontCore(self.repository)
        self._lifetimes: Lifetimes[AsyncSession] = Lifetimes()
        self._browses: weakref.WeakSet[AsyncBrowse] = weakref.WeakSet()

    @classmethod
    async def connect(
        cls,
        uri: str | None = None,
        namespace: str = "default",
        *,
        user: str | None = None,
        password: str | None = None,
        database: str | None = None,
        read_only: bool = False,
        settings: Neo4jSettings | None = None,
    ) -> Self:
        """`FlowState.connect` on the async driver (same arguments but `retention`: await
        `fs.apply_retention(policy)` where that is wanted)."""
        wanted = connection_settings(uri, user, password, database, settings)
        store = await AsyncStore.connect(wanted)
        try:
            fs = cls(store, namespace, read_only=read_only)
        except BaseException:
            await store.close()  # a bad namespace must not leak the driver
            raise
        fs._owns_store = True
        return fs

    @property
    def namespace(self) -> str:
        return self.repository.namespace

    async def agent(
        self,
        model: str | ModelClient | ScriptedModel,
        tools: Iterable[Tool | Callable[..., Any]] = (),
        *,
        config: AgentConfig | None = None,
        approve: Approver | None = None,
        redact: Redactor[Any] | None = None,
        **model_kwargs: Any,
    ) -> AsyncAgent:
        """An async agent over this memory; arguments as `FlowState.agent`. No Neo4j I/O:
        its index loads at its first request. `approve` may be `async def` (awaited) or a
        plain function (run in a thread)."""
        # Off the event loop: the first client imports litellm, seconds of CPU that would
        # stall every other coroutine.
        loop = asyncio.get_running_loop()
        client = await loop.run_in_executor(None, model_client, model, model_kwargs)
        made = as_tools(tools)
        return AsyncAgent(self.repository, client, made, config, approve=approve, redact=redact)

    async def begin(
        self,
        text: str,
        *,
        config: AgentConfig | None = None,
        approve: Approver | None = None,
        redact: Redactor[Any] | None = None,
    ) -> AsyncSession:
        """A request driven by another agent loop, as `FlowState.begin`: an `AsyncSession`,
        kept open here; its client comes back to it with `session.handle`."""
        index = await self.repository.run(self._front.session_index(config))
        session = await AsyncSession.start(
            self.repository, text, config=config, approve=approve, redact=redact, index=index
        )
        return self._lifetimes.keep(session)

    async def session(
        self,
        request_id: str,
        handle: str,
        *,
        config: AgentConfig | None = None,
        approve: Approver | None = None,
        redact: Redactor[Any] | None = None,
    ) -> AsyncSession:
        """The open request `request_id` of the client holding `handle`, as
        `FlowState.session`."""
        kept = self._lifetimes.find(request_id, handle)
        if kept is not None:
            return kept
        session = await AsyncSession.resume(
            self.repository, request_id, handle=handle, config=config, approve=approve,
            redact=redact,
        )  # fmt: skip
        return session if session.closed else self._lifetimes.keep(session)

    async def resume(
        self,
        request_id: str,
        *,
        config: AgentConfig | None = None,
        approve: Approver | None = None,
        redact: Redactor[Any] | None = None,
    ) -> AsyncSession:
        """An operator's take-over of an open request whose client is gone, as
        `FlowState.resume`."""
        self._lifetimes.refuse_operator(request_id, "resume")
        session = await AsyncSession.resume(
            self.repository, request_id, config=config, approve=approve, redact=redact
        )
        if session.taken_over_from is not None:
            log.warning("took over request %s from %s", request_id, session.taken_over_from)
        return session if session.closed else self._lifetimes.keep(session)

    async def remember(
        self,
        delta: Sequence[dict[str, Any]],
        text: str,
        *,
        summary: str = "",
        answer: str = "",
        redact: Redactor[Any] | None = None,
        idempotency_key: str | None = None,
    ) -> RunResult:
        """A whole request in one call and one transaction, as `FlowState.remember`."""
        return await self.repository.run(
            self._front.remember(delta, text, summary, answer, redact, idempotency_key)
        )

    async def remember_fact(self, fact: Fact, *, redact: Redactor[Any] | None = None) -> RunResult:
        """One fact remembered in one call, as `FlowState.remember_fact`."""
        return await self.repository.run(self._front.remember_fact(fact, redact))

    async def search(self, text: str, limit: int = 10) -> list[SearchHit]:
        """States whose summary or content share words with `text`, best first."""
        return await self.repository.run(self._front.search(text, limit))

    async def current_states(self, key_prefix: str = "") -> list[StateNode]:
        """The current states whose key starts with `key_prefix`, as `FlowState.current_states`."""
        return await self.repository.run(self._front.current_states(key_prefix))

    async def shown_index(self, text: str | None = None) -> RenderedIndex:
        """The index a host's model is shown, brought up to date from the last call."""
        return await self.repository.run(self._front.shown_index(text))

    async def browse(self) -> AsyncBrowse:
        """Progressive access outside any request, as `FlowState.browse` (its `open` is
        awaited). No I/O until it opens something."""
        browse = AsyncBrowse(self._front.host)
        self._browses.add(browse)  # forget drops what it opened
        return browse

    async def pending(self) -> list[OpenRequest]:
        """Every open request of the namespace (running or interrupted), newest first."""
        return await self.repository.run(self._front.pending())

    async def chosen(self, request_id: str | None = None) -> str:
        """The open request `resume` and `discard` act on, as `FlowState.chosen`."""
        return await self.repository.run(self._front.chosen(request_id))

    async def discard(self, request_id: str | None = None, handle: str | None = None) -> str:
        """Drop an open request, as `FlowState.discard`: its client's (with `handle`) or an
        operator's. Its id."""
        if handle is not None:
            if request_id is None:
                raise UsageError("discard with a handle names its request")
            session = await self.session(request_id, handle)
            gone = await session.discard()
            self._lifetimes.end(request_id, session.active.handle_hash, Ending.DISCARDED)
            return gone
        self._lifetimes.refuse_operator(request_id, "discard")
        return await self.repository.run(self._front.discard(request_id))

    async def expire(self, idle_s: float) -> list[str]:
        """Discard the requests nobody used for `idle_s` seconds, as `FlowState.expire`."""
        gone = []
        for session in self._lifetimes.idle(idle_s):
            if session.held:
                with contextlib.suppress(FlowStateError):  # gone already: nothing to drop
                    await session.discard()
                gone.append(session.request_id)
                self._lifetimes.end(gone[-1], session.active.handle_hash, Ending.EXPIRED, idle_s)
        if self.repository.read_only:
            return gone
        for left in self._lifetimes.lapsed(await self.pending(), idle_s):
            with contextlib.suppress(RequestHeld):  # picked up meanwhile
                gone.append(await self.repository.run(self._front.discard(left.request_id)))
                self._lifetimes.end(gone[-1], left.handle_hash, Ending.EXPIRED, idle_s)
        return gone

    async def sessions(self) -> list[AsyncSession]:
        """The sessions this front door holds open now."""
        return self._lifetimes.sessions()

    async def index(
        self, budget_tokens: int | None = None, model: str | None = None
    ) -> RenderedIndex:
        """The Historical State Index exactly as an agent's prompt would show it."""
        return await self.repository.run(self._front.index(budget_tokens, model))

    async def reveal(self, ids: Sequence[str]) -> list[RevealedState]:
        """Past states with full content and their relations (type and other end's id only)."""
        return await self.repository.run(self._front.reveal(ids))

    async def get(self, record_id: str) -> RecordView:
        """One record by its id, as `FlowState.get`."""
        return await self.repository.run(self._front.get(record_id))

    async def history(self) -> list[Request]:
        """The namespace's committed requests, oldest first."""
        return await self.repository.run(self._front.history())

    async def why(self, state_id: str, depth: int = 6) -> Provenance:
        """What a state rests on, up to `depth` hops, as `FlowState.why`."""
        return await self.repository.run(self._front.why(state_id, depth))

    async def namespaces(self) -> list[NamespaceSummary]:
        """Every namespace of the database that holds anything, with its counts."""
        return await self.repository.run(self._front.namespaces())

    # --- forgetting, retention, export and import (as FlowState's, awaited) ----------------

    async def forget(self, record_id: str) -> Removal:
        """`FlowState.forget`: a request (with everything it produced) or one state; what
        this front door handed out no longer shows it."""
        counts = await self.repository.forget(record_id)
        gone = forgotten_ids(record_id)
        for session in self._lifetimes.sessions():
            session.forgotten(gone)
        for browse in list(self._browses):
            browse.forgotten(gone)
        return counts

    async def forget_all(
        self, confirm: Callable[[NamespaceContents], object] | None = None
    ) -> GraphCounts:
        """`FlowState.forget_all`: the whole namespace, with the same refusals; `confirm` may
        be `async def` (awaited) or a plain function."""
        contents = await self.repository.whole_namespace()
        if confirm is not None and inspect.isawaitable(answer := confirm(contents)):
            await answer
        return await self.repository.forget_namespace()

    async def apply_retention(self, policy: RetentionPolicy) -> dict[str, dict[str, Any]]:
        """Expire what `policy` no longer keeps; the deleted counts per kind."""
        return await self.repository.run(apply_retention(self.repository.ops, policy))

    async def expiring(self, policy: RetentionPolicy) -> dict[str, int]:
        """How many records `apply_retention(policy)` would delete now, per kind."""
        return await self.repository.expiring(policy.cutoffs())

    async def export_jsonl(self) -> Iterator[str]:
        """The namespace as JSON Lines, newline-terminated (read whole before it returns)."""
        return await self.repository.export_jsonl()

    async def import_jsonl(self, lines: Iterable[str]) -> GraphCounts:
        """Load an export into this empty namespace, all of it or nothing; what was created."""
        return await self.repository.import_jsonl(lines)

    async def close(self) -> None:
        """Let the holds of the sessions still open here go (their drafts stay), and close
        the connection `connect` opened; a store passed in stays open."""
        for session in self._lifetimes.release_all():
            await session.__aexit__(None, None, None)
        if self._owns_store:
            await self.store.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
