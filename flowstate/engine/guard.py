"""The guard's rules for consequential calls, and what a request knows to be stale. Pure.

A consequential call must cite the states it relies on: states of this request or revealed
past ones, none of them superseded. Every call that reached the guard is recorded as an
`ActionDecision`, approved or not.
"""

from __future__ import annotations

import json
from typing import Any

from flowstate.engine.index import RenderedIndex
from flowstate.models import ids
from flowstate.models.active import ActiveState
from flowstate.models.records import ActionDecision
from flowstate.models.step import ToolCall
from flowstate.models.vocab import RelationType


def guard_refusal(
    active: ActiveState, call: ToolCall, has_approver: bool
) -> tuple[str | None, list[str]]:
    """Why a consequential call may not run (None when it may go to the approver), and
    the states it cites that are in the Active State."""
    known = {s.id for s in active.states.values()} | set(active.revealed)
    # A key of this request names its state, as a relation target does.
    cites = [ids.state_id(active.request_id, c) if ids.is_key(c) else c for c in call.cites]
    cited = [c for c in dict.fromkeys(cites) if c in known]
    unknown = [c for c in cites if c not in known]
    newer = superseded(active)
    stale = [f"{c} (SUPERSEDED by {', '.join(sorted(newer[c]))})" for c in cited if c in newer]
    if not call.cites:
        return (
            f"{call.name} is consequential: cite the states it relies on in "
            "action.cites (this request's states, by key or id, or revealed ones)"
        ), cited
    if unknown:
        return (f"{call.name}: cited ids are not in the Active State: {', '.join(unknown)}"), cited
    if stale:
        return (
            f"{call.name}: cited states are stale: {'; '.join(stale)}; cite the current ones"
        ), cited
    if not has_approver:
        return f"{call.name} is consequential and no approver is configured: denied", cited
    return None, cited


def decision_of(
    active: ActiveState, call: ToolCall, cited: list[str], refusal: str | None
) -> ActionDecision:
    """Every consequential call that reached the guard is recorded, approved or not."""
    decision = ActionDecision(
        namespace=active.namespace,
        request_id=active.request_id,
        step=active.step,
        id=ids.decision_id(active.request_id, len(active.decisions) + 1),
        tool=call.name,
        arguments=canonical(call.arguments),
        cites=cited,
        approved=refusal is None,
        reason=refusal or "approved",
    )
    active.decisions.append(decision)
    return decision


def committed_supersessions(active: ActiveState, index: RenderedIndex) -> dict[str, str]:
    """Past states a committed state supersedes, as the model was shown it: marks in the
    index and in opened requests' lines, incoming SUPERSEDES of revealed states. Not those
    whose newer state was forgotten or expired: they are stale (the guard refuses them), and
    the current value supersedes them again."""
    stale = {k: v for k, v in index.superseded.items() if k not in index.superseder_removed}
    for lines in active.opened_requests.values():
        stale |= {
            s.id: s.superseded_by for s in lines if s.superseded_by and not s.superseder_removed
        }
    for rev in active.revealed.values():
        newer = [
            r.other
            for r in rev.relations
            if r.type == "SUPERSEDES" and r.direction == "in" and not r.removed
        ]
        if newer:
            stale[rev.state.id] = newer[0]
    return stale


def own_supersessions(active: ActiveState) -> dict[str, str]:
    """Past states this request's states supersede, and by which."""
    return {r.target: r.source for r in active.relations if r.type is RelationType.SUPERSEDES}


def superseded(active: ActiveState) -> dict[str, set[str]]:
    """Which visible states are stale, and by what: SUPERSEDES edges of revealed states (either
    end, as committed) and those this request added, to past states or to its own."""
    newer: dict[str, set[str]] = {}
    for rev in active.revealed.values():
        for rel in rev.relations:
            if rel.type == RelationType.SUPERSEDES.value:
                pair = (rev.state.id, rel.other)
                old, new = pair if rel.direction == "in" else pair[::-1]
                newer.setdefault(old, set()).add(new)
    for relation in active.relations:
        if relation.type is RelationType.SUPERSEDES:
            newer.setdefault(relation.target, set()).add(relation.source)
    return newer


def described(call: ToolCall) -> str:
    return f"{call.name}({canonical(call.arguments)})"


def canonical(arguments: dict[str, Any]) -> str:
    return json.dumps(arguments, ensure_ascii=False, sort_keys=True, default=str)
