"""Session fixtures: one real Neo4j for the whole run, one fresh namespace per test."""

from __future__ import annotations

import os
import re
import uuid
from collections.abc import Iterator

# Imported now, not by its pytest plugin's end-of-run summary: a run that used no hypothesis
# test would import it there, under assertion rewriting, where CPython 3.11's parser has
# failed with "AST constructor recursion depth mismatch" and turned a passing run into exit 1.
import hypothesis
import pytest
from click.testing import CliRunner, Result

from flowstate.cli.app import main
from flowstate.llm import scripted
from flowstate.local.probe import bolt_answers
from flowstate.local.server import LocalServer
from flowstate.local.testing import Source, choose_source, docker_answers
from flowstate.settings import LocalServerSettings, Neo4jSettings
from flowstate.store import Repository, Store

TESTCONTAINERS_IMAGE = "neo4j:5.26-community"

# No per-example deadline (hypothesis' default is 200 ms): the properties say nothing about
# time, and a loaded machine would fail them at random. Speed is the benchmarks' to measure.
hypothesis.settings.register_profile("flowstate", deadline=None)
hypothesis.settings.load_profile("flowstate")


@pytest.fixture(scope="session")
def neo4j_settings() -> Iterator[Neo4jSettings]:
    """A real Neo4j: FLOWSTATE_NEO4J_URI, else testcontainers, else the managed local server."""
    source = choose_source(os.environ.get("FLOWSTATE_NEO4J_URI"), docker_answers())
    if source is Source.CONFIGURED:
        yield Neo4jSettings()
    elif source is Source.TESTCONTAINERS:
        yield from _testcontainers()
    else:
        yield from _local_server()


def _testcontainers() -> Iterator[Neo4jSettings]:
    from testcontainers.neo4j import Neo4jContainer

    with Neo4jContainer(TESTCONTAINERS_IMAGE, password="flowstate-test") as container:
        yield Neo4jSettings(
            uri=container.get_connection_url(), user="neo4j", password="flowstate-test"
        )


def _local_server() -> Iterator[Neo4jSettings]:
    local = LocalServerSettings()
    if LocalServer(local).info() is None and bolt_answers(local.bolt_port):
        # A Neo4j we did not start already answers there: use it as the demo would.
        yield Neo4jSettings(uri=local.bolt_uri)
        return
    server = LocalServer(local)
    result = server.start()
    try:
        yield Neo4jSettings(uri=result.info.bolt_uri)
    finally:
        # Leave a server that was already running (e.g. started by .ci/run) as it was.
        if not result.already_running:
            server.stop()


@pytest.fixture(autouse=True)
def scripted_models() -> Iterator[None]:
    """Scripted models a test registers are unregistered when it ends: a name names one
    script at a time, so the next test may use it again."""
    before = set(scripted.registered())
    yield
    for name in set(scripted.registered()) - before:
        scripted.unregister(name)


@pytest.fixture
def namespace(request: pytest.FixtureRequest) -> str:
    """A fresh namespace per test, so tests never see each other's data."""
    name = re.sub(r"[^A-Za-z0-9_]", "_", request.node.name)[:40]
    return f"t_{name}_{uuid.uuid4().hex[:8]}"


@pytest.fixture
def cli(neo4j_settings: Neo4jSettings, monkeypatch: pytest.MonkeyPatch):  # noqa: ANN201
    monkeypatch.setenv("FLOWSTATE_NEO4J_URI", neo4j_settings.uri)
    if neo4j_settings.password:
        monkeypatch.setenv("FLOWSTATE_NEO4J_PASSWORD", neo4j_settings.password.get_secret_value())
    runner = CliRunner()

    def invoke(*args: str, input: str | None = None) -> Result:
        return runner.invoke(main, list(args), input=input, catch_exceptions=False)

    return invoke


@pytest.fixture
def demo_ns(cli, namespace: str, neo4j_settings: Neo4jSettings) -> Iterator[str]:  # noqa: ANN001
    """A namespace holding the demo's eight requests, forgotten afterwards."""
    done = cli("demo", "-N", namespace, "--json")
    assert done.exit_code == 0, done.output
    yield namespace
    with Store.connect(neo4j_settings) as store:
        Repository(store, namespace).forget_namespace(force=True)
