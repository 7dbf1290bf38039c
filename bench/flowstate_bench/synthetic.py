"""Synthetic, seeded request bundles for the engine suite: realistic shape, no model needed.

A bundle is what one finished request commits: by default 50 states, 150 relations (each
state points at up to two earlier states of its own request and at past states), 20 raw
observations and 20 evidence links. The same (namespace, seq, seed) always gives the same
bundle, so a namespace can be rebuilt identically.

>>> b = request_bundle("demo", 2, BundleShape(states=4, relations=6, observations=2))
>>> len(b.states), len(b.relations), len(b.observations)
(4, 6, 2)
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from flowstate.models import (
    Category,
    Evidence,
    Observation,
    Outcome,
    Relation,
    RelationType,
    Request,
    RequestBundle,
    StateNode,
    ids,
)

T0 = datetime(2025, 1, 1, tzinfo=UTC)
_CATEGORIES = list(Category)
_TYPES = [t for t in RelationType if t is not RelationType.SUPERSEDES]
_WORDS = [
    "deploy",
    "window",
    "billing",
    "api",
    "schema",
    "migration",
    "latency",
    "budget",
    "region",
    "replica",
    "cache",
    "quota",
    "owner",
    "review",
    "freeze",
    "rollback",
    "vendor",
    "contract",
    "invoice",
    "retention",
    "audit",
    "oncall",
    "incident",
    "ticket",
    "release",
    "flag",
    "canary",
    "cluster",
    "backup",
    "restore",
    "index",
    "shard",
    "token",
    "limit",
]


@dataclass(frozen=True)
class BundleShape:
    """How much one request commits."""

    states: int = 50
    relations: int = 150
    observations: int = 20
    evidence: int = 20


DEFAULT_SHAPE = BundleShape()


def state_key(k: int) -> str:
    return f"s{k:03d}"


def _phrase(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(words))


def _state(namespace: str, rid: str, k: int, at: datetime, rng: random.Random) -> StateNode:
    key = state_key(k)
    return StateNode(
        namespace=namespace,
        id=ids.state_id(rid, key),
        request_id=rid,
        key=key,
        category=_CATEGORIES[k % len(_CATEGORIES)],
        summary=f"{_phrase(rng, 6)} ({rid} #{k})",
        content=f"{_phrase(rng, 45)}. Recorded in {rid}, item {k}.",
        created_at=at + timedelta(microseconds=k),
        updated_at=at + timedelta(microseconds=k),
    )


def _targets(seq: int, k: int, shape: BundleShape, rng: random.Random) -> list[str]:
    """Own earlier states first (k-1, k-2), then random states of past requests."""
    rid = ids.request_id(seq)
    own = [ids.state_id(rid, state_key(j)) for j in (k - 1, k - 2) if j >= 0]
    per_state = -(-shape.relations // shape.states)  # ceiling
    past: list[str] = []
    if seq > 1:
        while len(own) + len(past) < per_state:
            target = ids.state_id(
                ids.request_id(rng.randint(1, seq - 1)), state_key(rng.randrange(shape.states))
            )
            if target not in past:
                past.append(target)
    return (own + past)[:per_state]


def request_bundle(
    namespace: str, seq: int, shape: BundleShape = DEFAULT_SHAPE, seed: int = 0
) -> RequestBundle:
    """The bundle of request `seq`; past-state targets assume requests 1..seq-1 have `shape`."""
    rng = random.Random(f"{seed}:{namespace}:{seq}")
    rid = ids.request_id(seq)
    at = T0 + timedelta(minutes=seq)
    states = [_state(namespace, rid, k, at, rng) for k in range(shape.states)]
    relations: list[Relation] = []
    for k, state in enumerate(states):
        for target in _targets(seq, k, shape, rng):
            if len(relations) < shape.relations:
                relations.append(Relation(type=rng.choice(_TYPES), source=state.id, target=target))
    observations = [
        Observation(
            namespace=namespace,
            id=ids.observation_id(rid, n),
            request_id=rid,
            step=n,
            tool="lookup_ticket",
            arguments=f'{{"ticket": "ATL-{seq}-{n}"}}',
            output=_phrase(rng, 80),
            created_at=at,
        )
        for n in range(1, shape.observations + 1)
    ]
    evidence = [
        Evidence(state=states[i].id, observation=observations[i % len(observations)].id)
        for i in range(min(shape.evidence, len(states)) if observations else 0)
    ]
    request = Request(
        namespace=namespace,
        id=rid,
        seq=seq,
        text=f"Synthetic request {seq}: {_phrase(rng, 20)}",
        summary=f"Synthetic request {seq}: {_phrase(rng, 5)}",
        outcome=Outcome.ANSWERED,
        answer=_phrase(rng, 20),
        steps=3,
        started_at=at,
        finished_at=at + timedelta(seconds=30),
    )
    return RequestBundle(
        request=request,
        states=states,
        relations=relations,
        observations=observations,
        evidence=evidence,
    )
