"""`fs.current_states(key_prefix)`: the states no state supersedes (nor a forgotten one did),
whose key starts with the prefix, of this namespace only; the same from `AsyncFlowState`."""

from __future__ import annotations

import asyncio

import pytest

from flowstate import AsyncFlowState, FlowState
from flowstate.engine.fact import Fact
from flowstate.errors import ValidationFailed
from flowstate.settings import Neo4jSettings
from flowstate.store import Repository, Store

pytestmark = pytest.mark.neo4j


def test_current_states_leave_out_the_superseded_and_other_namespaces(
    store: Store, repo: Repository, neo4j_settings: Neo4jSettings
) -> None:
    fs = FlowState(store, repo.namespace)
    neighbour = f"{repo.namespace}_x"
    FlowState(store, neighbour).remember_fact(Fact("Theirs", "environment", key="seat_b"))
    try:
        fs.remember_fact(Fact("Aisle seat", "preference", key="seat_a"))
        fs.remember_fact(
            Fact("Window seat", "preference", key="seat_a",
                 relations=[{"type": "SUPERSEDES", "target": "r1.seat_a"}])
        )  # fmt: skip
        fs.remember_fact(Fact("Vegetarian", "preference", key="diet"))
        assert [s.id for s in fs.current_states("seat")] == ["r2.seat_a"]
        assert [s.content for s in fs.current_states()] == ["Window seat", "Vegetarian"]
        fs.forget("r2.seat_a")  # r1.seat_a stays superseded by the forgotten state
        assert fs.current_states("seat") == []

        async def from_async() -> list[str]:
            async with await AsyncFlowState.connect(
                settings=neo4j_settings, namespace=repo.namespace
            ) as afs:
                return [s.id for s in await afs.current_states("")]

        assert asyncio.run(from_async()) == ["r3.diet"]
        for bad in ["Seat", "seat a", "x" * 65, "séat"]:
            with pytest.raises(ValidationFailed, match="key prefix"):
                fs.current_states(bad)
    finally:
        Repository(store, neighbour).forget_namespace(force=True)
