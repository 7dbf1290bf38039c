"""Helpers for the store tests: action decisions for a Factory's bundles, and an independent
scan for any property that still names forgotten ids."""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from flowstate.models import ActionDecision, RequestBundle

if TYPE_CHECKING:
    from tests.neo4j.conftest import Factory, Raw

T0 = datetime(2025, 3, 1, 9, 30, tzinfo=UTC)


def decision(
    make: Factory, rid: str, n: int, cites: Sequence[str] = (), **fields: Any
) -> ActionDecision:
    base = {
        "namespace": make.namespace,
        "id": f"{rid}.a{n}",
        "request_id": rid,
        "step": n,
        "tool": "book_hotel",
        "arguments": '{"hotel":"Alfama Inn","nights":3}',
        "cites": list(cites),
        "approved": True,
        "reason": f"reason {n} of {rid}",
        "created_at": T0 + timedelta(hours=int(rid[1:]), minutes=30, seconds=n),
    }
    return ActionDecision(**{**base, **fields})


def with_decisions(bundle: RequestBundle, *decisions: ActionDecision) -> RequestBundle:
    """The bundle with these decisions added, validated again."""
    return RequestBundle(**{**dict(bundle), "decisions": [*bundle.decisions, *decisions]})


def unique_key(prefix: str = "k") -> str:
    """A state key no other test (or namespace) uses, so its ids can be searched database-wide."""
    return f"{prefix}_{uuid.uuid4().hex[:12]}"


_LEFTOVERS = """
MATCH (n)
WITH n, CASE WHEN n.namespace IS NULL OR n.namespace = $namespace
  THEN $anywhere + $scoped ELSE $anywhere END AS wanted
UNWIND keys(n) AS key
WITH n, key, n[key] AS value, wanted
WHERE value IN wanted OR (value IS :: LIST<ANY> AND any(x IN value WHERE x IN wanted))
RETURN 'node' AS what, labels(n) AS labels, n.namespace AS namespace, key, value
UNION ALL
MATCH ()-[r]->()
WHERE size(keys(r)) > 0
WITH r, CASE WHEN $namespace IN [startNode(r).namespace, endNode(r).namespace]
  THEN $anywhere + $scoped ELSE $anywhere END AS wanted
UNWIND keys(r) AS key
WITH r, key, r[key] AS value, wanted
WHERE value IN wanted OR (value IS :: LIST<ANY> AND any(x IN value WHERE x IN wanted))
RETURN 'relationship' AS what, [type(r)] AS labels, null AS namespace, key, value
"""


def leftovers(
    raw: Raw, anywhere: Iterable[str], *, namespace: str = "", scoped: Iterable[str] = ()
) -> list[dict]:
    """Every property, of any node or relationship in the database, equal to one of `anywhere`
    or a list holding one; and, on nodes of `namespace` (or of none) and on edges touching
    them, equal to or holding one of `scoped` (ids like `r2` are unique only per namespace)."""
    return raw.rows(_LEFTOVERS, anywhere=list(anywhere), scoped=list(scoped), namespace=namespace)


def edges_touching(raw: Raw, namespace: str, ids: Iterable[str]) -> int:
    """Relationships of any type with an end among the namespace's nodes of these ids."""
    [row] = raw.rows(
        "MATCH (n)-[r]-() WHERE n.namespace = $ns AND n.id IN $ids RETURN count(DISTINCT r) AS n",
        ns=namespace,
        ids=list(ids),
    )
    return row["n"]
