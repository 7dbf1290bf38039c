"""Models behind a small protocol. The only package that imports litellm, and only lazily:
importing litellm takes seconds, so it happens on the first call (see `_litellm.py`, which also
sets LITELLM_LOCAL_MODEL_COST_MAP so litellm does not fetch its cost map from the network).
"""

from typing import Any

from flowstate.llm.client import Completion, LiteLLMClient, ModelClient
from flowstate.llm.parsing import ParseResult, parse_step
from flowstate.llm.scripted import (
    PROVIDER,
    ScriptedCall,
    ScriptedFailure,
    ScriptedModel,
    ToolCalls,
)

__all__ = [
    "PROVIDER",
    "Completion",
    "LiteLLMClient",
    "ModelClient",
    "ParseResult",
    "ScriptedCall",
    "ScriptedFailure",
    "ScriptedModel",
    "ToolCalls",
    "load_litellm",
    "parse_step",
]


def load_litellm() -> Any:
    """litellm, set up as FlowState calls it (offline cost map, no banners on stdout), imported
    on the first call: for code that calls litellm itself, as the benchmarks' embeddings do."""
    from flowstate.llm._litellm import litellm

    return litellm
