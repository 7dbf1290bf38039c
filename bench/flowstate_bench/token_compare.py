"""The token suite's recall-matched comparison and its prompt-cache-aware cost.

Recall-matched: BM25, the embedding baseline and a recency window (the last k turns verbatim)
are run at every k of a sweep on the same requests; per depth, each strategy's tokens per
request are reported at the smallest k that reaches recall 1.0 (or, if none does, at the
smallest k reaching its best recall), next to FlowState's, full context's and the summary's
single points.

Cache-aware: a provider bills the part of a prompt that repeats an earlier prompt byte for
byte at a cached rate. Per strategy, every call's prompt (the agent's and the memory upkeep's,
in the order they are sent) is compared with the previous call's; the shared prefix is billed
at `discount` times the input price, the rest at the full price. Effective prompt tokens =
uncached + discount x cached; reported at 10% and 50% (the usual cached-read rates).
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from typing import Any

from flowstate.engine.prompt_costs import shared_prefix
from flowstate_bench.embedding import LOCAL_MODEL, Embedder, cosine
from flowstate_bench.scenarios import Turn
from flowstate_bench.strategies import (
    Message,
    Prompted,
    bm25,
    system_prompt,
    turn_messages,
    two_calls,
)

SWEEP_K = (1, 2, 3, 4, 6, 8, 12, 16, 24, 32)
DISCOUNTS = (0.1, 0.5)
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
        out.append(Prompted.of(two_calls(context, turn, system)))
    return out


def recency_window(turns: Sequence[Turn], n: int) -> list[Prompted]:
    """The last n finished turns verbatim in front of the request: no retrieval, no model
    call. The floor any memory must beat on a scenario whose dependencies are recent."""
    system, out = system_prompt(), []
    for i, turn in enumerate(turns):
        context: list[Message] = [m for t in turns[max(0, i - n) : i] for m in turn_messages(t)]
        out.append(Prompted.of(two_calls(context, turn, system)))
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
        "prompt_tokens": round(statistics.fmean(p.prompt_tokens for p in runs), 1),
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
    full = matched.get("full_context", {}).get("prompt_tokens")
    for m in matched.values():
        m["ratio_to_full_context"] = round(m["prompt_tokens"] / full, 4) if full else None
    return {"curves": curves, "matched": matched}


def call_costs(runs: Sequence[Prompted]) -> list[list[tuple[int, int]]]:
    """Per request, per call in sending order: (prompt tokens, tokens shared with the
    previous call's prompt as a byte-identical prefix)."""
    calls = [c for run in runs for c in [*run.calls, *run.extra]]
    totals = [c.tokens() for c in calls]
    cached = [0] + [
        min(shared_prefix(prev, cur).tokens, total)
        for prev, cur, total in zip(calls, calls[1:], totals[1:], strict=False)
    ]
    out, i = [], 0
    for run in runs:
        n = len(run.calls) + len(run.extra)
        out.append(list(zip(totals[i : i + n], cached[i : i + n], strict=True)))
        i += n
    return out


def cache_costs(
    per_request: Sequence[Sequence[tuple[int, int]]], discounts: Sequence[float] = DISCOUNTS
) -> dict[str, Any]:
    """Mean prefix share of a call, and effective prompt tokens per request at each discount."""
    calls = [c for request in per_request for c in request]
    shares = [c / t for t, c in calls[1:] if t]
    total = sum(t for t, _ in calls)
    n = max(len(per_request), 1)
    return {
        "prefix_share": round(statistics.fmean(shares), 4) if shares else 0.0,
        "cached_share_of_tokens": round(sum(c for _, c in calls) / total, 4) if total else 0.0,
        "prompt_tokens": round(total / n, 1),
        "effective_prompt_tokens": {
            f"{d:.0%}": round(sum(t - c * (1 - d) for t, c in calls) / n, 1) for d in discounts
        },
    }


def cache_table(
    costs: dict[str, list[list[tuple[int, int]]]], depth: int
) -> dict[str, dict[str, Any]]:
    """`cache_costs` of every strategy's first `depth` requests, and each one's ratio to full
    context at the same discount."""
    out = {name: cache_costs(per_request[:depth]) for name, per_request in costs.items()}
    full = out.get("full_context")
    for figures in out.values():
        figures["ratio_to_full_context"] = {
            d: round(v / full["effective_prompt_tokens"][d], 4) if full else None
            for d, v in figures["effective_prompt_tokens"].items()
        }
    return out
