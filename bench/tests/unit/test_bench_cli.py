"""`flowstate bench` options and the plans they make (no database needed)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from click.testing import CliRunner

from flowstate.cli.app import main
from flowstate.engine.index import HistoricalIndex
from flowstate.models import IndexRequest, IndexState
from flowstate_bench.engine_suite import Samples
from flowstate_bench.runner import FULL_SIZES, MILLION, QUICK_SIZES, Plan
from flowstate_bench.step_probe import ACCESS, REVEALING, STEPS, plan_request
from flowstate_bench.synthetic import request_bundle


def test_help_documents_every_option() -> None:
    result = CliRunner().invoke(main, ["bench", "--help"])
    assert result.exit_code == 0
    for option in ("--quick", "--out", "--million", "--repeats", "--keep", "Example:"):
        assert option in result.output


def test_repeats_must_be_positive() -> None:
    result = CliRunner().invoke(main, ["bench", "--repeats", "0"])
    assert result.exit_code == 2


def test_plans() -> None:
    quick = Plan.from_options(quick=True, million=False, repeats=None, keep=False)
    assert quick.sizes == QUICK_SIZES and quick.repeats == 3 and quick.notes
    full = Plan.from_options(quick=False, million=True, repeats=7, keep=True)
    assert full.sizes == (*FULL_SIZES, MILLION) and full.repeats == 7 and full.keep
    assert full.command == "flowstate bench --million --repeats 7 --build-minutes 40"
    assert full.build_minutes == 40 and quick.build_minutes is None
    limited = Plan.from_options(quick=True, million=False, repeats=None, keep=False,
                                build_minutes=0.5)  # fmt: skip
    assert limited.build_minutes == 0.5 and limited.command.endswith("--build-minutes 0.5")


def test_step_requests_thin_out_at_a_million_states() -> None:
    samples = Samples(step_requests=20)
    assert [samples.step_requests_at(n) for n in (1_000, 100_000, 1_000_000)] == [20, 20, 2]
    assert Samples(step_requests=1).step_requests_at(1_000_000) == 1


def _index(requests: int) -> HistoricalIndex:
    entries = []
    for seq in range(1, requests + 1):
        b = request_bundle("ns", seq)
        states = [IndexState(id=s.id, category=s.category, summary=s.summary) for s in b.states]
        entries.append(IndexRequest(id=b.request.id, seq=seq, summary=b.request.summary,
                                    states=states))  # fmt: skip
    return HistoricalIndex(entries, 2_000)


def test_step_plan_opens_a_collapsed_request_then_reveals_its_states() -> None:
    index = _index(6)
    rendered = index.render()
    by_id = {r.id: r.states for r in index.requests}
    plan = plan_request(rendered, by_id.__getitem__, random.Random(1))
    assert len(plan) == STEPS and plan[-1].action.type == "final"
    assert plan[0].access[0] in rendered.collapsed
    opened = {s.id for s in by_id[plan[0].access[0]]}
    revealed: list[str] = []
    for number, step in enumerate(plan[1:-1], start=2):
        # even steps reveal 8 of the opened request's states, odd ones nothing
        assert len(step.access) == (ACCESS if number in REVEALING else 0)
        assert set(step.access) <= opened and not set(step.access) & set(revealed)
        revealed += step.access
        assert len(step.delta) == 10
    assert len(revealed) == ACCESS * len(REVEALING)


FIXTURES = Path(__file__).parents[1] / "fixtures" / "memoryarena"


@pytest.mark.parametrize(
    ("args", "code", "said"),
    [
        (["--agent", "llm", "--model", "no-such-model", "--strategy", "full"], 1, "refused"),
        (["--strategy", "embedding", "--embedding-model", "flowstate-embed/hash-x"], 2, "hash-<n>"),
        (["--strategy", "embedding", "--embedding-model", "no-such-embedding-model"], 1, "refused"),
    ],
)
def test_a_bad_model_fails_the_arena_run_in_one_line(tmp_path, args, code, said) -> None:
    """An unknown model fails the run (it used to score every task 0 and exit 0)."""
    result = CliRunner().invoke(
        main,
        ["bench", "arena", "--config", "formal_reasoning_phys", "--data", str(FIXTURES),
         "--out", str(tmp_path), "--yes", *args],
    )  # fmt: skip
    assert result.exit_code == code, result.output
    assert said in result.output and "Traceback" not in result.output
