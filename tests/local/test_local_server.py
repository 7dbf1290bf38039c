"""The managed local Neo4j, started for real on spare ports with its own data folder.

These start extra servers (10-25 s each), so they share one started instance where they can.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import neo4j
import pytest

from flowstate.errors import LocalServerError
from flowstate.local.embedded import resolve_database
from flowstate.local.probe import bolt_answers, http_get, port_is_free
from flowstate.local.server import LocalServer
from flowstate.settings import Neo4jSettings
from tests.local.server_helpers import local_settings

pytestmark = pytest.mark.neo4j


@pytest.fixture(scope="module")
def started(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalServer]:
    """One server started the way the demo starts it: through the embedded default."""
    settings = local_settings(tmp_path_factory.mktemp("local"))
    said: list[str] = []
    with pytest.MonkeyPatch.context() as env:
        env.delenv("FLOWSTATE_NEO4J_URI", raising=False)
        unconfigured = Neo4jSettings()
    resolved = resolve_database(unconfigured, settings, said.append)
    server = LocalServer(settings)
    try:
        assert resolved.uri == settings.bolt_uri
        assert any("starting the managed local server" in line for line in said)
        yield server
    finally:
        server.stop()


def test_bolt_and_browser_answer(started: LocalServer) -> None:
    s = started.settings
    with neo4j.GraphDatabase.driver(s.bolt_uri, auth=None) as driver:
        driver.verify_connectivity()
        assert driver.execute_query("RETURN 1 AS one").records[0]["one"] == 1
    browser = http_get(f"{s.http_url}/browser/")
    assert browser is not None
    status, body = browser
    assert status == 200
    assert b"Neo4j Browser" in body
    # Browser connects where the discovery document says: our port, not the default 7687.
    answered = http_get(s.http_url)
    assert answered is not None
    discovery = json.loads(answered[1])
    assert discovery["bolt_direct"] == s.bolt_uri


def test_second_start_is_a_noop(started: LocalServer) -> None:
    before = started.info()
    again = started.start()
    assert again.already_running
    assert before is not None and again.info.pid == before.pid


def test_status_reports_the_instance(started: LocalServer) -> None:
    info = started.info()
    assert info is not None
    assert info.version == started.settings.neo4j_version
    assert info.bolt_port == started.settings.bolt_port
    assert info.data_dir == str(started.settings.server_dir)
    assert not info.auth


def test_configured_uri_is_never_replaced(started: LocalServer) -> None:
    configured = Neo4jSettings(uri="neo4j+s://example.databases.neo4j.io")
    assert resolve_database(configured, started.settings, print) is configured


def test_port_taken_is_refused_before_anything_starts(started: LocalServer, tmp_path: Path) -> None:
    taken = started.settings.bolt_port  # held by the running server
    other = LocalServer(local_settings(tmp_path, bolt_port=taken))
    with pytest.raises(LocalServerError) as err:
        other.start()
    assert f"Port {taken} (Bolt) is already in use" in str(err.value)
    assert "FLOWSTATE_LOCAL_BOLT_PORT" in str(err.value)


def test_server_that_exits_during_start_shows_the_log(tmp_path: Path) -> None:
    server = LocalServer(local_settings(tmp_path, heap="1k"))  # the JVM refuses so small a heap
    with pytest.raises(LocalServerError) as err:
        server.start()
    assert "Neo4j exited during start" in str(err.value)
    assert "heap" in str(err.value).lower()
    assert server.info() is None


def test_missing_maven_is_explained(tmp_path: Path) -> None:
    server = LocalServer(
        local_settings(tmp_path, cache_dir=tmp_path / "cache", maven="no-such-mvn")
    )
    with pytest.raises(LocalServerError, match="Maven .* not found"):
        server.start()


def test_failed_download_is_explained(tmp_path: Path) -> None:
    settings = local_settings(
        tmp_path, cache_dir=tmp_path / "cache", neo4j_version="5.26.0-missing"
    )
    with pytest.raises(LocalServerError) as err:
        LocalServer(settings).start()
    assert "Downloading Neo4j 5.26.0-missing from Maven Central failed" in str(err.value)


def test_password_turns_auth_on_and_stop_frees_ports(tmp_path: Path) -> None:
    settings = local_settings(tmp_path)
    server = LocalServer(settings)
    result = server.start(password="s3cret-pass")
    try:
        assert result.info.auth
        with neo4j.GraphDatabase.driver(settings.bolt_uri, auth=("neo4j", "s3cret-pass")) as d:
            d.verify_connectivity()
        with (
            neo4j.GraphDatabase.driver(settings.bolt_uri, auth=("neo4j", "wrong")) as d,
            pytest.raises(neo4j.exceptions.AuthError),
        ):
            d.verify_connectivity()
    finally:
        stopped = server.stop()
    assert stopped.was_running and not stopped.forced
    assert port_is_free(settings.bolt_port) and port_is_free(settings.http_port)
    assert not bolt_answers(settings.bolt_port)
    assert server.stop().was_running is False


_START_AND_CONNECT = """
from flowstate.local.server import LocalServer
from flowstate.settings import LocalServerSettings, Neo4jSettings
from flowstate.store import Store

settings = LocalServerSettings()
result = LocalServer(settings).start()
with Store.connect(Neo4jSettings(uri=settings.bolt_uri)):  # both apply the schema at once
    pass
print("already" if result.already_running else "started")
"""


def test_two_processes_starting_one_fresh_folder_share_one_server(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    settings = local_settings(tmp_path)
    env = {
        **os.environ,
        "FLOWSTATE_LOCAL_DATA_DIR": str(settings.data_dir),
        "FLOWSTATE_LOCAL_BOLT_PORT": str(settings.bolt_port),
        "FLOWSTATE_LOCAL_HTTP_PORT": str(settings.http_port),
    }
    starts = [
        subprocess.Popen(
            [sys.executable, "-c", _START_AND_CONNECT],
            env=env,
            text=True,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )  # fmt: skip
        for _ in range(2)
    ]
    try:
        done = [p.communicate(timeout=300) for p in starts]
        assert [p.returncode for p in starts] == [0, 0], [err[-2000:] for _, err in done]
        assert sorted(out.strip() for out, _ in done) == ["already", "started"]
        assert LocalServer(settings).info() is not None  # its state is kept: status and stop work
    finally:
        for p in starts:
            p.kill()
        stopped = LocalServer(settings).stop()
    assert stopped.was_running
