"""FlowState's settings swept on the token scenario, each with its recall: the index budget
(with the oracle and with the reader, which opens only what the index lets it find), the
prefetch of the best-matching states before the first call, and which calls of a request show
the whole index (`index_on_later_calls`, with its bill under the providers' cache rules). The
library's defaults are chosen from these figures: the smallest budget at which the reader
still reaches its best recall, prefetch only where it saves tokens without losing recall, and
the index resend with the lowest bill at recall 1.0 with cached input at 10%.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from typing import Any

from flowstate.engine.prompt import IndexResend
from flowstate.engine.step import AgentConfig
from flowstate.store import Store
from flowstate_bench import flowstate_strategy, token_compare
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
        out.setdefault("index_on_later_calls", {})[kind] = {
            mode.value: _resend_points(store, turns, depths, recall, mode, kind)
            for mode in IndexResend
        }
    out["chosen"] = {
        "index_budget_tokens": AgentConfig().index_budget_tokens,
        "prefetch_states": AgentConfig().prefetch_states,
        "index_on_later_calls": AgentConfig().index_on_later_calls.value,
    }
    return out


def _resend_points(
    store: Store,
    turns: Sequence[Turn],
    depths: Sequence[int],
    recall: Recall,
    mode: IndexResend,
    kind: str,
) -> dict[str, Any]:
    """`point` per depth, with the bill under the automatic cache's real rules (cached input
    read at 10% and at 50%): a resend that repeats more may be cached more."""
    runs = _runs(store, turns, AgentConfig(index_on_later_calls=mode), kind)
    out = {}
    for d in depths:
        costs = token_compare.cache_costs(token_compare.call_costs(runs[:d]))
        out[str(d)] = point(turns[:d], runs[:d], recall) | {
            "cached_share": costs["cached_share"],
            "effective_tokens": costs["effective_tokens"],
        }
    return out
