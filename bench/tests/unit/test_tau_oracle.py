"""Offline validation on the baselines: turn plans, the scripted oracle reaches the reference
database, the forgetful agent does not; the report and the CLI (no database needed)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from tau_players import play_user_and_agent

from flowstate.llm.scripted import ScriptedModel, unregister
from flowstate_bench.tau.cli import tau
from flowstate_bench.tau.data import TauData
from flowstate_bench.tau.domains import make_env
from flowstate_bench.tau.oracle import _keep_plans, plan_line, recall
from flowstate_bench.tau.plan import CONFIRM, derive_plan
from flowstate_bench.tau.report import build_report, results_table
from flowstate_bench.tau.runner import RunConfig, TauRunner

# Tasks whose changes each wait for a later "yes": the plan must survive between requests.
SUBSET = {"airline": ["7", "8", "14", "17", "23"], "retail": ["0", "11", "16", "22", "29"]}
BASELINES = ["full", "bm25", "summary"]


@pytest.fixture(scope="module")
def data(tau_data: TauData) -> TauData:
    return tau_data


def test_a_plan_gives_each_change_its_own_confirmed_turn(data: TauData) -> None:
    [task] = [t for t in data.tasks("airline") if t.id == "17"]
    plan = derive_plan(task, make_env("airline", data).WRITE_TOOLS)
    assert plan.turns[0].startswith("My name is Omar Rossi.")
    assert "My user id is omar_rossi_1241." in plan.turns[0]
    assert plan.turns[1:] == [CONFIRM] * 3
    assert [[a.name for a in s] for s in plan.segments] == [
        [],
        ["update_reservation_flights"],
        ["update_reservation_passengers"],
        ["update_reservation_baggages"],
    ]


def test_plan_lines_round_trip_and_survive_the_scripted_summary(data: TauData) -> None:
    [task] = [t for t in data.tasks("retail") if t.id == "0"]
    line = plan_line(1, task.actions[-1:])
    text = f"[assistant] Here is the plan:\n{line}\nPLAN 10: []\nShall I?"
    assert recall(text, 1) == [
        {"name": a.name, "arguments": a.arguments} for a in task.actions[-1:]
    ]
    assert recall(text, 2) is None and recall(text, 10) == []
    assert _keep_plans(text) == f"{line}\nPLAN 10: []"


@pytest.mark.parametrize("domain", ["airline", "retail"])
def test_the_oracle_matches_the_reference_database_on_every_baseline(
    data: TauData, domain: str
) -> None:
    config = RunConfig(domain=domain, strategies=BASELINES, task_ids=SUBSET[domain])
    convs = TauRunner(config, data).run()
    assert len(convs) == 3 * 5
    assert all(c.score.db_match and c.score.success for c in convs), [
        (c.strategy, c.task_id, c.score) for c in convs if not c.score.success
    ]
    assert all(c.turns == len(derive_plan_for(data, domain, c.task_id).turns) for c in convs)
    summaries = [c for c in convs if c.strategy == "summary"]
    assert all(c.extra_calls == c.turns for c in summaries)


def derive_plan_for(data: TauData, domain: str, task_id: str):
    [task] = [t for t in data.tasks(domain) if t.id == task_id]
    return derive_plan(task, make_env(domain, data).WRITE_TOOLS)


@pytest.mark.parametrize("domain", ["airline", "retail"])
def test_the_forgetful_agent_scores_lower(data: TauData, domain: str) -> None:
    config = RunConfig(domain=domain, strategies=["full"], task_ids=SUBSET[domain])
    oracle = TauRunner(config, data).run()
    forgetful = TauRunner(config.model_copy(update={"agent": "forgetful"}), data).run()
    assert sum(c.score.db_match for c in forgetful) < sum(c.score.db_match for c in oracle)
    assert all(not c.score.db_match for c in forgetful)  # every task here needs the plan
    acc = lambda convs: sum(c.score.action_accuracy for c in convs)  # noqa: E731
    assert acc(forgetful) < acc(oracle)
    # It called the confirmed change without the arguments it forgot: refused, not recorded.
    assert all(c.answers[-1].startswith("I'm sorry") for c in forgetful)


def test_report_keys_and_table(data: TauData) -> None:
    config = RunConfig(domain="mock", strategies=["full", "bm25"], trials=2)
    convs = TauRunner(config, data).run()
    report = build_report(config, convs)
    for key in ("db_accuracy", "action_accuracy", "pass_hat_k", "tokens"):
        assert set(report[key]) == {"full", "bm25"}
    assert set(report["pass_hat_k"]["full"]) == {"1", "2"}
    assert report["tokens"]["full"]["total"] > 0 and report["tasks"] == 10
    assert len(results_table(report).columns) == 1 + 2 + 7


def test_cli_runs_offline_and_writes_the_report(data: TauData, tmp_path) -> None:
    args = ["--domain", "retail", "--split", "test", "--strategy", "full,summary", "--tasks", "2"]
    argv = [*args, "--data", str(data.root), "--out", str(tmp_path)]
    result = CliRunner().invoke(tau, argv, env={"COLUMNS": "160"})
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "tau_report.json").read_text())
    assert report["db_accuracy"] == {"full": 1.0, "summary": 1.0}
    assert [r["task"] for r in report["conversations"]] == data.split("retail", "test")[:2] * 2
    assert "pass^1" in result.output and "tok/task" in result.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--strategy", "full,rag"], "choose from all,flowstate,flowstate_no_psa"),
        (["--agent", "llm", "--strategy", "full"], "--agent llm needs --model"),
        (["--task-id", "nope", "--strategy", "full"], "no tasks match"),
        (["--split", "test", "--strategy", "full"], "mock has no split 'test'; one of base"),
    ],
)
def test_cli_usage_errors(data: TauData, args: list[str], message: str) -> None:
    result = CliRunner().invoke(tau, ["--domain", "mock", "--data", str(data.root), *args])
    assert result.exit_code == 2 and message in result.output


def test_cli_llm_agent_and_llm_user_go_through_litellm(data: TauData, tmp_path) -> None:
    model = ScriptedModel.policy("tau-unit-llm-path", play_user_and_agent)
    try:
        args = ["--domain", "mock", "--task-id", "update_task_1", "--agent", "llm"]
        args += ["--model", model.model, "--strategy", "full,bm25,summary", "--trials", "2"]
        argv = [*args, "--data", str(data.root), "--out", str(tmp_path), "--temperature", "0"]
        argv.append("--yes")
        result = CliRunner().invoke(tau, argv)
        assert result.exit_code == 0, result.output
    finally:
        unregister(model.name)
    report = json.loads((tmp_path / "tau_report.json").read_text())
    assert report["user"] == "llm" and report["db_accuracy"]["summary"] == 1.0
    assert report["pass_hat_k"]["full"] == {"1": 1.0, "2": 1.0}
    rows = report["conversations"]
    assert {r["ended"] for r in rows} == {"stop"} and all(r["turns"] == 1 for r in rows)
    assert report["strategies"]["summary"]["extra_calls"] == 2
    assert report["strategies"]["full"]["user_tokens"] > 0
