"""A namespace as JSON Lines, and back. Pure: no database here.

One record per line, each with a `kind`: `request`, `state`, `observation`, `relation`,
`evidence`, `decision`. Records carry no namespace (the importing repository supplies it), so
an export re-imports into any empty namespace. Lines are ASCII (`\\uXXXX` escapes), so no
exotic line separator inside a text can split a record.

    {"kind":"request","id":"r1","seq":1,"text":"Book a hotel",...}
    {"kind":"state","id":"r1.budget","request_id":"r1","key":"budget","category":"constraint",...}
    {"kind":"relation","type":"DEPENDS_ON","source":"r2.hotel","target":"r1.budget"}
    {"kind":"decision","id":"r2.a1","request_id":"r2","tool":"book","cites":["r1.budget"],...}
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from pydantic import BaseModel, ValidationError

from flowstate.errors import ValidationFailed
from flowstate.models import (
    ActionDecision,
    Evidence,
    Observation,
    Relation,
    Request,
    RequestBundle,
    StateNode,
    ids,
)
from flowstate.store.codec import describe, shown, to_props

_RECORDS: dict[str, type[BaseModel]] = {
    "request": Request,
    "state": StateNode,
    "observation": Observation,
    "relation": Relation,
    "evidence": Evidence,
    "decision": ActionDecision,
}
_NAMESPACED = {"request", "state", "observation", "decision"}
_PARTS = ("state", "observation", "relation", "evidence", "decision")


def bundle_lines(bundles: Iterable[RequestBundle]) -> Iterator[str]:
    """JSON Lines for a namespace's bundles, each line ending in a newline."""
    for bundle in bundles:
        yield _line("request", bundle.request)
        for kind, items in (
            ("state", bundle.states),
            ("observation", bundle.observations),
            ("relation", bundle.relations),
            ("evidence", bundle.evidence),
            ("decision", bundle.decisions),
        ):
            for item in items:
                yield _line(kind, item)


def _line(kind: str, model: BaseModel) -> str:
    data = {"kind": kind, **model.model_dump(mode="json", exclude={"namespace"})}
    return json.dumps(data, ensure_ascii=True, separators=(",", ":")) + "\n"


@dataclass
class _Pending:
    line: int
    request: Request
    parts: dict[str, list[BaseModel]] = field(default_factory=lambda: {k: [] for k in _PARTS})


def parse_lines(lines: Iterable[str], namespace: str) -> list[RequestBundle]:
    """Validate every line and group them into bundles in an order they can be written in
    (see `_commit_order`); nothing is written.

    Raises ValidationFailed naming the first bad line. Blank lines are skipped.
    """
    requests: dict[str, _Pending] = {}
    seen: dict[str, int] = {}  # record id -> line number
    parts: list[tuple[int, str, BaseModel]] = []
    for number, text in enumerate(lines, start=1):
        if not text.strip():
            continue
        kind, model = _parse_line(number, text, namespace)
        key = getattr(model, "id", None)
        if key is not None:
            if key in seen:
                raise ValidationFailed(f"line {number}: {key} is already on line {seen[key]}")
            seen[key] = number
        if isinstance(model, Request):
            requests[model.id] = _Pending(number, model)
        else:
            parts.append((number, kind, model))
    for number, kind, model in parts:
        owner = _owner(model)
        if owner not in requests:
            raise ValidationFailed(f"line {number}: {kind} of request {owner}, not in the file")
        requests[owner].parts[kind].append(model)
    states = {m.id for _, _, m in parts if isinstance(m, StateNode)}
    _check_targets(parts, states)
    return [_bundle(requests[rid]) for rid in _commit_order(requests, parts)]


def _commit_order(
    requests: dict[str, _Pending], parts: list[tuple[int, str, BaseModel]]
) -> list[str]:
    """Requests in seq order, except that one relating to (or citing) a state of another
    comes after it: requests that ran at once may commit out of seq order. A cycle cannot come
    from a real history (a relation points at committed states only) and is refused."""
    needs: dict[str, set[str]] = {rid: set() for rid in requests}
    for _, _, model in parts:
        if isinstance(model, Relation):
            targets = [model.target]
        elif isinstance(model, ActionDecision):
            targets = list(model.cites)
        else:
            continue
        owner = _owner(model)
        needs[owner] |= {ids.request_of(t) for t in targets} - {owner}
    order: list[str] = []
    placed: set[str] = set()
    waiting = sorted(requests, key=lambda rid: requests[rid].request.seq)
    while waiting:
        ready = next((rid for rid in waiting if needs[rid] <= placed), None)
        if ready is None:
            line = requests[waiting[0]].line
            raise ValidationFailed(
                f"line {line}: requests {', '.join(waiting)} relate to each other in a cycle"
            )
        waiting.remove(ready)
        order.append(ready)
        placed.add(ready)
    return order


_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


def _parse_line(number: int, text: str, namespace: str) -> tuple[str, BaseModel]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise ValidationFailed(f"line {number}: not JSON ({e.msg} at column {e.colno})") from e
    except RecursionError as e:
        raise ValidationFailed(f"line {number}: nested too deeply to be a FlowState record") from e
    if not isinstance(data, dict):
        raise ValidationFailed(f"line {number}: expected a JSON object")
    for name, value in data.items():
        # Neo4j stores 64-bit integers; a larger one would fail deep in the driver.
        if isinstance(value, int) and not _INT64_MIN <= value <= _INT64_MAX:
            raise ValidationFailed(
                f"line {number}: {shown(name)} = {str(value)[:40]} is beyond Neo4j's 64-bit "
                "integers"
            )
    kind = data.pop("kind", None)
    if kind not in _RECORDS:
        raise ValidationFailed(
            f"line {number}: kind {shown(kind)} is not one of {', '.join(_RECORDS)}"
        )
    if "namespace" in data:
        raise ValidationFailed(
            f"line {number}: records must not carry a namespace; the importing one is used"
        )
    if kind in _NAMESPACED:
        data["namespace"] = namespace
    try:
        model = _RECORDS[kind].model_validate(data)
    except ValidationError as e:
        raise ValidationFailed(f"line {number}: invalid {kind}: {describe(e)}") from e
    if kind in _NAMESPACED:
        try:
            to_props(model)  # type: ignore[arg-type]  # a namespaced kind: the store's own checks (aware timestamps, encodable text)
        except ValidationFailed as e:
            raise ValidationFailed(f"line {number}: {e}") from e
    return kind, model


def _owner(model: BaseModel) -> str:
    if isinstance(model, StateNode | Observation | ActionDecision):
        return model.request_id
    if isinstance(model, Relation):
        return ids.request_of(model.source)
    assert isinstance(model, Evidence)
    return ids.request_of(model.state)


def _check_targets(parts: list[tuple[int, str, BaseModel]], states: set[str]) -> None:
    # The namespace is empty, so a relation or a decision's citation can only point at a state
    # of the file itself (written first: see `_commit_order`).
    for number, _, model in parts:
        if isinstance(model, Relation):
            subjects = [(model.target, f"relation target {model.target}")]
        elif isinstance(model, ActionDecision):
            subjects = [(c, f"state {c} cited by {model.id}") for c in model.cites]
        else:
            continue
        for target, subject in subjects:
            if target not in states:
                raise ValidationFailed(f"line {number}: {subject} is not a state in the file")


def _bundle(pending: _Pending) -> RequestBundle:
    p = pending.parts
    try:
        return RequestBundle(
            request=pending.request,
            states=p["state"],
            observations=p["observation"],
            relations=p["relation"],
            evidence=p["evidence"],
            decisions=p["decision"],
        )
    except ValidationError as e:
        raise ValidationFailed(
            f"request {pending.request.id} (line {pending.line}) is inconsistent: {describe(e)}"
        ) from e
