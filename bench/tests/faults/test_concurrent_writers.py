"""Writers competing for one namespace, each on its own connection: one request at a time,
nobody stuck, ids r1..rN once each, no draft shared or left behind."""

from __future__ import annotations

import pytest

from flowstate.settings import Neo4jSettings
from flowstate_bench.fault_writers import concurrent_writers

pytestmark = pytest.mark.neo4j

WRITERS, REQUESTS = 5, 4


def test_concurrent_writers_take_turns(neo4j_settings: Neo4jSettings, namespace: str) -> None:
    found = concurrent_writers(neo4j_settings, WRITERS, REQUESTS, namespace=namespace)
    assert found.problems == []
    assert found.committed == found.distinct_ids == WRITERS * REQUESTS
    assert (found.repeated_ids, found.gaps, found.stuck) == (0, 0, 0)
    assert found.states_checked == WRITERS * REQUESTS
    assert (found.crossed, found.missing, found.drafts_left) == (0, 0, 0)
    assert found.busy_refusals > 0  # they did meet: the lease, not luck, kept them apart
