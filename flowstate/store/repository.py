"""One namespace's memory on the sync driver: the only place the graph's meaning meets it.

    repo = Repository(store, "travel-agent")
    repo.commit(bundle)
    repo.index()            # [IndexRequest(id='r1', seq=1, summary=..., states=[...])]
    repo.reveal(["r1.hotel_budget"])
    repo.provenance("r3.booking")   # the states, evidence and requests it rests on
    repo.run(repo.ops.open_requests())   # any plan, or one composed of them

Every method runs one plan (`flowstate.store.methods`), the same one `AsyncRepository`
awaits. Every query receives `$namespace` and matches on it in the Cypher itself, so an id of
another namespace is simply not found, and error messages name only what the caller passed.
"""

from __future__ import annotations

from typing import TypeVar

from flowstate.store.connection import Store
from flowstate.store.methods import RepositoryMethods
from flowstate.store.ops import Ops
from flowstate.store.plans import Plan

T = TypeVar("T")


class Repository(RepositoryMethods):
    """Reads and writes of one namespace; `read_only=True` refuses every write."""

    def __init__(self, store: Store, namespace: str, *, read_only: bool = False) -> None:
        self._store = store
        self.ops = Ops(namespace, read_only=read_only)

    def run(self, plan: Plan[T]) -> T:
        """Execute a plan of `self.ops` (or one composed of them) on the sync driver."""
        return self._store.run(plan)
