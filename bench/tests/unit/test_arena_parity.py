"""Parity with MemoryArena's official scorers: every case of the data folder's `arena-parity/`
(inputs, and what the official code computed from them) scored by the harness, each figure
equal within 1e-9; the same for the shopping price cases of `bench/tests/data/arena-price-parity/`
(or FLOWSTATE_ARENA_PRICE_PARITY_DATA). Pure: no Neo4j, no model."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from data_folders import SHIPPED_PRICE_CASES

from flowstate.models.records import Usage
from flowstate_bench.arena.data import ArenaTask
from flowstate_bench.arena.domain import Scored
from flowstate_bench.arena.report import config_metrics
from flowstate_bench.arena.runner import SubtaskOutcome, TaskRun
from flowstate_bench.arena.shopping_score import Catalog, Step, step_reward
from flowstate_bench.arena.travel import TravelTask
from flowstate_bench.arena.travel_env import TravelDB
from flowstate_bench.arena.travel_score import score_group

CASES = {"travel": 160, "shopping": 150, "formal": 90}
TRAVEL_DB = Path(__file__).parents[1] / "fixtures" / "memoryarena" / "travel_db"  # not read
STEP_FIELDS: tuple[str, ...] = ("num_attr_matches", "r_price", "r_type", "name_similarity")
STEP_FIELDS += ("category_similarity", "base_reward")


def _cases(root: Path, scorer: str) -> list[dict[str, Any]]:
    lines = (root / f"{scorer}.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def _same(mine: Any, theirs: Any) -> bool:
    """Equal, floats within 1e-9, lists element by element."""
    if isinstance(mine, list | tuple) and isinstance(theirs, list | tuple):
        return len(mine) == len(theirs) and all(map(_same, mine, theirs))
    if isinstance(mine, bool) or isinstance(theirs, bool) or mine is None or theirs is None:
        return mine == theirs
    if isinstance(mine, int | float) and isinstance(theirs, int | float):
        return abs(mine - theirs) <= 1e-9
    return bool(mine == theirs)


def _run(config: str, task_id: str, scored: Scored) -> TaskRun:
    subtasks = [
        SubtaskOutcome(k, p, g, None, "")
        for k, (p, g) in enumerate(zip(scored.passed, scored.graded, strict=True), 1)
    ]
    return TaskRun(config, task_id, "parity", 0, subtasks, scored.sps, Usage(), Usage(), 0)


def _differences(pairs: dict[str, tuple[Any, Any]]) -> list[str]:
    return [f"{k}: ours {m!r}, official {t!r}" for k, (m, t) in pairs.items() if not _same(m, t)]


# -- travel -------------------------------------------------------------------------------


def _travel_case(case: dict[str, Any]) -> list[str]:
    db = TravelDB(TRAVEL_DB)  # checks two files; the tables are read only on a search
    official, runs, found = case["official"], [], {}
    for g, (group, theirs) in enumerate(
        zip(case["input"]["groups"], official["groups"], strict=True)
    ):
        row = group["row"]
        task = ArenaTask("group_travel_planner", str(row["id"]), row)
        scored = TravelTask(task, db).score(group["outputs"])
        runs.append(_run(task.config, task.id, scored))
        found[f"groups[{g}].constraint_rate"] = (scored.sps, theirs["constraint_rate"])
        persons = score_group(row, group["outputs"]).persons
        for p, (mine, person) in enumerate(zip(persons, theirs["persons"], strict=True)):
            at = f"groups[{g}].persons[{p}]"
            found[f"{at}.passed"] = (scored.passed[p], person["passed"])
            for field in ("name", "parsed_days", "constraint_slots", "constraint_passed"):
                found[f"{at}.{field}"] = (getattr(mine, field), person[field])
    m = config_metrics("group_travel_planner", runs)
    found["ps"] = (m["ps_code"], official["ps"] / 100)
    found["sr"] = (m["sr"], official["sr"] / 100)
    found["sps"] = (m["sps"], official["sps"] / 100 if official["sps_groups"] else None)
    return _differences(found)


# -- shopping -----------------------------------------------------------------------------


def _shopping_case(case: dict[str, Any]) -> list[str]:
    catalog = Catalog.of(case["input"]["catalog"])
    official, runs = case["official"], []
    found: dict[str, tuple[Any, Any]] = {}
    for i, (item, theirs) in enumerate(zip(case["input"]["items"], official["items"], strict=True)):
        bounds = item.get("price_constraints") or [None] * len(item["answers"])
        steps = zip(item["answers"], item["purchases"], bounds, theirs["steps"], strict=True)
        rewards = []
        for k, (gold, bought, bound, step) in enumerate(steps):
            s = Step.of(gold, bought, bound)
            reward = step_reward(s, catalog)
            rewards.append(reward)
            at = f"items[{i}].steps[{k}]"
            found[f"{at}.reward"] = (reward.reward, step["reward"])
            found[f"{at}.success"] = (reward.success, step["success"])
            found[f"{at}.reward_reason"] = (reward.reason, step["reward_reason"])
            for field in STEP_FIELDS:
                found[f"{at}.{field}"] = (getattr(reward, field), step[field])
            if "purchased_price" in step:  # the purchase as the official runner read it
                paid = (s.purchased_asin.upper() if s.purchased_asin else None, s.purchased_price)
                found[f"{at}.purchase"] = (paid, (step["purchased_asin"], step["purchased_price"]))
        scored = Scored([r.success for r in rewards], [r.reward for r in rewards])
        found[f"items[{i}].item_success"] = (all(scored.passed), theirs["item_success"])
        runs.append(_run("bundled_shopping", item["task_id"], scored))
    m = config_metrics("bundled_shopping", runs)
    found["average_reward"] = (m["ps_graded"], official["average_reward"])
    found["item_success_rate"] = (m["sr"], official["item_success_rate"])
    found["average_success_rate"] = (m["ps"], official["average_success_rate"])
    per_step = [
        official["per_step"][str(k)]["success_rate"] for k in range(1, len(m["sr_at_k"]) + 1)
    ]
    found["per_step.success_rate"] = (m["sr_at_k"], per_step)
    found["total_steps"] = (m["subtasks"], official["total_steps"])
    return _differences(found)


def test_the_paper_reading_counts_only_the_target_product(arena_parity: Path) -> None:
    """Where the code counts a non-target purchase with reward 1.0, `scoring="paper"` does not."""
    departed = 0
    for case in _cases(arena_parity, "shopping"):
        catalog = Catalog.of(case["input"]["catalog"])
        for item in case["input"]["items"]:
            for gold, bought in zip(item["answers"], item["purchases"], strict=True):
                s = Step(gold["target_asin"], gold["attributes"], bought.get("purchased_asin"))
                code, paper = step_reward(s, catalog), step_reward(s, catalog, "paper")
                assert paper.success is (code.reason == "asin_match")
                departed += code.success and not paper.success
    assert departed > 0  # the cases exercise the difference


# -- formal -------------------------------------------------------------------------------


def _formal_case(case: dict[str, Any]) -> list[str]:
    official = case["official"]
    tasks = case["input"]["tasks"]
    runs = [
        _run(
            "formal_reasoning_math",
            t["paper_name"],
            Scored(t["is_correct"], [float(c) for c in t["is_correct"]]),
        )
        for t in tasks
    ]
    m = config_metrics("formal_reasoning_math", runs)
    found = {
        "overall_average_passrate": (m["sr"], official["overall_average_passrate"]),
        "avg_progress_score": (m["ps"], official["avg_progress_score"]),
        "passrate_at_k": (m["sr_at_k"], official["passrate_at_k"]),
    }
    for key in ("cummulative_passrate_at_k", "min_k", "passrate_at_min_k"):
        found[key] = (m[key], official[key])
    key = "cummulative_passrate_at_min_k"
    found[key] = (m[key], official[key])
    for t, run in zip(tasks, runs, strict=True):
        paper = official["papers"][t["paper_name"]]
        share = sum(run.passed) / len(run.passed)
        found[f"papers.{t['paper_name']}"] = (
            (share, run.passed[-1]),
            (paper["progress_score"], paper["is_paper_correct"]),
        )
    return _differences(found)


CHECKS = {"travel": _travel_case, "shopping": _shopping_case, "formal": _formal_case}


@pytest.mark.parametrize("scorer", list(CASES))
def test_every_case_scores_as_the_official_code(arena_parity: Path, scorer: str) -> None:
    cases = _cases(arena_parity, scorer)
    assert len(cases) == CASES[scorer]
    failing = {c["id"]: d for c in cases if (d := CHECKS[scorer](c))}
    assert list(failing.items())[:5] == []


# -- shopping price cases -----------------------------------------------------------------


def test_every_price_case_scores_as_the_official_code(arena_price_parity: Path) -> None:
    """The price cases (bounds on either side, at and across the price, missing prices,
    prices read from a purchase summary in several currency formats, the result's own names):
    every figure as the official code's."""
    cases = _cases(arena_price_parity, "shopping")
    assert cases
    failing = {c["id"]: d for c in cases if (d := _shopping_case(c))}
    assert list(failing.items())[:5] == []


def test_the_shipped_price_cases_reach_every_branch_of_the_price_term() -> None:
    """The shipped set is not vacuous: computed steps inside, outside and without a bound,
    rewards of 1.0 from a non-target product within its bound, purchases read from summaries
    (none, unknown, several) and names taken from the step's result."""
    cases = _cases(SHIPPED_PRICE_CASES, "shopping")
    assert len(cases) == 160
    seen: set[tuple[Any, ...]] = set()
    for case in cases:
        for item, theirs in zip(case["input"]["items"], case["official"]["items"], strict=True):
            for bought, step in zip(item["purchases"], theirs["steps"], strict=True):
                seen.add((step["reward_reason"], step["r_price"], step["success"]))
                if "purchase_summary" in bought:
                    seen.add(("summary", step["purchased_asin"] is None))
                    seen.add(("several", bought["purchase_summary"].count("ASIN=") > 1))
                seen.add(("named", "purchased_name" in bought))
    for price in (0.0, 1.0, None):
        assert ("computed", price, False) in seen
    assert ("computed", 1.0, True) in seen  # a non-target product within its bound
    assert {("summary", True), ("summary", False), ("several", True), ("named", True)} <= seen
