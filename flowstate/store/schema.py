"""The graph schema: constraints and indexes from `cypher/schema.cypher`, applied idempotently.

`schema.cypher` holds one statement per `;`-separated block (see `catalog.statements`); every
statement uses IF NOT EXISTS, so applying it at each connect is safe.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from flowstate.store.catalog import Q, statements

if TYPE_CHECKING:
    from flowstate.store.connection import Store

INDEX_TIMEOUT_S = 300


def ensure(store: Store, *, timeout_s: int = INDEX_TIMEOUT_S) -> None:
    """Create missing constraints and indexes, then wait until all are online."""
    for statement in statements(Q.SCHEMA):
        store.run_statement(statement)
    store.write(Q.AWAIT_INDEXES, {"timeout_s": timeout_s})
