"""tau-bench scoring: pass^k, the database hash, action matching, information, the reward."""

from __future__ import annotations

import doctest

import pytest

import flowstate_bench.tau.scoring
from flowstate_bench.tau.data import Action, Scenario, Task, canonical_json, db_hash
from flowstate_bench.tau.env import ToolCallRecord
from flowstate_bench.tau.mock import MockEnv
from flowstate_bench.tau.scoring import communicated, matched_actions, pass_hat_k, score_task


def test_pass_hat_k_on_known_values() -> None:
    assert pass_hat_k([(3, 5)], 1) == pytest.approx(0.6)
    assert pass_hat_k([(3, 5)], 2) == pytest.approx(0.3)
    assert pass_hat_k([(3, 5)], 3) == pytest.approx(0.1)
    assert pass_hat_k([(3, 5)], 4) == 0.0


def test_pass_hat_k_averages_over_tasks_and_skips_too_few_trials() -> None:
    assert pass_hat_k([(4, 4), (0, 4), (2, 4)], 2) == pytest.approx((1 + 0 + 1 / 6) / 3)
    assert pass_hat_k([(1, 1), (2, 2)], 2) == 1.0  # the one-trial task cannot say for k=2
    assert pass_hat_k([], 1) == 0.0


def test_the_docstring_examples_hold() -> None:
    assert doctest.testmod(flowstate_bench.tau.scoring).failed == 0


def test_db_hash_is_sha256_of_canonical_json() -> None:
    a = {"users": {"b": [1, 2], "a": {"name": "Zoë"}}}
    b = {"users": {"a": {"name": "Zoë"}, "b": [1, 2]}}
    assert db_hash(a) == db_hash(b)
    assert canonical_json(a) == '{"users":{"a":{"name":"Zoë"},"b":[1,2]}}'.encode()
    assert db_hash(a) != db_hash({"users": {"a": {"name": "Zoe"}, "b": [1, 2]}})


def _call(name: str, **arguments: object) -> ToolCallRecord:
    return ToolCallRecord(name, dict(arguments))


def test_each_reference_action_needs_its_own_matching_call() -> None:
    ref = [
        Action(name="get_order_details", arguments={"order_id": "#W1"}),
        Action(name="get_order_details", arguments={"order_id": "#W1"}),
        Action(name="cancel_pending_order", arguments={"order_id": "#W1", "reason": "x"}),
    ]
    once = [_call("get_order_details", order_id="#W1")]
    assert matched_actions(ref, once) == 1
    twice = once * 2 + [_call("cancel_pending_order", order_id="#W1", reason="y")]
    assert matched_actions(ref, twice) == 2  # the cancel has the wrong reason


def test_extra_agent_arguments_do_not_matter_and_numbers_compare_by_value() -> None:
    ref = [Action(name="send_certificate", arguments={"user_id": "u", "amount": 100})]
    assert matched_actions(ref, [_call("send_certificate", user_id="u", amount=100.0)]) == 1
    assert matched_actions(ref, [_call("send_certificate", user_id="u")]) == 0


def test_empty_compare_args_match_on_the_name_alone() -> None:
    ref = [Action(name="transfer_to_human_agents", arguments={"summary": "x"}, compare_args=[])]
    assert matched_actions(ref, [_call("transfer_to_human_agents", summary="other")]) == 1


def test_information_is_found_case_insensitively_and_without_commas() -> None:
    assert communicated("1628", ["The refund is $1,628."])
    assert communicated("Mastercard", ["paid with your MASTERCARD"])
    assert not communicated("1628", ["The refund is $1,629."])


def _task(**fields: object) -> Task:
    return Task(id="t", domain="mock", scenario=Scenario(), **fields)


def test_the_reward_is_the_product_of_the_judged_bases() -> None:
    env = MockEnv({"tasks": {}, "users": {"u1": {"user_id": "u1", "name": "U", "tasks": []}}})
    env.call("create_task", {"user_id": "u1", "title": "Report"})
    task = _task(
        actions=[Action(name="create_task", arguments={"user_id": "u1", "title": "Report"})],
        communicate_info=["task_1"],
        reward_basis=["DB", "ACTION", "COMMUNICATE", "NL_ASSERTION"],
    )
    good = score_task(task, env, ["Created task_1."], env.hash())
    assert good.reward == 1.0 and good.success
    assert good.unjudged == ["NL_ASSERTION"]  # needs a judge model: left out, but reported
    silent = score_task(task, env, ["Created it."], env.hash())
    assert silent.reward == 0.0 and silent.components["COMMUNICATE"] == 0.0
    wrong_db = score_task(task, env, ["Created task_1."], "0" * 64)
    assert wrong_db.reward == 0.0 and not wrong_db.db_match


def test_a_basis_outside_the_task_does_not_count() -> None:
    env = MockEnv({"tasks": {}, "users": {}})
    task = _task(actions=[Action(name="get_users")], reward_basis=["DB"])
    score = score_task(task, env, [], env.hash())
    assert score.reward == 1.0 and score.action_accuracy == 0.0


def test_env_assertions_of_the_assistant_side_are_judged() -> None:
    env = MockEnv({"tasks": {"task_1": {"status": "completed"}}, "users": {}})
    done = {"func_name": "assert_task_status", "arguments": {"task_id": "task_1"}}
    yes = _task(
        env_assertions=[
            {**done, "arguments": {"task_id": "task_1", "expected_status": "completed"}}
        ],
        reward_basis=["ENV_ASSERTION"],
    )
    assert score_task(yes, env, [], env.hash()).reward == 1.0
    user_side = _task(env_assertions=[{"env_type": "user", "func_name": "assert_x"}],
                      reward_basis=["ENV_ASSERTION"])  # fmt: skip
    assert score_task(user_side, env, [], env.hash()).unjudged == ["ENV_ASSERTION"]
