"""Engine speed at scale: real Neo4j, no model. One namespace per size, several runs each.

Per size the report holds, for every probe, the median across runs of each run's p50/p95/p99
(see `stats`), the process's peak RSS once the size is done, and how the namespace was built.
"""

from __future__ import annotations

import random
import resource
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from flowstate.engine.index import HistoricalIndex
from flowstate.store import Store
from flowstate_bench import engine_probes as probes
from flowstate_bench import namespaces
from flowstate_bench.stats import across_runs, summary
from flowstate_bench.step_probe import run_requests
from flowstate_bench.synthetic import DEFAULT_SHAPE, BundleShape

Say = Callable[[str], None]


@dataclass(frozen=True)
class Samples:
    """How many samples each probe takes per run; the cold index fetch scales with size."""

    step_requests: int = 10  # x7 measured steps each
    round_trips: int = 100
    commits: int = 15
    reveals: int = 50
    deltas: int = 200
    renders: int = 50
    cold_index_states: int = 100_000  # cold fetches per run = max(1, this // size)
    max_cold_index: int = 5
    # Step requests per run = max(2, min(step_requests, this // size)): each measured request
    # is forgotten afterwards, and the agent reloads its whole index then (untimed, but
    # seconds at 1M states).
    step_request_states: int = 2_000_000

    def cold_index(self, states: int) -> int:
        return max(1, min(self.max_cold_index, self.cold_index_states // states))

    def step_requests_at(self, states: int) -> int:
        return max(
            min(2, self.step_requests), min(self.step_requests, self.step_request_states // states)
        )


def peak_rss_mb() -> float:
    """Peak resident set of this process so far (Linux reports KiB)."""
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def one_run(
    store: Store, built: namespaces.Built, shape: BundleShape, samples: Samples, seed: int
) -> dict:
    """Raw samples of every probe, one pass over a built namespace."""
    repo, requests = built.repo, built.requests
    cold = probes.index_fetch_render(repo, samples.cold_index(built.states))
    revealed = probes.random_state_ids(requests, shape, probes.REVEAL_K, random.Random(seed))
    commit = probes.commit_and_update(repo, cold.index, requests, shape, samples.commits, seed)
    # A fresh index: the commit probe's requests, forgotten since, are still in cold.index.
    index = HistoricalIndex.load(repo, probes.INDEX_BUDGET)
    steps = run_requests(repo, index, samples.step_requests_at(built.states), seed)
    return {
        "index_fetch_render_ms": cold.ms,
        "index_render_ms": probes.index_render(cold.index, samples.renders),
        "reveal_ms": probes.reveal(repo, requests, shape, samples.reveals, seed),
        "delta_apply_ms": probes.delta_apply(cold.rendered, revealed, samples.deltas),
        "step_ms": [g for s in steps for g in s.gaps_ms],
        "step_plain_ms": [g for s in steps for g in s.plain_gaps_ms],
        "step_reveal_ms": [g for s in steps for g in s.reveal_gaps_ms],
        # The units the critical path and the commit are judged in, taken in the same run.
        "bolt_rtt_ms": probes.bolt_round_trip(store, samples.round_trips),
        "write_tx_ms": probes.single_write(repo, samples.round_trips),
        "request_start_ms": [s.start_ms for s in steps],
        "request_finish_ms": [s.finish_ms for s in steps],
        "commit_ms": commit.commit_ms,
        "index_update_ms": commit.index_update_ms,
        "_index": {
            "tokens": cold.rendered.tokens,
            "budget": cold.rendered.budget,
            "collapsed_requests": len(cold.rendered.collapsed),
            "listed_states": len(cold.rendered.state_ids),
        },
    }


def measure_size(
    store: Store,
    states: int,
    repeats: int,
    samples: Samples,
    shape: BundleShape = DEFAULT_SHAPE,
    say: Say = print,
    build_progress: namespaces.Progress | None = None,
    run_done: Callable[[int], None] | None = None,
    prefix: str = namespaces.PREFIX,
    deadline: float | None = None,
) -> dict[str, Any]:
    """The probes' figures at `states`. A build still short of `states` at `deadline`
    (`time.monotonic()`) is kept for the next run; what it reached is measured and reported
    as `unfinished`."""
    built = namespaces.ensure(
        store, states, shape, build_progress, prefix=prefix, deadline=deadline
    )
    verb = "reused" if built.reused else f"built in {built.seconds:.1f}s"
    if built.complete:
        say(f"{built.repo.namespace}: {built.states} states, {verb}")
    else:
        say(f"{built.repo.namespace}: out of build time at {built.states:,} of {states:,} states")
        if not built.requests:
            return unfinished(built, states, shape)
    runs = []
    for r in range(repeats):
        runs.append(one_run(store, built, shape, samples, seed=r + 1))
        if run_done is not None:
            run_done(r + 1)
    figures = _size_report(built, runs)
    return figures if built.complete else figures | unfinished(built, states, shape)


def unfinished(built: namespaces.Built, states: int, shape: BundleShape) -> dict[str, Any]:
    """What a build that ran out of time reached, and why, for the report."""
    rate = len(built.commit_ms) / built.seconds if built.seconds else 0.0
    return {
        "unfinished": True,
        "namespace": built.repo.namespace,
        "states": built.states,
        "target_states": states,
        "build": {"seconds": round(built.seconds, 1), "requests_per_s": round(rate, 1)},
        "reason": f"the build commits {namespaces.requests_for(states, shape):,} requests "
        "one by one through the real commit path"
        + (f" ({rate:.1f} per second in this run)" if rate else "")
        + " and its time (--build-minutes) ran out; the namespace is kept and the next run "
        "goes on building it",
    }


def _size_report(built: namespaces.Built, runs: Sequence[dict]) -> dict[str, Any]:
    out: dict[str, Any] = {
        "namespace": built.repo.namespace,
        "states": built.states,
        "requests": built.requests,
        "build": {
            "reused": built.reused,
            "seconds": round(built.seconds, 1),
            "commit_ms": summary(built.commit_ms) if built.commit_ms else None,
        },
    }
    for key in runs[0]:
        if not key.startswith("_"):
            out[key] = across_runs([summary(run[key]) for run in runs])
    out["index"] = runs[-1]["_index"]
    out["peak_rss_mb"] = peak_rss_mb()
    return out
