"""What a state rests on, read in one query: the states, the observations they cite, the
requests that produced them, the edges between all of these, and which of those states are
superseded now.

    repo.run(ops.provenance("r3.plan")).edges   # [Edge("r3.plan", "DERIVED_FROM", "r2.budget")]
"""

from __future__ import annotations

from datetime import datetime

from flowstate.errors import ValidationFailed
from flowstate.models import Observation, Request, StateNode, ids
from flowstate.models.views import Edge, Provenance
from flowstate.store.catalog import Q
from flowstate.store.codec import check_id, from_props, shown
from flowstate.store.plans import Plan, Read, Row

MAX_PROVENANCE_DEPTH = 20  # the literal bound of provenance.cypher's path pattern


def provenance(namespace: str, state_id: str, max_depth: int) -> Plan[Provenance | None]:
    """`state_id`'s provenance up to `max_depth` hops of outgoing DERIVED_FROM, DEPENDS_ON,
    REFINES, SUPERSEDES and CONTRADICTS edges; None when the state is not in `namespace`."""
    check_id("state", state_id)
    if isinstance(max_depth, bool) or not isinstance(max_depth, int):
        raise ValidationFailed(f"max_depth must be an integer, not {shown(max_depth)}")
    if not 0 <= max_depth <= MAX_PROVENANCE_DEPTH:
        raise ValidationFailed(f"max_depth must be 0 to {MAX_PROVENANCE_DEPTH}, not {max_depth}")
    params = {"namespace": namespace, "id": state_id, "max_depth": max_depth}
    rows = yield Read(Q.PROVENANCE, params)
    return _provenance(state_id, rows[0]) if rows else None


def _provenance(state_id: str, row: Row) -> Provenance:
    observations = [from_props(Observation, p) for p in row["observations"]]
    requests = [from_props(Request, p) for p in row["requests"]]
    return Provenance(
        state_id=state_id,
        states=[from_props(StateNode, p) for p in row["states"]],
        observations=sorted(observations, key=_observation_order),
        requests=sorted(requests, key=lambda r: r.seq),
        edges=sorted({Edge(**e) for e in row["edges"]}),
        superseded=_superseded(row["superseded"]),
    )


def _superseded(rows: list[dict[str, str]]) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for row in sorted(
        rows, key=lambda r: (r["state"], ids.request_seq(ids.request_of(r["by"])), r["by"])
    ):
        found.setdefault(row["state"], []).append(row["by"])
    return found


def _observation_order(o: Observation) -> tuple[int, int, datetime, str]:
    return (ids.request_seq(o.request_id), o.step, o.created_at, o.id)
