"""Fixtures for the framework adapters' tests: a `FlowState` per test in its own namespace (and
a second one for the session API's twin of the same steps), forgotten afterwards."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from flowstate import FlowState
from flowstate.settings import Neo4jSettings
from flowstate.store import Repository, Store


@pytest.fixture
def fs(neo4j_settings: Neo4jSettings, namespace: str) -> Iterator[FlowState]:
    with FlowState.connect(settings=neo4j_settings, namespace=namespace) as front:
        yield front
    _forget(neo4j_settings, namespace)


@pytest.fixture
def twin(neo4j_settings: Neo4jSettings, namespace: str) -> Iterator[FlowState]:
    """Another namespace, where a test drives the session API through the same steps."""
    name = f"{namespace}_twin"
    with FlowState.connect(settings=neo4j_settings, namespace=name) as front:
        yield front
    _forget(neo4j_settings, name)


def _forget(neo4j_settings: Neo4jSettings, namespace: str) -> None:
    with Store.connect(neo4j_settings) as store:
        Repository(store, namespace).forget_namespace(force=True)
