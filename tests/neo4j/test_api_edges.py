"""`FlowState.connect` at its edges: explicit arguments only, nothing leaked on failure, and
`close()` closes only what it opened."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from flowstate import FlowState
from flowstate.errors import FlowStateError, UsageError
from flowstate.safety.retention import RetentionPolicy
from flowstate.settings import Neo4jSettings
from flowstate.store import Repository, Store

pytestmark = pytest.mark.neo4j


def test_connect_ignores_flowstate_variables(
    neo4j_settings: Neo4jSettings, namespace: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Were these read, the connection would go to a database that does not exist.
    monkeypatch.setenv("FLOWSTATE_NEO4J_DATABASE", "no_such_database")
    monkeypatch.setenv("FLOWSTATE_NEO4J_RETRY_TIME_S", "not a number")
    with FlowState.connect(neo4j_settings.uri, namespace=namespace) as fs:
        assert fs.history() == []
        fs.repository.forget_namespace(force=True)


def _opened_stores(monkeypatch: pytest.MonkeyPatch) -> list[Store]:
    """Record every store `connect` opens (the real Store.connect runs)."""
    opened: list[Store] = []
    real = Store.connect.__func__  # type: ignore[attr-defined]

    def recording(cls: type[Store], *args: object, **kwargs: object) -> Store:
        store = real(cls, *args, **kwargs)
        opened.append(store)
        return store

    monkeypatch.setattr(Store, "connect", classmethod(recording))
    return opened


def test_a_bad_namespace_leaves_no_driver_open(
    neo4j_settings: Neo4jSettings, monkeypatch: pytest.MonkeyPatch
) -> None:
    opened = _opened_stores(monkeypatch)
    with pytest.raises(UsageError):
        FlowState.connect(neo4j_settings.uri, namespace="no spaces; allowed")
    [store] = opened
    assert store._driver._closed  # noqa: SLF001 - the driver's own flag, not ours


def test_a_failed_retention_leaves_no_driver_open(
    neo4j_settings: Neo4jSettings, namespace: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    opened = _opened_stores(monkeypatch)

    def fails(*_args: object) -> None:
        raise FlowStateError("retention failed")

    monkeypatch.setattr("flowstate.api.apply_retention", fails)
    with pytest.raises(FlowStateError, match="retention failed"):
        FlowState.connect(
            neo4j_settings.uri,
            namespace=namespace,
            retention=RetentionPolicy(days={"observation": 1}),
        )
    [store] = opened
    assert store._driver._closed  # noqa: SLF001


def test_close_leaves_a_store_it_was_given_open(store: Store, namespace: str) -> None:
    FlowState(store, namespace).close()
    assert Repository(store, namespace).history() == []  # still usable


def test_importing_flowstate_changes_no_environment_variable() -> None:
    code = (
        "import os, json; before = dict(os.environ); "
        "import flowstate, flowstate.api, flowstate.cli.app; "
        "print(json.dumps({k: v for k, v in os.environ.items() if before.get(k) != v}))"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LITELLM_", "TIKTOKEN_"))}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "{}"
