"""MemoryArena scorers on hand-computed cases."""

from __future__ import annotations

import pytest

from flowstate_bench.arena.scoring import (
    Product,
    as_plan,
    constraint_slots,
    drop_rate,
    exact_match,
    group_sps,
    micro_ps,
    nauc,
    parse_plans,
    person_passes,
    person_sps,
    progress_score,
    render_plan,
    shopping_reward,
    slot_sim,
    sr_at_k,
    success_rate,
)

R = ", Rockford"


def _day(n: int, **slots: str) -> dict[str, object]:
    base = dict.fromkeys(
        ("breakfast", "lunch", "dinner", "accommodation", "transportation", "attraction"), "-"
    )
    return {"days": n, "current_city": "Rockford", **base, **slots}


def test_prefix_leniency_the_shorter_string_bounds_both() -> None:
    assert slot_sim("Subway", "Subway" + R) == 1.0
    assert slot_sim("subway" + R + " ", "SUBWAY") == 1.0  # stripped and lowercased


def test_dash_rules() -> None:
    assert slot_sim("-", "-") == 1.0
    assert slot_sim("-", "Subway" + R) == 0.0  # compared on one character: "-" vs "s"
    assert slot_sim("", "-") == 0.0  # an empty raw value never matches
    assert slot_sim(None, "x") == 0.0


def test_the_pass_threshold_is_0_7() -> None:
    assert slot_sim("abcd", "abxd") == pytest.approx(0.75)  # 2*3/8
    assert slot_sim("abcd", "axyd") == pytest.approx(0.5)  # 2*2/8


def test_a_missing_day_fails_the_person_and_a_missing_slot_counts_as_dash() -> None:
    gt = as_plan([_day(1, lunch="Flying Mango" + R), _day(2)])
    only_day_1 = as_plan([_day(1, lunch="Flying Mango" + R)])
    assert not person_passes(gt, only_day_1)
    sparse = {1: {"lunch": "Flying Mango" + R}, 2: {}}  # every other slot missing = "-"
    assert person_passes(gt, sparse)
    assert not person_passes(gt, {1: {"lunch": "Subway" + R}, 2: {}})


def test_constraint_slots_and_person_sps() -> None:
    base = as_plan([_day(1, lunch="Flying Mango" + R, dinner="Mirchievous" + R)])
    gt = as_plan([_day(1, lunch="Nutri Punch" + R, dinner="Coco Bambu" + R)])
    assert constraint_slots(gt, base) == [(1, "lunch"), (1, "dinner")]
    half = as_plan([_day(1, lunch="Nutri Punch", dinner="Mirchievous" + R)])  # prefix passes
    assert person_sps(gt, base, half) == 0.5
    assert person_sps(gt, base, {}) == 0.0  # nothing submitted: both slots fail


def test_a_person_without_constraint_slots_is_skipped_in_sps() -> None:
    base = as_plan([_day(1, lunch="Flying Mango" + R)])
    assert person_sps(base, base, {}) is None
    assert group_sps([None, 0.5, 1.0]) == 0.75
    assert group_sps([None]) is None


def test_a_repeated_header_the_later_plan_wins() -> None:
    first = render_plan("Eric", [_day(1, lunch="Subway" + R)])
    second = render_plan("Eric", [_day(1, lunch="Nutri Punch" + R)])
    other = render_plan("Emma", [_day(1, breakfast="Cafe Southall" + R)])
    plans = parse_plans("\n".join([first, other, "some chatter", second]))
    assert plans["Eric"][1]["lunch"] == "Nutri Punch" + R
    assert plans["Emma"][1]["breakfast"] == "Cafe Southall" + R
    assert set(plans) == {"Eric", "Emma"}


def test_render_and_parse_round_trip_passes() -> None:
    days = [_day(1, lunch="Nutri Punch" + R), _day(2, accommodation="Park Side" + R)]
    assert person_passes(as_plan(days), parse_plans(render_plan("Zoey", days))["Zoey"])


def test_shopping_reward_exact_match_and_no_purchase() -> None:
    target = Product("B0FX000101", "Lumora 75 Inch 4K UHD Smart TV")
    assert shopping_reward(Product("b0fx000101", "x"), target, ["75 inch"]) == 1.0
    assert shopping_reward(None, target, ["75 inch"]) == 0.0


def test_shopping_reward_attribute_share_times_type_reward() -> None:
    target = Product("B0FX000101", "Lumora 75 Inch 4K UHD Smart TV")
    bought = Product("B0FX000102", "Vexon 75 Inch 4K LED TV, HDMI 2.0")
    attrs = ["75 inch", "hdmi 2.1", "vesa 400x400"]
    # name_sim = |{75, inch, 4k, tv}| / 7 > 0.2 -> r_type 1.0; one attribute of three
    assert shopping_reward(bought, target, attrs) == pytest.approx(1 / 3)
    long_target = Product("B0FX000103", "a b c d e f g h i j tv")  # 11 tokens
    weak = Product("B0FX000104", "tv 75 inch")  # shares only "tv": 1/11 < 0.1 -> r_type 0.1
    assert shopping_reward(weak, long_target, ["75 inch"]) == pytest.approx(0.1)
    unrelated = Product("B0FX000105", "garden hose 75 inch")
    assert shopping_reward(unrelated, target, ["75 inch"]) == pytest.approx(1.0)  # shares 75, inch
    assert shopping_reward(Product("B0FX000106", "hose"), target, ["hose"]) == 0.0  # name_sim 0


def test_formal_exact_match_normalises_latex() -> None:
    assert exact_match("\\dfrac{3}{2}", "$\\frac{3}{2}$")
    assert exact_match("2 \\cdot 3^{n} - 1", "$2\\cdot 3^{n}-1$")
    assert exact_match("\\left(n+1\\right)", "(n+1)")
    assert not exact_match("3^{n}", "$2\\cdot 3^{n}-1$")
    assert not exact_match("  ", "")


def test_ps_sr_and_micro_ps() -> None:
    tasks = [[True, False], [True, True, True, False]]
    assert progress_score(tasks) == pytest.approx((0.5 + 0.75) / 2)
    assert micro_ps(tasks) == pytest.approx(4 / 6)
    assert success_rate([[True, True], [True, False]], last_only=False) == 0.5
    assert success_rate([[True, False], [False, True]], last_only=True) == 0.5
    assert success_rate([[True, False], [False, True]], last_only=False) == 0.0


def test_sr_at_k_with_unequal_task_lengths() -> None:
    tasks = [[True, True, False], [True, False], [False, True, True, True]]
    assert sr_at_k(tasks) == pytest.approx([2 / 3, 2 / 3, 1 / 2, 1.0])


def test_nauc_and_drop_rate_on_a_known_curve() -> None:
    curve = [1.0, 0.5, 0.5, 0.0]
    assert nauc(curve, 4) == pytest.approx((0.75 + 0.5 + 0.25) / 3)
    assert nauc(curve, 8) == pytest.approx(0.5)  # K cut to the curve's length
    assert nauc(curve, 2) == pytest.approx(0.75)
    assert nauc([0.4], 6) is None
    assert drop_rate(curve, 4) == 1.0
    assert drop_rate(curve, 2) == 0.5
    assert drop_rate([0.0, 0.0], 2) is None
    flat = [0.8] * 6
    assert nauc(flat, 6) == pytest.approx(0.8) and drop_rate(flat, 6) == 0.0


def test_a_task_without_subtasks_is_refused_not_scored() -> None:
    from flowstate_bench.arena.scoring import progress_score, success_rate

    with pytest.raises(ValueError, match="without subtasks"):
        progress_score([[], [True]])
    with pytest.raises(ValueError, match="without subtasks"):
        success_rate([[], [True]], last_only=True)
