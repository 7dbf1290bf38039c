"""Reads of a namespace's records for people and tools, as plans over its `Ops`: provenance
and history (what the agent's loop reads is in `flowstate.store.ops`).

    repo.run(provenance(repo.ops, "r3.plan"))     # or repo.provenance("r3.plan")
"""

from __future__ import annotations

from datetime import datetime

from flowstate.errors import ValidationFailed
from flowstate.models import Observation, Request, StateNode, ids
from flowstate.models.views import Edge, Provenance
from flowstate.store.catalog import Q
from flowstate.store.codec import check_id, from_props, shown
from flowstate.store.ops import Ops
from flowstate.store.plans import Plan, Row

MAX_PROVENANCE_DEPTH = 20  # the literal bound of provenance.cypher's path pattern


def provenance(ops: Ops, state_id: str, max_depth: int = 6) -> Plan[Provenance]:
    """What a state rests on, up to `max_depth` hops of outgoing DERIVED_FROM, DEPENDS_ON,
    REFINES, SUPERSEDES and CONTRADICTS edges: those states, the observations they cite, the
    requests that produced them, and the edges between all of these.

        repo.provenance("r3.plan").edges   # [Edge("r3.plan", "DERIVED_FROM", "r2.budget"), ...]
    """
    check_id("state", state_id)
    if isinstance(max_depth, bool) or not isinstance(max_depth, int):
        raise ValidationFailed(f"max_depth must be an integer, not {shown(max_depth)}")
    if not 0 <= max_depth <= MAX_PROVENANCE_DEPTH:
        raise ValidationFailed(f"max_depth must be 0 to {MAX_PROVENANCE_DEPTH}, not {max_depth}")
    rows = yield ops.read(Q.PROVENANCE, id=state_id, max_depth=max_depth)
    if not rows:
        raise ops.not_found([state_id])
    return _provenance(state_id, rows[0])


def history(ops: Ops) -> Plan[list[Request]]:
    """The namespace's committed requests, oldest first."""
    rows = yield ops.read(Q.HISTORY)
    return [from_props(Request, row["props"]) for row in rows]


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
