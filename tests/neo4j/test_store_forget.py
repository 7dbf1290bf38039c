"""Forgetting requests, states and whole namespaces, counted to zero."""

from __future__ import annotations

import pytest

from flowstate.errors import NotFoundError
from flowstate.models import Direction, RelationType, RelationView
from flowstate.store import GraphCounts

pytestmark = pytest.mark.neo4j


@pytest.fixture
def chain(repo, make):
    repo.commit(make.bundle(1, states=["a"], observations=1, evidence=[("r1.a", "r1.o1")]))
    repo.commit(
        make.bundle(
            2,
            states=["b", "c"],
            observations=2,
            evidence=[("r2.b", "r2.o1"), ("r2.c", "r2.o1")],
            relations=[
                (RelationType.REFINES, "r2.b", "r1.a"),
                (RelationType.DEPENDS_ON, "r2.c", "r2.b"),
            ],
        )
    )
    repo.commit(make.bundle(3, states=["d"], relations=[(RelationType.SUPERSEDES, "r3.d", "r2.b")]))
    return repo


def test_forget_middle_request_relinks_next(chain, raw):
    before = raw.count(chain.namespace)
    deleted = chain.forget_request("r2")
    # r2, r2.b, r2.c, r2.o1, r2.o2
    assert deleted.nodes == 5
    # PRODUCED x4, NEXT x2, REFINES, DEPENDS_ON, SUPERSEDES, EVIDENCED_BY x2
    assert deleted.relationships == 11
    after = raw.count(chain.namespace)
    # one NEXT edge r1 -> r3 replaces the two
    assert after == (before[0] - 5, before[1] - 11 + 1)
    assert raw.rows(
        "MATCH (a:Request {namespace: $ns})-[:NEXT]->(b) RETURN a.id AS a, b.id AS b",
        ns=chain.namespace,
    ) == [{"a": "r1", "b": "r3"}]
    assert (
        raw.rows(
            "MATCH (n) WHERE n.namespace = $ns AND (n.id = 'r2' OR n.request_id = 'r2') RETURN n",
            ns=chain.namespace,
        )
        == []
    )
    assert [r.id for r in chain.index()] == ["r1", "r3"]


def test_forget_last_and_first_request(chain):
    chain.forget_request("r3")
    chain.forget_request("r1")
    assert [r.id for r in chain.history()] == ["r2"]


def test_forget_state(chain, raw):
    deleted = chain.forget_state("r2.b")
    # PRODUCED, REFINES, DEPENDS_ON (from r2.c), SUPERSEDES (from r3.d), EVIDENCED_BY
    assert deleted == GraphCounts(nodes=1, relationships=5)
    assert chain.get_observation("r2.o1")  # observations stay with the request
    assert chain.reveal(["r2.c"])[0].relations == [
        RelationView(type="EVIDENCED_BY", direction=Direction.OUT, other="r2.o1")
    ]
    assert [s.id for s in chain.request_states("r2")] == ["r2.c"]


def test_forget_namespace_leaves_zero(chain, raw):
    chain.save_draft("r4", "{}")
    before = raw.count(chain.namespace)
    deleted = chain.forget_namespace()
    assert (deleted.nodes, deleted.relationships) == before
    assert raw.count(chain.namespace) == (0, 0)
    assert chain.counts() == GraphCounts(nodes=0, relationships=0)
    assert chain.next_request_seq() == 1


def test_counts_match_an_independent_count(chain, raw):
    chain.save_draft("r4", "{}")
    assert (chain.counts().nodes, chain.counts().relationships) == raw.count(chain.namespace)


def test_forget_unknown_is_not_found(chain):
    with pytest.raises(NotFoundError, match="r9"):
        chain.forget_request("r9")
    with pytest.raises(NotFoundError, match=r"r1\.zz"):
        chain.forget_state("r1.zz")


def test_forget_namespace_spares_other_namespaces(chain, other_repo, other_make):
    other_repo.commit(other_make.bundle(1, states=["a"]))
    chain.forget_namespace()
    assert other_repo.counts() == GraphCounts(nodes=2, relationships=1)
