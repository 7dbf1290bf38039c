"""Turning a finished Active State into the bundle that one transaction commits."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from flowstate.models.active import ActiveState
from flowstate.models.records import (
    MAX_REASON_CHARS,
    MAX_SUMMARY_CHARS,
    ActionDecision,
    Outcome,
    Request,
    RequestBundle,
)
from flowstate.models.vocab import RelationType
from flowstate.models.wording import counted

MAX_DROPPED_NOTES = 50  # on the request node; the rest are counted in one more note

_DEFAULT_SUMMARY_CHARS = 120


def default_summary(text: str) -> str:
    """The request's first line, shortened: used when the model gives no summary."""
    first = next((line.strip() for line in text.splitlines() if line.strip()), "(empty request)")
    return (
        first if len(first) <= _DEFAULT_SUMMARY_CHARS else first[: _DEFAULT_SUMMARY_CHARS - 1] + "…"
    )


def clean_summary(summary: str, text: str) -> str:
    one_line = " ".join(summary.split())
    if not one_line:
        return default_summary(text)
    return one_line[:MAX_SUMMARY_CHARS]


def _only_summary(active: ActiveState) -> str:
    """A request's summary when the model gave none: its one state's, when it made one."""
    states = list(active.states.values())
    return states[0].summary if len(states) == 1 else ""


def bundle_of(
    active: ActiveState, outcome: Outcome, answer: str, summary: str, now: datetime
) -> RequestBundle:
    """States, relations and evidence of the request, plus only the observations they cite."""
    cited = {e.observation for e in active.evidence}
    request = Request(
        namespace=active.namespace,
        id=active.request_id,
        seq=active.seq,
        text=active.text,
        summary=clean_summary(summary or _only_summary(active), active.text),
        outcome=outcome,
        answer=answer,
        steps=active.step,
        started_at=active.started_at,
        finished_at=now,
        usage=active.usage,
        handle_hash=active.handle_hash,
    )
    return RequestBundle(
        request=request,
        states=list(active.states.values()),
        relations=active.relations,
        observations=[o for oid, o in active.observations.items() if oid in cited],
        evidence=active.evidence,
        decisions=[_still_cited(d, active) for d in active.decisions],
    )


def _still_cited(decision: ActionDecision, active: ActiveState) -> ActionDecision:
    """A decision may cite an own state removed later in the request: keep the record honest."""
    # Only this request's own states: a past state forgotten meanwhile (and scrubbed from
    # the draft) is left to the commit, which drops it and records why.
    own = {s.id for s in active.states.values()}
    mine = f"{active.request_id}."
    alive = own | {c for c in decision.cites if not c.startswith(mine)}
    gone = [c for c in decision.cites if c not in alive]
    if not gone:
        return decision
    return decision.model_copy(
        update={
            "cites": [c for c in decision.cites if c in alive],
            # bounded like the field: a long list of removed ids must not fail the commit
            "reason": f"{decision.reason} (cited {', '.join(gone)}, removed later in the request)"[
                :MAX_REASON_CHARS
            ],
        }
    )


def past_references(bundle: RequestBundle) -> set[str]:
    """Ids of earlier requests' states that the bundle relates to or cites in a decision."""
    own = {s.id for s in bundle.states}
    targets = {r.target for r in bundle.relations}
    cited = {c for d in bundle.decisions for c in d.cites}
    return (targets | cited) - own


def without_dangling(bundle: RequestBundle, gone: Iterable[str]) -> RequestBundle:
    """The bundle without its references to past states forgotten before the commit, each
    drop noted on the request (`Request.dropped`). The states themselves are all kept."""
    gone = set(gone)
    notes = list(bundle.request.dropped or [])
    relations = []
    for rel in bundle.relations:
        if rel.target in gone:
            notes.append(
                f"relation {rel.source} {rel.type.value} {rel.target}: {rel.target} was "
                "forgotten before the commit"
            )
        else:
            relations.append(rel)
    decisions = []
    for decision in bundle.decisions:
        lost = [c for c in decision.cites if c in gone]
        if lost:
            notes.append(
                f"{decision.id} ({decision.tool}) cited {', '.join(lost)}, forgotten before "
                "the commit; the decision is kept without that citation"
            )
            decision = decision.model_copy(
                update={"cites": [c for c in decision.cites if c not in gone]}
            )
        decisions.append(decision)
    if len(notes) > MAX_DROPPED_NOTES:
        notes = notes[: MAX_DROPPED_NOTES - 1] + [
            f"and {counted(len(notes) - MAX_DROPPED_NOTES + 1, 'more reference')} to forgotten "
            "states"
        ]
    request = bundle.request.model_copy(update={"dropped": notes})
    return bundle.model_copy(
        update={"request": request, "relations": relations, "decisions": decisions}
    )


def without_conflicts(bundle: RequestBundle, conflicts: Iterable[tuple[str, str]]) -> RequestBundle:
    """The bundle without its SUPERSEDES of states another request superseded first (each drop
    noted on the request): for a request with no step left to revise its delta in."""
    newer = dict(conflicts)
    notes = list(bundle.request.dropped or [])
    relations = []
    for rel in bundle.relations:
        if rel.type is RelationType.SUPERSEDES and rel.target in newer:
            notes.append(
                f"relation {rel.source} SUPERSEDES {rel.target}: {rel.target} was superseded by "
                f"{newer[rel.target]} (another request) before the commit"
            )
        else:
            relations.append(rel)
    request = bundle.request.model_copy(update={"dropped": notes[-MAX_DROPPED_NOTES:]})
    return bundle.model_copy(update={"request": request, "relations": relations})
