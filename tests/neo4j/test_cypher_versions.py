"""Every statement FlowState ships compiles cleanly on the server in use: no error and no
warning (deprecations included) in each Cypher language the server offers. On 5.26 that is
Cypher 5; on 2025.06+ and 2026.x it is Cypher 5 and Cypher 25, so a database whose default
language is Cypher 25 (set with ALTER DATABASE ... SET DEFAULT LANGUAGE) runs the same files.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import neo4j
import pytest

from flowstate.settings import Neo4jSettings
from flowstate.store.catalog import Q, cypher_dir, query, statements

pytestmark = pytest.mark.neo4j
# "Parameter missing" is what EXPLAIN without values says about every parameterised query.
PARAMETER_MISSING = "01N60"
# "Relationship type / label / property does not exist" depends on what the database holds so
# far (a fresh one has no SUPERSEDES yet), not on the statement; the store ignores it too.
NOT_YET_IN_THE_DATA = neo4j.NotificationClassification.UNRECOGNIZED


def _shipped() -> list[tuple[str, str]]:
    """(name, statement) for every catalog query, each schema statement, each saved query."""
    found = [(f"{Q.SCHEMA}[{i}]", text) for i, text in enumerate(statements(Q.SCHEMA))]
    found += [(q.value, query(q)) for q in Q if q is not Q.SCHEMA]
    saved = sorted(Path(cypher_dir(), "saved").glob("*.cypher"))
    return found + [(f"saved/{path.stem}", path.read_text()) for path in saved]


SHIPPED = _shipped()


@pytest.fixture(scope="module")
def driver(neo4j_settings: Neo4jSettings) -> Iterator[neo4j.Driver]:
    with neo4j.GraphDatabase.driver(
        neo4j_settings.uri, auth=neo4j_settings.auth(), notifications_min_severity="WARNING"
    ) as driver:
        yield driver


@pytest.fixture(scope="module")
def languages(driver: neo4j.Driver, neo4j_settings: Neo4jSettings) -> list[str]:
    """`CYPHER 5` always; `CYPHER 25` where the server knows it (2025.06 and later)."""
    records = driver.execute_query(
        "CALL dbms.components() YIELD name, versions WHERE name = 'Cypher' RETURN versions",
        database_=neo4j_settings.database,
    ).records
    offered = records[0]["versions"] if records else ["5"]
    return [f"CYPHER {version}" for version in offered]


def test_every_shipped_file_is_checked() -> None:
    names = {name.split("[")[0] for name, _ in SHIPPED}
    assert names >= {q.value for q in Q}
    assert any(name.startswith("saved/") for name in names)


@pytest.mark.parametrize(("name", "text"), SHIPPED, ids=[name for name, _ in SHIPPED])
def test_compiles_without_warnings(
    driver: neo4j.Driver, neo4j_settings: Neo4jSettings, languages: list[str], name: str, text: str
) -> None:
    for language in languages:
        summary = driver.execute_query(
            f"{language} EXPLAIN {text}", database_=neo4j_settings.database
        ).summary
        warnings = [
            f"{status.gql_status}: {status.status_description}"
            for status in summary.gql_status_objects
            if status.severity is neo4j.NotificationSeverity.WARNING
            and status.gql_status != PARAMETER_MISSING
            and status.classification is not NOT_YET_IN_THE_DATA
        ]
        assert not warnings, f"{name} under {language}: {warnings}"
