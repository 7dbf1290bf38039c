"""What the sync and the async agent share, without I/O: the tools, the index, and the Neo4j
work of each driver command as a plan (`flowstate.store.plans`).

A shell runs these plans on its own repository, `repo.run(plan)` or `await repo.run(plan)`,
so beginning a request, refreshing the index, saving a draft, revealing, committing and
discarding are written once for both shells.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any, Generic, Protocol, TypeVar

from flowstate.engine.driver import (
    CallModel,
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
from flowstate.engine.index import HistoricalIndex
from flowstate.engine.prompt import Prompt
from flowstate.engine.step import AgentConfig, Approval, StepLogic
from flowstate.engine.tools import Tool
from flowstate.errors import NotFoundError, StoreError, UsageError
from flowstate.llm.client import Completion, ModelClient
from flowstate.models import ids
from flowstate.models.active import ActiveState
from flowstate.models.records import (
    MAX_REQUEST_TEXT_CHARS,
    Observation,
    Relation,
    Request,
    is_unicode,
)
from flowstate.models.step import StepOutput
from flowstate.safety.redaction import Redactor
from flowstate.store.namespace_node import Stamp, writer_id
from flowstate.store.ops import Ops
from flowstate.store.plans import Plan

Approver = Callable[[Approval], Any]  # returns True to approve (or an awaitable of it, async)
# One model call: the prompt as its parts, and the reply (its `sent` is what reached litellm).
CallHook = Callable[[Prompt, Completion[StepOutput]], None]
# Rewrites a step's prompt before it is rendered and sent (runs in the shell, so it may read).
PromptProcessor = Callable[[Prompt], Prompt]
# Rewrites the model's reply before the rules see it (e.g. an ablation that drops its delta).
ReplyProcessor = Callable[[Prompt, Completion[StepOutput]], Completion[StepOutput]]


class HasOps(Protocol):
    """A repository of either kind: what its plans are made of."""

    ops: Ops


R = TypeVar("R", bound=HasOps)


class AgentCore(Generic[R]):
    """One namespace (its repository, sync or async), one model, a set of tools; the shells
    add the I/O."""

    def __init__(
        self,
        repo: R,
        model: ModelClient | None,
        tools: Iterable[Tool] = (),
        config: AgentConfig | None = None,
        approve: Approver | None = None,
        redact: Redactor[Any] | None = None,
    ) -> None:
        self.repo = repo
        self.ops = repo.ops
        self.model = model
        self.redact = redact
        self.config = config or AgentConfig()
        self.logic = StepLogic(list(tools), self.config)
        self.approve = approve
        # Called after every step, the final one too (after its commit), e.g. for progress.
        self.on_step: Callable[[ActiveState], None] | None = None
        # Called after every model call with its prompt and reply (for transcripts and token
        # accounting); None keeps nothing.
        self.on_call: CallHook | None = None
        self.prompt_processors: list[PromptProcessor] = []
        self.reply_processors: list[ReplyProcessor] = []
        # One writer per namespace: this agent's name in the lease (host:pid:tag).
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
        self.index = HistoricalIndex((), self.config.index_budget_tokens, self._model_name)
        self._stamp: Stamp | None = None  # None: the index was never loaded
        self._last_seq = 0

    @property
    def approve(self) -> Approver | None:
        """Decides consequential calls (True approves); with none they are denied."""
        return self._approve

    @approve.setter
    def approve(self, approve: Approver | None) -> None:
        self._approve = approve
        self.logic.has_approver = approve is not None

    @property
    def _model_name(self) -> str | None:
        name = getattr(self.model, "model", None)
        return name if isinstance(name, str) else None

    # -- plans the shells run -----------------------------------------------------------------

    def begin_plan(self, text: str) -> Plan[ActiveState]:
        """Check a new request and give it the next id."""
        check_request_text(text)
        interrupted = yield from self.ops.load_draft()
        if interrupted:
            raise UsageError(
                f"request {interrupted[0]} of namespace {self.ops.namespace!r} was interrupted; "
                "resume() or discard() it first"
            )
        yield from self.refresh_plan()
        yield from self.index.load_matching(self.ops, text)
        seq = yield from self.ops.allocate_request_seq()  # never handed out again
        active = ActiveState(
            namespace=self.ops.namespace, request_id=ids.request_id(seq), seq=seq, text=text
        )
        # Opened before the first call (the driver fetches them), so a request that needs
        # them needs no step to ask for them.
        active.pending_access = self.index.best_states(text, self.config.prefetch_states)
        return active

    def refresh_plan(self, relations: Iterable[Relation] = ()) -> Plan[None]:
        """Append requests committed since the last look (ours or another process's); load
        the index when something was forgotten or expired meanwhile (the stamp changed), or
        the first time. The stamp is read first: a later forget is never missed."""
        stamp = yield from self.ops.stamp()
        if stamp != self._stamp:
            budget = self.config.index_budget_tokens
            index = yield from HistoricalIndex.loading(self.ops, budget, self._model_name)
            self.adopt(index, stamp)
            return
        new = yield from self.ops.index(from_seq=self._last_seq + 1)
        rels = list(relations)
        for entry in new:
            self.index.apply_commit(entry, rels)
            self._last_seq = max(self._last_seq, entry.seq)

    @property
    def loaded_at(self) -> Stamp | None:
        """The stamp the index was loaded at (None: never loaded)."""
        return self._stamp

    def adopt(self, index: HistoricalIndex, stamp: Stamp) -> None:
        """Use `index`, as loaded when the namespace had `stamp`."""
        self.index, self._stamp = index, stamp
        self._last_seq = max((r.seq for r in index.requests), default=0)

    def discard_plan(self) -> Plan[str | None]:
        """Drop the interrupted request's draft; its id, or None when there was none."""
        draft = yield from self.ops.load_draft()
        if draft is None:
            return None
        yield from self.ops.discard_draft(draft[0])
        self._inflight = self.unsaved_reply = None
        return draft[0]

    def store_plan(self, command: Command) -> Plan[Any]:
        """The Neo4j work of one driver command; what it returns is sent to the driver."""
        if isinstance(command, SaveDraft):
            lease_s = self.config.lease_seconds
            yield from self.ops.save_draft(
                command.request_id, command.payload, owner=self.writer, lease_s=lease_s
            )
            self._saved_request = command.request_id
            return None
        if isinstance(command, Reveal):
            return (yield from self._reveal(command))
        if isinstance(command, Commit):
            try:
                # One transaction; it also deletes the draft. Only while this agent holds the lease.
                bundle, lease_s = command.bundle, self.config.lease_seconds
                yield from self.ops.commit(bundle, owner=self.writer, lease_s=lease_s)
            except NotFoundError as refused:
                return refused
            return None
        if isinstance(command, FindMissing):
            _, missing = yield from _each(self.ops.reveal, sorted(command.state_ids))
            return set(missing)
        if isinstance(command, CheckCommitted):
            # The request as committed, when a retried commit already landed (its
            # acknowledgement was lost); else None.
            try:
                return (yield from self.ops.get(Request, "request", command.request_id))
            except NotFoundError:
                return None
        raise TypeError(f"unknown driver command {command!r}")

    def _reveal(self, command: Reveal) -> Plan[Revealed]:
        states, missing = yield from _each(self.ops.reveal, command.states)
        requests, gone = yield from _each(self._request_lines, command.requests)
        observations, lost = yield from _each(self.ops.expand, command.observations)
        return Revealed(
            states=states,
            requests=dict(requests),
            observations=[o for o in observations if isinstance(o, Observation)],
            missing=[*missing, *gone, *lost],
        )

    def _request_lines(self, request_ids: list[str]) -> Plan[list[Any]]:
        lines = []
        for rid in request_ids:
            lines.append((rid, (yield from self.ops.request_states(rid))))
        return lines

    # -- shared by the shells -----------------------------------------------------------------

    def resumed(self, draft: tuple[str, str] | None) -> StepDriver:
        """The driver that continues the interrupted request (this process's own Active State
        when the database failed under it, else the saved draft)."""
        inflight, self._inflight = self._inflight, None
        if inflight is not None and (draft is None or draft[0] == inflight.request_id):
            # Its draft saved once and now gone, not ended: another writer discarded or
            # finished it. (An ended request's draft goes when its commit landed
            # unacknowledged; the driver checks that one.)
            saved = self._saved_request == inflight.request_id
            if draft is None and inflight.finish is None and saved:
                self.unsaved_reply = None
                raise UsageError(
                    f"request {inflight.request_id} was discarded or finished by another "
                    "writer while this process was cut off from Neo4j (its draft is gone); "
                    "nothing of it is resumed here"
                )
            return self.driver(inflight, Start.INFLIGHT)  # newer than any draft it saved
        self.unsaved_reply = None  # it answered the Active State dropped here
        if draft is None:
            raise UsageError(f"no interrupted request in namespace {self.ops.namespace!r}")
        return self.driver(ActiveState.model_validate_json(draft[1]), Start.DRAFT)

    def driver(self, active: ActiveState, start: Start) -> StepDriver:
        """The request's driver, with the index as rendered for this request's text."""
        index = self.index.render(active.text)
        return StepDriver(active, index, self.logic, start=start, redact=self.redact)

    @contextmanager
    def keeping_inflight(self, driver: StepDriver) -> Iterator[None]:
        """On a database failure, keep the driver's Active State for resume()."""
        try:
            yield
        except StoreError:
            self._inflight = driver.active
            raise

    @contextmanager
    def keeping_reply(self, reply: Completion[StepOutput] | None) -> Iterator[None]:
        """When the draft save inside fails, keep the model's `reply` for resume()."""
        try:
            yield
        except StoreError:
            self.unsaved_reply = reply
            raise

    @property
    def client(self) -> ModelClient:
        """The model; an agent without one (a session's) takes its steps from the host."""
        if self.model is None:
            raise UsageError("this agent has no model: its steps come from the host")
        return self.model

    def prompt_for(self, command: CallModel) -> Prompt:
        """The step's prompt after the processors, as it will be sent."""
        prompt = command.prompt
        for process in self.prompt_processors:
            prompt = process(prompt)
        return prompt

    def called(self, prompt: Prompt, completion: Completion[StepOutput]) -> Completion[StepOutput]:
        """The model's reply as the rules will see it; `on_call` sees it as the model sent it."""
        if self.on_call is not None:
            self.on_call(prompt, completion)
        for process in self.reply_processors:
            completion = process(prompt, completion)
        return completion

    def stepped(self, active: ActiveState) -> None:
        if self.on_step is not None:
            self.on_step(active)


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
