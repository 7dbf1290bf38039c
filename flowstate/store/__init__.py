"""The Persistent State Repository: FlowState's only package that talks to Neo4j."""

from flowstate.store.async_connection import AsyncStore
from flowstate.store.async_repository import AsyncRepository
from flowstate.store.connection import Store
from flowstate.store.reading import GraphCounts, Removal
from flowstate.store.repository import Repository

__all__ = ["AsyncRepository", "AsyncStore", "GraphCounts", "Removal", "Repository", "Store"]
