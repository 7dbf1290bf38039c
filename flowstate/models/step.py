"""The structured output of one model step: a state delta, past states to access, an action.

Its JSON schema is what the model is asked to follow.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from flowstate.models.vocab import Category, RelationType

# Bounds of a tool call's arguments: they are kept in the draft, in observations and decisions,
# and shown in every later prompt, so they must stay small and shallow enough to serialise.
MAX_ARGUMENT_DEPTH = 32  # the arguments object itself is level 1
MAX_ARGUMENT_CHARS = 50_000  # as compact JSON; room for a 20,000-character text and more


class _Step(BaseModel):
    # Unknown fields are refused so that a typo in the model's output is reported, not ignored.
    model_config = ConfigDict(extra="forbid")


class RelationSpec(_Step):
    type: RelationType
    target: str = Field(description="id of a visible state, or key of a state of this request")


class AddOp(_Step):
    op: Literal["add"]
    key: str = Field(description="new snake_case name, unique in this request, e.g. hotel_budget")
    category: Category
    summary: str = Field(description="one line shown in the index")
    content: str = Field(description="full detail, opened only when accessed")
    relations: list[RelationSpec] = []
    evidence: list[str] = Field(default=[], description="ids of this request's observations")


class UpdateOp(_Step):
    op: Literal["update"]
    key: str = Field(description="key of a state created in THIS request")
    summary: str | None = None
    content: str | None = None


class RemoveOp(_Step):
    op: Literal["remove"]
    key: str = Field(description="key of a state created in THIS request")


DeltaOp = Annotated[AddOp | UpdateOp | RemoveOp, Field(discriminator="op")]


class ToolCall(_Step):
    type: Literal["tool"]
    name: str
    arguments: dict[str, Any] = {}
    cites: list[str] = Field(default=[], description="ids of states this call relies on")

    @field_validator("arguments")
    @classmethod
    def _bounded(cls, value: dict[str, Any]) -> dict[str, Any]:
        depth = nesting_depth(value, MAX_ARGUMENT_DEPTH)
        if depth > MAX_ARGUMENT_DEPTH:
            raise ValueError(
                f"nested more than {MAX_ARGUMENT_DEPTH} levels deep; at most {MAX_ARGUMENT_DEPTH}"
            )
        size = len(json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str))
        if size > MAX_ARGUMENT_CHARS:
            raise ValueError(f"{size:,} characters as JSON; at most {MAX_ARGUMENT_CHARS:,}")
        return value


class FinalAnswer(_Step):
    type: Literal["final"]
    answer: str
    summary: str = Field("", description="one line describing this request for the index")


Action = Annotated[ToolCall | FinalAnswer, Field(discriminator="type")]


class StepOutput(_Step):
    """What the model returns at every step. An empty action defers to the next step."""

    delta: list[DeltaOp] = []
    access: list[str] = Field(default=[], description="ids of past states or requests to reveal")
    action: Action | None = None


def nesting_depth(value: Any, limit: int) -> int:
    """Levels of dicts and lists in `value` (a scalar is 0); stops counting past `limit`."""
    deepest, level = 0, [value]
    while level and deepest <= limit:
        children = [
            c
            for v in level
            if isinstance(v, dict | list | tuple)
            for c in (v.values() if isinstance(v, dict) else v)
        ]
        if any(isinstance(v, dict | list | tuple) for v in level):
            deepest += 1
        level = children
    return deepest
