"""FlowState: the agent's execution state, kept in Neo4j, is its memory."""

from flowstate.errors import FlowStateError, FlowStateRuntimeError, UsageError

__all__ = ["FlowStateError", "FlowStateRuntimeError", "UsageError"]
__version__ = "0.1.0"
