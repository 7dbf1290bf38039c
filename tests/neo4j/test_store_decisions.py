"""Action decisions: committed with the request in one transaction, CITES-linked to the states
they relied on, read back, exported, and kept to their namespace."""

from __future__ import annotations

import json

import pytest

from flowstate.errors import NotFoundError, ValidationFailed
from flowstate.models import ActionDecision, Category, RelationType, RequestBundle
from tests.neo4j.store_helpers import decision, with_decisions
from tests.neo4j.test_store_hostile import HOSTILE, TEXTS

pytestmark = pytest.mark.neo4j


@pytest.fixture
def booked(repo, make):
    """r1: budget and city; r2: a hotel choice and two decisions citing r1's and r2's states."""
    repo.commit(make.bundle(1, states=[make.state("r1", "budget", Category.CONSTRAINT), "city"]))
    bundle = with_decisions(
        make.bundle(2, states=["hotel"], observations=1, evidence=[("r2.hotel", "r2.o1")]),
        decision(make, "r2", 1, cites=["r1.budget", "r2.hotel"]),
        decision(make, "r2", 2, cites=["r1.city"], approved=False, reason="over budget"),
    )
    repo.commit(bundle)
    return bundle


def test_decisions_round_trip(repo, booked):
    assert repo.decisions() == booked.decisions
    assert repo.decisions("r2") == booked.decisions
    assert repo.decisions("r1") == []
    assert repo.get_decision("r2.a2") == booked.decisions[1]
    assert repo.get_decision("r2.a2").approved is False
    assert repo.bundles()[1] == booked


def test_decisions_are_nodes_produced_by_the_request_citing_states(repo, booked, raw):
    ns = repo.namespace
    rows = raw.rows(
        "MATCH (r:Request {namespace: $ns})-[:PRODUCED]->(d:ActionDecision) "
        "OPTIONAL MATCH (d)-[:CITES]->(s:State) "
        "WITH r, d, s ORDER BY s.id "
        "RETURN r.id AS r, d.id AS d, labels(d) AS labels, d.namespace AS ns, d.cites AS cites, "
        "collect(s.id) AS cited ORDER BY d",
        ns=ns,
    )
    assert rows == [
        {
            "r": "r2",
            "d": "r2.a1",
            "labels": ["ActionDecision"],
            "ns": ns,
            "cites": ["r1.budget", "r2.hotel"],
            "cited": ["r1.budget", "r2.hotel"],
        },
        {
            "r": "r2",
            "d": "r2.a2",
            "labels": ["ActionDecision"],
            "ns": ns,
            "cites": ["r1.city"],
            "cited": ["r1.city"],
        },
    ]
    # r1, r2, 3 states, r2.o1, 2 decisions; NEXT, 6 PRODUCED, EVIDENCED_BY, 3 CITES
    assert raw.count(ns) == (8, 11)
    assert (repo.counts().nodes, repo.counts().relationships) == raw.count(ns)


def test_decision_without_cites_and_step_order(repo, make):
    # a10 comes after a2: ordered by step, not by the id's text
    late = decision(make, "r1", 10, step=9)
    early = decision(make, "r1", 2, step=1)
    repo.commit(with_decisions(make.bundle(1), late, early))
    assert [d.id for d in repo.decisions()] == ["r1.a2", "r1.a10"]
    assert repo.get_decision("r1.a10").cites == []


def test_decisions_across_requests_in_order(repo, make):
    repo.commit(with_decisions(make.bundle(1, states=["a"]), decision(make, "r1", 1, ["r1.a"])))
    repo.commit(with_decisions(make.bundle(2), decision(make, "r2", 1, ["r1.a"])))
    assert [d.id for d in repo.decisions()] == ["r1.a1", "r2.a1"]
    assert [d.id for d in repo.decisions("r2")] == ["r2.a1"]


def test_expand_accepts_decision_ids(repo, booked):
    records = repo.expand(["r2.a1", "r1", "r2.hotel", "r2.o1", "r2.a2"])
    assert [type(r).__name__ for r in records] == [
        "ActionDecision",
        "Request",
        "StateNode",
        "Observation",
        "ActionDecision",
    ]
    assert records[0] == booked.decisions[0]
    with pytest.raises(NotFoundError, match=r"r2\.a9"):
        repo.expand(["r2.a1", "r2.a9"])


def test_unknown_request_or_decision_is_not_found(repo, booked):
    with pytest.raises(NotFoundError, match="r9"):
        repo.decisions("r9")
    with pytest.raises(NotFoundError, match=r"r2\.a3"):
        repo.get_decision("r2.a3")


def _assert_nothing_of_r2(repo, raw, before) -> None:
    assert raw.count(repo.namespace) == before
    assert (
        raw.rows(
            "MATCH (n) WHERE n.namespace = $ns AND (n.id STARTS WITH 'r2' OR n.request_id = 'r2') "
            "RETURN n.id AS id",
            ns=repo.namespace,
        )
        == []
    )
    assert repo.next_request_seq() == 2


def test_a_missing_cite_fails_the_whole_commit(repo, make, raw):
    repo.commit(make.bundle(1, states=["a"]))
    before = raw.count(repo.namespace)
    bad = with_decisions(
        make.bundle(
            2,
            states=["b"],
            observations=1,
            evidence=[("r2.b", "r2.o1")],
            relations=[(RelationType.REFINES, "r2.b", "r1.a")],
        ),
        decision(make, "r2", 1, cites=["r1.a", "r2.b"]),
        decision(make, "r2", 2, cites=["r1.a", "r1.nope"]),
    )
    with pytest.raises(NotFoundError, match=r"r1\.nope") as info:
        repo.commit(bad)
    assert "r1.a," not in str(info.value)  # only the missing one is named
    _assert_nothing_of_r2(repo, raw, before)


def test_a_cite_of_another_namespace_is_not_found(repo, other_repo, make, other_make, raw):
    other_repo.commit(other_make.bundle(1, states=["secret"]))
    repo.commit(make.bundle(1, states=["a"]))
    before = raw.count(repo.namespace)
    with pytest.raises(NotFoundError) as info:
        repo.commit(with_decisions(make.bundle(2), decision(make, "r2", 1, ["r1.secret"])))
    assert other_repo.namespace not in str(info.value)
    _assert_nothing_of_r2(repo, raw, before)
    assert raw.rows(
        "MATCH (s:State {namespace: $ns})-[r]-() RETURN type(r) AS t", ns=other_repo.namespace
    ) == [{"t": "PRODUCED"}]


def test_a_cite_of_a_request_not_committed_yet_is_refused(repo, make, raw):
    repo.commit(make.bundle(1, states=["a"]))
    before = raw.count(repo.namespace)
    with pytest.raises(NotFoundError, match=r"cited state\(s\) r3\.x not found"):
        repo.commit(with_decisions(make.bundle(2), decision(make, "r2", 1, ["r3.x"])))
    _assert_nothing_of_r2(repo, raw, before)


def test_a_duplicate_decision_id_fails_the_whole_commit(repo, make, raw):
    repo.commit(make.bundle(1, states=["a"]))
    before = raw.count(repo.namespace)
    twice = decision(make, "r2", 1)
    with pytest.raises(ValidationFailed, match="already exists"):
        repo.commit(with_decisions(make.bundle(2, states=["b"]), twice, twice))
    _assert_nothing_of_r2(repo, raw, before)


def test_a_constructed_decision_is_validated_again(repo, make):
    good = decision(make, "r1", 1)
    hostile = ActionDecision.model_construct(**{**dict(good), "cites": ["x`}) DETACH DELETE n //"]})
    bundle = RequestBundle.model_construct(
        request=make.request(1),
        states=[],
        relations=[],
        observations=[],
        evidence=[],
        decisions=[hostile],
    )
    with pytest.raises(ValidationFailed, match="cited ids are not state ids"):
        repo.commit(bundle)
    assert repo.counts().nodes == 0


@pytest.mark.parametrize("text", TEXTS, ids=range(len(TEXTS)))
def test_hostile_reasons_and_arguments_are_stored_inert(repo, make, raw, text):
    hostile = decision(
        make,
        "r1",
        1,
        cites=["r1.a"],
        reason=text,
        tool=text[:128],
        arguments=json.dumps({"q": text}),
        approved=False,
    )
    repo.commit(with_decisions(make.bundle(1, states=["a"]), hostile))
    stored = repo.get_decision("r1.a1")
    assert stored == hostile
    assert stored.reason.encode() == text.encode()
    assert json.loads(stored.arguments) == {"q": text}
    labels = raw.rows(
        "MATCH (n) WHERE n.namespace = $ns RETURN labels(n) AS l ORDER BY n.id", ns=repo.namespace
    )
    assert [sorted(r["l"]) for r in labels] == [
        ["Request"],
        ["Environment", "State"],
        ["ActionDecision"],
        ["Namespace"],  # the namespace's counter node (no id, so last)
    ]
    # request, state, decision; PRODUCED x2, CITES
    assert raw.count(repo.namespace) == (3, 3)


@pytest.mark.parametrize("bad", HOSTILE, ids=range(len(HOSTILE)))
def test_hostile_decision_ids_are_refused_before_any_query(repo, bad):
    for call in (
        lambda: repo.get_decision(bad),
        lambda: repo.decisions(bad),
        lambda: repo.expand(["r1.a1", bad]),
    ):
        with pytest.raises(ValidationFailed, match="invalid") as info:
            call()
        assert len(str(info.value)) < 300


def test_decisions_are_scoped_to_the_namespace(repo, other_repo, make, other_make, booked):
    other_repo.commit(
        with_decisions(
            other_make.bundle(1, states=["budget"]),
            decision(other_make, "r1", 1, ["r1.budget"], reason="ELSEWHERE"),
        )
    )
    assert "ELSEWHERE" not in repr(repo.decisions())
    assert [d.id for d in repo.decisions()] == ["r2.a1", "r2.a2"]
    assert [d.id for d in other_repo.decisions()] == ["r1.a1"]
    with pytest.raises(NotFoundError) as info:
        repo.get_decision("r1.a1")
    assert other_repo.namespace not in str(info.value)
    with pytest.raises(NotFoundError):
        other_repo.decisions("r2")
    repo.forget_namespace(force=True)
    assert other_repo.get_decision("r1.a1").reason == "ELSEWHERE"
    assert other_repo.counts().relationships == 3  # PRODUCED x2, CITES


def test_export_and_import_carry_decisions(repo, other_repo, booked, raw):
    lines = list(repo.export_jsonl())
    records = [json.loads(line) for line in lines]
    decisions = [r for r in records if r["kind"] == "decision"]
    assert [d["id"] for d in decisions] == ["r2.a1", "r2.a2"]
    assert decisions[0]["cites"] == ["r1.budget", "r2.hotel"]
    assert all("namespace" not in d for d in decisions)
    created = other_repo.import_jsonl(lines)
    assert (created.nodes, created.relationships) == raw.count(other_repo.namespace)
    assert raw.count(other_repo.namespace) == raw.count(repo.namespace)
    assert list(other_repo.export_jsonl()) == lines
    moved = [d.model_copy(update={"namespace": repo.namespace}) for d in other_repo.decisions()]
    assert moved == repo.decisions()
    assert raw.rows(
        "MATCH (d:ActionDecision {namespace: $ns})-[:CITES]->(s) RETURN s.id AS s ORDER BY s",
        ns=other_repo.namespace,
    ) == [{"s": "r1.budget"}, {"s": "r1.city"}, {"s": "r2.hotel"}]


def test_import_of_a_decision_citing_a_state_not_in_the_file_imports_nothing(
    repo, other_repo, booked, raw
):
    lines = list(repo.export_jsonl())
    number = next(i for i, line in enumerate(lines, 1) if '"kind":"decision"' in line)
    lines[number - 1] = lines[number - 1].replace('"r1.budget"', '"r1.gone"')
    with pytest.raises(ValidationFailed, match=rf"line {number}: state r1\.gone cited by r2\.a1"):
        other_repo.import_jsonl(lines)
    assert raw.count(other_repo.namespace) == (0, 0)
