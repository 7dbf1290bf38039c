"""The engine suite's namespaces, built through the real commit path and reused when intact.

A namespace `bench_engine_10k` holds 10,000 states in 200 requests of 50 states each, written
by `Repository.commit` exactly as an agent would write them. It is reused by a later run when
its shape checks out, and rebuilt from scratch when it does not (an interrupted build, or a
probe that died before forgetting its extra request).
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


def intact(repo: Repository, requests: int, shape: BundleShape) -> bool:
    """Cheap check: commits are atomic and in seq order, so a complete last request and
    nothing after it mean every request before it is there too."""
    if repo.next_request_seq() != requests + 1 or repo.load_draft() is not None:
        return False
    try:
        return len(repo.request_states(ids.request_id(requests))) == shape.states
    except NotFoundError:
        return False


def ensure(
    store: Store,
    states: int,
    shape: BundleShape = DEFAULT_SHAPE,
    progress: Progress | None = None,
    seed: int = 0,
    prefix: str = PREFIX,
) -> Built:
    """The namespace of `states` states: reused when intact, else forgotten and rebuilt."""
    repo = Repository(store, namespace_for(states, prefix))
    requests = requests_for(states, shape)
    started = time.perf_counter()
    if intact(repo, requests, shape):
        return Built(repo, requests, requests * shape.states, True, 0.0, [])
    forget(repo, states)
    commit_ms: list[float] = []
    for seq in range(1, requests + 1):
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
        repo.forget_namespace()
        return
    for seq in range(repo.next_request_seq() - 1, 0, -1):
        try:
            repo.forget_request(ids.request_id(seq))
        except NotFoundError:
            continue
    repo.forget_namespace()  # drafts and anything left over
