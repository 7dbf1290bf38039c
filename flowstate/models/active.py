"""The Active State: the session-scoped subgraph the model works in during one request.

It is pure data and serialises to JSON, so the engine can keep it in Neo4j as a draft after
every step and a crashed process can resume or discard the request.
"""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field

from flowstate.models.records import (
    ActionDecision,
    Evidence,
    Observation,
    Outcome,
    Relation,
    StateNode,
    Usage,
    utcnow,
)
from flowstate.models.step import ToolCall
from flowstate.models.views import IndexState, RevealedState


class StepRecord(BaseModel):
    """One executed action, as the Active State remembers it."""

    model_config = ConfigDict(extra="forbid")

    step: int
    action: str  # e.g. `search_hotels({"city": "Lisbon"})` or `final answer`
    observation: str | None = None  # the observation id it produced
    cites: list[str] = []


class Finish(BaseModel):
    """How the request ended, kept until its commit succeeds so a retry needs no model call."""

    model_config = ConfigDict(extra="forbid")

    outcome: Outcome
    answer: str = ""
    summary: str = ""
    error: str | None = None


class ActiveState(BaseModel):
    model_config = ConfigDict(extra="forbid")

    namespace: str
    request_id: str
    seq: int
    text: str
    started_at: datetime = Field(default_factory=utcnow)
    # The hash of the handle its client holds (`flowstate.engine.handles`); None: a request an
    # agent runs, which no handle opens.
    handle_hash: str | None = None
    step: int = 0
    # Made in this request (only these can be updated or removed):
    states: dict[str, StateNode] = {}  # by key
    relations: list[Relation] = []
    evidence: list[Evidence] = []
    observations: dict[str, Observation] = {}  # by id
    decisions: list[ActionDecision] = []  # approvals asked for consequential calls
    # Revealed on demand from past requests:
    revealed: dict[str, RevealedState] = {}  # by state id
    opened_requests: dict[str, list[IndexState]] = {}  # opened requests' state lines
    request_texts: dict[str, str] = {}  # what each opened request asked, by request id
    opened_observations: dict[str, Observation] = {}  # past observations at relation ends
    pending_access: list[str] = []  # accepted this step, fetched before the next call
    found: list[str] = []  # past state ids a search showed (openable like index lines)
    # A tool call accepted but not yet run; saved first so a crash mid-call is never silent.
    pending_call: ToolCall | None = None
    # Feedback and bookkeeping:
    rejections: list[str] = []  # told to the model at the next step
    rejected_total: int = 0  # every rejection told during the request
    log: list[StepRecord] = []
    calls: list[Usage] = []
    malformed_in_a_row: int = 0
    finish: Finish | None = None  # set once the request has ended, before its commit

    @property
    def usage(self) -> Usage:
        return sum(self.calls, Usage())

    @property
    def is_empty(self) -> bool:
        """Nothing made, opened or done yet."""
        return not (
            self.states
            or self.revealed
            or self.opened_requests
            or self.opened_observations
            or self.log
            or self.observations
        )

    def relation_ends(self) -> set[str]:
        """Ids shown as far ends of revealed relations (not removed ones: only their id is
        left, nothing to open or relate to)."""
        return {r.other for rs in self.revealed.values() for r in rs.relations if not r.removed}
