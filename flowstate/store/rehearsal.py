"""A rehearsal: plans run for real inside one transaction that is rolled back at the end.

    with Rehearsal(store) as dry:                 # on the store's own driver
        Repository(dry, "warmup-1a2b").run(plan)  # read and written, then undone

Neo4j plans a statement the first time its text is run (and again once the data's statistics
have drifted), which costs far more than running it: a server warms its statements up this
way before its first caller needs them. Nothing written is ever committed; what it locked is
free again when the rehearsal ends. Every operation runs in the one transaction, so a
rehearsal cannot run `Batched` statements (they commit their own batches).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any, Self

import neo4j

from flowstate.errors import StoreError
from flowstate.store.catalog import query
from flowstate.store.connection import Store, changes_of, mapped_errors
from flowstate.store.plans import Op, Read, Rows, Statement, Stmt, Transaction, Write, drive


class Rehearsal(Store):
    """`store`'s driver, every plan in one transaction rolled back at `close` (or the end of
    a `with`); `timeout_s` bounds the whole transaction on the server."""

    def __init__(self, store: Store, timeout_s: float = 30.0) -> None:
        super().__init__(store._driver, store.settings)
        self._timeout_s = timeout_s
        self._lock = threading.Lock()  # a hold renews from its own thread; one tx, one user
        self._dry_session: neo4j.Session | None = None
        self._tx: neo4j.Transaction | None = None

    def __enter__(self) -> Self:
        return self

    def close(self) -> None:
        """Roll everything back; the driver stays open (it is the store's)."""
        with self._lock:
            tx, session, self._tx, self._dry_session = self._tx, self._dry_session, None, None
            try:
                if tx is not None and not tx.closed():
                    tx.rollback()
            except neo4j.exceptions.Neo4jError:
                pass  # a transaction the server ended (its timeout) has nothing to undo
            except neo4j.exceptions.DriverError:
                pass  # the connection dropped: the server rolls back on its own
            finally:
                if session is not None:
                    session.close()

    def _perform(self, op: Op) -> Any:
        if isinstance(op, Read | Write):
            return self._run(query(op.name), op.params)
        if isinstance(op, Statement):
            return self._run(op.text, {})
        if isinstance(op, Transaction):
            return drive(op.work(), lambda stmt: self._stmt(stmt))
        raise StoreError(f"a rehearsal cannot run {type(op).__name__}: it commits on its own")

    def _stmt(self, stmt: Stmt) -> Rows:
        return self._run(query(stmt.name), stmt.params)

    def _run(self, text: str, params: Mapping[str, Any]) -> Rows:
        with self._lock, mapped_errors(self.settings):
            if self._tx is None:
                self._dry_session = self._driver.session(database=self.database)
                self._tx = self._dry_session.begin_transaction(timeout=self._timeout_s)
            result = self._tx.run(text, dict(params))
            rows = [record.data() for record in result]
            return Rows(rows, changes_of(result.consume().counters))
