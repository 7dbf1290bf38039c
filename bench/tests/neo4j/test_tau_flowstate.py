"""tau-bench with the real FlowState engine on a real Neo4j: the scripted oracle keeps its plan
as states and reads it back in later requests; the forgetful agent does not."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from tau_players import play_user_and_agent

from flowstate.api import FlowState
from flowstate.llm.scripted import ScriptedModel, unregister
from flowstate.settings import Neo4jSettings
from flowstate.store import Repository, Store
from flowstate_bench.tau.cli import tau
from flowstate_bench.tau.data import TauData
from flowstate_bench.tau.runner import RunConfig, TauRunner

pytestmark = pytest.mark.neo4j

SUBSET = {"airline": ["7", "8", "14", "17", "23"], "retail": ["0", "11", "16", "22", "29"]}


@pytest.fixture(scope="module")
def data(tau_data: TauData) -> TauData:
    return tau_data


def _forgotten(store: Store, runner: TauRunner) -> bool:
    return all(Repository(store, ns).counts().nodes == 0 for ns in runner.namespaces)


@pytest.mark.parametrize("domain", ["airline", "retail"])
def test_oracle_matches_the_reference_database_and_forgetful_does_not(
    store: Store, data: TauData, domain: str
) -> None:
    config = RunConfig(domain=domain, strategies=["flowstate"], task_ids=SUBSET[domain])
    oracle_run = TauRunner(config, data, store)
    oracle = oracle_run.run()
    assert [c.task_id for c in oracle] == SUBSET[domain]
    assert all(c.score.db_match and c.score.success for c in oracle), [
        (c.task_id, c.score, c.answers[-1]) for c in oracle if not c.score.success
    ]
    assert all(c.turns >= 2 and c.usage.calls > c.turns for c in oracle)
    forgetful = TauRunner(config.model_copy(update={"agent": "forgetful"}), data, store).run()
    assert not any(c.score.db_match for c in forgetful)
    assert sum(c.score.reward for c in forgetful) < sum(c.score.reward for c in oracle)
    assert sum(c.score.actions_matched for c in forgetful) < sum(
        c.score.actions_matched for c in oracle
    )
    assert oracle_run.namespaces and _forgotten(store, oracle_run)


def test_the_plan_lives_in_neo4j_and_later_requests_derive_from_it(
    store: Store, data: TauData
) -> None:
    config = RunConfig(domain="airline", strategies=["flowstate"], task_ids=["17"])
    runner = TauRunner(config.model_copy(update={"keep_memory": True}), data, store)
    [conv] = runner.run()
    [namespace] = runner.namespaces
    try:
        fs = FlowState(store, namespace)
        index = fs.index().text
        for k in (1, 2, 3):
            assert f"r1.plan_{k} [decision] Step {k} of task 17:" in index
        ran = {r.state.id: r for r in fs.reveal(["r2.ran_1", "r3.ran_2", "r4.ran_3"])}
        links = {(sid, rel.type, rel.other) for sid, r in ran.items() for rel in r.relations}
        assert ("r3.ran_2", "DERIVED_FROM", "r1.plan_2") in links
        assert ("r3.ran_2", "EVIDENCED_BY", "r3.o1") in links
        [plan_2] = fs.reveal(["r1.plan_2"])
        assert plan_2.state.content.startswith("PLAN 2: ") and "FQ8APE" in plan_2.state.content
        assert [r.summary for r in fs.history()] == [f"Task 17, turn {k}" for k in range(4)]
        assert conv.score.success
    finally:
        Repository(store, namespace).forget_namespace(force=True)


def test_one_memory_across_tasks_still_finds_each_tasks_plan(store: Store, data: TauData) -> None:
    config = RunConfig(
        domain="retail",
        strategies=["flowstate"],
        task_ids=["11", "16", "22"],
        persist=True,
        index_budget_tokens=50,  # tiny: older requests collapse or fold and must be opened
    )
    runner = TauRunner(config, data, store)
    convs = runner.run()
    assert len(runner.namespaces) == 1
    assert all(c.score.db_match for c in convs), [c.score for c in convs]
    assert _forgotten(store, runner)


def test_cli_runs_the_flowstate_strategy(
    neo4j_settings: Neo4jSettings, data: TauData, tmp_path, monkeypatch
) -> None:
    monkeypatch.setenv("FLOWSTATE_NEO4J_URI", neo4j_settings.uri)
    if neo4j_settings.password is not None:
        monkeypatch.setenv("FLOWSTATE_NEO4J_PASSWORD", neo4j_settings.password.get_secret_value())
    args = ["--domain", "airline", "--task-id", "8", "--task-id", "17", "--strategy", "flowstate"]
    result = CliRunner().invoke(
        tau, [*args, "--data", str(data.root), "--out", str(tmp_path), "--json"]
    )
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "tau_report.json").read_text())
    assert report["db_accuracy"] == {"flowstate": 1.0}
    assert report["pass_hat_k"] == {"flowstate": {"1": 1.0}}
    assert report["tokens"]["flowstate"]["per_task"] > 0


def test_an_llm_agent_on_flowstate_with_an_llm_user(store: Store, data: TauData) -> None:
    model = ScriptedModel.policy("tau-neo4j-llm-path", play_user_and_agent)
    try:
        config = RunConfig(
            domain="mock",
            strategies=["flowstate"],
            task_ids=["update_task_1"],
            agent="llm",
            model=model.model,
        )
        runner = TauRunner(config, data, store)
        [conv] = runner.run()
    finally:
        unregister(model.name)
    assert conv.score.success and conv.ended == "stop" and conv.turns == 1
    assert conv.answers == ["Done: task_1 is completed."] and conv.user_usage.calls == 2
    engine_prompts = [c for c in model.calls if "# User request (r" in c.messages[-1]["content"]]
    assert engine_prompts[0].messages[0]["content"].startswith("# Domain policy\n# Mock Domain")
    assert _forgotten(store, runner)
