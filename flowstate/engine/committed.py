"""A request already committed, seen from a process that did not commit it (its committer
stopped before replying): what its commit returned, rebuilt from the graph."""

from __future__ import annotations

from flowstate.engine.driver import RunResult
from flowstate.errors import NotFoundError
from flowstate.models import ids
from flowstate.models.active import ActiveState
from flowstate.store.repository import Repository


def committed(repo: Repository, request_id: str) -> bool:
    """Whether `request_id` is a committed request of the namespace."""
    try:
        repo.get_request(request_id)
    except NotFoundError:
        return False
    return True


def placeholder(repo: Repository, request_id: str) -> ActiveState:
    """An Active State standing for a committed request (nothing of it can change)."""
    seq = ids.request_seq(request_id)
    return ActiveState(namespace=repo.namespace, request_id=request_id, seq=seq, text="-")


def committed_result(repo: Repository, request_id: str) -> RunResult:
    """The result of a request already committed, as its commit returned it (its revealed
    states and rejection count are not kept, so they are empty)."""
    request = repo.get_request(request_id)
    return RunResult(
        request_id=request.id,
        answer=request.answer,
        outcome=request.outcome,
        steps=request.steps,
        usage=request.usage,
        calls=[],
        states_added=[s.id for s in repo.request_states(request_id)],
        revealed=[],
        rejections=0,
        dropped=list(request.dropped or []),
    )
