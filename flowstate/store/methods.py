"""The methods of a namespace's repository: each runs one plan on the repository's store.

`Repository` (sync) and `AsyncRepository` (async) share this one list, so neither offers what
the other lacks, and each operation has one implementation, its plan:

    repo.forget_request("r3")           # runs forgetting.forget_request(repo.ops, "r3")
    await arepo.forget_request("r3")    # the same plan on the async driver

A method's docstring is its plan's.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any, Concatenate, Generic, ParamSpec, Protocol, TypeVar, overload

from flowstate.store import forgetting, reading, transfer
from flowstate.store.ops import Ops
from flowstate.store.plans import Plan

P = ParamSpec("P")
T = TypeVar("T")
R = TypeVar("R")


class _AsyncRunner(Protocol):
    """What `AsyncRepository` is to a method: `run` awaits a plan."""

    ops: Ops

    async def run(self, plan: Plan[R]) -> R: ...


class _Runner(Protocol):
    """What `Repository` is to a method: `run` performs a plan."""

    ops: Ops

    def run(self, plan: Plan[R]) -> R: ...


class runs(Generic[P, T]):  # noqa: N801  # reads as what it is: `index = runs(Ops.index)`
    """A repository method that runs `plan(repo.ops, ...)` with `repo.run`: returns what the
    plan returns on a `Repository`, an awaitable of it on an `AsyncRepository`."""

    def __init__(self, plan: Callable[Concatenate[Ops, P], Plan[T]]) -> None:
        self.plan = plan
        self.__doc__ = plan.__doc__
        self.name = plan.__name__

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, repo: None, owner: type | None = None) -> runs[P, T]: ...

    @overload
    def __get__(
        self, repo: _AsyncRunner, owner: type | None = None
    ) -> Callable[P, Coroutine[Any, Any, T]]: ...

    @overload
    def __get__(self, repo: _Runner, owner: type | None = None) -> Callable[P, T]: ...

    def __get__(self, repo: Any, owner: type | None = None) -> Any:
        if repo is None:
            return self
        plan = self.plan

        def method(*args: P.args, **kwargs: P.kwargs) -> Any:
            return repo.run(plan(repo.ops, *args, **kwargs))

        method.__name__ = method.__qualname__ = self.name
        method.__doc__ = self.__doc__
        return method


class RepositoryMethods:
    """What `Repository` and `AsyncRepository` offer beyond `run(plan)`; `self.ops` scopes
    every plan to the repository's namespace."""

    ops: Ops

    @property
    def namespace(self) -> str:
        return self.ops.namespace

    @property
    def read_only(self) -> bool:
        return self.ops.read_only

    # --- what the agents read and write (flowstate.store.ops) --------------------------------
    stamp = runs(Ops.stamp)
    index = runs(Ops.index)
    index_heads = runs(Ops.index_heads)
    request_states = runs(Ops.request_states)
    reveal = runs(Ops.reveal)
    expand = runs(Ops.expand)
    search = runs(Ops.search)
    open_requests = runs(Ops.open_requests)
    open_request = runs(Ops.open_request)
    allocate_request_seq = runs(Ops.allocate_request_seq)
    take_over = runs(Ops.take_over)
    save_draft = runs(Ops.save_draft)
    discard_draft = runs(Ops.discard_draft)
    commit = runs(Ops.commit)

    # --- records, provenance, history, counts (flowstate.store.reading) ----------------------
    next_request_seq = runs(reading.next_request_seq)
    get_request = runs(reading.get_request)
    get_state = runs(reading.get_state)
    get_observation = runs(reading.get_observation)
    get_decision = runs(reading.get_decision)
    decisions = runs(reading.decisions)
    provenance = runs(reading.provenance)
    history = runs(reading.history)
    counts = runs(reading.counts)
    bundles = runs(reading.bundles)

    # --- deleting and retention (flowstate.store.forgetting) ---------------------------------
    forget = runs(forgetting.forget)
    forget_request = runs(forgetting.forget_request)
    forget_state = runs(forgetting.forget_state)
    whole_namespace = runs(forgetting.whole_namespace)
    forget_namespace = runs(forgetting.forget_namespace)
    expire = runs(forgetting.expire)
    expiring = runs(forgetting.expiring)

    # --- JSON Lines out and in (flowstate.store.transfer) ------------------------------------
    export_jsonl = runs(transfer.export_jsonl)
    import_jsonl = runs(transfer.import_jsonl)
