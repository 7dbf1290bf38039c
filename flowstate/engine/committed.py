"""A request already committed, seen from a process that did not commit it (its committer
stopped before replying): what its commit returned, rebuilt from the graph."""

from __future__ import annotations

from flowstate.engine.driver import RunResult
from flowstate.engine.handles import matches, refusal
from flowstate.errors import NotFoundError
from flowstate.models import ids
from flowstate.models.active import ActiveState
from flowstate.models.records import Request
from flowstate.store.ops import Ops
from flowstate.store.plans import Plan


def placeholder(namespace: str, request_id: str) -> ActiveState:
    """An Active State standing for a committed request (nothing of it can change)."""
    seq = ids.request_seq(request_id)
    return ActiveState(namespace=namespace, request_id=request_id, seq=seq, text="-")


def committed_result(
    ops: Ops, request_id: str, handle: str | None = None
) -> Plan[RunResult | None]:
    """The result of `request_id` as its commit returned it (its revealed states and
    rejection count are not kept, so they are empty); None when it is not committed. With
    `handle`, only to the client that ran it (WrongHandle otherwise)."""
    try:
        request = yield from ops.get(Request, "request", request_id)
    except NotFoundError:
        return None
    if handle is not None and not matches(handle, request.handle_hash):
        raise refusal(request_id)
    states = yield from ops.request_states(request_id)
    return RunResult(
        request_id=request.id,
        answer=request.answer,
        outcome=request.outcome,
        steps=request.steps,
        usage=request.usage,
        calls=[],
        states_added=[s.id for s in states],
        revealed=[],
        rejections=0,
        dropped=list(request.dropped or []),
    )
