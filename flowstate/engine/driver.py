"""The step machine of one request, without I/O (sans-IO).

The driver is fed what came of each command and answers with the next one. The shells do the
I/O a command names and nothing else: the sync and async agents, the fuzzer, and any host
that drives the loop itself. Every rule of the loop lives here or in `StepLogic` (pure), so a
fix lands in every shell at once.

    driver = StepDriver(active, index, logic, start=Start.NEW)
    command = driver.start()
    while not isinstance(command, Done):
        command = driver.send(perform(command))     # the shell's I/O
    result = command.result

One step: `CallModel` -> (`Approve`) -> (`SaveDraft`, `RunTool`) -> (`Reveal`) -> `Progress`,
and the next `CallModel` carries the step's draft. The end: `SaveDraft` (with how the request
ended) -> `Commit` (-> `FindMissing` -> `Commit` when another process forgot a past state it
cites) -> `Progress` -> `Done`. The draft is saved before every tool call (write-ahead), so a
crash mid-call is known, and with the finish before the commit, so a crash in the commit needs
no model call again. Between steps it is saved while the model is called (write-behind): only
the reveal stays on the critical path.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from enum import Enum
from functools import cached_property, partial
from typing import Any

from flowstate.engine.commit import bundle_of, past_references, without_dangling
from flowstate.engine.index import RenderedIndex
from flowstate.engine.prompt import Message, Prompt, build_prompt
from flowstate.engine.protocol import ReplyFormat
from flowstate.engine.report import Rejection, RejectionKind, StepReport
from flowstate.engine.step import Approval, StepLogic, StepVerdict
from flowstate.engine.tools import Tool, ToolResult
from flowstate.errors import FlowStateError, NotFoundError
from flowstate.llm.client import Completion, TextFormat
from flowstate.llm.step_lines import STEP_LINES
from flowstate.models import ids
from flowstate.models.active import ActiveState, Finish
from flowstate.models.records import (
    Observation,
    Outcome,
    Request,
    RequestBundle,
    Usage,
    utcnow,
)
from flowstate.models.step import StepOutput
from flowstate.models.views import IndexState, RevealedState
from flowstate.safety.redaction import Redactor, redact_active, redact_bundle

# --- what the shell is told to do ----------------------------------------------------------


@dataclass(frozen=True)
class CallModel:
    """Ask for the next step: send back the model's `Completion[StepOutput]`, or a host's
    `StepOutput` itself (a host's model wrote it; no prompt is needed, so none is built).

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
    """Persist the Active State (already redacted and serialized); send back None."""

    request_id: str
    payload: str


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
    """Commit the bundle in one transaction (it deletes the draft); send back None, or the
    `NotFoundError` the store raised when a past state it references is gone."""

    bundle: RequestBundle


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


class Start(Enum):
    """Where a driver picks a request up."""

    NEW = "new"  # just begun: its first draft is not saved yet
    DRAFT = "draft"  # reloaded from the saved draft of a process that stopped
    INFLIGHT = "inflight"  # this process's own Active State (after the database failed, or a
    # host's next step): saved with its first model call


# --- the machine -----------------------------------------------------------------------------


class StepDriver:
    """Runs one request's steps as a sequence of commands; performs no I/O of its own."""

    def __init__(
        self,
        active: ActiveState,
        index: RenderedIndex,
        logic: StepLogic,
        *,
        start: Start,
        redact: Redactor[Any] | None = None,
    ) -> None:
        self.active = active
        self.index = index
        self.logic = logic
        self.redact = redact
        # A step ended whose draft rides along with the next model call; picked up in memory
        # after a database failure, the draft on record may be older than the Active State.
        self._unsaved = start is Start.INFLIGHT
        self._steps = self._run(start)
        self._started = False

    def start(self) -> Command:
        """The first command."""
        if self._started:
            raise FlowStateError("the driver has already started")
        self._started = True
        return self._advance(None)

    def send(self, outcome: Any = None) -> Command:
        """What came of the last command; returns the next one."""
        if not self._started:
            raise FlowStateError("start() the driver first")
        return self._advance(outcome)

    def _advance(self, outcome: Any) -> Command:
        try:
            return self._steps.send(outcome)
        except StopIteration as end:  # the generator returns its Done
            done: Done = end.value
            return done

    # -- the loop, written as one generator: each `yield` is a command and its outcome ------

    def _run(self, start: Start) -> Generator[Command, Any, Done]:
        active = self.active
        if start is Start.NEW:
            yield self._save()
            if active.pending_access:  # prefetched: visible from the first call
                yield from self._open(StepReport(0))
                self._unsaved = True  # saved with the first call, revealed states and all
        elif start is Start.DRAFT:
            self.logic.interrupted(active)  # a parked call may have run: say so, never repeat
        if active.finish is not None:  # ended before; only its commit failed
            ended = StepReport(active.step)
            return (yield from self._finish(_verdict(active.finish), ended, retry=True))
        if active.pending_call is not None or active.pending_access:
            # A step the database cut short: its parked call never ran (the save before it
            # failed) and what it asked to open was not fetched. Finish it before going on.
            report = StepReport(active.step)
            yield from self._act(report)
            yield from self._after_step(report)
        while True:
            shown = self.index  # the index this step's prompt shows and its rules check
            save, self._unsaved = (self._save() if self._unsaved else None), False
            answer = yield CallModel(partial(self._prompt, shown), save, self._reply)
            completion = _host_step(answer) if isinstance(answer, StepOutput) else answer
            vis = self.logic.visibility(active, shown)
            verdict, report = self.logic.absorb(active, completion, vis)
            if verdict.done:
                return (yield from self._finish(verdict, report))
            if verdict.approval is not None:
                approved = yield Approve(verdict.approval)
                self.logic.decide(active, verdict.approval, approved, report)
            yield from self._act(report)
            yield from self._after_step(report)

    @property
    def _reply(self) -> type[StepOutput] | TextFormat[StepOutput]:
        return STEP_LINES if self.logic.config.reply_format is ReplyFormat.LINES else StepOutput

    def _prompt(self, index: RenderedIndex) -> Prompt:
        config = self.logic.config
        return build_prompt(
            self.active,
            index,
            self.logic.tools.values(),
            config.limits,
            config.max_steps,
            config.recent_observations,
            config.reply_format,
        )

    def _act(self, report: StepReport) -> Generator[Command, Any, None]:
        """Save the step before its tool runs (write-ahead), then run it."""
        call = self.active.pending_call
        if call is None:
            return
        yield self._save()
        result: ToolResult = yield RunTool(self.logic.tools[call.name], dict(call.arguments))
        report.observation = self.logic.record(self.active, call, result)

    def _after_step(self, report: StepReport) -> Generator[Command, Any, None]:
        """Open what the model asked for (visible from the next call); the draft is saved
        with the next model call."""
        yield from self._open(report)
        self._unsaved = True
        yield Progress(self.active, report)

    def _open(self, report: StepReport) -> Generator[Command, Any, None]:
        active = self.active
        asked = active.pending_access
        if asked:
            found: Revealed = yield Reveal(
                states=[i for i in asked if ids.is_state_id(i)],
                requests=[i for i in asked if ids.is_request_id(i)],
                observations=[i for i in asked if ids.is_observation_id(i)],
            )
            for rev in found.states:
                active.revealed[rev.state.id] = rev
            active.opened_requests.update(found.requests)
            for obs in found.observations:
                active.opened_observations[obs.id] = obs
            report.opened = [
                *(r.state.id for r in found.states),
                *found.requests,
                *(o.id for o in found.observations),
            ]
            for item in found.missing:
                # Forgotten since it was shown: tell the model; the rest of the batch is open.
                message = (
                    f"access {item}: not found in namespace {active.namespace!r} "
                    "(forgotten since it was shown)"
                )
                report.rejections.append(Rejection(RejectionKind.MISSING, message))
                active.rejections.append(message)
                active.rejected_total += 1
            active.pending_access = []  # only now: a failed fetch is retried on resume

    def _finish(
        self, verdict: StepVerdict, report: StepReport, retry: bool = False
    ) -> Generator[Command, Any, Done]:
        active = self.active
        # Kept on the Active State first: if the commit fails, a resume commits this verdict
        # instead of asking the model for an answer it already gave.
        active.finish = Finish(
            outcome=verdict.outcome,
            answer=verdict.answer,
            summary=verdict.summary,
            error=verdict.error,
        )
        bundle = bundle_of(active, verdict.outcome, verdict.answer, verdict.summary, utcnow())
        if self.redact:
            bundle = redact_bundle(bundle, self.redact)
        # A retry may follow a commit whose acknowledgement was lost: never commit twice.
        landed: Request | None = (yield CheckCommitted(active.request_id)) if retry else None
        if landed is None:
            # Saved with how it ended first: a crash in the commit resumes to this commit,
            # without asking the model again.
            yield self._save()
            bundle = yield from self._commit(bundle)
        dropped = (landed or bundle.request).dropped or []
        report.done = True
        yield Progress(active, report)
        return Done(self._result(verdict, bundle, dropped), bundle)

    def _commit(self, bundle: RequestBundle) -> Generator[Command, Any, RequestBundle]:
        """Commit; when another process forgot (or expired) a past state the request relates
        to or cites meanwhile, drop those references, say so on the request, and commit the
        rest. Each retry has fewer references, so this ends; it never loops over resume()."""
        while True:
            refused: NotFoundError | None = yield Commit(bundle)
            if refused is None:
                return bundle
            gone: set[str] = yield FindMissing(frozenset(past_references(bundle)))
            if not gone:
                raise refused
            bundle = without_dangling(bundle, gone)

    def _save(self) -> SaveDraft:
        active = self.active
        stored = redact_active(active, self.redact) if self.redact else active
        return SaveDraft(active.request_id, stored.model_dump_json())

    def _result(self, verdict: StepVerdict, bundle: RequestBundle, dropped: list[str]) -> RunResult:
        active = self.active
        return RunResult(
            request_id=active.request_id,
            answer=verdict.answer,
            outcome=verdict.outcome,
            steps=active.step,
            usage=active.usage,
            calls=list(active.calls),
            states_added=[s.id for s in bundle.states],
            revealed=list(active.revealed),
            rejections=active.rejected_total,
            error=verdict.error,
            observations=list(active.observations.values()),
            dropped=list(dropped),
        )


def _host_step(step: StepOutput) -> Completion[StepOutput]:
    """A step a host's model wrote, as the rules take it: no text, no usage of ours."""
    return Completion("", step, Usage())


def _verdict(finish: Finish) -> StepVerdict:
    return StepVerdict(True, finish.outcome, finish.answer, finish.summary, finish.error)


def approver_outcome(approve: Callable[[Approval], Any], approval: Approval) -> Any:
    """Call a sync approver the way `Approve` wants its outcome: an exception is returned."""
    try:
        return approve(approval)
    except Exception as e:  # an approver that fails denies; the request goes on
        return e
