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
    header = ["depth", "strategy", "prompt tokens / request", "vs full context",
              "last request", "recall", "extra LLM calls", "of them to write memory"]  # fmt: skip
    rows = []
    for depth, figures in tokens["by_depth"].items():
        for key, f in figures.items():
            rows.append(
                [
                    depth,
                    name(key),
                    f"{f['prompt_tokens']:,.0f}",
                    f"{f['ratio_to_full_context']:.1%}",
                    f"{f['last_request_prompt_tokens']:,} ({f['last_request_ratio']:.1%})",
                    f"{f['recall']:.2f}",
                    f"{f['extra_llm_calls']:g}",
                    f"{f.get('memory_write_calls', 0):g}",
                ]
            )
    return table(header, rows)


def parts_table(tokens: dict[str, Any]) -> list[str]:
    """FlowState's prompt tokens per request by part, and the share a prompt cache reuses."""
    depths = {d: f["flowstate"] for d, f in tokens["by_depth"].items() if "parts" in f["flowstate"]}
    if not depths:
        return []
    names = list(next(iter(depths.values()))["parts"])
    header = ["depth", *[n.replace("_", " ") for n in names], "repeated prefix"]
    rows = [
        [d, *[f"{f['parts'][n]:,.0f}" for n in names], f"{f['prefix_share']:.0%}"]
        for d, f in depths.items()
    ]
    demo = tokens.get("demo")
    if demo:
        n = max(len(demo["rows"]), 1)
        rows.append(
            [
                "demo",
                *[f"{demo['parts'][p] / n:,.0f}" for p in names],
                f"{demo['prefix_share']:.0%}",
            ]
        )
    return table(header, rows)


def recall_matched_table(tokens: dict[str, Any]) -> list[str]:
    """Per depth and strategy: the tokens needed for recall 1.0 (k: the smallest that gets
    there), or the best recall reached and what it costs."""
    header = ["depth", "strategy", "k", "prompt tokens / request", "vs full context", "recall"]
    rows = []
    for depth, block in tokens.get("recall_matched", {}).items():
        for key, m in block["matched"].items():
            recall = f"{m['recall']:.2f}" + ("" if m["reached"] else " (best reached)")
            rows.append(
                [
                    depth,
                    name(key),
                    "-" if m["k"] is None else str(m["k"]),
                    f"{m['prompt_tokens']:,.0f}",
                    f"{m['ratio_to_full_context']:.1%}",
                    recall,
                ]
            )
    return table(header, rows) if rows else []


def cache_cost_table(tokens: dict[str, Any]) -> list[str]:
    """Per depth and strategy: repeated prefix, and effective prompt tokens per request when
    cached input costs 10% / 50% of the full price (share of full context's)."""
    header = ["depth", "strategy", "prompt tokens / request", "repeated prefix (mean per call)"]
    discounts: list[str] = []
    rows = []
    for depth, per in tokens.get("cache", {}).items():
        for key, f in per.items():
            discounts = list(f["effective_prompt_tokens"])
            cells = [
                f"{f['effective_prompt_tokens'][d]:,.0f} ({f['ratio_to_full_context'][d]:.0%})"
                for d in discounts
            ]
            rows.append(
                [
                    depth,
                    name(key),
                    f"{f['prompt_tokens']:,.0f}",
                    f"{f['prefix_share']:.0%}",
                    *cells,
                ]
            )
    header += [f"effective tokens, cached at {d}" for d in discounts]
    return table(header, rows) if rows else []


def sweep_table(sweep: dict[str, Any], setting: str, label: str) -> list[str]:
    """Tokens per request, calls and recall at each value of one swept setting, per agent."""
    by_agent = sweep.get(setting) or {}
    rows = []
    for agent, by_value in by_agent.items():
        for value, by_depth in by_value.items():
            cells = [
                f"{p['prompt_tokens']:,.0f} / {p['llm_calls']:.2f} / {p['recall']:.2f}"
                for p in by_depth.values()
            ]
            rows.append([agent, value, *cells])
    if not rows:
        return []
    depths = list(next(iter(next(iter(by_agent.values())).values())))
    header = ["agent", label, *[f"depth {d}: tokens / calls / recall" for d in depths]]
    return table(header, rows)


def call_kind_table(tokens: dict[str, Any]) -> list[str]:
    """FlowState's calls by kind at each depth: prompt parts per call and the fixed price."""
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
                ]  # fmt: skip
            )
    header = ["depth", "call", "calls", *[p.replace("_", " ") for p in parts], "fixed price"]
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
                "the schema). Repeated prefix: the mean share of a call's prompt that repeats "
                "the previous call's byte for byte, which provider prompt caching can bill at "
                "the cached rate.", "", *parts]  # fmt: skip
    kinds = call_kind_table(tokens)
    if kinds:
        out += ["", "FlowState's calls by kind: tokens per call by part, and the fixed price "
                "(protocol, reply format, tools, framing).", "", *kinds]  # fmt: skip
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
                    "Every call (agent and memory upkeep, in sending order) against the previous "
                    "call: the byte-identical prefix, schema first, is billed at the cached rate. "
                    "Effective tokens = uncached + rate x cached, per request (share of full "
                    "context's at the same rate). `k = n`: the swept strategies at the k they "
                    "need for recall 1.0 at that depth.", "", *cache]  # fmt: skip
    sweep = tokens.get("sweep") or {}
    if sweep:
        chosen = sweep.get("chosen", {})
        out += ["", "## FlowState's settings swept", "",
                f"Defaults: index budget {chosen.get('index_budget_tokens')} tokens, prefetch "
                f"{chosen.get('prefetch_states')} states.", "",
                *sweep_table(sweep, "index_budget", "index budget"), "",
                *sweep_table(sweep, "prefetch", "prefetched states")]  # fmt: skip
    return out
