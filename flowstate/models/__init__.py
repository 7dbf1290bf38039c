"""Pure data: no I/O, no database, no model calls."""

from flowstate.models.records import (
    ActionDecision,
    Evidence,
    Observation,
    Outcome,
    Relation,
    Request,
    RequestBundle,
    StateNode,
    Usage,
)
from flowstate.models.step import (
    AddOp,
    FinalAnswer,
    RelationSpec,
    RemoveOp,
    StepOutput,
    ToolCall,
    UpdateOp,
)
from flowstate.models.views import Direction, IndexRequest, IndexState, RelationView, RevealedState
from flowstate.models.vocab import EVIDENCE, Category, RelationType

__all__ = [
    "EVIDENCE",
    "ActionDecision",
    "AddOp",
    "Category",
    "Direction",
    "Evidence",
    "FinalAnswer",
    "IndexRequest",
    "IndexState",
    "Observation",
    "Outcome",
    "Relation",
    "RelationSpec",
    "RelationType",
    "RelationView",
    "RemoveOp",
    "Request",
    "RequestBundle",
    "RevealedState",
    "StateNode",
    "StepOutput",
    "ToolCall",
    "UpdateOp",
    "Usage",
]
