"""The graph schema: constraints and indexes from `cypher/schema.cypher`, applied idempotently.

`schema.cypher` holds one statement per `;`-separated block (see `catalog.statements`); every
statement uses IF NOT EXISTS, so applying it at each connect is safe.
"""

from __future__ import annotations

from flowstate.store.catalog import Q, statements
from flowstate.store.plans import Plan, Statement, Write

INDEX_TIMEOUT_S = 300


def ensure(*, timeout_s: int = INDEX_TIMEOUT_S) -> Plan[None]:
    """Create missing constraints and indexes, then wait until all are online (a plan)."""
    for statement in statements(Q.SCHEMA):
        yield Statement(statement)
    yield Write(Q.AWAIT_INDEXES, {"timeout_s": timeout_s})
