"""MemoryArena scorers on hand-computed cases: the official code's rules, one at a time."""

from __future__ import annotations

from typing import Any

import pytest

from flowstate_bench.arena.scoring import (
    cumulative_passrate_at_k,
    drop_rate,
    exact_match,
    micro_ps,
    min_k,
    nauc,
    progress_score,
    sr_at_k,
    success_rate,
)
from flowstate_bench.arena.shopping_score import Catalog, Step, step_reward
from flowstate_bench.arena.shopping_summary import purchase_in
from flowstate_bench.arena.travel_score import (
    GroupScore,
    PersonScore,
    constraint_slots,
    format_plan,
    parse_plan,
    person_passes,
    score_group,
    score_person,
    similarity,
    split_plans,
    traveler_name,
)

R = ", Rockford"
SLOTS = ("breakfast", "lunch", "dinner", "accommodation", "transportation", "attraction")


def _day(n: Any, **slots: Any) -> dict[str, Any]:
    return {"days": n, "current_city": "Rockford", **dict.fromkeys(SLOTS, "-"), **slots}


def _lines(n: int, lunch: str) -> str:
    rest = "".join(f"{s.title()}: -\n" for s in SLOTS if s != "lunch")
    return f"Day {n}:\nLunch: {lunch}\n{rest}"


# -- travel: similarity -----------------------------------------------------------------------


def test_prefix_leniency_the_shorter_string_bounds_both() -> None:
    assert similarity("Subway", "Subway" + R) == 1.0
    assert similarity("subway" + R + " ", "SUBWAY") == 1.0  # stripped and lowercased


def test_dash_empty_and_whitespace_rules() -> None:
    assert similarity("-", "-") == 1.0
    assert similarity("-", "Subway" + R) == 0.0  # compared on one character: "-" vs "s"
    assert similarity("", "-") == 0.0  # an empty raw value never matches
    assert similarity(None, "x") == 0.0
    assert similarity("   ", "   ") == 0.0  # nothing left after strip: no match


def test_the_pass_threshold_is_0_7() -> None:
    assert similarity("abcd", "abxd") == pytest.approx(0.75)  # 2*3/8
    assert similarity("abcd", "axyd") == pytest.approx(0.5)  # 2*2/8


# -- travel: reading the text -----------------------------------------------------------------


@pytest.mark.parametrize(
    "day_line",
    ["Day 1:", "Day1:", "**Day 1:**", "### Day 1:", "DAY 1:\nDay 1:", "Day 1: Current City: X"],
)
def test_a_day_starts_at_day_n_colon_anywhere(day_line: str) -> None:
    [day] = parse_plan(f"{day_line}\nLunch: Nutri Punch{R}") or []
    assert day["day"] == 1 and day["lunch"] == "Nutri Punch" + R


@pytest.mark.parametrize("text", ["day 1:\nLunch: x", "DAY 1:\nLunch: x", "Day 1 -\nLunch: x"])
def test_other_day_lines_start_no_day(text: str) -> None:
    assert parse_plan(text) is None


def test_the_rest_of_the_day_line_is_a_field() -> None:
    [day] = parse_plan("Day 2: Current City: Rockford\nDinner: -") or []
    assert day == {"day": 2, "current_city": "Rockford", "dinner": "-"}


def test_no_plan_and_the_token_limit_message_parse_to_none() -> None:
    assert parse_plan("") is None and parse_plan("Max Token Length Exceeded.") is None


def test_headers_split_anywhere_and_a_repeated_name_takes_the_later_section() -> None:
    text = "Sure!\n=== Eric's Plan === (final)\nfirst\n=== Emma's Plan ===\nx\n"
    text += "=== Eric's Plan ===\nsecond"
    assert split_plans(text) == {"Eric": "second", "Emma": "x"}


def test_the_name_is_i_am_x_at_the_start_of_the_question_else_person() -> None:
    assert traveler_name("I am Eric. I'm joining Jennifer.") == "Eric"
    assert traveler_name("Hello. I am Eric.") == "Person"


def test_format_and_parse_round_trip_passes() -> None:
    days = [_day(1, lunch="Nutri Punch" + R), _day(2, accommodation="Park Side" + R)]
    section = split_plans(format_plan("Zoey", days))["Zoey"]
    assert person_passes(days, parse_plan(section))


# -- travel: passing ----------------------------------------------------------------------


def test_a_missing_day_fails_and_a_missing_slot_counts_as_dash() -> None:
    gold = [_day(1, lunch="Flying Mango" + R), _day(2)]
    assert not person_passes(gold, [{"day": 1, "lunch": "Flying Mango" + R}])
    assert person_passes(gold, [{"day": 1, "lunch": "Flying Mango" + R}, {"day": 2}])
    assert not person_passes(gold, [{"day": 1, "lunch": "Subway" + R}, {"day": 2}])


def test_the_first_of_repeated_days_counts() -> None:
    gold = [_day(1, lunch="Nutri Punch" + R)]
    first_wrong = parse_plan(_lines(1, "Subway" + R) + _lines(1, "Nutri Punch" + R))
    first_right = parse_plan(_lines(1, "Nutri Punch" + R) + _lines(1, "Subway" + R))
    assert not person_passes(gold, first_wrong) and person_passes(gold, first_right)


def test_a_string_day_a_null_slot_and_an_empty_gold_plan_never_pass() -> None:
    plan = parse_plan(_lines(1, "Nutri Punch" + R))
    assert person_passes([_day(1, lunch="Nutri Punch" + R)], plan)
    assert not person_passes([_day("1", lunch="Nutri Punch" + R)], plan)  # "1" is not 1
    assert not person_passes([_day(1, lunch="Nutri Punch" + R, dinner=None)], plan)
    assert not person_passes([], plan)


def test_constraint_slots_skip_days_the_base_lacks() -> None:
    base = [_day(1, lunch="Flying Mango" + R, dinner="Mirchievous" + R)]
    gold = [_day(1, lunch="Nutri Punch" + R, dinner="Mirchievous" + R), _day(2, lunch="Subway")]
    assert constraint_slots(gold, base) == {(1, "lunch")}


def test_person_constraint_rate_and_the_group_skips_travelers_without_slots() -> None:
    base = [_day(1, lunch="Flying Mango" + R, dinner="Mirchievous" + R)]
    gold = [_day(1, lunch="Nutri Punch" + R, dinner="Coco Bambu" + R)]
    half = format_plan("Eric", [_day(1, lunch="Nutri Punch", dinner="Mirchievous" + R)])
    person = score_person("Eric", gold, base, split_plans(half)["Eric"])
    assert (person.constraint_slots, person.constraint_passed, person.passed) == (2, 1, False)
    assert score_person("Lily", base, base, "").constraint_rate is None
    none = PersonScore("Lily", [], True, 0, 0)
    assert GroupScore([person, none]).constraint_rate == 0.5
    assert GroupScore([none]).constraint_rate is None


def _row() -> dict[str, Any]:
    base = [_day(1, lunch="Flying Mango" + R)]
    return {
        "base_person": {"name": "Jennifer", "query": "I am Jennifer.", "daily_plans": base},
        "questions": ["I am Eric. Lunch elsewhere.", "I am Lily. Same as Jennifer."],
        "answers": [[_day(1, lunch="Nutri Punch" + R)], base],
    }


def test_a_group_is_read_as_one_text_after_the_base_plan() -> None:
    eric = format_plan("Eric", [_day(1, lunch="Nutri Punch" + R)])
    lily = format_plan("Lily", [_day(1, lunch="Flying Mango" + R)])
    chatty = f"Here is the plan you asked for.\n{eric}\nEnjoy the trip!"
    assert score_group(_row(), [chatty, lily]).passed == [True, True]
    # Without its header Lily's answer runs on in Eric's section, and Lily has none.
    assert score_group(_row(), [eric, lily.split("\n", 1)[1]]).passed == [True, False]


# -- shopping -----------------------------------------------------------------------------

TV = Catalog.of(
    [
        {
            "asin": "B0FX000101",
            "name": "Lumora 75 Inch 4K UHD Smart TV",
            "product_category": "E › TV",
        },
        {
            "asin": "B0FX000102",
            "name": "Vexon 75 Inch 4K TV, HDMI 2.1",
            "product_category": "E › TV",
        },
        {"asin": "B0FX000103", "name": "garden hose", "product_category": "Garden"},
        {"asin": "b0fx000101", "name": "a later entry", "product_category": "ignored"},
    ]
)


def _step(bought: str | None, attrs: list[str], **price: Any) -> Step:
    return Step("B0FX000101", attrs, bought, price.pop("paid", None), price or None)


def test_the_target_lower_cased_scores_1_and_no_purchase_0() -> None:
    assert step_reward(_step("b0fx000101", ["x"]), TV).reward == 1.0
    assert step_reward(_step(None, ["75 inch"]), TV).reason == "no_purchase"
    assert step_reward(_step("", ["75 inch"]), TV).reward == 0.0


def test_a_non_target_with_every_attribute_succeeds_in_the_code_not_the_paper() -> None:
    step = _step("B0FX000102", ["75 inch", "hdmi 2.1"])
    code, paper = step_reward(step, TV), step_reward(step, TV, "paper")
    assert code.reward == paper.reward == 1.0 and code.reason == "computed"
    assert code.success and not paper.success


def test_attribute_share_type_reward_and_unlisted_products() -> None:
    partial = step_reward(_step("B0FX000102", ["75 inch", "hdmi 2.0", "vesa"]), TV)
    assert partial.num_attr_matches == 1 and partial.reward == pytest.approx(1 / 3)
    assert step_reward(_step("B0FX000103", ["hose"]), TV).r_type == 0.0  # no name overlap
    assert step_reward(_step("B0ZZZZZZZZ", ["75 inch"]), TV).reward == 0.0  # no name at all


@pytest.mark.parametrize("attribute", ["-", "", " ", "/"])
def test_an_attribute_that_normalises_to_nothing_never_matches(attribute: str) -> None:
    assert step_reward(_step("B0FX000102", ["75 inch", attribute]), TV).reward == 0.5


def test_a_price_bound_adds_a_term() -> None:
    inside = step_reward(_step("B0FX000102", ["75 inch", "vesa"], paid=250.0, price_upper=300), TV)
    assert (inside.r_price, inside.reward) == (1.0, pytest.approx(2 / 3))
    unpaid = step_reward(_step("B0FX000102", ["75 inch"], price_lower=10), TV)
    assert (unpaid.r_price, unpaid.reward) == (0.0, 0.5)


def test_a_bound_equal_to_the_price_holds_and_an_inverted_bound_holds_nothing() -> None:
    tv = ["75 inch", "hdmi 2.1"]
    at = step_reward(_step("B0FX000102", tv, paid=99.5, price_upper=99.5, price_lower=99.5), TV)
    assert (at.r_price, at.reward, at.success) == (1.0, 1.0, True)
    inverted = step_reward(_step("B0FX000102", tv, paid=99.5, price_upper=50, price_lower=150), TV)
    assert (inverted.r_price, inverted.reward) == (0.0, pytest.approx(2 / 3))
    above = step_reward(_step("B0FX000102", tv, paid=300, price_upper=299.99), TV)
    assert (above.r_price, above.reward, above.success) == (0.0, pytest.approx(2 / 3), False)


def test_the_results_own_names_win_over_the_catalogs() -> None:
    """The runner records the title the agent saw and the target's name; the code reads
    those first, so a product the catalog lacks still earns its attributes."""
    gold = {"target_asin": "B0FX000101", "attributes": ["75 inch", "hdmi 2.1", "vesa"]}
    seen = {"purchased_asin": "B0ZZZZZZZZ", "purchased_name": "Vexon 75-inch TV, HDMI 2.1"}
    bought = step_reward(Step.of(gold, {**seen, "purchased_price": 10.0}, {"price_upper": 20}), TV)
    # the target's catalog name: lumora 75 inch 4k uhd smart tv; met: 75 inch tv (3 of 7)
    assert (bought.num_attr_matches, bought.r_price) == (2, 1.0)
    assert bought.name_similarity == pytest.approx(3 / 7)
    assert bought.reward == pytest.approx(3 / 4)
    renamed = step_reward(Step.of(gold, {**seen, "target_name": "Garden Hose"}), TV)
    assert (renamed.name_similarity, renamed.reward) == (0.0, 0.0)
    # the runner's fallback name "Product 1" shares the "1" of "HDMI 2.1"
    fallback = step_reward(Step.of(gold, {**seen, "target_name": "Product 1"}), TV)
    assert (fallback.name_similarity, fallback.reward) == (0.5, pytest.approx(2 / 3))
    assert step_reward(Step.of(gold, {**seen, "target_asin": "b0zzzzzzzz"}), TV).reason == (
        "asin_match"
    )


@pytest.mark.parametrize(
    ("text", "purchase"),
    [
        ("Purchases Made: 1\n  Purchase #1: B0FX000102 ($1,299.50)", ("B0FX000102", 1299.5)),
        (
            "  Purchase #1: B0FX000102 ($12)\n  Purchase #2: B0FX000101 ($3.00)",
            ("B0FX000102", 12.0),
        ),
        ("  Purchase #1: b0fx000102 ($12.00)", (None, None)),  # the ASIN is read in capitals
        ("  Purchase #1: B0FX000102 (12.00)", (None, None)),  # the price needs its $
        ("#1 ASIN=b0fx000102 Price=1,234 Reward=0.5", ("b0fx000102", 1234.0)),
        (
            "#1 ASIN=UNKNOWN Price=N/A Reward=0\n  Purchase #1: B0FX000102 ($5.00)",
            ("UNKNOWN", None),
        ),
        ("#1 ASIN=B0FX000102 Price=$1.2.3 Reward=0", ("B0FX000102", None)),
        (
            "Target 1: Product 1\n  Purchased: B0FX000102\nTarget 2:\n  Purchased: B0FX000101 ($2)",
            ("B0FX000102", None),
        ),
        (
            "Target 1: Product 1\nTarget 2: x\n  Purchased: B0FX000101 ($2,000.10)",
            ("B0FX000101", 2000.1),
        ),
        ("Target 1: Purchase #1: B0FX000102 ($5.00)", (None, None)),  # an opening line only
        ("WEBSHOPPLUS TASK COMPLETED\nPurchases Made: 0\n  None", (None, None)),
    ],
)
def test_the_purchase_is_read_from_the_summary_as_the_runner_reads_it(
    text: str, purchase: tuple[str | None, float | None]
) -> None:
    assert purchase_in(text) == purchase


def test_a_price_read_from_a_summary_meets_its_bound() -> None:
    gold = {"target_asin": "B0FX000101", "attributes": ["75 inch"]}
    summary = {"purchase_summary": "  Purchase #1: B0FX000102 ($1,299.99)"}
    within = step_reward(Step.of(gold, summary, {"price_upper": 1300}), TV)
    assert (within.r_price, within.reward) == (1.0, 1.0)
    below = step_reward(Step.of(gold, summary, {"price_lower": 1300}), TV)
    assert (below.r_price, below.reward) == (0.0, 0.5)


# -- formal and the aggregates --------------------------------------------------------------


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


def test_sr_at_k_cumulative_and_min_k_with_unequal_task_lengths() -> None:
    tasks = [[True, True, False], [True, False], [False, True, True, True]]
    assert sr_at_k(tasks) == pytest.approx([2 / 3, 2 / 3, 1 / 2, 1.0])
    assert cumulative_passrate_at_k(tasks) == pytest.approx([2 / 3, 4 / 6, 5 / 8, 6 / 9])
    assert min_k(tasks) == 2 and min_k([]) is None


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
    with pytest.raises(ValueError, match="without subtasks"):
        progress_score([[], [True]])
    with pytest.raises(ValueError, match="without subtasks"):
        success_rate([[], [True]], last_only=True)
