"""The token suite's recall-matched comparison and its prompt-cache-aware cost.

Recall-matched: BM25, the embedding baseline and a recency window (the last k turns verbatim)
are run at every k of a sweep on the same requests; per depth, each strategy's tokens per
request are reported at the smallest k that reaches recall 1.0 (or, if none does, at the
smallest k reaching its best recall), next to FlowState's, full context's and the summary's
single points.

Tokens are the whole bill: prompt plus completion. The recall-matched points count both.

Cache-aware: every call of a strategy (the agent's and the memory upkeep's, in the order they
are sent) under the providers' cache rules (`prompt_cache`): the automatic cache (a cached
prefix only from 1,024 tokens, in steps of 128, read at 10% and at 50% of the input price) and
the breakpoint cache (writes at 1.25x, reads at 10%). Effective tokens = the input at
full-price equivalents plus the completion.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from typing import Any

from flowstate_bench import prices
from flowstate_bench.embedding import LOCAL_MODEL, Embedder, cosine
from flowstate_bench.prompt_cache import RATES, Billed, Layout, bill_calls, layout_of
from flowstate_bench.scenarios import Turn
from flowstate_bench.strategies import (
    Message,
    Prompted,
    bm25,
    replies,
    system_prompt,
    turn_messages,
    two_calls,
)

SWEEP_K = (1, 2, 3, 4, 6, 8, 12, 16, 24, 32)
DISCOUNTS = RATES
Recall = Callable[[Turn, Prompted], float | None]


def embedding_top_k(
    turns: Sequence[Turn], k: int, embedder: Embedder, vectors: list[list[float]] | None = None
) -> list[Prompted]:
    """MemoryArena's embedding baseline on the token scenario: each finished turn embedded
    once, the k most similar past turns (cosine > 0) in front of the request."""
    system, out = system_prompt(), []
    docs = [" ".join(m["content"] for m in turn_messages(t)) for t in turns]
    vectors = vectors if vectors is not None else embedder.embed(docs)
    queries = embedder.embed([t.text for t in turns])
    for i, turn in enumerate(turns):
        scores = [cosine(queries[i], vectors[j]) for j in range(i)]
        best = sorted(j for j in sorted(range(i), key=lambda j: -scores[j])[:k] if scores[j] > 0)
        context: list[Message] = [m for j in best for m in turn_messages(turns[j])]
        out.append(Prompted.of(two_calls(context, turn, system), replies=replies(turn)))
    return out


def recency_window(turns: Sequence[Turn], n: int) -> list[Prompted]:
    """The last n finished turns verbatim in front of the request: no retrieval, no model
    call. The floor any memory must beat on a scenario whose dependencies are recent."""
    system, out = system_prompt(), []
    for i, turn in enumerate(turns):
        context: list[Message] = [m for t in turns[max(0, i - n) : i] for m in turn_messages(t)]
        out.append(Prompted.of(two_calls(context, turn, system), replies=replies(turn)))
    return out


def sweep(
    turns: Sequence[Turn], ks: Sequence[int] = SWEEP_K, embedding_model: str = LOCAL_MODEL
) -> dict[str, dict[int, list[Prompted]]]:
    """BM25, embedding and recency-window runs at every k (the documents are embedded once,
    through litellm; for the window k is the number of past turns kept)."""
    embedder = Embedder(embedding_model)
    docs = [" ".join(m["content"] for m in turn_messages(t)) for t in turns]
    vectors = embedder.embed(docs)
    return {
        "bm25": {k: bm25(turns, k) for k in ks},
        "embedding": {k: embedding_top_k(turns, k, embedder, vectors) for k in ks},
        "recency_window": {k: recency_window(turns, k) for k in ks},
    }


def _point(turns: Sequence[Turn], runs: Sequence[Prompted], recall: Recall) -> dict[str, float]:
    recalls = [r for r in (recall(t, p) for t, p in zip(turns, runs, strict=True)) if r is not None]
    return {
        "tokens": round(statistics.fmean(p.tokens for p in runs), 1),
        "prompt_tokens": round(statistics.fmean(p.prompt_tokens for p in runs), 1),
        "completion_tokens": round(statistics.fmean(p.completion_tokens for p in runs), 1),
        "recall": round(statistics.fmean(recalls), 4) if recalls else 1.0,
    }


def recall_matched(
    turns: Sequence[Turn],
    fixed: dict[str, list[Prompted]],
    swept: dict[str, dict[int, list[Prompted]]],
    depth: int,
    recall: Recall,
) -> dict[str, Any]:
    """At one depth: every swept k's point, and per strategy the tokens it needs for recall
    1.0 (`reached`: True) or for its best recall (`reached`: False)."""
    turns = turns[:depth]
    curves = {
        name: {str(k): _point(turns, runs[:depth], recall) for k, runs in by_k.items()}
        for name, by_k in swept.items()
    }
    matched: dict[str, Any] = {}
    for name, curve in curves.items():
        best = max(p["recall"] for p in curve.values())
        k, p = next((k, p) for k, p in curve.items() if p["recall"] == best)
        matched[name] = {"k": int(k), **p, "reached": best >= 1.0}
    for name, runs in fixed.items():
        p = _point(turns, runs[:depth], recall)
        matched[name] = {"k": None, **p, "reached": p["recall"] >= 1.0}
    full = matched.get("full_context", {}).get("tokens")
    for m in matched.values():
        m["ratio_to_full_context"] = round(m["tokens"] / full, 4) if full else None
    return {"curves": curves, "matched": matched}


def call_costs(runs: Sequence[Prompted]) -> list[list[Billed]]:
    """Per request, per call in sending order (the agent's calls, then its memory upkeep):
    the call under both cache models (`prompt_cache`), every earlier call of the strategy
    within the cache's lifetime."""
    layouts: list[Layout] = []
    completions: list[int] = []
    for run in runs:
        parts = [*run.parts, *[None] * (len(run.calls) - len(run.parts))]
        layouts += [layout_of(c, p) for c, p in zip(run.calls, parts, strict=True)]
        layouts += [layout_of(c) for c in run.extra]
        completions += run.call_completions()
    billed = bill_calls(list(zip(layouts, completions, strict=True)))
    out, i = [], 0
    for run in runs:
        n = len(run.calls) + len(run.extra)
        out.append(billed[i : i + n])
        i += n
    return out


def _mean(values: Sequence[float], n: int) -> float:
    return round(sum(values) / n, 1)


def cache_costs(
    per_request: Sequence[Sequence[Billed]], rates: Sequence[float] = RATES
) -> dict[str, Any]:
    """Per request (means): prompt and completion tokens, the tokens each cache model bills
    at full-price equivalents, plus the completion (`effective_tokens`: the automatic cache
    at each read rate; `breakpoint_tokens`: writes at 1.25x, reads at 10%); the share of
    prompt tokens each reads from its cache; and the cost at the price of two named models."""
    calls = [c for request in per_request for c in request]
    n = max(len(per_request), 1)
    prompt = sum(c.tokens for c in calls)
    completion = sum(c.completion for c in calls)
    return {
        "prompt_tokens": _mean([prompt], n),
        "completion_tokens": _mean([completion], n),
        "tokens": _mean([prompt + completion], n),
        "cached_share": round(sum(c.cached for c in calls) / prompt, 4) if prompt else 0.0,
        "breakpoint_read_share": round(sum(c.read for c in calls) / prompt, 4) if prompt else 0.0,
        "effective_tokens": {
            f"{r:.0%}": _mean([c.effective_input(r) + c.completion for c in calls], n)
            for r in rates
        },
        "breakpoint_tokens": _mean([c.breakpoint_input + c.completion for c in calls], n),
        "cost_usd": prices.request_costs(calls, n),
    }


def cache_table(costs: dict[str, list[list[Billed]]], depth: int) -> dict[str, dict[str, Any]]:
    """`cache_costs` of every strategy's first `depth` requests, and each one's ratio to full
    context under the same model."""
    out = {name: cache_costs(per_request[:depth]) for name, per_request in costs.items()}
    full = out.get("full_context")
    for figures in out.values():
        figures["ratio_to_full_context"] = {
            **{
                r: round(v / full["effective_tokens"][r], 4) if full else None
                for r, v in figures["effective_tokens"].items()
            },
            "breakpoints": round(figures["breakpoint_tokens"] / full["breakpoint_tokens"], 4)
            if full
            else None,
        }
    return out
