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

from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime
from typing import Literal, TypeVar

from pydantic import BaseModel, ConfigDict

from flowstate.errors import NotFoundError, ReadOnlyError, ValidationFailed
from flowstate.models import (
    EVIDENCE,
    ActionDecision,
    Category,
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
from flowstate.store import drafts, export
from flowstate.store.catalog import Q
from flowstate.store.codec import (
    Record,
    check_id,
    check_namespace,
    check_text,
    from_props,
    kind_of,
    revalidate,
    shown,
    unique,
)
from flowstate.store.commit import write_bundle
from flowstate.store.connection import Changes, Row, Store, Tx
from flowstate.store.namespace_node import (
    DEFAULT_LEASE_S,
    Lease,
    Stamp,
    check_ttl,
    hold,
    lease_of,
    stamp_of,
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


class GraphCounts(BaseModel):
    """How many nodes and relationships were counted, created or deleted."""

    model_config = ConfigDict(frozen=True)

    nodes: int
    relationships: int


class Repository:
    """Reads and writes of one namespace; `read_only=True` refuses every write."""

    def __init__(self, store: Store, namespace: str, *, read_only: bool = False) -> None:
        self._store = store
        self._namespace = check_namespace(namespace)
        self._read_only = read_only

    @property
    def namespace(self) -> str:
        return self._namespace

    @property
    def read_only(self) -> bool:
        return self._read_only

    # --- reads ------------------------------------------------------------------------------

    def next_request_seq(self) -> int:
        """The seq the next request would get: one past the highest ever handed out (ids are
        never reused, even after a forget) or committed."""
        return self._read(Q.NEXT_REQUEST_SEQ)[0]["seq"]

    def stamp(self) -> Stamp:
        """Changes whenever something of the namespace is deleted or imported (cheap)."""
        [row] = self._read(Q.NAMESPACE_STAMP)
        return stamp_of(row)

    def lease(self) -> Lease | None:
        """The writer running a request in the namespace now, if any (unexpired lease)."""
        [row] = self._read(Q.NAMESPACE_STAMP)
        return lease_of(row)

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

    def allocate_request_seq(self) -> int:
        """Hand out the next request seq for good: it is never handed out again."""
        self._writable("start a request")
        rows, _ = self._write(Q.ALLOCATE_REQUEST_SEQ)
        return rows[0]["seq"]

    def acquire_lease(self, owner: str, ttl_s: int = DEFAULT_LEASE_S) -> None:
        """Take (or renew) the namespace's writer lease for `ttl_s` seconds; NamespaceBusy
        naming the holder when another live writer has it."""
        self._writable("take the writer lease")
        ttl_s = check_ttl(ttl_s)
        self._store.transaction(lambda tx: hold(tx, self._namespace, owner, ttl_s))

    def take_over_lease(self, dead: str, owner: str, ttl_s: int = DEFAULT_LEASE_S) -> bool:
        """Take the lease from a holder known to be dead; False if `dead` no longer holds it."""
        self._writable("take the writer lease")
        rows, _ = self._write(Q.TAKE_OVER_LEASE, dead=dead, owner=owner, ttl_s=check_ttl(ttl_s))
        return rows[0]["taken"] > 0

    def release_lease(self, owner: str) -> bool:
        """Give the lease back; False when `owner` did not hold it (any more)."""
        self._writable("release the writer lease")
        rows, _ = self._write(Q.RELEASE_LEASE, owner=owner)
        return rows[0]["released"] > 0

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

    def save_draft(
        self,
        request_id: str,
        payload: str,
        *,
        owner: str | None = None,
        lease_s: int = DEFAULT_LEASE_S,
    ) -> None:
        """Upsert the in-flight request's serialized active state (JSON text).

        With `owner`, it is saved only while `owner` holds the writer lease (renewing it).
        Past states or observations it copied that were forgotten meanwhile (by another
        process) are scrubbed from it first.
        """
        self._writable("save a draft")
        check_id("request", request_id)
        if not isinstance(payload, str):
            raise ValidationFailed("a draft payload must be a JSON string")
        check_text(request_id, "draft payload", payload)

        def work(tx: Tx) -> None:
            if owner is not None:
                hold(tx, self._namespace, owner, lease_s)
            state_ids, observation_ids = drafts.copied_ids(payload)
            kept = payload
            if state_ids or observation_ids:
                [row] = tx.run(
                    Q.EXISTING_IDS,
                    {
                        "namespace": self._namespace,
                        "state_ids": state_ids,
                        "observation_ids": observation_ids,
                    },
                )
                gone = set(state_ids + observation_ids) - set(row["ids"])
                kept = (drafts.scrub(payload, gone.__contains__) if gone else None) or payload
            self._save(tx, request_id, kept)

        self._store.transaction(work)

    def discard_draft(self, request_id: str) -> bool:
        """Drop a request's draft; False when there was none."""
        self._writable("discard a draft")
        rows, _ = self._write(Q.DISCARD_DRAFT, request_id=check_id("request", request_id))
        return rows[0]["deleted"] > 0

    def forget_request(self, request_id: str) -> GraphCounts:
        """Delete a request with its states, observations and relationships; re-link NEXT.
        Drafts that copied any of it are scrubbed; its id is never handed out again."""
        self._writable("forget")
        check_id("request", request_id)
        return self._forget(Q.FORGET_REQUEST, request_id, drafts.of_request(request_id))

    def forget_state(self, state_id: str) -> GraphCounts:
        """Delete one state and all its relationships, and scrub it from drafts."""
        self._writable("forget")
        check_id("state", state_id)
        return self._forget(Q.FORGET_STATE, state_id, drafts.of_ids({state_id}))

    def forget_namespace(self) -> GraphCounts:
        """Delete everything the namespace holds, drafts included."""
        self._writable("forget")
        params = {"namespace": self._namespace}
        deleted = _deleted(self._store.write_batched(Q.FORGET_NAMESPACE, params))
        self._write(Q.FORGET_NAMESPACE_NODE)  # last: a cut-short forget keeps the counter
        return deleted

    def expire(self, kind: Category | Literal["observation"], before: datetime) -> GraphCounts:
        """Retention: delete the namespace's states of one category (or its observations)
        created before `before`, with all their relationships; returns what was deleted.

            repo.expire(Category.ENVIRONMENT, now - timedelta(days=90))
            repo.expire("observation", now - timedelta(days=30))
        """
        self._writable("expire")
        if not isinstance(before, datetime) or before.utcoffset() is None:
            # A naive datetime would compare as null in Cypher and silently expire nothing.
            raise ValidationFailed(f"expire needs a timezone-aware datetime, not {shown(before)}")
        if kind == "observation":
            name, params = Q.EXPIRE_OBSERVATIONS, {"before": before}
        else:
            try:
                category = Category(kind)
            except ValueError:
                kinds = ", ".join([*(c.value for c in Category), "observation"])
                raise ValidationFailed(f"cannot expire {shown(kind)}: use one of {kinds}") from None
            name, params = Q.EXPIRE_STATES, {"category": category.value, "before": before}

        def work(tx: Tx) -> GraphCounts:
            [row] = tx.run(name, {"namespace": self._namespace, **params})
            if row["ids"]:
                tx.run(Q.TOUCH_NAMESPACE, {"namespace": self._namespace})
                self._scrub_drafts(tx, drafts.of_ids(set(row["ids"])))
            return _deleted(tx.changes)

        return self._store.transaction(work)

    def expiring(self, cutoffs: dict[str, datetime]) -> dict[str, int]:
        """How many records `expire` would delete now, per kind (states of a category, or
        observations), for a preview before a destructive retention run."""
        for before in cutoffs.values():
            if not isinstance(before, datetime) or before.utcoffset() is None:
                raise ValidationFailed(f"expiring needs timezone-aware datetimes, not {before!r}")
        rows = self._read(
            Q.RETENTION_PREVIEW,
            cutoffs=[{"kind": str(k), "before": b} for k, b in cutoffs.items()],
        )
        return {row["kind"]: row["records"] for row in rows}

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

    def _read(self, name: Q, **params: object) -> list[Row]:
        return self._store.read(name, {"namespace": self._namespace, **params})

    def _write(self, name: Q, **params: object) -> tuple[list[Row], Changes]:
        return self._store.write(name, {"namespace": self._namespace, **params})

    def _writable(self, action: str) -> None:
        if self._read_only:
            raise ReadOnlyError(f"cannot {action}: namespace {self._namespace!r} is open read-only")

    def _index(self, from_seq: int, to_seq: int) -> list[IndexRequest]:
        rows = self._read(Q.INDEX_GENERATION, from_seq=from_seq, to_seq=to_seq)
        return [IndexRequest.model_validate(row) for row in rows]

    def _get(self, cls: type[R], record_id: str) -> R:
        [record] = self.expand([record_id])
        assert isinstance(record, cls)
        return record

    def _forget(self, name: Q, record_id: str, gone: drafts.Gone) -> GraphCounts:
        def work(tx: Tx) -> GraphCounts:
            # First: the counter must cover this request before it can be deleted.
            tx.run(Q.TOUCH_NAMESPACE, {"namespace": self._namespace})
            [row] = tx.run(name, {"namespace": self._namespace, "id": record_id})
            if not row["forgotten"]:
                raise self._not_found([record_id])  # rolls the touch back too
            self._scrub_drafts(tx, gone)
            return _deleted(tx.changes)

        return self._store.transaction(work)

    def _scrub_drafts(self, tx: Tx, gone: drafts.Gone) -> None:
        for row in tx.run(Q.DRAFTS, {"namespace": self._namespace}):
            scrubbed = drafts.scrub(row["payload"], gone)
            if scrubbed is not None:
                self._save(tx, row["request_id"], scrubbed)

    def _save(self, tx: Tx, request_id: str, payload: str) -> None:
        params = {"namespace": self._namespace, "request_id": request_id, "payload": payload}
        tx.run(Q.SAVE_DRAFT, params)

    def _all_found(self, wanted: list[str], found: dict[str, object]) -> list[str]:
        missing = [i for i in wanted if i not in found]
        if missing:
            raise self._not_found(missing)
        return wanted

    def _not_found(self, missing: list[str]) -> NotFoundError:
        # Name only the caller's own ids; never hint whether they exist in another namespace.
        return NotFoundError(f"not found in namespace {self._namespace!r}: {', '.join(missing)}")


def _deleted(changes: Changes) -> GraphCounts:
    return GraphCounts(nodes=changes.nodes_deleted, relationships=changes.relationships_deleted)


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


def _observation_order(o: Observation) -> tuple:
    return (ids.request_seq(o.request_id), o.step, o.created_at, o.id)
