"""Incremental State Update: the rules a state delta must pass, and applying it.

A delta is atomic: `check_delta` lists every violation; only an empty list lets `apply_delta`
run. Both are pure functions of the delta and what the model can see.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from flowstate.models import ids
from flowstate.models.records import Evidence, Relation, StateNode, is_one_line, is_unicode
from flowstate.models.step import AddOp, RemoveOp, UpdateOp
from flowstate.models.vocab import RelationType
from flowstate.models.wording import counted
from flowstate.rules.limits import Limits
from flowstate.rules.violations import Violation
from flowstate.rules.visibility import Visibility

Op = AddOp | UpdateOp | RemoveOp


def check_delta(
    delta: Sequence[Op], vis: Visibility, limits: Limits, existing: Mapping[str, StateNode]
) -> list[Violation]:
    """Every reason the delta cannot be applied; empty when it can."""
    if len(delta) > limits.max_ops_per_step:
        return [
            Violation(
                "delta",
                "too_many_ops",
                f"{len(delta)} operations; at most {limits.max_ops_per_step} per step",
            )
        ]
    violations: list[Violation] = []
    keys = set(existing)  # live keys as the ops run in order
    for i, op in enumerate(delta):
        where = f"delta[{i}] {op.op} {op.key}"
        if isinstance(op, AddOp):
            violations += _check_add(op, where, keys, limits)
            keys.add(op.key)
        else:
            problem = _check_target_key(op, keys, vis)
            if problem:
                violations.append(Violation(where, *problem))
                continue
            if isinstance(op, UpdateOp):
                violations += _check_update(op, where, limits)
            else:
                keys.discard(_local_key(op.key))
    # Relations may point at states added anywhere in the same delta: check them at the end.
    superseding: dict[str, str] = {}  # past state -> the key of this delta that supersedes it
    for i, op in enumerate(delta):
        if isinstance(op, AddOp):
            violations += _check_links(op, f"delta[{i}] add {op.key}", keys, vis, superseding)
    if len(keys) > limits.max_states_per_request:
        violations.append(
            Violation(
                "delta",
                "too_many_states",
                f"this request would hold {counted(len(keys), 'state')}; "
                f"at most {limits.max_states_per_request}",
            )
        )
    return violations


def _check_add(op: AddOp, where: str, keys: set[str], limits: Limits) -> list[Violation]:
    out: list[Violation] = []
    if not ids.is_key(op.key):
        out.append(
            Violation(
                where,
                "bad_key",
                "key must be snake_case: a lowercase letter, then lowercase letters, digits or _ "
                "(at most 64; o<digits> and a<digits> are reserved for observations and actions)",
            )
        )
    elif op.key in keys:
        out.append(
            Violation(
                where,
                "key_taken",
                f"key {op.key!r} already exists in this request; update it, or pick a new key",
            )
        )
    out += _check_text(op.summary, op.content, where, limits, required=True)
    if len(op.relations) > limits.max_relations_per_state:
        out.append(
            Violation(
                where,
                "too_many_relations",
                f"{len(op.relations)} relations; at most {limits.max_relations_per_state}",
            )
        )
    return out


def _check_update(op: UpdateOp, where: str, limits: Limits) -> list[Violation]:
    if op.summary is None and op.content is None:
        return [Violation(where, "empty_update", "give a new summary, a new content, or both")]
    return _check_text(op.summary, op.content, where, limits, required=False)


def _check_text(
    summary: str | None, content: str | None, where: str, limits: Limits, *, required: bool
) -> list[Violation]:
    out: list[Violation] = []
    if summary is not None or required:
        text = summary or ""
        if not text.strip():
            out.append(Violation(where, "empty_summary", "summary must not be empty"))
        elif not is_one_line(text):
            out.append(Violation(where, "multiline_summary", "summary must be one line"))
        elif len(text) > limits.max_summary_chars:
            out.append(
                Violation(
                    where,
                    "summary_too_long",
                    f"summary has {len(text)} characters; at most {limits.max_summary_chars}",
                )
            )
    if content is not None or required:
        text = content or ""
        if not text.strip():
            out.append(Violation(where, "empty_content", "content must not be empty"))
        elif len(text) > limits.max_content_chars:
            out.append(
                Violation(
                    where,
                    "content_too_long",
                    f"content has {len(text)} characters; at most {limits.max_content_chars}",
                )
            )
    joined = (summary or "") + (content or "")
    if "\x00" in joined:
        out.append(Violation(where, "nul_character", "text must not contain NUL characters"))
    if not is_unicode(joined):
        # json.loads lets a lone "\ud800" through; StateNode and the driver would then fail.
        out.append(Violation(where, "invalid_unicode", "text must not contain lone surrogates"))
    return out


def _check_target_key(
    op: UpdateOp | RemoveOp, keys: set[str], vis: Visibility
) -> tuple[str, str] | None:
    key = op.key
    if ids.is_state_id(key) and ids.request_of(key) != vis.request_id:
        return (
            "past_state_immutable",
            f"{key} belongs to past request {ids.request_of(key)}; past states are never "
            "changed. Add a new state with a SUPERSEDES relation to it instead",
        )
    key = _local_key(key)
    if key not in keys:
        return ("unknown_key", f"no state {key!r} in this request")
    return None


def _local_key(key: str) -> str:
    """An own state named by key or by full id (`r5.hotel`), as its key."""
    return key.split(".", 1)[1] if ids.is_state_id(key) else key


def _check_links(
    op: AddOp, where: str, keys: set[str], vis: Visibility, superseding: dict[str, str]
) -> list[Violation]:
    out: list[Violation] = []
    for rel in op.relations:
        target = _resolve_target(rel.target, vis)
        if target == vis.own_id(op.key):
            out.append(Violation(where, "self_relation", "a state cannot relate to itself"))
        elif target is None:
            out.append(
                Violation(
                    where,
                    "unknown_target",
                    f"relation target {rel.target!r} is not visible: use a key of this request, "
                    "or the id of a state shown in the index or revealed",
                )
            )
        elif ids.request_of(target) == vis.request_id and target.split(".", 1)[1] not in keys:
            out.append(
                Violation(
                    where,
                    "unknown_target",
                    f"relation target {rel.target!r} is not a state of this request",
                )
            )
        elif rel.type is RelationType.SUPERSEDES and ids.request_of(target) == vis.request_id:
            out.append(
                Violation(
                    where,
                    "supersede_own",
                    "SUPERSEDES is for past states; change a state of this request with update",
                )
            )
        elif rel.type is RelationType.SUPERSEDES and _live_superseder(target, keys, vis):
            newer = vis.superseded[target]
            instead = (
                f"update {newer} instead"
                if ids.request_of(newer) == vis.request_id
                else "supersede the newer state instead"
            )
            out.append(
                Violation(
                    where,
                    "supersede_stale",
                    f"{target} is already superseded by {newer}: a state is superseded once; "
                    + instead,
                )
            )
        elif rel.type is RelationType.SUPERSEDES and superseding.get(target, op.key) != op.key:
            out.append(
                Violation(
                    where,
                    "supersede_twice",
                    f"{target} is superseded by {superseding[target]} in this delta too: a "
                    "state is superseded once; put the change in one state",
                )
            )
        elif rel.type is RelationType.SUPERSEDES:
            superseding[target] = op.key
    for obs in op.evidence:
        if obs not in vis.observations:
            out.append(
                Violation(
                    where,
                    "unknown_evidence",
                    f"evidence {obs!r} is not an observation of this request",
                )
            )
    return out


def _live_superseder(target: str, keys: set[str], vis: Visibility) -> bool:
    """Whether `target` is superseded by a committed state, or by one of this request's
    that the delta leaves alive."""
    newer = vis.superseded.get(target)
    if newer is None:
        return False
    return ids.request_of(newer) != vis.request_id or _local_key(newer) in keys


def _resolve_target(target: str, vis: Visibility) -> str | None:
    """A relation target as a full state id, or None when the model cannot see it."""
    if ids.is_key(target):
        return vis.own_id(target)
    if not ids.is_state_id(target):
        return None
    if ids.request_of(target) == vis.request_id:
        return target
    return target if target in vis.past_states else None


@dataclass(frozen=True)
class Applied:
    states: dict[str, StateNode]
    relations: list[Relation]
    evidence: list[Evidence]


def apply_delta(
    delta: Sequence[Op],
    vis: Visibility,
    namespace: str,
    states: Mapping[str, StateNode],
    relations: Sequence[Relation],
    evidence: Sequence[Evidence],
    now: datetime,
) -> Applied:
    """The request's states after a delta that passed `check_delta`.

    Removing a state drops the relations and evidence that start or end at it.
    """
    new_states = dict(states)
    new_rel = list(relations)
    new_ev = list(evidence)
    for op in delta:
        key = _local_key(op.key)
        sid = vis.own_id(key)
        if isinstance(op, AddOp):
            new_states[key] = StateNode(
                namespace=namespace,
                id=sid,
                request_id=vis.request_id,
                key=key,
                category=op.category,
                summary=op.summary.strip(),
                content=op.content,
                created_at=now,
                updated_at=now,
            )
            new_rel += [
                Relation(type=r.type, source=sid, target=_resolve_target(r.target, vis) or "")
                for r in op.relations
            ]
            new_ev += [Evidence(state=sid, observation=o) for o in dict.fromkeys(op.evidence)]
        elif isinstance(op, UpdateOp):
            old = new_states[key]
            changes: dict[str, object] = {"updated_at": now}
            if op.summary is not None:
                changes["summary"] = op.summary.strip()
            if op.content is not None:
                changes["content"] = op.content
            new_states[key] = old.model_copy(update=changes)
        else:
            del new_states[key]
            new_rel = [r for r in new_rel if sid not in (r.source, r.target)]
            new_ev = [e for e in new_ev if e.state != sid]
    return Applied(new_states, list(dict.fromkeys(new_rel)), list(dict.fromkeys(new_ev)))
