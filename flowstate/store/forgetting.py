"""Deleting from a namespace, as plans over its `Ops`: forget a request, a state or everything;
retention (expire what is older than a cutoff).

Each deletion raises the namespace's stamp and keeps its counter (ids are never reused) in
the same transaction, and scrubs what it deleted from drafts (`flowstate.store.drafts`).
What was deleted is counted by the server (`Rows.changes`).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict

from flowstate.errors import NamespaceBusy, NotFoundError, UsageError, ValidationFailed
from flowstate.models import Category, ids
from flowstate.models.wording import counted
from flowstate.store import drafts
from flowstate.store.catalog import Q
from flowstate.store.codec import check_id, shown
from flowstate.store.holds import DEFAULT_HOLD_S, OpenRequest, _native
from flowstate.store.namespace_node import being_forgotten, writer_id
from flowstate.store.ops import Ops
from flowstate.store.plans import Changes, Plan, Row, Transaction, TxWork
from flowstate.store.reading import GraphCounts, Removal, counts, history

Kind = Category | Literal["observation"]
FORGET_BATCH = 5_000  # nodes deleted a transaction when forgetting a whole namespace
FENCE_S = DEFAULT_HOLD_S  # how long a forget's fence lasts unless its next batch renews it


class NamespaceContents(BaseModel):
    """What forgetting a whole namespace deletes: its requests, open requests and nodes."""

    model_config = ConfigDict(frozen=True)

    namespace: str
    requests: int
    interrupted: list[str]  # open requests no live writer holds
    nodes: int

    def describe(self) -> str:
        """`namespace 'demo' (8 requests, the interrupted request r9; 24 nodes)`"""
        parts = [counted(self.requests, "request")]
        if self.interrupted:
            many = "s" * (len(self.interrupted) != 1)
            parts.append(f"the interrupted request{many} {', '.join(self.interrupted)}")
        return f"namespace {self.namespace!r} ({', '.join(parts)}; {counted(self.nodes, 'node')})"


def forget(ops: Ops, record_id: str) -> Plan[Removal]:
    """Forget a request (with everything it produced) or one state, by its id; what was
    deleted. UsageError for an id that is neither."""
    if ids.is_request_id(record_id):
        return (yield from forget_request(ops, record_id))
    if ids.is_state_id(record_id):
        return (yield from forget_state(ops, record_id))
    raise UsageError(f"{record_id[:60]!r} is neither a request id (r3) nor a state id (r3.key)")


def forget_request(ops: Ops, request_id: str) -> Plan[Removal]:
    """Delete a request with its states, observations and relationships; re-link NEXT. Drafts
    that copied any of it are scrubbed; its id is never handed out again."""
    ops.writable("forget")
    check_id("request", request_id)
    return (yield from _forget(ops, Q.FORGET_REQUEST, request_id, drafts.of_request(request_id)))


def forget_state(ops: Ops, state_id: str) -> Plan[Removal]:
    """Delete one state and all its relationships, and scrub it from drafts."""
    ops.writable("forget")
    check_id("state", state_id)
    return (yield from _forget(ops, Q.FORGET_STATE, state_id, drafts.of_ids({state_id})))


def whole_namespace(ops: Ops) -> Plan[NamespaceContents]:
    """What `forget_namespace` would delete now. NamespaceBusy while a live writer runs a
    request there; NotFoundError when the namespace holds nothing (not even an id counter)."""
    ops.writable("forget")
    open_requests = yield from ops.open_requests()
    _not_busy(ops, open_requests)
    held = yield from counts(ops)
    if held.nodes == 0 and (yield from ops.stamp()).epoch is None:
        raise NotFoundError(f"namespace {ops.namespace!r} holds nothing to forget")
    return NamespaceContents(
        namespace=ops.namespace,
        requests=len((yield from history(ops))),
        interrupted=[r.request_id for r in open_requests],
        nodes=held.nodes,
    )


def forget_namespace(ops: Ops, *, force: bool = False) -> Plan[GraphCounts]:
    """Delete everything the namespace holds, drafts and id counter included (ids start again
    at r1). The namespace is fenced first, in the transaction that checks it is not busy: no
    request begins there until the forget ends (NamespaceBusy). NamespaceBusy while a live
    writer runs a request there, unless `force` (a request that runs on finds its draft gone
    at its next save and writes nothing), or while another forget runs there (`force` takes
    its fence over: that forget stops at its next batch)."""
    ops.writable("forget")
    owner = writer_id()
    [row] = yield ops.write(Q.FENCE_NAMESPACE, owner=owner, force=force, hold_s=FENCE_S)
    if not row["fenced"] and row["other"]:
        raise being_forgotten(ops.namespace, row, "forget the whole namespace")
    if not row["fenced"]:
        _not_busy(ops, [_held(h) for h in row["held"]])
    nodes = relationships = 0
    while True:  # one transaction a batch, each renewing the fence; the counter goes last
        rows = yield ops.write(
            Q.FORGET_NAMESPACE_BATCH, owner=owner, batch=FORGET_BATCH, hold_s=FENCE_S
        )
        if not rows or not rows[0]["mine"]:
            raise NamespaceBusy(
                f"forgetting namespace {ops.namespace!r} stopped after {nodes} nodes: its fence "
                "lapsed and a request began there meanwhile. The id counter is kept; run the "
                "forget again to finish it"
            )
        nodes += int(rows[0]["deleted"])
        relationships += rows.changes.relationships_deleted
        if rows[0]["done"]:
            return GraphCounts(nodes=nodes, relationships=relationships)


def expire(ops: Ops, kind: Kind, before: datetime) -> Plan[Removal]:
    """Retention: delete the namespace's states of one category (or its observations) created
    before `before`, with all their relationships; returns what was deleted.

        repo.expire(Category.ENVIRONMENT, now - timedelta(days=90))
        repo.expire("observation", now - timedelta(days=30))
    """
    ops.writable("expire")
    if not isinstance(before, datetime) or before.utcoffset() is None:
        # A naive datetime would compare as null in Cypher and silently expire nothing.
        raise ValidationFailed(f"expire needs a timezone-aware datetime, not {shown(before)}")
    if kind == "observation":
        return (yield from _expire_observations(ops, before))
    try:
        category = Category(kind)
    except ValueError:
        kinds = ", ".join([*(c.value for c in Category), "observation"])
        raise ValidationFailed(f"cannot expire {shown(kind)}: use one of {kinds}") from None

    def work() -> TxWork[Removal]:
        [chosen] = yield ops.stmt(Q.EXPIRING_STATES, category=category.value, before=before)
        if not chosen["ids"]:
            return Removal(nodes=0, relationships=0)
        yield ops.stmt(Q.TOUCH_NAMESPACE)
        marks = yield from _mark(ops, chosen["ids"], None, "expired")
        rows = yield ops.stmt(Q.EXPIRE_STATES, ids=chosen["ids"])
        yield from drafts.scrub_all(ops.namespace, drafts.of_ids(set(rows[0]["ids"])), "expired")
        return _removed(rows.changes, marks)

    deleted: Removal = yield Transaction(work)
    return deleted


def _expire_observations(ops: Ops, before: datetime) -> Plan[Removal]:
    def work() -> TxWork[Removal]:
        rows = yield ops.stmt(Q.EXPIRE_OBSERVATIONS, before=before)
        if rows[0]["ids"]:
            yield ops.stmt(Q.TOUCH_NAMESPACE)
            gone = drafts.of_ids(set(rows[0]["ids"]))
            yield from drafts.scrub_all(ops.namespace, gone, "expired")
        return _removed(rows.changes)

    deleted: Removal = yield Transaction(work)
    return deleted


def expiring(ops: Ops, cutoffs: Mapping[Kind, datetime]) -> Plan[dict[str, int]]:
    """How many records `expire` would delete now, per kind (states of a category, or
    observations), for a preview before a destructive retention run."""
    for before in cutoffs.values():
        if not isinstance(before, datetime) or before.utcoffset() is None:
            raise ValidationFailed(f"expiring needs timezone-aware datetimes, not {before!r}")
    wanted = [{"kind": str(k), "before": b} for k, b in cutoffs.items()]
    rows = yield ops.read(Q.RETENTION_PREVIEW, cutoffs=wanted)
    return {row["kind"]: row["records"] for row in rows}


def _forget(ops: Ops, name: Q, record_id: str, gone: drafts.Gone) -> Plan[Removal]:
    def work() -> TxWork[Removal]:
        # First: the counter must cover this request before it can be deleted.
        yield ops.stmt(Q.TOUCH_NAMESPACE)
        request = record_id if ids.is_request_id(record_id) else None
        marks = yield from _mark(ops, [] if request else [record_id], request, "forgotten")
        rows = yield ops.stmt(name, id=record_id)
        if not rows[0]["forgotten"]:
            raise ops.not_found([record_id])  # rolls the touch and the marks back too
        yield from drafts.scrub_all(ops.namespace, gone, "forgotten")
        return _removed(rows.changes, marks)

    deleted: Removal = yield Transaction(work)
    return deleted


def _mark(ops: Ops, state_ids: list[str], request_id: str | None, how: str) -> TxWork[Row]:
    """Keep on the states that stay what the removed ones meant to them (mark_removed.cypher):
    still superseded, or resting on something gone."""
    [row] = yield ops.stmt(Q.MARK_REMOVED, ids=state_ids, request_id=request_id, how=how)
    return row


def _not_busy(ops: Ops, open_requests: list[OpenRequest]) -> None:
    running = [r for r in open_requests if r.held]
    if running:
        first = running[0]
        raise NamespaceBusy(
            f"namespace {ops.namespace!r} is busy: writer {first.holder} runs request "
            f"{first.request_id} there ({len(running)} running in all); wait until they "
            "end, or until their holds lapse",
            owner=first.holder,
            expires=first.expires,
        )


def _held(row: Row) -> OpenRequest:
    return OpenRequest(
        request_id=row["request_id"],
        holder=row["holder"],
        expires=_native(row["expires"]),
        held=True,
        created_at=None,
        updated_at=None,
        idle_s=0,
        payload="{}",
    )


def _removed(changes: Changes, marks: Row | None = None) -> Removal:
    superseded = {m["state"]: m["by"] for m in (marks or {}).get("superseded", [])}
    dependents = {
        d["state"]: [f"{link['type']} {link['target']}" for link in d["links"]]
        for d in (marks or {}).get("dependents", [])
    }
    return Removal(
        nodes=changes.nodes_deleted,
        relationships=changes.relationships_deleted,
        superseded=dict(sorted(superseded.items())),
        dependents=dict(sorted(dependents.items())),
    )
