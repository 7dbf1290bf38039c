"""PSA rules: which past ids `check_access` lets the model open, and how it words a refusal."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from flowstate.rules import AccessDecision, Limits, Violation, Visibility, check_access

LIMITS = Limits()
HOSTILE = "x}) DETACH DELETE n //"
NOT_VISIBLE = (
    "unknown id: only ids shown in the index, by a search or in revealed relations can be accessed"
)


def make_vis(**overrides: object) -> Visibility:
    """What the model sees in request r5 of namespace A (namespace B's ids are never shown)."""
    fields: dict[str, object] = {
        "request_id": "r5",
        "index_states": frozenset({"r3.hotel", "r3.flight"}),
        "collapsed_requests": frozenset({"r1", "r2"}),
        "opened_states": frozenset({"r2.city"}),
        "revealed": frozenset({"r4.budget"}),
        "relation_ends": frozenset({"r4.dates", "r4.o2", "r3.hotel"}),
        "observations": frozenset({"r5.o1"}),
        "opened_observations": frozenset({"r4.o1"}),
    }
    fields.update(overrides)
    return Visibility(**fields)  # type: ignore[arg-type]


def _access(asked: Sequence[str], limits: Limits = LIMITS) -> AccessDecision:
    return check_access(asked, make_vis(), limits)


def _refused(item: str) -> Violation:
    decision = _access([item])
    assert (decision.states, decision.requests, decision.observations) == ([], [], [])
    assert decision.already_open == []
    assert len(decision.violations) == 1, decision.violations
    return decision.violations[0]


# --- how many ------------------------------------------------------------------------------


def test_more_than_k_ids_is_refused_outright() -> None:
    limits = Limits(max_access_per_step=3)
    decision = _access(["r3.hotel", "r3.flight", "r2.city", "r4.dates"], limits)
    assert decision == AccessDecision(
        states=[],
        requests=[],
        observations=[],
        violations=[
            Violation(
                "access",
                "too_many_ids",
                "4 ids; at most 3 per step. "
                "Ask for the most important first; ask for the rest in a later step",
            )
        ],
        already_open=[],
    )


def test_exactly_k_ids_are_accepted() -> None:
    limits = Limits(max_access_per_step=3)
    decision = _access(["r3.hotel", "r1", "r4.o2"], limits)
    assert (decision.states, decision.requests, decision.observations) == (
        ["r3.hotel"],
        ["r1"],
        ["r4.o2"],
    )
    assert decision.violations == []


def test_duplicates_are_collapsed_before_counting() -> None:
    limits = Limits(max_access_per_step=2)
    decision = _access(["r3.hotel", " r3.hotel", "r3.hotel\n", "r3.flight", "r3.flight"], limits)
    assert decision.states == ["r3.hotel", "r3.flight"]
    assert decision.violations == []


# --- what is accepted ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "item",
    [
        "r3.hotel",  # in the index
        "r2.city",  # listed by an opened collapsed request
        "r4.dates",  # only at the far end of a revealed relation
    ],
)
def test_visible_past_states_are_accepted(item: str) -> None:
    assert _access([item]) == AccessDecision([item], [], [], [], [])


def test_collapsed_request_ids_go_to_requests() -> None:
    assert _access(["r2", "r1"]) == AccessDecision([], ["r2", "r1"], [], [], [])


def test_past_observation_at_a_relation_end_goes_to_observations() -> None:
    assert _access(["r4.o2"]) == AccessDecision([], [], ["r4.o2"], [], [])


@pytest.mark.parametrize("item", ["r4.budget", "r4.o1"])
def test_already_open_is_harmless(item: str) -> None:
    assert _access([item]) == AccessDecision([], [], [], [], [item])


def test_mixed_request_keeps_order_and_refuses_only_the_bad_ids() -> None:
    decision = _access(["r4.dates", "r9.ghost", "r1", "r3.hotel", "r4.budget", "r5", "r4.o2"])
    assert decision.states == ["r4.dates", "r3.hotel"]
    assert decision.requests == ["r1"]
    assert decision.observations == ["r4.o2"]
    assert decision.already_open == ["r4.budget"]
    assert [(v.where, v.rule) for v in decision.violations] == [
        ("access r9.ghost", "not_visible"),
        ("access r5", "own_request"),
    ]


def test_nothing_asked_nothing_done() -> None:
    assert _access([]) == AccessDecision([], [], [], [], [])


# --- what is refused -----------------------------------------------------------------------


@pytest.mark.parametrize("item", ["r3", "r4", "r99"])
def test_a_request_the_index_does_not_show(item: str) -> None:
    assert _refused(item) == Violation(
        f"access {item}", "not_listed", "only requests the index shows can be opened"
    )


def test_a_request_listed_in_full_opens() -> None:
    vis = make_vis(listed_requests=frozenset({"r3"}))
    decision = check_access(["r3", "r4"], vis, LIMITS)
    assert decision.requests == ["r3"]
    assert [(v.where, v.rule) for v in decision.violations] == [("access r4", "not_listed")]


def test_own_request() -> None:
    assert _refused("r5") == Violation(
        "access r5",
        "own_request",
        "that is the current request; its states are already in the Active State",
    )


@pytest.mark.parametrize("item", ["r5.hotel_budget", "r5.not_made_yet"])
def test_own_state(item: str) -> None:
    assert _refused(item) == Violation(
        f"access {item}",
        "own_state",
        "that state belongs to this request and is already in the Active State",
    )


def test_own_observation() -> None:
    assert _refused("r5.o1") == Violation(
        "access r5.o1",
        "own_observation",
        "that observation belongs to this request and is already shown",
    )


@pytest.mark.parametrize(
    "item",
    [
        "r3.secret",  # a past id never shown
        "r1.hidden",  # inside a collapsed request that was not opened
        "r3.o1",  # a past observation not at a relation end
        "r5.o9",  # an observation of this request that does not exist
        "hotel_budget",  # a bare key is not an id
        # Ids of another namespace look like ours but were never shown; the rules see only
        # what this namespace showed, so they are just unknown.
        "r7.hotel",
        "other_ns/r3.hotel",
        "other_ns:r3.hotel",
        "R3.hotel",
        "r0",
        "r03",
        "r3.Hotel",
        "r3.o0",
        HOSTILE,
        "`r3.hotel`",
        "r3.hotel` DETACH DELETE n //",
        "r3.hotel\x00",
        "",
        "   ",
    ],
)
def test_not_visible(item: str) -> None:
    assert _refused(item) == Violation(f"access {item.strip()}", "not_visible", NOT_VISIBLE)


def test_a_state_visible_in_another_request_of_the_same_shape_is_not_visible_here() -> None:
    # The same id, shown to a different Active State, proves nothing about this one.
    vis = make_vis(index_states=frozenset(), relation_ends=frozenset())
    decision = check_access(["r3.hotel"], vis, LIMITS)
    assert [v.rule for v in decision.violations] == ["not_visible"]
    assert decision.states == []
