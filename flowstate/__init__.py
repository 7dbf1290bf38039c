"""FlowState: the agent's execution state, kept in Neo4j, is its memory."""

import typing

from flowstate import lazy
from flowstate.version import __version__ as __version__

# Each public name is imported when first used: `flowstate --help` and every submodule
# import go through this package, and must not pay for the Neo4j driver (see `lazy`).
_EXPORTS = {
    "FlowState": "flowstate.api",
    "AsyncFlowState": "flowstate.async_api",
    "AsyncAgent": "flowstate.engine.async_agent",
    "Fact": "flowstate.engine.fact",
    "Transcript": "flowstate.engine.transcript",
    **dict.fromkeys(("Agent", "AgentConfig", "RunResult"), "flowstate.engine.agent"),
    "RenderedIndex": "flowstate.engine.index",
    "Approval": "flowstate.engine.step",
    "Tool": "flowstate.engine.tools",
    **dict.fromkeys(
        (
            "FlowStateError",
            "FlowStateRuntimeError",
            "CommitUncertain",
            "ConflictError",
            "ModelError",
            "NamespaceBusy",
            "NotFoundError",
            "ReadOnlyError",
            "RequestHeld",
            "RequestInterrupted",
            "StoreError",
            "StoreUnavailable",
            "UsageError",
            "ValidationFailed",
            "WrongHandle",
        ),
        "flowstate.errors",
    ),
    **dict.fromkeys(("LiteLLMClient", "ModelClient", "ScriptedModel"), "flowstate.llm"),
    **dict.fromkeys(
        ("Category", "Outcome", "RelationType", "StateNode", "StepOutput", "Usage"),
        "flowstate.models",
    ),
    "Limits": "flowstate.rules",
    **dict.fromkeys(("PatternRedactor", "builtin_redactor"), "flowstate.safety.redaction"),
    "RetentionPolicy": "flowstate.safety.retention",
}

__all__ = [
    "Agent",
    "AgentConfig",
    "Approval",
    "AsyncAgent",
    "AsyncFlowState",
    "Category",
    "CommitUncertain",
    "ConflictError",
    "Fact",
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
    "RequestHeld",
    "RequestInterrupted",
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
    "WrongHandle",
    "builtin_redactor",
]

__getattr__, __dir__ = lazy.lazy_exports(__name__, _EXPORTS)

if typing.TYPE_CHECKING:  # what the names are, for type checkers and editors
    from flowstate.api import FlowState
    from flowstate.async_api import AsyncFlowState
    from flowstate.engine.agent import Agent, AgentConfig, RunResult
    from flowstate.engine.async_agent import AsyncAgent
    from flowstate.engine.fact import Fact
    from flowstate.engine.index import RenderedIndex
    from flowstate.engine.step import Approval
    from flowstate.engine.tools import Tool
    from flowstate.engine.transcript import Transcript
    from flowstate.errors import (
        CommitUncertain,
        ConflictError,
        FlowStateError,
        FlowStateRuntimeError,
        ModelError,
        NamespaceBusy,
        NotFoundError,
        ReadOnlyError,
        RequestHeld,
        RequestInterrupted,
        StoreError,
        StoreUnavailable,
        UsageError,
        ValidationFailed,
        WrongHandle,
    )
    from flowstate.llm import LiteLLMClient, ModelClient, ScriptedModel
    from flowstate.models import Category, Outcome, RelationType, StateNode, StepOutput, Usage
    from flowstate.rules import Limits
    from flowstate.safety.redaction import PatternRedactor, builtin_redactor
    from flowstate.safety.retention import RetentionPolicy
