"""What the repository shows back: the Historical State Index and revealed states."""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict

from flowstate.models.records import StateNode
from flowstate.models.vocab import Category


class _View(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class IndexState(_View):
    """One line of the index: id, category and summary, nothing else."""

    id: str
    category: Category
    summary: str
    superseded_by: str | None = None


class IndexRequest(_View):
    """A past request in the index with the states it produced."""

    id: str
    seq: int
    summary: str
    states: list[IndexState]


class Direction(StrEnum):
    OUT = "out"  # this state -> other
    IN = "in"  # other -> this state


class RelationView(_View):
    """A revealed relation: its type and the other end's id only, never its content."""

    type: str
    direction: Direction
    other: str


class RevealedState(_View):
    """A past state opened on demand: full content plus its relations, closed at the far end."""

    state: StateNode
    relations: list[RelationView]

    @property
    def superseded_by(self) -> list[str]:
        return [r.other for r in self.relations if r.type == "SUPERSEDES" and r.direction == "in"]
