"""Reveal opens a state with its relations closed at the far end; expand opens any records."""

from __future__ import annotations

import pytest

from flowstate.errors import NotFoundError, ValidationFailed
from flowstate.models import Direction, Observation, RelationType, RelationView, Request, StateNode
from flowstate.store.catalog import Q, query

pytestmark = pytest.mark.neo4j


@pytest.fixture
def far(make):
    return make.state("r1", "budget", content="FAR-CONTENT", summary="FAR-SUMMARY")


@pytest.fixture
def graph(repo, make, far):
    repo.commit(
        make.bundle(
            1,
            states=[far],
            observations=1,
            evidence=[("r1.budget", "r1.o1")],
        )
    )
    repo.commit(
        make.bundle(
            2,
            states=["budget", "plan"],
            relations=[
                (RelationType.SUPERSEDES, "r2.budget", "r1.budget"),
                (RelationType.DEPENDS_ON, "r2.plan", "r2.budget"),
                (RelationType.CONTRADICTS, "r2.plan", "r1.budget"),
            ],
        )
    )
    return repo


def test_reveal_gives_full_state_and_relations_by_id_only(graph, far):
    [old, plan] = graph.reveal(["r1.budget", "r2.plan"])
    assert old.state == far
    assert old.relations == [
        RelationView(type="CONTRADICTS", direction=Direction.IN, other="r2.plan"),
        RelationView(type="EVIDENCED_BY", direction=Direction.OUT, other="r1.o1"),
        RelationView(type="SUPERSEDES", direction=Direction.IN, other="r2.budget"),
    ]
    assert old.superseded_by == ["r2.budget"]
    assert plan.relations == [
        RelationView(type="CONTRADICTS", direction=Direction.OUT, other="r1.budget"),
        RelationView(type="DEPENDS_ON", direction=Direction.OUT, other="r2.budget"),
    ]
    assert "FAR-" not in plan.model_dump_json()


def test_reveal_query_never_returns_the_far_end(graph, raw):
    rows = raw.rows(
        query(Q.REVEAL_STATES),
        namespace=graph.namespace,
        ids=["r2.plan", "r2.budget"],
        types=[t.value for t in RelationType] + ["EVIDENCED_BY"],
    )
    assert len(rows) == 2
    assert "FAR-" not in repr(rows)
    for row in rows:
        assert set(row) == {"state", "relations"}
        assert set(row["state"]) >= {"id", "summary", "content"}
        for rel in row["relations"]:  # "TYPE direction other-id", nothing of the far end
            kind, direction, other = rel.split(" ")
            assert direction in {"in", "out"} and other.startswith("r")


def test_reveal_unknown_ids_is_not_found_naming_them(graph):
    with pytest.raises(NotFoundError) as info:
        graph.reveal(["r2.plan", "r7.ghost", "r1.nothing"])
    assert "r7.ghost" in str(info.value) and "r1.nothing" in str(info.value)
    assert "r2.plan" not in str(info.value)


def test_other_namespace_ids_are_not_found_and_never_shown(graph, other_repo, other_make, store):
    other_repo.commit(
        other_make.bundle(
            3, states=[other_make.state("r3", "secret", content="OTHER-CONTENT")], observations=1
        )
    )
    for call in (
        lambda: graph.reveal(["r3.secret"]),
        lambda: graph.expand(["r3.secret", "r3.o1", "r3"]),
        lambda: graph.get_state("r3.secret"),
        lambda: graph.forget_state("r3.secret"),
        lambda: graph.forget_request("r3"),
        lambda: graph.request_states("r3"),
    ):
        with pytest.raises(NotFoundError) as info:
            call()
        assert "OTHER" not in str(info.value)
        assert other_repo.namespace not in str(info.value)
    assert other_repo.get_state("r3.secret").content == "OTHER-CONTENT"
    assert other_repo.counts().nodes == 3


def test_expand_mixes_kinds_in_the_order_asked(graph):
    records = graph.expand(["r1.o1", "r2", "r1.budget", "r2"])
    assert [type(r) for r in records] == [Observation, Request, StateNode]
    assert [r.id for r in records] == ["r1.o1", "r2", "r1.budget"]


def test_expand_with_a_missing_id_is_not_found(graph):
    with pytest.raises(NotFoundError, match=r"r1\.o9"):
        graph.expand(["r1", "r1.o9"])


@pytest.mark.parametrize(
    "call",
    [
        lambda repo: repo.get_state("r1"),
        lambda repo: repo.get_request("r1.budget"),
        lambda repo: repo.get_observation("r1.budget"),
        lambda repo: repo.reveal(["r1.o1"]),
        lambda repo: repo.reveal(["r1"]),
        lambda repo: repo.expand(["hotel"]),
    ],
    ids=["state-as-request", "request-as-state", "obs-as-state", "reveal-obs", "reveal-req", "key"],
)
def test_ids_of_the_wrong_kind_are_usage_errors(graph, call):
    with pytest.raises(ValidationFailed, match="invalid"):
        call(graph)
