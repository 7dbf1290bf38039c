"""Fault tests: the shared test server for what must not break it, and one spare server of
their own for what does (SIGKILL, a stop mid-request). The spare is started once per session
and always stopped at the end; each test that breaks it brings it back before it returns."""

from __future__ import annotations

from collections.abc import Iterator

import neo4j
import pytest

from flowstate.bench.fault_servers import spare_server
from flowstate.local.server import LocalServer
from tests.neo4j.conftest import Raw, other_repo, raw, repo, store  # noqa: F401


@pytest.fixture(scope="session")
def spare(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalServer]:
    with spare_server(tmp_path_factory.mktemp("spare-neo4j")) as server:
        yield server


def spare_raw(server: LocalServer) -> Raw:
    """Direct Cypher against the spare server, independent of flowstate.store (close .driver)."""
    driver = neo4j.GraphDatabase.driver(
        server.settings.bolt_uri, auth=None, notifications_min_severity="OFF"
    )
    return Raw(driver, "neo4j")
