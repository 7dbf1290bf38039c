"""Retention: expiring one category of states, or the observations, created before a cut-off."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from flowstate.errors import ReadOnlyError, ValidationFailed
from flowstate.models import Category, RelationType
from flowstate.store import GraphCounts, Repository
from flowstate.store.catalog import Q, query
from tests.neo4j.store_helpers import decision, with_decisions

pytestmark = pytest.mark.neo4j

OLD = datetime(2024, 1, 10, 12, 0, tzinfo=UTC)
CUT = datetime(2024, 6, 1, tzinfo=UTC)
NEW = datetime(2024, 12, 24, 8, 0, tzinfo=UTC)


def _fill(repo, make):
    """r1 (old): env `weather`, preference `seat`, observations o1 (old) and o2 (new);
    r2 (new): env `hotel` derived from the weather, a decision citing both env states."""
    env, pref = Category.ENVIRONMENT, Category.PREFERENCE
    repo.commit(
        make.bundle(
            1,
            states=[
                make.state("r1", "weather", env, created_at=OLD, updated_at=OLD),
                make.state("r1", "seat", pref, created_at=OLD, updated_at=OLD),
            ],
            observations=[
                make.observation("r1", 1, created_at=OLD),
                make.observation("r1", 2, created_at=NEW),
            ],
            evidence=[("r1.weather", "r1.o1"), ("r1.seat", "r1.o1"), ("r1.seat", "r1.o2")],
        )
    )
    repo.commit(
        with_decisions(
            make.bundle(
                2,
                states=[make.state("r2", "hotel", env, created_at=NEW, updated_at=NEW)],
                relations=[(RelationType.DERIVED_FROM, "r2.hotel", "r1.weather")],
            ),
            decision(make, "r2", 1, cites=["r1.weather", "r2.hotel", "r1.seat"]),
        )
    )
    return repo


@pytest.fixture
def filled(repo, make):
    return _fill(repo, make)


def test_expire_a_category_deletes_only_its_old_states(filled, raw):
    before = raw.count(filled.namespace)
    deleted = filled.expire(Category.ENVIRONMENT, CUT)
    # r1.weather with PRODUCED, EVIDENCED_BY, DERIVED_FROM (from r2.hotel), CITES
    assert deleted.counts() == GraphCounts(nodes=1, relationships=4)
    assert raw.count(filled.namespace) == (before[0] - 1, before[1] - 4)
    assert [s.id for s in filled.request_states("r1")] == ["r1.seat"]
    assert [s.id for s in filled.request_states("r2")] == ["r2.hotel"]
    assert filled.reveal(["r2.hotel"])[0].relations == []
    # the decision stays, without the expired state's id
    assert filled.get_decision("r2.a1").cites == ["r2.hotel", "r1.seat"]


def test_expire_names_the_category_by_value_too(filled):
    assert filled.expire("preference", CUT).counts() == GraphCounts(nodes=1, relationships=4)
    assert filled.get_decision("r2.a1").cites == ["r1.weather", "r2.hotel"]


def test_a_decision_citing_several_expired_states_loses_all_of_them(repo, make):
    _fill(repo, make)
    repo.expire(Category.ENVIRONMENT, NEW + timedelta(days=1))
    assert repo.get_decision("r2.a1").cites == ["r1.seat"]
    assert repo.index()[1].states == []


def test_expire_observations_removes_their_evidence_edges(filled, raw):
    deleted = filled.expire("observation", CUT)
    # r1.o1 with PRODUCED and two EVIDENCED_BY
    assert deleted.counts() == GraphCounts(nodes=1, relationships=3)
    assert [o["id"] for o in _observations(raw, filled.namespace)] == ["r1.o2"]
    relations = {s.state.id: s.relations for s in filled.reveal(["r1.weather", "r1.seat"])}
    assert [(v.type, v.other) for v in relations["r1.seat"]] == [("EVIDENCED_BY", "r1.o2")]
    assert [(v.type, v.other) for v in relations["r1.weather"]] == [("DERIVED_FROM", "r2.hotel")]
    assert raw.rows(
        "MATCH (:State {namespace: $ns})-[:EVIDENCED_BY]->(o) RETURN o.id AS o",
        ns=filled.namespace,
    ) == [{"o": "r1.o2"}]


def _observations(raw, ns):
    return raw.rows("MATCH (o:Observation {namespace: $ns}) RETURN o.id AS id ORDER BY id", ns=ns)


def test_the_cut_off_itself_is_kept(filled):
    assert filled.expire(Category.ENVIRONMENT, OLD).counts() == GraphCounts(
        nodes=0, relationships=0
    )
    assert filled.expire("observation", OLD).counts() == GraphCounts(nodes=0, relationships=0)
    assert filled.expire(Category.ENVIRONMENT, OLD + timedelta(microseconds=1)).nodes == 1


def test_nothing_to_expire_deletes_nothing(filled, raw):
    before = raw.count(filled.namespace)
    for kind in [*Category, "observation"]:
        assert filled.expire(kind, datetime(2000, 1, 1, tzinfo=UTC)).nodes == 0
    assert raw.count(filled.namespace) == before


def test_other_offsets_compare_as_the_same_instant(filled):
    lisbon_summer = CUT.astimezone(timezone(timedelta(hours=1)))
    assert filled.expire(Category.ENVIRONMENT, lisbon_summer).nodes == 1


@pytest.mark.parametrize(
    ("kind", "before", "message"),
    [
        ("observations", CUT, "cannot expire 'observations'"),
        ("Decision", CUT, "cannot expire 'Decision'"),
        ("x`}) DETACH DELETE n //", CUT, "cannot expire"),
        (None, CUT, "cannot expire None"),
        (Category.ARTIFACT, CUT.replace(tzinfo=None), "timezone-aware"),
        ("observation", "2024-06-01T00:00:00Z", "timezone-aware"),
    ],
)
def test_bad_arguments_are_refused_before_any_query(filled, raw, kind, before, message):
    snapshot = raw.count(filled.namespace)
    with pytest.raises(ValidationFailed, match=message):
        filled.expire(kind, before)
    assert raw.count(filled.namespace) == snapshot


def test_read_only_refuses_to_expire(store, filled, raw):
    snapshot = raw.count(filled.namespace)
    ro = Repository(store, filled.namespace, read_only=True)
    with pytest.raises(ReadOnlyError, match="cannot expire"):
        ro.expire("observation", NEW + timedelta(days=1))
    assert raw.count(filled.namespace) == snapshot


def test_expiry_spares_other_namespaces(filled, other_repo, other_make, raw):
    _fill(other_repo, other_make)
    snapshot = raw.count(other_repo.namespace)
    filled.expire(Category.ENVIRONMENT, NEW + timedelta(days=1))
    filled.expire(Category.PREFERENCE, NEW + timedelta(days=1))
    filled.expire("observation", NEW + timedelta(days=1))
    assert raw.count(other_repo.namespace) == snapshot
    assert other_repo.get_decision("r2.a1").cites == ["r1.weather", "r2.hotel", "r1.seat"]
    assert filled.get_decision("r2.a1").cites == []


def test_an_expired_namespace_still_exports_and_reimports(filled, other_repo, raw):
    filled.expire(Category.ENVIRONMENT, CUT)
    filled.expire("observation", CUT)
    lines = list(filled.export_jsonl())
    other_repo.import_jsonl(lines)
    assert list(other_repo.export_jsonl()) == lines
    assert raw.count(other_repo.namespace) == raw.count(filled.namespace)


def _operators(plan) -> list[tuple[str, str]]:
    found = [(plan["operatorType"], plan.get("args", {}).get("Details", ""))]
    for child in plan.get("children", []):
        found += _operators(child)
    return found


@pytest.mark.parametrize(
    ("name", "params", "index"),
    [
        (
            Q.EXPIRING_STATES,
            {"category": "environment"},
            "s:State(namespace, category, created_at)",
        ),
        (Q.EXPIRE_OBSERVATIONS, {}, "o:Observation(namespace, created_at)"),
    ],
)
def test_expiry_seeks_its_index(filled, raw, name, params, index):
    result = raw.driver.execute_query(
        "EXPLAIN " + query(name),
        {"namespace": filled.namespace, "before": CUT, **params},
        database_=raw.database,
    )
    operators = _operators(result.summary.plan)
    seeks = [details for op, details in operators if op.startswith("NodeIndexSeek")]
    assert any(index in details and "created_at < $before" in details for details in seeks)
    assert not [op for op, _ in operators if "Scan" in op]
