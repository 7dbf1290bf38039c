"""What the repository shows back: the Historical State Index, revealed states, provenance."""

from __future__ import annotations

from enum import StrEnum
from typing import Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, Field, field_validator

from flowstate.models.records import ActionDecision, Observation, Request, StateNode
from flowstate.models.vocab import Category

_OUTPUT_CHARS = 160  # of an observation's output, in a provenance tree


class _View(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


# How a state was removed, when only its id is kept: forgotten, expired, or (a copy in a running
# request's state that learnt only that it is gone) removed.
RemovedHow = Literal["forgotten", "expired", "removed"]


# A content this short is shown on its state's index line: opening it would cost a call to read
# fewer tokens than the call's own fixed price (a formal result, a booking reference).
INLINE_CONTENT_CHARS = 48


class IndexState(_View):
    """One line of the index: id, category, summary and, when it is short, the content."""

    id: str
    category: Category
    summary: str
    content: str | None = None  # set only when at most INLINE_CONTENT_CHARS
    superseded_by: str | None = None
    # How `superseded_by` was removed since (it stays superseded: stale, not current again).
    superseder_removed: RemovedHow | None = None

    @field_validator("content")
    @classmethod
    def _one_line(cls, content: str | None) -> str | None:
        # A line break or control character would let a content forge lines of the index.
        return content if content is None or content.isprintable() else None


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
    """A revealed relation: its type and the other end's id only, never its content.
    `removed` says the other end was forgotten or expired since (only the id of a removed
    superseder is kept)."""

    type: str
    direction: Direction
    other: str
    removed: RemovedHow | None = None


class RevealedState(_View):
    """A past state opened on demand: full content plus its relations, closed at the far end."""

    state: StateNode
    relations: list[RelationView]

    @property
    def superseded_by(self) -> list[str]:
        """The states that supersede it, removed ones included: it is stale if any."""
        return [r.other for r in self.relations if r.type == "SUPERSEDES" and r.direction == "in"]

    @property
    def superseded_mark(self) -> str:
        """`  (SUPERSEDED by r5.budget)`, `  (SUPERSEDED by r3.budget, forgotten)`, or ''."""
        newer = [
            f"{r.other}, {r.removed}" if r.removed else r.other
            for r in self.relations
            if r.type == "SUPERSEDES" and r.direction == "in"
        ]
        return f"  (SUPERSEDED by {'; '.join(newer)})" if newer else ""


class RequestRecord(_View):
    """A committed request and the lines of the states it made (`FlowState.get("r3")`)."""

    request: Request
    states: list[IndexState]


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
    # Validity: each listed state a newer one supersedes (from anywhere in the namespace), with
    # the ids of those newer states.
    superseded: dict[str, list[str]] = Field(default_factory=dict)
    # States named in `edges` or `superseded` that were forgotten or expired since, and how:
    # only their ids are kept.
    removed: dict[str, RemovedHow] = Field(default_factory=dict)

    def tree(self) -> str:
        """The chain as `flowstate why` prints it: the state, its relations and evidence as an
        indented tree (superseded states marked), then the requests."""
        states = {s.id: s for s in self.states}
        observations = {o.id: o for o in self.observations}
        out_edges: dict[str, list[tuple[str, str]]] = {}
        for e in self.edges:
            if e.type != "PRODUCED":
                out_edges.setdefault(e.source, []).append((e.type, e.target))
        lines: list[str] = []
        shown = {self.state_id}

        def label(node: str) -> str:
            if node in self.removed:
                return f"{node} ({self.removed[node]})"
            if node in states:
                s = states[node]
                newer = [
                    f"{n}, {self.removed[n]}" if n in self.removed else n
                    for n in self.superseded.get(node, [])
                ]
                mark = f"  (SUPERSEDED by {'; '.join(newer)})" if newer else ""
                return f"{s.id} [{s.category.value}] {s.summary}{mark}"
            o = observations[node]
            cut = len(o.output) > _OUTPUT_CHARS
            output = o.output[:_OUTPUT_CHARS] + "..." if cut else o.output
            return f"{o.id} {o.tool}({o.arguments}) -> {output}"

        def walk(node: str, prefix: str) -> None:
            children = sorted(out_edges.get(node, []))
            for i, (kind, target) in enumerate(children):
                last = i == len(children) - 1
                seen = target in shown
                lines.append(
                    f"{prefix}{'└─' if last else '├─'} {kind} {label(target)}"
                    + ("  (see above)" if seen else "")
                )
                if not seen:
                    shown.add(target)
                    walk(target, prefix + ("   " if last else "│  "))

        lines.append(label(self.state_id))
        walk(self.state_id, "")
        lines.append("\nRequests:")
        lines += [
            f"  {r.id} {r.finished_at:%Y-%m-%d %H:%M} {r.summary}: {r.text[:100]}"
            for r in self.requests
        ]
        return "\n".join(lines)


# What `FlowState.get(id)` returns, by the id's kind.
RecordView = RevealedState | RequestRecord | Observation | ActionDecision
