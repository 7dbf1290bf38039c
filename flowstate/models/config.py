"""Configuration objects that refuse bad values as a `UsageError` naming the field and its
bounds, the way `EnvSettings` names a bad variable, instead of a pydantic dump:

    AgentConfig(hold_seconds=3)
    # UsageError: AgentConfig: hold_seconds must be a whole number from 5 to 86400, not 3
"""

from __future__ import annotations

from typing import Any

from annotated_types import Ge, Le
from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from flowstate.errors import UsageError


class CheckedConfig(BaseModel):
    """A pydantic model whose constructor raises `UsageError` for invalid values."""

    def __init__(self, **values: Any) -> None:
        try:
            super().__init__(**values)
        except ValidationError as e:
            problems = "; ".join(_problem(type(self), error) for error in e.errors())
            raise UsageError(f"{type(self).__name__}: {problems}") from None


def _problem(model: type[BaseModel], error: ErrorDetails) -> str:
    *path, name = [str(part) for part in error["loc"]] or ["?"]
    owner = _nested(model, path)
    where = ".".join([*path, name])
    given = repr(error.get("input"))[:80]
    if error["type"] == "extra_forbidden":
        known = ", ".join(owner.model_fields) if owner else ""
        return f"no field {name!r}" + (f" (the fields are {known})" if known else "")
    field = owner.model_fields.get(name) if owner else None
    bounds = _bounds(field.metadata) if field is not None else ""
    if bounds and field is not None and field.annotation is int:
        return f"{where} must be a whole number {bounds}, not {given}"
    return f"{where}: {error['msg'].removeprefix('Input ').lower()}, not {given}"


def _nested(model: type[BaseModel], path: list[str]) -> type[BaseModel] | None:
    """The model that holds the field at `path` (a nested config such as `limits`)."""
    for part in path:
        field = model.model_fields.get(part)
        inner = field.annotation if field is not None else None
        if not (isinstance(inner, type) and issubclass(inner, BaseModel)):
            return None
        model = inner
    return model


def _bounds(metadata: list[Any]) -> str:
    low = next((m.ge for m in metadata if isinstance(m, Ge)), None)
    high = next((m.le for m in metadata if isinstance(m, Le)), None)
    if low is not None and high is not None:
        return f"from {low} to {high}"
    if low is not None:
        return f"of at least {low}"
    if high is not None:
        return f"of at most {high}"
    return ""
