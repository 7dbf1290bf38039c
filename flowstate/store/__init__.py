"""The Persistent State Repository: FlowState's only package that talks to Neo4j."""

from flowstate.store.base import GraphCounts
from flowstate.store.connection import Store
from flowstate.store.repository import Repository

__all__ = ["GraphCounts", "Repository", "Store"]
