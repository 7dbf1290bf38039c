"""The front door's verbs as plans, written once for `FlowState` and `AsyncFlowState`.

    front = FrontCore(repo)
    repo.run(front.why("r3.plan"))              # FlowState.why
    await arepo.run(front.why("r3.plan"))       # AsyncFlowState.why

Each plan is the whole of a verb's work against Neo4j (`flowstate.store.plans`); the two
front doors only run it on their own repository. The front door's own agent has no model: it
keeps the namespace's index as hosts see it (loaded at its first use, then followed commit by
commit) for sessions, one-call requests, browsing and discards.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Generic

from flowstate.engine.driver import RunResult
from flowstate.engine.fact import Fact, remember_plan
from flowstate.engine.index import HistoricalIndex, RenderedIndex
from flowstate.engine.index_view import R
from flowstate.engine.relevance import words
from flowstate.engine.request_plans import RequestPlans
from flowstate.engine.session_core import SESSION_CONFIG
from flowstate.engine.step import AgentConfig
from flowstate.errors import NotFoundError, UsageError
from flowstate.models import ids
from flowstate.models.records import Request, StateNode
from flowstate.models.views import Provenance, RecordView, RevealedState
from flowstate.safety.redaction import Redactor
from flowstate.store.holds import OpenRequest
from flowstate.store.namespace_node import NamespaceSummary, Stamp, list_namespaces
from flowstate.store.plans import Plan
from flowstate.store.reading import history, provenance, record
from flowstate.store.search import SearchHit


class FrontCore(Generic[R]):
    """One namespace's verbs over its repository (sync or async)."""

    def __init__(self, repo: R) -> None:
        self.ops = repo.ops
        self.host = RequestPlans(repo, (), SESSION_CONFIG)

    def index(self, budget_tokens: int | None, model: str | None) -> Plan[RenderedIndex]:
        budget = budget_tokens or AgentConfig().index_budget_tokens
        return (yield from HistoricalIndex.loading(self.ops, budget, model)).render()

    def shown_index(self, text: str | None) -> Plan[RenderedIndex]:
        host = self.host
        # Only what changed since the last call is read, and for a request's text, the older
        # requests that may match it.
        yield from host.refresh_plan()
        if text:
            yield from host.fetch_matches_plan(text)
        return host.index.render(text)

    def session_index(
        self, config: AgentConfig | None
    ) -> Plan[tuple[HistoricalIndex, Stamp] | None]:
        """The host's index for a session to start from, loaded the first time (the session
        brings it up to date); None with a config of its own, whose budget may differ."""
        if config is not None:
            return None
        host = self.host
        if host.loaded_at is None:
            yield from host.refresh_plan()
        assert host.loaded_at is not None
        return host.index, host.loaded_at

    def reveal(self, state_ids: Sequence[str]) -> Plan[list[RevealedState]]:
        return (yield from self.ops.reveal(state_ids))

    def get(self, record_id: str) -> Plan[RecordView]:
        return (yield from record(self.ops, record_id))

    def history(self) -> Plan[list[Request]]:
        return (yield from history(self.ops))

    def why(self, state_id: str, depth: int) -> Plan[Provenance]:
        if not ids.is_state_id(state_id):
            raise UsageError(f"{state_id[:60]!r} is not a state id like r3.hotel_choice")
        return (yield from provenance(self.ops, state_id, depth))

    def current_states(self, key_prefix: str) -> Plan[list[StateNode]]:
        return (yield from self.ops.current_states(key_prefix))

    def search(self, text: str, limit: int) -> Plan[list[SearchHit]]:
        wanted = words(text)
        return (yield from self.ops.search(wanted, limit)) if wanted else []

    def remember(
        self,
        delta: Sequence[dict[str, Any]],
        text: str,
        summary: str,
        answer: str,
        redact: Redactor[Any] | None,
        idempotency_key: str | None = None,
    ) -> Plan[RunResult]:
        plan = remember_plan(
            self.host, text, delta, answer=answer, summary=summary, redact=redact,
            idempotency_key=idempotency_key,
        )  # fmt: skip
        return (yield from plan)

    def remember_fact(self, fact: Fact, redact: Redactor[Any] | None) -> Plan[RunResult]:
        """One fact as a whole request: one state, committed in one transaction."""
        text, key = fact.text or fact.summary, fact.idempotency_key
        return (yield from self.remember([fact.op()], text, fact.summary, "", redact, key))

    def pending(self) -> Plan[list[OpenRequest]]:
        return (yield from self.ops.open_requests())

    def chosen(self, request_id: str | None) -> Plan[str]:
        if request_id is not None:
            if (yield from self.ops.open_request(request_id)) is None:
                raise NotFoundError(
                    f"request {request_id} is not open in namespace {self.ops.namespace!r}"
                )
            return request_id
        return (yield from self.host.chosen_plan(None))

    def discard(self, request_id: str | None) -> Plan[str]:
        return (yield from self.host.discard_plan(request_id))

    def namespaces(self) -> Plan[list[NamespaceSummary]]:
        return (yield from list_namespaces())
