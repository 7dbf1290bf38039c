"""What the repository stores: requests, states, observations and the relations between them."""

from __future__ import annotations

from datetime import UTC, datetime
from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from flowstate.models import ids
from flowstate.models.vocab import Category, RelationType

# Limits that keep a single record sane; the engine may impose tighter ones per prompt.
MAX_SUMMARY_CHARS = 300
MAX_CONTENT_CHARS = 20_000
MAX_REQUEST_TEXT_CHARS = 100_000
MAX_OBSERVATION_CHARS = 200_000
MAX_REASON_CHARS = 2_000  # of an action decision


# Everything str.splitlines() breaks on: a "one-line" summary must contain none of them.
LINE_BREAKS = "\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029"


def is_one_line(text: str) -> bool:
    return not any(ch in text for ch in LINE_BREAKS)


def is_unicode(text: str) -> bool:
    """False for text holding a lone surrogate, which JSON can carry but UTF-8 cannot."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def utcnow() -> datetime:
    return datetime.now(UTC)


class Record(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    namespace: str = Field(pattern=ids.NAMESPACE_PATTERN)


class Usage(BaseModel):
    """Token usage of one or many model calls.

    `prompt_tokens` is the provider's figure when it reports one, else the estimate;
    `estimated_prompt_tokens` is always FlowState's own count of the whole bill sent (messages,
    reply schema, tool definitions), so the two can be shown side by side.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    prompt_tokens: int = 0
    completion_tokens: int = 0
    calls: int = 0
    estimated_prompt_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            calls=self.calls + other.calls,
            estimated_prompt_tokens=self.estimated_prompt_tokens + other.estimated_prompt_tokens,
        )

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


class Outcome(StrEnum):
    ANSWERED = "answered"  # the agent gave a final answer
    STEP_LIMIT = "step_limit"  # the step budget ran out before an answer
    FAILED = "failed"  # the model kept failing; what was valid is still committed


class Request(Record):
    """One user request to the agent, and how it went."""

    id: str = Field(pattern=ids.REQUEST_ID_PATTERN)
    seq: int = Field(ge=1)
    text: str = Field(max_length=MAX_REQUEST_TEXT_CHARS)
    summary: str = Field(min_length=1, max_length=MAX_SUMMARY_CHARS)
    outcome: Outcome
    answer: str = ""
    steps: int = Field(0, ge=0)
    started_at: datetime = Field(default_factory=utcnow)
    finished_at: datetime = Field(default_factory=utcnow)
    usage: Usage = Usage()
    # References the commit left out because their past state was forgotten (or expired) by
    # another process while the request ran, each with why; None (not stored) when nothing was.
    dropped: list[str] | None = None
    # The hash of the handle of the client that ran it, so that its retried commit is
    # recognised (by it alone) after a restart; None (not stored) for an agent's request.
    handle_hash: str | None = Field(None, repr=False)
    # A one-call request's idempotency key (a hash): a retry within the window finds it.
    idempotency_key: str | None = Field(None, repr=False)

    @model_validator(mode="after")
    def _id_matches_seq(self) -> Request:
        if self.id != ids.request_id(self.seq):
            raise ValueError(f"request id {self.id!r} does not match sequence number {self.seq}")
        return self


class StateNode(Record):
    """A typed piece of execution state: what the agent learned, decided or produced."""

    id: str = Field(pattern=ids.STATE_ID_PATTERN)
    request_id: str = Field(pattern=ids.REQUEST_ID_PATTERN)
    key: str = Field(pattern=ids.KEY_PATTERN)
    category: Category
    summary: str = Field(min_length=1, max_length=MAX_SUMMARY_CHARS)
    content: str = Field(min_length=1, max_length=MAX_CONTENT_CHARS)
    created_at: datetime = Field(default_factory=utcnow)
    updated_at: datetime = Field(default_factory=utcnow)
    # Set by the store when the state that superseded this one was forgotten or expired: its
    # id (never its content) and how it went. This state stays superseded (stale, not current
    # again); a newer state may supersede it again.
    superseded_by_removed: str | None = Field(None, pattern=ids.STATE_ID_PATTERN)
    superseder_removed: Literal["forgotten", "expired"] | None = None

    @field_validator("summary")
    @classmethod
    def _one_line(cls, v: str) -> str:
        if not is_one_line(v):
            raise ValueError("summary must be a single line")
        return v

    @model_validator(mode="after")
    def _id_is_request_and_key(self) -> StateNode:
        if not ids.is_key(self.key):
            raise ValueError(f"state key {self.key!r} is reserved")
        if self.id != ids.state_id(self.request_id, self.key):
            raise ValueError(f"state id {self.id!r} must be {self.request_id}.{self.key}")
        return self


class Observation(Record):
    """A raw tool result, kept verbatim when a state cites it."""

    id: str = Field(pattern=ids.OBSERVATION_ID_PATTERN)
    request_id: str = Field(pattern=ids.REQUEST_ID_PATTERN)
    step: int = Field(ge=0)
    tool: str = Field(min_length=1, max_length=128)
    arguments: str = Field("{}", description="the call's arguments as canonical JSON")
    output: str = Field(max_length=MAX_OBSERVATION_CHARS)
    is_error: bool = False
    created_at: datetime = Field(default_factory=utcnow)

    @model_validator(mode="after")
    def _belongs_to_request(self) -> Observation:
        if ids.request_of(self.id) != self.request_id:
            raise ValueError(f"observation {self.id!r} does not belong to {self.request_id}")
        return self


class Relation(BaseModel):
    """A typed edge from a state to another state (never from model text to a label)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    type: RelationType
    source: str = Field(pattern=ids.STATE_ID_PATTERN)
    target: str = Field(pattern=ids.STATE_ID_PATTERN)

    @model_validator(mode="after")
    def _no_self_loop(self) -> Relation:
        if self.source == self.target:
            raise ValueError("a state cannot relate to itself")
        return self


class Evidence(BaseModel):
    """A state citing a raw observation."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    state: str = Field(pattern=ids.STATE_ID_PATTERN)
    observation: str = Field(pattern=ids.OBSERVATION_ID_PATTERN)


class ActionDecision(Record):
    """The approval decision on a consequential tool call, with the states it cited."""

    id: str = Field(pattern=ids.DECISION_ID_PATTERN)
    request_id: str = Field(pattern=ids.REQUEST_ID_PATTERN)
    step: int = Field(ge=0)
    tool: str = Field(min_length=1, max_length=128)
    arguments: str = Field("{}", description="the call's arguments as canonical JSON")
    cites: list[str] = Field(default=[], description="state ids the call relied on")
    approved: bool
    reason: str = Field("", max_length=MAX_REASON_CHARS)
    created_at: datetime = Field(default_factory=utcnow)

    @model_validator(mode="after")
    def _belongs_to_request(self) -> ActionDecision:
        if ids.request_of(self.id) != self.request_id:
            raise ValueError(f"decision {self.id!r} does not belong to {self.request_id}")
        bad = [c for c in self.cites if not ids.is_state_id(c)]
        if bad:
            raise ValueError(f"cited ids are not state ids: {bad}")
        return self


class RequestBundle(BaseModel):
    """Everything one request commits, in one transaction."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    request: Request
    states: list[StateNode] = []
    relations: list[Relation] = []
    observations: list[Observation] = []
    evidence: list[Evidence] = []
    decisions: list[ActionDecision] = []

    @model_validator(mode="after")
    def _consistent(self) -> RequestBundle:
        ns, rid = self.request.namespace, self.request.id
        owned: list[StateNode | Observation | ActionDecision] = [
            *self.states,
            *self.observations,
            *self.decisions,
        ]
        for item in owned:
            if item.namespace != ns or item.request_id != rid:
                raise ValueError(f"{item.id} does not belong to {ns}/{rid}")
        own_states = {s.id for s in self.states}
        own_obs = {o.id for o in self.observations}
        for rel in self.relations:
            if rel.source not in own_states:
                raise ValueError(f"relation source {rel.source} is not a state of {rid}")
        for ev in self.evidence:
            if ev.state not in own_states or ev.observation not in own_obs:
                raise ValueError(f"evidence {ev.state} -> {ev.observation} is not inside {rid}")
        return self
