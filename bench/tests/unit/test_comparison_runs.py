"""The comparison's baselines in both harnesses, offline: the scripted oracle and forgetful
agents on the fixtures and on tau-bench tasks whose plan must survive between requests, and a
scripted "llm" agent with a scripted memory model, every call counted where litellm delivers it.
(The FlowState ablations need Neo4j: tests/neo4j/test_ablations.py.)"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from flowstate.llm.scripted import ScriptedModel, unregister
from flowstate_bench import embedding as emb
from flowstate_bench import prices
from flowstate_bench.arena.data import CONFIGS, ArenaData
from flowstate_bench.arena.report import build_report
from flowstate_bench.arena.runner import ArenaRunner
from flowstate_bench.arena.runner import RunConfig as ArenaConfig
from flowstate_bench.costs import named_cost_header
from flowstate_bench.memory_models import memory_policy
from flowstate_bench.tau import cli as tau_cli
from flowstate_bench.tau.cli import tau
from flowstate_bench.tau.data import TauData
from flowstate_bench.tau.runner import RunConfig, TauRunner
from flowstate_bench.tau.strategies import TOOL_RESULT

FIXTURES = Path(__file__).parents[1] / "fixtures" / "memoryarena"
SHARED = ["embedding", "reasoningbank", "mem0-style"]
BASELINES = ["zipact", "zipact_bm25", *SHARED]
PLANNED = ["7", "8", "14", "17", "23"]  # airline tasks whose changes wait for a later "yes"


def _tau(data: TauData, agent: str) -> dict[str, list[Any]]:
    config = RunConfig(domain="airline", agent=agent, strategies=BASELINES, task_ids=PLANNED)
    out: dict[str, list[Any]] = {}
    for conv in TauRunner(config, data).run():
        out.setdefault(conv.strategy, []).append(conv)
    return out


@pytest.fixture(scope="module")
def tau_runs(tau_data: TauData) -> tuple[dict[str, list[Any]], dict[str, list[Any]]]:
    return _tau(tau_data, "oracle"), _tau(tau_data, "forgetful")


def test_tau_the_summaries_carry_the_plan_to_the_oracles_ceiling(tau_runs) -> None:
    oracle, _ = tau_runs
    for name in ("zipact", "zipact_bm25"):
        assert all(c.score.success for c in oracle[name]), name
        # one summary rewrite per turn, counted as the memory's call, not the agent's
        assert all(c.extra_calls == c.turns == c.memory_usage.calls for c in oracle[name])


def test_tau_no_memory_beats_the_oracle_and_forgetting_costs_every_strategy(tau_runs) -> None:
    oracle, forgetful = tau_runs
    for name in BASELINES:
        won = {c.task_id for c in oracle[name] if c.score.success}
        won_forgetting = {c.task_id for c in forgetful[name] if c.score.success}
        assert won_forgetting <= won, name
        assert not won_forgetting, name  # every one of these tasks needs its plan


def test_tau_shared_memories_spend_as_designed_per_write_and_read(tau_runs) -> None:
    oracle, _ = tau_runs
    for conv in oracle["embedding"]:
        # one embedding call per finished turn (write) and per later turn (read); no LLM
        assert conv.memory_usage.calls == 0
        assert conv.embedding_usage.calls == 2 * conv.turns - 1
    for conv in oracle["reasoningbank"]:
        assert conv.memory_usage.calls == 2 * conv.turns  # a judge and an extractor per turn
        assert conv.turns <= conv.embedding_usage.calls <= 2 * conv.turns
    for conv in oracle["mem0-style"]:
        assert conv.turns <= conv.memory_usage.calls <= 2 * conv.turns  # facts, then updates
        assert conv.embedding_usage.calls >= conv.turns
    for name in BASELINES:
        assert all(c.usage.calls > 0 and c.memory_usage.prompt_tokens >= 0 for c in oracle[name])


def _two_requests(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """A scripted user with two requests, and a scripted agent that acts once and answers."""
    system, text = messages[0]["content"], "\n".join(m["content"] for m in messages)
    if "User Simulation Guidelines" in system:
        said = sum(m["role"] == "assistant" for m in messages)
        lines = ["Please mark task_1 as completed.", "Is task_1 done now?", "Thanks ###STOP###"]
        return {"message": lines[min(said, 2)]}
    if "You maintain the working memory" in system:
        return {"summary": "task_1 completed"}
    if f"{TOOL_RESULT} update_task_status [ok]" in text or "Recalled from memory" in text:
        return {"type": "final", "answer": "Done: task_1 is completed."}
    arguments = {"task_id": "task_1", "status": "completed"}
    return {"type": "tool", "name": "update_task_status", "arguments": arguments}


def test_tau_llm_agent_each_memory_writes_and_reads_through_litellm(
    tau_data: TauData, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    agent = ScriptedModel.policy("comparison-tau-agent", _two_requests)
    memory = ScriptedModel.policy("comparison-tau-memory", memory_policy)
    # The spend estimate before the run embeds too (its offline oracle): count from its end.
    started: list[int] = []
    estimate = tau_cli._ask

    def ask(*a: Any) -> None:
        estimate(*a)
        started.append(emb.CALLS["hash-256"])

    monkeypatch.setattr(tau_cli, "_ask", ask)
    try:
        argv = ["--domain", "mock", "--task-id", "update_task_1", "--agent", "llm", "--yes"]
        argv += ["--model", agent.model, "--memory-model", memory.model]
        argv += ["--strategy", ",".join(BASELINES), "--data", str(tau_data.root)]
        result = CliRunner().invoke(tau, [*argv, "--out", str(tmp_path)])
        assert result.exit_code == 0, result.output
    finally:
        unregister(agent.name)
        unregister(memory.name)
    report = json.loads((tmp_path / "tau_report.json").read_text())
    spend = {s: v["spend"] for s, v in report["strategies"].items()}
    # the memory model saw exactly the calls the report charges to the memories
    assert len(memory.calls) == sum(spend[s]["memory_llm"]["calls"] for s in SHARED) > 0
    assert spend["reasoningbank"]["memory_llm"]["calls"] == 2 * 2  # two turns
    assert spend["embedding"]["memory_llm"]["calls"] == 0
    # the local embedding provider answered every embedding call the report counts
    counted = sum(spend[s]["memory_embedding"]["calls"] for s in SHARED)
    assert emb.CALLS["hash-256"] - started[0] == counted >= 3 * 2
    # the second request's prompt carried each memory's recall (the read path)
    recalled = [c for c in agent.calls if "# Recalled from memory" in str(c.messages)]
    assert len(recalled) >= len(SHARED)
    # zipact's summaries are the agent's model's calls, shown as memory spend
    assert spend["zipact"]["memory_llm"]["calls"] == 2 and spend["zipact"]["agent"]["calls"] >= 2
    markdown = (tmp_path / "tau_report.md").read_text()
    assert "| memory LLM tokens |" in markdown and "| mem0-style |" in markdown
    # prompt and completion apart, and the LLM calls priced at the two named models
    for s in BASELINES:
        agent_, memory_ = spend[s]["agent"], spend[s]["memory_llm"]
        assert agent_["completion_tokens"] > 0
        assert agent_["tokens"] == agent_["prompt_tokens"] + agent_["completion_tokens"]
        for model in prices.MODELS:
            p = prices.price(model)
            expected = sum(part["prompt_tokens"] * p["input"]
                           + part["completion_tokens"] * p["output"]
                           for part in (agent_, memory_))  # fmt: skip
            assert spend[s]["llm_at_prices_usd"][model] == pytest.approx(expected, abs=2e-6)
    assert f"| {named_cost_header()} |" in markdown


@pytest.fixture(scope="module")
def arena_oracle(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    config = ArenaConfig(
        configs=list(CONFIGS),
        strategies=[*BASELINES, "none"],
        product_db=FIXTURES / "product_db",
        travel_db=FIXTURES / "travel_db",
        cache_dir=tmp_path_factory.mktemp("cache"),
    )
    runner = ArenaRunner(config, ArenaData(FIXTURES))
    runs = runner.run()
    return {
        "runs": runs,
        "report": build_report(config, runs, runner.resources.judge, runner.replays()),
    }


def test_arena_summaries_reach_the_oracles_ceiling(arena_oracle) -> None:
    per = arena_oracle["report"]["configs"]
    for config in CONFIGS:
        for name in ("zipact", "zipact_bm25"):
            assert per[config][name]["sr"] == 1.0 and per[config][name]["ps"] == 1.0, config
        for m in per[config].values():  # the whole bill: prompt and completion, both counted
            assert m["completion_tokens"] > 0
            assert m["tokens"] == m["prompt_tokens"] + m["completion_tokens"]


def test_arena_a_subtask_passes_exactly_when_its_facts_were_recalled(arena_oracle) -> None:
    for run in arena_oracle["runs"]:
        for sub in run.subtasks:
            if sub.found is not None:  # it needed earlier results
                assert sub.passed is sub.found, (run.config, run.strategy, run.task_id, sub.k)
            else:
                assert sub.passed, (run.config, run.strategy, run.task_id, sub.k)


def test_arena_every_memory_scores_at_least_no_memory(arena_oracle) -> None:
    per = arena_oracle["report"]["configs"]
    for config in CONFIGS:
        for name in BASELINES:
            assert per[config][name]["ps"] >= per[config]["none"]["ps"], (config, name)


def test_arena_embedding_is_replayed_and_llm_memories_are_not(arena_oracle) -> None:
    per = arena_oracle["report"]["configs"]
    for config in CONFIGS:
        replayed = per[config]["embedding"]["replay_recall_at_k"]
        assert replayed is not None and any(r is not None for r in replayed)
        assert per[config]["reasoningbank"]["replay_recall_at_k"] is None
    shop = per["bundled_shopping"]
    assert shop["embedding"]["embedding_calls"] > 0 and shop["embedding"]["memory_tokens"] == 0
    assert (
        shop["reasoningbank"]["extra_llm_calls"]
        == shop["reasoningbank"]["spend"]["memory_llm"]["calls"]
    )


def test_strategy_all_names_every_strategy_and_aliases_are_accepted() -> None:
    import click

    from flowstate_bench.arena.runner import STRATEGIES as ARENA
    from flowstate_bench.options import strategy_list
    from flowstate_bench.strategy_names import ALIASES, FLOWSTATE_VARIANTS, SHARED_MEMORIES
    from flowstate_bench.tau.strategies import STRATEGIES as TAU

    parse = strategy_list(TAU, tuple(ALIASES))
    ctx = click.Context(tau)
    assert parse(ctx, None, "all") == list(TAU)  # type: ignore[arg-type]
    assert parse(ctx, None, "summary,zipact_bm25") == ["summary", "zipact_bm25"]  # type: ignore[arg-type]
    with pytest.raises(click.BadParameter, match="choose from all,"):
        parse(ctx, None, "letta")  # type: ignore[arg-type]
    comparison = {*FLOWSTATE_VARIANTS, "full", "bm25", "zipact", "zipact_bm25", *SHARED_MEMORIES}
    assert set(TAU) == comparison and comparison <= set(ARENA)
