"""What each MCP tool does: one call of the front door (`FlowState`) or of the open request's
session, rendered as an output model (the structured content) and a text block.

A refused call is an error result carrying the reasons (bounded: a hostile argument is never
echoed in full), and the model corrects its next call. An error means nothing of the call
was applied.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel, ValidationError

from flowstate.engine.fact import key_from
from flowstate.errors import (
    CommitUncertain,
    FlowStateError,
    NotFoundError,
    StoreError,
    UsageError,
)
from flowstate.mcp import schemas as s
from flowstate.mcp.catalog import SPECS, ToolSpec
from flowstate.mcp.paging import pack, page_of
from flowstate.models import ids
from flowstate.models.wording import counted

if TYPE_CHECKING:
    from flowstate.api import FlowState
    from flowstate.engine.browse import Browse
    from flowstate.engine.opening import Opened
    from flowstate.engine.session import Session
    from flowstate.mcp.memory import Memory
    from flowstate.mcp.requests import OpenRequests

T = TypeVar("T")
MAX_ERROR_CHARS = 4_000
MAX_PROBLEMS = 8  # argument problems listed; the rest are counted
log = logging.getLogger("flowstate.mcp")
Result = tuple[s.Out, str]


class Refused(Exception):
    """A call refused with a reason the model reads."""


class MemoryTools:
    """The tools of one server: its namespace is bound at start, never taken from an argument."""

    def __init__(self, memory: Memory, page_chars: int, listed: list[ToolSpec]) -> None:
        self.memory = memory
        self.page_chars = page_chars
        self.listed = {spec.name: spec for spec in listed}
        self.lock = threading.RLock()  # one call at a time: one namespace, one writer
        self._browsing: tuple[FlowState, Browse] | None = None  # reads outside a request

    def call(self, name: str, arguments: dict[str, Any]) -> tuple[str, dict[str, Any] | None]:
        """(text, structured content) of one call; `Refused` with the reason otherwise."""
        spec = self.listed.get(name)
        if spec is None:
            hidden = " on this server" if name in SPECS else ""
            raise Refused(f"unknown tool {name[:64]!r}{hidden}; tools: {', '.join(self.listed)}")
        args = validated(spec.args, arguments)
        with self.lock:
            try:
                out, text = getattr(self, name)(args)
            except FlowStateError as e:
                raise Refused(bounded(str(e))) from e
        return text, out.model_dump(mode="json")

    # -- reads --------------------------------------------------------------------------------

    def memory_index(self, args: s.IndexArgs) -> Result:
        fs, requests = self.memory.get()
        rid = args.request_id
        text = self._open(requests, rid).index() if rid else fs.shown_index().text
        page = page_of(text, args.page, self.page_chars)
        return s.IndexOut(text=page.text, page=page.page, pages=page.pages, request_id=rid), (
            page.render()
        )

    def memory_history(self, args: s.HistoryArgs) -> Result:
        fs, _ = self.memory.get()
        lines = [
            s.HistoryLineOut(
                id=r.id,
                finished_at=r.finished_at.isoformat(timespec="seconds"),
                outcome=r.outcome.value,
                summary=r.summary,
            )
            for r in fs.history()
        ]
        pages = pack([x.model_dump() for x in lines], self.page_chars) or [[]]
        chosen = _page(pages, args.page)
        out = s.HistoryOut(requests=chosen, page=args.page, pages=len(pages))
        text = "\n".join(
            f"{x['id']}  {x['finished_at']}  {x['outcome']}  {x['summary']}" for x in chosen
        )
        return out, _footer(text or "no requests yet", args.page, len(pages))

    def memory_why(self, args: s.WhyArgs) -> Result:
        fs, _ = self.memory.get()
        prov = fs.why(args.state_id, args.depth)
        page = page_of(prov.tree(), args.page, self.page_chars)
        out = s.WhyOut(state_id=args.state_id, text=page.text, page=page.page, pages=page.pages)
        return out, page.render()

    def memory_search(self, args: s.SearchArgs) -> Result:
        from flowstate.engine.relevance import words

        fs, requests = self.memory.get()
        session = self._open(requests, args.request_id) if args.request_id else None
        hits = fs.search(args.query, args.limit)
        found = [h.id for h in hits]
        (session or self._browse(fs)).shown(found)
        out = s.SearchOut(
            request_id=args.request_id,
            words=words(args.query),
            hits=[s.HitOut(**h.model_dump()) for h in hits],
        )
        lines = [
            f"{h.id} [{h.category.value}] {h.summary}"
            + (f"  (SUPERSEDED by {h.superseded_by})" if h.superseded_by else "")
            for h in hits
        ]
        return out, "\n".join(lines) or f"no state matches {' '.join(out.words) or args.query!r}"

    def memory_reveal(self, args: s.RevealArgs) -> Result:
        fs, requests = self.memory.get()
        if args.request_id is None:
            opened = self._browse(fs).open(args.ids)
        else:
            session = self._open(requests, args.request_id)
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
        fs, _ = self.memory.get()
        key = args.key or key_from(args.summary)
        op = {
            "op": "add",
            "key": key,
            "category": args.category.value,
            "summary": args.summary,
            "content": args.content or args.summary,
            "relations": [r.model_dump(mode="json") for r in args.relations],
        }
        try:
            result = fs.remember([op], args.text or args.summary, summary=args.summary)
        except CommitUncertain as e:  # the one transaction may have landed before the cut
            raise UsageError(
                f"{e}. Before remembering it again, look for it with memory_search (or the "
                "newest request in memory_history): a fact that landed is there whole."
            ) from e
        self._browse(fs).shown(result.states_added)  # shown to the model by this very reply
        out = s.RememberOut(
            request_id=result.request_id,
            state_id=f"{result.request_id}.{key}",
            states_added=result.states_added,
        )
        return out, f"remembered as {out.state_id} (request {out.request_id}, committed)"

    def memory_begin(self, args: s.BeginArgs) -> Result:
        _, requests = self.memory.get()
        session = requests.begin(args.text)
        page = page_of(session.index(), 1, self.page_chars)
        out = s.BeginOut(
            request_id=session.request_id, index=page.text, page=page.page, pages=page.pages
        )
        return out, f"request_id: {session.request_id}\n\nIndex:\n{page.render()}"

    def memory_record(self, args: s.RecordArgs) -> Result:
        session = self._session(args.request_id)
        ops = [op.model_dump(exclude_none=True) for op in args.delta]
        recorded = self._step(session, lambda x: x.record(ops))
        if not recorded.applied:  # each rejection says "delta rejected, nothing applied: ..."
            raise UsageError("; ".join(recorded.rejections))
        out = s.RecordOut(
            request_id=args.request_id,
            applied=True,
            states=recorded.states,
            notices=recorded.rejections,  # applied, yet told: e.g. an opened state went stale
        )
        told = "".join(f"\nnote: {n}" for n in out.notices)
        return out, f"applied: {', '.join(recorded.states) or 'no state changed'}{told}"

    def memory_observe(self, args: s.ObserveArgs) -> Result:
        session = self._session(args.request_id)
        oid = self._step(
            session,
            lambda x: x.observe(args.tool, args.arguments, args.output, is_error=args.is_error),
        )
        out = s.ObserveOut(request_id=args.request_id, observation_id=oid)
        return out, f"kept as {oid}: cite it as evidence"

    def memory_guard(self, args: s.GuardArgs) -> Result:
        session = self._session(args.request_id)
        verdict = self._step(session, lambda x: x.guard(args.tool, args.arguments, args.cites))
        if not verdict.approved:
            raise UsageError(f"denied (do not run {args.tool}): {verdict.reason}")
        out = s.GuardOut(request_id=args.request_id, approved=True, decision_id=verdict.decision_id)
        return out, f"approved ({verdict.decision_id}): run {args.tool} now"

    def memory_commit(self, args: s.CommitArgs) -> Result:
        fs, requests = self.memory.get()
        session = requests.get(args.request_id)
        again = session.closed
        result = self._step(session, lambda x: x.commit(args.answer, args.summary))
        requests.close(args.request_id)
        self._browse(fs).shown(result.states_added)  # shown to the model by this very reply
        out = s.CommitOut(
            request_id=result.request_id,
            outcome=result.outcome.value,
            states_added=result.states_added,
            revealed=result.revealed,
            dropped=result.dropped,
            error=result.error,
            already_committed=again,
        )
        return out, f"committed {result.request_id} ({result.outcome.value}): " + (
            ", ".join(result.states_added) or "no states"
        )

    def memory_discard(self, args: s.DiscardArgs) -> Result:
        _, requests = self.memory.get()
        try:
            requests.discard(args.request_id)
        except StoreError as e:
            raise UsageError(f"{e} Nothing was discarded: send it again shortly.") from e
        return s.DiscardOut(request_id=args.request_id, discarded=True), (
            f"discarded {args.request_id}: nothing of it was committed"
        )

    def memory_forget(self, args: s.ForgetArgs) -> Result:
        from flowstate.store.drafts import of_ids, of_request

        fs, requests = self.memory.get()
        try:
            counts = fs.forget(args.id)
        except NotFoundError:
            # Idempotent, as annotated: a call repeated (a reply lost, a retry) finds it gone.
            return s.ForgetOut(id=args.id, nodes=0, relationships=0), (
                f"nothing to forget: {args.id} is not in memory (already forgotten, or never "
                "stored); nothing was deleted"
            )
        gone = of_request(args.id) if ids.is_request_id(args.id) else of_ids({args.id})
        self._browse(fs).forgotten(gone)
        for session in requests.sessions():
            session.forgotten(gone)
        out = s.ForgetOut(id=args.id, nodes=counts.nodes, relationships=counts.relationships)
        return out, f"forgot {args.id}: {counts.describe()}"

    # -- shared -------------------------------------------------------------------------------

    def _session(self, request_id: str) -> Session:
        _, requests = self.memory.get()
        return self._open(requests, request_id)

    def _open(self, requests: OpenRequests, request_id: str) -> Session:
        if "memory_begin" not in self.listed:
            raise UsageError(
                "this server is read-only: no request is open here; call without request_id"
            )
        return requests.get(request_id)

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
        """What this server's reads outside a request were shown and opened (one per
        connection: a reconnected memory starts afresh)."""
        if self._browsing is None or self._browsing[0] is not fs:
            self._browsing = (fs, fs.browse())
        return self._browsing[1]

    def _revealed(self, opened: Opened, args: s.RevealArgs) -> Result:
        states = [
            s.StateOut(
                id=r.state.id,
                category=r.state.category.value,
                summary=r.state.summary,
                content=r.state.content,
                relations=[
                    s.RelationOut(type=x.type, direction=x.direction.value, other=x.other)
                    for x in r.relations
                ],
                superseded_by=r.superseded_by,
            ).model_dump()
            for r in opened.states
        ]
        observations = [
            s.ObservationOut(
                id=o.id, tool=o.tool, arguments=o.arguments, output=o.output, is_error=o.is_error
            ).model_dump()
            for o in opened.observations
        ]
        requests = [
            s.RequestLinesOut(
                id=rid,
                states=[
                    s.LineOut(
                        id=x.id,
                        category=x.category.value,
                        summary=x.summary,
                        superseded_by=x.superseded_by,
                    )
                    for x in lines
                ],
            ).model_dump()
            for rid, lines in opened.requests.items()
        ]
        pages = pack([*requests, *states, *observations], self.page_chars, "content", "output")
        chosen = _page(pages or [[]], args.page)
        out = s.RevealOut(
            request_id=args.request_id,
            states=[x for x in chosen if "content" in x],
            requests=[x for x in chosen if "states" in x],
            observations=[x for x in chosen if "output" in x],
            not_opened=opened.rejections if args.page == 1 else [],
            page=args.page,
            pages=max(1, len(pages)),
        )
        body = json.dumps(out.model_dump(mode="json"), indent=1, ensure_ascii=False)
        return out, _footer(body, args.page, out.pages)


# --- arguments and errors ----------------------------------------------------------------------

M = TypeVar("M", bound=BaseModel)


def validated(model: type[M], arguments: dict[str, Any]) -> M:
    """The arguments as `model`, or `Refused` listing the first problems in one short line
    (field and reason, never the value sent, never a documentation link)."""
    if not isinstance(arguments, dict):
        raise Refused("arguments must be a JSON object")
    try:
        return model.model_validate(_json_strings(model, arguments))
    except ValidationError as e:
        problems = e.errors(include_url=False, include_input=False, include_context=False)
        parts = []
        for item in problems[:MAX_PROBLEMS]:
            where = ".".join(str(p) for p in item["loc"])[:120] or "arguments"
            parts.append(f"{where}: {item['msg'].removeprefix('Value error, ')}")
        more = len(problems) - MAX_PROBLEMS
        tail = f"; and {counted(more, 'more problem')}" if more > 0 else ""
        raise Refused(bounded(f"invalid arguments: {'; '.join(parts)}{tail}")) from None


def _json_strings(model: type[BaseModel], arguments: dict[str, Any]) -> dict[str, Any]:
    """Lists and objects some hosts send as JSON text, parsed (only for fields that are not
    strings, and only when the text is a JSON array or object)."""
    fixed = dict(arguments)
    for name, field in model.model_fields.items():
        value = fixed.get(name)
        if isinstance(value, str) and value[:1] in "[{" and field.annotation is not str:
            try:
                parsed = json.loads(value)
            except ValueError:
                continue
            if isinstance(parsed, list | dict):
                fixed[name] = parsed
    return fixed


def bounded(message: str) -> str:
    """At most MAX_ERROR_CHARS: hostile arguments are never echoed back in full."""
    if len(message) <= MAX_ERROR_CHARS:
        return message
    cut = len(message) - MAX_ERROR_CHARS
    return f"{message[:MAX_ERROR_CHARS]}... ({cut} more characters not shown)"


def _page(pages: list[list[dict[str, Any]]], page: int) -> list[dict[str, Any]]:
    if not 1 <= page <= len(pages):
        raise UsageError(f"page {page} does not exist: there are {len(pages)} page(s)")
    return pages[page - 1]


def _footer(text: str, page: int, pages: int) -> str:
    if pages <= 1:
        return text
    more = f"call again with page={page + 1} for the rest" if page < pages else "last page"
    return f"{text}\n\n[page {page} of {pages}; {more}]"
