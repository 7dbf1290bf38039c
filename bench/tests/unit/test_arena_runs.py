"""MemoryArena end to end on the fixtures, offline: the scripted oracle and forgetful agents
and a scripted "llm" through litellm, with the report's numbers checked by hand."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from flowstate.llm.scripted import ScriptedModel, unregister
from flowstate.models.records import Usage
from flowstate_bench import embedding as emb
from flowstate_bench.arena.cli import arena
from flowstate_bench.arena.data import CONFIGS, ArenaData
from flowstate_bench.arena.memories import MEMORIES
from flowstate_bench.arena.report import build_report, write_report
from flowstate_bench.arena.runner import ArenaRunner, RunConfig, TaskRun
from flowstate_bench.memory_models import memory_policy
from flowstate_bench.strategy_names import SHARED_MEMORIES

FIXTURES = Path(__file__).parents[1] / "fixtures" / "memoryarena"
BASELINES = ["full", "bm25", "summary", "none", "plans"]
COMPARED = ["zipact", "zipact_bm25", *SHARED_MEMORIES]


def _run(tmp: Path, agent: str, strategies: list[str]):
    config = RunConfig(
        configs=list(CONFIGS),
        strategies=strategies,
        agent=agent,
        product_db=FIXTURES / "product_db",
        travel_db=FIXTURES / "travel_db",
        cache_dir=tmp / "cache",
    )
    runner = ArenaRunner(config, ArenaData(FIXTURES))
    runs = runner.run()
    return runs, build_report(config, runs, runner.resources.judge, runner.replays())


def _dependent(run: TaskRun) -> list[int]:
    facts = ArenaData(FIXTURES).tasks(run.config)
    task = next(t for t in facts if t.id == run.task_id)
    assert task.facts is not None
    return [k for k, f in task.facts.items() if f]


def _recall(runs: list[TaskRun], config: str, value: float) -> list[float | None]:
    """The recall@k a memory that delivers every needed fact (1.0) or none (0.0) scores on a
    config's runs: `value` at each depth where some task needs facts, None elsewhere."""
    chosen = [r for r in runs if r.config == config and r.strategy == "full"]
    longest = max(len(r.subtasks) for r in chosen)
    needed = {k for r in chosen for k in _dependent(r)}
    expected = [value if k in needed else None for k in range(1, longest + 1)]
    assert value in expected, config  # some depth needs facts: the figure can be wrong
    return expected


@pytest.fixture(scope="module")
def oracle(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[TaskRun], dict[str, Any]]:
    return _run(tmp_path_factory.mktemp("oracle"), "oracle", BASELINES)


def test_oracle_full_context_passes_every_subtask(oracle) -> None:
    runs, report = oracle
    for config in CONFIGS:
        m = report["configs"][config]["full"]
        assert m["sr"] == 1.0 and m["ps"] == 1.0, config
        assert m["recall_at_k"] == _recall(runs, config, 1.0), config
    assert all(all(r.passed) for r in runs if r.strategy == "full")


def test_oracle_without_memory_fails_every_dependent_subtask(oracle) -> None:
    runs, report = oracle
    for run in (r for r in runs if r.strategy == "none"):
        for k in _dependent(run):
            assert not run.subtasks[k - 1].passed, (run.config, run.task_id, k)
            assert run.subtasks[k - 1].found is False
    for config in CONFIGS:
        assert report["configs"][config]["none"]["sr"] == 0.0


def test_the_recall_replay_full_recalls_every_fact_and_none_nothing(oracle) -> None:
    runs, report = oracle
    for config in CONFIGS:
        per = report["configs"][config]
        assert per["full"]["replay_recall_at_k"] == _recall(runs, config, 1.0), config
        assert per["none"]["replay_recall_at_k"] == _recall(runs, config, 0.0), config
        assert per["summary"]["replay_recall_at_k"] is None  # needs a model: not replayed
    # one short gold chunk per step: BM25 finds each purchase, unlike in the live run where
    # every turn of a session is a chunk
    assert report["configs"]["bundled_shopping"]["bm25"]["replay_recall_at_k"][1:] == [1.0] * 5


def test_memoryarena_none_keeps_travel_plans_only(oracle) -> None:
    _, report = oracle
    plans = {c: report["configs"][c]["plans"] for c in CONFIGS}
    assert plans["group_travel_planner"]["sr"] == 1.0  # earlier plans are in its prompt
    for config in ("bundled_shopping", "formal_reasoning_math", "formal_reasoning_phys"):
        assert plans[config]["ps"] == report["configs"][config]["none"]["ps"]


def test_report_numbers_by_hand(oracle) -> None:
    _, report = oracle
    shop = report["configs"]["bundled_shopping"]["none"]
    # E0: steps 1-2 need nothing; B0 and Beauty0: only step 1. PS = (2/6 + 1/6 + 1/6) / 3.
    assert shop["ps"] == pytest.approx(2 / 9)
    assert shop["sr_at_k"] == pytest.approx([1.0, 1 / 3, 0, 0, 0, 0])
    assert shop["nauc"] == pytest.approx(((1 + 1 / 3) / 2 + (1 / 3) / 2) / 5)
    assert shop["drop_rate"] == 1.0
    assert 0 < shop["ps_graded"] < 1  # wrong buys still earn attribute credit
    math = report["configs"]["formal_reasoning_math"]["none"]
    assert math["ps"] == pytest.approx((1 / 4 + 1 / 3) / 2)  # only each first question
    # SR@k = 1, 0, 0 (0 at k = 4 too); K = 3, the shortest task: ((1 + 0) / 2 + 0) / 2
    assert math["nauc_min"] == pytest.approx(0.25)
    travel = report["configs"]["group_travel_planner"]
    assert travel["full"]["sps"] == 1.0 and travel["full"]["ps_code"] == 1.0
    assert travel["none"]["sps"] == 0.0 and travel["none"]["ps_code"] == 0.0
    summary = report["configs"]["bundled_shopping"]["summary"]
    # one rewrite before each later subtask (shopping writes nothing before subtask 1)
    assert summary["extra_llm_calls"] == 3 * 5 and summary["memory_tokens"] > 0
    assert report["configs"]["bundled_shopping"]["full"]["extra_llm_calls"] == 0
    assert report["avg_sr"]["full"] == 1.0 and report["avg_sr"]["none"] == 0.0
    formal = report["domains"]["formal"]["full"]
    assert formal["sr_at_k"] == [1.0] * 4 and formal["nauc"] == 1.0
    assert report["configs"]["bundled_shopping"]["none"]["token_reduction_vs_full"] > 0


def test_the_forgetful_agent_fails_dependent_subtasks_even_with_full_context(tmp_path) -> None:
    runs, report = _run(tmp_path, "forgetful", ["full"])
    for run in runs:
        dependent = _dependent(run)
        for k, sub in enumerate(run.subtasks, 1):
            assert sub.passed is (k not in dependent), (run.config, run.task_id, k)
    assert report["configs"]["formal_reasoning_phys"]["full"]["ps"] == pytest.approx(1 / 3)


def test_the_report_files(oracle, tmp_path) -> None:
    _, report = oracle
    path = write_report(report, tmp_path)
    text = path.read_text()
    assert "| full (ours, agent oracle) | 1.00 | 1.00 |" in text
    assert "| BM25 (published) | 0.00 | 0.56 | 0.00 | 0.01 | 0.45 |" in text
    assert (
        json.loads((tmp_path / "arena_report.json").read_text())["run"]["search_engine"] == "bm25s"
    )
    for domain in ("shopping", "travel", "formal"):
        png = tmp_path / f"arena_sr_at_k_{domain}.png"
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def _naive(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """A scripted model that plays without memory: it buys the first hit for a TV search,
    knows one physics answer, and keeps whatever it is told as its summary."""
    system = str(messages[0]["content"])
    # the latest message, without the memory block a session's first prompt carries
    last = str(messages[-1]["content"]).rsplit("</memory_context>\nUser: ", 1)[-1]
    if "You keep the memory" in system:
        return {"summary": last[-200:]}
    if "careful math solver" in system or "mathematically equivalent" in system:
        return {"answer": "yes"}
    if "Give the angular frequency" in last:
        return {"type": "final", "answer": "$\\sqrt{k/m}$"}
    if "### PROBLEM" in last:
        return {"type": "tool", "name": "reasoning", "arguments": {"input": "derive it"}}
    if "TOOL RESULT reasoning" in last:
        return {"type": "final", "answer": "unknown"}
    if "WEBSHOPPLUS TASK COMPLETED" in last:
        return {"type": "final", "answer": "bought"}
    if last.endswith("Buy Now"):
        return {"type": "tool", "name": "click", "arguments": {"target": "Buy Now"}}
    if "Total results" in last:
        asin = re.findall(r"B0FX\d{6}", last)[0]
        return {"type": "tool", "name": "click", "arguments": {"target": asin}}
    return {"type": "tool", "name": "search", "arguments": {"keywords": "lumora 75 inch 4k tv"}}


def _cli(args: list[str], tmp: Path) -> dict[str, Any]:
    base = ["--data", str(FIXTURES), "--out", str(tmp), "--cache-dir", str(tmp / "cache")]
    base.append("--yes")
    result = CliRunner().invoke(arena, [*args, *base])
    assert result.exit_code == 0, result.output
    return json.loads((tmp / "arena_report.json").read_text())


def test_llm_agent_end_to_end_through_litellm(tmp_path) -> None:
    model = ScriptedModel.policy("arena-unit-naive", _naive)
    try:
        args = ["--agent", "llm", "--model", model.model, "--strategy", "full,summary"]
        shop = _cli(
            [*args, "--config", "bundled_shopping", "--task-id", "0", "--product-db",
             str(FIXTURES / "product_db")],
            tmp_path / "shop",
        )  # fmt: skip
        phys = _cli([*args, "--config", "formal_reasoning_phys"], tmp_path / "phys")
        judged = _cli(
            [*args, "--config", "formal_reasoning_phys", "--judge-model", model.model],
            tmp_path / "judged",
        )
    finally:
        unregister(model.name)
    m = shop["configs"]["bundled_shopping"]["full"]
    assert m["ps"] == pytest.approx(1 / 6) and m["sr"] == 0.0  # only the TV was right
    assert m["tokens"] > 0 and m["llm_calls"] >= 6 * 4
    assert shop["configs"]["bundled_shopping"]["summary"]["extra_llm_calls"] == 5
    p = phys["configs"]["formal_reasoning_phys"]["full"]
    assert phys["run"]["judge"] == "exact-match"
    assert p["ps"] == pytest.approx(1 / 3) and p["sr"] == 0.0
    # the reasoning tool's sub-calls count as task-agent calls: 2 per later question
    assert p["llm_calls"] == 1 + 2 * 3
    assert judged["run"]["judge"] == f"llm:{model.model}" and judged["run"]["judge_tokens"] > 0
    assert phys["run"]["judge_tokens"] == 0
    assert judged["configs"]["formal_reasoning_phys"]["full"]["sr"] == 1.0  # the judge said yes


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--config", "bundled_shopping"], "needs --product-db"),
        (["--config", "formal_reasoning_math", "--tasks", "1", "--task-id", "1"], "not both"),
        (
            ["--config", "formal_reasoning_math", "--agent", "llm", "--strategy", "full"],
            "needs --model",
        ),
        (["--config", "formal_reasoning_math", "--strategy", "mem9"], "choose from"),
        (
            ["--config", "formal_reasoning_math", "--strategy", "full", "--task-id", "99"],
            "no tasks",
        ),
    ],
)
def test_cli_errors_are_clear(args: list[str], message: str, tmp_path, monkeypatch) -> None:
    monkeypatch.delenv("FLOWSTATE_PRODUCT_DB", raising=False)
    strategy = [] if "--strategy" in args else ["--strategy", "full"]
    result = CliRunner().invoke(
        arena, [*args, *strategy, "--data", str(FIXTURES), "--out", str(tmp_path)]
    )
    assert result.exit_code != 0
    assert message in result.output


class LastChunk:
    """A memory written for this test: it recalls only the latest chunk."""

    name = "last"

    def __init__(self) -> None:
        self.usage, self.extra_calls, self.chunks = Usage(), 0, ["none yet"]

    def add(self, chunk: str) -> None:
        self.chunks.append(chunk)

    def context(self, query: str) -> str:
        return self.chunks[-1]


def test_a_new_memory_is_one_registry_entry(tmp_path, monkeypatch) -> None:
    monkeypatch.setitem(MEMORIES, "last", lambda client: LastChunk())
    config = RunConfig(configs=["formal_reasoning_math"], strategies=["last"])
    runs = ArenaRunner(config, ArenaData(FIXTURES)).run()
    # M1: q3 needs answer 1 (the latest is 2), q4 needs 2 and 3 (the latest is 3);
    # M2 is a plain chain, each question needing only the one before.
    assert [r.passed for r in runs] == [[True, True, False, False], [True, True, True]]


def test_a_failing_model_fails_its_subtask_and_the_run_goes_on(tmp_path) -> None:
    def flaky(messages: list[dict[str, Any]]) -> dict[str, Any]:
        if "energy levels" in str(messages[-1]["content"]).rsplit("User: ", 1)[-1]:
            raise RuntimeError("provider down")
        return {"type": "final", "answer": "$\\sqrt{k/m}$"}

    model = ScriptedModel.policy("arena-unit-flaky", flaky)
    try:
        config = RunConfig(
            configs=["formal_reasoning_phys"], strategies=["full"], agent="llm", model=model.model
        )
        runs = ArenaRunner(config, ArenaData(FIXTURES)).run()
    finally:
        unregister(model.name)
    assert [s.passed for s in runs[0].subtasks] == [True, False, False]
    assert runs[0].subtasks[1].answer.startswith("[model failed:")


def test_arena_llm_agent_each_memory_writes_and_reads_through_litellm(tmp_path: Path) -> None:
    agent = ScriptedModel.policy("comparison-arena-agent", _naive)
    memory = ScriptedModel.policy("comparison-arena-memory", memory_policy)
    embedded = emb.CALLS["hash-256"]
    try:
        argv = ["--config", "bundled_shopping", "--task-id", "0", "--agent", "llm", "--yes"]
        argv += ["--model", agent.model, "--memory-model", memory.model]
        argv += ["--strategy", ",".join(COMPARED), "--data", str(FIXTURES)]
        argv += ["--product-db", str(FIXTURES / "product_db"), "--out", str(tmp_path)]
        result = CliRunner().invoke(arena, [*argv, "--cache-dir", str(tmp_path / "cache")])
        assert result.exit_code == 0, result.output
    finally:
        unregister(agent.name)
        unregister(memory.name)
    per = json.loads((tmp_path / "arena_report.json").read_text())["configs"]["bundled_shopping"]
    assert (
        len(memory.calls)
        == sum(per[s]["spend"]["memory_llm"]["calls"] for s in SHARED_MEMORIES)
        > 0
    )
    # the local provider answered every counted call (and the recall replay's, not counted)
    assert emb.CALLS["hash-256"] - embedded > sum(
        per[s]["embedding_calls"] for s in SHARED_MEMORIES
    )
    for name in SHARED_MEMORIES:
        # every later session's prompt carried what the memory recalled (the read path)
        assert per[name]["embedding_calls"] >= 5, name
    assert per["zipact"]["extra_llm_calls"] == 5  # a rewrite before each later session
    assert "Spend side by side" in (tmp_path / "arena_report.md").read_text()
