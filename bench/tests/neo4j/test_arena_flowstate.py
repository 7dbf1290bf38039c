"""MemoryArena with the real FlowState engine on a real Neo4j: the scripted oracle records each
subtask's result as a state and opens the ones a later subtask needs; the forgetful agent does
not, and fails exactly the dependent subtasks."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from flowstate.llm.scripted import ScriptedModel, unregister
from flowstate.store import Repository, Store
from flowstate_bench.arena.data import CONFIGS, ArenaData
from flowstate_bench.arena.report import build_report
from flowstate_bench.arena.runner import ArenaRunner, RunConfig, TaskRun

pytestmark = pytest.mark.neo4j

FIXTURES = Path(__file__).parents[1] / "fixtures" / "memoryarena"


def _runner(store: Store, tmp: Path, agent: str, **extra: Any) -> ArenaRunner:
    config = RunConfig(
        configs=extra.pop("configs", list(CONFIGS)),
        strategies=["flowstate"],
        agent=agent,
        product_db=FIXTURES / "product_db",
        travel_db=FIXTURES / "travel_db",
        cache_dir=tmp / "cache",
        **extra,
    )
    return ArenaRunner(config, ArenaData(FIXTURES), store)


def _recall(runs: list[TaskRun], config: str) -> list[float | None]:
    """The recall@k of a memory that delivers every needed fact: 1.0 at each depth where
    some task of the config needs facts, None elsewhere."""
    chosen = [r for r in runs if r.config == config]
    tasks = {t.id: t for t in ArenaData(FIXTURES).tasks(config)}
    needed = set()
    for run in chosen:
        facts = tasks[run.task_id].facts
        assert facts is not None
        needed |= {k for k, f in facts.items() if f}
    longest = max(len(r.subtasks) for r in chosen)
    expected = [1.0 if k in needed else None for k in range(1, longest + 1)]
    assert 1.0 in expected, config  # some depth needs facts: the figure can be wrong
    return expected


def _forgotten(store: Store, runner: ArenaRunner) -> bool:
    return all(Repository(store, ns).counts().nodes == 0 for ns in runner.namespaces)


def test_oracle_reaches_sr_1_on_every_config_and_forgetful_fails_dependents(
    store: Store, tmp_path: Path
) -> None:
    runner = _runner(store, tmp_path, "oracle")
    runs = runner.run()
    report = build_report(runner.config, runs, runner.resources.judge)
    for config in CONFIGS:
        m = report["configs"][config]["flowstate"]
        assert m["sr"] == 1.0 and m["ps"] == 1.0, config
        assert m["recall_at_k"] == _recall(runs, config), config
    assert len(runner.namespaces) == len(runs) == 8  # one namespace per task
    assert _forgotten(store, runner)

    forgetful = _runner(store, tmp_path, "forgetful")
    for run in forgetful.run():
        task = next(t for t in ArenaData(FIXTURES).tasks(run.config) if t.id == run.task_id)
        assert task.facts is not None
        for k, sub in enumerate(run.subtasks, 1):
            assert sub.passed is not bool(task.facts.get(k)), (run.config, run.task_id, k)
    assert _forgotten(store, forgetful)


# Makes each answer's content longer than an index line shows, so it is opened by access.
DERIVATION = ", derived step by step from the problem's background"


def _physics(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """A scripted FlowState model: it records each answer as a state, and answers the later
    questions only once it has opened the state of the earlier answer."""
    text = "\n".join(str(m["content"]) for m in messages)
    answers = {
        "Give the angular frequency": "$\\sqrt{k/m}$",
        "give the energy levels": "$\\hbar\\sqrt{k/m}(n+\\frac{1}{2})$",
        "partition function": "$\\frac{1}{2\\sinh(\\hbar\\sqrt{k/m}/(2k_BT))}$",
    }
    request = text.split("# User request", 1)[1]
    key = next(k for k in answers if k in request)
    if key != "Give the angular frequency" and "content: answer" not in text:
        ids = [line.split()[0] for line in text.splitlines() if "[artifact] earlier answer" in line]
        return {"access": ids[-1:], "action": None}
    delta = [
        {"op": "add", "key": "answer", "category": "artifact", "summary": "earlier answer",
         "content": f"answer {answers[key]}{DERIVATION}"}
    ]  # fmt: skip
    return {"delta": delta, "action": {"type": "final", "answer": answers[key], "summary": key}}


def test_llm_agent_through_litellm_drives_the_flowstate_engine(
    store: Store, tmp_path: Path
) -> None:
    model = ScriptedModel.policy("arena-neo4j-physics", _physics)
    try:
        runner = _runner(
            store, tmp_path, "llm", configs=["formal_reasoning_phys"], model=model.model
        )
        runs = runner.run()
    finally:
        unregister(model.name)
    assert [s.passed for s in runs[0].subtasks] == [True, True, True]
    # one call for the first answer; an access step and an answer for each later one
    assert runs[0].usage.calls == 1 + 2 * 2
    assert _forgotten(store, runner)
