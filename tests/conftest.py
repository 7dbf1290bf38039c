"""Session fixtures. (Preliminary: the full source order lands with the local-server module.)"""

from __future__ import annotations

import uuid

import pytest

from flowstate.settings import Neo4jSettings


@pytest.fixture(scope="session")
def neo4j_settings() -> Neo4jSettings:
    return Neo4jSettings()


@pytest.fixture
def namespace(request: pytest.FixtureRequest) -> str:
    """A fresh namespace per test, so tests never see each other's data."""
    return f"t_{request.node.name[:40].strip('_')}_{uuid.uuid4().hex[:8]}".replace("[", "_").replace("]", "_")
