"""FlowState: the agent's execution state, kept in Neo4j, is its memory."""

__version__ = "0.1.0"  # first: submodules read it while the package initialises

from flowstate.api import FlowState
from flowstate.async_api import AsyncFlowState
from flowstate.engine.agent import Agent, AgentConfig, RunResult
from flowstate.engine.async_agent import AsyncAgent
from flowstate.engine.index import RenderedIndex
from flowstate.engine.step import Approval
from flowstate.engine.tools import Tool
from flowstate.engine.transcript import Transcript
from flowstate.errors import (
    FlowStateError,
    FlowStateRuntimeError,
    ModelError,
    NamespaceBusy,
    NotFoundError,
    ReadOnlyError,
    StoreError,
    StoreUnavailable,
    UsageError,
    ValidationFailed,
)
from flowstate.llm import LiteLLMClient, ModelClient, ScriptedModel
from flowstate.models import (
    Category,
    Outcome,
    RelationType,
    StateNode,
    StepOutput,
    Usage,
)
from flowstate.rules import Limits
from flowstate.safety.redaction import PatternRedactor, builtin_redactor
from flowstate.safety.retention import RetentionPolicy

__all__ = [
    "Agent",
    "AgentConfig",
    "Approval",
    "AsyncAgent",
    "AsyncFlowState",
    "Category",
    "FlowState",
    "FlowStateError",
    "FlowStateRuntimeError",
    "Limits",
    "LiteLLMClient",
    "ModelClient",
    "ModelError",
    "NamespaceBusy",
    "NotFoundError",
    "Outcome",
    "PatternRedactor",
    "ReadOnlyError",
    "RelationType",
    "RenderedIndex",
    "RetentionPolicy",
    "RunResult",
    "ScriptedModel",
    "StateNode",
    "StepOutput",
    "StoreError",
    "StoreUnavailable",
    "Tool",
    "Transcript",
    "Usage",
    "UsageError",
    "ValidationFailed",
    "builtin_redactor",
]
