"""What each MCP tool does: one call of the front door (`FlowState`) or of the open request's
session, rendered as an output model (the structured content) and a text block.

A refused call is an error result carrying the reasons (bounded: a hostile argument is never
echoed in full), and the model corrects its next call. An error means nothing of the call
was applied.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from flowstate.compact import render
from flowstate.compact import schemas as s
from flowstate.compact.arguments import Refused, bounded, validated
from flowstate.compact.paging import page_of
from flowstate.engine.fact import Fact
from flowstate.errors import (
    CommitUncertain,
    FlowStateError,
    NotFoundError,
    RequestEnded,
    StoreError,
    UsageError,
)
from flowstate.mcp.catalog import SPECS, ToolSpec

if TYPE_CHECKING:
    from flowstate.api import FlowState
    from flowstate.engine.browse import Browse
    from flowstate.engine.opening import Opened
    from flowstate.engine.session import Session
    from flowstate.mcp.memory import Memory

T = TypeVar("T")
ID_SHOWN = 40  # characters of a request id quoted back
MAX_CLIENTS = 1_000  # HTTP sessions whose reads outside a request are kept
log = logging.getLogger("flowstate.mcp")
Result = render.Result


class MemoryTools:
    """The tools of one server: its namespace is bound at start, never taken from an argument."""

    def __init__(
        self, memory: Memory, page_chars: int, listed: list[ToolSpec], draft_ttl_s: float
    ) -> None:
        self.memory = memory
        self.page_chars = page_chars
        self.draft_ttl_s = draft_ttl_s
        self.listed = {spec.name: spec for spec in listed}
        self.lock = threading.RLock()  # one call at a time: one namespace, one writer
        self._waiting = 0  # calls waiting for the lock: a warm-up lets them go first
        self._counting = threading.Lock()
        # Reads outside a request, per client the transport names (see `_browse`), newest last.
        self._browses: OrderedDict[str | None, tuple[FlowState, Browse]] = OrderedDict()
        self._client: str | None = None  # the client of the call under way

    def call(
        self, name: str, arguments: dict[str, Any], client: str | None = None
    ) -> tuple[str, dict[str, Any] | None]:
        """(text, structured content) of one call; `Refused` with the reason otherwise.
        `client` names the client it came from, when the transport does: its reads outside a
        request are its own."""
        spec = self.listed.get(name)
        if spec is None:
            hidden = " on this server" if name in SPECS else ""
            raise Refused(f"unknown tool {name[:64]!r}{hidden}; tools: {', '.join(self.listed)}")
        args = validated(spec.args, arguments)
        with self._counting:
            self._waiting += 1
        with self.lock:
            with self._counting:
                self._waiting -= 1
            self._client = client
            try:
                out, text = getattr(self, name)(args)
            except FlowStateError as e:
                raise Refused(bounded(str(e))) from e
        return text, out.dump()

    @property
    def waiting(self) -> int:
        """How many calls wait for the one under way."""
        return self._waiting

    def expire(self) -> list[str]:
        """Discard the requests idle for the server's --draft-ttl (between calls, never
        during one); their hosts are told so on their next call."""
        fs = self.memory.get(0)
        with self.lock:
            return fs.expire(self.draft_ttl_s)

    # -- reads --------------------------------------------------------------------------------

    def memory_index(self, args: s.IndexArgs) -> Result:
        fs = self.memory.get()
        rid = args.request_id
        text = self._session(rid, args.handle).index() if rid else fs.shown_index().text
        page = page_of(text, args.page, self.page_chars)
        return s.IndexOut(text=page.text, **s.paging(page.page, page.pages)), page.render()

    def memory_history(self, args: s.HistoryArgs) -> Result:
        return render.history(self.memory.get().history(), args.page, self.page_chars)

    def memory_why(self, args: s.WhyArgs) -> Result:
        fs = self.memory.get()
        prov = fs.why(args.state_id, args.depth)
        page = page_of(prov.tree(), args.page, self.page_chars)
        out = s.WhyOut(text=page.text, **s.paging(page.page, page.pages))
        return out, page.render()

    def memory_search(self, args: s.SearchArgs) -> Result:
        fs = self.memory.get()
        session = self._session(args.request_id, args.handle) if args.request_id else None
        hits = fs.search(args.query, args.limit)
        (session or self._browse(fs)).shown([h.id for h in hits])
        return render.search(hits, args.query)

    def memory_reveal(self, args: s.RevealArgs) -> Result:
        fs = self.memory.get()
        if args.request_id is None:
            opened = self._browse(fs).open(args.ids)
        else:
            session = self._session(args.request_id, args.handle)
            if args.page == 1:
                opened = self._step(session, lambda x: x.reveal(args.ids))
            else:  # the same ids again: already open, no new step
                opened = session.opened(args.ids)
        nothing = not (opened.states or opened.requests or opened.observations)
        if nothing and opened.rejections:
            raise UsageError("nothing opened: " + "; ".join(opened.rejections))
        return self._revealed(opened, args)

    # -- writes -------------------------------------------------------------------------------

    def memory_remember(self, args: s.RememberArgs) -> Result:
        fs = self.memory.get()
        fact = Fact(
            args.summary,
            args.category,
            content=args.content,
            key=args.key,
            relations=[r.model_dump(mode="json") for r in args.relations],
            text=args.text,
            idempotency_key=args.idempotency_key,
        )
        try:
            result = fs.remember_fact(fact)
        except CommitUncertain as e:  # the one transaction may have landed before the cut
            raise UsageError(
                f"{e}. Send the same call again: a fact that landed is found and stored once "
                "(within 10 minutes)."
            ) from e
        self._browse(fs).shown(result.states_added)  # shown to the model by this very reply
        if len(result.states_added) != 1:  # never: a fact is one state, its request kept whole
            raise UsageError(f"request {result.request_id} holds no single fact; remember again")
        [state_id] = result.states_added
        out = s.RememberOut(state_id=state_id, already_committed=result.already_committed)
        again = ", stored before: not stored twice" if result.already_committed else ""
        return out, f"remembered as {state_id} (request {result.request_id}, committed{again})"

    def memory_begin(self, args: s.BeginArgs) -> Result:
        session = self.memory.get().begin(args.text)
        assert session.handle is not None
        page = page_of(session.index(), 1, self.page_chars)
        out = s.BeginOut(
            request_id=session.request_id,
            handle=session.handle,
            index=page.text,
            **s.paging(page.page, page.pages),
        )
        return out, (
            f"request_id: {session.request_id}\nhandle: {session.handle}\n(pass both on every "
            f"call for this request)\n\nIndex:\n{page.render()}"
        )

    def memory_record(self, args: s.RecordArgs) -> Result:
        session = self._session(args.request_id, args.handle)
        ops = [op.model_dump(exclude_none=True) for op in args.delta]
        recorded = self._step(session, lambda x: x.record(ops))
        if not recorded.applied:  # each rejection says "delta rejected, nothing applied: ..."
            raise UsageError("; ".join(recorded.rejections))
        out = s.RecordOut(
            states=recorded.states,
            notices=recorded.rejections,  # applied, yet told: e.g. an opened state went stale
        )
        told = "".join(f"\nnote: {n}" for n in out.notices)
        return out, f"applied: {', '.join(recorded.states) or 'no state changed'}{told}"

    def memory_observe(self, args: s.ObserveArgs) -> Result:
        session = self._session(args.request_id, args.handle)
        oid = self._step(
            session,
            lambda x: x.observe(args.tool, args.arguments, args.output, is_error=args.is_error),
        )
        out = s.ObserveOut(observation_id=oid)
        return out, f"kept as {oid}: cite it as evidence"

    def memory_guard(self, args: s.GuardArgs) -> Result:
        session = self._session(args.request_id, args.handle)
        verdict = self._step(session, lambda x: x.guard(args.tool, args.arguments, args.cites))
        if not verdict.approved:
            raise UsageError(f"denied (do not run {args.tool}): {verdict.reason}")
        out = s.GuardOut(decision_id=verdict.decision_id)
        return out, f"approved ({verdict.decision_id}): run {args.tool} now"

    def memory_commit(self, args: s.CommitArgs) -> Result:
        fs = self.memory.get()
        session = self._session(args.request_id, args.handle)
        again = session.closed
        result = self._step(session, lambda x: x.commit(args.answer, args.summary))
        self._browse(fs).shown(result.states_added)  # shown to the model by this very reply
        return render.commit(result, already_committed=again)

    def memory_discard(self, args: s.DiscardArgs) -> Result:
        fs = self.memory.get()
        try:
            fs.discard(args.request_id, args.handle)
        except RequestEnded as e:  # idempotent, as annotated: a repeated discard finds it gone
            return s.DiscardOut(discarded=True, already_discarded=True), (
                f"{e}; nothing to discard again"
            )
        except StoreError as e:
            raise UsageError(f"{e} Nothing was discarded: send it again shortly.") from e
        return s.DiscardOut(discarded=True), (
            f"discarded {args.request_id}: nothing of it was committed"
        )

    def memory_forget(self, args: s.ForgetArgs) -> Result:
        fs = self.memory.get()
        try:
            removal = fs.forget(args.id)  # what the server's sessions and browse hold goes too
        except NotFoundError:
            # Idempotent, as annotated: a call repeated (a reply lost, a retry) finds it gone.
            return s.ForgetOut(nodes=0, relationships=0), (
                f"nothing to forget: {args.id} is not in memory (already forgotten, or never "
                "stored); nothing was deleted"
            )
        out = s.ForgetOut(**removal.model_dump())
        left = removal.left_behind()
        return out, f"forgot {args.id}: {removal.describe()} deleted" + (
            f"; {left}" if left else ""
        )

    # -- shared -------------------------------------------------------------------------------

    def _session(self, request_id: str, handle: str | None) -> Session:
        """The host's open request: the handle memory_begin gave it opens it, nothing else."""
        if "memory_begin" not in self.listed:
            raise UsageError(
                "this server is read-only: no request is open here; call without request_id"
            )
        if not handle:
            raise UsageError(
                f"handle: required with request_id {request_id[:ID_SHOWN]}: pass the handle "
                "memory_begin returned with it. Nothing was done"
            )
        return self.memory.get().session(request_id, handle)

    def _step(self, session: Session, call: Callable[[Session], T]) -> T:
        try:
            return call(session)
        except StoreError as e:  # the database failed: say what became of the call
            then = (
                "Nothing of this call was applied: send it again once the database answers."
                if session.active.finish is None
                else "The request's end is kept: memory_commit again once the database "
                "answers (it is never committed twice)."
            )
            raise UsageError(f"{e} {then}") from e

    def _browse(self, fs: FlowState) -> Browse:
        """What this client's reads outside a request were shown and opened. Each HTTP
        session has its own, so a host never opens an id only another host was shown; over
        stdio the server has one client; where the transport names none (stateless HTTP),
        the server's clients share one. A reconnected memory starts afresh."""
        found = self._browses.get(self._client)
        if found is None or found[0] is not fs:
            found = self._browses[self._client] = (fs, fs.browse())
        self._browses.move_to_end(self._client)
        while len(self._browses) > MAX_CLIENTS:
            self._browses.popitem(last=False)  # the longest unused client starts afresh
        return found[1]

    def _revealed(self, opened: Opened, args: s.RevealArgs) -> Result:
        return render.revealed(opened, args.page, self.page_chars)
