"""The bench's synthetic data: engine bundles and the token scenario are valid and seeded."""

from __future__ import annotations

from flowstate.models import ids
from flowstate_bench.scenarios import scenario
from flowstate_bench.synthetic import BundleShape, request_bundle


def test_bundle_has_the_requested_shape() -> None:
    b = request_bundle("ns", 7)
    assert (len(b.states), len(b.relations), len(b.observations), len(b.evidence)) == (
        50,
        150,
        20,
        20,
    )


def test_bundle_relations_point_backwards_and_are_distinct() -> None:
    b = request_bundle("ns", 30)
    assert len(set(b.relations)) == len(b.relations)
    for rel in b.relations:
        assert ids.request_seq(ids.request_of(rel.target)) <= 30
        assert int(rel.target.rsplit("s", 1)[1]) < 50


def test_first_bundle_only_relates_inside_itself() -> None:
    b = request_bundle("ns", 1, BundleShape(states=5, relations=15, observations=1, evidence=1))
    assert b.relations and all(ids.request_of(r.target) == "r1" for r in b.relations)


def test_bundles_are_deterministic_per_seed() -> None:
    assert request_bundle("ns", 3) == request_bundle("ns", 3)
    assert request_bundle("ns", 3, seed=1) != request_bundle("ns", 3, seed=2)


def test_scenario_needs_facts_one_to_four_requests_back() -> None:
    turns = scenario(100)
    assert [t.seq for t in turns] == list(range(1, 101))
    assert not turns[0].needs
    for t in turns[1:]:
        assert 1 <= len(t.needs) <= 2
        assert all(1 <= t.seq - f.seq <= 4 for f in t.needs)


def test_scenario_values_are_unique_and_only_in_their_own_ticket() -> None:
    turns = scenario(60)
    values = [f.value for t in turns for f in t.facts]
    assert len(set(values)) == len(values)
    for t in turns:
        for f in t.facts:
            assert f.value in t.tool_output and f.value not in t.text
        assert all(f.value not in t.text and f.value in t.answer for f in t.needs)


def test_scenario_is_seeded_and_deeper_sessions_extend_shallower_ones() -> None:
    assert scenario(10, seed=3) == scenario(10, seed=3)
    assert scenario(10, seed=3) != scenario(10, seed=4)
    assert scenario(25)[:10] == scenario(10)
