"""Fixtures for the store tests: one Store per session (schema ensured once), one Repository
per test in its own namespace (forgotten afterwards), and a driver of our own for checks that
must not trust the code under test."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import neo4j
import pytest

from flowstate.models import (
    Category,
    Evidence,
    Observation,
    Outcome,
    Relation,
    RelationType,
    Request,
    RequestBundle,
    StateNode,
    Usage,
)
from flowstate.settings import Neo4jSettings
from flowstate.store import AsyncStore, Repository, Store
from tests.neo4j.bolt_proxy import BoltProxy
from tests.neo4j.engine_helpers import LONG_TAIL, Shell
from tests.neo4j.wire import Wire, through

T0 = datetime(2025, 3, 1, 9, 30, 0, 123456, tzinfo=UTC)


@pytest.fixture(scope="session")
def store(neo4j_settings: Neo4jSettings) -> Iterator[Store]:
    with Store.connect(neo4j_settings) as store:
        yield store


@pytest.fixture(scope="session")
def raw(neo4j_settings: Neo4jSettings) -> Iterator[Raw]:
    driver = neo4j.GraphDatabase.driver(
        neo4j_settings.uri, auth=neo4j_settings.auth(), notifications_min_severity="OFF"
    )
    with driver:
        yield Raw(driver, neo4j_settings.database)


@pytest.fixture
def repo(store: Store, namespace: str) -> Iterator[Repository]:
    repo = Repository(store, namespace)
    yield repo
    repo.forget_namespace(force=True)


@pytest.fixture
def other_repo(store: Store, namespace: str) -> Iterator[Repository]:
    """A second namespace, for isolation tests."""
    repo = Repository(store, f"{namespace}_other"[:128])
    yield repo
    repo.forget_namespace(force=True)


@pytest.fixture(scope="session")
def async_shell(neo4j_settings: Neo4jSettings) -> Iterator[Shell]:
    """The async shell: one event loop for the session, and an AsyncStore (the async neo4j
    driver) opened on it, which the async agents of every test share."""
    loop = asyncio.new_event_loop()
    astore = loop.run_until_complete(AsyncStore.connect(neo4j_settings))
    try:
        yield Shell("async", loop, astore)
    finally:
        loop.run_until_complete(astore.close())
        loop.close()


@pytest.fixture(params=["sync", "async"])
def shell(request: pytest.FixtureRequest) -> Shell:
    """The agent's shell an engine test drives: both pass the same tests. The async one
    runs on the async driver end to end (`AsyncFlowState`, `AsyncAgent`)."""
    if request.param == "sync":
        return Shell("sync")
    shell: Shell = request.getfixturevalue("async_shell")
    return shell


@pytest.fixture
def bolt_proxy(neo4j_settings: Neo4jSettings) -> Iterator[BoltProxy]:
    """A Bolt proxy on loopback to the test server, which the test can cut."""
    with BoltProxy.to(neo4j_settings.uri) as proxy:
        yield proxy


@pytest.fixture
def wire_store(neo4j_settings: Neo4jSettings, bolt_proxy: BoltProxy) -> Iterator[Store]:
    """A sync store whose connections go through `bolt_proxy`."""
    with Store.connect(through(neo4j_settings, bolt_proxy)) as store:
        yield store


@pytest.fixture
def wire(
    neo4j_settings: Neo4jSettings, bolt_proxy: BoltProxy, wire_store: Store, shell: Shell
) -> Iterator[Wire]:
    """The test's shell with every connection through `bolt_proxy` (see `tests/neo4j/wire.py`)."""
    if not shell.is_async:
        yield Wire(bolt_proxy, wire_store)
        return
    astore = shell.wait(AsyncStore.connect(through(neo4j_settings, bolt_proxy)))
    try:
        yield Wire(bolt_proxy, wire_store, Shell("async", shell.loop, astore))
    finally:
        shell.wait(astore.close())


@pytest.fixture
def make(namespace: str) -> Factory:
    return Factory(namespace)


@pytest.fixture
def other_make(other_repo: Repository) -> Factory:
    return Factory(other_repo.namespace)


class Raw:
    """Direct Cypher against the test server, independent of flowstate.store."""

    def __init__(self, driver: neo4j.Driver, database: str) -> None:
        self.driver, self.database = driver, database

    def rows(self, text: str, **params: Any) -> list[dict[str, Any]]:
        result = self.driver.execute_query(text, params, database_=self.database)
        return [r.data() for r in result.records]

    def count(self, namespace: str) -> tuple[int, int]:
        """Every node with that namespace property, whatever its label, and their edges; but
        not the namespace's counter node (ids handed out, lease), which holds no memory: tests
        of it look at it directly (`counter`)."""
        [row] = self.rows(
            "MATCH (n) WHERE n.namespace = $ns AND NOT n:Namespace "
            "OPTIONAL MATCH (n)-[r]-() RETURN count(DISTINCT n) AS n, count(DISTINCT r) AS r",
            ns=namespace,
        )
        return row["n"], row["r"]

    def counter(self, namespace: str) -> list[dict[str, Any]]:
        """The namespace's counter node, as properties (empty when it does not exist)."""
        return self.rows(
            "MATCH (m:Namespace {namespace: $ns}) RETURN properties(m) AS m", ns=namespace
        )


class Factory:
    """Builds valid records of one namespace with readable defaults."""

    def __init__(self, namespace: str) -> None:
        self.namespace = namespace
        self._clock = itertools.count(1)  # records are created in the order they are built

    def _tick(self, rid: str) -> datetime:
        return T0 + timedelta(hours=int(rid[1:]), seconds=next(self._clock))

    def request(self, seq: int, **fields: Any) -> Request:
        base = {
            "namespace": self.namespace,
            "id": f"r{seq}",
            "seq": seq,
            "text": f"request number {seq}",
            "summary": f"summary of r{seq}",
            "outcome": Outcome.ANSWERED,
            "answer": f"answer {seq}",
            "steps": 3,
            "started_at": T0 + timedelta(hours=seq),
            "finished_at": T0 + timedelta(hours=seq, minutes=2),
            "usage": Usage(prompt_tokens=100 * seq, completion_tokens=10 * seq, calls=seq),
        }
        return Request(**{**base, **fields})

    def state(
        self, rid: str, key: str, category: Category = Category.ENVIRONMENT, **fields: Any
    ) -> StateNode:
        base = {
            "namespace": self.namespace,
            "id": f"{rid}.{key}",
            "request_id": rid,
            "key": key,
            "category": category,
            "summary": f"summary of {rid}.{key}",
            "content": f"content of {rid}.{key}{LONG_TAIL}",
            "created_at": (created := self._tick(rid)),
            "updated_at": created + timedelta(milliseconds=1),
        }
        return StateNode(**{**base, **fields})

    def observation(self, rid: str, n: int, **fields: Any) -> Observation:
        base = {
            "namespace": self.namespace,
            "id": f"{rid}.o{n}",
            "request_id": rid,
            "step": n,
            "tool": "search_hotels",
            "arguments": '{"city":"Lisbon"}',
            "output": f"output {n} of {rid}",
            "created_at": self._tick(rid),
        }
        return Observation(**{**base, **fields})

    def bundle(
        self,
        seq: int,
        states: Sequence[str | StateNode] = (),
        relations: Sequence[tuple[RelationType, str, str]] = (),
        observations: int | Sequence[Observation] = 0,
        evidence: Sequence[tuple[str, str]] = (),
        **request_fields: Any,
    ) -> RequestBundle:
        """`states` are keys (or ready StateNodes), `observations` a count (or ready ones);
        relations and evidence use full ids."""
        rid = f"r{seq}"
        if isinstance(observations, int):
            observations = [self.observation(rid, n) for n in range(1, observations + 1)]
        return RequestBundle(
            request=self.request(seq, **request_fields),
            states=[s if isinstance(s, StateNode) else self.state(rid, s) for s in states],
            relations=[Relation(type=t, source=a, target=b) for t, a, b in relations],
            observations=list(observations),
            evidence=[Evidence(state=s, observation=o) for s, o in evidence],
        )
