"""One step's logic, without I/O of its own: absorb the model's output into the Active State.

Order matters and is fixed: the delta is checked and applied atomically, the access request is
checked (the states it opens are fetched by the driver after the step), then the action runs.
A final answer is held back while the same step's delta is rejected, so nothing the model meant
to record is lost.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import ConfigDict, Field

from flowstate.engine.guard import (
    canonical,
    committed_supersessions,
    decision_of,
    described,
    guard_refusal,
    own_supersessions,
)
from flowstate.engine.index import DEFAULT_BUDGET_TOKENS, RenderedIndex
from flowstate.engine.prompt import IndexResend
from flowstate.engine.protocol import ReplyFormat
from flowstate.engine.report import Rejection, RejectionKind, StepReport, shortened, told_back
from flowstate.engine.tools import Tool, ToolResult, as_tools
from flowstate.errors import FlowStateError
from flowstate.llm.client import Completion
from flowstate.models import ids
from flowstate.models.active import ActiveState, StepRecord
from flowstate.models.config import CheckedConfig
from flowstate.models.records import Observation, Outcome, utcnow
from flowstate.models.step import FinalAnswer, StepOutput, ToolCall
from flowstate.models.wording import counted
from flowstate.rules import Limits, Visibility, apply_delta, check_access, check_delta


class AgentConfig(CheckedConfig):
    """How one agent runs; every field has a safe default. A value out of its bounds is a
    UsageError naming the field and the bounds."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    max_steps: int = Field(12, ge=1, le=10_000)
    max_malformed: int = Field(3, ge=1, description="unusable outputs in a row before failing")
    index_budget_tokens: int = Field(DEFAULT_BUDGET_TOKENS, ge=50)
    recent_observations: int = Field(3, ge=0)
    # How long a writer's hold on the request it runs lasts unless renewed (it is, while the
    # request runs); once lapsed, another writer may resume or discard the request.
    hold_seconds: int = Field(60, ge=5, le=86_400)
    limits: Limits = Limits()
    # How the model writes its step: keyword lines described in the protocol (no schema sent),
    # or the JSON step object with its schema sent as `response_format`.
    reply_format: ReplyFormat = ReplyFormat.LINES
    # Past states the engine opens before the first call, so that a request needing them
    # needs no call to ask: the best lexical matches of the request among those the index
    # lists, at most `prefetch_states` of them, best first while their text fits
    # `prefetch_tokens` (either 0: the model opens everything it reads itself).
    prefetch_states: int = Field(4, ge=0, le=64)
    prefetch_tokens: int = Field(400, ge=0, le=100_000)
    # Whether a request's later calls show the whole index again (`IndexResend`).
    index_on_later_calls: IndexResend = IndexResend.FIRST_CALL


@dataclass(frozen=True)
class Approval:
    """What an approval callback is asked about before a consequential tool runs."""

    request_id: str
    tool: str
    arguments: dict[str, Any]
    cites: list[str]


@dataclass(frozen=True)
class StepVerdict:
    done: bool
    outcome: Outcome = Outcome.ANSWERED
    answer: str = ""
    summary: str = ""
    error: str | None = None
    # A consequential call that passed the rules, parked until the approver answers.
    approval: Approval | None = None


class StepLogic:
    """The rules of one step, applied to the Active State; no I/O, no callbacks into user code
    (tools and approvers run in the shell, see `flowstate.engine.driver`)."""

    def __init__(
        self,
        tools: Sequence[Tool | Callable[..., Any]],
        config: AgentConfig,
        *,
        has_approver: bool = False,
    ) -> None:
        self.tools = as_tools(list(tools))
        self.config = config
        self.has_approver = has_approver

    def visibility(self, active: ActiveState, index: RenderedIndex) -> Visibility:
        listed = [s for states in active.opened_requests.values() for s in states]
        opened = {s.id for s in listed}
        opened |= {s.superseded_by for s in listed if s.superseded_by and not s.superseder_removed}
        opened |= set(active.found)  # a search's hits were shown to the model
        return Visibility(
            request_id=active.request_id,
            index_states=index.state_ids,
            collapsed_requests=index.collapsed,
            listed_requests=frozenset(ids.request_of(s) for s in index.state_ids),
            opened_states=frozenset(opened),
            revealed=frozenset(active.revealed),
            relation_ends=frozenset(active.relation_ends()),
            observations=frozenset(active.observations),
            opened_observations=frozenset(active.opened_observations),
            # A past state this request superseded already cannot be superseded again.
            superseded=committed_supersessions(active, index) | own_supersessions(active),
            folded_seqs=index.folded_seqs,
        )

    def absorb(
        self,
        active: ActiveState,
        completion: Completion[StepOutput],
        vis: Visibility,
        *,
        model_call: bool = True,
    ) -> tuple[StepVerdict, StepReport]:
        """Apply one step's output; the verdict says what comes next, the report what the
        step did (the driver completes it with what the shell's I/O brought). A host's step
        (`model_call` False) is no call of ours: `active.calls` stays one per model call."""
        active.step += 1
        if model_call:
            active.calls.append(completion.usage)
        report = StepReport(active.step)
        try:
            verdict = self._absorb(active, completion, vis, report)
        finally:
            active.rejections = told_back(report.rejections)
            active.rejected_total += len(report.rejections)
        return self._limited(active, verdict), report

    def _limited(self, active: ActiveState, verdict: StepVerdict) -> StepVerdict:
        if not verdict.done and active.step >= self.config.max_steps:
            return StepVerdict(
                True,
                Outcome.STEP_LIMIT,
                "",
                "",
                f"no final answer within {counted(self.config.max_steps, 'step')}",
            )
        return verdict

    def _absorb(
        self,
        active: ActiveState,
        completion: Completion[StepOutput],
        vis: Visibility,
        report: StepReport,
    ) -> StepVerdict:
        told = report.rejections
        out = completion.value
        if out is None:
            active.malformed_in_a_row += 1
            told.append(
                Rejection(
                    RejectionKind.MALFORMED,
                    f"your output could not be used ({completion.error}); reply in the format "
                    "the protocol gives",
                )
            )
            if active.malformed_in_a_row >= self.config.max_malformed:
                return StepVerdict(
                    True,
                    Outcome.FAILED,
                    "",
                    "",
                    "the model returned unusable output "
                    f"{counted(active.malformed_in_a_row, 'time')} in a row; last problem: "
                    f"{completion.error}",
                )
            return StepVerdict(False)
        active.malformed_in_a_row = 0
        delta_ok = self._delta(active, out, vis, report)
        self._access(active, out, vis, told)
        action = out.action
        if isinstance(action, ToolCall):
            return StepVerdict(False, approval=self._accept_call(active, action, report))
        elif isinstance(action, FinalAnswer):
            if delta_ok:
                return StepVerdict(True, Outcome.ANSWERED, action.answer, action.summary)
            told.append(
                Rejection(
                    RejectionKind.ANSWER_HELD,
                    "final answer held back because the delta of the same step was "
                    "rejected; fix the delta and answer again",
                )
            )
        else:
            active.log.append(StepRecord(step=active.step, action="no action (deferred)"))
        return StepVerdict(False)

    def _delta(
        self, active: ActiveState, out: StepOutput, vis: Visibility, report: StepReport
    ) -> bool:
        if not out.delta:
            return True
        violations = check_delta(out.delta, vis, self.config.limits, active.states)
        report.delta_applied = not violations
        if violations:
            report.rejections.extend(
                Rejection(RejectionKind.DELTA, f"delta rejected, nothing applied: {v}")
                for v in violations
            )
            return False
        before = {s.id: s for s in active.states.values()}
        applied = apply_delta(
            out.delta,
            vis,
            active.namespace,
            active.states,
            active.relations,
            active.evidence,
            utcnow(),
        )
        active.states, active.relations, active.evidence = (
            applied.states,
            applied.relations,
            applied.evidence,
        )
        after = {s.id: s for s in active.states.values()}
        report.touched = sorted(
            (before.keys() ^ after.keys())
            | {i for i in before.keys() & after.keys() if before[i] != after[i]}
        )
        return True

    def _access(
        self, active: ActiveState, out: StepOutput, vis: Visibility, told: list[Rejection]
    ) -> None:
        if not out.access:
            return
        decision = check_access(out.access, vis, self.config.limits)
        told.extend(Rejection(RejectionKind.ACCESS, str(v)) for v in decision.violations)
        # What is open already is read again when asked for: another process may have
        # forgotten or superseded it since.
        active.pending_access = [
            *decision.states,
            *decision.requests,
            *decision.observations,
            *decision.already_open,
        ]

    def _accept_call(
        self, active: ActiveState, call: ToolCall, report: StepReport
    ) -> Approval | None:
        """Check a tool call; when it may run, park it in `pending_call`. A consequential one
        that passes the rules is parked too and returned, to be put to the approver."""
        tool = self.tools.get(call.name)
        if tool is None:
            known = ", ".join(self.tools) or "none"
            report.rejections.append(
                Rejection(RejectionKind.TOOL, f"unknown tool {call.name!r}; tools: {known}")
            )
            return None
        if tool.consequential:
            refusal, cited = guard_refusal(active, call, self.has_approver)
            # Nobody is asked to approve a call that could not run as given.
            refusal = refusal or tool.invalid(dict(call.arguments))
            if refusal is not None:
                self._refuse(active, call, cited, refusal, report)
                return None
            active.pending_call = call
            return Approval(active.request_id, call.name, dict(call.arguments), cited)
        active.pending_call = call
        return None

    def decide(
        self, active: ActiveState, asked: Approval, answer: object, report: StepReport
    ) -> None:
        """Apply the approver's answer to the parked call: only exactly True approves; an
        exception it raised, False or anything else denies (the request goes on). Either
        way the decision is recorded."""
        call = active.pending_call
        if call is None:
            raise FlowStateError("no parked call awaits an approval")
        if answer is True:
            report.decision = decision_of(active, call, asked.cites, None)
            return
        if isinstance(answer, BaseException):
            refusal = (
                f"{asked.tool}: the approver failed ({type(answer).__name__}: {answer}); denied"
            )
        elif answer is False:
            refusal = f"{asked.tool} was denied by the approver"
        else:
            refusal = (
                f"{asked.tool}: the approver returned {type(answer).__name__}, not True; denied"
            )
        active.pending_call = None
        told = len(report.rejections)
        self._refuse(active, call, asked.cites, refusal, report)
        active.rejections.extend(told_back(report.rejections[told:]))
        active.rejected_total += len(report.rejections) - told

    def _refuse(
        self,
        active: ActiveState,
        call: ToolCall,
        cited: list[str],
        refusal: str,
        report: StepReport,
    ) -> None:
        refusal = shortened(refusal)
        report.decision = decision_of(active, call, cited, refusal)
        report.rejections.append(Rejection(RejectionKind.GUARD, refusal))
        active.log.append(
            StepRecord(
                step=active.step,
                cites=call.cites,
                action=f"{described(call)} REFUSED: {refusal}",
            )
        )

    def host_observation(
        self, active: ActiveState, call: ToolCall, result: ToolResult
    ) -> StepReport:
        """A tool result a host got, kept as an observation: a step of its own, without a
        model call."""
        report = self._host_step(active)
        report.observation = self.record(active, call, result)
        return report

    def host_guard(self, active: ActiveState, call: ToolCall) -> tuple[StepReport, Approval | None]:
        """A consequential call a host is about to make, under the guard's rules: refused
        (recorded with why) or parked and returned, to be put to the approver. Either way the
        host runs it, not the driver."""
        report = self._host_step(active)
        refusal, cited = guard_refusal(active, call, self.has_approver)
        if refusal is not None:
            self._refuse(active, call, cited, refusal, report)
            approval = None
        else:
            active.pending_call = call
            approval = Approval(active.request_id, call.name, dict(call.arguments), cited)
        active.rejections = told_back(report.rejections)
        active.rejected_total += len(report.rejections)
        return report, approval

    def host_decided(self, active: ActiveState, report: StepReport) -> None:
        """After the approver: the parked call is the host's to run; the log says so."""
        call, active.pending_call = active.pending_call, None
        if call is not None and report.decision is not None and report.decision.approved:
            active.log.append(
                StepRecord(
                    step=active.step,
                    cites=call.cites,
                    action=f"{described(call)} approved by the guard; the host runs it",
                )
            )

    def _host_step(self, active: ActiveState) -> StepReport:
        active.step += 1
        active.rejections = []
        return StepReport(active.step)

    def record(self, active: ActiveState, call: ToolCall, result: ToolResult) -> str:
        """Keep a tool's result as an observation (its id); the parked call has run."""
        active.pending_call = None
        oid = ids.observation_id(active.request_id, len(active.observations) + 1)
        active.observations[oid] = Observation(
            namespace=active.namespace,
            id=oid,
            request_id=active.request_id,
            step=active.step,
            tool=call.name,
            arguments=canonical(call.arguments),
            output=result.output,
            is_error=result.is_error,
        )
        active.log.append(
            StepRecord(step=active.step, action=described(call), observation=oid, cites=call.cites)
        )
        return oid

    def interrupted(self, active: ActiveState) -> None:
        """On resume: a call parked when the process died may or may not have run. Say so,
        and never repeat it on our own (it may have booked or paid already)."""
        call, active.pending_call = active.pending_call, None
        if call is None:
            return
        note = (
            f"{described(call)} was interrupted when the process stopped; whether it ran "
            "is unknown. Check before repeating it"
        )
        active.log.append(
            StepRecord(step=active.step, action=f"INTERRUPTED: {note}", cites=call.cites)
        )
        active.rejections.append(note)

    def stale_cites(
        self, active: ActiveState, asked: Approval, stale: dict[str, str], report: StepReport
    ) -> None:
        """Refuse the parked consequential call: states it cites went stale meanwhile
        (another process superseded or forgot them after they were opened)."""
        call = active.pending_call
        if call is None:
            raise FlowStateError("no parked call awaits the guard")
        active.pending_call = None
        why = "; ".join(f"{cited} {reason}" for cited, reason in sorted(stale.items()))
        refusal = (
            f"{asked.tool}: cited states changed since they were opened: {why} (committed "
            "by another process); open the current states and cite them"
        )
        told = len(report.rejections)
        self._refuse(active, call, asked.cites, refusal, report)
        active.rejections.extend(told_back(report.rejections[told:]))
        active.rejected_total += len(report.rejections) - told
