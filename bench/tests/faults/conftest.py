"""Fault tests: the shared test server for what must not break it, and one spare server of
their own for what does (SIGKILL, a stop mid-request).

The spare is booted in a background thread as soon as the first test of this folder runs
(when the session has tests that use it), so that it starts while the tests on the shared
server run; it is always stopped at the end. A test that breaks it brings it back.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import neo4j
import pytest

from flowstate.local.server import LocalServer
from flowstate_bench.fault_servers import spare_settings, warm_up
from tests.neo4j.conftest import Raw


class _Boot:
    def __init__(self, data_dir: Path) -> None:
        self.server = LocalServer(spare_settings(data_dir))
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, name="spare-neo4j", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        try:
            self.server.start()
            warm_up(self.server)
        except BaseException as e:  # re-raised in the test that needs the server
            self.error = e


@pytest.fixture(scope="session", autouse=True)
def _spare_boot(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[_Boot | None]:
    items = request.session.items
    if not any(isinstance(i, pytest.Function) and "spare" in i.fixturenames for i in items):
        yield None
        return
    boot = _Boot(tmp_path_factory.mktemp("spare-neo4j"))
    try:
        yield boot
    finally:
        boot.thread.join(timeout=300)
        boot.server.stop()


@pytest.fixture(scope="session")
def spare(_spare_boot: _Boot | None) -> LocalServer:
    assert _spare_boot is not None
    _spare_boot.thread.join(timeout=300)
    if _spare_boot.error is not None:
        raise _spare_boot.error
    return _spare_boot.server


@pytest.fixture
def spare_raw(spare: LocalServer) -> Callable[[], Raw]:
    """Direct Cypher against the spare server, independent of flowstate.store: a new driver at
    each call, since a test may have restarted the server meanwhile (close .driver)."""

    def connect() -> Raw:
        driver = neo4j.GraphDatabase.driver(
            spare.settings.bolt_uri, auth=None, notifications_min_severity="OFF"
        )
        return Raw(driver, "neo4j")

    return connect


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test here is of the slow `faults` tier (`-m "not faults"` skips it)."""
    here = str(Path(__file__).parent)
    for item in items:
        if str(item.path).startswith(here):
            item.add_marker(pytest.mark.faults)
