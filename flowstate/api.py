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

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, Self

from pydantic import SecretStr

from flowstate.engine.agent import Agent, AgentConfig
from flowstate.engine.agent_core import Approver
from flowstate.engine.browse import Browse
from flowstate.engine.driver import RunResult
from flowstate.engine.front import FrontCore
from flowstate.engine.index import RenderedIndex
from flowstate.engine.session import Session
from flowstate.engine.tools import Tool
from flowstate.errors import UsageError
from flowstate.llm.client import LiteLLMClient, ModelClient
from flowstate.llm.scripted import ScriptedModel
from flowstate.models.records import Request
from flowstate.models.views import Provenance, RevealedState
from flowstate.safety.redaction import Redactor
from flowstate.safety.retention import RetentionPolicy, apply_retention
from flowstate.settings import Neo4jSettings
from flowstate.store import Repository, Store
from flowstate.store.forgetting import NamespaceContents
from flowstate.store.holds import OpenRequest
from flowstate.store.namespace_node import NamespaceSummary
from flowstate.store.reading import GraphCounts
from flowstate.store.search import SearchHit


class FlowState:
    """One namespace's memory in Neo4j, and the agents that use it."""

    def __init__(self, store: Store, namespace: str, *, read_only: bool = False) -> None:
        """Over a `Store` the caller owns: `close()` leaves it open. No I/O."""
        self.store = store
        self.repository = Repository(store, namespace, read_only=read_only)
        self._owns_store = False
        self._front = FrontCore(self.repository)

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
        `flowstate.engine.session`. Same rules, drafts and commit as `fs.agent(...).run`."""
        index = self.repository.run(self._front.session_index(config))
        return Session.start(
            self.repository, text, config=config, approve=approve, redact=redact, index=index
        )

    def resume(
        self,
        request_id: str,
        *,
        config: AgentConfig | None = None,
        approve: Approver | None = None,
        redact: Redactor[Any] | None = None,
    ) -> Session:
        """Pick an open request up as a session, from its saved draft (its writer stopped):
        RequestHeld while another live writer holds it. A request committed by a writer that
        stopped before it could say so comes back closed, its commit's result kept."""
        return Session.resume(
            self.repository, request_id, config=config, approve=approve, redact=redact
        )

    def remember(
        self,
        delta: Sequence[dict[str, Any]],
        text: str,
        *,
        summary: str = "",
        answer: str = "",
        redact: Redactor[Any] | None = None,
    ) -> RunResult:
        """A whole request in one call and one transaction: begin it with `text`, apply
        `delta` under the ISU rules, commit it (see `flowstate.engine.fact`).

            fs.remember([{"op": "add", "key": "home_city", "category": "preference",
                          "summary": "Lives in Porto", "content": "Lives in Porto"}],
                        "I moved to Porto")
        """
        return self.repository.run(self._front.remember(delta, text, summary, answer, redact))

    def search(self, text: str, limit: int = 10) -> list[SearchHit]:
        """States whose summary or content share words with `text` (Neo4j full-text index, no
        model call), best first; other namespaces are never searched.

            [hit.id for hit in fs.search("hotel budget")]     # ['r1.budget', ...]
        """
        return self.repository.run(self._front.search(text, limit))

    # --- forgetting, retention, export and import (AsyncFlowState has the same) -------------

    def forget(self, record_id: str) -> GraphCounts:
        """Forget a request (with everything it produced) or one state, drafts included;
        what was deleted. The same scrub as `flowstate forget ID`."""
        return self.repository.forget(record_id)

    def forget_all(
        self, confirm: Callable[[NamespaceContents], object] | None = None
    ) -> GraphCounts:
        """Forget the whole namespace, drafts and id counter included (ids start again at
        r1); what was deleted. NamespaceBusy while a live writer runs a request there (checked
        again after `confirm`); NotFoundError when the namespace holds nothing.

        `confirm` is shown what will go before anything is deleted; raising there stops it.
        """
        contents = self.repository.whole_namespace()
        if confirm is not None:
            confirm(contents)
        return self.repository.forget_namespace()

    def apply_retention(self, policy: RetentionPolicy) -> dict[str, dict[str, int]]:
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
        return Browse(self._front.host)

    def pending(self) -> list[OpenRequest]:
        """Every open request of the namespace: running now (`held`: a live writer holds it)
        or interrupted (anyone may resume or discard it), with its holder, newest first."""
        return self.repository.run(self._front.pending())

    def chosen(self, request_id: str | None = None) -> str:
        """The open request `resume` and `discard` act on: `request_id` (checked to be
        open), or the only one no live writer holds; UsageError when none is, or several."""
        return self.repository.run(self._front.chosen(request_id))

    def discard(self, request_id: str | None = None) -> str:
        """Drop an interrupted request (chosen as by `chosen`): nothing of it is committed.
        RequestHeld while a live writer runs it. Its id."""
        return self.repository.run(self._front.discard(request_id))

    def index(self, budget_tokens: int | None = None, model: str | None = None) -> RenderedIndex:
        """The Historical State Index exactly as an agent's prompt would show it."""
        return self.repository.run(self._front.index(budget_tokens, model))

    def reveal(self, ids: Sequence[str]) -> list[RevealedState]:
        """Past states with full content and their relations (type and other end's id only)."""
        return self.repository.run(self._front.reveal(ids))

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
        """Close the connection `connect` opened; a store passed in stays open."""
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
