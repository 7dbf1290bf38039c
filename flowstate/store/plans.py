"""Store operations as plans: I/O-free generators that a sync or an async executor runs.

A plan yields what it needs from Neo4j and is sent back what came of it, so one
implementation of each operation serves both `Store` (the sync `neo4j.Driver`) and
`AsyncStore` (the `neo4j.AsyncDriver`):

    def stamp(namespace: str) -> Plan[Stamp]:
        [row] = yield Read(Q.NAMESPACE_STAMP, {"namespace": namespace})
        return stamp_of(row)

    store.run(stamp("trip"))            # sync
    await astore.run(stamp("trip"))     # async

Plans compose with `yield from`. An error the executor meets is thrown into the plan at its
`yield`, so a plan catches store errors as a plain function would. Transaction work is a
generator too (it yields `Stmt`s and receives their rows); the driver may retry a
transaction, so `Transaction` holds a factory that makes the work afresh for each attempt.
Rows come as `Rows`, which also carry what the statement changed (the server's counters):
a plan that reports what it deleted or created reads them there.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Generator, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from flowstate.store.catalog import Q

T = TypeVar("T")
Row = dict[str, Any]


@dataclass(frozen=True)
class Changes:
    """What a write did, from the server's own counters."""

    nodes_created: int = 0
    nodes_deleted: int = 0
    relationships_created: int = 0
    relationships_deleted: int = 0

    def __add__(self, other: Changes) -> Changes:
        return Changes(
            self.nodes_created + other.nodes_created,
            self.nodes_deleted + other.nodes_deleted,
            self.relationships_created + other.relationships_created,
            self.relationships_deleted + other.relationships_deleted,
        )


class Rows(list[Row]):
    """A statement's rows, and what it changed (`changes`)."""

    def __init__(self, rows: Iterable[Row] = (), changes: Changes | None = None) -> None:
        super().__init__(rows)
        self.changes = changes or Changes()


@dataclass(frozen=True)
class Read:
    """A read query in its own transaction, routed to readers; sends back its `Rows`."""

    name: Q
    params: Mapping[str, Any]


@dataclass(frozen=True)
class Write:
    """A single-statement write in its own (retried) transaction; sends back its `Rows`."""

    name: Q
    params: Mapping[str, Any]


@dataclass(frozen=True)
class Batched:
    """A query that commits its own batches (`CALL ... IN TRANSACTIONS`), so it runs in an
    auto-commit transaction: the driver does not retry it, and it must be safe to run again.
    Sends back its `Changes`."""

    name: Q
    params: Mapping[str, Any]


@dataclass(frozen=True)
class Statement:
    """One statement of a multi-statement catalog file (the schema), no parameters."""

    text: str


@dataclass(frozen=True)
class Stmt:
    """One statement inside transaction work; sends back its `Rows`."""

    name: Q
    params: Mapping[str, Any]


TxWork = Generator[Stmt, Rows, T]


@dataclass(frozen=True)
class Transaction(Generic[T]):
    """Run `work()` in one write transaction (all or nothing); sends back what it returned."""

    work: Callable[[], TxWork[T]]


Op = Read | Write | Batched | Statement | Transaction[Any]
Plan = Generator[Op, Any, T]


def drive(plan: Generator[Any, Any, T], perform: Callable[[Any], Any]) -> T:
    """Run a plan (or transaction work) to its end, `perform`ing each thing it yields."""
    steps = Steps(plan)
    for op in steps:
        try:
            steps.send(perform(op))
        except Exception as e:
            steps.fail(e)
    return steps.value


async def adrive(plan: Generator[Any, Any, T], perform: Callable[[Any], Awaitable[Any]]) -> T:
    """`drive` with an async `perform`."""
    steps = Steps(plan)
    for op in steps:
        try:
            steps.send(await perform(op))
        except Exception as e:
            steps.fail(e)
    return steps.value


class Steps(Generic[T]):
    """Walks a plan for `drive` / `adrive`: iterate for what to perform, then `send` what came
    of it or `fail` with the error (thrown into the plan); `value` is what the plan returned."""

    def __init__(self, plan: Generator[Any, Any, T]) -> None:
        self._plan = plan
        self._sent: Any = None
        self._error: Exception | None = None
        self._value: T | None = None
        self._done = False

    def __iter__(self) -> Iterator[Any]:
        while True:
            error, self._error = self._error, None
            try:
                op = self._plan.throw(error) if error is not None else self._plan.send(self._sent)
            except StopIteration as end:
                self._value, self._done = end.value, True
                return
            self._sent = None
            yield op

    def send(self, outcome: Any) -> None:
        self._sent = outcome

    def fail(self, error: Exception) -> None:
        self._error = error

    @property
    def value(self) -> T:
        assert self._done, "the plan has not finished"
        return self._value  # type: ignore[return-value]
