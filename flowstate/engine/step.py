"""One step's logic, without I/O of its own: absorb the model's output into the Active State.

Order matters and is fixed: the delta is checked and applied atomically, the access request is
checked (the states it opens are fetched by the driver after the step), then the action runs.
A final answer is held back while the same step's delta is rejected, so nothing the model meant
to record is lost.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from flowstate.engine.index import RenderedIndex
from flowstate.engine.protocol import ReplyFormat
from flowstate.engine.report import Rejection, RejectionKind, StepReport, shortened, told_back
from flowstate.engine.tools import Tool, ToolResult, as_tools
from flowstate.errors import FlowStateError
from flowstate.llm.client import Completion
from flowstate.models import ids
from flowstate.models.active import ActiveState, StepRecord
from flowstate.models.records import ActionDecision, Observation, Outcome, utcnow
from flowstate.models.step import FinalAnswer, StepOutput, ToolCall
from flowstate.models.vocab import RelationType
from flowstate.rules import Limits, Visibility, apply_delta, check_access, check_delta


class AgentConfig(BaseModel):
    """How one agent runs; every field has a safe default."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    max_steps: int = Field(12, ge=1, le=10_000)
    max_malformed: int = Field(3, ge=1, description="unusable outputs in a row before failing")
    index_budget_tokens: int = Field(2_000, ge=50)
    recent_observations: int = Field(3, ge=0)
    # How long the namespace's writer lease lasts unless renewed (it is, while a request runs).
    lease_seconds: int = Field(60, ge=5, le=86_400)
    limits: Limits = Limits()
    # How the model writes its step: keyword lines described in the protocol (no schema sent),
    # or the JSON step object with its schema sent as `response_format`.
    reply_format: ReplyFormat = ReplyFormat.LINES
    # Past states the engine opens before the first call: the best lexical matches of the
    # request among those the index lists (0: the model opens everything it reads itself).
    prefetch_states: int = Field(0, ge=0, le=64)


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
        opened = {s.id for s in listed} | {s.superseded_by for s in listed if s.superseded_by}
        opened |= set(active.found)  # a search's hits were shown to the model
        return Visibility(
            request_id=active.request_id,
            index_states=index.state_ids,
            collapsed_requests=index.collapsed,
            opened_states=frozenset(opened),
            revealed=frozenset(active.revealed),
            relation_ends=frozenset(active.relation_ends()),
            observations=frozenset(active.observations),
            opened_observations=frozenset(active.opened_observations),
        )

    def absorb(
        self, active: ActiveState, completion: Completion[StepOutput], vis: Visibility
    ) -> tuple[StepVerdict, StepReport]:
        """Apply one step's output; the verdict says what comes next, the report what the
        step did (the driver completes it with what the shell's I/O brought)."""
        active.step += 1
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
                f"no final answer within {self.config.max_steps} steps",
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
                    f"the model returned unusable output {active.malformed_in_a_row} times in a "
                    f"row; last problem: {completion.error}",
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
        active.pending_access = decision.states + decision.requests + decision.observations

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
            refusal, cited = self._guard(active, call)
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
            report.decision = self._decision(active, call, asked.cites, None)
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
        report.decision = self._decision(active, call, cited, refusal)
        report.rejections.append(Rejection(RejectionKind.GUARD, refusal))
        active.log.append(
            StepRecord(
                step=active.step,
                cites=call.cites,
                action=f"{_described(call)} REFUSED: {refusal}",
            )
        )

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
            arguments=_canonical(call.arguments),
            output=result.output,
            is_error=result.is_error,
        )
        active.log.append(
            StepRecord(step=active.step, action=_described(call), observation=oid, cites=call.cites)
        )
        return oid

    def interrupted(self, active: ActiveState) -> None:
        """On resume: a call parked when the process died may or may not have run. Say so,
        and never repeat it on our own (it may have booked or paid already)."""
        call, active.pending_call = active.pending_call, None
        if call is None:
            return
        note = (
            f"{_described(call)} was interrupted when the process stopped; whether it ran "
            "is unknown. Check before repeating it"
        )
        active.log.append(
            StepRecord(step=active.step, action=f"INTERRUPTED: {note}", cites=call.cites)
        )
        active.rejections.append(note)

    def _guard(self, active: ActiveState, call: ToolCall) -> tuple[str | None, list[str]]:
        """Why a consequential call may not run (None when it may go to the approver), and
        the states it cites that are in the Active State."""
        known = {s.id for s in active.states.values()} | set(active.revealed)
        cited = [c for c in dict.fromkeys(call.cites) if c in known]
        unknown = [c for c in call.cites if c not in known]
        newer = superseded(active)
        stale = [f"{c} (SUPERSEDED by {', '.join(sorted(newer[c]))})" for c in cited if c in newer]
        if not call.cites:
            return (
                f"{call.name} is consequential: cite the states it relies on in "
                "action.cites (state ids of this request or revealed ones)"
            ), cited
        if unknown:
            return (
                f"{call.name}: cited ids are not in the Active State: {', '.join(unknown)}"
            ), cited
        if stale:
            return (
                f"{call.name}: cited states are stale: {'; '.join(stale)}; cite the current ones"
            ), cited
        if not self.has_approver:
            return f"{call.name} is consequential and no approver is configured: denied", cited
        return None, cited

    def _decision(
        self, active: ActiveState, call: ToolCall, cited: list[str], refusal: str | None
    ) -> ActionDecision:
        """Every consequential call that reached the guard is recorded, approved or not."""
        decision = ActionDecision(
            namespace=active.namespace,
            request_id=active.request_id,
            step=active.step,
            id=ids.decision_id(active.request_id, len(active.decisions) + 1),
            tool=call.name,
            arguments=_canonical(call.arguments),
            cites=cited,
            approved=refusal is None,
            reason=refusal or "approved",
        )
        active.decisions.append(decision)
        return decision


def superseded(active: ActiveState) -> dict[str, set[str]]:
    """Which visible states are stale, and by what: SUPERSEDES edges of revealed states (either
    end, as committed) and those this request added, to past states or to its own."""
    newer: dict[str, set[str]] = {}
    for rev in active.revealed.values():
        for rel in rev.relations:
            if rel.type == RelationType.SUPERSEDES.value:
                pair = (rev.state.id, rel.other)
                old, new = pair if rel.direction == "in" else pair[::-1]
                newer.setdefault(old, set()).add(new)
    for relation in active.relations:
        if relation.type is RelationType.SUPERSEDES:
            newer.setdefault(relation.target, set()).add(relation.source)
    return newer


def _described(call: ToolCall) -> str:
    return f"{call.name}({_canonical(call.arguments)})"


def _canonical(arguments: dict[str, Any]) -> str:
    return json.dumps(arguments, ensure_ascii=False, sort_keys=True, default=str)
