"""Models to Neo4j properties and back, and the checks made at the query boundary.

Neo4j properties cannot hold maps, so a Request's Usage is flattened into `prompt_tokens`,
`completion_tokens` and `calls`. Timestamps are stored as native Neo4j datetimes (sortable,
readable in Browser) and must be timezone-aware; `to_props` hands them over as ISO 8601 text,
which the writing query converts with `datetime()`; they come back as equal Python datetimes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from typing import Any, TypeVar

import neo4j.time
from pydantic import BaseModel, ValidationError

from flowstate.errors import StoreError, ValidationFailed
from flowstate.models import ActionDecision, Observation, Request, StateNode, Usage, ids
from flowstate.models.ids import check_namespace as check_namespace  # the store checks it too

M = TypeVar("M", bound=BaseModel)
Record = Request | StateNode | Observation | ActionDecision
_USAGE_FIELDS = tuple(Usage.model_fields)
_SHOWN_CHARS = 60


def shown(text: object) -> str:
    """A caller's string, quoted and cut short, safe to put in an error message."""
    if not isinstance(text, str):
        return repr(text)[:_SHOWN_CHARS]
    cut = text[:_SHOWN_CHARS]
    return repr(cut) + ("..." if len(text) > len(cut) else "")


def describe(error: ValidationError) -> str:
    """A pydantic error in one line: `field: problem; field: problem`."""
    parts = []
    for item in error.errors(include_url=False, include_input=False):
        message = item["msg"].removeprefix("Value error, ")
        where = ".".join(str(p) for p in item["loc"])
        parts.append(f"{where}: {message}" if where else message)
    return "; ".join(parts)


def revalidate(model: M) -> M:
    """Validate a model again, so one built with `model_construct` cannot slip past the checks."""
    try:
        return type(model).model_validate(model.model_dump())
    except ValidationError as e:
        raise ValidationFailed(f"invalid {type(model).__name__}: {describe(e)}") from e


def _strict(test: Callable[[str], bool]) -> Callable[[str], bool]:
    # ids.is_* use re.match, whose `$` also matches before a trailing newline: refuse those here.
    return lambda value: "\n" not in value and test(value)


_KINDS = {
    "request": (_strict(ids.is_request_id), "r12"),
    "state": (_strict(ids.is_state_id), "r12.hotel_budget"),
    "observation": (_strict(ids.is_observation_id), "r12.o3"),
    "decision": (_strict(ids.is_decision_id), "r12.a1"),
}


def check_id(kind: str, value: object) -> str:
    """Raise ValidationFailed unless `value` is a well-formed id of that kind."""
    test, example = _KINDS[kind]
    if not isinstance(value, str) or not test(value):
        raise ValidationFailed(f"invalid {kind} id {shown(value)}: it must look like {example}")
    return value


def kind_of(value: object) -> str:
    """The kind of a well-formed id (`request`, `state`, `observation`, `decision`)."""
    for kind, (test, _) in _KINDS.items():
        if isinstance(value, str) and test(value):
            return kind
    raise ValidationFailed(
        f"invalid id {shown(value)}: expected a request (r12), state (r12.hotel_budget), "
        "observation (r12.o3) or decision (r12.a1) id"
    )


def unique(values: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(values))


def to_props(model: Record) -> dict[str, Any]:
    """The node properties of a record, namespace excluded (queries set it from $namespace)."""
    # Timestamps travel as ISO 8601 text that the commit's Cypher turns into datetimes: the
    # driver's packing of Python datetimes was the largest client-side cost of a commit.
    props = model.model_dump(mode="json", exclude={"namespace"})
    for name, value in model:
        if isinstance(value, datetime):
            offset = value.utcoffset()
            if offset is None:
                raise ValidationFailed(f"{model.id}: {name} must be timezone-aware")
            # ISO 8601 text and Neo4j's datetime() keep offsets to the minute: an offset with
            # seconds (old local mean times) is sent as the same instant in UTC.
            props[name] = (value.astimezone(UTC) if offset.seconds % 60 else value).isoformat()
        elif isinstance(value, str):
            check_text(model.id, name, value)
    if isinstance(model, Request):
        props.update(props.pop("usage"))
    return props


def check_text(owner: str, name: str, value: str) -> None:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as e:
        raise ValidationFailed(
            f"{owner}: {name} is not valid Unicode text (lone surrogate at {e.start})"
        ) from e


def from_props(cls: type[M], props: dict[str, Any]) -> M:
    """Rebuild a record from node properties; a stored record that fails is a store fault."""
    data = {k: v.to_native() if isinstance(v, neo4j.time.DateTime) else v for k, v in props.items()}
    if cls is Request:
        data["usage"] = {f: data.pop(f, 0) for f in _USAGE_FIELDS}
        data.pop("commit_seq", None)  # the store's bookkeeping (which commit it was), not data
    elif cls is StateNode:
        data.pop("namespace_term", None)  # the search index's copy of the namespace, not data
    try:
        return cls.model_validate(data)
    except ValidationError as e:
        name = f"{cls.__name__} {data.get('id')!r}"
        raise StoreError(f"stored {name} is malformed: {describe(e)}") from e
