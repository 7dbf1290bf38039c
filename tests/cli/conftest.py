"""The click runner every CLI test drives, pointed at the test session's Neo4j."""

from __future__ import annotations

import pytest
from click.testing import CliRunner, Result

from flowstate.cli.app import main
from flowstate.settings import Neo4jSettings


@pytest.fixture
def cli(neo4j_settings: Neo4jSettings, monkeypatch: pytest.MonkeyPatch):  # noqa: ANN201
    monkeypatch.setenv("FLOWSTATE_NEO4J_URI", neo4j_settings.uri)
    if neo4j_settings.password:
        monkeypatch.setenv("FLOWSTATE_NEO4J_PASSWORD", neo4j_settings.password.get_secret_value())
    runner = CliRunner()

    def invoke(*args: str, input: str | None = None) -> Result:
        return runner.invoke(main, list(args), input=input, catch_exceptions=False)

    return invoke
