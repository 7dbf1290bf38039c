"""Provenance: the states a state rests on, their evidence and requests, and the edges."""

from __future__ import annotations

import re

import pytest

from flowstate.errors import NotFoundError, ValidationFailed
from flowstate.models import Category, RelationType
from flowstate.models.views import Edge
from flowstate.store.catalog import Q, query
from flowstate.store.reading import MAX_PROVENANCE_DEPTH
from tests.neo4j.test_store_hostile import HOSTILE

pytestmark = pytest.mark.neo4j

R = RelationType


@pytest.fixture
def trip(repo, make):
    """r1: budget (evidenced by r1.o1), city; r2: hotel derived from the budget, depending on
    the city (evidenced by r2.o1); r3: plan refining the hotel and contradicting the city, and
    an unrelated note; r4: a hotel superseding r2's."""
    bundles = [
        make.bundle(
            1,
            states=[make.state("r1", "budget", Category.CONSTRAINT), "city"],
            observations=2,
            evidence=[("r1.budget", "r1.o1")],
        ),
        make.bundle(
            2,
            states=["hotel"],
            observations=1,
            evidence=[("r2.hotel", "r2.o1")],
            relations=[
                (R.DERIVED_FROM, "r2.hotel", "r1.budget"),
                (R.DEPENDS_ON, "r2.hotel", "r1.city"),
            ],
        ),
        make.bundle(
            3,
            states=["plan", "note"],
            relations=[(R.REFINES, "r3.plan", "r2.hotel"), (R.CONTRADICTS, "r3.plan", "r1.city")],
        ),
        make.bundle(4, states=["hotel"], relations=[(R.SUPERSEDES, "r4.hotel", "r2.hotel")]),
    ]
    for bundle in bundles:
        repo.commit(bundle)
    return bundles


def test_provenance_of_a_state(repo, trip):
    b1, b2, b3, _ = trip
    p = repo.provenance("r3.plan")
    assert p.state_id == "r3.plan"
    assert [s.id for s in p.states] == ["r3.plan", "r1.city", "r2.hotel", "r1.budget"]
    assert p.states[0] == b3.states[0]
    assert p.states[3] == b1.states[0]
    assert p.observations == [b1.observations[0], b2.observations[0]]  # not r1.o2: uncited
    assert p.requests == [b1.request, b2.request, b3.request]
    assert p.edges == sorted(
        [
            Edge("r3.plan", "REFINES", "r2.hotel"),
            Edge("r3.plan", "CONTRADICTS", "r1.city"),
            Edge("r2.hotel", "DERIVED_FROM", "r1.budget"),
            Edge("r2.hotel", "DEPENDS_ON", "r1.city"),
            Edge("r1.budget", "EVIDENCED_BY", "r1.o1"),
            Edge("r2.hotel", "EVIDENCED_BY", "r2.o1"),
            Edge("r1", "PRODUCED", "r1.budget"),
            Edge("r1", "PRODUCED", "r1.city"),
            Edge("r1", "PRODUCED", "r1.o1"),
            Edge("r2", "PRODUCED", "r2.hotel"),
            Edge("r2", "PRODUCED", "r2.o1"),
            Edge("r3", "PRODUCED", "r3.plan"),
        ]
    )
    assert p.model_dump(mode="json")["edges"][0] == list(p.edges[0])


def test_only_outgoing_edges_are_followed(repo, trip):
    p = repo.provenance("r2.hotel")
    assert [s.id for s in p.states] == ["r2.hotel", "r1.budget", "r1.city"]
    assert "r3.plan" not in repr(p)
    assert "r4.hotel" not in repr([p.states, p.edges, p.requests])
    assert [r.id for r in p.requests] == ["r1", "r2"]
    # Validity, not lineage: the newer state that supersedes it is named, not followed.
    assert p.superseded == {"r2.hotel": ["r4.hotel"]}
    assert p.tree().splitlines()[0].endswith("(SUPERSEDED by r4.hotel)")


def test_a_state_that_rests_on_nothing(repo, trip):
    p = repo.provenance("r3.note")
    assert [s.id for s in p.states] == ["r3.note"]
    assert p.observations == []
    assert [r.id for r in p.requests] == ["r3"]
    assert p.edges == [Edge("r3", "PRODUCED", "r3.note")]


def test_supersedes_is_followed(repo, trip):
    assert [s.id for s in repo.provenance("r4.hotel").states] == [
        "r4.hotel",
        "r2.hotel",
        "r1.budget",
        "r1.city",
    ]


def test_depth_is_bounded(repo, trip):
    assert [s.id for s in repo.provenance("r4.hotel", max_depth=0).states] == ["r4.hotel"]
    assert [s.id for s in repo.provenance("r4.hotel", max_depth=1).states] == [
        "r4.hotel",
        "r2.hotel",
    ]
    one = repo.provenance("r4.hotel", max_depth=1)
    # edges only between listed records: r2.hotel's own DERIVED_FROM / DEPENDS_ON are beyond
    assert [e for e in one.edges if e.type != "PRODUCED"] == [
        Edge("r2.hotel", "EVIDENCED_BY", "r2.o1"),
        Edge("r4.hotel", "SUPERSEDES", "r2.hotel"),
    ]
    # r1.city is one hop from r3.plan (CONTRADICTS) and two through r2.hotel: listed once
    states = [s.id for s in repo.provenance("r3.plan", max_depth=MAX_PROVENANCE_DEPTH).states]
    assert sorted(states) == sorted(set(states))


def test_a_long_chain_stops_at_max_depth(repo, make):
    for seq in range(1, 10):
        relations = [(R.DERIVED_FROM, f"r{seq}.s", f"r{seq - 1}.s")] if seq > 1 else []
        repo.commit(make.bundle(seq, states=["s"], relations=relations))
    assert [s.id for s in repo.provenance("r9.s").states] == [f"r{n}.s" for n in range(9, 2, -1)]
    assert len(repo.provenance("r9.s", max_depth=8).states) == 9


def test_cycles_terminate_and_list_each_state_once(repo, make):
    repo.commit(
        make.bundle(
            1,
            states=["a", "b"],
            relations=[(R.CONTRADICTS, "r1.a", "r1.b"), (R.CONTRADICTS, "r1.b", "r1.a")],
        )
    )
    p = repo.provenance("r1.a", max_depth=MAX_PROVENANCE_DEPTH)
    assert [s.id for s in p.states] == ["r1.a", "r1.b"]
    assert [e for e in p.edges if e.type == "CONTRADICTS"] == [
        Edge("r1.a", "CONTRADICTS", "r1.b"),
        Edge("r1.b", "CONTRADICTS", "r1.a"),
    ]


@pytest.mark.parametrize("depth", [-1, MAX_PROVENANCE_DEPTH + 1, True, 2.0, "3", None])
def test_bad_depths_are_refused(repo, trip, depth):
    with pytest.raises(ValidationFailed, match="max_depth"):
        repo.provenance("r3.plan", max_depth=depth)


def test_the_query_bound_matches_the_repository_limit():
    text = query(Q.PROVENANCE)
    assert re.findall(r"\{0,(\d+)\}", text) == [str(MAX_PROVENANCE_DEPTH)]
    hops = [h for h in re.findall(r"\[[a-z]*:([A-Z_|]+)\]", text) if "|" in h]
    assert len(hops) == 2
    for hop in hops:
        assert hop.split("|") == [t.value for t in RelationType]


def test_unknown_state_is_not_found(repo, trip):
    with pytest.raises(NotFoundError, match=r"r3\.zz"):
        repo.provenance("r3.zz")


@pytest.mark.parametrize("bad", [*HOSTILE, "r1", "r1.o1", "r1.a1"], ids=range(len(HOSTILE) + 3))
def test_hostile_or_other_ids_are_refused(repo, bad):
    with pytest.raises(ValidationFailed, match="invalid state id") as info:
        repo.provenance(bad)
    assert len(str(info.value)) < 300


def test_provenance_is_scoped_to_the_namespace(repo, other_repo, make, other_make, trip):
    other_repo.commit(other_make.bundle(1, states=["secret"]))
    with pytest.raises(NotFoundError) as info:
        repo.provenance("r1.secret")
    assert other_repo.namespace not in str(info.value)
    with pytest.raises(NotFoundError):
        other_repo.provenance("r3.plan")


def test_every_hop_stays_in_the_namespace(repo, other_repo, make, other_make, raw):
    # Edges across namespaces are never written by FlowState; plant them to prove the query
    # would not follow one: a -> (other namespace) b -> c, and a -> foreign evidence.
    repo.commit(make.bundle(1, states=["a", "c"]))
    other_repo.commit(other_make.bundle(1, states=["b"], observations=1))
    raw.rows(
        "MATCH (a:State {namespace: $ns, id: 'r1.a'}), (c:State {namespace: $ns, id: 'r1.c'}), "
        "(b:State {namespace: $other, id: 'r1.b'}), (o:Observation {namespace: $other}) "
        "CREATE (a)-[:DERIVED_FROM]->(b)-[:DERIVED_FROM]->(c), (a)-[:EVIDENCED_BY]->(o), "
        "(a)-[:DEPENDS_ON]->(o)",
        ns=repo.namespace,
        other=other_repo.namespace,
    )
    p = repo.provenance("r1.a")
    assert [s.id for s in p.states] == ["r1.a"]
    assert p.observations == []
    assert p.edges == [Edge("r1", "PRODUCED", "r1.a")]
    assert other_repo.namespace not in p.model_dump_json()
