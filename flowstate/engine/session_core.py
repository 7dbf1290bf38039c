"""What the sync and the async session share, without I/O: one host-driven request over the
step driver, each call written once as steps that its shell performs.

A session's steps yield what they need of the shell: a store plan (`repo.run(plan)` or
`await repo.run(plan)`) or an `Approve` (the approver's outcome), and are sent back what came
of it; an error is thrown in at the `yield`, so the steps catch store errors like a plain
function (`flowstate.store.plans.drive` walks them). `Session` and `AsyncSession` add the
request's hold and run the steps.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from pydantic import ValidationError

from flowstate.engine.committed import committed_result, placeholder
from flowstate.engine.driver import (
    Approve,
    CallModel,
    Command,
    Done,
    HostGuard,
    HostObservation,
    Progress,
    RunResult,
    RunTool,
    SaveDraft,
    Start,
    StepDriver,
)
from flowstate.engine.handles import matches, mint, refusal
from flowstate.engine.index import HistoricalIndex
from flowstate.engine.index_view import R
from flowstate.engine.opening import Opened, drop_forgotten, show
from flowstate.engine.report import RejectionKind, StepReport
from flowstate.engine.request_plans import RequestPlans
from flowstate.engine.step import AgentConfig, Approval
from flowstate.engine.tools import Tool, ToolResult, bounded
from flowstate.errors import StoreError, UsageError
from flowstate.models.active import ActiveState
from flowstate.models.records import MAX_REQUEST_TEXT_CHARS
from flowstate.models.step import StepOutput, ToolCall
from flowstate.models.vocab import RelationType
from flowstate.safety.redaction import Redactor
from flowstate.store.codec import describe
from flowstate.store.namespace_node import Stamp
from flowstate.store.plans import Plan

T = TypeVar("T")
# What a session's steps ask of their shell: a store plan to run, or an approval to decide.
Steps = Generator[Plan[Any] | Approve, Any, T]

# A host's request may take many calls; the step limit is a backstop, not a budget.
SESSION_CONFIG = AgentConfig(max_steps=1_000)


@dataclass(frozen=True)
class Recorded:
    """What `record` did: every state id the delta touched, or why nothing was applied."""

    applied: bool
    states: list[str] = field(default_factory=list)
    rejections: list[str] = field(default_factory=list)
    report: StepReport | None = field(default=None, repr=False)  # the step, as data


@dataclass(frozen=True)
class Guarded:
    """The guard's verdict on a consequential call, recorded as a decision in the graph."""

    approved: bool
    reason: str
    decision_id: str | None


def host_approves(_asked: Approval) -> bool:
    return True  # the host asked the guard; the rules (cited, visible, current) are the check


def host_agent(
    repo: R,
    config: AgentConfig | None,
    approve: Callable[[Approval], Any] | None,
    redact: Redactor[Any] | None,
    index: tuple[HistoricalIndex, Stamp] | None = None,
) -> RequestPlans[R]:
    """A session's agent: no model (the host's steps come in as they are), the guard's rules
    always on; `index` is the namespace's index as loaded at a stamp (none: it loads at the
    first step)."""
    agent = RequestPlans(repo, (), config or SESSION_CONFIG, redact=redact)
    agent.approve = approve or host_approves
    if index is not None:
        agent.adopt(*index)
    return agent


def pickup_plan(
    agent: RequestPlans[Any], request_id: str, handle: str | None
) -> Plan[tuple[ActiveState, RunResult | None, str | None]]:
    """The open request `request_id` taken over from its draft, or (committed by a process
    that stopped before it could say so) a stand-in for it with its commit's result; third,
    the writer that held it. With `handle`, only the request that handle holds (WrongHandle
    otherwise, and nothing is taken); without, an operator's take-over. The index is loaded
    first: the picked-up step is checked against it."""
    yield from agent.refresh_plan()
    found = yield from agent.ops.open_request(request_id)
    if found is None:
        result = yield from committed_result(agent.ops, request_id, handle)
        if result is not None:
            return placeholder(agent.ops.namespace, request_id), result, None
    elif handle is not None and not matches(handle, found.handle_hash):
        raise refusal(request_id)
    payload = yield from agent.take_plan(request_id)  # RequestHeld when it is not open
    holder = found.holder if found is not None else None
    active = ActiveState.model_validate_json(payload)
    yield from agent.fetch_matches_plan(active.text)  # the old matches its prompts listed
    return active, None, holder


def claim(active: ActiveState) -> str:
    """A new handle for the client of `active` (only its hash is kept, in the draft)."""
    handle, active.handle_hash = mint()
    return handle


class SessionCore(Generic[R]):
    """One request driven by a host: its driver, waiting for the host's next step."""

    def __init__(self, agent: RequestPlans[R], active: ActiveState) -> None:
        self._agent = agent
        self.active = active
        self._result: RunResult | None = None
        self._saved: str | None = None  # the draft as last saved, so it is not saved again
        # One driver for the request; it waits at `_waiting` for the host's next step.
        self._driver: StepDriver | None = None
        self._waiting: CallModel | None = None
        self._discarded = False
        # A stopped process's commit, finished when its draft was picked up: the host's retry
        # of that commit gets its result instead of an error.
        self._finished_on_pickup = False
        # What its client presents on every call (`flowstate.engine.handles`); None for a
        # committed request picked up by an operator.
        self.handle: str | None = None
        # The writer whose request this session took over without its handle (an operator's
        # `resume`), or None.
        self.taken_over_from: str | None = None
        self.used_at = time.monotonic()  # the start or end of its last call

    def touch(self) -> None:
        """Count now as this session's last use (a front door's `expire` spares it)."""
        self.used_at = time.monotonic()

    @property
    def request_id(self) -> str:
        return self.active.request_id

    @property
    def held(self) -> bool:
        """Open and held by this session: not committed, discarded or let go."""
        return not self.closed and self._holding()

    def _holding(self) -> bool:
        raise NotImplementedError

    @property
    def closed(self) -> bool:
        """Committed or discarded: every further step is refused."""
        return self._result is not None or self._discarded

    def opened(self, ids: Sequence[str], report: StepReport | None = None) -> Opened:
        """What of `ids` is open in this request (revealed states, listed requests, opened
        observations), with the rejections of `report`."""
        return Opened.of(self.active, ids, report.messages if report else [], report)

    def forgotten(self, gone: Callable[[str], bool]) -> None:
        """Drop what another call just forgot from this request's view (its next save drops
        it from the draft too): revealed copies, listed lines, search hits, pending access."""
        drop_forgotten(self.active, gone)

    # -- each host call, as steps ---------------------------------------------------------------

    def _adopt(self, handle: str | None, holder: str | None, result: RunResult | None) -> None:
        """A picked-up request's handle: the client's own, or (an operator's take-over of an
        open request) a new one, the old one no longer opening it."""
        if handle is not None:
            self.handle = handle
        elif result is None:
            self.handle = claim(self.active)  # saved with the draft at the pick-up's first save
            self.taken_over_from = holder or "an unknown writer"

    def _picked_up(self, result: RunResult | None) -> None:
        """Mark a session picked up from a draft (or a commit) that was already finished."""
        if result is not None:
            self._result = result
        self._finished_on_pickup = self._result is not None

    def _index(self) -> Steps[str]:
        yield from self._refresh()
        return self._agent.index.render(self.active.text).text

    def _record(self, delta: Sequence[dict[str, Any]]) -> Steps[Recorded]:
        report = yield from self._step(_step_of({"delta": list(delta)}))
        return Recorded(
            applied=report.delta_applied is not False,
            states=list(report.touched),
            rejections=report.messages,
            report=report,
        )

    def _reveal(self, ids: Sequence[str]) -> Steps[Opened]:
        report = yield from self._step(_step_of({"access": list(ids)}))
        return self.opened(ids, report)

    def _shown(self, state_ids: Sequence[str]) -> Steps[None]:
        self._closed()
        show(self.active, state_ids)
        yield from self._save()  # at once: a pick-up after a crash keeps them

    def _save(self) -> Steps[None]:
        """Save the draft now, unless it is saved as it is."""
        if self._driver is not None:
            save = self._driver.draft()
            if save.payload != self._saved:
                yield from self._perform(save)

    def _observe(
        self, tool: str, arguments: dict[str, Any], output: str, is_error: bool
    ) -> Steps[str]:
        result = ToolResult(bounded(str(output)), is_error)
        report = yield from self._step(HostObservation(_call_of(tool, arguments, []), result))
        if report.observation is None:
            raise UsageError("; ".join(report.messages) or "the observation was refused")
        return report.observation

    def _guard(self, tool: str, arguments: dict[str, Any], cites: Sequence[str]) -> Steps[Guarded]:
        report = yield from self._step(HostGuard(_call_of(tool, arguments, list(cites))))
        decision = report.decision
        if decision is None:
            return Guarded(False, "; ".join(report.messages) or "refused", None)
        return Guarded(decision.approved, decision.reason, decision.id)

    def _commit(self, answer: str, summary: str) -> Steps[RunResult]:
        if self._finished_on_pickup and self._result is not None:
            return self._result  # a stopped process's commit, finished when it was picked up
        if len(answer) > MAX_REQUEST_TEXT_CHARS:
            raise UsageError(
                f"the answer has {len(answer)} characters; at most {MAX_REQUEST_TEXT_CHARS}"
            )
        final = {"type": "final", "answer": answer, "summary": summary}
        report = yield from self._step(_step_of({"action": final}), ending=True)
        if self._result is None:
            held = report.of_kind(RejectionKind.ANSWER_HELD) or report.messages
            raise UsageError("; ".join(held) or "the commit was refused")
        return self._result

    def _discard(self) -> Steps[str]:
        self._closed()
        gone: str = yield self._agent.discard_plan(self.request_id)
        self._discarded = True
        self._driver = self._waiting = None
        return gone

    def _pick_up(self) -> Steps[StepReport]:
        """The driver of a request picked up from its draft; a take-over's new handle is
        saved with the draft at once, so the old one no longer opens it."""
        report = yield from self._open(Start.DRAFT)
        if self.taken_over_from is not None:
            yield from self._save()
        return report

    def _open(self, start: Start) -> Steps[StepReport]:
        """A driver over the Active State, run up to its first request for a step."""
        self._driver = self._agent.driver(self.active, start)
        return (yield from self._advance(self._driver.start()))

    # -- the step machine ---------------------------------------------------------------------

    def _step(self, given: HostInput, *, ending: bool = False) -> Steps[StepReport]:
        """One host step fed to the session's driver, run until the driver asks for the next
        step (or the request is done); its report. When the database fails, a step that does
        not end the request is undone: an error means nothing of the call was applied, and
        the host sends it again. The end is kept for the retry."""
        self._closed()
        if self.active.finish is not None and not ending:
            raise UsageError(
                f"request {self.request_id} has ended; its commit was cut by a database "
                "failure: commit again (it commits the answer already given, never twice)"
            )
        before = None if ending else self.active.model_copy(deep=True)
        try:
            if self._waiting is None:  # the last driver stopped at a database failure
                report = yield from self._open(Start.INFLIGHT)
                if self._result is not None:  # it finished the end kept from before
                    return report
            yield from self._refresh()
            report = yield from self._advance(self._send(given))
        except StoreError:
            self._driver = self._waiting = None
            if before is not None:
                self.active = before
            raise
        return report

    def _refresh(self) -> Steps[None]:
        """The index as it is now (others may have committed since the last call)."""
        agent = self._agent
        yield agent.refresh_plan()
        if self._driver is not None:
            self._driver.update_index(agent.index.render(self.active.text))

    def _send(self, given: HostInput) -> Command:
        assert self._driver is not None and self._waiting is not None
        self._waiting = None
        return self._driver.send(given)

    def _advance(self, command: Command) -> Steps[StepReport]:
        """Perform the driver's commands until it asks for the next step; the report of the
        step that ended on the way (an empty one when none did). A finished request is
        closed: its shell lets its hold go."""
        assert self._driver is not None
        report = StepReport(self.active.step)
        while not isinstance(command, Done):
            if isinstance(command, CallModel):
                save = command.save  # no model call to overlap: saved at once
                if save is not None and save.payload != self._saved:  # not as it already is
                    yield from self._perform(save)
                self._waiting = command
                return report
            if isinstance(command, Progress):
                report = command.report
            command = self._driver.send((yield from self._perform(command)))
        relations = command.bundle.relations
        if any(r.type is RelationType.SUPERSEDES for r in relations):
            # Marks what it superseded in the cached index; any other commit is picked up by
            # the next refresh (a request start), so no read is spent on it here.
            yield self._agent.refresh_plan(relations)
        self._result = command.result
        self._driver = None
        return report

    def _perform(self, command: Command) -> Steps[Any]:
        if isinstance(command, Approve):
            return (yield command)
        if isinstance(command, RunTool):  # a host runs its own tools: none is parked here
            return ToolResult("the host runs its own tools; this call was not made", True)
        if isinstance(command, Progress):
            return None
        outcome = yield self._agent.store_plan(command)
        if isinstance(command, SaveDraft):
            self._saved = command.payload
        return outcome

    def _closed(self) -> None:
        if self._result is not None:
            raise UsageError(f"request {self.request_id} is already committed")
        if self._discarded:
            raise UsageError(f"request {self.request_id} was discarded; begin a new one")


# What a host feeds its request's driver at a step.
HostInput = StepOutput | HostObservation | HostGuard


def _step_of(raw: dict[str, Any]) -> StepOutput:
    try:
        return StepOutput.model_validate(raw)
    except ValidationError as e:
        raise UsageError(f"invalid step: {describe(e)}") from e


def _call_of(tool: str, arguments: dict[str, Any], cites: list[str]) -> ToolCall:
    """A host's tool call as the rules read it; its name is checked as a tool's is."""
    try:
        Tool.external(tool)
        return ToolCall(type="tool", name=tool, arguments=arguments, cites=cites)
    except (UsageError, ValidationError) as e:
        raise UsageError(f"tool {tool[:64]!r}: {e}") from e
