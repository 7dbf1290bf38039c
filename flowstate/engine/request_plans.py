"""The Neo4j work of a request, as plans (`flowstate.store.plans`), for every shell that runs
one: beginning it, taking it over, discarding it, and what each step driver command needs of
the store (saving the draft, revealing, checking cited states, committing). No model: the
agents add theirs (`flowstate.engine.agent_core`); a host's session and the front door use
these as they are.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import Any

from flowstate.engine.driver import (
    CheckCited,
    CheckCommitted,
    Command,
    Commit,
    FindMissing,
    Reveal,
    Revealed,
    SaveDraft,
    Start,
    StepDriver,
)
from flowstate.engine.hold import dead_here
from flowstate.engine.index_view import IndexView, R
from flowstate.engine.step import AgentConfig, Approval, StepLogic
from flowstate.engine.tools import Tool
from flowstate.errors import (
    ConflictError,
    NotFoundError,
    UsageError,
    ValidationFailed,
)
from flowstate.llm.client import Completion
from flowstate.models import ids
from flowstate.models.active import ActiveState
from flowstate.models.records import (
    MAX_REQUEST_TEXT_CHARS,
    Observation,
    Request,
    is_unicode,
)
from flowstate.models.step import StepOutput
from flowstate.safety.redaction import Redactor
from flowstate.store.holds import OpenRequest
from flowstate.store.namespace_node import writer_id
from flowstate.store.plans import Plan

Approver = Callable[[Approval], Any]  # returns True to approve (or an awaitable of it, async)


class RequestPlans(IndexView[R]):
    """A writer of one namespace's requests: its tools' rules, its approver and its name on
    the requests it holds."""

    def __init__(
        self,
        repo: R,
        tools: Iterable[Tool] = (),
        config: AgentConfig | None = None,
        approve: Approver | None = None,
        redact: Redactor[Any] | None = None,
        model_name: str | None = None,
    ) -> None:
        super().__init__(repo, config, model_name)
        self.redact = redact
        self.logic = StepLogic(list(tools), self.config)
        self.approve = approve
        # This agent's name on the requests it holds (host:pid:tag).
        self.writer = writer_id()
        # The request in flight when the database failed: resume() continues from it, so a
        # step that could not be saved is not lost with the connection.
        self._inflight: ActiveState | None = None
        # The model's reply to the call whose write-behind draft save failed: resume() saves
        # the draft, then acts on this reply instead of asking the model again.
        self.unsaved_reply: Completion[StepOutput] | None = None
        # The request whose draft this agent saved last: when its draft is gone at resume(),
        # another writer discarded or finished it meanwhile.
        self._saved_request: str | None = None

    @property
    def approve(self) -> Approver | None:
        """Decides consequential calls (True approves); with none they are denied."""
        return self._approve

    @approve.setter
    def approve(self, approve: Approver | None) -> None:
        self._approve = approve
        self.logic.has_approver = approve is not None

    def begin_plan(self, text: str) -> Plan[ActiveState]:
        """Check a new request and give it the next id (its first draft save holds it)."""
        check_request_text(text)
        yield from self.refresh_plan()
        yield from self.fetch_matches_plan(text)
        seq = yield from self.ops.allocate_request_seq()  # never handed out again
        active = ActiveState(
            namespace=self.ops.namespace, request_id=ids.request_id(seq), seq=seq, text=text
        )
        # Opened before the first call (the driver fetches them), so a request that needs
        # them needs no step to ask for them.
        active.pending_access = self.index.best_states(text, self.config.prefetch_states)
        return active

    def pending_plan(self) -> Plan[list[OpenRequest]]:
        """Every open request of the namespace (running or interrupted), with its holder."""
        return (yield from self.ops.open_requests())

    def take_plan(self, request_id: str) -> Plan[str]:
        """Hold `request_id` for this agent: its payload. Granted when its hold lapsed, this
        agent holds it, or its holder is a process of this host that exited."""
        found = yield from self.ops.open_request(request_id)
        dead = found.holder if found is not None and dead_here(found.holder) else None
        hold_s = self.config.hold_seconds
        return (yield from self.ops.take_over(request_id, self.writer, hold_s, dead=dead))

    def chosen_plan(self, request_id: str | None) -> Plan[str]:
        """The open request meant: `request_id`, this agent's own one cut short by a database
        failure, or the only one no live writer holds (UsageError when none is, or several)."""
        if request_id is not None:
            return request_id
        if self._inflight is not None:
            return self._inflight.request_id
        free = [
            r
            for r in (yield from self.ops.open_requests())
            if not r.held or r.holder == self.writer or dead_here(r.holder)
        ]
        namespace = self.ops.namespace
        if not free:
            raise UsageError(f"no interrupted request in namespace {namespace!r}")
        if len(free) > 1:
            names = ", ".join(r.request_id for r in free)
            raise UsageError(
                f"namespace {namespace!r} has several interrupted requests ({names}): name one"
            )
        return free[0].request_id

    def resume_plan(self, request_id: str | None = None) -> Plan[StepDriver]:
        """The driver that continues an open request: this process's own Active State when
        the database failed under it, else the request's draft, taken over."""
        rid = yield from self.chosen_plan(request_id)
        yield from self.refresh_plan()  # the first resumed prompt shows the index as it is
        inflight, self._inflight = self._inflight, None
        if inflight is not None and inflight.request_id == rid:
            found = yield from self.ops.open_request(rid)
            # Its draft saved once and now gone, not ended: another writer discarded or
            # finished it. (An ended request's draft goes when its commit landed
            # unacknowledged; the driver checks that one.)
            if found is None and inflight.finish is None and self._saved_request == rid:
                self.unsaved_reply = None
                raise UsageError(
                    f"request {rid} was discarded or finished by another writer while this "
                    "process was cut off from Neo4j (its draft is gone); nothing of it is "
                    "resumed here"
                )
            if found is not None:
                yield from self.take_plan(rid)  # held again (it may have lapsed meanwhile)
            yield from self.fetch_matches_plan(inflight.text)
            return self.driver(inflight, Start.INFLIGHT)  # newer than any draft it saved
        self.unsaved_reply = None  # it answered an Active State dropped here
        payload = yield from self.take_plan(rid)
        active = ActiveState.model_validate_json(payload)
        yield from self.fetch_matches_plan(active.text)  # as its first prompt listed them
        return self.driver(active, Start.DRAFT)

    def discard_plan(self, request_id: str | None = None) -> Plan[str]:
        """Drop an open request (this agent's, or one whose hold lapsed): nothing of it is
        committed. Its id."""
        rid = yield from self.chosen_plan(request_id)
        yield from self.take_plan(rid)
        yield from self.ops.discard_draft(rid, owner=self.writer)
        if self._inflight is not None and self._inflight.request_id == rid:
            self._inflight = self.unsaved_reply = None
        return rid

    def store_plan(self, command: Command) -> Plan[Any]:
        """The Neo4j work of one driver command; what it returns is sent to the driver."""
        if isinstance(command, SaveDraft):
            try:
                yield from self.ops.save_draft(
                    command.request_id,
                    command.payload,
                    owner=self.writer,
                    hold_s=self.config.hold_seconds,
                    first=command.first,
                )
            except ValidationFailed:
                # A first save the driver retried after it had landed meets its own draft.
                draft = yield from self.ops.open_request(command.request_id)
                if not command.first or draft is None or draft.holder != self.writer:
                    raise
                yield from self.store_plan(replace(command, first=False))  # this payload
            self._saved_request = command.request_id
            return None
        if isinstance(command, Reveal):
            return (yield from self._reveal(command))
        if isinstance(command, Commit):
            try:
                # One transaction; it also deletes the draft. Only while this agent holds it.
                yield from self.ops.commit(command.bundle, owner=self.writer)
            except (NotFoundError, ConflictError) as refused:
                return refused
            except ValidationFailed:
                # The driver retries a transaction whose acknowledgement was lost; when the
                # first attempt had landed, the retry meets the request's own id. Nobody else
                # commits this id: it landed.
                if (yield from self._landed(command.bundle.request.id)) is None:
                    raise
            return None
        if isinstance(command, CheckCited):
            return (yield from self._stale(command.request_id, command.state_ids))
        if isinstance(command, FindMissing):
            _, missing = yield from _each(self.ops.reveal, sorted(command.state_ids))
            return set(missing)
        if isinstance(command, CheckCommitted):
            # The request as committed, when a retried commit already landed (its
            # acknowledgement was lost); else None.
            return (yield from self._landed(command.request_id))
        raise TypeError(f"unknown driver command {command!r}")

    def _landed(self, request_id: str) -> Plan[Request | None]:
        try:
            return (yield from self.ops.get(Request, "request", request_id))
        except NotFoundError:
            return None

    def _stale(self, request_id: str, cited: list[str]) -> Plan[dict[str, str]]:
        """Which cited past states are superseded or gone now, as committed."""
        past = [c for c in cited if ids.is_state_id(c) and ids.request_of(c) != request_id]
        found, missing = yield from _each(self.ops.reveal, past)
        stale = {m: "was forgotten" for m in missing}
        for rev in found:
            if rev.superseded_by:
                stale[rev.state.id] = f"is superseded by {', '.join(rev.superseded_by)}"
        return stale

    def _reveal(self, command: Reveal) -> Plan[Revealed]:
        states, missing = yield from _each(self.ops.reveal, command.states)
        requests, gone = yield from _each(self._request_lines, command.requests)
        observations, lost = yield from _each(self.ops.expand, command.observations)
        return Revealed(
            states=states,
            requests={rid: lines for rid, lines, _ in requests},
            request_texts={rid: text for rid, _, text in requests},
            observations=[o for o in observations if isinstance(o, Observation)],
            missing=[*missing, *gone, *lost],
        )

    def _request_lines(self, request_ids: list[str]) -> Plan[list[Any]]:
        """Per request: its id, its states' index lines and its text (what it asked; the
        texts of all of them in one read)."""
        lines = []
        for rid in request_ids:
            lines.append((rid, (yield from self.ops.request_states(rid))))
        records = yield from self.ops.expand(request_ids)
        texts = {r.id: r.text for r in records if isinstance(r, Request)}
        return [(rid, states, texts[rid]) for rid, states in lines]

    # -- shared by the shells -----------------------------------------------------------------

    def driver(self, active: ActiveState, start: Start) -> StepDriver:
        """The request's driver, with the index as rendered for this request's text."""
        index = self.index.render(active.text)
        return StepDriver(active, index, self.logic, start=start, redact=self.redact)


def check_request_text(text: str) -> None:
    if not text.strip():
        raise UsageError("the request text is empty")
    if not is_unicode(text):
        raise UsageError(
            "the request text contains a lone surrogate (an unpaired \\ud800-\\udfff): "
            "send valid Unicode"
        )
    if len(text) > MAX_REQUEST_TEXT_CHARS:
        limit = MAX_REQUEST_TEXT_CHARS
        raise UsageError(f"the request has {len(text)} characters; at most {limit}")


def _each(
    fetch: Callable[[list[str]], Plan[list[Any]]], wanted: list[str]
) -> Plan[tuple[list[Any], list[str]]]:
    """`fetch(wanted)`, and when some id is not found, each one alone: (found, missing ids)."""
    if not wanted:
        return [], []
    try:
        return (yield from fetch(wanted)), []
    except NotFoundError:
        found, missing = [], []
        for one in wanted:
            try:
                found += yield from fetch([one])
            except NotFoundError:
                missing.append(one)
        return found, missing
