"""Forgetting requests, states and whole namespaces, counted to zero."""

from __future__ import annotations

import json

import pytest

from flowstate.errors import NotFoundError
from flowstate.models import Direction, RelationType, RelationView
from flowstate.store import GraphCounts
from tests.neo4j.store_helpers import (
    decision,
    edges_touching,
    leftovers,
    unique_key,
    with_decisions,
)

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
    assert deleted.counts() == GraphCounts(nodes=1, relationships=5)
    assert chain.get_observation("r2.o1")  # observations stay with the request
    assert chain.reveal(["r2.c"])[0].relations == [
        RelationView(type="EVIDENCED_BY", direction=Direction.OUT, other="r2.o1")
    ]
    assert [s.id for s in chain.request_states("r2")] == ["r2.c"]


def test_forget_namespace_leaves_zero(chain, raw):
    chain.save_draft("r4", "{}", owner="w", first=True)
    before = raw.count(chain.namespace)
    deleted = chain.forget_namespace(force=True)
    assert (deleted.nodes, deleted.relationships) == before
    assert raw.count(chain.namespace) == (0, 0)
    assert chain.counts() == GraphCounts(nodes=0, relationships=0)
    assert chain.next_request_seq() == 1


def test_counts_match_an_independent_count(chain, raw):
    chain.save_draft("r4", "{}", owner="w", first=True)
    assert (chain.counts().nodes, chain.counts().relationships) == raw.count(chain.namespace)


def test_forget_unknown_is_not_found(chain):
    with pytest.raises(NotFoundError, match="r9"):
        chain.forget_request("r9")
    with pytest.raises(NotFoundError, match=r"r1\.zz"):
        chain.forget_state("r1.zz")


def test_forget_namespace_spares_other_namespaces(chain, other_repo, other_make):
    other_repo.commit(other_make.bundle(1, states=["a"]))
    chain.forget_namespace(force=True)
    assert other_repo.counts() == GraphCounts(nodes=2, relationships=1)


# --- leaving nothing behind, counted -------------------------------------------------------


def _cited(repo, make) -> dict[str, str]:
    """r1: budget (evidenced), city; r2: hotel derived from the budget, decisions a1 (budget,
    hotel) and a2 (city), and a draft left under its id; r3: plan depending on the hotel, and a
    decision citing all three. Keys are unique in the whole database, so their ids can be
    searched for everywhere."""
    k = {name: unique_key(name) for name in ("budget", "city", "hotel", "plan")}
    budget, city, hotel = f"r1.{k['budget']}", f"r1.{k['city']}", f"r2.{k['hotel']}"
    repo.commit(
        make.bundle(
            1, states=[k["budget"], k["city"]], observations=1, evidence=[(budget, "r1.o1")]
        )
    )
    repo.commit(
        with_decisions(
            make.bundle(
                2,
                states=[k["hotel"]],
                observations=1,
                evidence=[(hotel, "r2.o1")],
                relations=[(RelationType.DERIVED_FROM, hotel, budget)],
            ),
            decision(make, "r2", 1, cites=[budget, hotel]),
            decision(make, "r2", 2, cites=[city], approved=False),
        )
    )
    repo.save_draft("r2", json.dumps({"note": hotel}), owner="w", first=True)
    repo.commit(
        with_decisions(
            make.bundle(
                3,
                states=[k["plan"]],
                relations=[(RelationType.DEPENDS_ON, f"r3.{k['plan']}", hotel)],
            ),
            decision(make, "r3", 1, cites=[budget, hotel, city]),
        )
    )
    return {"budget": budget, "city": city, "hotel": hotel, "plan": f"r3.{k['plan']}"}


def test_forget_state_leaves_nothing_behind(repo, make, other_repo, other_make, raw):
    ids = _cited(repo, make)
    other_ids = _cited(other_repo, other_make)
    other_before = raw.count(other_repo.namespace)
    before = raw.count(repo.namespace)
    # the scan does find them while they exist: the state's id, and two decisions' cites
    found = leftovers(raw, [ids["budget"]])
    assert sorted((r["labels"][0], r["key"]) for r in found) == [
        ("ActionDecision", "cites"),
        ("ActionDecision", "cites"),
        ("State", "id"),
    ]
    deleted = repo.forget_state(ids["budget"])
    # PRODUCED, EVIDENCED_BY, DERIVED_FROM from the hotel, CITES from r2.a1 and r3.a1
    assert deleted.counts() == GraphCounts(nodes=1, relationships=5)
    assert raw.count(repo.namespace) == (before[0] - 1, before[1] - 5)
    assert leftovers(raw, [ids["budget"]]) == []  # the whole database
    assert edges_touching(raw, repo.namespace, [ids["budget"]]) == 0
    assert repo.get_decision("r2.a1").cites == [ids["hotel"]]
    assert repo.get_decision("r3.a1").cites == [ids["hotel"], ids["city"]]
    assert raw.count(other_repo.namespace) == other_before
    assert other_repo.get_decision("r3.a1").cites == [
        other_ids["budget"],
        other_ids["hotel"],
        other_ids["city"],
    ]


def test_forget_request_leaves_nothing_behind(repo, make, other_repo, other_make, raw):
    ids = _cited(repo, make)
    _cited(other_repo, other_make)
    other_before = raw.count(other_repo.namespace)
    before = raw.count(repo.namespace)
    gone = ["r2", "r2.o1", "r2.a1", "r2.a2", ids["hotel"]]
    found = leftovers(raw, [ids["hotel"]], namespace=repo.namespace, scoped=gone)
    assert {r["namespace"] for r in found} == {repo.namespace}  # never the other namespace's
    assert {(r["labels"][0], r["key"]) for r in found} >= {
        ("Request", "id"),
        ("Draft", "request_id"),
        ("Observation", "request_id"),
        ("ActionDecision", "cites"),
    }
    deleted = repo.forget_request("r2")
    # r2, its hotel, r2.o1, r2.a1, r2.a2 and the draft
    assert deleted.nodes == 6
    # NEXT x2, PRODUCED x4, DERIVED_FROM, EVIDENCED_BY, CITES x3 from r2's decisions,
    # CITES from r3.a1, DEPENDS_ON from r3's plan
    assert deleted.relationships == 13
    assert raw.count(repo.namespace) == (before[0] - 6, before[1] - 13 + 1)  # NEXT r1 -> r3
    assert leftovers(raw, [ids["hotel"]], namespace=repo.namespace, scoped=gone) == []
    assert edges_touching(raw, repo.namespace, gone) == 0
    assert repo.open_requests() == []
    assert repo.get_decision("r3.a1").cites == [ids["budget"], ids["city"]]
    assert repo.reveal([ids["plan"]])[0].relations == []
    assert raw.count(other_repo.namespace) == other_before
    assert [d.id for d in other_repo.decisions()] == ["r2.a1", "r2.a2", "r3.a1"]


def test_forgotten_namespace_leaves_nothing_anywhere(repo, make, other_repo, other_make, raw):
    ids = _cited(repo, make)
    _cited(other_repo, other_make)
    other_before = raw.count(other_repo.namespace)
    before = raw.count(repo.namespace)
    deleted = repo.forget_namespace(force=True)
    assert (deleted.nodes, deleted.relationships) == before
    assert raw.count(repo.namespace) == (0, 0)
    assert leftovers(raw, [repo.namespace, *ids.values()]) == []
    assert raw.count(other_repo.namespace) == other_before


def test_what_forget_leaves_still_exports_and_reimports(repo, make, other_repo, raw):
    ids = _cited(repo, make)
    repo.forget_state(ids["city"])
    repo.forget_request("r2")
    lines = list(repo.export_jsonl())
    other_repo.import_jsonl(lines)
    assert list(other_repo.export_jsonl()) == lines
    assert raw.count(other_repo.namespace) == raw.count(repo.namespace)
