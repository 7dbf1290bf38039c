"""Writers on one namespace at once, each on its own connection: their requests run side by side,
none refused, ids r1..rN once each, no draft shared or left open."""

from __future__ import annotations

import pytest

from flowstate.settings import Neo4jSettings
from flowstate_bench.fault_writers import concurrent_writers

pytestmark = pytest.mark.neo4j

WRITERS, REQUESTS = 5, 4


def test_concurrent_writers_run_side_by_side(neo4j_settings: Neo4jSettings, namespace: str) -> None:
    found = concurrent_writers(neo4j_settings, WRITERS, REQUESTS, namespace=namespace)
    assert found.problems == []
    assert found.committed == found.distinct_ids == WRITERS * REQUESTS
    assert (found.repeated_ids, found.gaps, found.failed) == (0, 0, 0)
    assert found.states_checked == WRITERS * REQUESTS
    assert (found.crossed, found.missing, found.open_left) == (0, 0, 0)
    assert found.most_open_at_once > 1  # they did overlap: nothing made them take turns
