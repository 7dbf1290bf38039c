"""What the repository shows back: the Historical State Index, revealed states, provenance."""

from __future__ import annotations

from enum import StrEnum
from typing import NamedTuple

from pydantic import BaseModel, ConfigDict

from flowstate.models.records import Observation, Request, StateNode
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
    # Set when `states` was not loaded (an old request that the index shows collapsed anyway).
    state_count: int | None = None

    @property
    def loaded(self) -> bool:
        return self.state_count is None

    @property
    def n_states(self) -> int:
        return len(self.states) if self.state_count is None else self.state_count


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


class Edge(NamedTuple):
    """One edge of a provenance graph, as a triple: `("r3.plan", "DERIVED_FROM", "r2.budget")`.

    `type` is a RelationType value, `EVIDENCED_BY` (state -> observation) or `PRODUCED`
    (request -> state or observation).
    """

    source: str
    type: str
    target: str


class Provenance(_View):
    """Where a state came from: the states it rests on, their evidence, and their requests.

    `states` starts with the state asked about, then the others by distance; `edges` are
    every relation, evidence and PRODUCED edge between the records listed.
    """

    state_id: str
    states: list[StateNode]
    observations: list[Observation]
    requests: list[Request]
    edges: list[Edge]
