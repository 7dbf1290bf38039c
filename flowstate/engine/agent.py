"""The execution loop: prompt -> model -> parse -> validate -> apply -> act -> reveal -> commit.

Each step's pure part (`StepLogic.absorb`) is shared by the sync and async drivers; the
drivers only add I/O: the model call, Neo4j reads for revealed states, the draft save, the
commit. The Active State is saved as a draft after every step, so a crashed process can
`resume()` or `discard()` the interrupted request.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from flowstate.engine.commit import bundle_of, past_references, without_dangling
from flowstate.engine.index import HistoricalIndex, RenderedIndex
from flowstate.engine.lease import WriterLease
from flowstate.engine.prompt import messages as build_messages
from flowstate.engine.step import AgentConfig, StepLogic, StepVerdict
from flowstate.engine.tools import Tool
from flowstate.errors import NotFoundError, StoreError, UsageError
from flowstate.llm.client import Completion, ModelClient
from flowstate.models import ids
from flowstate.models.active import ActiveState, Finish
from flowstate.models.records import (
    MAX_REQUEST_TEXT_CHARS,
    Observation,
    Outcome,
    Relation,
    Request,
    RequestBundle,
    Usage,
    is_unicode,
    utcnow,
)
from flowstate.models.step import StepOutput
from flowstate.safety.redaction import Redactor, redact_active, redact_bundle
from flowstate.store.namespace_node import writer_id
from flowstate.store.repository import Repository

__all__ = ["Agent", "AgentConfig", "RunResult"]


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
    prompts: list[list[dict[str, str]]] = field(default_factory=list, repr=False)
    replies: list[str] = field(default_factory=list, repr=False)  # raw model text per call
    observations: list[Observation] = field(default_factory=list, repr=False)  # all, cited or not
    # What the commit left out because another process forgot it meanwhile, and why (also on
    # the request node as `dropped`).
    dropped: list[str] = field(default_factory=list)


def _verdict(finish: Finish) -> StepVerdict:
    return StepVerdict(True, finish.outcome, finish.answer, finish.summary, finish.error)


@dataclass
class _Trace:
    """What this process saw of a request: prompts sent and replies received."""

    prompts: list[list[dict[str, str]]] = field(default_factory=list)
    replies: list[str] = field(default_factory=list)


class Agent:
    """Runs requests against one namespace's memory with one model and a set of tools."""

    def __init__(
        self,
        repo: Repository,
        model: ModelClient,
        tools: Iterable[Tool] = (),
        config: AgentConfig | None = None,
        index: HistoricalIndex | None = None,
        approve: Callable[..., bool] | None = None,
        redact: Redactor | None = None,
    ) -> None:
        self.repo = repo
        self.redact = redact
        # Called after every step, the final one too (after its commit), e.g. for progress.
        self.on_step: Callable[[ActiveState], None] | None = None
        # The request in flight when the database failed: resume() continues from it, so a
        # step that could not be saved is not lost with the connection.
        self._inflight: ActiveState | None = None
        self.model = model
        self.config = config or AgentConfig()
        self.logic = StepLogic(list(tools), self.config, approve)
        # One writer per namespace: this agent's name in the lease (host:pid:tag).
        self.writer = writer_id()
        self._stamp = repo.stamp()  # read before loading: a later forget is never missed
        self.index = index or self._load_index()
        self._last_seq = max((r.seq for r in self.index.requests), default=0)

    # -- public ----------------------------------------------------------------------------

    def run(self, text: str) -> RunResult:
        """Run one request to its end and commit what it created."""
        asynchronous = [name for name, t in self.logic.tools.items() if t.is_async]
        if asynchronous:
            raise UsageError(
                f"tool(s) {', '.join(asynchronous)} are async (async def): "
                "use `await agent.arun(...)`"
            )
        with self._lease():
            active = self._begin(text)
            return self._drive(active)

    async def arun(self, text: str) -> RunResult:
        """`run` for asyncio: the model call and async tools are awaited; database calls and
        sync tools run in a thread."""
        lease = self._lease()
        await asyncio.to_thread(lease.__enter__)
        try:
            return await self._arun(text)
        finally:
            await asyncio.to_thread(lease.__exit__, None, None, None)

    async def _arun(self, text: str) -> RunResult:
        active = await asyncio.to_thread(self._begin, text)
        return await self._adrive(active)

    def pending(self) -> str | None:
        """The id of an interrupted request of this namespace, if there is one."""
        draft = self.repo.load_draft()
        return draft[0] if draft else None

    def resume(self) -> RunResult:
        """Continue an interrupted request from its last saved step."""
        with self._lease():
            return self._drive(self._resumable())

    async def aresume(self) -> RunResult:
        """`resume` for asyncio, as `arun` runs a request."""
        lease = self._lease()
        await asyncio.to_thread(lease.__enter__)
        try:
            return await self._adrive(await asyncio.to_thread(self._resumable))
        finally:
            await asyncio.to_thread(lease.__exit__, None, None, None)

    def discard(self) -> str | None:
        """Drop an interrupted request; nothing of it was committed. Returns its id."""
        with self._lease():  # never from under a request that another process is running
            draft = self.repo.load_draft()
            if draft is None:
                return None
            self.repo.discard_draft(draft[0])
            return draft[0]

    # -- driver ----------------------------------------------------------------------------

    def _begin(self, text: str) -> ActiveState:
        if not text.strip():
            raise UsageError("the request text is empty")
        if not is_unicode(text):
            raise UsageError(
                "the request text contains a lone surrogate (an unpaired \\ud800-\\udfff): "
                "send valid Unicode"
            )
        if len(text) > MAX_REQUEST_TEXT_CHARS:
            raise UsageError(
                f"the request has {len(text)} characters; at most {MAX_REQUEST_TEXT_CHARS}"
            )
        interrupted = self.pending()
        if interrupted:
            raise UsageError(
                f"request {interrupted} of namespace {self.repo.namespace!r} was interrupted; "
                "resume() or discard() it first"
            )
        self._refresh_index()
        seq = self.repo.allocate_request_seq()  # never handed out again, even if forgotten
        active = ActiveState(
            namespace=self.repo.namespace, request_id=ids.request_id(seq), seq=seq, text=text
        )
        self._save_draft(active)
        return active

    def _resumable(self) -> ActiveState:
        draft = self.repo.load_draft()
        inflight, self._inflight = self._inflight, None
        if inflight is not None and (draft is None or draft[0] == inflight.request_id):
            return inflight  # newer than any draft it managed to save
        if draft is None:
            raise UsageError(f"no interrupted request in namespace {self.repo.namespace!r}")
        active = ActiveState.model_validate_json(draft[1])
        self.logic.interrupted(active)
        return active

    def _drive(self, active: ActiveState) -> RunResult:
        try:
            return self._steps(active)
        except StoreError:
            self._inflight = active
            raise

    def _steps(self, active: ActiveState) -> RunResult:
        trace = _Trace()
        if active.finish is not None:  # ended before; only its commit failed
            return self._finish(active, _verdict(active.finish), trace, retry=True)
        if active.pending_call is not None or active.pending_access:
            # A step the database cut short: its parked call never ran (the save before it
            # failed) and what it asked to open was not fetched. Finish it before going on.
            self._act(active)
            self._after_step(active)
        while True:
            rendered, msgs = self._prompt(active)
            trace.prompts.append(msgs)
            completion: Completion[StepOutput] = self.model.complete(msgs, StepOutput)
            trace.replies.append(completion.text)
            verdict = self.logic.absorb(active, completion, self.logic.visibility(active, rendered))
            if verdict.done:
                return self._finish(active, verdict, trace)
            self._act(active)
            self._after_step(active)

    async def _adrive(self, active: ActiveState) -> RunResult:
        try:
            return await self._asteps(active)
        except StoreError:
            self._inflight = active
            raise

    async def _asteps(self, active: ActiveState) -> RunResult:
        """`_steps`, step for step, with the model call and async tools awaited."""
        trace = _Trace()
        if active.finish is not None:
            verdict = _verdict(active.finish)
            return await asyncio.to_thread(self._finish, active, verdict, trace, True)
        if active.pending_call is not None or active.pending_access:
            await self._aact(active)
            await asyncio.to_thread(self._after_step, active)
        while True:
            rendered, msgs = self._prompt(active)
            trace.prompts.append(msgs)
            completion = await self.model.acomplete(msgs, StepOutput)
            trace.replies.append(completion.text)
            verdict = self.logic.absorb(active, completion, self.logic.visibility(active, rendered))
            if verdict.done:
                return await asyncio.to_thread(self._finish, active, verdict, trace)
            await self._aact(active)
            await asyncio.to_thread(self._after_step, active)

    async def _aact(self, active: ActiveState) -> None:
        """`_act` for asyncio: the write-ahead save in a thread, then the tool."""
        if active.pending_call is not None:
            await asyncio.to_thread(self._save_draft, active)
            await self.logic.arun_pending(active)

    def _prompt(self, active: ActiveState) -> tuple[RenderedIndex, list[dict[str, str]]]:
        rendered = self.index.render()
        msgs = build_messages(
            active,
            rendered,
            self.logic.tools.values(),
            self.config.limits,
            self.config.max_steps,
            self.config.recent_observations,
        )
        return rendered, msgs

    def _act(self, active: ActiveState) -> None:
        """Save the step before its tool runs (write-ahead), so a crash mid-call is known."""
        if active.pending_call is not None:
            self._save_draft(active)
            self.logic.run_pending(active)

    def _after_step(self, active: ActiveState) -> None:
        """Open what the model asked for (visible from the next call), then save the draft."""
        self._reveal(active)
        self._save_draft(active)
        if self.on_step is not None:
            self.on_step(active)

    def _save_draft(self, active: ActiveState) -> None:
        stored = redact_active(active, self.redact) if self.redact else active
        self.repo.save_draft(
            active.request_id,
            stored.model_dump_json(),
            owner=self.writer,
            lease_s=self.config.lease_seconds,
        )

    def _reveal(self, active: ActiveState) -> None:
        asked = active.pending_access
        states, missing = _each(self.repo.reveal, [i for i in asked if ids.is_state_id(i)])
        for rev in states:
            active.revealed[rev.state.id] = rev
        requests, gone = _each(
            lambda rids: [(rid, self.repo.request_states(rid)) for rid in rids],
            [i for i in asked if ids.is_request_id(i)],
        )
        active.opened_requests.update(requests)
        observations, lost = _each(self.repo.expand, [i for i in asked if ids.is_observation_id(i)])
        for obs in observations:
            active.opened_observations[obs.id] = obs  # type: ignore[assignment]
        for item in [*missing, *gone, *lost]:
            # Forgotten since it was shown: tell the model; the rest of the batch is open.
            active.rejections.append(
                f"access {item}: not found in namespace {self.repo.namespace!r} "
                "(forgotten since it was shown)"
            )
        active.pending_access = []  # only now: a failed fetch is retried on resume

    def _finish(
        self, active: ActiveState, verdict: StepVerdict, trace: _Trace, retry: bool = False
    ) -> RunResult:
        # Kept on the Active State first: if the commit fails, resume() commits this verdict
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
        landed = self._committed(active.request_id) if retry else None
        if landed is None:
            # Saved with how it ended first: a crash in the commit resumes to this commit,
            # without asking the model again.
            self._save_draft(active)
            bundle = self._commit(bundle)
        dropped = (landed or bundle.request).dropped or []
        self._refresh_index(bundle.relations)
        if self.on_step is not None:
            self.on_step(active)
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
            prompts=trace.prompts,
            replies=trace.replies,
            observations=list(active.observations.values()),
            dropped=list(dropped),
        )

    def _commit(self, bundle: RequestBundle) -> RequestBundle:
        """Commit; when another process forgot (or expired) a past state the request relates
        to or cites meanwhile, drop those references, say so on the request, and commit the
        rest. Each retry has fewer references, so this ends; it never loops over resume()."""
        while True:
            try:
                # One transaction; it also deletes the draft. Only while this agent holds the lease.
                self.repo.commit(bundle, owner=self.writer, lease_s=self.config.lease_seconds)
                return bundle
            except NotFoundError:
                gone = self._forgotten(past_references(bundle))
                if not gone:
                    raise
                bundle = without_dangling(bundle, gone)

    def _forgotten(self, state_ids: Iterable[str]) -> set[str]:
        """Which of these past states no longer exist."""
        _, missing = _each(self.repo.reveal, list(state_ids))
        return set(missing)

    def _committed(self, request_id: str) -> Request | None:
        """The request as committed, when a retried commit already landed (its acknowledgement
        was lost); else None."""
        try:
            return self.repo.get_request(request_id)
        except NotFoundError:
            return None

    def _lease(self) -> WriterLease:
        return WriterLease(self.repo, self.config.lease_seconds, self.writer)

    def _load_index(self) -> HistoricalIndex:
        return HistoricalIndex.load(
            self.repo, self.config.index_budget_tokens, getattr(self.model, "model", None)
        )

    def _refresh_index(self, relations: Iterable[Relation] = ()) -> None:
        """Append requests committed since the last look (ours or another process's); rebuild
        the index when something was forgotten or expired meanwhile (the stamp changed)."""
        stamp = self.repo.stamp()
        if stamp != self._stamp:
            self._stamp = stamp
            self.index = self._load_index()
            self._last_seq = max((r.seq for r in self.index.requests), default=0)
            return
        new = self.repo.index(from_seq=self._last_seq + 1)
        rels = list(relations)
        for entry in new:
            self.index.apply_commit(entry, rels)
            self._last_seq = max(self._last_seq, entry.seq)


def _each(
    fetch: Callable[[list[str]], list[Any]], wanted: list[str]
) -> tuple[list[Any], list[str]]:
    """`fetch(wanted)`, and when some id is not found, each one alone: (found, missing ids)."""
    if not wanted:
        return [], []
    try:
        return fetch(wanted), []
    except NotFoundError:
        found, missing = [], []
        for one in wanted:
            try:
                found += fetch([one])
            except NotFoundError:
                missing.append(one)
        return found, missing
