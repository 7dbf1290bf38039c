"""The newest Neo4j line (2026.x) started for real by the managed server, on spare ports with its
own data folder. Slow (a first download of about 200 MB, then 15-30 s per start), so it has its
own marker: `-m "not newest_neo4j"` leaves it out. Skipped, with the reason, on a machine without
a Java 21 or 25.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import neo4j
import pytest

from flowstate.api import FlowState
from flowstate.errors import LocalServerError
from flowstate.local.java import find_java
from flowstate.local.lines import NEWEST_VERSION, line_for
from flowstate.local.probe import http_get, port_is_free
from flowstate.local.server import LocalServer
from tests.local.server_helpers import local_settings

pytestmark = [pytest.mark.neo4j, pytest.mark.newest_neo4j]
PASSWORD = "newest-line-pass"


@pytest.fixture(scope="module")
def newest(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalServer]:
    try:
        find_java(line_for(NEWEST_VERSION))
    except LocalServerError as e:
        pytest.skip(f"no Java for Neo4j {NEWEST_VERSION}: {e}")
    settings = local_settings(tmp_path_factory.mktemp("newest"), neo4j_version="latest")
    server = LocalServer(settings)
    server.start(password=PASSWORD)
    try:
        yield server
    finally:
        stopped = server.stop()
        assert stopped.was_running and not stopped.forced
        assert port_is_free(settings.bolt_port) and port_is_free(settings.http_port)


def test_it_is_the_newest_version_with_auth_on(newest: LocalServer) -> None:
    s = newest.settings
    info = newest.info()
    assert info is not None and info.version == NEWEST_VERSION and info.auth
    with neo4j.GraphDatabase.driver(s.bolt_uri, auth=("neo4j", PASSWORD)) as driver:
        records = driver.execute_query("CALL dbms.components() YIELD versions, edition").records
    assert records[0]["versions"] == [NEWEST_VERSION]
    assert records[0]["edition"] == "community"
    with (
        neo4j.GraphDatabase.driver(s.bolt_uri, auth=("neo4j", "wrong")) as driver,
        pytest.raises(neo4j.exceptions.AuthError),
    ):
        driver.verify_connectivity()


def test_browser_is_served_and_points_at_our_bolt_port(newest: LocalServer) -> None:
    s = newest.settings
    browser = http_get(f"{s.http_url}/browser/")
    assert browser is not None
    status, body = browser
    assert status == 200 and b"Neo4j Browser" in body
    answered = http_get(s.http_url)
    assert answered is not None
    discovery = json.loads(answered[1])
    assert discovery["neo4j_version"] == NEWEST_VERSION
    assert discovery["bolt_direct"] == s.bolt_uri


def test_flowstate_connects_and_applies_its_schema(newest: LocalServer) -> None:
    s = newest.settings
    with FlowState.connect(s.bolt_uri, "newest_line", user="neo4j", password=PASSWORD) as fs:
        assert fs.history() == []
    with neo4j.GraphDatabase.driver(s.bolt_uri, auth=("neo4j", PASSWORD)) as driver:
        names = {r["name"] for r in driver.execute_query("SHOW CONSTRAINTS YIELD name").records}
    assert "flowstate_state_id" in names
