"""Committing a RequestBundle: round trip, NEXT chain, labels, and all-or-nothing failure."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from flowstate.errors import ConflictError, NotFoundError, ReadOnlyError, ValidationFailed
from flowstate.models import Category, RelationType, RequestBundle, StateNode
from flowstate.store import Repository

pytestmark = pytest.mark.neo4j


def test_commit_round_trips_every_record(repo, make):
    bundle = make.bundle(
        1,
        states=[make.state("r1", "budget", Category.CONSTRAINT), "hotel"],
        relations=[(RelationType.DEPENDS_ON, "r1.hotel", "r1.budget")],
        observations=2,
        evidence=[("r1.hotel", "r1.o2")],
    )
    repo.commit(bundle)
    assert repo.get_request("r1") == bundle.request
    assert repo.get_state("r1.budget") == bundle.states[0]
    assert repo.get_observation("r1.o2") == bundle.observations[1]
    assert repo.history() == [bundle.request]
    assert repo.bundles() == [bundle]
    assert repo.next_request_seq() == 2


def test_requests_chain_with_next_and_states_carry_category_labels(repo, make, raw):
    assert repo.next_request_seq() == 1
    for seq in (1, 2, 3):
        repo.commit(make.bundle(seq, states=[make.state(f"r{seq}", "fact", Category.DECISION)]))
    rows = raw.rows(
        "MATCH (a:Request {namespace: $ns})-[:NEXT]->(b) RETURN a.id AS a, b.id AS b ORDER BY a",
        ns=repo.namespace,
    )
    assert rows == [{"a": "r1", "b": "r2"}, {"a": "r2", "b": "r3"}]
    labels = raw.rows(
        "MATCH (s:State {namespace: $ns, id: 'r2.fact'}) RETURN labels(s) AS l", ns=repo.namespace
    )
    assert sorted(labels[0]["l"]) == ["Decision", "State"]
    assert [r.id for r in repo.history()] == ["r1", "r2", "r3"]
    assert repo.next_request_seq() == 4


def test_relations_are_native_types_to_earlier_requests(repo, make, raw):
    repo.commit(make.bundle(1, states=["budget"]))
    repo.commit(
        make.bundle(
            2,
            states=["budget", "plan"],
            relations=[
                (RelationType.SUPERSEDES, "r2.budget", "r1.budget"),
                (RelationType.DERIVED_FROM, "r2.plan", "r2.budget"),
            ],
        )
    )
    rows = raw.rows(
        "MATCH (a:State {namespace: $ns})-[r]->(b:State) RETURN a.id AS a, type(r) AS t, b.id AS b "
        "ORDER BY a",
        ns=repo.namespace,
    )
    assert rows == [
        {"a": "r2.budget", "t": "SUPERSEDES", "b": "r1.budget"},
        {"a": "r2.plan", "t": "DERIVED_FROM", "b": "r2.budget"},
    ]


def _assert_nothing_of(repo, raw, rid: str) -> None:
    assert (
        raw.rows(
            "MATCH (n) WHERE n.namespace = $ns AND (n.id STARTS WITH $rid OR n.request_id = $rid) "
            "RETURN n.id AS id",
            ns=repo.namespace,
            rid=rid,
        )
        == []
    )


def test_missing_relation_target_fails_the_whole_commit(repo, make, raw):
    repo.commit(make.bundle(1, states=["a"]))
    before = raw.count(repo.namespace)
    bad = make.bundle(
        2,
        states=["b", "c"],
        observations=1,
        evidence=[("r2.b", "r2.o1")],
        relations=[
            (RelationType.REFINES, "r2.b", "r1.a"),
            (RelationType.REFINES, "r2.c", "r1.nope"),
        ],
    )
    with pytest.raises(NotFoundError, match=r"r1\.nope"):
        repo.commit(bad)
    assert raw.count(repo.namespace) == before
    _assert_nothing_of(repo, raw, "r2")
    assert repo.next_request_seq() == 2


def test_duplicate_request_id_fails_and_leaves_nothing(repo, make, raw):
    repo.commit(make.bundle(1, states=["a"]))
    before = raw.count(repo.namespace)
    with pytest.raises(ValidationFailed, match="already exists"):
        repo.commit(make.bundle(1, states=["other"], observations=1))
    assert raw.count(repo.namespace) == before
    assert repo.get_state("r1.a").summary == "summary of r1.a"
    with pytest.raises(NotFoundError):
        repo.get_state("r1.other")


def test_requests_commit_in_any_order_and_chain_in_seq_order(repo, make, raw):
    """Concurrent requests commit in the order they finish: r3 before r2 is fine, and the
    NEXT chain and the index still follow seq order."""
    repo.commit(make.bundle(1))
    repo.commit(make.bundle(3))
    repo.commit(make.bundle(2, states=["x"]))
    chain = raw.rows(
        "MATCH (a:Request {namespace: $ns})-[:NEXT]->(b) "
        "RETURN a.id AS source, b.id AS target ORDER BY a.seq",
        ns=repo.namespace,
    )
    assert [(r["source"], r["target"]) for r in chain] == [("r1", "r2"), ("r2", "r3")]
    assert [r.id for r in repo.index()] == ["r1", "r2", "r3"]
    commits = raw.rows(
        "MATCH (r:Request {namespace: $ns}) RETURN r.id AS id ORDER BY r.commit_seq",
        ns=repo.namespace,
    )
    assert [r["id"] for r in commits] == ["r1", "r3", "r2"]


def test_a_state_is_superseded_once(repo, make, raw):
    def replacing(seq: int) -> object:
        supersedes = (RelationType.SUPERSEDES, f"r{seq}.budget", "r1.budget")
        return make.bundle(seq, states=["budget"], relations=[supersedes])

    repo.commit(make.bundle(1, states=["budget"]))
    repo.commit(replacing(2))
    late = replacing(3)
    with pytest.raises(ConflictError, match="r1.budget is already superseded by r2.budget") as e:
        repo.commit(late)
    assert e.value.conflicts == [("r1.budget", "r2.budget")]
    _assert_nothing_of(repo, raw, "r3")


def test_relation_to_another_namespace_is_not_found(repo, other_repo, make, other_make, raw):
    other_repo.commit(other_make.bundle(1, states=["secret"]))
    with pytest.raises(NotFoundError) as info:
        repo.commit(
            make.bundle(1, states=["a"], relations=[(RelationType.REFINES, "r1.a", "r1.secret")])
        )
    assert other_repo.namespace not in str(info.value)
    assert raw.count(repo.namespace) == (0, 0)
    assert raw.rows(
        "MATCH (:State {namespace: $ns})-[r]-() RETURN count(r) AS n", ns=other_repo.namespace
    ) == [{"n": 1}]  # only its PRODUCED edge


def test_bundle_of_another_namespace_is_refused(repo, other_make):
    foreign = other_make.bundle(1)
    with pytest.raises(ValidationFailed, match="belongs to namespace"):
        repo.commit(foreign)


def test_constructed_bundle_is_validated_again(repo, make):
    hostile = StateNode.model_construct(
        **{**make.state("r1", "ok").model_dump(), "key": "x`}) DETACH DELETE n //", "id": "r1.x"}
    )
    bundle = RequestBundle.model_construct(
        request=make.request(1), states=[hostile], relations=[], observations=[], evidence=[]
    )
    with pytest.raises(ValidationFailed, match="key"):
        repo.commit(bundle)
    assert repo.counts().nodes == 0


def test_naive_timestamps_are_refused(repo, make):
    naive = make.request(1).model_copy(
        update={"started_at": make.request(1).started_at.replace(tzinfo=None)}
    )
    with pytest.raises(ValidationFailed, match="timezone"):
        repo.commit(RequestBundle(request=naive))


def test_read_only_repository_refuses_every_write(store, repo, make):
    repo.commit(make.bundle(1, states=["a"]))
    ro = Repository(store, repo.namespace, read_only=True)
    writes = [
        lambda: ro.commit(make.bundle(2)),
        lambda: ro.save_draft("r2", "{}", owner="w", first=True),
        lambda: ro.discard_draft("r2"),
        lambda: ro.forget_request("r1"),
        lambda: ro.forget_state("r1.a"),
        lambda: ro.forget_namespace(force=True),
        lambda: ro.import_jsonl([]),
        lambda: ro.expire("observation", make.request(1).started_at),
    ]
    for write in writes:
        with pytest.raises(ReadOnlyError, match="read-only"):
            write()
    assert ro.index()[0].id == "r1"
    assert ro.counts() == repo.counts()


def test_an_offset_with_seconds_keeps_its_instant(repo, make):
    """ISO text and Neo4j's datetime() keep offsets to the minute; old local mean times have
    seconds (Lisbon before 1912: -00:36:45). The instant is kept."""
    lisbon_lmt = timezone(-timedelta(minutes=36, seconds=45))
    started = datetime(1911, 5, 1, 12, 0, 0, 123456, tzinfo=lisbon_lmt)
    bundle = make.bundle(1, states=["x"])
    request = bundle.request.model_copy(update={"started_at": started})
    repo.commit(bundle.model_copy(update={"request": request}))
    assert repo.get_request("r1").started_at == started
