"""The async connection to Neo4j: the `neo4j.AsyncDriver`, executing the same plans as `Store`.

    store = await AsyncStore.connect(Neo4jSettings())
    stamp = await store.run(Ops("trip").stamp())
    await store.close()

Only plans run here (`flowstate.store.plans`), as on `Store`: every operation of the
repository is one of them, written once for both drivers. Errors are mapped as the sync store
maps them, and the driver retries transactions the same way (`execute_write`,
`execute_query`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Self, TypeVar

import neo4j

from flowstate.settings import Neo4jSettings
from flowstate.store import schema
from flowstate.store.catalog import query
from flowstate.store.connection import changes_of, driver_options, invalid_uri, mapped_errors, ping
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
    adrive,
)

T = TypeVar("T")


class AsyncStore:
    """Owns an async neo4j driver. Build it with `await AsyncStore.connect(...)`; `await
    close()` it (or use `async with`)."""

    def __init__(self, driver: neo4j.AsyncDriver, settings: Neo4jSettings) -> None:
        self._driver = driver
        self._settings = settings

    @classmethod
    async def connect(cls, settings: Neo4jSettings, *, ensure_schema: bool = True) -> AsyncStore:
        """Open a driver, check the database answers, and apply the schema (idempotent)."""
        with mapped_errors(settings), invalid_uri(settings):
            driver = neo4j.AsyncGraphDatabase.driver(settings.uri, **driver_options(settings))
        store = cls(driver, settings)
        try:
            await store.verify()
            if ensure_schema:
                await store.run(schema.ensure())
        except BaseException:
            await store.close()
            raise
        return store

    async def verify(self) -> None:
        """Raise StoreUnavailable/StoreError unless the configured database answers."""
        with mapped_errors(self._settings):
            await self._driver.verify_connectivity()
        await self.run(ping())

    async def close(self) -> None:
        await self._driver.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def run(self, plan: Plan[T]) -> T:
        """Execute a plan; errors are thrown into it at its `yield`, as `Store.run` does."""
        return await adrive(plan, self._perform)

    async def _perform(self, op: Op) -> Any:
        if isinstance(op, Read):
            return await self._execute(query(op.name), op.params, neo4j.RoutingControl.READ)
        if isinstance(op, Write):
            return await self._execute(query(op.name), op.params, neo4j.RoutingControl.WRITE)
        if isinstance(op, Statement):
            return await self._execute(op.text, {}, neo4j.RoutingControl.WRITE)
        if isinstance(op, Batched):
            return await self._batched(op)
        if isinstance(op, Transaction):
            return await self._transaction(op.work)
        raise TypeError(f"unknown store operation {op!r}")

    async def _execute(
        self, text: str, params: Mapping[str, Any], routing: neo4j.RoutingControl
    ) -> Rows:
        with mapped_errors(self._settings):
            result = await self._driver.execute_query(
                text, dict(params), routing_=routing, database_=self._settings.database
            )
        rows = [record.data() for record in result.records]
        return Rows(rows, changes_of(result.summary.counters))

    async def _batched(self, op: Batched) -> Changes:
        with mapped_errors(self._settings):
            async with self._session() as session:
                result = await session.run(query(op.name), dict(op.params))
                return changes_of((await result.consume()).counters)

    async def _transaction(self, work: Callable[[], TxWork[Any]]) -> Any:
        async def attempt(tx: neo4j.AsyncManagedTransaction) -> Any:
            async def statement(stmt: Stmt) -> Rows:
                result = await tx.run(query(stmt.name), dict(stmt.params))
                rows = await result.data()
                return Rows(rows, changes_of((await result.consume()).counters))

            # A fresh generator per attempt: the driver retries transient failures.
            return await adrive(work(), statement)

        with mapped_errors(self._settings):
            async with self._session() as session:
                return await session.execute_write(attempt)

    def _session(self) -> neo4j.AsyncSession:
        manager = self._driver.execute_query_bookmark_manager  # causal chaining, as sync
        return self._driver.session(database=self._settings.database, bookmark_manager=manager)
