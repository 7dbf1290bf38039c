"""What calls cost in dollars, from litellm's bundled price map, and the spend columns the
harness reports share: the task agent's calls, the memory's own LLM calls and its embedding
calls, each as tokens, calls and cost, side by side.

A model litellm has no price for (the scripted and local models of offline runs) costs None:
reports show "-" rather than a made-up figure; `--price-model` prices offline token counts as
if they had been sent to a real model.
"""

from __future__ import annotations

from typing import Any

from flowstate.models.records import Usage
from flowstate_bench import prices


def cost_usd(model: str | None, usage: Usage) -> float | None:
    """litellm's price of `usage` on `model`; None when litellm does not know the model."""
    if not model or usage.calls == 0:
        return 0.0 if usage.calls == 0 else None
    from flowstate.llm import load_litellm

    litellm = load_litellm()

    try:
        prompt, completion = litellm.cost_per_token(
            model=model,
            prompt_tokens=usage.prompt_tokens,
            completion_tokens=usage.completion_tokens,
        )
    except Exception:
        return None
    return round(float(prompt) + float(completion), 6)


def spend(usage: Usage, model: str | None) -> dict[str, Any]:
    """Tokens (prompt and completion apart, and together), calls, the cost on `model`, and
    what the same tokens cost at the two named models' prices (`prices.MODELS`)."""
    return {
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens,
        "tokens": usage.total_tokens,
        "calls": usage.calls,
        "cost_usd": cost_usd(model, usage),
        "at_prices_usd": prices.usage_costs(usage),
    }


def spend_columns(
    agent: Usage,
    memory: Usage,
    embedding: Usage,
    models: tuple[str | None, str | None, str | None],
) -> dict[str, Any]:
    """`{"agent": ..., "memory_llm": ..., "memory_embedding": ..., "total_cost_usd": ...}`."""
    parts = {
        "agent": spend(agent, models[0]),
        "memory_llm": spend(memory, models[1]),
        "memory_embedding": spend(embedding, models[2]),
    }
    costs = [p["cost_usd"] for p in parts.values()]
    total = None if any(c is None for c in costs) else round(sum(costs), 6)
    # The agent's and the memory's LLM calls at each named model (embeddings have their own
    # models and prices: they are in `cost_usd` where litellm knows the model).
    named = {
        m: round(parts["agent"]["at_prices_usd"][m] + parts["memory_llm"]["at_prices_usd"][m], 6)
        for m in prices.MODELS
    }
    return {**parts, "total_cost_usd": total, "llm_at_prices_usd": named}


def named_cost_cells(spend: dict[str, Any]) -> str:
    """`0.0123 / 0.2345`: the LLM calls' USD at each named model, for a Markdown cell."""
    named = spend.get("llm_at_prices_usd") or {}
    return " / ".join(f"{v:.4f}" for v in named.values()) or "-"


def named_cost_header() -> str:
    return "LLM calls at " + " / ".join(prices.MODELS) + " (USD)"


def parts_lines(rows: list[tuple[str, str, dict[str, int], int]]) -> list[str]:
    """Markdown: FlowState's prompt tokens by part, per (group, strategy, parts, calls), with
    the fixed price of a call (protocol, reply format, tools, framing) per call."""
    from flowstate.engine.prompt_costs import FIXED, PARTS

    rows = [r for r in rows if r[2]]
    if not rows:
        return []
    extra = sorted({k for r in rows for k in r[2]} - set(PARTS))  # the harness's (policy)
    columns = [*extra, *PARTS]
    out = [
        "## Where FlowState's prompt tokens go",
        "",
        "Prompt tokens summed over the calls, by part of the prompt. The fixed price of a call "
        "is what no memory or request changes: protocol, reply format, tools, framing, and the "
        "domain policy every strategy's prompt carries.",
        "",
        "| group | strategy | calls | " + " | ".join(columns) + " | fixed per call |",
        "|---|---|---:|" + "---:|" * len(columns) + "---:|",
    ]
    for group, strategy, parts, calls in rows:
        fixed = sum(parts.get(p, 0) for p in (*FIXED, *extra))
        per = f"{fixed / calls:,.0f}" if calls else "-"
        cells = " | ".join(f"{parts.get(p, 0):,}" for p in columns)
        out.append(f"| {group} | {strategy} | {calls} | {cells} | {per} |")
    return [*out, ""]
