"""A one-call fact sent again (a host retrying a call whose reply was lost) is stored once;
the same fact stored twice on purpose takes another key."""

from __future__ import annotations

from typing import Any

import pytest

from flowstate import Fact, FlowState
from flowstate.store import Repository, Store
from tests.neo4j.mcp_host import hosted, ok

pytestmark = pytest.mark.neo4j

NAME = Fact("User's name is Ana", "environment", text="I'm Ana")


def test_a_fact_sent_again_is_stored_once(store: Store, repo: Repository) -> None:
    fs = FlowState(store, repo.namespace)
    first = fs.remember_fact(NAME)
    again = fs.remember_fact(NAME)
    assert (first.already_committed, again.already_committed) == (False, True)
    assert again.request_id == first.request_id and again.states_added == first.states_added
    assert [b.request.id for b in repo.bundles()] == ["r1"]
    assert fs.index().text.count("[environment] User's name is Ana") == 1
    # The counter moved on by one request only: the next one is r2.
    assert fs.remember_fact(Fact("Lives in Porto", "environment")).request_id == "r2"


def test_another_key_or_another_fact_is_a_new_request(store: Store, repo: Repository) -> None:
    fs = FlowState(store, repo.namespace)
    fs.remember_fact(NAME)
    on_purpose = fs.remember_fact(Fact(**{**vars(NAME), "idempotency_key": "second time"}))
    assert not on_purpose.already_committed and on_purpose.request_id == "r2"
    said_otherwise = fs.remember_fact(Fact("User's name is Ana", "environment", text="Ana here"))
    assert said_otherwise.request_id == "r3"
    keyed = fs.remember_fact(Fact("x", "environment", idempotency_key="k1"))
    assert fs.remember_fact(Fact("x", "environment", idempotency_key="k1")).already_committed
    # Another fact under the same key is another call; a blank key is none.
    other = fs.remember_fact(Fact("y", "environment", idempotency_key="k1"))
    assert not other.already_committed and other.request_id != keyed.request_id
    blank = fs.remember_fact(Fact("z", "environment", idempotency_key=" "))
    assert fs.remember_fact(Fact("z", "environment", idempotency_key="")).already_committed
    assert not fs.remember_fact(Fact("w", "environment", idempotency_key=" ")).already_committed
    assert blank.states_added == [f"{blank.request_id}.z"]


def test_a_forgotten_fact_is_stored_again(store: Store, repo: Repository) -> None:
    fs = FlowState(store, repo.namespace)
    fs.remember_fact(NAME)
    fs.forget("r1")
    assert fs.remember_fact(NAME).already_committed is False
    [state] = fs.remember_fact(NAME).states_added  # stored once again
    fs.forget(state)  # the state alone: its request stays, holding nothing
    request = fs.repository.get_request(state.split(".")[0])
    assert request.idempotency_key is None  # a hash of what the fact said goes with it
    again = fs.remember_fact(NAME)
    assert not again.already_committed and again.states_added == [
        f"{again.request_id}.{state.split('.')[1]}"
    ]
    assert fs.search("Ana")[0].id == again.states_added[0]


def test_memory_remember_retried_stores_once(store: Store, repo: Repository) -> None:
    async def script(client: Any) -> list[dict[str, Any]]:
        fact = {"summary": "User's name is Ana", "category": "environment", "text": "I'm Ana"}
        return [await ok(client, "memory_remember", **fact) for _ in range(3)]

    first, *retries = hosted(store, repo.namespace, script)
    assert "already_committed" not in first  # said only when it is true
    assert all(r == {**first, "already_committed": True} for r in retries)
    assert [b.request.id for b in repo.bundles()] == ["r1"]
