"""Connecting, the schema, and what a dead or wrong server looks like."""

from __future__ import annotations

import time

import pytest

from flowstate.errors import StoreError, StoreUnavailable
from flowstate.settings import Neo4jSettings
from flowstate.store import Store
from flowstate.store.catalog import Q, query, statements
from flowstate.store.plans import drive
from tests.neo4j.bolt_proxy import BoltProxy

pytestmark = pytest.mark.neo4j


def test_dead_server_is_store_unavailable_with_advice():
    settings = Neo4jSettings(uri="bolt://127.0.0.1:1")
    with pytest.raises(StoreUnavailable) as info:
        Store.connect(settings)
    message = str(info.value)
    assert "bolt://127.0.0.1:1" in message
    assert "FLOWSTATE_NEO4J_URI" in message
    assert info.value.__cause__ is not None


def test_a_server_that_accepts_and_never_answers_is_given_up_on_after_the_connect_timeout(
    neo4j_settings: Neo4jSettings, bolt_proxy: BoltProxy
) -> None:
    """A black hole: the TCP connection is accepted, the Bolt handshake never answered. The
    driver would wait out its 60 s acquisition timeout; FlowState waits `connect_timeout_s`."""
    bolt_proxy.black_hole()
    settings = neo4j_settings.model_copy(
        update={"uri": bolt_proxy.uri, "connect_timeout_s": 1.0, "retry_time_s": 0.0}
    )
    started = time.monotonic()
    with pytest.raises(StoreUnavailable, match="handshake") as info:
        Store.connect(settings)
    waited = time.monotonic() - started
    assert bolt_proxy.uri in str(info.value)
    assert 1.0 <= waited < 30  # the timeout, with room for a loaded machine; not 60 s


def test_malformed_uri_is_store_error():
    with pytest.raises(StoreError, match="nonsense"):
        Store.connect(Neo4jSettings(uri="nonsense://where"))


def test_unknown_database_is_named(neo4j_settings):
    settings = neo4j_settings.model_copy(update={"database": "nosuchdb"})
    with pytest.raises(StoreError, match="nosuchdb"):
        Store.connect(settings, ensure_schema=False)


def test_connect_is_idempotent_and_closes(neo4j_settings):
    # Applying the schema a second time must be a no-op, not an error.
    with Store.connect(neo4j_settings) as store:
        store.verify()
    with Store.connect(neo4j_settings) as again:
        again.verify()


def test_schema_is_in_place_and_online(store, raw):
    names = {r["name"] for r in raw.rows("SHOW CONSTRAINTS YIELD name")}
    assert {
        "flowstate_request_id",
        "flowstate_state_id",
        "flowstate_observation_id",
        "flowstate_draft_request",
    } <= names
    indexes = {r["name"]: r["state"] for r in raw.rows("SHOW INDEXES YIELD name, state")}
    for name in (
        "flowstate_request_seq",
        "flowstate_state_request",
        "flowstate_observation_request",
    ):
        assert indexes[name] == "ONLINE"


@pytest.mark.parametrize("name", [q for q in Q if q is not Q.SCHEMA])
def test_every_catalog_query_compiles(raw, name):
    raw.rows("EXPLAIN " + query(name))


def test_a_transaction_chains_its_bookmark_to_the_reads_after_it(repo, make):
    """On a cluster a read may go to another member: it must wait for what the last write
    committed. Transactions share the bookmarks `execute_query` reads with, so it does."""
    manager = repo._store._driver.execute_query_bookmark_manager
    repo.commit(make.bundle(1, states=["a"]))  # one transaction (a session's execute_write)
    after_commit = set(manager.get_bookmarks())
    assert after_commit  # the commit's bookmark is what the next read waits for
    repo.save_draft("r2", "{}", owner="w", first=True)  # another transaction
    assert set(manager.get_bookmarks()) != after_commit
    assert [r.id for r in repo.index()] == ["r1"]


def test_a_store_whose_schema_is_online_is_told_so_by_one_lookup(store: Store) -> None:
    """Each schema statement is a round trip and, on a server just started, a planning of
    its own: connecting to a complete store runs none of them."""
    from flowstate.store import schema
    from flowstate.store.plans import Read, Statement

    assert len(schema.names()) == len(statements(Q.SCHEMA))  # every statement is found by name
    ran: list[object] = []

    def perform(op: object) -> object:
        ran.append(op)
        return store._perform(op)  # type: ignore[arg-type]

    drive(schema.ensure(), perform)
    assert [op.name for op in ran if isinstance(op, Read)][0] is Q.SCHEMA_ONLINE
    assert not [op for op in ran if isinstance(op, Statement)]
    assert Q.AWAIT_INDEXES not in [getattr(op, "name", None) for op in ran]
