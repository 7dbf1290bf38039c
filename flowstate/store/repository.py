"""One namespace's memory: the only place the graph's meaning meets the database.

    repo = Repository(store, "travel-agent")
    repo.commit(bundle)
    repo.index()            # [IndexRequest(id='r1', seq=1, summary=..., states=[...])]
    repo.reveal(["r1.hotel_budget"])
    repo.provenance("r3.booking")   # the states, evidence and requests it rests on

Every query receives `$namespace` and matches on it in the Cypher itself, so an id of another
namespace is simply not found, and error messages name only what the caller passed. What the
agent needs runs a plan of `flowstate.store.ops` (shared with `AsyncRepository`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

from flowstate.errors import ValidationFailed
from flowstate.models import (
    ActionDecision,
    Evidence,
    IndexRequest,
    IndexState,
    Observation,
    Relation,
    Request,
    RequestBundle,
    RevealedState,
    StateNode,
)
from flowstate.models.views import Provenance
from flowstate.store import export, reading
from flowstate.store.base import GraphCounts
from flowstate.store.catalog import Q
from flowstate.store.codec import Record, check_id, from_props
from flowstate.store.commit import write_bundle
from flowstate.store.connection import Tx
from flowstate.store.forgetting import Forgetting
from flowstate.store.ops import NO_END, STATE_TYPES
from flowstate.store.plans import Row
from flowstate.store.search import SearchHit


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
        return self.run(self.ops.index(from_seq, NO_END if to_seq is None else to_seq))

    def index_heads(self) -> list[IndexRequest]:
        """Every committed request's index entry without its state lines (`states` empty,
        `state_count` set): cheap at any size."""
        return self.run(self.ops.index_heads())

    def request_states(self, request_id: str) -> list[IndexState]:
        """The index lines of one request's states (for a collapsed index entry)."""
        return self.run(self.ops.request_states(request_id))

    def reveal(self, state_ids: Sequence[str]) -> list[RevealedState]:
        """Full records of past states with their relations, closed at the far end."""
        return self.run(self.ops.reveal(state_ids))

    def expand(self, any_ids: Sequence[str]) -> list[Record]:
        """Full records for a mix of request, state, observation and decision ids, in the order
        asked."""
        return self.run(self.ops.expand(any_ids))

    def get_request(self, request_id: str) -> Request:
        return self.run(self.ops.get(Request, "request", request_id))

    def get_state(self, state_id: str) -> StateNode:
        return self.run(self.ops.get(StateNode, "state", state_id))

    def get_observation(self, observation_id: str) -> Observation:
        return self.run(self.ops.get(Observation, "observation", observation_id))

    def get_decision(self, decision_id: str) -> ActionDecision:
        return self.run(self.ops.get(ActionDecision, "decision", decision_id))

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
        return self.run(reading.provenance(self.ops, state_id, max_depth))

    def history(self) -> list[Request]:
        """The namespace's committed requests, oldest first."""
        return self.run(reading.history(self.ops))

    def search(self, words: Sequence[str], limit: int = 10) -> list[SearchHit]:
        """States whose summary or content hold any of `words` (plain lowercase words, e.g.
        from `flowstate.engine.relevance.words`), best first."""
        return self.run(self.ops.search(words, limit))

    def counts(self) -> GraphCounts:
        """Nodes and relationships the namespace holds, drafts included."""
        [row] = self._read(Q.COUNT_NAMESPACE)
        return GraphCounts(nodes=row["nodes"], relationships=row["relationships"])

    def bundles(self) -> list[RequestBundle]:
        """Every committed request with what it produced, oldest first."""
        return [_bundle(row) for row in self._read(Q.EXPORT_BUNDLES, types=STATE_TYPES)]

    def export_jsonl(self) -> Iterator[str]:
        """The namespace as JSON Lines (see `flowstate.store.export`), newline-terminated."""
        return export.bundle_lines(self.bundles())

    # --- writes -----------------------------------------------------------------------------

    def commit(self, bundle: RequestBundle, *, owner: str | None = None) -> None:
        """Write one finished request in one transaction, replacing its draft; all or nothing.

        With `owner`, the commit happens only while `owner` holds the request.
        """
        self.run(self.ops.commit(bundle, owner=owner))

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
                tx.drive(write_bundle(self._namespace, bundle))
            return GraphCounts(
                nodes=tx.changes.nodes_created - counter,
                relationships=tx.changes.relationships_created,
            )

        return self._store.transaction(work)


def _bundle(row: Row) -> RequestBundle:
    return RequestBundle(
        request=from_props(Request, row["request"]),
        states=[from_props(StateNode, p) for p in row["states"]],
        observations=[from_props(Observation, p) for p in row["observations"]],
        relations=[Relation.model_validate(r) for r in row["relations"]],
        evidence=[Evidence.model_validate(e) for e in row["evidence"]],
        decisions=[from_props(ActionDecision, p) for p in row["decisions"]],
    )
