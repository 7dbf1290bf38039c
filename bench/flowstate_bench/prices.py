"""Token counts in dollars, at the prices litellm's bundled price map gives two named models:
a small one whose provider caches automatically (OpenAI's rule) and a large one whose provider
caches at explicit breakpoints (Anthropic's). Offline runs count tokens with o200k_base, so a
price is what those tokens would cost on that model, not a bill from its provider.

>>> sorted(price("gpt-4o-mini"))
['cache_read', 'cache_write', 'input', 'output']
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Any

from flowstate.models.records import Usage
from flowstate_bench.prompt_cache import Billed

SMALL, LARGE = "gpt-4o-mini", "claude-sonnet-4-5"
# Each model with the cache its provider runs: "automatic" or "breakpoints".
MODELS = {SMALL: "automatic", LARGE: "breakpoints"}


@cache
def price(model: str) -> dict[str, float]:
    """USD per token: input, output, a cached read and a cache write (litellm's map; a
    model without cache prices reads and writes at the input price)."""
    from flowstate.llm import load_litellm

    entry = load_litellm().model_cost[model]
    base = float(entry["input_cost_per_token"])
    return {
        "input": base,
        "output": float(entry["output_cost_per_token"]),
        "cache_read": float(entry.get("cache_read_input_token_cost") or base),
        "cache_write": float(entry.get("cache_creation_input_token_cost") or base),
    }


def call_cost(model: str, call: Billed, cached: bool) -> float:
    """One call's price on `model`, without a cache or under its provider's cache model."""
    p = price(model)
    out = call.completion * p["output"]
    if not cached:
        return call.tokens * p["input"] + out
    if MODELS[model] == "automatic":
        return (call.tokens - call.cached) * p["input"] + call.cached * p["cache_read"] + out
    rest = call.tokens - call.read - call.written
    return rest * p["input"] + call.read * p["cache_read"] + call.written * p["cache_write"] + out


def request_costs(calls: Sequence[Billed], requests: int) -> dict[str, dict[str, Any]]:
    """Mean USD per request on each named model: without a cache, and with its provider's."""
    n = max(requests, 1)
    return {
        model: {
            "uncached": round(sum(call_cost(model, c, False) for c in calls) / n, 6),
            "cached": round(sum(call_cost(model, c, True) for c in calls) / n, 6),
            "cache": cache_model,
        }
        for model, cache_model in MODELS.items()
    }


def usage_costs(usage: Usage) -> dict[str, float]:
    """USD of `usage` (no cache) on each named model: what a harness's token counts cost."""
    return {
        model: round(
            usage.prompt_tokens * price(model)["input"]
            + usage.completion_tokens * price(model)["output"],
            6,
        )
        for model in MODELS
    }


def described() -> dict[str, Any]:
    """The models, their cache and their prices, for a report's settings."""
    return {model: {"cache": kind, **price(model)} for model, kind in MODELS.items()}
