"""The small fixed world fuzzed model replies act in: three past requests and a few tools.

The same past requests are committed to Neo4j for full runs and served from memory for the
fast path, so an id that is visible in one is visible in the other. The index budget is
small enough that r1 shows collapsed (accessing `r1` lists its states).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from functools import cache

from flowstate.engine.index import HistoricalIndex, RenderedIndex
from flowstate.engine.tools import Tool
from flowstate.models import (
    Category,
    Evidence,
    IndexRequest,
    IndexState,
    Observation,
    Outcome,
    Relation,
    RelationType,
    Request,
    RequestBundle,
    RevealedState,
    StateNode,
)
from flowstate.models.views import Direction, RelationView

T0 = datetime(2025, 6, 1, 8, 0, tzinfo=UTC)
INDEX_BUDGET = 80  # tokens: r1 collapses, r2 and r3 are listed
REQUEST_ID = "r4"  # the request every fuzz case runs as

_PAST = {  # request -> [(key, category, summary)]
    "r1": [("city", Category.CONSTRAINT, "Trip is to Lisbon"),
           ("budget", Category.CONSTRAINT, "Budget 900 EUR")],
    "r2": [("hotel", Category.DECISION, "Casa Azul, 120 EUR a night"),
           ("dates", Category.PREFERENCE, "Prefers early June")],
    "r3": [("plan", Category.ARTIFACT, "Three-day plan")],
}  # fmt: skip
_RELATIONS = [
    (RelationType.DEPENDS_ON, "r2.hotel", "r1.budget"),
    (RelationType.DERIVED_FROM, "r3.plan", "r2.hotel"),
    (RelationType.REFINES, "r3.plan", "r1.city"),
]
_EVIDENCE = [("r2.hotel", "r2.o1")]

PAST_STATE_IDS = tuple(f"{r}.{k}" for r, states in _PAST.items() for k, _, _ in states)
PAST_OBSERVATION_IDS = ("r2.o1",)


# Past contents are longer than an index line shows (INLINE_CONTENT_CHARS): the world's
# predictions open them by reveal.
LONG = ", with all the detail a later request may need"


def past_bundles(namespace: str) -> list[RequestBundle]:
    """r1..r3 as committed requests of `namespace`."""
    out = []
    for seq, (rid, specs) in enumerate(_PAST.items(), start=1):
        at = T0 + timedelta(hours=seq)
        states = [
            StateNode(namespace=namespace, id=f"{rid}.{key}", request_id=rid, key=key,
                      category=cat, summary=summary, content=f"{summary}. Noted in {rid}{LONG}.",
                      created_at=at + timedelta(seconds=i), updated_at=at + timedelta(seconds=i))
            for i, (key, cat, summary) in enumerate(specs)
        ]  # fmt: skip
        observations = [
            Observation(namespace=namespace, id=o, request_id=rid, step=1, tool="search_hotels",
                        arguments='{"city": "Lisbon"}', output="Casa Azul 120", created_at=at)
            for o in PAST_OBSERVATION_IDS
            if o.startswith(f"{rid}.")
        ]  # fmt: skip
        out.append(
            RequestBundle(
                request=Request(namespace=namespace, id=rid, seq=seq, text=f"request {seq}",
                                summary=f"Past request {seq}", outcome=Outcome.ANSWERED,
                                started_at=at, finished_at=at + timedelta(minutes=1)),
                states=states,
                relations=[Relation(type=t, source=s, target=o) for t, s, o in _RELATIONS
                           if s.startswith(f"{rid}.")],
                observations=observations,
                evidence=[Evidence(state=s, observation=o) for s, o in _EVIDENCE
                          if s.startswith(f"{rid}.")],
            )
        )  # fmt: skip
    return out


@cache
def rendered_index() -> RenderedIndex:
    return HistoricalIndex(_index("fuzz"), INDEX_BUDGET).render()


def _index(namespace: str) -> list[IndexRequest]:
    return [
        IndexRequest(
            id=b.request.id,
            seq=b.request.seq,
            summary=b.request.summary,
            states=[IndexState(id=s.id, category=s.category, summary=s.summary) for s in b.states],
        )
        for b in past_bundles(namespace)
    ]


@cache
def revealed(namespace: str) -> dict[str, RevealedState]:
    """What `Repository.reveal` returns for each past state: content plus relation ends."""
    bundles = past_bundles(namespace)
    edges = [(r.type.value, r.source, r.target) for b in bundles for r in b.relations]
    edges += [("EVIDENCED_BY", e.state, e.observation) for b in bundles for e in b.evidence]
    out = {}
    for state in (s for b in bundles for s in b.states):
        views = [
            RelationView(type=t, direction=Direction.OUT, other=o)
            for t, s, o in edges
            if s == state.id
        ]
        views += [RelationView(type=t, direction=Direction.IN, other=s)
                  for t, s, o in edges if o == state.id]  # fmt: skip
        out[state.id] = RevealedState(state=state, relations=sorted(views, key=_order))
    return out


def _order(v: RelationView) -> tuple:
    return (v.type, v.direction, v.other)


def observation(namespace: str, oid: str) -> Observation:
    return next(o for b in past_bundles(namespace) for o in b.observations if o.id == oid)


def opened_request(namespace: str, rid: str) -> list[IndexState]:
    return next(r.states for r in _index(namespace) if r.id == rid)


# --- tools: one plain, one typed, one consequential ---------------------------------------


def echo(text: str) -> str:
    """Repeat the text."""
    return text


def add_numbers(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def book(item: str) -> str:
    """Book an item (consequential: cite the states it rests on)."""
    return f"booked {item}"


def tools() -> list[Tool]:
    return [
        Tool.from_function(echo),
        Tool.from_function(add_numbers),
        Tool.from_function(book, consequential=True),
    ]


TOOL_NAMES = ("echo", "add_numbers", "book")
