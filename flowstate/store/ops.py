"""The operations an agent needs of one namespace, as plans (`flowstate.store.plans`).

These are the single implementation of each: `Repository` runs them on the sync driver and
`AsyncRepository` on the async one, and the engine composes them into larger plans. The
other operations of a namespace are plans over an `Ops` too (`reading`, `forgetting`,
`transfer`), which use its helpers (`read`, `stmt`, `writable`, ...).

    ops = Ops("trip")
    repo.run(ops.reveal(["r1.hotel_budget"]))            # sync
    await arepo.run(ops.reveal(["r1.hotel_budget"]))     # async

Every query receives `$namespace` and matches on it in the Cypher itself, so an id of another
namespace is simply not found, and error messages name only what the caller passed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TypeVar

from flowstate.errors import NotFoundError, ReadOnlyError, ValidationFailed
from flowstate.models import (
    EVIDENCE,
    ActionDecision,
    Direction,
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
from flowstate.models.views import INLINE_CONTENT_CHARS
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
from flowstate.store.holds import DEFAULT_HOLD_S, OpenRequest, held_by_other, open_request_of
from flowstate.store.namespace_node import (
    Stamp,
    being_forgotten,
    check_ttl,
    reset_meanwhile,
    stamp_of,
)
from flowstate.store.plans import Plan, Read, Stmt, Transaction, TxWork, Write
from flowstate.store.search import SearchHit, candidates, search

R = TypeVar("R", bound=Request | StateNode | Observation | ActionDecision)
NO_END = 2**62  # "up to the latest request" for index_generation's $to_seq
STATE_TYPES = [t.value for t in RelationType]
_REVEAL_TYPES = [*STATE_TYPES, EVIDENCE]
_HANDED_OUT_KEPT = 1_024
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
        # The counter's epoch each id was handed out under, until its draft opens: a
        # `forget --all` in between deletes that counter, which hands the id out again, and
        # the draft must then not open (see open_draft.cypher).
        self._handed_out: dict[str, str] = {}

    # --- reads ------------------------------------------------------------------------------

    def stamp(self) -> Plan[Stamp]:
        """Changes whenever something of the namespace is deleted or imported (cheap)."""
        [row] = yield self.read(Q.NAMESPACE_STAMP)
        return stamp_of(row)

    def index(self, from_seq: int = 1, to_seq: int | None = None) -> Plan[list[IndexRequest]]:
        """The Historical State Index: ids, categories and summaries, from `from_seq` on (up to
        `to_seq` included, when given)."""
        last = NO_END if to_seq is None else to_seq
        rows = yield self.index_read(Q.INDEX_GENERATION, from_seq=from_seq, to_seq=last)
        return [IndexRequest.model_validate(row) for row in rows]

    def index_requests(self, seqs: Sequence[int]) -> Plan[list[IndexRequest]]:
        """The index entries, with their state lines, of the requests whose seqs are given
        (those that are committed), in seq order: one round trip."""
        rows = yield self.index_read(Q.INDEX_REQUESTS, seqs=[int(s) for s in seqs])
        return [IndexRequest.model_validate(row) for row in rows]

    def index_since(self, commit: int) -> Plan[list[tuple[IndexRequest, list[Relation]]]]:
        """Index entries of the requests committed after commit number `commit`, in seq
        order, each with the SUPERSEDES relations its states have to older states."""
        rows = yield self.index_read(Q.INDEX_SINCE, since=commit)
        return [
            (
                IndexRequest.model_validate({k: v for k, v in row.items() if k != "supersedes"}),
                [Relation(type=RelationType.SUPERSEDES, **r) for r in row["supersedes"]],
            )
            for row in rows
        ]

    def index_newest(self, before_seq: int, limit: int) -> Plan[list[IndexRequest]]:
        """Up to `limit` of the newest requests below `before_seq`, newest first, with their
        state lines."""
        rows = yield self.index_read(Q.INDEX_NEWEST, before=before_seq, limit=limit)
        return [IndexRequest.model_validate(row) for row in rows]

    def index_newest_heads(self, before_seq: int, limit: int) -> Plan[list[IndexRequest]]:
        """`index_newest` without the state lines (`state_count` set instead)."""
        rows = yield self.read(Q.INDEX_NEWEST_HEADS, before=before_seq, limit=limit)
        return [IndexRequest(states=[], **row) for row in rows]

    def index_older(self, below_seq: int) -> Plan[tuple[int, int, int]]:
        """How many requests lie below `below_seq`: (count, first seq, last seq). Read from
        the namespace's counts, at the same cost at any size; counted one by one only where
        the namespace has no counts (a store not yet upgraded)."""
        [row] = yield self.read(Q.INDEX_OLDER, below=below_seq)
        if row["first"] is None:
            return 0, 0, 0
        if row["counted"] is None:
            [counted] = yield self.read(Q.COUNT_OLDER_REQUESTS, below=below_seq)
            older = int(counted["requests"])
        else:
            older = int(row["counted"]) - int(row["newer"])
        return max(older, 1), int(row["first"]), int(row["last"])

    def index_candidates(
        self, words: Sequence[str], limit: int, *, below_seq: int, upto_commit: int
    ) -> Plan[list[IndexRequest]]:
        """Requests below `below_seq` that may match `words` (full-text hits, best first, at
        most `limit`, and the last few commits), committed by `upto_commit`, with their state
        lines, in seq order (`flowstate.store.search.candidates`)."""
        plan = candidates(self.namespace, words, limit, below=below_seq, upto=upto_commit)
        return (yield from plan)

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
        """Full records of past states with their relations, closed at the far end; a
        superseder forgotten or expired since stays, by id, marked `removed`."""
        wanted = unique(check_id("state", i) for i in state_ids)
        rows = yield self.read(Q.REVEAL_STATES, ids=wanted, types=_REVEAL_TYPES)
        found = {}
        for row in rows:
            state = from_props(StateNode, row["state"])
            views = sorted(
                [*map(_relation_view, row["relations"]), *_removed_superseder(state)],
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

    def open_requests(self) -> Plan[list[OpenRequest]]:
        """Every open request (running or interrupted) with its holder, newest first."""
        rows = yield self.read(Q.OPEN_REQUESTS)
        return [open_request_of(row) for row in rows]

    def open_request(self, request_id: str) -> Plan[OpenRequest | None]:
        """One open request, or None when it is not open."""
        check_id("request", request_id)
        found = [r for r in (yield from self.open_requests()) if r.request_id == request_id]
        return found[0] if found else None

    def current_states(self, key_prefix: str) -> Plan[list[StateNode]]:
        """The states no other supersedes whose key starts with `key_prefix`, oldest first."""
        if not isinstance(key_prefix, str) or not re.fullmatch(r"[a-z0-9_]{0,64}", key_prefix):
            raise ValidationFailed(
                f"a key prefix is up to 64 lowercase letters, digits or '_', not {key_prefix!r:.60}"
            )
        rows = yield self.read(Q.CURRENT_STATES, prefix=key_prefix)
        return [from_props(StateNode, row["state"]) for row in rows]

    def search(self, words: Sequence[str], limit: int = 10) -> Plan[list[SearchHit]]:
        """States whose summary or content hold any of `words` (plain lowercase words, e.g.
        from `flowstate.engine.relevance.words`), best first."""
        return (yield from search(self.namespace, words, limit))

    # --- writes -----------------------------------------------------------------------------

    def allocate_request_seq(self) -> Plan[int]:
        """Hand out the next request seq for good: it is never handed out again."""
        self.writable("start a request")
        [row] = yield self.write(Q.ALLOCATE_REQUEST_SEQ)
        if row["seq"] is None:
            raise being_forgotten(self.namespace, row, "begin a request")
        seq = int(row["seq"])
        self._handed_out[ids.request_id(seq)] = str(row["epoch"])
        while len(self._handed_out) > _HANDED_OUT_KEPT:  # begun, never saved: forget the oldest
            del self._handed_out[next(iter(self._handed_out))]
        return seq

    def take_over(
        self, request_id: str, owner: str, hold_s: int = DEFAULT_HOLD_S, dead: str | None = None
    ) -> Plan[str]:
        """Hold `request_id` for `owner` (to resume or discard it) when its hold has lapsed,
        `owner` holds it already, or `dead` (a process known to have exited) held it; its
        payload. RequestHeld when another live writer holds it; NotFoundError when it is not
        open (never begun, committed or discarded)."""
        self.writable("take a request over")
        check_id("request", request_id)
        rows = yield self.write(
            Q.TAKE_OVER_DRAFT,
            request_id=request_id,
            owner=owner,
            dead=dead,
            hold_s=check_ttl(hold_s),
        )
        if not rows:
            raise (yield from self._not_open(request_id))
        if rows[0]["fenced"]:
            raise being_forgotten(self.namespace, rows[0], f"take {request_id} over")
        # No payload: the request was discarded or committed while it was being taken.
        if not rows[0]["taken"] or rows[0]["payload"] is None:
            raise held_by_other(self.namespace, request_id, rows[0], "take over")
        return str(rows[0]["payload"])

    def _not_open(self, request_id: str) -> Plan[NotFoundError]:
        """Why there is no draft to take over: the id was never handed out, or its request
        ended (committed or discarded). Nobody holds it, so it is not RequestHeld."""
        [row] = yield self.read(Q.NEXT_REQUEST_SEQ)
        if int(request_id[1:]) >= int(row["seq"]):
            why = f"no request has that id yet: the next one begun will be r{row['seq']}"
        else:
            why = "it was committed or discarded"
        return NotFoundError(
            f"cannot take over {request_id} of namespace {self.namespace!r}: it is not open "
            f"({why}). Nothing was taken over"
        )

    def renew_hold(self, request_id: str, owner: str, hold_s: int = DEFAULT_HOLD_S) -> Plan[None]:
        """Renew `owner`'s hold on `request_id`; RequestHeld when it lost it."""
        self.writable("renew a hold")
        rows = yield self.write(
            Q.RENEW_HOLD, request_id=request_id, owner=owner, hold_s=check_ttl(hold_s)
        )
        if not rows or not rows[0]["renewed"]:
            raise held_by_other(self.namespace, request_id, rows[0] if rows else None, "run")

    def release_hold(self, request_id: str, owner: str) -> Plan[bool]:
        """Let `owner`'s hold on `request_id` lapse now (the request stays open: another writer
        may resume or discard it at once); False when `owner` did not hold it."""
        self.writable("release a hold")
        rows = yield self.write(Q.RELEASE_HOLD, request_id=request_id, owner=owner)
        return int(rows[0]["released"]) > 0

    def save_draft(
        self,
        request_id: str,
        payload: str,
        *,
        owner: str,
        hold_s: int = DEFAULT_HOLD_S,
        first: bool = False,
    ) -> Plan[None]:
        """Save the request's serialized active state (JSON text), only while `owner` holds
        it (renewing the hold); `first` opens the draft of a request just begun.

        Past states, observations or request texts it copied that were forgotten meanwhile
        (by another process) are scrubbed from it first. RequestHeld when another writer holds the
        request or its draft is gone (committed or discarded by another writer).
        """
        self.writable("save a draft")
        check_id("request", request_id)
        if not isinstance(payload, str):
            raise ValidationFailed("a draft payload must be a JSON string")
        check_text(request_id, "draft payload", payload)
        hold_s = check_ttl(hold_s)

        def work() -> TxWork[None]:
            state_ids, observation_ids, request_ids = drafts.copied_ids(payload)
            kept = payload
            if state_ids or observation_ids or request_ids:
                [row] = yield self.stmt(
                    Q.EXISTING_IDS,
                    state_ids=state_ids,
                    observation_ids=observation_ids,
                    request_ids=request_ids,
                )
                gone = set(state_ids + observation_ids + request_ids) - set(row["ids"])
                kept = (drafts.scrub(payload, gone.__contains__) if gone else None) or payload
            if first:
                rows = yield self.stmt(
                    Q.OPEN_DRAFT,
                    request_id=request_id,
                    epoch=self._handed_out.get(request_id),
                    payload=kept,
                    owner=owner,
                    hold_s=hold_s,
                )
                if not rows[0]["counted"]:
                    raise reset_meanwhile(self.namespace, request_id)
                if rows[0]["fenced"]:
                    raise being_forgotten(self.namespace, rows[0], f"open {request_id}")
                self._handed_out.pop(request_id, None)
                return
            rows = yield self.stmt(
                Q.SAVE_DRAFT, request_id=request_id, payload=kept, owner=owner, hold_s=hold_s
            )
            if not rows or not rows[0]["saved"]:
                raise held_by_other(self.namespace, request_id, rows[0] if rows else None, "save")

        yield Transaction(work)

    def begin_in_transaction(
        self, key: str | None = None, window_s: int = 0
    ) -> TxWork[tuple[int, str | None]]:
        """Inside a write transaction: the next request seq for a request begun and committed
        in that same transaction (the counter node stays write-locked until it ends, so
        commits around it wait; other requests may be open meanwhile). Second, the id of a
        request committed under idempotency `key` in the last `window_s` seconds: then no
        seq is handed out, and nothing is to be written."""
        self.writable("start a request")
        [row] = yield self.stmt(Q.BEGIN_FACT, key=key, window_s=window_s)
        if row["seq"] is None:
            raise being_forgotten(self.namespace, row, "begin a request")
        return int(row["seq"]), row["duplicate"]

    def commit_in_transaction(self, bundle: RequestBundle) -> TxWork[None]:
        """Inside a write transaction: write one finished request that has no draft."""
        self.writable("commit")
        yield from write_bundle(self.namespace, revalidate(bundle))

    def discard_draft(self, request_id: str, owner: str | None = None) -> Plan[bool]:
        """Drop a request's draft; False when there was none. With `owner`, only while
        `owner` holds it or its hold has lapsed (RequestHeld otherwise)."""
        self.writable("discard a draft")
        rows = yield self.write(
            Q.DISCARD_DRAFT, request_id=check_id("request", request_id), owner=owner
        )
        if not rows:
            return False
        if not rows[0]["deleted"]:
            raise held_by_other(self.namespace, request_id, rows[0], "discard")
        return True

    def commit(self, bundle: RequestBundle, *, owner: str | None = None) -> Plan[None]:
        """Write one finished request in one transaction, replacing its draft; all or nothing.

        With `owner`, the commit happens only while `owner` holds the request (RequestHeld
        otherwise); None commits a request that has no draft (an import).
        """
        self.writable("commit")
        bundle = revalidate(bundle)
        if bundle.request.namespace != self.namespace:
            raise ValidationFailed(
                f"bundle of {bundle.request.id} belongs to namespace {bundle.request.namespace!r}, "
                f"not {self.namespace!r}"
            )

        yield Transaction(lambda: write_bundle(self.namespace, bundle, owner))

    # --- helpers ----------------------------------------------------------------------------

    def read(self, name: Q, **params: object) -> Read:
        return Read(name, {"namespace": self.namespace, **params})

    def index_read(self, name: Q, **params: object) -> Read:
        """A read of index lines, which carry a state's content when it is this short."""
        return self.read(name, inline_chars=INLINE_CONTENT_CHARS, **params)

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


def _relation_view(line: str) -> RelationView:
    """A relation as `reveal_states` returns it: "TYPE direction other-id"."""
    kind, direction, other = line.split(" ")
    return RelationView(type=kind, direction=Direction(direction), other=other)


def _removed_superseder(state: StateNode) -> list[RelationView]:
    """The incoming SUPERSEDES of a superseder forgotten or expired since: the state stays
    superseded (only the removed state's id is kept)."""
    if state.superseded_by_removed is None:
        return []
    return [
        RelationView(
            type=RelationType.SUPERSEDES.value,
            direction=Direction.IN,
            other=state.superseded_by_removed,
            removed=state.superseder_removed,
        )
    ]
