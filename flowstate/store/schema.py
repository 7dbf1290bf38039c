"""The graph schema: constraints and indexes from `cypher/schema.cypher`, applied idempotently.

`schema.cypher` holds one statement per `;`-separated block (see `catalog.statements`); every
statement uses IF NOT EXISTS, so applying it at each connect is safe. A store written by an
older FlowState is then brought up to date (`flowstate.store.upgrade`).
"""

from __future__ import annotations

import re

from flowstate.errors import StoreError
from flowstate.store import upgrade
from flowstate.store.catalog import Q, statements
from flowstate.store.plans import Plan, Read, Statement, Write

INDEX_TIMEOUT_S = 300
# IF NOT EXISTS is checked before the rule is created: two processes connecting at once to a
# fresh database can both create it, and the second is told it exists. That is success.
_CREATED_MEANWHILE = ("EquivalentSchemaRuleAlreadyExists", "IndexAlreadyExists",
                      "ConstraintAlreadyExists")  # fmt: skip


def ensure(*, timeout_s: int = INDEX_TIMEOUT_S) -> Plan[None]:
    """Create missing constraints and indexes, wait until all are online, then upgrade what an
    older FlowState wrote (a plan). A store whose schema is complete and online is told so by
    one catalog lookup: each statement costs a round trip, and a planning on a server just
    started."""
    [row] = yield Read(Q.SCHEMA_ONLINE, {})
    if not set(names()) <= set(row["online"]):
        for statement in statements(Q.SCHEMA):
            try:
                yield Statement(statement)
            except StoreError as e:
                if not any(code in str(e) for code in _CREATED_MEANWHILE):
                    raise
        yield Write(Q.AWAIT_INDEXES, {"timeout_s": timeout_s})
    yield from upgrade.search_terms()
    yield from upgrade.namespace_counts()


def names() -> list[str]:
    """The name of every constraint and index `schema.cypher` creates (a constraint's index
    has its name)."""
    return [m.group(1) for s in statements(Q.SCHEMA) if (m := _NAMED.search(s))]


_NAMED = re.compile(r"\b(?:CONSTRAINT|INDEX)\s+(\w+)\s+IF NOT EXISTS")
