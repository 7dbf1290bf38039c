"""Token economy: the same seeded requests through FlowState and the baselines.

One scenario of the deepest depth is generated; the session of depth D is its first D
requests, so every depth and every strategy sees exactly the same turns. Figures per depth:
mean tokens per request, prompt plus completion (every call of the request, memory upkeep
included), and each apart; the last request's tokens, recall (share of the needed fact
values present in the prompt that answers), model calls beyond the two the task itself
needs (read the ticket, answer), and of those the calls made only to write memory (a
summariser's; a FlowState step that carries nothing but a delta).
Then the comparison (`token_compare`): BM25 and the embedding baseline swept over k, the
tokens each needs for recall 1.0 per depth, and every strategy's cost under the providers'
cache rules (`prompt_cache`) and at two named models' prices (`prices`).
Everything is deterministic, so one run is the measurement.
"""

from __future__ import annotations

import statistics
import uuid
from collections.abc import Callable, Sequence
from typing import Any

from flowstate.api import FlowState
from flowstate.demo.runner import run_scripted_demo
from flowstate.demo.scenario import EXPECTED_TOTAL_EUR
from flowstate.engine.prompt_costs import fixed_price, total_parts
from flowstate.store import Store
from flowstate_bench import (
    flowstate_strategy,
    prices,
    prompt_cache,
    reader,
    token_compare,
    token_sweep,
)
from flowstate_bench.prompt_cache import Billed
from flowstate_bench.scenarios import Turn, scenario
from flowstate_bench.strategies import BASELINES, BM25_K, SUMMARY_BUDGET_TOKENS, Prompted

DEPTHS = (10, 25, 50, 100)
TASK_CALLS = 2  # read the ticket, then answer
STRATEGIES = (
    "flowstate",
    "flowstate_reader",
    "full_context",
    "bm25",
    "rolling_summary",
    "flowstate_no_psa",
)
EMBEDDING_K = 3  # MemoryArena's embedding baseline retrieves the top 3

Say = Callable[[str], None]


def recall(turn: Turn, prompted: Prompted) -> float | None:
    """Share of the needed facts whose value appears in the answering prompt."""
    if not turn.needs:
        return None
    text = "\n".join(m["content"] for m in prompted.prompts[-1])
    return sum(f.value in text for f in turn.needs) / len(turn.needs)


def depth_figures(turns: Sequence[Turn], runs: Sequence[Prompted]) -> dict[str, Any]:
    """Per request (means): tokens (prompt plus completion), each apart, and the rest."""
    tokens = [p.tokens for p in runs]
    recalls = [r for r in (recall(t, p) for t, p in zip(turns, runs, strict=True)) if r is not None]
    calls = [len(p.prompts) + len(p.extra_prompts) for p in runs]
    return {
        "tokens": round(statistics.fmean(tokens), 1),
        "prompt_tokens": round(statistics.fmean(p.prompt_tokens for p in runs), 1),
        "completion_tokens": round(statistics.fmean(p.completion_tokens for p in runs), 1),
        "last_request_tokens": tokens[-1],
        "total_tokens": sum(tokens),
        "extra_prompt_tokens": round(statistics.fmean(p.extra_prompt_tokens for p in runs), 1),
        "recall": round(statistics.fmean(recalls), 4) if recalls else 1.0,
        "llm_calls": round(statistics.fmean(calls), 3),
        "extra_llm_calls": round(statistics.fmean(c - TASK_CALLS for c in calls), 3),
        "memory_write_calls": round(statistics.fmean(p.memory_write_calls for p in runs), 3),
    }


def prompt_costs(runs: Sequence[Prompted]) -> dict[str, Any]:
    """What FlowState's calls cost by prompt part (mean per request and per call, the whole
    bill), the fixed price of a call, its completion, and the share of its prompt a provider
    reads from its cache under the real rules (`prompt_cache`)."""
    calls = [(p, s) for run in runs for p, s in zip(run.parts, run.calls, strict=True)]
    total = total_parts(calls)
    per_call = {part: round(total[part] / len(calls), 1) for part in total}
    billed = [c for request in token_compare.call_costs(runs) for c in request]
    prompt = sum(c.tokens for c in billed)
    return {
        "parts": {part: round(total[part] / len(runs), 1) for part in total},
        "parts_per_call": per_call,
        "fixed_price_per_call": round(fixed_price(per_call), 1),
        "completion_tokens": round(sum(c.completion for c in billed) / len(runs), 1),
        "cached_share": round(sum(c.cached for c in billed) / prompt, 4) if prompt else 0.0,
        "largest_shared_prefix": max((c.shared for c in billed), default=0),
    }


def demo_figures(store: Store) -> dict[str, Any]:
    """`flowstate demo` in a namespace of its own, beside the plain tool-calling agent: its
    totals, and whether it still reached the expected answer."""
    name = f"bench_demo_{uuid.uuid4().hex[:8]}"
    fs = FlowState(store, name)
    try:
        demo = run_scripted_demo(fs, name=name)
    finally:
        fs.repository.forget_namespace(force=True)
    return demo.as_dict()["totals"] | {
        "rows": [
            {
                "request": r.request_id,
                "flowstate_tokens": r.flowstate.tokens,
                "plain_tokens": r.plain.tokens,
                "calls": r.flowstate.calls,
                "plain_calls": r.plain.calls,
            }
            for r in demo.rows
        ],  # fmt: skip
        "calls": demo.flowstate.calls,
        "same_answer": f"total {EXPECTED_TOTAL_EUR} EUR" in demo.rows[-1].answer,
    }


def strategies_of(store: Store, turns: Sequence[Turn]) -> tuple[Any, dict[str, list[Prompted]]]:
    """Every strategy's calls on these turns: FlowState (the oracle and the reader, through
    the real engine), FlowState without PSA, and the baselines."""
    fs = flowstate_strategy.run(store, turns)
    reader = flowstate_strategy.run(store, turns, agent_kind="reader", with_no_psa=False)
    per_strategy = {
        "flowstate": fs.psa,
        "flowstate_reader": reader.psa,
        "flowstate_no_psa": fs.no_psa,
    }
    for name, build in BASELINES.items():
        per_strategy[name] = build(turns)
    return fs, per_strategy


def call_kinds(runs: Sequence[Prompted]) -> dict[str, Any]:
    """FlowState's calls by kind (a request's first call, its later ones): per call, the
    parts of the prompt, the fixed price, the completion, and the prefix a provider caches
    under the real rules (the automatic cache's cached tokens; the breakpoint cache's reads)."""
    kinds: dict[str, list[tuple[Any, Any, Billed]]] = {"first": [], "later": []}
    billed = token_compare.call_costs(runs)
    for run, bills in zip(runs, billed, strict=True):
        for i, (prompt, sent) in enumerate(zip(run.parts, run.calls, strict=True)):
            kinds["first" if i == 0 else "later"].append((prompt, sent, bills[i]))
    out = {}
    for kind, calls in kinds.items():
        if calls:
            n = len(calls)
            total = total_parts((p, s) for p, s, _ in calls)
            per_call = {part: round(v / n, 1) for part, v in total.items()}
            bills = [b for _, _, b in calls]
            out[kind] = {
                "calls": n,
                "parts": per_call,
                "fixed_price": round(fixed_price(per_call), 1),
                "prompt_tokens": round(sum(b.tokens for b in bills) / n, 1),
                "completion_tokens": round(sum(b.completion for b in bills) / n, 1),
                "shared_prefix": round(sum(b.shared for b in bills) / n, 1),
                "cached_prefix": round(sum(b.cached for b in bills) / n, 1),
                "breakpoint_read": round(sum(b.read for b in bills) / n, 1),
                "breakpoint_written": round(sum(b.written for b in bills) / n, 1),
            }
    return out


def run_suite(
    store: Store,
    depths: Sequence[int] = DEPTHS,
    seed: int = 0,
    say: Say = print,
    sweep: bool = True,
) -> dict[str, Any]:
    deepest = max(depths)
    turns = scenario(deepest, seed)
    say(f"token suite: {deepest} requests through the engine (scripted model via litellm)")
    fs, per_strategy = strategies_of(store, turns)
    by_depth: dict[str, Any] = {}
    for depth in sorted(depths):
        figures = {
            name: depth_figures(turns[:depth], per_strategy[name][:depth]) for name in STRATEGIES
        }
        full = figures["full_context"]
        for f in figures.values():
            f["ratio_to_full_context"] = round(f["tokens"] / full["tokens"], 4)
            f["last_request_ratio"] = round(
                f["last_request_tokens"] / full["last_request_tokens"], 4
            )
        figures["flowstate"]["index_tokens_max"] = max(fs.index_tokens[:depth])
        figures["flowstate"]["index_budget"] = fs.index_budget
        for name in ("flowstate", "flowstate_reader"):  # both agents: parts and call kinds
            runs = per_strategy[name][:depth]
            figures[name] |= prompt_costs(runs) | {"call_kinds": call_kinds(runs)}
        by_depth[str(depth)] = figures
    say("token suite: BM25, embedding and recency window swept over k; prompt-cache-aware cost")
    comparison = compare(turns, per_strategy, depths)
    say("token suite: the far-back variant (needs reach any earlier request)")
    far_turns = scenario(deepest, seed, reach=None)
    _, far_strategies = strategies_of(store, far_turns)
    far_back = compare(far_turns, far_strategies, depths)
    series = {name: [p.tokens for p in runs] for name, runs in per_strategy.items()}
    swept: dict[str, Any] = {}
    if sweep:
        say("token suite: index budget and prefetch swept (oracle and reader)")
        swept = token_sweep.sweep(store, turns, sorted(depths), recall)
    say("token suite: the demo's eight requests")
    return {
        "by_depth": by_depth,
        **comparison,
        "far_back": far_back,
        "sweep": swept,
        "first_request_ratio": round(series["flowstate"][0] / series["full_context"][0], 4),
        "demo": demo_figures(store),
        "series": series,
        "index_tokens": fs.index_tokens,
        "settings": {
            "seed": seed,
            "requests": deepest,
            "bm25_k": BM25_K,
            "summary_budget_tokens": SUMMARY_BUDGET_TOKENS,
            "index_budget_tokens": fs.index_budget,
            "engine_seconds": round(fs.seconds, 1),
            "flowstate": "real engine + Neo4j, ScriptedModel.policy through litellm; the oracle "
            "opens exactly what a request needs",
            "flowstate_reader": "the same engine; the reader opens only what the prompt shows, "
            f"ranked by lexical match, at most {reader.DEFAULT_K} ids per step",
            "flowstate_no_psa": "the engine's prompt builder with every past state revealed",
            "sweep_k": list(token_compare.SWEEP_K),
            "embedding": f"{EMBEDDING_K} most similar past turns, {token_compare.LOCAL_MODEL} "
            "through litellm",
            "cache_discounts": list(token_compare.DISCOUNTS),
            "cache_rules": {
                "min_cached_tokens": prompt_cache.MIN_CACHED,
                "step_tokens": prompt_cache.STEP,
                "breakpoint_write_rate": prompt_cache.WRITE_RATE,
                "breakpoint_read_rate": prompt_cache.READ_RATE,
            },
            "prices": prices.described(),
            "counted": "the whole bill of every call: messages, reply schema, tool definitions "
            "(the baselines' as compact JSON schemas), and its completion; tokens = prompt + "
            "completion",
        },
    }


FIXED = ("flowstate", "flowstate_reader", "full_context", "rolling_summary", "flowstate_no_psa")


def compare(
    turns: Sequence[Turn], per_strategy: dict[str, list[Prompted]], depths: Sequence[int]
) -> dict[str, Any]:
    """The recall-matched table per depth and the cache-aware cost per depth: every strategy
    with one setting, and each swept one at its default k and at the k it needs for recall
    1.0 at that depth (`<name>@<k>`)."""
    swept = token_compare.sweep(turns)
    fixed = {n: per_strategy[n] for n in FIXED}
    ordered = sorted(depths)
    matched = {
        str(d): token_compare.recall_matched(turns, fixed, swept, d, recall) for d in ordered
    }
    runs = {**per_strategy, "embedding": swept["embedding"][EMBEDDING_K]}
    costs = {name: token_compare.call_costs(r) for name, r in runs.items()}
    cache = {}
    for d in ordered:
        at_depth = dict(costs)
        for name in swept:
            k = matched[str(d)]["matched"][name]["k"]
            at_depth[f"{name}@{k}"] = token_compare.call_costs(swept[name][k])
        cache[str(d)] = token_compare.cache_table(at_depth, d)
    return {"recall_matched": matched, "cache": cache}
