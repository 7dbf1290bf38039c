"""The operations an agent needs of one namespace, as plans (`flowstate.store.plans`).

These are the single implementation of each: `Repository` runs them on the sync driver and
`AsyncRepository` on the async one, and the engine composes them into larger plans.

    ops = Ops("trip")
    repo.run(ops.reveal(["r1.hotel_budget"]))            # sync
    await arepo.run(ops.reveal(["r1.hotel_budget"]))     # async

Every query receives `$namespace` and matches on it in the Cypher itself, so an id of another
namespace is simply not found, and error messages name only what the caller passed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TypeVar

from flowstate.errors import NotFoundError, ReadOnlyError, UsageError, ValidationFailed
from flowstate.models import (
    EVIDENCE,
    ActionDecision,
    IndexRequest,
    IndexState,
    Observation,
    RelationType,
    RelationView,
    Request,
    RequestBundle,
    RevealedState,
    StateNode,
)
from flowstate.store import drafts
from flowstate.store.catalog import Q
from flowstate.store.codec import (
    Record,
    check_id,
    check_namespace,
    check_text,
    from_props,
    kind_of,
    revalidate,
    unique,
)
from flowstate.store.commit import write_bundle
from flowstate.store.namespace_node import (
    DEFAULT_LEASE_S,
    DraftAge,
    Lease,
    Stamp,
    busy,
    check_ttl,
    hold,
    lease_of,
    renew,
    stamp_of,
)
from flowstate.store.plans import Plan, Read, Stmt, Transaction, TxWork, Write
from flowstate.store.search import SearchHit, search

R = TypeVar("R", bound=Request | StateNode | Observation | ActionDecision)
NO_END = 2**62  # "up to the latest request" for index_generation's $to_seq
STATE_TYPES = [t.value for t in RelationType]
_REVEAL_TYPES = [*STATE_TYPES, EVIDENCE]
_MODELS: dict[str, type[Record]] = {
    "request": Request,
    "state": StateNode,
    "observation": Observation,
    "decision": ActionDecision,
}


class Ops:
    """Plans over one namespace; `read_only=True` refuses every write."""

    def __init__(self, namespace: str, *, read_only: bool = False) -> None:
        self.namespace = check_namespace(namespace)
        self.read_only = read_only

    # --- reads ------------------------------------------------------------------------------

    def stamp(self) -> Plan[Stamp]:
        """Changes whenever something of the namespace is deleted or imported (cheap)."""
        [row] = yield self.read(Q.NAMESPACE_STAMP)
        return stamp_of(row)

    def lease(self) -> Plan[Lease | None]:
        """The writer running a request in the namespace now, if any (unexpired lease)."""
        [row] = yield self.read(Q.NAMESPACE_STAMP)
        return lease_of(row)

    def index(self, from_seq: int = 1, to_seq: int = NO_END) -> Plan[list[IndexRequest]]:
        """Index entries with their state lines, for requests `from_seq` to `to_seq`."""
        rows = yield self.read(Q.INDEX_GENERATION, from_seq=from_seq, to_seq=to_seq)
        return [IndexRequest.model_validate(row) for row in rows]

    def index_heads(self) -> Plan[list[IndexRequest]]:
        """Every committed request's index entry without its state lines (`states` empty,
        `state_count` set): cheap at any size."""
        rows = yield self.read(Q.INDEX_HEADS)
        return [IndexRequest(states=[], **row) for row in rows]

    def request_states(self, request_id: str) -> Plan[list[IndexState]]:
        """The index lines of one request's states (for a collapsed index entry)."""
        seq = int(check_id("request", request_id)[1:])
        found = yield from self.index(seq, seq)
        if not found:
            raise self.not_found([request_id])
        return found[0].states

    def reveal(self, state_ids: Sequence[str]) -> Plan[list[RevealedState]]:
        """Full records of past states with their relations, closed at the far end."""
        wanted = unique(check_id("state", i) for i in state_ids)
        rows = yield self.read(Q.REVEAL_STATES, ids=wanted, types=_REVEAL_TYPES)
        found = {}
        for row in rows:
            state = from_props(StateNode, row["state"])
            views = sorted(
                (RelationView.model_validate(r) for r in row["relations"]),
                key=lambda v: (v.type, v.direction, v.other),
            )
            found[state.id] = RevealedState(state=state, relations=views)
        return [found[i] for i in self.all_found(wanted, found)]

    def expand(self, any_ids: Sequence[str]) -> Plan[list[Record]]:
        """Full records for a mix of request, state, observation and decision ids, in the order
        asked."""
        wanted = unique(any_ids)
        by_kind: dict[str, list[str]] = {kind: [] for kind in _MODELS}
        for value in wanted:
            by_kind[kind_of(value)].append(value)
        rows = yield self.read(
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
        return [found[i] for i in self.all_found(wanted, found)]

    def get(self, cls: type[R], kind: str, record_id: str) -> Plan[R]:
        """One record of that kind; NotFoundError unless it exists."""
        [record] = yield from self.expand([check_id(kind, record_id)])
        assert isinstance(record, cls)
        return record

    def load_draft(self) -> Plan[tuple[str, str] | None]:
        """The in-flight request's `(request_id, payload)`, if one was saved."""
        rows = yield self.read(Q.LOAD_DRAFT)
        return (rows[0]["request_id"], rows[0]["payload"]) if rows else None

    def draft_age(self) -> Plan[DraftAge | None]:
        """The open request's draft with the seconds since its last save (the server's clock)
        and the live writer lease; None when no request is open."""
        [row] = yield self.read(Q.DRAFT_AGE)
        if row["request_id"] is None:
            return None
        return DraftAge(request_id=row["request_id"], idle_s=row["idle_s"], lease=lease_of(row))

    def search(self, words: Sequence[str], limit: int) -> Plan[list[SearchHit]]:
        """States whose summary or content hold any of `words`, best first."""
        return (yield from search(self.namespace, words, limit))

    # --- writes -----------------------------------------------------------------------------

    def allocate_request_seq(self) -> Plan[int]:
        """Hand out the next request seq for good: it is never handed out again."""
        self.writable("start a request")
        rows = yield self.write(Q.ALLOCATE_REQUEST_SEQ)
        return int(rows[0]["seq"])

    def acquire_lease(self, owner: str, ttl_s: int = DEFAULT_LEASE_S) -> Plan[None]:
        """Take (or renew) the namespace's writer lease for `ttl_s` seconds; NamespaceBusy
        naming the holder when another live writer has it."""
        self.writable("take the writer lease")
        ttl_s = check_ttl(ttl_s)
        yield Transaction(lambda: hold(self.namespace, owner, ttl_s))

    def renew_lease(self, owner: str, ttl_s: int = DEFAULT_LEASE_S) -> Plan[None]:
        """Renew `owner`'s lease while it still holds it; NamespaceBusy when it was lost."""
        self.writable("renew the writer lease")
        ttl_s = check_ttl(ttl_s)
        yield Transaction(lambda: renew(self.namespace, owner, ttl_s))

    def take_over_lease(self, dead: str, owner: str, ttl_s: int = DEFAULT_LEASE_S) -> Plan[bool]:
        """Take the lease from a holder known to be dead; False if `dead` no longer holds it."""
        self.writable("take the writer lease")
        rows = yield self.write(Q.TAKE_OVER_LEASE, dead=dead, owner=owner, ttl_s=check_ttl(ttl_s))
        return int(rows[0]["taken"]) > 0

    def release_lease(self, owner: str) -> Plan[bool]:
        """Give the lease back; False when `owner` did not hold it (any more)."""
        self.writable("release the writer lease")
        rows = yield self.write(Q.RELEASE_LEASE, owner=owner)
        return int(rows[0]["released"]) > 0

    def save_draft(
        self,
        request_id: str,
        payload: str,
        *,
        owner: str | None = None,
        lease_s: int = DEFAULT_LEASE_S,
    ) -> Plan[None]:
        """Upsert the in-flight request's serialized active state (JSON text).

        With `owner`, it is saved only while `owner` holds the writer lease (renewing it).
        Past states or observations it copied that were forgotten meanwhile (by another
        process) are scrubbed from it first.
        """
        self.writable("save a draft")
        check_id("request", request_id)
        if not isinstance(payload, str):
            raise ValidationFailed("a draft payload must be a JSON string")
        check_text(request_id, "draft payload", payload)

        def work() -> TxWork[None]:
            if owner is not None:
                yield from renew(self.namespace, owner, lease_s)
            state_ids, observation_ids = drafts.copied_ids(payload)
            kept = payload
            if state_ids or observation_ids:
                [row] = yield self.stmt(
                    Q.EXISTING_IDS, state_ids=state_ids, observation_ids=observation_ids
                )
                gone = set(state_ids + observation_ids) - set(row["ids"])
                kept = (drafts.scrub(payload, gone.__contains__) if gone else None) or payload
            yield self.stmt(Q.SAVE_DRAFT, request_id=request_id, payload=kept)

        yield Transaction(work)

    def begin_in_transaction(self, owner: str) -> TxWork[int]:
        """Inside a write transaction: the next request seq for a request begun and committed
        in that same transaction (the counter node stays write-locked until it ends). Refused
        while another live writer holds the lease or a request of the namespace is open."""
        self.writable("start a request")
        [row] = yield self.stmt(Q.BEGIN_FACT, owner=owner)
        if row["started"]:
            return int(row["seq"])
        if row["open_request"]:
            raise UsageError(
                f"request {row['open_request']} is open in namespace {self.namespace!r}: "
                "commit or discard it first (one request at a time per namespace)"
            )
        raise busy(self.namespace, Lease(owner=row["owner"], expires=row["expires"].to_native()))

    def commit_in_transaction(self, bundle: RequestBundle) -> TxWork[None]:
        """Inside a write transaction: write one finished request (see `commit`)."""
        self.writable("commit")
        yield from write_bundle(self.namespace, revalidate(bundle))

    def discard_draft(self, request_id: str) -> Plan[bool]:
        """Drop a request's draft; False when there was none."""
        self.writable("discard a draft")
        rows = yield self.write(Q.DISCARD_DRAFT, request_id=check_id("request", request_id))
        return int(rows[0]["deleted"]) > 0

    def commit(
        self, bundle: RequestBundle, *, owner: str | None = None, lease_s: int = DEFAULT_LEASE_S
    ) -> Plan[None]:
        """Write one finished request in one transaction, replacing its draft; all or nothing.

        With `owner`, the commit happens only while `owner` holds the writer lease.
        """
        self.writable("commit")
        bundle = revalidate(bundle)
        if bundle.request.namespace != self.namespace:
            raise ValidationFailed(
                f"bundle of {bundle.request.id} belongs to namespace {bundle.request.namespace!r}, "
                f"not {self.namespace!r}"
            )

        def work() -> TxWork[None]:
            if owner is not None:
                yield from renew(self.namespace, owner, lease_s)
            yield from write_bundle(self.namespace, bundle)

        yield Transaction(work)

    # --- helpers ----------------------------------------------------------------------------

    def read(self, name: Q, **params: object) -> Read:
        return Read(name, {"namespace": self.namespace, **params})

    def write(self, name: Q, **params: object) -> Write:
        return Write(name, {"namespace": self.namespace, **params})

    def stmt(self, name: Q, **params: object) -> Stmt:
        return Stmt(name, {"namespace": self.namespace, **params})

    def writable(self, action: str) -> None:
        if self.read_only:
            raise ReadOnlyError(f"cannot {action}: namespace {self.namespace!r} is open read-only")

    def not_found(self, missing: list[str]) -> NotFoundError:
        # Name only the caller's own ids; never hint whether they exist in another namespace.
        return NotFoundError(f"not found in namespace {self.namespace!r}: {', '.join(missing)}")

    def all_found(self, wanted: list[str], found: Mapping[str, object]) -> list[str]:
        missing = [i for i in wanted if i not in found]
        if missing:
            raise self.not_found(missing)
        return wanted
