"""One namespace's memory over the async driver: the same methods as `Repository`, awaited.

    repo = AsyncRepository(await AsyncStore.connect(settings), "trip")
    await repo.reveal(["r1.hotel_budget"])
    await repo.forget_request("r1")
    await repo.run(repo.ops.open_requests())   # any plan, or one composed of them

Every method runs the plan its `Repository` twin runs (`flowstate.store.methods`).
"""

from __future__ import annotations

from typing import TypeVar

from flowstate.store.async_connection import AsyncStore
from flowstate.store.methods import RepositoryMethods
from flowstate.store.ops import Ops
from flowstate.store.plans import Plan

T = TypeVar("T")


class AsyncRepository(RepositoryMethods):
    """Reads and writes of one namespace on an `AsyncStore`; `read_only=True` refuses writes."""

    def __init__(self, store: AsyncStore, namespace: str, *, read_only: bool = False) -> None:
        self._store = store
        self.ops = Ops(namespace, read_only=read_only)

    async def run(self, plan: Plan[T]) -> T:
        """Execute a plan of `self.ops` (or one composed of them) on the async driver."""
        return await self._store.run(plan)
