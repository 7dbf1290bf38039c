"""arena_report.json, arena_report.md (a Table 3 with the published rows beside ours) and PNG
plots of SR@k per strategy, from the task runs of one `flowstate bench arena`."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from flowstate.models.records import Usage
from flowstate_bench import reader_report
from flowstate_bench.arena import scoring
from flowstate_bench.arena.formal import Judge
from flowstate_bench.arena.published import COLUMNS, FLOWSTATE_CLAIMS, TABLE_3
from flowstate_bench.arena.replay import recall_at_k as replay_recall
from flowstate_bench.arena.runner import RunConfig, TaskRun
from flowstate_bench.costs import named_cost_cells, named_cost_header, parts_lines, spend_columns
from flowstate_bench.seam import add_parts

# nAUC depth K per domain: the axes of the paper's Fig. 3; math and phys pooled as one domain.
DOMAINS = {
    "bundled_shopping": "shopping",
    "group_travel_planner": "travel",
    "formal_reasoning_math": "formal",
    "formal_reasoning_phys": "formal",
}
DEPTH = {"shopping": 6, "travel": 8, "formal": 8}
LAST_ONLY = {"shopping": False, "travel": False, "formal": True}
SHORT = {
    "bundled_shopping": "shop",
    "group_travel_planner": "travel",
    "formal_reasoning_math": "math",
    "formal_reasoning_phys": "phys",
}
DEFINITIONS = {
    "ps": "mean over tasks of the share of subtasks passed (shopping: reward 1.0 as the code "
    "counts it, so a non-target product with every attribute passes; with --scoring paper, "
    "the target ASIN only)",
    "ps_graded": "shopping: mean graded reward over all steps (attribute match on the name)",
    "ps_code": "travel: passing persons over all persons (the eval code's micro PS)",
    "sps": "travel: mean over groups of passed constraint slots / constraint slots",
    "sr": "shopping and travel: every subtask passed; formal: the last subtask passed",
    "sr_at_k": "tasks whose k-th subtask passed / tasks with at least k subtasks (the eval's "
    "passrate_at_k)",
    "cummulative_passrate_at_k": "the formal eval's figure, for every domain: subtasks passed at "
    "depths 1..k / subtasks at depths 1..k, pooled over tasks (its spelling)",
    "min_k": "the shortest task's length; passrate_at_min_k and cummulative_passrate_at_min_k "
    "are the two curves cut there",
    "nauc": "ours: trapezoid area under SR@1..SR@K / (K-1); K = 6 shop, 8 travel, 8 formal, "
    "cut to the longest task present",
    "nauc_min": "the same with K = the shortest task, so every task counts at every depth",
    "drop_rate": "ours: (SR@1 - SR@K) / SR@1 with the same K; null when SR@1 is 0",
    "recall_at_k": "oracle agents: share of subtasks at depth k (with needed facts) whose facts "
    "were all in what the agent was shown",
    "replay_recall_at_k": "the recall replay: gold results of subtasks 1..k-1 written with the "
    "official writers, one context(prompt_k), facts looked for (memories without an LLM only)",
    "tokens": "task agent's prompt + completion tokens (provider usage, else tiktoken); "
    "prompt_tokens and completion_tokens apart",
    "memory_tokens": "the memory system's own LLM calls (summary rewrites, ReasoningBank's "
    "judge and extractor, Mem0's fact extraction and update decisions)",
    "embedding_tokens": "the memory system's embedding calls (litellm.embedding)",
    "extra_llm_calls": "LLM calls that are not task-agent steps (the memory's own)",
    "spend": "agent / memory LLM / memory embedding: tokens, calls and cost in USD (and in "
    "at_prices_usd / llm_at_prices_usd at gpt-4o-mini and claude-sonnet-4-5, no cache) "
    "(litellm's price map; null where a model has no price; --price-model prices offline runs)",
}


def _usage(runs: Sequence[TaskRun], attr: str) -> Usage:
    total = Usage()
    for r in runs:
        total += getattr(r, attr)
    return total


ZIPACT = ("zipact", "summary", "zipact_bm25")  # summaries are the agent's model's calls


def price_models(
    run: RunConfig, runs: Sequence[TaskRun]
) -> tuple[str | None, str | None, str | None]:
    """The models that price (agent, memory LLM, embedding) spend; see `flowstate_bench.costs`."""
    strategy = runs[0].strategy if runs else ""
    memory = run.model if strategy in ZIPACT else run.memory_model or run.model
    embedding: str | None = run.embedding_model
    if run.price_model and embedding and embedding.startswith("flowstate-embed/"):
        embedding = "text-embedding-3-small"  # priced as the baseline it stands for
    return (run.price_model or run.model, run.price_model or memory, embedding)


def _recall(runs: Sequence[TaskRun]) -> list[float | None]:
    longest = max((len(r.subtasks) for r in runs), default=0)
    out: list[float | None] = []
    for k in range(1, longest + 1):
        seen = [r.subtasks[k - 1].found for r in runs if len(r.subtasks) >= k]
        known = [f for f in seen if f is not None]
        out.append(sum(known) / len(known) if known else None)
    return out


def _parts(runs: Sequence[TaskRun]) -> dict[str, int]:
    total: dict[str, int] = {}
    for r in runs:
        total = add_parts(total, r.parts)
    return total


def curve_metrics(tasks: list[list[bool]], domain: str) -> dict[str, Any]:
    curve = scoring.sr_at_k(tasks)
    cumulative = scoring.cumulative_passrate_at_k(tasks)
    shortest = scoring.min_k(tasks) or 0
    return {
        "sr_at_k": curve,
        # The formal eval's own figures (`all_results.json`), under its key names.
        "cummulative_passrate_at_k": cumulative,
        "min_k": scoring.min_k(tasks),
        "passrate_at_min_k": curve[:shortest],
        "cummulative_passrate_at_min_k": cumulative[:shortest],
        "nauc": scoring.nauc(curve, DEPTH[domain]),
        "nauc_min": scoring.nauc(curve, shortest),
        "drop_rate": scoring.drop_rate(curve, DEPTH[domain]),
    }


def config_metrics(
    config: str, runs: Sequence[TaskRun], run: RunConfig | None = None
) -> dict[str, Any]:
    domain = DOMAINS[config]
    tasks = [r.passed for r in runs]
    tokens, memory = _usage(runs, "usage"), _usage(runs, "memory_usage")
    embedding = _usage(runs, "embedding_usage")
    out: dict[str, Any] = {
        "tasks": len(runs),
        "subtasks": sum(len(t) for t in tasks),
        "sr": scoring.success_rate(tasks, LAST_ONLY[domain]),
        "ps": scoring.progress_score(tasks),
        **curve_metrics(tasks, domain),
        "recall_at_k": _recall(runs),
        "tokens": tokens.total_tokens,
        "prompt_tokens": tokens.prompt_tokens,
        "completion_tokens": tokens.completion_tokens,
        "memory_tokens": memory.total_tokens,
        "embedding_tokens": embedding.total_tokens,
        "embedding_calls": embedding.calls,
        "llm_calls": tokens.calls + memory.calls,
        "prompt_parts": _parts(runs),
        "extra_llm_calls": sum(r.extra_calls for r in runs),
    }
    if run is not None:
        out["spend"] = spend_columns(tokens, memory, embedding, price_models(run, runs))
    if config == "bundled_shopping":
        graded = [s.graded for r in runs for s in r.subtasks]
        out["ps_graded"] = sum(graded) / len(graded) if graded else 0.0
    if config == "group_travel_planner":
        out["ps_code"] = scoring.micro_ps(tasks)
        groups = [r.sps for r in runs if r.sps is not None]
        out["sps"] = sum(groups) / len(groups) if groups else None
    return out


def build_report(
    config: RunConfig,
    runs: Sequence[TaskRun],
    judge: Judge,
    replays: dict[str, dict[str, list[list[bool | None]]]] | None = None,
) -> dict[str, Any]:
    everything = list(runs)
    runs = [r for r in everything if r.agent == config.agent]
    per: dict[str, dict[str, Any]] = {}
    for name in config.configs:
        per[name] = {}
        for strategy in config.strategies:
            mine = [r for r in runs if r.config == name and r.strategy == strategy]
            if mine:
                per[name][strategy] = config_metrics(name, mine, config)
                replayed = (replays or {}).get(name, {}).get(strategy)
                per[name][strategy]["replay_recall_at_k"] = (
                    replay_recall(replayed) if replayed is not None else None
                )
        full = per[name].get("full")
        for m in per[name].values():
            m["token_reduction_vs_full"] = (
                1 - m["tokens"] / full["tokens"] if full and full["tokens"] else None
            )
    return {
        "run": {
            "agent": config.agent,
            "model": config.model,
            "judge": judge.kind,
            "judge_tokens": judge.usage.total_tokens,  # all configs and strategies together
            "strategies": config.strategies,
            "trials": config.trials,
            "search_engine": "bm25s",
            "scoring": config.scoring,
            "definitions": DEFINITIONS,
        },
        "configs": per,
        "domains": _domains(config, runs),
        "avg_sr": _avg_sr(config, per),
        "reader_vs_oracle": _reader_rows(config, everything) if config.agent == "reader" else [],
        "subtasks": [
            {
                **{
                    k: v
                    for k, v in asdict(r).items()
                    if k in ("config", "task_id", "strategy", "trial", "agent")
                },
                "sps": r.sps,
                "outcomes": [asdict(s) for s in r.subtasks],
            }
            for r in everything
        ],  # fmt: skip
    }


def agent_metrics(runs: Sequence[TaskRun], config: str) -> dict[str, Any]:
    """What the reader comparison shows of one agent's runs."""
    found = [s.found for r in runs for s in r.subtasks if s.found is not None]
    tasks = [r.passed for r in runs]
    usage = _usage(runs, "usage")
    return {
        "recall": sum(found) / len(found) if found else None,
        "sr": scoring.success_rate(tasks, LAST_ONLY[DOMAINS[config]]),
        "ps": scoring.progress_score(tasks),
        "tokens": usage.total_tokens,
        "calls": usage.calls,
    }


def _reader_rows(config: RunConfig, runs: Sequence[TaskRun]) -> list[dict[str, Any]]:
    rows = []
    for name in config.configs:
        for strategy in config.strategies:
            mine = [r for r in runs if r.config == name and r.strategy == strategy]
            by = {a: [r for r in mine if r.agent == a] for a in ("oracle", "reader")}
            if by["oracle"] and by["reader"]:
                rows.append(
                    reader_report.row(
                        SHORT[name],
                        strategy,
                        agent_metrics(by["oracle"], name),
                        agent_metrics(by["reader"], name),
                    )
                )
    return rows


READER_METRICS = [
    ("recall", "recall"),
    ("sr", "SR"),
    ("ps", "PS"),
    ("tokens", "agent tokens"),
    ("calls", "calls"),
]


def _domains(config: RunConfig, runs: Sequence[TaskRun]) -> dict[str, Any]:
    out: dict[str, dict[str, Any]] = {}
    for domain in dict.fromkeys(DOMAINS[c] for c in config.configs):
        for strategy in config.strategies:
            mine = [
                r.passed for r in runs if DOMAINS[r.config] == domain and r.strategy == strategy
            ]
            if mine:
                out.setdefault(domain, {})[strategy] = curve_metrics(mine, domain)
    return out


def _avg_sr(config: RunConfig, per: dict[str, dict[str, Any]]) -> dict[str, float]:
    """The unweighted mean of the four configs' SR, when all four ran."""
    if len(per) < len(DOMAINS):
        return {}
    return {s: sum(per[c][s]["sr"] for c in per) / len(per) for s in config.strategies}


def _cell(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"


def table_3(report: dict[str, Any]) -> list[str]:
    run, per = report["run"], report["configs"]
    head = "| method | " + " | ".join(COLUMNS) + " |"
    lines = [head, "|" + "---|" * (len(COLUMNS) + 1)]
    for strategy in run["strategies"]:
        cells = []
        for col in COLUMNS:
            if col == "avg_sr":
                cells.append(_cell(report["avg_sr"].get(strategy)))
                continue
            short, metric = col.split("_", 1)
            config = next((c for c, s in SHORT.items() if s == short), "")
            m = per.get(config, {}).get(strategy)
            cells.append(_cell(m.get(metric) if m else None))
        label = (
            f"{strategy} (ours, agent {run['agent']}{', ' + run['model'] if run['model'] else ''})"
        )
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    for method, values in TABLE_3.items():
        lines.append(f"| {method} (published) | " + " | ".join(_cell(v) for v in values) + " |")
    return lines


def markdown(report: dict[str, Any]) -> str:
    run = report["run"]
    out = [
        "# MemoryArena",
        "",
        f"Agent `{run['agent']}`, model `{run['model'] or 'scripted'}`, judge `{run['judge']}`, "
        f"trials {run['trials']}, search `{run['search_engine']}`, scoring `{run['scoring']}`. "
        "Shopping PS counts steps whose reward is 1.0 (`code`) or the target ASIN (`paper`); "
        "the graded reward is `ps_graded` below.",
        "",
        *table_3(report),
        "",
        "Published rows: MemoryArena Table 3 (gpt-5-mini task agent); their Avg SR also "
        "averages Progressive Search.",
        "FlowState paper (published): " + "; ".join(FLOWSTATE_CLAIMS) + ".",
        "",
        "| config | strategy | SR | PS | extra | nAUC | nAUC_min | drop | tokens "
        "| memory tokens | calls | extra calls |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for config, strategies in report["configs"].items():
        for strategy, m in strategies.items():
            extra = m.get("ps_graded", m.get("sps"))
            label = "ps_graded" if "ps_graded" in m else ("sPS" if "sps" in m else "")
            out.append(
                f"| {config} | {strategy} | {_cell(m['sr'])} | {_cell(m['ps'])} | "
                f"{label + ' ' + _cell(extra) if label else ''} | {_cell(m['nauc'])} | "
                f"{_cell(m['nauc_min'])} | {_cell(m['drop_rate'])} | {m['tokens']} | "
                f"{m['memory_tokens']} | {m['llm_calls']} | {m['extra_llm_calls']} |"
            )
    out += [
        "",
        "Spend side by side (agent / memory LLM / memory embedding):",
        "",
        "| config | strategy | agent tokens (prompt + completion) | agent calls "
        "| memory LLM tokens | memory LLM calls | embedding tokens | embedding calls "
        f"| cost (USD) | {named_cost_header()} |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for config, strategies in report["configs"].items():
        for strategy, m in strategies.items():
            sp = m.get("spend")
            if sp is None:
                continue
            a, mem, e = sp["agent"], sp["memory_llm"], sp["memory_embedding"]
            cost = "-" if sp["total_cost_usd"] is None else f"{sp['total_cost_usd']:.4f}"
            out.append(
                f"| {config} | {strategy} | {a['tokens']:,} ({a['prompt_tokens']:,} + "
                f"{a['completion_tokens']:,}) | {a['calls']} | {mem['tokens']:,} "
                f"| {mem['calls']} | {e['tokens']:,} | {e['calls']} | {cost} "
                f"| {named_cost_cells(sp)} |"
            )
    out += ["", "SR@k per strategy (k = subtask depth):", ""]
    for config, strategies in report["configs"].items():
        for strategy, m in strategies.items():
            curve = " ".join(_cell(v) for v in m["sr_at_k"])
            recall = " ".join(_cell(v) for v in m["recall_at_k"])
            cumulative = " ".join(_cell(v) for v in m["cummulative_passrate_at_k"])
            line = (
                f"- {config} / {strategy}: SR@k {curve}; cumulative {cumulative} "
                f"(min_k {m['min_k']}); recall@k {recall}"
            )
            if m.get("replay_recall_at_k") is not None:
                line += "; replay recall@k " + " ".join(_cell(v) for v in m["replay_recall_at_k"])
            out.append(line)
    out += ["", *reader_report.markdown(report.get("reader_vs_oracle", []), READER_METRICS)]
    out += parts_lines(
        [
            (SHORT[config], strategy, m.get("prompt_parts", {}), m["spend"]["agent"]["calls"])
            for config, strategies in report["configs"].items()
            for strategy, m in strategies.items()
            if "spend" in m
        ]
    )
    out += ["", "Definitions:", ""]
    out += [f"- `{k}`: {v}" for k, v in run["definitions"].items()]
    return "\n".join(out) + "\n"


STYLES = ("-", "--", "-.", ":")


def plot_sr_at_k(report: dict[str, Any], out: Path) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    paths = []
    for domain, strategies in report["domains"].items():
        fig, ax = plt.subplots(figsize=(6, 4))
        for n, (strategy, m) in enumerate(strategies.items()):
            curve = m["sr_at_k"]
            # Equal curves are common (every strategy at 1.0 with the oracle): vary the marker,
            # its size and the dash so overlapping lines stay visible.
            style: dict[str, Any] = {
                "marker": "osD^v"[n % 5],
                "markersize": 9 - n,
                "linestyle": STYLES[n % 4],
            }
            ax.plot(range(1, len(curve) + 1), curve, label=strategy, alpha=0.85, **style)
        ax.set(
            xlabel="subtask depth k",
            ylabel="SR@k",
            title=f"MemoryArena {domain}",
            ylim=(-0.05, 1.05),
        )
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
        fig.tight_layout()
        path = out / f"arena_sr_at_k_{domain}.png"
        fig.savefig(path, dpi=110)
        plt.close(fig)
        paths.append(path)
    return paths


def write_report(report: dict[str, Any], out: Path) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    (out / "arena_report.json").write_text(
        json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    path = out / "arena_report.md"
    path.write_text(markdown(report), encoding="utf-8")
    plot_sr_at_k(report, out)
    return path
