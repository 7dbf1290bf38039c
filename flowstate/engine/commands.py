"""What the step driver tells its shell to do, and what it sends back (`flowstate.engine.driver`).

Each command is a dataclass; its docstring says what the shell must send back to the driver.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from functools import cached_property
from typing import Any

from flowstate.engine.prompt import Message, Prompt
from flowstate.engine.report import StepReport
from flowstate.engine.step import Approval
from flowstate.engine.tools import Tool, ToolResult
from flowstate.llm.client import TextFormat
from flowstate.llm.step_lines import STEP_LINES
from flowstate.models.active import ActiveState
from flowstate.models.records import Observation, Outcome, RequestBundle, Usage
from flowstate.models.step import StepOutput, ToolCall
from flowstate.models.views import IndexState, RevealedState

# --- what the shell is told to do ----------------------------------------------------------


@dataclass(frozen=True)
class HostObservation:
    """A host's answer to `CallModel`: a tool result the host got, to keep as an observation
    (a step of its own; no model was called and no tool runs here)."""

    call: ToolCall
    result: ToolResult


@dataclass(frozen=True)
class HostGuard:
    """A host's answer to `CallModel`: the consequential call it is about to make, put to the
    guard's rules and the approver; the decision is recorded, and the host runs the call."""

    call: ToolCall


@dataclass(frozen=True)
class CallModel:
    """Ask for the next step: send back the model's `Completion[StepOutput]`, or a host's
    input: its `StepOutput` itself (a host's model wrote it; no prompt is needed, so none is
    built), a `HostObservation` or a `HostGuard`.

    With `save`, the draft of the step that just ended is saved while the model thinks
    (write-behind): the shell may start it before the call and must have it durable before
    it sends the completion back, so that no tool runs and nothing commits ahead of it. A
    failed save is raised instead of the completion; the same agent keeps the completion and
    acts on it at resume (a new process resumes from the older draft and asks again).
    """

    build: Callable[[], Prompt] = field(repr=False)
    save: SaveDraft | None = None
    # What the shell passes as the schema: the step lines (the prompt describes them, nothing
    # is sent beside it) or the JSON step object (its schema is sent).
    reply: type[StepOutput] | TextFormat[StepOutput] = STEP_LINES

    @cached_property
    def prompt(self) -> Prompt:
        """The step's prompt, built on first use from the Active State as it is now."""
        return self.build()

    @property
    def messages(self) -> list[Message]:
        return self.prompt.messages()


@dataclass(frozen=True)
class SaveDraft:
    """Persist the Active State (already redacted and serialized); send back None. The
    `first` save of a request opens its draft, held by the writer that began it."""

    request_id: str
    payload: str
    first: bool = False


@dataclass(frozen=True)
class Approve:
    """Ask the approver about a consequential call; send back whatever it returned, or the
    exception it raised (only exactly True approves)."""

    approval: Approval


@dataclass(frozen=True)
class RunTool:
    """Run the tool; send back its `ToolResult` (a tool's failure is one, never an error)."""

    tool: Tool
    arguments: dict[str, Any]


@dataclass(frozen=True)
class Reveal:
    """Fetch what the model asked to open; send back a `Revealed` (missing ids listed)."""

    states: list[str]
    requests: list[str]
    observations: list[str]


@dataclass(frozen=True)
class Commit:
    """Commit the bundle in one transaction (it deletes the draft); send back None, the
    `NotFoundError` the store raised when a past state it references is gone, or the
    `ConflictError` it raised when another request superseded a state it supersedes first."""

    bundle: RequestBundle


@dataclass(frozen=True)
class CheckCited:
    """Before a consequential call is approved: which of the states it cites are stale now,
    committed by another process up to this moment; send back {id: why} (superseded by whom,
    or forgotten) for those, {} when all are current. The request's own states are current."""

    request_id: str
    state_ids: list[str]


@dataclass(frozen=True)
class FindMissing:
    """Which of these past state ids no longer exist; send back that set."""

    state_ids: frozenset[str]


@dataclass(frozen=True)
class CheckCommitted:
    """The request as committed, if it already is (a lost acknowledgement); send back the
    `Request`, or None."""

    request_id: str


@dataclass(frozen=True)
class Progress:
    """A step ended (the last one too, after its commit); call the shell's hook, send None."""

    active: ActiveState
    report: StepReport


@dataclass(frozen=True)
class Done:
    result: RunResult
    bundle: RequestBundle  # as committed: the shell updates its index from it


Command = (
    CallModel
    | SaveDraft
    | Approve
    | RunTool
    | Reveal
    | Commit
    | CheckCited
    | FindMissing
    | CheckCommitted
    | Progress
    | Done
)


@dataclass(frozen=True)
class Revealed:
    """What a `Reveal` found; ids forgotten since they were shown are in `missing`."""

    states: list[RevealedState] = field(default_factory=list)
    requests: dict[str, list[IndexState]] = field(default_factory=dict)
    request_texts: dict[str, str] = field(default_factory=dict)  # what each opened request asked
    observations: list[Observation] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class RunResult:
    """What one request produced."""

    request_id: str
    answer: str
    outcome: Outcome
    steps: int
    usage: Usage
    calls: list[Usage]  # one per model call, in order
    states_added: list[str]
    revealed: list[str]  # past state ids opened during the request
    rejections: int  # how many rule violations or parse failures the model was told about
    error: str | None = None  # why the request failed, when it did
    observations: list[Observation] = field(default_factory=list, repr=False)  # all, cited or not
    # What the commit left out because another process forgot it meanwhile, and why (also on
    # the request node as `dropped`).
    dropped: list[str] = field(default_factory=list)
    # A one-call request that found the same fact stored moments before (a retry): the result
    # is that request's, and nothing new was written.
    already_committed: bool = False


class Start(Enum):
    """Where a driver picks a request up."""

    NEW = "new"  # just begun: its first draft is not saved yet
    DRAFT = "draft"  # reloaded from the saved draft of a process that stopped
    INFLIGHT = "inflight"  # this process's own Active State (after the database failed, or a
    # host's next step): saved with its first model call
