"""Memory for someone else's loop: the host's model emits deltas and accesses, FlowState checks
and stores them, and spends no model call of its own.

A session is one request. Each call is one step fed to the same step driver the agents run
(`flowstate.engine.driver`), so the ISU and PSA rules, atomic deltas, the write-ahead draft
and the commit are exactly the agent loop's:

    session = fs.begin("Book the hotel we talked about")
    print(session.index())                       # what the host's model should see first
    session.reveal(["r2.budget"])                # PSA: shown ids only, at most K per call
    session.record([{"op": "add", "key": "hotel", "category": "decision", ...}])
    oid = session.observe("search_hotels", {"city": "Lisbon"}, "[...]")
    session.commit("Booked Casa Azul", "Hotel booked in Lisbon")
"""

from __future__ import annotations

import contextlib
import threading
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from flowstate.engine.agent import Agent
from flowstate.engine.committed import committed, committed_result, placeholder
from flowstate.engine.driver import (
    Approve,
    CallModel,
    Command,
    Done,
    Progress,
    RunResult,
    RunTool,
    SaveDraft,
    Start,
    StepDriver,
    approver_outcome,
)
from flowstate.engine.hold import RequestHold
from flowstate.engine.index import HistoricalIndex
from flowstate.engine.opening import Opened, drop_forgotten, show
from flowstate.engine.report import RejectionKind, StepReport
from flowstate.engine.step import AgentConfig, Approval
from flowstate.engine.tools import Tool, ToolResult, bounded
from flowstate.errors import StoreError, UsageError
from flowstate.models.active import ActiveState
from flowstate.models.records import MAX_REQUEST_TEXT_CHARS
from flowstate.models.step import StepOutput
from flowstate.models.vocab import RelationType
from flowstate.safety.redaction import Redactor
from flowstate.store.codec import describe
from flowstate.store.namespace_node import Stamp
from flowstate.store.repository import Repository


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


# A host's request may take many calls; the step limit is a backstop, not a budget.
SESSION_CONFIG = AgentConfig(max_steps=1_000)


def _let_go(hold: RequestHold) -> None:
    """Release a dropped session's hold off the collector's thread (a database call there
    could stall whatever code the collection interrupted)."""
    with contextlib.suppress(RuntimeError):  # interpreter shutdown: the hold lapses instead
        threading.Thread(target=hold.__exit__, args=(None, None, None), daemon=True).start()


def _host_approves(_asked: Approval) -> bool:
    return True  # the host asked the guard; the rules (cited, visible, current) are the check


class Session:
    """One request driven by a host. Build it with `FlowState.begin`."""

    def __init__(
        self,
        agent: Agent,
        active: ActiveState,
        approve: Callable[[Approval], Any] | None,
    ) -> None:
        self._agent = agent
        self.active = active
        self._approve = approve
        self._hold: RequestHold | None = agent.hold(active.request_id).__enter__()
        # Dropped without commit, discard or leaving its block: when it is collected its hold
        # is let go, so another writer may pick the request up at once.
        self._abandon = weakref.finalize(self, _let_go, self._hold)
        self._result: RunResult | None = None
        self._host_output: ToolResult | None = None
        self._saved: str | None = None  # the draft as last saved, so it is not saved again
        # One driver for the request; it waits at `_waiting` for the host's next step.
        self._driver: StepDriver | None = None
        self._waiting: CallModel | None = None
        self._discarded = False
        # A stopped process's commit, finished when its draft was picked up: the host's retry
        # of that commit gets its result instead of an error.
        self._finished_on_pickup = False

    @classmethod
    def start(
        cls,
        repo: Repository,
        text: str,
        *,
        config: AgentConfig | None = None,
        approve: Callable[[Approval], Any] | None = None,
        redact: Redactor[Any] | None = None,
        index: tuple[HistoricalIndex, Stamp] | None = None,
    ) -> Session:
        """Begin a request in `repo`'s namespace, held by this session (and renewed) until it
        is committed, discarded or left; its first draft is saved. Other requests may run in
        the namespace at the same time. `index` is the namespace's index as loaded at a stamp
        (brought up to date here), else it is loaded."""
        agent = _host_agent(repo, config, approve, redact, index)
        session = cls(agent, agent.begin(text), approve)
        try:
            session._begin()
        except BaseException:
            session._release()
            raise
        return session

    @classmethod
    def resume(
        cls,
        repo: Repository,
        request_id: str,
        *,
        config: AgentConfig | None = None,
        approve: Callable[[Approval], Any] | None = None,
        redact: Redactor[Any] | None = None,
    ) -> Session:
        """Pick the open request `request_id` up from its saved draft (after the process that
        drove it stopped, e.g. a restarted MCP server), holding it: RequestHeld while another
        live writer holds it. A step the process was in the middle of is finished as an
        agent's `resume()` finishes it."""
        agent = _host_agent(repo, config, approve, redact)
        if repo.open_request(request_id) is None and committed(repo, request_id):
            # Committed by a process that stopped before it could say so: the host's retried
            # commit gets the result, every other step "already committed".
            session = cls(agent, placeholder(repo, request_id), approve)
            session._result = committed_result(repo, request_id)
            session._finished_on_pickup = True
            session._release()
            return session
        payload = repo.run(agent.take_plan(request_id))
        session = cls(agent, ActiveState.model_validate_json(payload), approve)
        try:
            session._open(Start.DRAFT)
        except BaseException:
            session._release()
            raise
        session._finished_on_pickup = session._result is not None
        return session

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        """Leaving the block without a commit keeps the draft (resume or discard it later,
        from here or from another process: its hold lapses now)."""
        self._release()

    @property
    def request_id(self) -> str:
        return self.active.request_id

    @property
    def closed(self) -> bool:
        """Committed or discarded: every further step is refused."""
        return self._result is not None or self._discarded

    def index(self) -> str:
        """The Historical State Index, exactly as an agent's prompt shows it (brought up to
        date first: others may have committed since)."""
        self._refresh()
        return self._agent.index.render(self.active.text).text

    def record(self, delta: Sequence[dict[str, Any]]) -> Recorded:
        """Add, update or remove states of this request: all of the delta or none of it."""
        report = self._step({"delta": list(delta)})
        return Recorded(
            applied=report.delta_applied is not False,
            states=list(report.touched),
            rejections=report.messages,
            report=report,
        )

    def reveal(self, ids: Sequence[str]) -> Opened:
        """Open past states (or collapsed requests) that were shown: their content and their
        relations as type + id. The far ends open only when asked for in a later call."""
        report = self._step({"access": list(ids)})
        return self.opened(ids, report)

    def opened(self, ids: Sequence[str], report: StepReport | None = None) -> Opened:
        """What of `ids` is open in this request (revealed states, listed requests, opened
        observations), with the rejections of `report`."""
        return Opened.of(self.active, ids, report.messages if report else [], report)

    def shown(self, state_ids: Sequence[str]) -> None:
        """Count `state_ids` as shown to the host's model (a search listed them), so that it
        may open them like index lines; saved in the request's draft at once."""
        self._closed()
        show(self.active, state_ids)
        if self._driver is not None:
            save = self._driver.draft()
            if save.payload != self._saved:
                self._perform(save)

    def forgotten(self, gone: Callable[[str], bool]) -> None:
        """Drop what another call just forgot from this request's view (its next save drops
        it from the draft too): revealed copies, listed lines, search hits, pending access."""
        drop_forgotten(self.active, gone)

    def observe(
        self, tool: str, arguments: dict[str, Any], output: str, *, is_error: bool = False
    ) -> str:
        """Keep a raw tool result the host got, so that states can cite it as evidence;
        returns its id (e.g. `r7.o2`). Uncited observations are not committed."""
        report = self._call(tool, arguments, [], ToolResult(bounded(str(output)), is_error))
        if report.observation is None:
            raise UsageError("; ".join(report.messages) or "the observation was refused")
        return report.observation

    def guard(self, tool: str, arguments: dict[str, Any], cites: Sequence[str]) -> Guarded:
        """FlowState's rule for a consequential action: it must cite states of this request or
        revealed ones, none of them superseded (and the approver, if any, must say True).
        The decision is recorded either way; the host then runs the call itself."""
        ran = ToolResult(f"approved by the guard; the host runs {tool}", False)
        report = self._call(tool, arguments, list(cites), ran, consequential=True)
        decision = report.decision
        if decision is None:
            return Guarded(False, "; ".join(report.messages) or "refused", None)
        return Guarded(decision.approved, decision.reason, decision.id)

    def commit(self, answer: str, summary: str = "") -> RunResult:
        """End the request: commit its states, relations, cited observations and decisions in
        one transaction. When the database fails during the commit, the request's end is
        kept: `commit` again commits that end (never twice)."""
        if self._finished_on_pickup and self._result is not None:
            return self._result  # a stopped process's commit, finished when it was picked up
        if len(answer) > MAX_REQUEST_TEXT_CHARS:
            raise UsageError(
                f"the answer has {len(answer)} characters; at most {MAX_REQUEST_TEXT_CHARS}"
            )
        final = {"type": "final", "answer": answer, "summary": summary}
        report = self._step({"action": final}, ending=True)
        if self._result is None:
            held = report.of_kind(RejectionKind.ANSWER_HELD) or report.messages
            raise UsageError("; ".join(held) or "the commit was refused")
        return self._result

    def discard(self) -> str | None:
        """Drop the request; nothing of it is committed."""
        self._closed()
        gone = self._agent.discard(self.request_id)
        self._release()
        self._discarded = True
        self._driver = self._waiting = None
        return gone

    def _release(self) -> None:
        self._abandon.detach()
        if self._hold is not None:
            hold, self._hold = self._hold, None
            hold.__exit__(None, None, None)

    # -- the shell ----------------------------------------------------------------------------

    def _call(
        self,
        tool: str,
        arguments: dict[str, Any],
        cites: list[str],
        output: ToolResult,
        *,
        consequential: bool = False,
    ) -> StepReport:
        try:
            self._agent.logic.tools[tool] = Tool.external(tool, consequential=consequential)
        except UsageError as e:
            raise UsageError(f"tool {tool!r}: {e}") from e
        self._host_output = output
        action = {"type": "tool", "name": tool, "arguments": arguments, "cites": cites}
        return self._step({"action": action})

    def _step(self, raw: dict[str, Any], *, ending: bool = False) -> StepReport:
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
        try:
            step = StepOutput.model_validate(raw)
        except ValidationError as e:
            raise UsageError(f"invalid step: {describe(e)}") from e
        before = None if ending else self.active.model_copy(deep=True)
        try:
            if self._waiting is None:  # the last driver stopped at a database failure
                report = self._open(Start.INFLIGHT)
                if self._result is not None:  # it finished the end kept from before
                    return report
            self._refresh()
            report = self._advance(self._send(step))
        except StoreError:
            self._driver = self._waiting = None
            if before is not None:
                self.active = before
            raise
        return report

    def _refresh(self) -> None:
        """The index as it is now (others may have committed since the last call)."""
        agent = self._agent
        agent.refresh_index()
        if self._driver is not None:
            self._driver.update_index(agent.index.render(self.active.text))

    def _begin(self) -> None:
        self._open(Start.NEW)

    def _open(self, start: Start) -> StepReport:
        """A driver over the Active State, run up to its first request for a step."""
        agent = self._agent
        self._driver = agent.driver(self.active, start)
        return self._advance(self._driver.start())

    def _send(self, step: StepOutput) -> Command:
        assert self._driver is not None and self._waiting is not None
        self._waiting = None
        return self._driver.send(step)

    def _advance(self, command: Command) -> StepReport:
        """Perform the driver's commands until it asks for the next step; the report of the
        step that ended on the way (an empty one when none did)."""
        assert self._driver is not None
        report = StepReport(self.active.step)
        while not isinstance(command, Done):
            if isinstance(command, CallModel):
                save = command.save  # no model call to overlap: saved at once
                if save is not None and save.payload != self._saved:  # not as it already is
                    self._perform(save)
                self._waiting = command
                return report
            if isinstance(command, Progress):
                report = command.report
            command = self._driver.send(self._perform(command))
        relations = command.bundle.relations
        if any(r.type is RelationType.SUPERSEDES for r in relations):
            # Marks what it superseded in the cached index; any other commit is picked up by
            # the next refresh (a request start), so no read is spent on it here.
            self._agent.refresh_index(relations)
        self._result = command.result
        self._driver = None
        self._release()
        return report

    def _perform(self, command: Command) -> Any:
        if isinstance(command, Approve):
            return approver_outcome(self._agent.approve or _host_approves, command.approval)
        if isinstance(command, RunTool):
            output, self._host_output = self._host_output, None
            if output is None:  # the call's step was cut short by the database earlier
                return ToolResult("the host's result was lost in a database failure", True)
            return output
        if isinstance(command, Progress):
            return None
        outcome = self._agent.store_command(command)
        if isinstance(command, SaveDraft):
            self._saved = command.payload
        return outcome

    def _closed(self) -> None:
        if self._result is not None:
            raise UsageError(f"request {self.request_id} is already committed")
        if self._discarded:
            raise UsageError(f"request {self.request_id} was discarded; begin a new one")


def _host_agent(
    repo: Repository,
    config: AgentConfig | None,
    approve: Callable[[Approval], Any] | None,
    redact: Redactor[Any] | None,
    index: tuple[HistoricalIndex, Stamp] | None = None,
) -> Agent:
    """A session's agent: no model (the host's steps come in as they are), the guard's rules
    always on."""
    cached, stamp = index or (None, None)
    config = config or SESSION_CONFIG
    agent = Agent(repo, None, (), config, redact=redact, index=cached, stamp=stamp)
    agent.approve = approve or _host_approves
    return agent
