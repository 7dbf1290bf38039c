"""FlowState and its two ablations on a real Neo4j, in both harnesses, with the scripted oracle
and forgetful agents: FlowState and FlowState without PSA reach the oracle's ceiling; without
ISU the rule-made states carry no typed result, so every subtask that needs one fails."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from flowstate.store import Repository, Store
from flowstate_bench.arena.data import CONFIGS, ArenaData
from flowstate_bench.arena.report import build_report
from flowstate_bench.arena.runner import ArenaRunner
from flowstate_bench.arena.runner import RunConfig as ArenaConfig
from flowstate_bench.strategy_names import FLOWSTATE_VARIANTS
from flowstate_bench.tau.data import TauData
from flowstate_bench.tau.runner import RunConfig, TauRunner

pytestmark = pytest.mark.neo4j

FIXTURES = Path(__file__).parents[1] / "fixtures" / "memoryarena"
PLANNED = ["7", "8", "14", "17", "23"]  # airline tasks whose changes wait for a later "yes"


def _forgotten(store: Store, namespaces) -> bool:  # noqa: ANN001
    return all(Repository(store, ns).counts().nodes == 0 for ns in namespaces)


def test_tau_ablations_against_the_oracle_and_the_forgetful_agent(
    store: Store, tau_data: TauData
) -> None:
    runner = TauRunner(
        RunConfig(domain="airline", strategies=list(FLOWSTATE_VARIANTS), task_ids=PLANNED),
        tau_data,
        store,
    )
    won: dict[str, set[str]] = {v: set() for v in FLOWSTATE_VARIANTS}
    for conv in runner.run():
        if conv.score.success:
            won[conv.strategy].add(conv.task_id)
    assert won["flowstate"] == won["flowstate_no_psa"] == set(PLANNED)
    assert won["flowstate_no_isu"] == set()  # the plan was never a state of its own
    assert len(runner.namespaces) == 3 * len(PLANNED)  # one per strategy and task
    assert _forgotten(store, runner.namespaces)

    forgetful = TauRunner(
        RunConfig(
            domain="airline", agent="forgetful", strategies=list(FLOWSTATE_VARIANTS),
            task_ids=PLANNED,
        ),
        tau_data,
        store,
    )  # fmt: skip
    assert not any(c.score.success for c in forgetful.run())
    assert _forgotten(store, forgetful.namespaces)


def test_arena_ablations_against_the_oracle(store: Store, tmp_path: Path) -> None:
    config = ArenaConfig(
        configs=list(CONFIGS),
        strategies=list(FLOWSTATE_VARIANTS),
        product_db=FIXTURES / "product_db",
        travel_db=FIXTURES / "travel_db",
        cache_dir=tmp_path / "cache",
    )
    runner = ArenaRunner(config, ArenaData(FIXTURES), store)
    runs = runner.run()
    report = build_report(config, runs, runner.resources.judge)
    for name in CONFIGS:
        for variant in ("flowstate", "flowstate_no_psa"):
            m = report["configs"][name][variant]
            assert m["sr"] == 1.0 and m["ps"] == 1.0, (name, variant)
        assert report["configs"][name]["flowstate_no_isu"]["sr"] == 0.0, name
    for run in (r for r in runs if r.strategy == "flowstate_no_isu"):
        for sub in run.subtasks:
            # what needs no earlier result still passes; what needs one is never found
            assert sub.passed is (sub.found is None), (run.config, run.task_id, sub.k)
    assert _forgotten(store, runner.namespaces)


def test_arena_ablations_with_the_forgetful_agent_fail_exactly_the_dependents(
    store: Store, tmp_path: Path
) -> None:
    config = ArenaConfig(
        configs=["group_travel_planner", "formal_reasoning_phys"],
        strategies=list(FLOWSTATE_VARIANTS),
        agent="forgetful",
        travel_db=FIXTURES / "travel_db",
        cache_dir=tmp_path / "cache",
    )
    runner = ArenaRunner(config, ArenaData(FIXTURES), store)
    tasks = {(t.config, t.id): t for c in config.configs for t in ArenaData(FIXTURES).tasks(c)}
    for run in runner.run():
        facts = tasks[(run.config, run.task_id)].facts
        assert facts is not None
        for k, sub in enumerate(run.subtasks, 1):
            # without PSA the states are in the prompt, but a forgetful agent does not read them
            assert sub.passed is not bool(facts.get(k)), (run.strategy, run.task_id, k)
    assert _forgotten(store, runner.namespaces)


def _wrapped_agent(store: Store, variant: str, replies: list[dict]):  # noqa: ANN202
    from flowstate.api import FlowState
    from flowstate.engine.agent import AgentConfig
    from flowstate.llm.scripted import ScriptedModel
    from flowstate_bench.seam import FlowStateStrategy

    name = f"ablation-{variant}-{uuid.uuid4().hex[:6]}"
    fs = FlowState(store, name)
    model = ScriptedModel.sequence(name, replies)
    strategy = FlowStateStrategy(fs, model.client(), [], "POLICY", AgentConfig(), variant=variant)
    return fs, model, strategy


def _record(key: str, content: str) -> dict:
    delta = [{"op": "add", "key": key, "category": "decision", "summary": f"the {key}",
              "content": content}]  # fmt: skip
    return {"delta": delta, "action": {"type": "final", "answer": "noted", "summary": key}}


def test_no_isu_drops_the_models_states_and_writes_one_by_rule(store: Store) -> None:
    from flowstate.llm.scripted import unregister

    fs, model, agent = _wrapped_agent(store, "flowstate_no_isu", [_record("plan", "PLAN 1: x")])
    try:
        assert agent.respond("Book the 9:40 flight, then wait for my yes.").answer == "noted"
        states = [s for r in fs.repository.index() for s in r.states]
        assert [(s.id, s.category) for s in states] == [("r1.turn_1", "artifact")]
        [shown] = fs.reveal(["r1.turn_1"])
        assert shown.state.content.startswith("Request: Book the 9:40 flight")
        assert "Answer: noted" in shown.state.content and "PLAN 1" not in shown.state.content
    finally:
        unregister(model.name)
        fs.repository.forget_namespace(force=True)


def test_no_psa_puts_every_past_state_in_full_where_the_index_was(store: Store) -> None:
    from flowstate.llm.scripted import unregister
    from flowstate_bench.seam import NO_PSA_HEADER

    replies = [_record("plan", "PLAN 1: the 9:40 flight"), _record("done", "booked")]
    fs, model, agent = _wrapped_agent(store, "flowstate_no_psa", replies)
    try:
        agent.respond("Plan the trip.")
        agent.respond("Go ahead.")
        second = model.calls[-1].messages[-1]["content"]
        index = second.split("# Active State", 1)[0]
        assert NO_PSA_HEADER in index and "r1.plan [decision] the plan" in index
        assert "PLAN 1: the 9:40 flight" in index  # the content, not just the summary
        assert "POLICY" in model.calls[-1].messages[0]["content"]  # the policy still leads
    finally:
        unregister(model.name)
        fs.repository.forget_namespace(force=True)
