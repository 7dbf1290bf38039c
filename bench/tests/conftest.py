"""The benchmarks' tests reuse the library's real-Neo4j fixtures: one server per session,
one namespace per test."""

from tests.conftest import namespace, neo4j_settings  # noqa: F401
from tests.neo4j.conftest import other_repo, raw, repo, store  # noqa: F401
