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

One step: `CallModel` -> (`CheckCited`, `Approve`) -> (`SaveDraft`, `RunTool`) -> (`Reveal`)
-> `Progress`, and the next `CallModel` carries the step's draft. The end: `SaveDraft` (with
how the request ended) -> `Commit` (-> `FindMissing` -> `Commit` when another process forgot
a past state it cites) -> `Progress` -> `Done`; a commit refused because another request
superseded first a state this one supersedes goes back to the model instead, which hears why
at its next step. Between steps the shell may hand the driver a fresher index
(`update_index`, other requests committed meanwhile): the next prompt shows it, and says which
opened states it marks stale. The draft is saved before every tool call (write-ahead), so a
crash mid-call is known, and with the finish before the commit, so a crash in the commit needs
no model call again. Between steps it is saved while the model is called (write-behind): only
the reveal stays on the critical path.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from functools import partial
from typing import Any

from flowstate.engine.commands import (
    Approve,
    CallModel,
    CheckCited,
    CheckCommitted,
    Command,
    Commit,
    Done,
    FindMissing,
    HostGuard,
    HostObservation,
    Progress,
    Reveal,
    Revealed,
    RunResult,
    RunTool,
    SaveDraft,
    Start,
)
from flowstate.engine.commit import (
    bundle_of,
    past_references,
    without_conflicts,
    without_dangling,
)
from flowstate.engine.index import RenderedIndex
from flowstate.engine.opening import drop_forgotten, reveal_of, show, take_in, within_budget
from flowstate.engine.prompt import IndexResend, Prompt, build_prompt
from flowstate.engine.protocol import ReplyFormat
from flowstate.engine.report import Rejection, RejectionKind, StepReport
from flowstate.engine.step import Approval, StepLogic, StepVerdict
from flowstate.engine.tools import ToolResult
from flowstate.errors import ConflictError, FlowStateError, NotFoundError
from flowstate.llm.client import Completion, TextFormat
from flowstate.llm.step_lines import STEP_LINES
from flowstate.models import ids
from flowstate.models.active import ActiveState, Finish
from flowstate.models.records import Request, RequestBundle, Usage, utcnow
from flowstate.models.step import StepOutput
from flowstate.safety.redaction import Redactor, redact_active, redact_bundle

__all__ = [
    "Approve",
    "CallModel",
    "CheckCited",
    "CheckCommitted",
    "Command",
    "Commit",
    "Done",
    "FindMissing",
    "HostGuard",
    "HostObservation",
    "Progress",
    "Reveal",
    "Revealed",
    "RunResult",
    "RunTool",
    "SaveDraft",
    "Start",
    "StepDriver",
    "approver_outcome",
]


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
        self._fresher: RenderedIndex | None = None  # an index for the next prompt
        self._steps = self._run(start)
        self._started = False
        self._done: Done | None = None
        self._failed: str | None = None
        self._asked: Approval | None = None  # a host guard's question to the approver
        self._index_sent = False  # a model call of this driver has shown the whole index

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

    def update_index(self, index: RenderedIndex) -> None:
        """The index as it is now (others committed since): the next prompt shows it. The
        step under way keeps the index its prompt showed, which its rules check against."""
        self._fresher = index

    def _advance(self, outcome: Any) -> Command:
        if self._failed is not None:
            raise FlowStateError(
                f"this request's driver failed earlier ({self._failed}): resume the request "
                "from its draft"
            )
        if self._done is not None:
            raise FlowStateError(f"request {self.active.request_id} is done: nothing follows")
        try:
            return self._steps.send(outcome)
        except StopIteration as end:  # the generator returns its Done
            self._done = end.value
            return self._done
        except BaseException as e:
            # A machine that failed says so at its next use (a generator that raised would
            # answer a later send with an empty StopIteration, read as a None result).
            self._failed = f"{type(e).__name__}: {e}"[:300]
            raise

    # -- the loop, written as one generator: each `yield` is a command and its outcome ------

    def _run(self, start: Start) -> Generator[Command, Any, Done]:
        active = self.active
        if start is Start.NEW:
            yield self._save(first=True)
            if active.pending_access:  # prefetched: visible from the first call
                ranked = list(active.pending_access)
                yield from self._open(StepReport(0))
                within_budget(active, ranked, self.logic.config.prefetch_tokens)
                self._unsaved = True  # saved with the first call, revealed states and all
        elif start is Start.DRAFT:
            self.logic.interrupted(active)  # a parked call may have run: say so, never repeat
        if active.finish is not None:  # ended before; only its commit failed
            ended = StepReport(active.step)
            done = yield from self._finish(_verdict(active.finish), ended, retry=True)
            if done is not None:
                return done
        if active.pending_call is not None or active.pending_access:
            # A step the database cut short: its parked call never ran (the save before it
            # failed) and what it asked to open was not fetched. Finish it before going on.
            report = StepReport(active.step)
            yield from self._act(report)
            yield from self._after_step(report)
        while True:
            shown = self.index  # the index this step's prompt shows and its rules check
            save, self._unsaved = (self._save() if self._unsaved else None), False
            resend = self.logic.config.index_on_later_calls is IndexResend.EVERY_CALL
            whole = resend or not self._index_sent
            answer = yield CallModel(partial(self._prompt, shown, whole), save, self._reply)
            self._index_sent = True
            if isinstance(answer, HostObservation | HostGuard):
                notices = self._take_fresher()
                report = self._host_input(answer)
                self._tell(notices, report)
                if isinstance(answer, HostGuard) and self._asked is not None:
                    yield from self._approve(self._asked, report)
                    self.logic.host_decided(active, report)
                yield from self._after_step(report)
                continue
            host = isinstance(answer, StepOutput)
            # A host's step comes with no prompt of ours: its model saw the index as it is now.
            notices = self._take_fresher() if host else []
            shown = self.index if host else shown
            completion = _host_step(answer) if isinstance(answer, StepOutput) else answer
            vis = self.logic.visibility(active, shown)
            verdict, report = self.logic.absorb(active, completion, vis, model_call=not host)
            self._tell([*notices, *([] if host else self._take_fresher())], report)
            if verdict.done:
                done = yield from self._finish(verdict, report)
                if done is not None:
                    return done
                yield Progress(active, report)  # the commit was refused: the step ends here
                continue
            if verdict.approval is not None:
                yield from self._approve(verdict.approval, report)
            yield from self._act(report)
            yield from self._after_step(report)

    def _host_input(self, answer: HostObservation | HostGuard) -> StepReport:
        """A host's observation or guard, as its step; a guard's approval waits in `_asked`."""
        self._asked = None
        if isinstance(answer, HostObservation):
            return self.logic.host_observation(self.active, answer.call, answer.result)
        report, self._asked = self.logic.host_guard(self.active, answer.call)
        return report

    @property
    def _reply(self) -> type[StepOutput] | TextFormat[StepOutput]:
        return STEP_LINES if self.logic.config.reply_format is ReplyFormat.LINES else StepOutput

    def _prompt(self, index: RenderedIndex, index_shown: bool = True) -> Prompt:
        config = self.logic.config
        return build_prompt(
            self.active,
            index,
            self.logic.tools.values(),
            config.limits,
            config.max_steps,
            config.recent_observations,
            config.reply_format,
            index_shown,
            config.index_on_later_calls is IndexResend.FIRST_CALL,
        )

    def _take_fresher(self) -> list[str]:
        """Switch to the index the shell brought, for the next prompt; what it says of states
        this request opened or relates to that others superseded meanwhile."""
        fresher, self._fresher = self._fresher, None
        if fresher is None:
            return []
        before = self.index.superseded
        self.index = fresher
        active = self.active
        mine = {r.target for r in active.relations} | set(active.revealed)
        stale = [
            (old, new)
            for old, new in fresher.superseded.items()
            if old in mine and before.get(old) != new and ids.request_of(new) != active.request_id
        ]
        show(active, [new for _, new in stale])  # told to open it: so it may, even when folded
        return [
            f"{old}, which this request opened or relates to, was superseded by {new} "
            "(committed by another request meanwhile): open it before relying on it"
            for old, new in stale
        ]

    def _tell(self, notices: list[str], report: StepReport) -> None:
        for message in notices:
            report.rejections.append(Rejection(RejectionKind.STALE, message))
            self.active.rejections.append(message)

    def _approve(self, asked: Approval, report: StepReport) -> Generator[Command, Any, None]:
        """The guard's last check, on what is committed now (others may have superseded or
        forgotten a cited state since it was opened), then the approver."""
        cites = list(asked.cites)
        stale: dict[str, str] = (yield CheckCited(asked.request_id, cites)) if cites else {}
        if stale:
            self.logic.stale_cites(self.active, asked, stale, report)
            return
        approved = yield Approve(asked)
        self.logic.decide(self.active, asked, approved, report)

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
            found: Revealed = yield reveal_of(asked)
            for message in take_in(active, found, report):
                active.rejections.append(message)
                active.rejected_total += 1
            if found.missing:  # no copy of what is gone (a rare case: it costs a full dump)
                drop_forgotten(active, set(found.missing).__contains__)
            active.pending_access = []  # only now: a failed fetch is retried on resume

    def _finish(
        self, verdict: StepVerdict, report: StepReport, retry: bool = False
    ) -> Generator[Command, Any, Done | None]:
        """Commit the request as it ended; None when the commit was refused for a conflict
        with another request's commit (the model is told, and the request goes on)."""
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
            committed = yield from self._commit(bundle)
            if isinstance(committed, ConflictError):
                self._reopen(committed, report)
                return None
            bundle = committed
        dropped = (landed or bundle.request).dropped or []
        report.done = True
        yield Progress(active, report)
        return Done(self._result(verdict, bundle, dropped), bundle)

    def _reopen(self, conflict: ConflictError, report: StepReport) -> None:
        """A commit refused for a conflict: the request goes on, and the model hears why."""
        active = self.active
        active.finish = None
        # Told to supersede the newer state instead: it may, even when the index folds it.
        show(active, [new for _, new in conflict.conflicts])
        message = f"final answer held back: {conflict}"
        report.rejections.append(Rejection(RejectionKind.CONFLICT, message))
        active.rejections = [*active.rejections, message]
        active.rejected_total += 1
        self._unsaved = True

    def _commit(
        self, bundle: RequestBundle
    ) -> Generator[Command, Any, RequestBundle | ConflictError]:
        """Commit; when another process forgot (or expired) a past state the request relates
        to or cites meanwhile, drop those references, say so on the request, and commit the
        rest. Each retry has fewer references, so this ends; it never loops over resume().
        A conflict with another request's commit is handed back."""
        while True:
            refused: NotFoundError | ConflictError | None = yield Commit(bundle)
            if refused is None:
                return bundle
            if isinstance(refused, ConflictError):
                if self.active.step < self.logic.config.max_steps:
                    return refused  # the model revises its delta at its next step
                bundle = without_conflicts(bundle, refused.conflicts)  # no step left
                continue
            gone: set[str] = yield FindMissing(frozenset(past_references(bundle)))
            if not gone:
                raise refused
            bundle = without_dangling(bundle, gone)

    def draft(self) -> SaveDraft:
        """The save of the Active State as it is now, for a change made between steps (a
        host's search hits), so that a pick-up after a crash keeps it."""
        return self._save()

    def _save(self, first: bool = False) -> SaveDraft:
        active = self.active
        stored = redact_active(active, self.redact) if self.redact else active
        return SaveDraft(active.request_id, stored.model_dump_json(), first)

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
