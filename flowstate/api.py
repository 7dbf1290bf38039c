"""The library's front door.

>>> fs = FlowState.connect("bolt://127.0.0.1:7687", namespace="trip")     # doctest: +SKIP
>>> agent = fs.agent(model="gpt-4o-mini", tools=[search_hotels])          # doctest: +SKIP
>>> result = agent.run("Find us a hotel in Lisbon under 150 EUR")         # doctest: +SKIP
>>> result.answer, result.request_id, result.usage.prompt_tokens          # doctest: +SKIP
>>> print(fs.index().text)                                                # doctest: +SKIP

Every verb is a plan of `flowstate.engine.front.FrontCore` run on the sync driver;
`AsyncFlowState` (`flowstate.async_api`) runs the same plans on the async one.
"""

from __future__ import annotations

import contextlib
import logging
import uuid
import weakref
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, Self

from pydantic import SecretStr

from flowstate.engine.agent import Agent, AgentConfig
from flowstate.engine.agent_core import Approver
from flowstate.engine.browse import Browse
from flowstate.engine.driver import RunResult
from flowstate.engine.fact import Fact
from flowstate.engine.front import FrontCore
from flowstate.engine.index import RenderedIndex
from flowstate.engine.lifetimes import Ending, Lifetimes
from flowstate.engine.session import Session
from flowstate.engine.tools import Tool
from flowstate.errors import FlowStateError, RequestHeld, UsageError
from flowstate.llm.client import LiteLLMClient, ModelClient
from flowstate.llm.scripted import ScriptedModel
from flowstate.models.records import Request, StateNode
from flowstate.models.views import Provenance, RecordView, RevealedState
from flowstate.safety.redaction import Redactor
from flowstate.safety.retention import RetentionPolicy, apply_retention
from flowstate.settings import Neo4jSettings
from flowstate.store import Repository, Store
from flowstate.store.drafts import forgotten_ids
from flowstate.store.forgetting import NamespaceContents
from flowstate.store.holds import OpenRequest
from flowstate.store.namespace_node import NamespaceSummary
from flowstate.store.reading import GraphCounts, Removal
from flowstate.store.rehearsal import Rehearsal
from flowstate.store.search import SearchHit

log = logging.getLogger("flowstate")


class FlowState:
    """One namespace's memory in Neo4j, and the agents that use it."""

    def __init__(self, store: Store, namespace: str, *, read_only: bool = False) -> None:
        """Over a `Store` the caller owns: `close()` leaves it open. No I/O."""
        self.store = store
        self.repository = Repository(store, namespace, read_only=read_only)
        self._owns_store = False
        self._front = FrontCore(self.repository)
        self._lifetimes: Lifetimes[Session] = Lifetimes()
        self._browses: weakref.WeakSet[Browse] = weakref.WeakSet()

    @classmethod
    def connect(
        cls,
        uri: str | None = None,
        namespace: str = "default",
        *,
        user: str | None = None,
        password: str | None = None,
        database: str | None = None,
        read_only: bool = False,
        settings: Neo4jSettings | None = None,
        retention: RetentionPolicy | None = None,
    ) -> Self:
        """Connect (applying the schema) to `uri`, or to the settings' server when it is None.

        Only the arguments count: `FLOWSTATE_*` environment variables are read by the CLI and
        the tests, never here (pass `settings=Neo4jSettings()` to opt in). With `retention`,
        what the policy no longer keeps is expired right away (unless the namespace is
        read-only); `fs.apply_retention(policy)` does it again later. Nothing is left open
        when a step of this fails.
        """
        store = Store.connect(connection_settings(uri, user, password, database, settings))
        try:
            fs = cls(store, namespace, read_only=read_only)
            fs._owns_store = True
            if retention is not None and not read_only:
                fs.apply_retention(retention)
        except BaseException:
            store.close()  # a bad namespace or a failed retention must not leak the driver
            raise
        return fs

    @property
    def namespace(self) -> str:
        return self.repository.namespace

    def agent(
        self,
        model: str | ModelClient | ScriptedModel,
        tools: Iterable[Tool | Callable[..., Any]] = (),
        *,
        config: AgentConfig | None = None,
        approve: Approver | None = None,
        redact: Redactor[Any] | None = None,
        **model_kwargs: Any,
    ) -> Agent:
        """An agent over this memory. `model` is any litellm model name, a ModelClient, or a
        ScriptedModel (its client is used). No I/O: its index loads at its first request.

        `approve` decides consequential tool calls (denied when None); `redact` sees every
        state, observation, decision and request before it is persisted (see
        `flowstate.safety.redaction.builtin_redactor`).
        """
        client = model_client(model, model_kwargs)
        made = as_tools(tools)
        return Agent(self.repository, client, made, config, approve=approve, redact=redact)

    def begin(
        self,
        text: str,
        *,
        config: AgentConfig | None = None,
        approve: Approver | None = None,
        redact: Redactor[Any] | None = None,
    ) -> Session:
        """A request driven by another agent loop (the host's model emits the steps): see
        `flowstate.engine.session`. Same rules, drafts and commit as `fs.agent(...).run`.

        The session holds the request until it is committed, discarded, left or expired;
        `session.handle` is what its client presents to come back to it by id
        (`fs.session(request_id, handle)`), from this front door or, after a restart, another.
        """
        index = self.repository.run(self._front.session_index(config))
        session = Session.start(
            self.repository, text, config=config, approve=approve, redact=redact, index=index
        )
        return self._lifetimes.keep(session)

    def session(
        self,
        request_id: str,
        handle: str,
        *,
        config: AgentConfig | None = None,
        approve: Approver | None = None,
        redact: Redactor[Any] | None = None,
    ) -> Session:
        """The open request `request_id` of the client holding `handle`: the session this
        front door keeps, else picked up from its draft (its writer stopped: RequestHeld while
        another live writer holds it). WrongHandle, with nothing done, when `handle` is not
        the request's. A request committed by a writer that stopped before it could say so
        comes back closed, its result kept, to its own client only."""
        kept = self._lifetimes.find(request_id, handle)
        if kept is not None:
            return kept
        session = Session.resume(
            self.repository, request_id, handle=handle, config=config, approve=approve,
            redact=redact,
        )  # fmt: skip
        return session if session.closed else self._lifetimes.keep(session)

    def resume(
        self,
        request_id: str,
        *,
        config: AgentConfig | None = None,
        approve: Approver | None = None,
        redact: Redactor[Any] | None = None,
    ) -> Session:
        """An operator's take-over of an open request whose client is gone: picked up from its
        saved draft once its hold has lapsed (RequestHeld while a live writer holds it), with
        a new handle; `session.taken_over_from` names the writer that held it. A request
        committed by a writer that stopped before it could say so comes back closed, its
        commit's result kept."""
        self._lifetimes.refuse_operator(request_id, "resume")
        session = Session.resume(
            self.repository, request_id, config=config, approve=approve, redact=redact
        )
        if session.taken_over_from is not None:
            log.warning("took over request %s from %s", request_id, session.taken_over_from)
        return session if session.closed else self._lifetimes.keep(session)

    def remember(
        self,
        delta: Sequence[dict[str, Any]],
        text: str,
        *,
        summary: str = "",
        answer: str = "",
        redact: Redactor[Any] | None = None,
        idempotency_key: str | None = None,
    ) -> RunResult:
        """A whole request in one call and one transaction: begin it with `text`, apply
        `delta` under the ISU rules, commit it (see `flowstate.engine.fact`).

            fs.remember([{"op": "add", "key": "home_city", "category": "preference",
                          "summary": "Lives in Porto", "content": "Lives in Porto"}],
                        "I moved to Porto")
        """
        return self.repository.run(
            self._front.remember(delta, text, summary, answer, redact, idempotency_key)
        )

    def remember_fact(self, fact: Fact, *, redact: Redactor[Any] | None = None) -> RunResult:
        """One fact remembered in one call and one transaction: the request that says it
        (`fact.text`, default the summary) with one state, committed. A retry of the same
        call within ten minutes (the same `fact.idempotency_key`, by default one derived from
        the namespace and the fact) is stored once: it returns the first call's result with
        `already_committed`.

            fs.remember_fact(Fact("Lives in Porto", "environment", text="I moved to Porto"))
        """
        return self.repository.run(self._front.remember_fact(fact, redact))

    def search(self, text: str, limit: int = 10) -> list[SearchHit]:
        """States whose summary or content share words with `text` (Neo4j full-text index, no
        model call), best first; other namespaces are never searched.

            [hit.id for hit in fs.search("hotel budget")]     # ['r1.budget', ...]
        """
        return self.repository.run(self._front.search(text, limit))

    def current_states(self, key_prefix: str = "") -> list[StateNode]:
        """The committed states that no state supersedes (a superseder forgotten since still
        counts) whose key starts with `key_prefix`, oldest first, with their content.

            [s.id for s in fs.current_states("budget")]     # ['r5.budget']
        """
        return self.repository.run(self._front.current_states(key_prefix))

    # --- forgetting, retention, export and import (AsyncFlowState has the same) -------------

    def forget(self, record_id: str) -> Removal:
        """Forget a request (with everything it produced) or one state, drafts included;
        what was deleted, and what it left behind: states that stay superseded by a forgotten
        one, and states that lost a relation to one (ids only). The same scrub as
        `flowstate forget ID`. What this front door handed out (open sessions, browses) no
        longer shows it."""
        removal = self.repository.forget(record_id)
        gone = forgotten_ids(record_id)
        for session in self._lifetimes.sessions():
            session.forgotten(gone)
        for browse in list(self._browses):
            browse.forgotten(gone)
        return removal

    def forget_all(
        self, confirm: Callable[[NamespaceContents], object] | None = None
    ) -> GraphCounts:
        """Forget the whole namespace, drafts and id counter included (ids start again at
        r1); what was deleted. NamespaceBusy while a live writer runs a request there (checked
        again after `confirm`); NotFoundError when the namespace holds nothing. While it
        deletes, requests that begin there are refused with NamespaceBusy.

        `confirm` is shown what will go before anything is deleted; raising there stops it.
        """
        contents = self.repository.whole_namespace()
        if confirm is not None:
            confirm(contents)
        return self.repository.forget_namespace()

    def apply_retention(self, policy: RetentionPolicy) -> dict[str, dict[str, Any]]:
        """Expire what `policy` no longer keeps; the deleted counts per kind."""
        return self.repository.run(apply_retention(self.repository.ops, policy))

    def expiring(self, policy: RetentionPolicy) -> dict[str, int]:
        """How many records `apply_retention(policy)` would delete now, per kind."""
        return self.repository.expiring(policy.cutoffs())

    def export_jsonl(self) -> Iterator[str]:
        """The namespace as JSON Lines, newline-terminated (`flowstate.store.export`)."""
        return self.repository.export_jsonl()

    def import_jsonl(self, lines: Iterable[str]) -> GraphCounts:
        """Load an export into this empty namespace, all of it or nothing; what was created.
        A bad line raises ValidationFailed naming its number."""
        return self.repository.import_jsonl(lines)

    def shown_index(self, text: str | None = None) -> RenderedIndex:
        """The index a host's model is shown (for a request whose text is `text`), brought up
        to date from the last call: only what changed since is read."""
        return self.repository.run(self._front.shown_index(text))

    def browse(self) -> Browse:
        """Progressive access outside any request, for a reader: opens what the index, a
        search (`browse.shown`) or an earlier opening showed, by the rule requests follow.
        No I/O until it opens something."""
        browse = Browse(self._front.host)
        self._browses.add(browse)  # forget drops what it opened
        return browse

    @contextlib.contextmanager
    def rehearsal(self, timeout_s: float = 30.0) -> Iterator[FlowState]:
        """A front door on this server, in a namespace of its own, whose reads and writes all
        run in one transaction that is rolled back at the end (or after `timeout_s`): nothing
        it does is kept, and no id it hands out is used. A server runs its statements once
        this way, so that Neo4j has planned them before a caller needs them.

            with fs.rehearsal() as dry:
                dry.remember_fact(Fact("Warm-up", "preference"))   # undone at the end
        """
        with Rehearsal(self.store, timeout_s) as store:
            dry = FlowState(store, f"rehearsal-{uuid.uuid4().hex[:12]}")
            try:
                yield dry
            finally:
                dry.close()  # lets its sessions' holds go, inside the transaction

    def pending(self) -> list[OpenRequest]:
        """Every open request of the namespace: running now (`held`: a live writer holds it)
        or interrupted (anyone may resume or discard it), with its holder, newest first."""
        return self.repository.run(self._front.pending())

    def chosen(self, request_id: str | None = None) -> str:
        """The open request `resume` and `discard` act on: `request_id` (checked to be
        open), or the only one no live writer holds; UsageError when none is, or several."""
        return self.repository.run(self._front.chosen(request_id))

    def discard(self, request_id: str | None = None, handle: str | None = None) -> str:
        """Drop an open request: nothing of it is committed. Its id.

        With `handle`, its client's discard (WrongHandle when the handle is not its). Without,
        an operator's discard of an interrupted request (chosen as by `chosen`), RequestHeld
        while a live writer runs it."""
        if handle is not None:
            if request_id is None:
                raise UsageError("discard with a handle names its request")
            session = self.session(request_id, handle)
            gone = session.discard()
            self._lifetimes.end(request_id, session.active.handle_hash, Ending.DISCARDED)
            return gone
        self._lifetimes.refuse_operator(request_id, "discard")
        return self.repository.run(self._front.discard(request_id))

    def expire(self, idle_s: float) -> list[str]:
        """Discard the requests nobody used for `idle_s` seconds: the sessions this front door
        keeps, and open requests whose hold lapsed (their writer stopped) and whose draft was
        last saved that long ago by the database's clock. Their ids; their clients are told
        so on their next call. A server sweeps with it."""
        gone = []
        for session in self._lifetimes.idle(idle_s):
            if session.held:
                with contextlib.suppress(FlowStateError):  # gone already: nothing to drop
                    session.discard()
                gone.append(session.request_id)
                self._lifetimes.end(gone[-1], session.active.handle_hash, Ending.EXPIRED, idle_s)
        if self.repository.read_only:
            return gone
        for left in self._lifetimes.lapsed(self.pending(), idle_s):
            with contextlib.suppress(RequestHeld):  # picked up meanwhile
                gone.append(self.repository.run(self._front.discard(left.request_id)))
                self._lifetimes.end(gone[-1], left.handle_hash, Ending.EXPIRED, idle_s)
        return gone

    def sessions(self) -> list[Session]:
        """The sessions this front door holds open now."""
        return self._lifetimes.sessions()

    def index(self, budget_tokens: int | None = None, model: str | None = None) -> RenderedIndex:
        """The Historical State Index exactly as an agent's prompt would show it."""
        return self.repository.run(self._front.index(budget_tokens, model))

    def reveal(self, ids: Sequence[str]) -> list[RevealedState]:
        """Past states with full content and their relations (type and other end's id only)."""
        return self.repository.run(self._front.reveal(ids))

    def get(self, record_id: str) -> RecordView:
        """One record by its id: a state (`RevealedState`: content, relations as type and
        id, the states superseding it), a request (`RequestRecord`: with its states' lines),
        an observation (r3.o1) or an action decision (r3.a1). NotFoundError unless it
        exists. What `flowstate show ID` prints."""
        return self.repository.run(self._front.get(record_id))

    def history(self) -> list[Request]:
        """The namespace's committed requests, oldest first."""
        return self.repository.run(self._front.history())

    def why(self, state_id: str, depth: int = 6) -> Provenance:
        """What a state rests on, up to `depth` hops: the states, the observations they cite,
        their requests, and which of those states are superseded now (`.tree()` prints it)."""
        return self.repository.run(self._front.why(state_id, depth))

    def namespaces(self) -> list[NamespaceSummary]:
        """Every namespace of the database that holds anything, with its counts (never its
        content), in name order."""
        return self.repository.run(self._front.namespaces())

    def close(self) -> None:
        """Let the holds of the sessions still open here go (their drafts stay, to resume),
        and close the connection `connect` opened; a store passed in stays open."""
        for session in self._lifetimes.release_all():
            session.__exit__(None, None, None)
        if self._owns_store:
            self.store.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def connection_settings(
    uri: str | None,
    user: str | None,
    password: str | None,
    database: str | None,
    settings: Neo4jSettings | None,
) -> Neo4jSettings:
    """The settings `connect` uses: the arguments given, over `settings` or the defaults."""
    base = settings or Neo4jSettings.defaults()
    overrides: dict[str, Any] = {"uri": uri, "user": user, "database": database}
    overrides = {k: v for k, v in overrides.items() if v is not None}
    if password is not None:
        overrides["password"] = SecretStr(password)
    return base.model_copy(update=overrides)


def as_tools(tools: Iterable[Tool | Callable[..., Any]]) -> list[Tool]:
    return [t if isinstance(t, Tool) else Tool.from_function(t) for t in tools]


def model_client(model: object, model_kwargs: dict[str, Any]) -> ModelClient:
    """The model client for `fs.agent`; anything else fails here, before anything is written."""
    if isinstance(model, str):
        return LiteLLMClient(model, **model_kwargs)
    if isinstance(model, ScriptedModel):
        return model.client(**model_kwargs)
    if not isinstance(model, ModelClient):
        raise UsageError(
            f"model must be a litellm model name, a ModelClient or a ScriptedModel, not "
            f"{type(model).__name__}"
        )
    return model
