"""The structured output of one model step: a state delta, past states to access, an action.

Its JSON schema is what the model is asked to follow.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from flowstate.models.vocab import Category, RelationType


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
