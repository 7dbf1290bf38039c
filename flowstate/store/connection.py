"""The sync connection to Neo4j: one driver, executing plans, and neo4j errors mapped to ours.

    with Store.connect(Neo4jSettings()) as store:
        repo = Repository(store, "demo")

`Store.run` is the only way a query runs (`flowstate.store.plans`); `AsyncStore` executes
the same plans on the async driver, with the error mapping and driver options here. Nothing
here knows the graph's meaning; the plans do.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, Self, TypeVar

import neo4j
from neo4j import exceptions as neo

from flowstate.errors import CommitUncertain, StoreError, StoreUnavailable, ValidationFailed
from flowstate.settings import Neo4jSettings
from flowstate.store import schema
from flowstate.store.catalog import Q, query
from flowstate.store.plans import (
    Batched,
    Changes,
    Op,
    Plan,
    Read,
    Rows,
    Statement,
    Stmt,
    Transaction,
    TxWork,
    Write,
    drive,
)
from flowstate.version import __version__

T = TypeVar("T")


class Store:
    """Owns the neo4j driver. Build it with `Store.connect`; close it (or use `with`)."""

    def __init__(self, driver: neo4j.Driver, settings: Neo4jSettings) -> None:
        self._driver = driver
        self._settings = settings

    @classmethod
    def connect(cls, settings: Neo4jSettings, *, ensure_schema: bool = True) -> Store:
        """Open a driver, check the database answers, and apply the schema (idempotent)."""
        with mapped_errors(settings), invalid_uri(settings):
            driver = neo4j.GraphDatabase.driver(settings.uri, **driver_options(settings))
        store = cls(driver, settings)
        try:
            store.verify()
            if ensure_schema:
                store.run(schema.ensure())
        except BaseException:
            store.close()
            raise
        return store

    @property
    def settings(self) -> Neo4jSettings:
        """What the store was opened with (e.g. to open an `AsyncStore` on the same server)."""
        return self._settings

    @property
    def uri(self) -> str:
        return self._settings.uri

    @property
    def database(self) -> str:
        return self._settings.database

    def verify(self) -> None:
        """Raise StoreUnavailable/StoreError unless the configured database answers."""
        # verify_connectivity fails fast; a query alone would be retried for up to 30 s.
        with mapped_errors(self._settings):
            self._driver.verify_connectivity()
        self.run(ping())

    def close(self) -> None:
        self._driver.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def run(self, plan: Plan[T]) -> T:
        """Execute a plan (`flowstate.store.plans`); errors are thrown into it at its `yield`."""
        return drive(plan, self._perform)

    def _perform(self, op: Op) -> Any:
        if isinstance(op, Read):
            return self._execute(query(op.name), op.params, neo4j.RoutingControl.READ)
        if isinstance(op, Write):
            return self._execute(query(op.name), op.params, neo4j.RoutingControl.WRITE)
        if isinstance(op, Statement):
            return self._execute(op.text, {}, neo4j.RoutingControl.WRITE)
        if isinstance(op, Batched):
            return self._batched(op)
        if isinstance(op, Transaction):
            return self._transaction(op.work)
        raise TypeError(f"unknown store operation {op!r}")

    def _execute(self, text: str, params: Mapping[str, Any], routing: neo4j.RoutingControl) -> Rows:
        with mapped_errors(self._settings):
            result = self._driver.execute_query(
                text, dict(params), routing_=routing, database_=self.database
            )
        rows = [record.data() for record in result.records]
        return Rows(rows, changes_of(result.summary.counters))

    def _batched(self, op: Batched) -> Changes:
        with mapped_errors(self._settings), self._session() as session:
            return changes_of(session.run(query(op.name), dict(op.params)).consume().counters)

    def _transaction(self, work: Callable[[], TxWork[T]]) -> T:
        def attempt(tx: neo4j.ManagedTransaction) -> T:
            def statement(stmt: Stmt) -> Rows:
                result = tx.run(query(stmt.name), dict(stmt.params))
                rows = [record.data() for record in result]
                return Rows(rows, changes_of(result.consume().counters))

            # A fresh generator per attempt: the driver retries transient failures.
            return drive(work(), statement)

        with mapped_errors(self._settings), self._session() as session:
            return session.execute_write(attempt)

    def _session(self) -> neo4j.Session:
        # The bookmarks `execute_query` keeps: a read after this transaction (routed to a
        # reader of a cluster) sees what it wrote, causally, as every read after a write does.
        manager = self._driver.execute_query_bookmark_manager
        return self._driver.session(database=self.database, bookmark_manager=manager)


def ping() -> Plan[None]:
    """The cheapest query: the database answers."""
    yield Read(Q.PING, {})


def changes_of(counters: neo4j.SummaryCounters) -> Changes:
    return Changes(
        nodes_created=counters.nodes_created,
        nodes_deleted=counters.nodes_deleted,
        relationships_created=counters.relationships_created,
        relationships_deleted=counters.relationships_deleted,
    )


def driver_options(settings: Neo4jSettings) -> dict[str, Any]:
    """What both drivers, sync and async, are opened with."""
    return {
        "auth": settings.auth(),
        "user_agent": f"flowstate/{__version__}",
        "max_transaction_retry_time": settings.retry_time_s,
        "connection_timeout": settings.connect_timeout_s,
        # The driver bounds the Bolt handshake by the acquisition timeout (60 s by default),
        # not by connection_timeout: a server that accepts and never answers would hold a
        # caller that long. A connection is waited for `connect_timeout_s`, as documented.
        "connection_acquisition_timeout": settings.connect_timeout_s,
        # "property does not exist yet" on a fresh database is noise, not news.
        "notifications_disabled_classifications": [
            neo4j.NotificationDisabledClassification.UNRECOGNIZED
        ],
    }


@contextmanager
def invalid_uri(settings: Neo4jSettings) -> Iterator[None]:
    try:
        yield
    except ValueError as e:
        raise StoreError(f"invalid Neo4j URI {settings.uri!r}: {e}") from e


@contextmanager
def mapped_errors(settings: Neo4jSettings) -> Iterator[None]:
    """Turn neo4j driver errors into FlowState's, keeping the cause chained."""
    uri, db = settings.uri, settings.database
    try:
        yield
    except neo.ConstraintError as e:
        raise ValidationFailed(f"a record with that id already exists: {e.message}") from e
    except (neo.AuthError, neo.Forbidden) as e:
        raise StoreError(
            f"Neo4j at {uri} refused user {settings.user!r} ({e.message}); set "
            "FLOWSTATE_NEO4J_USER and FLOWSTATE_NEO4J_PASSWORD to credentials it accepts"
        ) from e
    except neo.IncompleteCommit as e:
        raise CommitUncertain(
            f"the connection to Neo4j at {uri} dropped while a commit was in flight; it may or "
            "may not have been applied (an agent's resume() checks before committing again)"
        ) from e
    except (neo.ServiceUnavailable, neo.SessionExpired) as e:
        raise StoreUnavailable(
            f"no Neo4j server answered at {uri} ({e}). Start Neo4j there, or set "
            "FLOWSTATE_NEO4J_URI to the address of a running server"
        ) from e
    except neo.Neo4jError as e:
        if e.code == "Neo.ClientError.Database.DatabaseNotFound":
            raise StoreError(
                f"Neo4j at {uri} has no database {db!r}; create it or set FLOWSTATE_NEO4J_DATABASE"
            ) from e
        raise StoreError(f"Neo4j at {uri} (database {db!r}) failed: {e.code}: {e.message}") from e
    except neo.DriverError as e:
        raise StoreError(f"the Neo4j driver failed talking to {uri}: {e}") from e
    except OverflowError as e:  # the driver packs only 64-bit integers
        raise ValidationFailed(f"a value does not fit Neo4j's 64-bit integers: {e}") from e
