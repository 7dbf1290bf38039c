"""The report: one JSON document for machines, one Markdown page for people."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

ENGINE_ROWS = (
    ("step_ms", "step critical path (rules + reveal + prompt; the draft saved meanwhile)"),
    ("step_plain_ms", "  a step that reveals nothing"),
    ("step_reveal_ms", "  a step that reveals 8 states"),
    ("bolt_rtt_ms", "bare RETURN 1 round trip"),
    ("write_tx_ms", "bare single-node write transaction"),
    ("commit_ms", "commit (50 states, 150 relations, 20 observations)"),
    ("index_update_ms", "index update after a commit"),
    ("index_render_ms", "index render per step (cached between commits)"),
    ("index_fetch_render_ms", "index load + render (agent start)"),
    ("reveal_ms", "reveal of 8 states"),
    ("delta_apply_ms", "delta of 10 ops: check + apply (pure)"),
    ("request_start_ms", "request start (index refresh, seq, draft)"),
    ("request_finish_ms", "request finish (final step, commit, index)"),
)
STRATEGY_NAMES = {
    "flowstate": "FlowState",
    "full_context": "Full context",
    "bm25": "BM25 top-k",
    "rolling_summary": "Rolling summary",
    "flowstate_no_psa": "FlowState without PSA",
    "embedding": "Embedding top-k",
    "recency_window": "Recency window (last k turns)",
}


def write_json(report: dict[str, Any], path: Path) -> None:
    path.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return lines + ["| " + " | ".join(r) + " |" for r in rows]


def engine_table(engine: dict[str, Any]) -> list[str]:
    sizes = list(engine)
    header = ["ms (p50 / p95 / p99)", *[f"{s} states" for s in sizes]]
    rows = []
    for key, label in ENGINE_ROWS:
        cells = []
        for s in sizes:
            v = engine[s].get(key)
            cells.append(f"{v['p50']:.2f} / {v['p95']:.2f} / {v['p99']:.2f}" if v else "-")
        rows.append([label, *cells])
    rows.append(["index tokens (budget)", *[_index(engine[s]["index"]) for s in sizes]])
    rows.append(["peak RSS of the process (MB)", *[str(engine[s]["peak_rss_mb"]) for s in sizes]])
    rows.append(["namespace build", *[_build(engine[s]["build"]) for s in sizes]])
    return _table(header, rows)


def _index(index: dict[str, Any]) -> str:
    return f"{index['tokens']} ({index['budget']}); {index['collapsed_requests']} collapsed"


def _build(build: dict[str, Any]) -> str:
    if "requests_per_s" in build:  # stopped by --build-minutes
        return f"{build['seconds']} s, out of time ({build['requests_per_s']} requests/s)"
    if build["reused"]:
        return "reused"
    return f"{build['seconds']} s, commit p50 {build['commit_ms']['p50']:.0f} ms"


def token_table(tokens: dict[str, Any]) -> list[str]:
    header = ["depth", "strategy", "prompt tokens / request", "vs full context",
              "last request", "recall", "extra LLM calls", "of them to write memory"]  # fmt: skip
    rows = []
    for depth, figures in tokens["by_depth"].items():
        for name, f in figures.items():
            rows.append(
                [
                    depth,
                    STRATEGY_NAMES.get(name, name),
                    f"{f['prompt_tokens']:,.0f}",
                    f"{f['ratio_to_full_context']:.1%}",
                    f"{f['last_request_prompt_tokens']:,} ({f['last_request_ratio']:.1%})",
                    f"{f['recall']:.2f}",
                    f"{f['extra_llm_calls']:g}",
                    f"{f.get('memory_write_calls', 0):g}",
                ]
            )
    return _table(header, rows)


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
    return _table(header, rows)


def recall_matched_table(tokens: dict[str, Any]) -> list[str]:
    """Per depth and strategy: the tokens needed for recall 1.0 (k: the smallest that gets
    there), or the best recall reached and what it costs."""
    header = ["depth", "strategy", "k", "prompt tokens / request", "vs full context", "recall"]
    rows = []
    for depth, block in tokens.get("recall_matched", {}).items():
        for name, m in block["matched"].items():
            recall = f"{m['recall']:.2f}" + ("" if m["reached"] else " (best reached)")
            rows.append(
                [
                    depth,
                    STRATEGY_NAMES.get(name, name),
                    "-" if m["k"] is None else str(m["k"]),
                    f"{m['prompt_tokens']:,.0f}",
                    f"{m['ratio_to_full_context']:.1%}",
                    recall,
                ]
            )
    return _table(header, rows) if rows else []


def cache_cost_table(tokens: dict[str, Any]) -> list[str]:
    """Per depth and strategy: repeated prefix, and effective prompt tokens per request when
    cached input costs 10% / 50% of the full price (share of full context's)."""
    header = ["depth", "strategy", "prompt tokens / request", "repeated prefix (mean per call)"]
    discounts: list[str] = []
    rows = []
    for depth, per in tokens.get("cache", {}).items():
        for name, f in per.items():
            discounts = list(f["effective_prompt_tokens"])
            cells = [
                f"{f['effective_prompt_tokens'][d]:,.0f} ({f['ratio_to_full_context'][d]:.0%})"
                for d in discounts
            ]
            rows.append(
                [
                    depth,
                    STRATEGY_NAMES.get(name, name),
                    f"{f['prompt_tokens']:,.0f}",
                    f"{f['prefix_share']:.0%}",
                    *cells,
                ]
            )
    header += [f"effective tokens, cached at {d}" for d in discounts]
    return _table(header, rows) if rows else []


def cli_table(cli: dict[str, Any]) -> list[str]:
    """Start-up of each command (median ms) and its multiple of `import click`."""
    click = cli["median_ms"]["python -c 'import click'"]
    rows = [[f"`{c}`", f"{ms:g}", f"{ms / click:.2f}x"] for c, ms in cli["median_ms"].items()]
    lines = _table(["command", "median ms", "vs import click"], rows)
    extra = ", ".join(f"{k} {v:g} ms" for k, v in cli["beyond_click_ms"].items())
    return [
        f"Fresh processes, {cli['runs']} interleaved runs of each; load average "
        f"{cli['load_average'][0]:g} at the start, {cli['load_average'][1]:g} at the end. "
        f"Goal: `flowstate --help` within {cli['goal_ratio']:g}x of `import click`.",
        "",
        *lines,
        "",
        "What `flowstate --help` imports beyond click (self time by top-level import, one "
        f"`-X importtime` run): {extra}.",
    ]


def scale_table(scale: dict[str, Any]) -> list[str]:
    ref, size = scale["reference"], scale["size"]
    rows = [
        [
            name.replace("_", " "),
            f"{f[f'{ref}_ms']:g}",
            f"{f[f'{size}_ms']:g}",
            f"{f['ratio']:.2f}x",
        ]
        for name, f in scale.items()
        if isinstance(f, dict)
    ]
    return _table(
        ["p50 ms", f"{ref} states", f"{size} states", f"ratio (goal <= {scale['goal_ratio']:g}x)"],
        rows,
    )


def target_table(targets: list[dict[str, Any]]) -> list[str]:
    mark = {"met": "met", "missed": "**missed**", "not measured": "not measured"}
    rows = [[t["goal"], mark[t["status"]], t["figure"]] for t in targets]
    return _table(["target", "status", "figure"], rows)


def markdown(report: dict[str, Any]) -> str:
    meta = report["meta"]
    out = [
        "# FlowState benchmark",
        "",
        f"`{meta['command']}` on {meta['machine']}, Neo4j {meta['neo4j']}, "
        f"{meta['started']}, {meta['seconds']:.0f} s in all. Latency figures are the median "
        f"across {meta['repeats']} runs of each run's percentiles.",
        "",
        "## Targets",
        "",
        *target_table(report["targets"]),
    ]
    if report.get("engine"):
        out += ["", "## Engine (real Neo4j, no model)", "", *engine_table(report["engine"])]
    for label, size in (report.get("unfinished") or {}).items():
        out += ["", f"**{label} not measured**: {size['states']:,} of {size['target_states']:,} "
                f"states built; {size['reason']}."]  # fmt: skip
        if "step_ms" in size:
            out += ["", f"Measured at the {size['states']:,} states reached:", "",
                    *engine_table({f"{size['states']:,}": size})]  # fmt: skip
    if report.get("scale"):
        out += ["", "## Scale: 1M states against 10k (same run)", "", *scale_table(report["scale"])]
    if report.get("cli"):
        out += ["", "## Command-line start-up", "", *cli_table(report["cli"])]
    if report.get("tokens"):
        s = report["tokens"]["settings"]
        out += [
            "",
            "## Tokens (same seeded requests for every strategy)",
            "",
            f"{s['requests']} requests, seed {s['seed']}; each needs facts from 1-4 requests "
            f"earlier. BM25 k={s['bm25_k']}; rolling summary bounded at "
            f"{s['summary_budget_tokens']} tokens by an oracle summariser (upper bound on its "
            f"recall); index budget {s['index_budget_tokens']} tokens. FlowState: "
            f"{s['flowstate']}; without PSA: {s['flowstate_no_psa']}.",
            "",
            *token_table(report["tokens"]),
        ]
        parts = parts_table(report["tokens"])
        if parts:
            out += [
                "",
                "FlowState's prompt tokens per request, by part (every call of the request "
                "summed; framing is the chat format's per-message tokens, blank lines and the "
                "step line). Repeated prefix: the mean share of a call's prompt that repeats the "
                "previous call's byte for byte, which provider prompt caching can bill at the "
                "cached rate (providers cache from about 1,024 tokens on).",
                "",
                *parts,
            ]
    matched = recall_matched_table(report.get("tokens") or {})
    if matched:
        out += [
            "",
            "## Recall-matched tokens",
            "",
            "BM25, the embedding baseline and a recency window (last k turns) swept over k "
            f"({', '.join(map(str, report['tokens']['settings'].get('sweep_k', [])))}); "
            "each row is the smallest k that reaches recall 1.0, or the smallest reaching the "
            "best recall. FlowState, full context, the summary and FlowState without PSA have "
            "one setting each.",
            "",
            *matched,
        ]
    far = recall_matched_table((report.get("tokens") or {}).get("far_back") or {})
    if far:
        out += [
            "",
            "## Recall-matched tokens, far-back variant",
            "",
            "The same comparison on requests that need facts from any earlier request (1 to "
            "depth-1 back) instead of 1 to 4 back, where a recency window must grow with the "
            "history.",
            "",
            *far,
        ]
    cache = cache_cost_table(report.get("tokens") or {})
    if cache:
        out += [
            "",
            "## Prompt-cache-aware cost",
            "",
            "Every call's prompt (agent and memory upkeep, in sending order) against the previous "
            "call's: the byte-identical prefix is billed at the cached rate. Effective tokens = "
            "uncached + rate x cached, per request (share of full context's at the same rate).",
            "",
            *cache,
        ]
    if report.get("notes"):
        out += ["", "## Notes", "", *[f"- {n}" for n in report["notes"]]]
    if report.get("plots"):
        out += ["", "## Plots", "", *[f"![{p}]({p})" for p in report["plots"]]]
    return "\n".join(out) + "\n"
