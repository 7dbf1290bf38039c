"""Agents in threads sharing one Store: each namespace keeps exactly its own states."""

from __future__ import annotations

import pytest

from flowstate.store import Store
from flowstate_bench.fault_agents import concurrent_agents

pytestmark = pytest.mark.neo4j

AGENTS, REQUESTS = 8, 5


def test_concurrent_agents_never_cross_namespaces(store: Store, namespace: str) -> None:
    crowd = concurrent_agents(store, AGENTS, REQUESTS, prefix=namespace)
    assert crowd.problems == []
    assert crowd.states_checked == AGENTS * REQUESTS * 2
    assert (crowd.crossed, crowd.duplicated, crowd.missing) == (0, 0, 0)
