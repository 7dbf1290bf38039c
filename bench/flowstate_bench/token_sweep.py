"""FlowState's settings swept on the token scenario, each with its recall: the index budget
(with the oracle and with the reader, which opens only what the index lets it find) and the
prefetch of the best-matching states before the first call. The library's defaults are
chosen from these figures: the smallest budget at which the reader still reaches its best
recall, and prefetch only where it saves tokens without losing recall.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from typing import Any

from flowstate.engine.step import AgentConfig
from flowstate.store import Store
from flowstate_bench import flowstate_strategy
from flowstate_bench.scenarios import Turn
from flowstate_bench.strategies import Prompted

BUDGETS = (300, 450, 600, 800, 1_000, 2_000)
PREFETCH = (0, 2, 4)
Recall = Callable[[Turn, Prompted], float | None]


def point(turns: Sequence[Turn], runs: Sequence[Prompted], recall: Recall) -> dict[str, float]:
    """Mean tokens (prompt plus completion, and the prompt's) and calls per request, and
    mean recall, over these turns."""
    recalls = [r for r in (recall(t, p) for t, p in zip(turns, runs, strict=True)) if r is not None]
    return {
        "tokens": round(statistics.fmean(p.tokens for p in runs), 1),
        "prompt_tokens": round(statistics.fmean(p.prompt_tokens for p in runs), 1),
        "llm_calls": round(statistics.fmean(len(p.calls) for p in runs), 3),
        "recall": round(statistics.fmean(recalls), 4) if recalls else 1.0,
    }


def _runs(
    store: Store, turns: Sequence[Turn], config: AgentConfig, agent_kind: str
) -> list[Prompted]:
    run = flowstate_strategy.run(store, turns, config, agent_kind, with_no_psa=False)
    return run.psa


def sweep(
    store: Store,
    turns: Sequence[Turn],
    depths: Sequence[int],
    recall: Recall,
    budgets: Sequence[int] = BUDGETS,
    prefetch: Sequence[int] = PREFETCH,
) -> dict[str, Any]:
    """Per agent kind, budget (and prefetch), per depth: tokens, calls and recall."""
    out: dict[str, Any] = {"index_budget": {}, "prefetch": {}}
    for kind in flowstate_strategy.AGENTS:
        by_budget = {}
        for budget in budgets:
            runs = _runs(store, turns, AgentConfig(index_budget_tokens=budget), kind)
            by_budget[str(budget)] = {str(d): point(turns[:d], runs[:d], recall) for d in depths}
        out["index_budget"][kind] = by_budget
        by_prefetch = {}
        for k in prefetch:
            runs = _runs(store, turns, AgentConfig(prefetch_states=k), kind)
            by_prefetch[str(k)] = {str(d): point(turns[:d], runs[:d], recall) for d in depths}
        out["prefetch"][kind] = by_prefetch
    out["chosen"] = {
        "index_budget_tokens": AgentConfig().index_budget_tokens,
        "prefetch_states": AgentConfig().prefetch_states,
    }
    return out
