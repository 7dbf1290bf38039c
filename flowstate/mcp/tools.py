"""The memory tools a host's model calls. Each is one step of a request through the session
API (the agent loop's rules, drafts and commit), or a read; every result is one bounded page.

A refused step raises `ToolError`: the host shows the model an error result carrying the
rejection reasons, and the model corrects its next call.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Annotated, Any, TypeVar

from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from flowstate.api import FlowState
from flowstate.cli.safety_commands import provenance_text
from flowstate.engine.session import SESSION_CONFIG, Opened, Session
from flowstate.errors import FlowStateError, StoreError
from flowstate.mcp.paging import page_of
from flowstate.mcp.requests import OpenRequests
from flowstate.models import ids
from flowstate.models.step import DeltaOp
from flowstate.store.codec import shown

T = TypeVar("T")

RequestId = Annotated[str, Field(description="the id memory_begin returned, e.g. r7")]
PageNo = Annotated[int, Field(ge=1, description="page of a long result, from 1")]
StateIds = Annotated[
    list[str],
    Field(
        description="ids shown in the index or at a relation end: states (r3.key) or "
        "collapsed requests (r3)"
    ),
]


class MemoryTools:
    """The tools of one server: its namespace is bound here, never taken from an argument."""

    def __init__(self, fs: FlowState, requests: OpenRequests, page_chars: int) -> None:
        self.fs = fs
        self.requests = requests
        self.page_chars = page_chars

    @property
    def read_only(self) -> bool:
        return self.fs.repository.read_only

    # -- reads --------------------------------------------------------------------------------

    def memory_index(self, page: PageNo = 1, request_id: str | None = None) -> str:
        """The Historical State Index of this memory: past requests and their states as
        `id [category] summary` lines. Read it first; open what matters with memory_reveal
        (only ids shown here open). With a request id, the index as that request sees it
        (ordered for it, and refreshed when others commit)."""
        if request_id is None:
            return self._page(self._index_text(), page)
        session = self._guarded(lambda: self.requests.get(request_id))
        return self._page(session.index(), page)

    def memory_history(self, page: PageNo = 1) -> str:
        """Every committed request of this memory, oldest first: id, outcome, summary."""
        requests = self._guarded(self.fs.history)
        lines = [
            f"{r.id}  {r.finished_at:%Y-%m-%d %H:%M}  {r.outcome.value}  {r.summary}"
            for r in requests
        ]
        return self._page("\n".join(lines) or "no requests yet", page)

    def memory_why(
        self,
        state_id: Annotated[str, Field(description="a state id, e.g. r3.hotel_choice")],
        depth: Annotated[int, Field(ge=0, le=20)] = 6,
        page: PageNo = 1,
    ) -> str:
        """Why a state holds: its chain of DEPENDS_ON / DERIVED_FROM / SUPERSEDES relations
        and evidence down to the raw tool observations and requests, each state marked when
        it has been SUPERSEDED since."""
        if not ids.is_state_id(state_id):
            raise refused(f"{shown(state_id)} is not a state id like r3.hotel_choice")
        repo = self.fs.repository

        def chain() -> str:
            prov = repo.provenance(state_id, depth)
            stale = {
                r.state.id: r.superseded_by
                for r in repo.reveal([s.id for s in prov.states])
                if r.superseded_by
            }
            return provenance_text(prov, stale)

        return self._page(self._guarded(chain), page)

    def memory_reveal(
        self, ids: StateIds, request_id: RequestId | None = None, page: PageNo = 1
    ) -> str:
        """Open past states: full content and their relations as type + other end's id.
        At most 8 ids per call, only ids already shown (the index, or a relation end opened
        before); a relation's far end opens only when you ask for it in a later call. With a
        request_id this is a step of that request and the states become citable; without,
        a read of ids the index shows. Page 2+ of a reveal re-reads what is open."""
        if request_id is None:
            return self._page(self._guarded(lambda: self._browse(ids)), page)
        session = self._guarded(lambda: self.requests.get(request_id))
        if page == 1:
            opened = self._guarded(lambda: session.reveal(ids))
            if opened.rejections and not (opened.states or opened.requests):
                raise refused("nothing opened: " + "; ".join(opened.rejections))
        else:  # the same ids again: already open, no new step
            active = session.active
            opened = Opened(
                states=[active.revealed[i] for i in ids if i in active.revealed],
                requests={i: active.opened_requests[i] for i in ids if i in active.opened_requests},
            )
        return self._page(_opened_json(opened), page)

    # -- a request's steps --------------------------------------------------------------------

    def memory_begin(
        self, text: Annotated[str, Field(description="the user's request, verbatim")]
    ) -> str:
        """Begin a request: returns its request_id (pass it to every later call) and the
        index. Then, as you work: memory_reveal what you need, memory_observe tool results
        you rely on, memory_record what you learn or decide, memory_guard before an action
        with consequences, and memory_commit at the end (or memory_discard)."""
        self._writable("memory_begin")
        session = self._guarded(lambda: self.requests.begin(text))
        head = f"request_id: {session.request_id}\n\nIndex:\n"
        return head + self._page(session.index(), 1)

    def memory_record(self, request_id: RequestId, delta: list[DeltaOp]) -> str:
        """Record what this request learned or decided, as states: add (new key, category,
        summary, content, relations to visible states, evidence = observation ids), update or
        remove (only states of THIS request; past ones change by a new state that SUPERSEDES
        them). All of the delta applies or none of it: on an error, fix and resend it."""
        self._writable("memory_record")
        ops = [op.model_dump(exclude_none=True) for op in delta]
        recorded = self._step(request_id, lambda s: s.record(ops))
        if not recorded.applied:  # each rejection says "delta rejected, nothing applied: ..."
            raise refused("; ".join(recorded.rejections))
        return json.dumps({"applied": True, "states": recorded.states})

    def memory_observe(
        self,
        request_id: RequestId,
        tool: Annotated[str, Field(description="the tool's name: letters, digits and _")],
        arguments: dict[str, Any],
        output: Annotated[str, Field(description="the tool's result, as text")],
        is_error: bool = False,
    ) -> str:
        """Keep a tool result you got, so that states can cite it as evidence. Returns its
        observation id (e.g. r7.o2); an observation no state cites is not committed."""
        self._writable("memory_observe")
        oid = self._step(
            request_id, lambda s: s.observe(tool, arguments, output, is_error=is_error)
        )
        return json.dumps({"observation_id": oid})

    def memory_guard(
        self,
        request_id: RequestId,
        tool: Annotated[str, Field(description="the consequential tool you are about to call")],
        arguments: dict[str, Any],
        cites: Annotated[list[str], Field(description="ids of the states the call relies on")],
    ) -> str:
        """Ask before an action with consequences (book, pay, send, delete): it must cite
        states of this request or revealed ones, none of them superseded. The decision is
        recorded either way. Run the tool yourself only when this approves."""
        self._writable("memory_guard")
        verdict = self._step(request_id, lambda s: s.guard(tool, arguments, cites))
        if not verdict.approved:
            raise refused(f"denied (do not run {tool}): {verdict.reason}")
        return json.dumps({"approved": True, "decision_id": verdict.decision_id})

    def memory_commit(
        self,
        request_id: RequestId,
        answer: Annotated[str, Field(description="the final answer given to the user")],
        summary: Annotated[str, Field(description="one line for the index")] = "",
    ) -> str:
        """End the request: its states, relations, cited observations and decisions are
        committed in one transaction and appear in the index from the next request."""
        self._writable("memory_commit")
        result = self._step(request_id, lambda s: s.commit(answer, summary))
        self.requests.close(request_id)
        return json.dumps(
            {
                "request_id": result.request_id,
                "outcome": result.outcome.value,
                "states_added": result.states_added,
                "revealed": result.revealed,
                "error": result.error,
            }
        )

    def memory_discard(self, request_id: RequestId) -> str:
        """Drop the request: nothing of it is committed."""
        self._writable("memory_discard")
        dropped = self._step(request_id, lambda s: s.discard())
        self.requests.close(request_id)
        return json.dumps({"discarded": dropped})

    # -- shared -------------------------------------------------------------------------------

    def _step(self, request_id: str, call: Callable[[Session], T]) -> T:
        with self.requests.lock:  # one step at a time, on the session it belongs to
            session = self._guarded(lambda: self.requests.get(request_id))
            try:
                return call(session)
            except StoreError as e:  # the database failed: say what became of the call
                then = (
                    "Nothing of this call was applied: send it again once the database answers."
                    if session.active.finish is None
                    else "The request's end is kept: memory_commit again once the database "
                    "answers (it is never committed twice)."
                )
                raise refused(f"{e} {then}") from e
            except FlowStateError as e:
                raise refused(str(e)) from e

    def _browse(self, wanted: list[str]) -> str:
        """A read without a request: ids the index lists, collapsed requests (their state
        lines) and the states of collapsed requests; no relation end (begin a request to
        follow relations, or ask memory_why)."""
        rendered = self.fs.index(model="host")
        limit = SESSION_CONFIG.limits.max_access_per_step
        if len(wanted) > limit:
            raise refused(f"at most {limit} ids per call; {len(wanted)} asked")
        collapsed = [i for i in wanted if i in rendered.collapsed]
        states = [i for i in wanted if i not in collapsed]
        hidden = [
            shown(i)
            for i in states
            if i not in rendered.state_ids
            and not (ids.is_state_id(i) and ids.request_of(i) in rendered.collapsed)
        ]
        if hidden:
            raise refused(f"not shown in the index, so not open: {', '.join(hidden)}")
        requests = {rid: self.fs.repository.request_states(rid) for rid in collapsed}
        return _opened_json(Opened(states=self.fs.reveal(states), requests=requests))

    def _index_text(self) -> str:
        return self.fs.index(model="host").text

    def _page(self, text: str, page: int) -> str:
        return self._guarded(lambda: page_of(text, page, self.page_chars)).render()

    def _writable(self, tool: str) -> None:
        if self.read_only:
            raise refused(f"{tool} writes, and this server is read-only (--read-only): refused")

    @staticmethod
    def _guarded(call: Callable[[], T]) -> T:
        """FlowState's errors (bad input, a refused step, a dead database) as tool errors."""
        try:
            return call()
        except FlowStateError as e:
            raise refused(str(e)) from e


MAX_ERROR_CHARS = 4_000


def refused(message: str) -> ToolError:
    """A tool error the model reads, bounded: hostile arguments are never echoed in full."""
    if len(message) > MAX_ERROR_CHARS:
        cut = len(message) - MAX_ERROR_CHARS
        message = f"{message[:MAX_ERROR_CHARS]}... ({cut} more characters not shown)"
    return ToolError(message)


def _opened_json(opened: Opened) -> str:
    return json.dumps(
        {
            "states": [
                {
                    "id": r.state.id,
                    "category": r.state.category.value,
                    "summary": r.state.summary,
                    "content": r.state.content,
                    "relations": [f"{x.type} {x.direction.value} {x.other}" for x in r.relations],
                    "superseded_by": r.superseded_by,
                }
                for r in opened.states
            ],
            "requests": {
                rid: [f"{s.id} [{s.category.value}] {s.summary}" for s in states]
                for rid, states in opened.requests.items()
            },
            "rejections": opened.rejections,
        },
        indent=1,
        ensure_ascii=False,
    )


TOOL_NAMES = [
    "memory_index",
    "memory_reveal",
    "memory_begin",
    "memory_record",
    "memory_observe",
    "memory_guard",
    "memory_commit",
    "memory_discard",
    "memory_why",
    "memory_history",
]
