"""Reads of a namespace's records for people and tools, as plans over its `Ops`: records by
id, decisions, provenance, history, counts and whole bundles (what the agent's loop reads is
in `flowstate.store.ops`).

    repo.run(provenance(repo.ops, "r3.plan"))     # or repo.provenance("r3.plan")
"""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field

from flowstate.errors import UsageError, ValidationFailed
from flowstate.models import (
    ActionDecision,
    Evidence,
    Observation,
    Relation,
    Request,
    RequestBundle,
    StateNode,
    ids,
)
from flowstate.models.views import Edge, Provenance, RecordView, RequestRecord
from flowstate.models.wording import counted
from flowstate.store.catalog import Q
from flowstate.store.codec import check_id, from_props, shown
from flowstate.store.ops import STATE_TYPES, Ops
from flowstate.store.plans import Plan, Row

MAX_PROVENANCE_DEPTH = 20  # the literal bound of provenance.cypher's path pattern


class GraphCounts(BaseModel):
    """How many nodes and relationships were counted, created or deleted."""

    model_config = ConfigDict(frozen=True)

    nodes: int
    relationships: int

    def describe(self) -> str:
        """`3 nodes, 1 relationship`"""
        return f"{counted(self.nodes, 'node')}, {counted(self.relationships, 'relationship')}"


class Removal(GraphCounts):
    """What forgetting or expiring deleted, and what it left behind, by id only:

    - `superseded`: states that stay, each with the removed state that superseded it; they
      stay marked superseded by it (`(SUPERSEDED by r3.travellers, forgotten)`), so an
      outdated fact does not read as current again;
    - `dependents`: states that stay, each with the relations it lost to removed states
      (`["DEPENDS_ON r3.travellers"]`): what they rested on is gone. Nothing of these
      relations is kept.
    """

    superseded: dict[str, str] = Field(default_factory=dict)
    dependents: dict[str, list[str]] = Field(default_factory=dict)

    def counts(self) -> GraphCounts:
        """The deleted counts alone."""
        return GraphCounts(nodes=self.nodes, relationships=self.relationships)

    def left_behind(self, how: str = "forgotten") -> str:
        """`r1.travellers stays superseded by r3.travellers (forgotten); r4.hotel_booking lost
        DEPENDS_ON r3.travellers`, or '' when nothing was."""
        parts = [
            f"{state} stays superseded by {by} ({how})" for state, by in self.superseded.items()
        ]
        parts += [f"{state} lost {', '.join(lost)}" for state, lost in self.dependents.items()]
        return "; ".join(parts)


def get_request(ops: Ops, request_id: str) -> Plan[Request]:
    """One request; NotFoundError unless it exists."""
    return (yield from ops.get(Request, "request", request_id))


def get_state(ops: Ops, state_id: str) -> Plan[StateNode]:
    """One state; NotFoundError unless it exists."""
    return (yield from ops.get(StateNode, "state", state_id))


def get_observation(ops: Ops, observation_id: str) -> Plan[Observation]:
    """One observation; NotFoundError unless it exists."""
    return (yield from ops.get(Observation, "observation", observation_id))


def get_decision(ops: Ops, decision_id: str) -> Plan[ActionDecision]:
    """One action decision; NotFoundError unless it exists."""
    return (yield from ops.get(ActionDecision, "decision", decision_id))


def record(ops: Ops, record_id: str) -> Plan[RecordView]:
    """One record by its id's kind: a state (revealed: content, relations as type and id,
    newer states), a request with its states' lines, an observation or an action decision.
    NotFoundError unless it exists; UsageError for a string that is no id."""
    if ids.is_state_id(record_id):
        [revealed] = yield from ops.reveal([record_id])
        return revealed
    if ids.is_request_id(record_id):
        request = yield from get_request(ops, record_id)
        return RequestRecord(request=request, states=(yield from ops.request_states(record_id)))
    if ids.is_observation_id(record_id):
        return (yield from get_observation(ops, record_id))
    if ids.is_decision_id(record_id):
        return (yield from get_decision(ops, record_id))
    raise UsageError(f"{shown(record_id)} is not an id like r3, r3.key, r3.o1 or r3.a1")


def next_request_seq(ops: Ops) -> Plan[int]:
    """The seq the next request would get: one past the highest ever handed out (ids are
    never reused, even after a forget) or committed."""
    [row] = yield ops.read(Q.NEXT_REQUEST_SEQ)
    return int(row["seq"])


def decisions(ops: Ops, request_id: str | None = None) -> Plan[list[ActionDecision]]:
    """The action decisions of the namespace, or of one request, in request and step order."""
    if request_id is not None:
        check_id("request", request_id)
    rows = yield ops.read(Q.DECISIONS, request_id=request_id)
    if request_id is not None and not rows:
        yield from get_request(ops, request_id)  # NotFoundError unless the request exists
    return [from_props(ActionDecision, row["props"]) for row in rows]


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


def counts(ops: Ops) -> Plan[GraphCounts]:
    """Nodes and relationships the namespace holds, drafts included."""
    [row] = yield ops.read(Q.COUNT_NAMESPACE)
    return GraphCounts(nodes=row["nodes"], relationships=row["relationships"])


def bundles(ops: Ops) -> Plan[list[RequestBundle]]:
    """Every committed request with what it produced, oldest first."""
    rows = yield ops.read(Q.EXPORT_BUNDLES, types=STATE_TYPES)
    return [_bundle(row) for row in rows]


def _bundle(row: Row) -> RequestBundle:
    return RequestBundle(
        request=from_props(Request, row["request"]),
        states=[from_props(StateNode, p) for p in row["states"]],
        observations=[from_props(Observation, p) for p in row["observations"]],
        relations=[Relation.model_validate(r) for r in row["relations"]],
        evidence=[Evidence.model_validate(e) for e in row["evidence"]],
        decisions=[from_props(ActionDecision, p) for p in row["decisions"]],
    )


def _provenance(state_id: str, row: Row) -> Provenance:
    observations = [from_props(Observation, p) for p in row["observations"]]
    requests = [from_props(Request, p) for p in row["requests"]]
    states = [from_props(StateNode, p) for p in row["states"]]
    superseded = list(row["superseded"])
    removed: dict[str, str] = {}
    for state in states:  # a superseder forgotten or expired since: kept by id only
        if state.superseded_by_removed is not None and state.superseder_removed is not None:
            removed[state.superseded_by_removed] = state.superseder_removed
            superseded.append({"state": state.id, "by": state.superseded_by_removed})
    return Provenance(
        state_id=state_id,
        states=states,
        observations=sorted(observations, key=_observation_order),
        requests=sorted(requests, key=lambda r: r.seq),
        edges=sorted({Edge(**e) for e in row["edges"]}),
        superseded=_superseded(superseded),
        removed=dict(sorted(removed.items())),
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
