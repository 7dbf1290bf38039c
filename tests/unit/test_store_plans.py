"""Store plans without a database: what they ask for, what they make of the answer, and how
an executor's error reaches them."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Any

import pytest

from flowstate.errors import (
    NamespaceBusy,
    NotFoundError,
    ReadOnlyError,
    RequestHeld,
    StoreUnavailable,
)
from flowstate.store import forgetting
from flowstate.store.catalog import Q
from flowstate.store.methods import RepositoryMethods, runs
from flowstate.store.ops import Ops
from flowstate.store.plans import (
    Changes,
    Plan,
    Read,
    Rows,
    Stmt,
    Transaction,
    adrive,
    drive,
)


def test_a_plan_asks_for_a_named_query_scoped_to_its_namespace() -> None:
    asked: list[Any] = []
    row = {
        "request_id": "r3", "holder": "w", "expires": None, "held": False,
        "created_at": None, "updated_at": None, "idle_s": 4, "payload": '{"step": 2}',
    }  # fmt: skip

    def perform(op: Any) -> Any:
        asked.append(op)
        return [row]

    [found] = drive(Ops("trip").open_requests(), perform)
    assert (found.request_id, found.holder, found.held, found.steps) == ("r3", "w", False, 2)
    assert asked == [Read(Q.OPEN_REQUESTS, {"namespace": "trip"})]


def test_an_executor_error_is_thrown_into_the_plan_at_its_yield() -> None:
    def plan() -> Plan[str]:
        try:
            yield Read(Q.PING, {})
        except StoreUnavailable as e:
            return f"caught: {e}"
        return "not reached"

    def down(op: Any) -> Any:
        raise StoreUnavailable("gone")

    async def adown(op: Any) -> Any:
        raise StoreUnavailable("gone")

    assert drive(plan(), down) == "caught: gone"
    assert asyncio.run(adrive(plan(), adown)) == "caught: gone"


def test_an_error_the_plan_does_not_catch_reaches_the_caller() -> None:
    def missing(op: Any) -> Any:
        return []  # no row for the ids asked

    with pytest.raises(NotFoundError, match="not found in namespace 'trip': r1.a"):
        drive(Ops("trip").reveal(["r1.a"]), missing)


def test_a_read_only_namespace_refuses_a_write_before_asking_anything() -> None:
    def nothing(op: Any) -> Any:
        raise AssertionError(f"asked {op!r}")

    with pytest.raises(ReadOnlyError, match="cannot start a request"):
        drive(Ops("trip", read_only=True).allocate_request_seq(), nothing)


def test_transaction_work_is_made_afresh_for_each_attempt() -> None:
    """The driver retries a transaction on transient failures: each attempt gets a new
    generator, so nothing of a failed attempt leaks into the next."""
    [op] = list(Ops("trip").save_draft("r2", "{}", owner="me", hold_s=30))
    assert isinstance(op, Transaction)
    first, second = op.work(), op.work()
    assert first is not second
    params = {"namespace": "trip", "request_id": "r2", "payload": "{}", "owner": "me",
              "hold_s": 30}  # fmt: skip
    assert next(first) == next(second) == Stmt(Q.SAVE_DRAFT, params)
    held = {"saved": False, "holder": "other", "expires": _Expires()}
    with pytest.raises(RequestHeld, match="writer other holds it until 2030-01-01"):
        first.send(Rows([held]))
    with pytest.raises(RequestHeld, match="it is not open"):
        second.send(Rows())


class _Expires:
    """A neo4j DateTime stand-in: the hold row converts it with `to_native`."""

    def to_native(self) -> datetime:
        return datetime(2030, 1, 1, tzinfo=UTC)


def test_forgetting_reports_what_the_server_counted_as_deleted() -> None:
    """No database: the forget's own statement reports its counters on its `Rows`."""
    gone = Changes(nodes_deleted=3, relationships_deleted=7)

    def perform(op: Any) -> Any:
        assert isinstance(op, Transaction)
        return drive(op.work(), answer)

    def answer(stmt: Stmt) -> Rows:
        if stmt.name is Q.FORGET_STATE:
            return Rows([{"forgotten": 1}], gone)
        if stmt.name is Q.MARK_REMOVED:
            return Rows([{"ids": ["r1.a"], "superseded": [], "dependents": []}])
        return Rows([{"generation": 2}] if stmt.name is Q.TOUCH_NAMESPACE else [])

    counted = drive(forgetting.forget(Ops("trip"), "r1.a"), perform)
    assert (counted.nodes, counted.relationships) == (3, 7)


def test_forgetting_a_whole_namespace_fences_it_then_deletes_batch_by_batch() -> None:
    asked: list[Any] = []
    batches = iter([(5_000, False), (12, False), (0, True)])

    def perform(op: Any) -> Any:
        asked.append(op)
        if op.name is Q.FENCE_NAMESPACE:
            return Rows([{"fenced": True, "other": False, "held": []}])
        deleted, done = next(batches)
        return Rows([{"mine": True, "deleted": deleted, "done": done}], Changes(0, 0, 0, 3))

    counted = drive(forgetting.forget_namespace(Ops("trip"), force=True), perform)
    assert (counted.nodes, counted.relationships) == (5_012, 9)
    assert [op.name for op in asked] == [Q.FENCE_NAMESPACE, *[Q.FORGET_NAMESPACE_BATCH] * 3]
    owners = {op.params["owner"] for op in asked}
    assert len(owners) == 1  # every batch is the fencing writer's, checked in the Cypher


def test_a_forget_whose_fence_was_lifted_stops_and_says_so() -> None:
    def perform(op: Any) -> Any:
        if op.name is Q.FENCE_NAMESPACE:
            return Rows([{"fenced": True, "other": False, "held": []}])
        return Rows([{"mine": False, "deleted": 0, "done": False}])

    with pytest.raises(NamespaceBusy, match="stopped after 0 nodes: its fence lapsed"):
        drive(forgetting.forget_namespace(Ops("trip")), perform)


def test_every_repository_method_says_what_its_plan_does() -> None:
    methods = {n: m for n, m in vars(RepositoryMethods).items() if isinstance(m, runs)}
    assert {"forget_request", "expire", "export_jsonl", "import_jsonl"} <= set(methods)
    for name, method in methods.items():
        assert method.__doc__ and method.__doc__ == method.plan.__doc__, name
