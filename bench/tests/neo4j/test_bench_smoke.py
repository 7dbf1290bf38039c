"""`flowstate bench` end to end on a tiny plan against the real Neo4j (no model)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from rich.console import Console

from flowstate.store import Repository, Store
from flowstate_bench import namespaces
from flowstate_bench.engine_suite import Samples
from flowstate_bench.runner import Plan, run
from flowstate_bench.synthetic import BundleShape, request_bundle

pytestmark = pytest.mark.neo4j

SHAPE = BundleShape(states=10, relations=30, observations=4, evidence=4)
TINY = Samples(step_requests=2, commits=2, reveals=3, deltas=5, renders=3, max_cold_index=1)


def test_namespace_is_built_through_commits_then_reused(store: Store, namespace: str) -> None:
    first = namespaces.ensure(store, 60, SHAPE, prefix=namespace)
    try:
        assert not first.reused and first.requests == 6 and len(first.commit_ms) == 6
        assert first.repo.counts().nodes == 6 * (1 + 10 + 4)
        assert namespaces.ensure(store, 60, SHAPE, prefix=namespace).reused
        first.repo.commit(request_bundle(first.repo.namespace, 7, SHAPE))  # a probe's leftover
        first.repo.forget_request("r6")  # an interrupted build goes on from r5
        first.repo.save_draft("r8", "{}", owner="w", first=True)
        again = namespaces.ensure(store, 60, SHAPE, prefix=namespace)
        assert not again.reused and len(again.commit_ms) == 1
        assert [r.id for r in again.repo.history()] == [f"r{n}" for n in range(1, 7)]
        assert again.repo.open_requests() == []
        assert namespaces.ensure(store, 60, SHAPE, prefix=namespace).reused
        namespaces.forget(again.repo, 10**6)  # the request-by-request path of huge namespaces
        assert again.repo.counts().nodes == 0
    finally:
        first.repo.forget_namespace(force=True)


def test_tiny_bench_writes_the_report(store: Store, namespace: str, tmp_path: Path) -> None:
    plan = Plan(sizes=(100,), repeats=2, samples=TINY, depths=(3, 6), prefix=namespace,
                shape=SHAPE)  # fmt: skip
    result = run(store, plan, tmp_path, Console(quiet=True))
    saved = json.loads((tmp_path / "report.json").read_text())
    size = saved["engine"]["100"]
    for key in ("step_ms", "commit_ms", "reveal_ms", "index_render_ms", "index_update_ms"):
        assert set(size[key]) >= {"p50", "p95", "p99"} and size[key]["runs"] == 2
    # 2 runs x 2 requests x 7 steps: 3 with a reveal of 8, 3 with none, 1 opening a request
    assert size["step_ms"]["samples"] == 2 * 2 * 7 and size["peak_rss_mb"] > 0
    assert size["step_plain_ms"]["samples"] == size["step_reveal_ms"]["samples"] == 2 * 2 * 3
    assert size["bolt_rtt_ms"]["p50"] > 0 and size["write_tx_ms"]["p50"] > 0
    six = saved["tokens"]["by_depth"]["6"]
    assert six["flowstate"]["recall"] == 1.0 and six["flowstate"]["extra_llm_calls"] == 0
    assert six["full_context"]["ratio_to_full_context"] == 1.0
    assert six["flowstate"]["memory_write_calls"] == 0
    assert (
        six["rolling_summary"]["extra_llm_calls"]
        == six["rolling_summary"]["memory_write_calls"]
        == 1
    )
    judged = {t["target"]: t for t in result["targets"]}
    # The commit goal is judged on this run's own figures: p50 at most 10 write transactions.
    commit, write_tx = size["commit_ms"]["p50"], size["write_tx_ms"]["p50"]
    assert judged["commit_write_tx"]["status"] == ("met" if commit <= 10 * write_tx else "missed")
    p95 = size["commit_ms"]["p95"]
    assert judged["commit_write_tx"]["figure"] == (
        f"{commit / write_tx:.1f}x: {commit} ms (p95 {p95} ms) against {write_tx} ms at 100"
    )
    assert judged["tokens_depth_50"]["status"] == "not measured"  # depths 3 and 6 only
    cli = saved["cli"]
    assert cli["runs"] == plan.cli_runs and cli["median_ms"]["flowstate --help"] > 0
    assert cli["ratio"] == round(
        cli["median_ms"]["flowstate --help"] / cli["median_ms"]["python -c 'import click'"], 2
    )
    assert saved["scale"] is None  # no 10k and 1M namespaces in this plan
    assert (tmp_path / "report.md").read_text().startswith("# FlowState benchmark")
    assert (tmp_path / "engine_latency.png").exists()
    # measured requests were forgotten, and so was the namespace (no --keep)
    assert Repository(store, namespaces.namespace_for(100, namespace)).counts().nodes == 0


def test_a_build_out_of_time_is_kept_and_reported(
    store: Store, namespace: str, tmp_path: Path
) -> None:
    plan = Plan(sizes=(100,), repeats=1, samples=TINY, depths=(), prefix=namespace, shape=SHAPE,
                cli_runs=0, build_minutes=0)  # fmt: skip
    repo = Repository(store, namespaces.namespace_for(100, namespace))
    try:
        repo.commit(request_bundle(repo.namespace, 1, SHAPE))  # an earlier, interrupted build
        result = run(store, plan, tmp_path, Console(quiet=True))
        assert result["engine"] == {} and result["scale"] is None
        size = result["unfinished"]["100"]
        assert size["states"] == 10 and size["target_states"] == 100
        assert "the next run goes on building it" in size["reason"]
        assert size["step_ms"]["runs"] == 1  # what was reached is measured
        assert (
            "**100 not measured**: 10 of 100 states built" in (tmp_path / "report.md").read_text()
        )
        assert [r.id for r in repo.history()] == ["r1"]  # kept, although --keep was not given
        again = namespaces.ensure(store, 100, SHAPE, prefix=namespace)
        assert again.complete and len(again.commit_ms) == 9  # the next build goes on from r1
    finally:
        repo.forget_namespace(force=True)
