"""Writing one RequestBundle inside a transaction (used by commit and by JSON Lines import).

Written as transaction work (`flowstate.store.plans`), so the sync and the async store run the
same code. Every step is a batched UNWIND query; any check that fails raises, and the caller's
transaction rolls back, so a failed commit leaves nothing of the request behind.
"""

from __future__ import annotations

from typing import Any

from flowstate.errors import NotFoundError, StoreError, ValidationFailed
from flowstate.models import RequestBundle, ids
from flowstate.store.catalog import Q
from flowstate.store.codec import to_props
from flowstate.store.plans import Stmt, TxWork


def write_bundle(namespace: str, bundle: RequestBundle) -> TxWork[None]:
    """Create the request, its states, observations, relations, evidence and decisions; drop
    its draft."""
    request = bundle.request
    rid = request.id
    scope = {"namespace": namespace, "request_id": rid}
    yield Stmt(Q.RECORD_REQUEST_SEQ, {"namespace": namespace, "seq": request.seq})
    [row] = yield Stmt(Q.COMMIT_REQUEST, {"namespace": namespace, "request": to_props(request)})
    if row["later"]:
        raise ValidationFailed(
            f"cannot commit {rid}: namespace {namespace!r} already has later requests; "
            "requests are committed in sequence order"
        )
    states = [{"props": to_props(s), "label": s.category.label} for s in bundle.states]
    rows = yield Stmt(Q.COMMIT_STATES, {**scope, "states": states})
    _expect(rows, len(states), "states", rid)
    observations = [to_props(o) for o in bundle.observations]
    rows = yield Stmt(Q.COMMIT_OBSERVATIONS, {**scope, "observations": observations})
    _expect(rows, len(observations), "observations", rid)
    yield from _write_relations(namespace, bundle)
    evidence = [e.model_dump(mode="json") for e in bundle.evidence]
    rows = yield Stmt(Q.COMMIT_EVIDENCE, {"namespace": namespace, "evidence": evidence})
    _expect(rows, len(evidence), "evidence links", rid)
    yield from _write_decisions(namespace, bundle)
    yield Stmt(Q.DISCARD_DRAFT, scope)


def _write_relations(namespace: str, bundle: RequestBundle) -> TxWork[None]:
    rid = bundle.request.id
    for rel in bundle.relations:
        if ids.request_seq(ids.request_of(rel.target)) > bundle.request.seq:
            raise ValidationFailed(
                f"cannot commit {rid}: relation target {rel.target} belongs to a later request"
            )
    relations = [r.model_dump(mode="json") for r in bundle.relations]
    [row] = yield Stmt(Q.COMMIT_RELATIONS, {"namespace": namespace, "relations": relations})
    if row["missing"]:
        missing = ", ".join(sorted(set(row["missing"])))
        raise NotFoundError(
            f"cannot commit {rid}: relation target(s) {missing} not found in namespace "
            f"{namespace!r}"
        )
    _expect([row], len(relations), "relations", rid)


def _write_decisions(namespace: str, bundle: RequestBundle) -> TxWork[None]:
    rid = bundle.request.id
    for decision in bundle.decisions:
        for cited in decision.cites:
            if ids.request_seq(ids.request_of(cited)) > bundle.request.seq:
                raise ValidationFailed(
                    f"cannot commit {rid}: {decision.id} cites {cited}, of a later request"
                )
    decisions = [to_props(d) for d in bundle.decisions]
    [row] = yield Stmt(
        Q.COMMIT_DECISIONS, {"namespace": namespace, "request_id": rid, "decisions": decisions}
    )
    if row["missing"]:
        missing = ", ".join(sorted(set(row["missing"])))
        raise NotFoundError(
            f"cannot commit {rid}: cited state(s) {missing} not found in namespace {namespace!r}"
        )
    _expect([row], len(decisions), "decisions", rid)


def _expect(rows: list[dict[str, Any]], wanted: int, what: str, rid: str) -> None:
    # The request node was created a moment ago in this transaction; a short count is our bug.
    created = rows[0]["created"] if rows else 0
    if created != wanted:
        raise StoreError(f"commit of {rid} wrote {created} of {wanted} {what}; rolled back")
