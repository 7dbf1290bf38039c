"""How the test suite (and anyone embedding FlowState in tests) finds a real Neo4j.

Order: FLOWSTATE_NEO4J_URI when set; else testcontainers when a Docker engine answers;
else the managed local server. The database is never mocked.
"""

from __future__ import annotations

from enum import StrEnum


class Source(StrEnum):
    CONFIGURED = "configured"  # FLOWSTATE_NEO4J_URI
    TESTCONTAINERS = "testcontainers"  # neo4j:5.26-community in Docker
    LOCAL = "local"  # flowstate's managed local server


def choose_source(configured_uri: str | None, docker_answers: bool) -> Source:
    if configured_uri:
        return Source.CONFIGURED
    if docker_answers:
        return Source.TESTCONTAINERS
    return Source.LOCAL


def docker_answers() -> bool:
    """True when a Docker engine responds; never raises (no docker package, no socket...)."""
    try:
        import docker  # a dependency of testcontainers, in the dev extra

        client = docker.from_env(timeout=3)  # type: ignore[attr-defined]
        try:
            return bool(client.ping())
        finally:
            client.close()
    except Exception:  # any failure means: no usable engine here
        return False
