"""neo4j driver errors become FlowState errors at the store boundary, cause chained."""

from __future__ import annotations

import pytest
from neo4j import exceptions as neo

from flowstate.errors import StoreError, StoreUnavailable, UsageError, ValidationFailed
from flowstate.settings import Neo4jSettings
from flowstate.store.connection import mapped_errors

SETTINGS = Neo4jSettings(uri="neo4j+s://example.invalid", user="agent")


@pytest.mark.parametrize(
    ("raised", "expected", "words"),
    [
        (
            neo.ServiceUnavailable("gone"),
            StoreUnavailable,
            ["neo4j+s://example.invalid", "FLOWSTATE_NEO4J_URI"],
        ),
        (neo.SessionExpired("expired"), StoreUnavailable, ["neo4j+s://example.invalid"]),
        (neo.AuthError("no"), StoreError, ["'agent'", "FLOWSTATE_NEO4J_PASSWORD"]),
        (neo.Forbidden("no"), StoreError, ["FLOWSTATE_NEO4J_USER"]),
        (neo.ConstraintError("dup"), ValidationFailed, ["already exists"]),
        (neo.TransientError("deadlock"), StoreError, ["neo4j+s://example.invalid"]),
        (neo.ConfigurationError("bad"), StoreError, ["bad"]),
    ],
    ids=["unavailable", "expired", "auth", "forbidden", "constraint", "transient", "config"],
)
def test_driver_errors_are_mapped(raised, expected, words):
    with pytest.raises(expected) as info, mapped_errors(SETTINGS):
        raise raised
    assert info.value.__cause__ is raised
    for word in words:
        assert word in str(info.value)


def test_a_store_failure_is_not_a_usage_error():
    with pytest.raises(StoreError) as info, mapped_errors(SETTINGS):
        raise neo.ServiceUnavailable("gone")
    assert not isinstance(info.value, UsageError)


def test_other_exceptions_pass_through():
    with pytest.raises(KeyError), mapped_errors(SETTINGS):
        raise KeyError("ours")
