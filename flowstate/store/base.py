"""What every part of a namespace's repository shares: the store, the namespace, read-only.

`Repository` (reads, commit, import) is built from `Writing` (the writer's lease, request
seqs, drafts) and `Forgetting` (forget, retention, draft scrubbing), each on this base.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from flowstate.errors import NotFoundError, ReadOnlyError
from flowstate.store.catalog import Q
from flowstate.store.codec import check_namespace
from flowstate.store.connection import Changes, Row, Store


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
        self._namespace = check_namespace(namespace)
        self._read_only = read_only

    @property
    def namespace(self) -> str:
        return self._namespace

    @property
    def read_only(self) -> bool:
        return self._read_only

    def _read(self, name: Q, **params: object) -> list[Row]:
        return self._store.read(name, {"namespace": self._namespace, **params})

    def _write(self, name: Q, **params: object) -> tuple[list[Row], Changes]:
        return self._store.write(name, {"namespace": self._namespace, **params})

    def _writable(self, action: str) -> None:
        if self._read_only:
            raise ReadOnlyError(f"cannot {action}: namespace {self._namespace!r} is open read-only")

    def _not_found(self, missing: list[str]) -> NotFoundError:
        # Name only the caller's own ids; never hint whether they exist in another namespace.
        return NotFoundError(f"not found in namespace {self._namespace!r}: {', '.join(missing)}")
