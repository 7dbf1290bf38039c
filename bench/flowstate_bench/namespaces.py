"""The engine suite's namespaces, built through the real commit path and reused when intact.

A namespace `bench_engine_10k` holds 10,000 states in 200 requests of 50 states each, written
by `Repository.commit` exactly as an agent would write them. It is reused by a later run when
complete; an interrupted build goes on from its last commit, and what a probe that died left
behind (an extra request, a draft) is forgotten first.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from flowstate.errors import NotFoundError
from flowstate.models import ids
from flowstate.store import Repository, Store
from flowstate_bench.synthetic import DEFAULT_SHAPE, BundleShape, request_bundle

# forget_namespace is one DETACH DELETE transaction: at 100k states it exceeds the 1 GB heap's
# transaction memory limit (measured), so larger namespaces go request by request.
_ONE_TRANSACTION_FORGET = 20_000

Progress = Callable[[int, int], None]  # (requests done, requests in all)


@dataclass(frozen=True)
class Built:
    repo: Repository
    requests: int
    states: int
    reused: bool
    seconds: float
    commit_ms: list[float]  # one per request committed while building
    complete: bool = True  # False: the deadline came first; requests and states were reached


def size_label(states: int) -> str:
    """`1k`, `10k`, `1M`: the suffix of the namespace name and the report's key."""
    if states >= 1_000_000 and states % 1_000_000 == 0:
        return f"{states // 1_000_000}M"
    if states >= 1_000 and states % 1_000 == 0:
        return f"{states // 1_000}k"
    return str(states)


PREFIX = "bench_engine"


def namespace_for(states: int, prefix: str = PREFIX) -> str:
    return f"{prefix}_{size_label(states)}"


def requests_for(states: int, shape: BundleShape) -> int:
    return max(1, states // shape.states)


def committed_prefix(repo: Repository, requests: int) -> int:
    """How many of requests 1..`requests` are committed. A build commits them in seq order,
    one transaction each, so they form a prefix 1..k, found by bisection (each probe is one
    indexed lookup, cheap at any size)."""
    low, high = 0, requests
    while low < high:
        mid = (low + high + 1) // 2
        if repo.index(mid, mid):
            low = mid
        else:
            high = mid - 1
    return low


def _tidy(repo: Repository, requests: int) -> None:
    """Drop what a probe that died left behind: requests past the built ones, and drafts."""
    for extra in repo.index(from_seq=requests + 1):
        repo.forget_request(extra.id)
    for left in repo.open_requests():
        repo.discard_draft(left.request_id)


def ensure(
    store: Store,
    states: int,
    shape: BundleShape = DEFAULT_SHAPE,
    progress: Progress | None = None,
    seed: int = 0,
    prefix: str = PREFIX,
    deadline: float | None = None,
) -> Built:
    """The namespace of `states` states: reused when complete, else built on from the
    requests already committed (an interrupted build of a million states goes on where it
    stopped). At `deadline` (`time.monotonic()`) the build stops, incomplete."""
    repo = Repository(store, namespace_for(states, prefix))
    requests = requests_for(states, shape)
    started = time.perf_counter()
    _tidy(repo, requests)
    done = committed_prefix(repo, requests)
    if done and len(repo.request_states(ids.request_id(done))) != shape.states:
        forget(repo, states)  # built with another shape
        done = 0
    if done == requests:
        return Built(repo, requests, requests * shape.states, True, 0.0, [])
    commit_ms: list[float] = []
    for seq in range(done + 1, requests + 1):
        if deadline is not None and time.monotonic() >= deadline:
            seconds = time.perf_counter() - started
            reached = seq - 1  # what is there is measurable: requests 1..reached
            return Built(repo, reached, reached * shape.states, False, seconds, commit_ms, False)
        bundle = request_bundle(repo.namespace, seq, shape, seed)
        t0 = time.perf_counter()
        repo.commit(bundle)
        commit_ms.append((time.perf_counter() - t0) * 1e3)
        if progress is not None:
            progress(seq, requests)
    seconds = time.perf_counter() - started
    return Built(repo, requests, requests * shape.states, False, seconds, commit_ms)


def forget(repo: Repository, states: int) -> None:
    """Drop the namespace; a huge one request by request, newest first (small transactions)."""
    if states <= _ONE_TRANSACTION_FORGET:
        repo.forget_namespace(force=True)
        return
    for seq in range(repo.next_request_seq() - 1, 0, -1):
        try:
            repo.forget_request(ids.request_id(seq))
        except NotFoundError:
            continue
    repo.forget_namespace(force=True)  # drafts and anything left over
