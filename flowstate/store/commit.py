"""Writing one RequestBundle inside a transaction (used by commit and by JSON Lines import).

Written as transaction work (`flowstate.store.plans`), so the sync and the async store run the
same code. The whole bundle is one statement (`commit_bundle.cypher`) of batched UNWIND parts;
any check of what it reports that fails raises, and the caller's transaction rolls back, so a
failed commit leaves nothing of the request behind.
"""

from __future__ import annotations

from flowstate.errors import ConflictError, NotFoundError, StoreError
from flowstate.models import RequestBundle
from flowstate.store.catalog import Q
from flowstate.store.codec import to_props
from flowstate.store.holds import held_by_other
from flowstate.store.plans import Changes, Stmt, TxWork
from flowstate.store.search import namespace_term


def write_bundle(
    namespace: str, bundle: RequestBundle, owner: str | None = None
) -> TxWork[Changes]:
    """Create the request, its states, observations, relations, evidence and decisions; drop
    its draft; what that changed. One statement, so one round trip; what it reports is checked
    afterwards. With `owner`, only while `owner` holds the request's draft."""
    request = bundle.request
    rid = request.id
    rows = yield Stmt(
        Q.COMMIT_BUNDLE,
        {
            "namespace": namespace,
            "namespace_term": namespace_term(namespace),
            "owner": owner,
            "request": to_props(request),
            "states": [{"props": to_props(s), "label": s.category.label} for s in bundle.states],
            "observations": [to_props(o) for o in bundle.observations],
            "relations": [r.model_dump(mode="json") for r in bundle.relations],
            "evidence": [e.model_dump(mode="json") for e in bundle.evidence],
            "decisions": [to_props(d) for d in bundle.decisions],
        },
    )
    row = rows[0]
    if not row["held"]:
        held = {"holder": row["holder"], "expires": None} if row["holder"] else None
        raise held_by_other(namespace, rid, held, "commit")
    conflicts = sorted({(c["target"], c["by"]) for c in row["supersede_conflicts"]})
    if conflicts:
        said = "; ".join(f"{old} is already superseded by {new}" for old, new in conflicts)
        raise ConflictError(
            f"cannot commit {rid}: {said} (committed by another request meanwhile): a state is "
            "superseded once; supersede the newer state instead, or drop the relation",
            conflicts,
        )
    _expect(row["states"], len(bundle.states), "states", rid)
    _expect(row["observations"], len(bundle.observations), "observations", rid)
    _missing(row["relation_missing"], f"cannot commit {rid}: relation target(s)", namespace)
    _expect(row["relations"], len(bundle.relations), "relations", rid)
    _expect(row["evidence"], len(bundle.evidence), "evidence links", rid)
    _missing(row["decision_missing"], f"cannot commit {rid}: cited state(s)", namespace)
    _expect(row["decisions"], len(bundle.decisions), "decisions", rid)
    return rows.changes


def _missing(missing: list[str], what: str, namespace: str) -> None:
    if missing:
        raise NotFoundError(
            f"{what} {', '.join(sorted(set(missing)))} not found in namespace {namespace!r}"
        )


def _expect(created: int, wanted: int, what: str, rid: str) -> None:
    # The request node was created a moment ago in this transaction; a short count is our bug.
    if created != wanted:
        raise StoreError(f"commit of {rid} wrote {created} of {wanted} {what}; rolled back")
