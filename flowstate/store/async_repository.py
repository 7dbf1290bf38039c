"""One namespace's memory over the async driver: the same plans as `Repository`, awaited.

    repo = AsyncRepository(await AsyncStore.connect(settings), "trip")
    await repo.reveal(["r1.hotel_budget"])
    await repo.run(repo.ops.open_requests())

It offers what an async agent needs (every plan of `flowstate.store.ops`, through `run`).
Forgetting, retention, export and import are sync-only: use `Repository` for those.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

from flowstate.models import RevealedState
from flowstate.store.async_connection import AsyncStore
from flowstate.store.holds import OpenRequest
from flowstate.store.ops import Ops
from flowstate.store.plans import Plan

T = TypeVar("T")


class AsyncRepository:
    """Reads and writes of one namespace on an `AsyncStore`; `read_only=True` refuses writes."""

    def __init__(self, store: AsyncStore, namespace: str, *, read_only: bool = False) -> None:
        self._store = store
        self.ops = Ops(namespace, read_only=read_only)

    @property
    def namespace(self) -> str:
        return self.ops.namespace

    @property
    def read_only(self) -> bool:
        return self.ops.read_only

    async def run(self, plan: Plan[T]) -> T:
        """Execute a plan of `self.ops` (or one composed of them) on the async driver."""
        return await self._store.run(plan)

    async def reveal(self, state_ids: Sequence[str]) -> list[RevealedState]:
        """Full records of past states with their relations, closed at the far end."""
        return await self.run(self.ops.reveal(state_ids))

    async def open_requests(self) -> list[OpenRequest]:
        """Every open request (running or interrupted) with its holder, newest first."""
        return await self.run(self.ops.open_requests())
