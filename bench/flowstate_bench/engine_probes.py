"""The engine suite's single measurements, each over one built namespace.

Every probe returns raw millisecond samples; `engine_suite` turns them into percentiles.
The pure probes (delta rules) use the same functions the engine calls at every step.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from flowstate.engine.index import HistoricalIndex, RenderedIndex
from flowstate.models import AddOp, StepOutput, ids
from flowstate.models.records import utcnow
from flowstate.rules import Limits, Visibility, apply_delta, check_delta
from flowstate.store import Repository, Store
from flowstate.store.connection import ping
from flowstate_bench.stats import sample_ms, timed_ms
from flowstate_bench.synthetic import BundleShape, request_bundle, state_key

INDEX_BUDGET = 2_000  # the engine's default (AgentConfig.index_budget_tokens)
REVEAL_K = 8
DELTA_OPS = 10


@dataclass(frozen=True)
class IndexFetch:
    ms: list[float]
    index: HistoricalIndex  # the last one built, kept for the in-memory probes
    rendered: RenderedIndex


def index_fetch_render(repo: Repository, n: int) -> IndexFetch:
    """The cold path (an agent starting up): load the index as the engine does (request heads,
    then state lines only for the newest requests it can list), build it, render it."""
    samples: list[float] = []
    index, rendered = None, None
    for _ in range(n):

        def cold() -> tuple[HistoricalIndex, RenderedIndex]:
            built = HistoricalIndex.load(repo, INDEX_BUDGET)
            return built, built.render()

        ms, (index, rendered) = timed_ms(cold)
        samples.append(ms)
    assert index is not None and rendered is not None
    return IndexFetch(samples, index, rendered)


def index_render(index: HistoricalIndex, n: int) -> list[float]:
    """The warm path the engine takes at every step: render the in-memory index."""
    return sample_ms(index.render, n)


def random_state_ids(requests: int, shape: BundleShape, k: int, rng: random.Random) -> list[str]:
    chosen: set[str] = set()
    while len(chosen) < k:
        rid = ids.request_id(rng.randint(1, requests))
        chosen.add(ids.state_id(rid, state_key(rng.randrange(shape.states))))
    return sorted(chosen)


def reveal(repo: Repository, requests: int, shape: BundleShape, n: int, seed: int) -> list[float]:
    """Reveal K random past states (full content plus relations) anywhere in the namespace."""
    rng = random.Random(seed)
    picks = [random_state_ids(requests, shape, REVEAL_K, rng) for _ in range(n)]
    return [timed_ms(lambda p=p: repo.reveal(p))[0] for p in picks]


def delta_ops(targets: list[str]) -> list[AddOp]:
    """N adds, each related to two visible past states and to the previous new state."""
    ops = []
    for i in range(DELTA_OPS):
        rels = [{"type": "DERIVED_FROM", "target": t} for t in targets[i % len(targets) :][:2]]
        if i:
            rels.append({"type": "DEPENDS_ON", "target": f"d{i - 1:02d}"})
        ops.append(
            {
                "op": "add",
                "key": f"d{i:02d}",
                "category": "decision",
                "summary": f"decision {i} of the benchmark step",
                "content": f"Decision {i}, derived from {', '.join(targets[:2])}.",
                "relations": rels,
            }
        )
    return StepOutput.model_validate({"delta": ops}).delta


def delta_apply(rendered: RenderedIndex, revealed: list[str], n: int) -> list[float]:
    """check_delta + apply_delta of a delta of N operations (pure, no I/O)."""
    vis = Visibility(
        request_id="r999999",
        index_states=rendered.state_ids,
        collapsed_requests=rendered.collapsed,
        revealed=frozenset(revealed),
    )
    delta, limits = delta_ops(revealed), Limits()

    def once() -> None:
        if check_delta(delta, vis, limits, {}):
            raise RuntimeError("the benchmark delta was rejected")
        apply_delta(delta, vis, "bench", {}, [], [], utcnow())

    return sample_ms(once, n)


def bolt_round_trip(store: Store, n: int) -> list[float]:
    """A bare `RETURN 1` through the same driver and settings: the unit the engine's
    critical path is judged in (this machine's Bolt round trip, measured in the same run)."""
    return sample_ms(lambda: store.run(ping()), n)


def single_write(repo: Repository, n: int) -> list[float]:
    """A bare single-node write transaction (one small draft upserted), the unit a commit is
    judged in; the draft is dropped afterwards, untimed."""
    repo.save_draft(PROBE_DRAFT, "{}", owner=PROBE_WRITER, first=True)
    samples = sample_ms(lambda: repo.save_draft(PROBE_DRAFT, "{}", owner=PROBE_WRITER), n)
    repo.discard_draft(PROBE_DRAFT, owner=PROBE_WRITER)
    return samples


PROBE_DRAFT = "r999999999"
PROBE_WRITER = "bench:probe"


@dataclass(frozen=True)
class CommitSamples:
    commit_ms: list[float]
    index_update_ms: list[float]


def commit_and_update(
    repo: Repository, index: HistoricalIndex, requests: int, shape: BundleShape, n: int, seed: int
) -> CommitSamples:
    """Commit one more request of `shape`, then bring the in-memory index up to date the way
    the engine does (fetch from its seq on, apply_commit). The request is forgotten after each
    sample (untimed), so the namespace keeps its size."""
    commits, updates = [], []
    seq = requests + 1
    for i in range(n):
        bundle = request_bundle(repo.namespace, seq, shape, seed=seed * 10_000 + i)
        ms, _ = timed_ms(lambda b=bundle: repo.commit(b))
        commits.append(ms)

        def update(b=bundle) -> None:
            for entry in repo.index(from_seq=seq):
                index.apply_commit(entry, b.relations)

        updates.append(timed_ms(update)[0])
        repo.forget_request(bundle.request.id)
    return CommitSamples(commits, updates)
