"""What every part of a namespace's repository shares: the store and the namespace's `Ops`.

`Repository` (reads, commit, import) is built from `Writing` (request seqs, open requests
and their holds, drafts) and `Forgetting` (forget, retention, draft scrubbing), each on this
base. What
the agent needs is written once, as plans of `Ops` (`flowstate.store.ops`), which these sync
methods run and `AsyncRepository` runs on the async driver.
"""

from __future__ import annotations

from typing import TypeVar

from pydantic import BaseModel, ConfigDict

from flowstate.errors import NotFoundError
from flowstate.store.catalog import Q
from flowstate.store.connection import Changes, Store
from flowstate.store.ops import Ops
from flowstate.store.plans import Plan, Row

T = TypeVar("T")


class GraphCounts(BaseModel):
    """How many nodes and relationships were counted, created or deleted."""

    model_config = ConfigDict(frozen=True)

    nodes: int
    relationships: int


def deleted(changes: Changes) -> GraphCounts:
    return GraphCounts(nodes=changes.nodes_deleted, relationships=changes.relationships_deleted)


class RepositoryBase:
    """One namespace of one store; `read_only=True` refuses every write."""

    def __init__(self, store: Store, namespace: str, *, read_only: bool = False) -> None:
        self._store = store
        self.ops = Ops(namespace, read_only=read_only)
        self._namespace = self.ops.namespace

    @property
    def namespace(self) -> str:
        return self._namespace

    @property
    def read_only(self) -> bool:
        return self.ops.read_only

    def run(self, plan: Plan[T]) -> T:
        """Execute a plan of `self.ops` (or one composed of them) on the sync driver."""
        return self._store.run(plan)

    def _read(self, name: Q, **params: object) -> list[Row]:
        return self._store.read(name, {"namespace": self._namespace, **params})

    def _write(self, name: Q, **params: object) -> tuple[list[Row], Changes]:
        return self._store.write(name, {"namespace": self._namespace, **params})

    def _writable(self, action: str) -> None:
        self.ops.writable(action)

    def _not_found(self, missing: list[str]) -> NotFoundError:
        return self.ops.not_found(missing)
