"""The sync connection to Neo4j: one driver, named queries, and neo4j errors mapped to ours.

    with Store.connect(Neo4jSettings()) as store:
        repo = Repository(store, "demo")

`Store.run` executes plans (`flowstate.store.plans`), which `AsyncStore` executes on the async
driver too; the error mapping and driver options here serve both. Nothing here knows the
graph's meaning; `Repository` and `Ops` do.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Self, TypeVar

import neo4j
from neo4j import exceptions as neo

from flowstate import __version__
from flowstate.errors import StoreError, StoreUnavailable, ValidationFailed
from flowstate.settings import Neo4jSettings
from flowstate.store import schema
from flowstate.store.catalog import Q, query
from flowstate.store.plans import Op, Plan, Read, Row, Statement, Transaction, TxWork, Write, drive

T = TypeVar("T")


@dataclass
class Changes:
    """What a write did, from the server's own counters."""

    nodes_created: int = 0
    nodes_deleted: int = 0
    relationships_created: int = 0
    relationships_deleted: int = 0

    def add(self, counters: neo4j.SummaryCounters) -> None:
        self.nodes_created += counters.nodes_created
        self.nodes_deleted += counters.nodes_deleted
        self.relationships_created += counters.relationships_created
        self.relationships_deleted += counters.relationships_deleted


@dataclass
class Tx:
    """A write transaction handed to `Store.transaction`'s work function."""

    _tx: neo4j.ManagedTransaction
    changes: Changes = field(default_factory=Changes)

    def run(self, name: Q, params: Mapping[str, Any]) -> list[Row]:
        result = self._tx.run(query(name), dict(params))
        rows = [record.data() for record in result]
        self.changes.add(result.consume().counters)
        return rows

    def drive(self, work: TxWork[T]) -> T:
        """Run transaction work written as a generator (`flowstate.store.plans`) in this one."""
        return drive(work, lambda stmt: self.run(stmt.name, stmt.params))


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
        self.read(Q.PING, {})

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
            return self.read(op.name, op.params)
        if isinstance(op, Write):
            return self.write(op.name, op.params)[0]
        if isinstance(op, Statement):
            return self._execute(op.text, {}, neo4j.RoutingControl.WRITE)[0]
        if isinstance(op, Transaction):
            work = op.work
            return self.transaction(lambda tx: tx.drive(work()))
        raise TypeError(f"unknown store operation {op!r}")

    def read(self, name: Q, params: Mapping[str, Any]) -> list[Row]:
        """Run a read query (routed to readers) and return its rows as dicts."""
        rows, _ = self._execute(query(name), params, neo4j.RoutingControl.READ)
        return rows

    def write(self, name: Q, params: Mapping[str, Any]) -> tuple[list[Row], Changes]:
        """Run a single-statement write in its own transaction."""
        return self._execute(query(name), params, neo4j.RoutingControl.WRITE)

    def write_batched(self, name: Q, params: Mapping[str, Any]) -> Changes:
        """Run a query that commits its own batches (`CALL ... IN TRANSACTIONS`).

        Such a query cannot run inside a managed transaction, so it goes through an
        auto-commit one; the driver does not retry it, and the query must be safe to re-run.
        """
        changes = Changes()
        with (
            mapped_errors(self._settings),
            self._session() as session,
        ):
            summary = session.run(query(name), dict(params)).consume()
        changes.add(summary.counters)
        return changes

    def transaction(self, work: Callable[[Tx], T]) -> T:
        """Run `work` in one write transaction: any exception it raises rolls everything back.

        The driver may retry `work` on transient failures, so it must only touch the database.
        """
        with (
            mapped_errors(self._settings),
            self._session() as session,
        ):
            return session.execute_write(lambda tx: work(Tx(tx)))

    def _session(self) -> neo4j.Session:
        # The bookmarks `execute_query` keeps: a read after this transaction (routed to a
        # reader of a cluster) sees what it wrote, causally, as every read after a write does.
        manager = self._driver.execute_query_bookmark_manager
        return self._driver.session(database=self.database, bookmark_manager=manager)

    def _execute(
        self, text: str, params: Mapping[str, Any], routing: neo4j.RoutingControl
    ) -> tuple[list[Row], Changes]:
        with mapped_errors(self._settings):
            result = self._driver.execute_query(
                text, dict(params), routing_=routing, database_=self.database
            )
        changes = Changes()
        changes.add(result.summary.counters)
        return [record.data() for record in result.records], changes


def driver_options(settings: Neo4jSettings) -> dict[str, Any]:
    """What both drivers, sync and async, are opened with."""
    return {
        "auth": settings.auth(),
        "user_agent": f"flowstate/{__version__}",
        "max_transaction_retry_time": settings.retry_time_s,
        "connection_timeout": settings.connect_timeout_s,
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
        raise StoreUnavailable(
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
