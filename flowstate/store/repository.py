"""One namespace's memory: the only place the graph's meaning meets the database.

    repo = Repository(store, "travel-agent")
    repo.commit(bundle)
    repo.index()            # [IndexRequest(id='r1', seq=1, summary=..., states=[...])]
    repo.reveal(["r1.hotel_budget"])
    repo.provenance("r3.booking")   # the states, evidence and requests it rests on

Every query receives `$namespace` and matches on it in the Cypher itself, so an id of another
namespace is simply not found, and error messages name only what the caller passed.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import datetime
from typing import TypeVar

from pydantic import BaseModel

from flowstate.errors import ValidationFailed
from flowstate.models import (
    EVIDENCE,
    ActionDecision,
    Evidence,
    IndexRequest,
    IndexState,
    Observation,
    Relation,
    RelationType,
    RelationView,
    Request,
    RequestBundle,
    RevealedState,
    StateNode,
    ids,
)
from flowstate.models.views import Edge, Provenance
from flowstate.store import export
from flowstate.store.base import GraphCounts
from flowstate.store.catalog import Q
from flowstate.store.codec import (
    Record,
    check_id,
    from_props,
    kind_of,
    revalidate,
    shown,
    unique,
)
from flowstate.store.commit import write_bundle
from flowstate.store.connection import Row, Tx
from flowstate.store.forgetting import Forgetting
from flowstate.store.namespace_node import (
    DEFAULT_LEASE_S,
    hold,
)

R = TypeVar("R", bound=BaseModel)
_NO_END = 2**62  # "up to the latest request" for index_generation's $to_seq
MAX_PROVENANCE_DEPTH = 20  # the literal bound of provenance.cypher's path pattern
_STATE_TYPES = [t.value for t in RelationType]
_REVEAL_TYPES = [*_STATE_TYPES, EVIDENCE]
_MODELS: dict[str, type[Record]] = {
    "request": Request,
    "state": StateNode,
    "observation": Observation,
    "decision": ActionDecision,
}


class Repository(Forgetting):
    """Reads and writes of one namespace; `read_only=True` refuses every write."""

    # --- reads ------------------------------------------------------------------------------

    def next_request_seq(self) -> int:
        """The seq the next request would get: one past the highest ever handed out (ids are
        never reused, even after a forget) or committed."""
        return int(self._read(Q.NEXT_REQUEST_SEQ)[0]["seq"])

    def index(self, from_seq: int = 1, to_seq: int | None = None) -> list[IndexRequest]:
        """The Historical State Index: ids, categories and summaries, from `from_seq` on
        (up to `to_seq` included, when given)."""
        return self._index(from_seq, _NO_END if to_seq is None else to_seq)

    def index_heads(self) -> list[IndexRequest]:
        """Every committed request's index entry without its state lines (`states` empty,
        `state_count` set): cheap at any size."""
        return [IndexRequest(states=[], **row) for row in self._read(Q.INDEX_HEADS)]

    def request_states(self, request_id: str) -> list[IndexState]:
        """The index lines of one request's states (for a collapsed index entry)."""
        seq = int(check_id("request", request_id)[1:])
        found = self._index(seq, seq)
        if not found:
            raise self._not_found([request_id])
        return found[0].states

    def reveal(self, state_ids: Sequence[str]) -> list[RevealedState]:
        """Full records of past states with their relations, closed at the far end."""
        wanted = unique(check_id("state", i) for i in state_ids)
        rows = self._read(Q.REVEAL_STATES, ids=wanted, types=_REVEAL_TYPES)
        found = {}
        for row in rows:
            state = from_props(StateNode, row["state"])
            views = sorted(
                (RelationView.model_validate(r) for r in row["relations"]),
                key=lambda v: (v.type, v.direction, v.other),
            )
            found[state.id] = RevealedState(state=state, relations=views)
        return [found[i] for i in self._all_found(wanted, found)]

    def expand(self, any_ids: Sequence[str]) -> list[Record]:
        """Full records for a mix of request, state, observation and decision ids, in the order
        asked."""
        wanted = unique(any_ids)
        by_kind: dict[str, list[str]] = {kind: [] for kind in _MODELS}
        for value in wanted:
            by_kind[kind_of(value)].append(value)
        rows = self._read(
            Q.EXPAND_IDS,
            request_ids=by_kind["request"],
            state_ids=by_kind["state"],
            observation_ids=by_kind["observation"],
            decision_ids=by_kind["decision"],
        )
        found: dict[str, Record] = {}
        for row in rows:
            record = from_props(_MODELS[row["kind"]], row["props"])
            found[record.id] = record
        return [found[i] for i in self._all_found(wanted, found)]

    def get_request(self, request_id: str) -> Request:
        return self._get(Request, check_id("request", request_id))

    def get_state(self, state_id: str) -> StateNode:
        return self._get(StateNode, check_id("state", state_id))

    def get_observation(self, observation_id: str) -> Observation:
        return self._get(Observation, check_id("observation", observation_id))

    def get_decision(self, decision_id: str) -> ActionDecision:
        return self._get(ActionDecision, check_id("decision", decision_id))

    def decisions(self, request_id: str | None = None) -> list[ActionDecision]:
        """The action decisions of the namespace, or of one request, in request and step order."""
        if request_id is not None:
            check_id("request", request_id)
        rows = self._read(Q.DECISIONS, request_id=request_id)
        if request_id is not None and not rows:
            self.get_request(request_id)  # NotFoundError unless the request exists
        return [from_props(ActionDecision, row["props"]) for row in rows]

    def provenance(self, state_id: str, max_depth: int = 6) -> Provenance:
        """What a state rests on, up to `max_depth` hops of outgoing DERIVED_FROM, DEPENDS_ON,
        REFINES, SUPERSEDES and CONTRADICTS edges: those states, the observations they cite,
        the requests that produced them, and the edges between all of these.

            repo.provenance("r3.plan").edges   # [Edge("r3.plan", "DERIVED_FROM", "r2.budget"), ...]
        """
        check_id("state", state_id)
        if isinstance(max_depth, bool) or not isinstance(max_depth, int):
            raise ValidationFailed(f"max_depth must be an integer, not {shown(max_depth)}")
        if not 0 <= max_depth <= MAX_PROVENANCE_DEPTH:
            raise ValidationFailed(
                f"max_depth must be 0 to {MAX_PROVENANCE_DEPTH}, not {max_depth}"
            )
        rows = self._read(Q.PROVENANCE, id=state_id, max_depth=max_depth)
        if not rows:
            raise self._not_found([state_id])
        return _provenance(state_id, rows[0])

    def history(self) -> list[Request]:
        """The namespace's committed requests, oldest first."""
        return [from_props(Request, row["props"]) for row in self._read(Q.HISTORY)]

    def load_draft(self) -> tuple[str, str] | None:
        """The in-flight request's `(request_id, payload)`, if one was saved."""
        rows = self._read(Q.LOAD_DRAFT)
        return (rows[0]["request_id"], rows[0]["payload"]) if rows else None

    def counts(self) -> GraphCounts:
        """Nodes and relationships the namespace holds, drafts included."""
        [row] = self._read(Q.COUNT_NAMESPACE)
        return GraphCounts(nodes=row["nodes"], relationships=row["relationships"])

    def bundles(self) -> list[RequestBundle]:
        """Every committed request with what it produced, oldest first."""
        return [_bundle(row) for row in self._read(Q.EXPORT_BUNDLES, types=_STATE_TYPES)]

    def export_jsonl(self) -> Iterator[str]:
        """The namespace as JSON Lines (see `flowstate.store.export`), newline-terminated."""
        return export.bundle_lines(self.bundles())

    # --- writes -----------------------------------------------------------------------------

    def commit(
        self, bundle: RequestBundle, *, owner: str | None = None, lease_s: int = DEFAULT_LEASE_S
    ) -> None:
        """Write one finished request in one transaction, replacing its draft; all or nothing.

        With `owner`, the commit happens only while `owner` holds the writer lease.
        """
        self._writable("commit")
        bundle = revalidate(bundle)
        if bundle.request.namespace != self._namespace:
            raise ValidationFailed(
                f"bundle of {bundle.request.id} belongs to namespace {bundle.request.namespace!r}, "
                f"not {self._namespace!r}"
            )

        def work(tx: Tx) -> None:
            if owner is not None:
                hold(tx, self._namespace, owner, lease_s)
            write_bundle(tx, self._namespace, bundle)

        self._store.transaction(work)

    def import_jsonl(self, lines: Iterable[str]) -> GraphCounts:
        """Load an export into this (empty) namespace in one transaction; returns what was created.

        Every line is validated first; a bad one raises ValidationFailed naming its number.
        """
        self._writable("import")
        bundles = export.parse_lines(lines, self._namespace)
        if not bundles:
            return GraphCounts(nodes=0, relationships=0)  # nothing to write, not even a counter

        def work(tx: Tx) -> GraphCounts:
            [row] = tx.run(Q.COUNT_NAMESPACE, {"namespace": self._namespace})
            if row["nodes"]:
                raise ValidationFailed(
                    f"namespace {self._namespace!r} is not empty ({row['nodes']} nodes); "
                    "import into a new namespace"
                )
            [stamp] = tx.run(Q.NAMESPACE_STAMP, {"namespace": self._namespace})
            handed_out = stamp["last_seq"] or 0
            if bundles and min(b.request.seq for b in bundles) <= handed_out:
                raise ValidationFailed(
                    f"namespace {self._namespace!r} has handed out request ids up to "
                    f"r{handed_out} before (ids are never reused); import into a new namespace"
                )
            tx.run(Q.TOUCH_NAMESPACE, {"namespace": self._namespace})  # live agents reload
            counter = tx.changes.nodes_created  # the counter node is not memory
            for bundle in bundles:
                write_bundle(tx, self._namespace, bundle)
            return GraphCounts(
                nodes=tx.changes.nodes_created - counter,
                relationships=tx.changes.relationships_created,
            )

        return self._store.transaction(work)

    # --- helpers ----------------------------------------------------------------------------

    def _index(self, from_seq: int, to_seq: int) -> list[IndexRequest]:
        rows = self._read(Q.INDEX_GENERATION, from_seq=from_seq, to_seq=to_seq)
        return [IndexRequest.model_validate(row) for row in rows]

    def _get(self, cls: type[R], record_id: str) -> R:
        [record] = self.expand([record_id])
        assert isinstance(record, cls)
        return record

    def _all_found(self, wanted: list[str], found: Mapping[str, object]) -> list[str]:
        missing = [i for i in wanted if i not in found]
        if missing:
            raise self._not_found(missing)
        return wanted


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
    return Provenance(
        state_id=state_id,
        states=[from_props(StateNode, p) for p in row["states"]],
        observations=sorted(observations, key=_observation_order),
        requests=sorted(requests, key=lambda r: r.seq),
        edges=sorted({Edge(**e) for e in row["edges"]}),
    )


def _observation_order(o: Observation) -> tuple[int, int, datetime, str]:
    return (ids.request_seq(o.request_id), o.step, o.created_at, o.id)
