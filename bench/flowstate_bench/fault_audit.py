"""Is a namespace whole? Checks that hold after any fault, through the repository's reads only.

`audit` re-reads every committed request (`Repository.bundles`), validates it again, and
compares it with what was sent when that is known. The namespace's own node and relationship
counts must then be exactly what those bundles account for: a State or Observation without
its Request, a stray edge, a leftover draft or a doubled NEXT link all break the equation.
(The library keeps every Cypher statement in the store; an independent driver that walks the
NEXT chain itself lives in the tests.)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from pydantic import ValidationError

from flowstate.models import RequestBundle
from flowstate.store import Repository


@dataclass
class Audit:
    namespace: str
    requests: int = 0
    states: int = 0
    observations: int = 0
    relations: int = 0
    problems: list[str] = field(default_factory=list)
    seqs: list[int] = field(default_factory=list)  # of the committed requests, in order
    altered: list[int] = field(default_factory=list)  # seqs not exactly as sent

    @property
    def ok(self) -> bool:
        return not self.problems


def audit(
    repo: Repository, sent: Mapping[int, RequestBundle] | None = None, drafts: int = 0
) -> Audit:
    """Check `repo`'s namespace; `sent` maps seq -> the bundle handed to commit for it."""
    found = Audit(repo.namespace)
    bundles = repo.bundles()
    found.seqs = [b.request.seq for b in bundles]
    if found.seqs != list(range(1, len(bundles) + 1)):
        found.problems.append(f"request seqs are not 1..{len(bundles)}: {found.seqs[:20]}")
    nodes = relationships = 0
    for bundle in bundles:
        _check_bundle(bundle, sent, found)
        cites = sum(len(d.cites) for d in bundle.decisions)
        nodes += 1 + len(bundle.states) + len(bundle.observations) + len(bundle.decisions)
        relationships += len(bundle.states) + len(bundle.observations) + len(bundle.decisions)
        relationships += len(bundle.relations) + len(bundle.evidence) + cites
    relationships += max(0, len(bundles) - 1)  # one NEXT between consecutive requests
    counts = repo.counts()
    if (counts.nodes, counts.relationships) != (nodes + drafts, relationships):
        found.problems.append(
            f"namespace holds {counts.nodes} nodes and {counts.relationships} relationships; "
            f"its requests account for {nodes + drafts} and {relationships} (orphans, stray "
            "edges or a broken NEXT chain)"
        )
    return found


def _check_bundle(
    bundle: RequestBundle, sent: Mapping[int, RequestBundle] | None, found: Audit
) -> None:
    rid = bundle.request.id
    found.requests += 1
    found.states += len(bundle.states)
    found.observations += len(bundle.observations)
    found.relations += len(bundle.relations)
    try:
        RequestBundle.model_validate(bundle.model_dump())
    except ValidationError as e:
        found.problems.append(f"{rid} does not validate when read back: {e.errors()[:3]}")
    if sent is None:
        return
    expected = sent.get(bundle.request.seq)
    if expected is None:
        found.problems.append(f"{rid} is committed but was never sent")
    elif shape(bundle) != shape(expected):
        found.altered.append(bundle.request.seq)
        found.problems.append(
            f"{rid} is incomplete or altered: read back {counts_of(bundle)}, sent "
            f"{counts_of(expected)}"
        )


def shape(bundle: RequestBundle) -> tuple:
    """A bundle's content, independent of the order the database returns it in."""
    return (
        bundle.request,
        sorted(bundle.states, key=lambda s: s.id),
        sorted(bundle.observations, key=lambda o: o.id),
        sorted(bundle.relations, key=lambda r: (r.source, r.type, r.target)),
        sorted(bundle.evidence, key=lambda e: (e.state, e.observation)),
        sorted(bundle.decisions, key=lambda d: d.id),
    )


def counts_of(bundle: RequestBundle) -> dict[str, int]:
    return {
        "states": len(bundle.states),
        "relations": len(bundle.relations),
        "observations": len(bundle.observations),
        "evidence": len(bundle.evidence),
    }
