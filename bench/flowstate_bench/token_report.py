"""The token suite's chapter of the report: its tables, written from `report.json`'s
`tokens`, so the figures people read are the ones the run measured."""

from __future__ import annotations

from typing import Any

STRATEGY_NAMES = {
    "flowstate": "FlowState",
    "flowstate_reader": "FlowState, reader agent",
    "full_context": "Full context",
    "bm25": "BM25 top-k",
    "rolling_summary": "Rolling summary",
    "flowstate_no_psa": "FlowState without PSA",
    "embedding": "Embedding top-k",
    "recency_window": "Recency window (last k turns)",
}


def table(header: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return lines + ["| " + " | ".join(row) + " |" for row in rows]


def name(key: str) -> str:
    """A strategy's name; `bm25@16` reads as BM25 at k = 16."""
    base, _, k = key.partition("@")
    label = STRATEGY_NAMES.get(base, base)
    return f"{label}, k = {k}" if k else label


def token_table(tokens: dict[str, Any]) -> list[str]:
    header = ["depth", "strategy", "tokens / request", "prompt + completion", "vs full context",
              "last request", "recall", "extra LLM calls", "of them to write memory"]  # fmt: skip
    rows = []
    for depth, figures in tokens["by_depth"].items():
        for key, f in figures.items():
            rows.append(
                [
                    depth,
                    name(key),
                    f"{f['tokens']:,.0f}",
                    f"{f['prompt_tokens']:,.0f} + {f['completion_tokens']:,.0f}",
                    f"{f['ratio_to_full_context']:.1%}",
                    f"{f['last_request_tokens']:,} ({f['last_request_ratio']:.1%})",
                    f"{f['recall']:.2f}",
                    f"{f['extra_llm_calls']:g}",
                    f"{f.get('memory_write_calls', 0):g}",
                ]
            )
    return table(header, rows)


def parts_table(tokens: dict[str, Any]) -> list[str]:
    """FlowState's prompt tokens per request by part, its completion, and the share of its
    prompt the automatic cache reads under the real rules."""
    depths = {d: f["flowstate"] for d, f in tokens["by_depth"].items() if "parts" in f["flowstate"]}
    if not depths:
        return []
    names = list(next(iter(depths.values()))["parts"])
    header = ["depth", *[n.replace("_", " ") for n in names], "completion", "cached (real rules)",
              "largest shared prefix"]  # fmt: skip
    rows = [
        [
            d,
            *[f"{f['parts'][n]:,.0f}" for n in names],
            f"{f['completion_tokens']:,.0f}",
            f"{f['cached_share']:.0%}",
            f"{f['largest_shared_prefix']:,}",
        ]  # fmt: skip
        for d, f in depths.items()
    ]
    return table(header, rows)


def recall_matched_table(tokens: dict[str, Any]) -> list[str]:
    """Per depth and strategy: the tokens needed for recall 1.0 (k: the smallest that gets
    there), or the best recall reached and what it costs."""
    header = ["depth", "strategy", "k", "tokens / request", "prompt + completion",
              "vs full context", "recall"]  # fmt: skip
    rows = []
    for depth, block in tokens.get("recall_matched", {}).items():
        for key, m in block["matched"].items():
            recall = f"{m['recall']:.2f}" + ("" if m["reached"] else " (best reached)")
            rows.append(
                [
                    depth,
                    name(key),
                    "-" if m["k"] is None else str(m["k"]),
                    f"{m['tokens']:,.0f}",
                    f"{m['prompt_tokens']:,.0f} + {m['completion_tokens']:,.0f}",
                    f"{m['ratio_to_full_context']:.1%}",
                    recall,
                ]
            )
    return table(header, rows) if rows else []


def cache_cost_table(tokens: dict[str, Any]) -> list[str]:
    """Per depth and strategy: effective tokens per request (input at full-price
    equivalents plus completion) under the automatic cache at each read rate and under the
    breakpoint cache, with the share of full context's, and the share of prompt tokens each
    reads from its cache."""
    header = ["depth", "strategy", "tokens / request"]
    rates: list[str] = []
    rows = []
    for depth, per in tokens.get("cache", {}).items():
        for key, f in per.items():
            rates = list(f["effective_tokens"])
            ratio = f["ratio_to_full_context"]
            cells = [f"{f['effective_tokens'][r]:,.0f} ({ratio[r]:.0%})" for r in rates]
            rows.append(
                [
                    depth,
                    name(key),
                    f"{f['tokens']:,.0f}",
                    *cells,
                    f"{f['breakpoint_tokens']:,.0f} ({ratio['breakpoints']:.0%})",
                    f"{f['cached_share']:.0%} / {f['breakpoint_read_share']:.0%}",
                ]
            )
    header += [f"automatic cache, read at {r}" for r in rates]
    header += ["breakpoint cache", "prompt read from cache (automatic / breakpoints)"]
    return table(header, rows) if rows else []


def price_table(tokens: dict[str, Any]) -> list[str]:
    """Per depth and strategy: USD per 1,000 requests on each named model, without a cache
    and with its provider's."""
    rows, models = [], []
    for depth, per in tokens.get("cache", {}).items():
        for key, f in per.items():
            costs = f.get("cost_usd") or {}
            models = list(costs)
            cells = [f"{c['uncached'] * 1000:,.2f} / {c['cached'] * 1000:,.2f}"
                     for c in costs.values()]  # fmt: skip
            rows.append([depth, name(key), *cells])
    if not rows:
        return []
    header = ["depth", "strategy", *[f"{m}: USD per 1,000 requests (no cache / cached)"
                                     for m in models]]  # fmt: skip
    return table(header, rows)


def sweep_table(sweep: dict[str, Any], setting: str, label: str) -> list[str]:
    """Tokens per request, calls and recall at each value of one swept setting, per agent."""
    by_agent = sweep.get(setting) or {}
    rows = []
    for agent, by_value in by_agent.items():
        for value, by_depth in by_value.items():
            cells = [
                f"{p['tokens']:,.0f} / {p['llm_calls']:.2f} / {p['recall']:.2f}"
                for p in by_depth.values()
            ]
            rows.append([agent, value, *cells])
    if not rows:
        return []
    depths = list(next(iter(next(iter(by_agent.values())).values())))
    header = ["agent", label, *[f"depth {d}: tokens / calls / recall" for d in depths]]
    return table(header, rows)


def resend_table(sweep: dict[str, Any]) -> list[str]:
    """Per agent and index resend, per depth: tokens per request, recall, and the bill with
    cached input at 10% and 50% under the automatic cache's real rules."""
    rows = []
    for agent, by_mode in (sweep.get("index_on_later_calls") or {}).items():
        for mode, by_depth in by_mode.items():
            for depth, p in by_depth.items():
                effective = p["effective_tokens"]
                rows.append([agent, mode, depth, f"{p['tokens']:,.0f}", f"{p['recall']:.2f}",
                             f"{p['llm_calls']:.2f}", f"{effective['10%']:,.0f}",
                             f"{effective['50%']:,.0f}"])  # fmt: skip
    if not rows:
        return []
    header = ["agent", "index on later calls", "depth", "tokens", "recall", "calls",
              "cached at 10%", "cached at 50%"]  # fmt: skip
    return table(header, rows)


def call_kind_table(tokens: dict[str, Any]) -> list[str]:
    """FlowState's calls by kind at each depth: prompt parts per call, the fixed price, the
    completion, and the prefix each cache model reuses under the real rules."""
    rows = []
    parts: list[str] = []
    for depth, figures in tokens["by_depth"].items():
        for kind, f in (figures["flowstate"].get("call_kinds") or {}).items():
            parts = list(f["parts"])
            rows.append(
                [
                    depth,
                    kind,
                    str(f["calls"]),
                    *[f"{f['parts'][p]:,.0f}" for p in parts],
                    f"{f['fixed_price']:,.0f}",
                    f"{f['completion_tokens']:,.0f}",
                    f"{f['shared_prefix']:,.0f}",
                    f"{f['cached_prefix']:,.0f}",
                    f"{f['breakpoint_read']:,.0f} / {f['breakpoint_written']:,.0f}",
                ]  # fmt: skip
            )
    header = ["depth", "call", "calls", *[p.replace("_", " ") for p in parts], "fixed price",
              "completion", "shared prefix", "cached (automatic)",
              "breakpoints: read / written"]  # fmt: skip
    return table(header, rows) if rows else []


def sections(tokens: dict[str, Any]) -> list[str]:
    """The token chapter of `report.md`."""
    s = tokens["settings"]
    out = [
        "",
        "## Tokens (same seeded requests for every strategy, the whole bill counted)",
        "",
        f"{s['requests']} requests, seed {s['seed']}; each needs facts from 1-4 requests "
        f"earlier. Counted: {s.get('counted', 'the messages')}. BM25 k={s['bm25_k']}; rolling "
        f"summary bounded at {s['summary_budget_tokens']} tokens by an oracle summariser (upper "
        f"bound on its recall); index budget {s['index_budget_tokens']} tokens. FlowState: "
        f"{s['flowstate']}; reader: {s.get('flowstate_reader', '-')}; without PSA: "
        f"{s['flowstate_no_psa']}. The baselines have nothing to open: their reader rows "
        "would equal these.",
        "",
        *token_table(tokens),
    ]
    parts = parts_table(tokens)
    if parts:
        out += ["", "FlowState's prompt tokens per request, by part (every call of the request "
                "summed; framing is the chat format's per-message tokens, headers, blank lines "
                "and the step line; reply format is what the client sends beyond the prompt, "
                "the schema), its completion, the share of its prompt the automatic cache reads "
                "under the real rules, and the largest prefix a call shares with an earlier "
                "one.", "", *parts]  # fmt: skip
    kinds = call_kind_table(tokens)
    if kinds:
        out += ["", "FlowState's calls by kind, per call: tokens by part, the fixed price "
                "(protocol, reply format, tools, framing), the completion, the prefix shared "
                "with an earlier call, what the automatic cache reads of it (from 1,024 tokens, "
                "in steps of 128), and what the breakpoint cache reads and writes.", "",
                *kinds]  # fmt: skip
    for title, block, text in (
        ("Recall-matched tokens", tokens,
         "BM25, the embedding baseline and a recency window (last k turns) swept over k "
         f"({', '.join(map(str, s.get('sweep_k', [])))}); each row is the smallest k that "
         "reaches recall 1.0, or the smallest reaching the best recall. The others have one "
         "setting each."),
        ("Recall-matched tokens, far-back variant", tokens.get("far_back") or {},
         "The same comparison on requests that need facts from any earlier request (1 to "
         "depth-1 back), where a recency window must grow with the history."),
    ):  # fmt: skip
        matched = recall_matched_table(block)
        if matched:
            out += ["", f"## {title}", "", text, "", *matched]
    for title, block in (("", tokens), (", far-back variant", tokens.get("far_back") or {})):
        cache = cache_cost_table(block)
        if cache:
            out += ["", f"## Prompt-cache-aware cost{title}", "",
                    "Every call (agent and memory upkeep, in sending order) under the providers' "
                    "rules, every earlier call within the cache's lifetime. Automatic cache "
                    "(OpenAI): the longest prefix shared with an earlier call, from 1,024 tokens "
                    "and in steps of 128, read at the given rate. Breakpoint cache (Anthropic): "
                    "prefixes ending at the system part, the stable part and the prompt's end, "
                    "from 1,024 tokens, written at 1.25x and read at 10%. Effective tokens = the "
                    "input at full-price equivalents plus the completion, per request (share of "
                    "full context's under the same model). `k = n`: the swept strategies at the "
                    "k they need for recall 1.0 at that depth.", "", *cache]  # fmt: skip
        priced = price_table(block)
        if priced:
            models = ", ".join(f"{m} ({v['cache']} cache)"
                               for m, v in (s.get("prices") or {}).items())  # fmt: skip
            out += ["", f"At litellm's prices{title}: {models}; tokens counted with "
                    "o200k_base.", "", *priced]  # fmt: skip
    sweep = tokens.get("sweep") or {}
    if sweep:
        chosen = sweep.get("chosen", {})
        out += ["", "## FlowState's settings swept", "",
                f"Defaults: index budget {chosen.get('index_budget_tokens')} tokens, prefetch "
                f"{chosen.get('prefetch_states')} states, the index on later calls: "
                f"{chosen.get('index_on_later_calls')}.", "",
                *sweep_table(sweep, "index_budget", "index budget"), "",
                *sweep_table(sweep, "prefetch", "prefetched states"), "",
                *resend_table(sweep)]  # fmt: skip
    return out
