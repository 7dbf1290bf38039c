"""Aggregates per strategy, the results table (as in the tau-bench papers: pass^1..k, DB and
action accuracy, tokens per task) and the JSON report."""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.table import Table

from flowstate.models.records import Usage
from flowstate_bench import reader_report
from flowstate_bench.costs import named_cost_cells, named_cost_header, parts_lines, spend_columns
from flowstate_bench.seam import add_parts
from flowstate_bench.tau.runner import Conversation, RunConfig
from flowstate_bench.tau.scoring import pass_hat_k

REPORT_FILE = "tau_report.json"
MARKDOWN_FILE = "tau_report.md"
ZIPACT = ("zipact", "summary", "zipact_bm25")  # their summaries are the agent's model's calls


def _total(convs: Sequence[Conversation], attr: str) -> Usage:
    out = Usage()
    for c in convs:
        out += getattr(c, attr)
    return out


def spend_of(config: RunConfig, strategy: str, convs: Sequence[Conversation]) -> dict[str, Any]:
    """Agent, memory LLM and memory embedding spend, priced with litellm's map."""
    agent_model = config.price_model or config.model
    memory_model = config.price_model or (
        config.model if strategy in ZIPACT else config.memory_model or config.model
    )
    embedding_model = config.embedding_model
    if config.price_model and embedding_model.startswith("flowstate-embed/"):
        embedding_model = "text-embedding-3-small"  # priced as the baseline it stands for
    return spend_columns(
        _total(convs, "usage"),
        _total(convs, "memory_usage"),
        _total(convs, "embedding_usage"),
        (agent_model, memory_model, embedding_model),
    )


def _parts(convs: Sequence[Conversation]) -> dict[str, int]:
    total: dict[str, int] = {}
    for c in convs:
        total = add_parts(total, c.parts)
    return total


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def strategy_summary(
    convs: Sequence[Conversation], trials: int, spend: dict[str, Any] | None = None
) -> dict[str, Any]:
    db = [c.score.db_match for c in convs if c.db_scored]
    actions = [c.score.action_accuracy for c in convs if c.score.action_accuracy is not None]
    per_task: dict[str, list[bool]] = defaultdict(list)
    for c in convs:
        per_task[c.task_id].append(c.score.success)
    outcomes = [(sum(v), len(v)) for v in per_task.values()]
    prompt = sum(c.usage.prompt_tokens for c in convs)
    completion = sum(c.usage.completion_tokens for c in convs)
    return {
        "conversations": len(convs),
        "db_accuracy": _mean([float(x) for x in db]),
        "db_matched": sum(db),
        "db_scored": len(db),
        "action_accuracy": _mean(actions),
        "reward": _mean([c.score.reward for c in convs]),
        "pass_hat_k": {str(k): pass_hat_k(outcomes, k) for k in range(1, trials + 1)},
        "tokens": {
            "prompt": prompt,
            "completion": completion,
            "total": prompt + completion,
            "per_task": (prompt + completion) / len(convs) if convs else 0,
        },
        "llm_calls": sum(c.usage.calls for c in convs),
        "prompt_parts": _parts(convs),
        "extra_calls": sum(c.extra_calls for c in convs),
        "spend": spend or {},
        "user_tokens": sum(c.user_usage.total_tokens for c in convs),
        "unjudged": dict(Counter(b for c in convs for b in c.score.unjudged)),
        "ended": dict(Counter(c.ended for c in convs)),
    }


def build_report(config: RunConfig, convs: Sequence[Conversation]) -> dict[str, Any]:
    """The JSON report: top-level metric keys map each strategy to its value (for a reader
    run, the reader's; `reader_vs_oracle` sets the two side by side)."""
    everything = list(convs)
    convs = [c for c in everything if c.agent == config.agent]
    by_strategy = {}
    for s in config.strategies:
        mine = [c for c in convs if c.strategy == s]
        by_strategy[s] = strategy_summary(mine, config.trials, spend_of(config, s, mine))
    metric = lambda key: {s: v[key] for s, v in by_strategy.items()}  # noqa: E731
    return {
        "domain": config.domain,
        "agent": config.agent,
        "model": config.model,
        "user": config.user_kind,
        "trials": config.trials,
        "tasks": len({c.task_id for c in convs}),
        "db_accuracy": metric("db_accuracy"),
        "action_accuracy": metric("action_accuracy"),
        "pass_hat_k": metric("pass_hat_k"),
        "tokens": metric("tokens"),
        "strategies": by_strategy,
        "reader_vs_oracle": _reader_rows(config, everything) if config.agent == "reader" else [],
        "config": config.model_dump(mode="json"),
        "conversations": [_row(c) for c in everything],
    }


def agent_metrics(convs: Sequence[Conversation]) -> dict[str, Any]:
    """What the reader comparison shows of one agent's conversations."""
    found = [f for c in convs for f in c.found.values()]
    actions = [c.score.action_accuracy for c in convs if c.score.action_accuracy is not None]
    usage = _total(convs, "usage")
    return {
        "recall": sum(found) / len(found) if found else None,
        "pass1": _mean([float(c.score.success) for c in convs]),
        "action_accuracy": _mean(actions),
        "tokens": usage.total_tokens,
        "calls": usage.calls,
    }


def _reader_rows(config: RunConfig, convs: Sequence[Conversation]) -> list[dict[str, Any]]:
    rows = []
    for strategy in config.strategies:
        by = {a: [c for c in convs if c.strategy == strategy and c.agent == a] for a in AGENTS}
        if by["oracle"] and by["reader"]:
            rows.append(
                reader_report.row(
                    config.domain,
                    strategy,
                    agent_metrics(by["oracle"]),
                    agent_metrics(by["reader"]),
                )
            )
    return rows


AGENTS = ("oracle", "reader")
READER_METRICS = [
    ("recall", "recall"),
    ("pass1", "pass^1"),
    ("action_accuracy", "action acc"),
    ("tokens", "agent tokens"),
    ("calls", "calls"),
]


def _row(c: Conversation) -> dict[str, Any]:
    s = c.score
    return {
        "task": c.task_id,
        "strategy": c.strategy,
        "agent": c.agent,
        "trial": c.trial,
        "reward": s.reward,
        "db_match": s.db_match,
        "actions": f"{s.actions_matched}/{s.actions_total}",
        "communicated": f"{s.communicated}/{s.communicate_total}",
        "unjudged": s.unjudged,
        "turns": c.turns,
        "ended": c.ended,
        "tokens": c.usage.total_tokens,
        "calls": [{"name": r.name, "arguments": r.arguments, "error": r.error} for r in c.calls],
    }


def write_report(report: dict[str, Any], out: Path) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    path = out / REPORT_FILE
    path.write_text(json.dumps(report, indent=2, ensure_ascii=False, default=str))
    (out / MARKDOWN_FILE).write_text(markdown(report))
    return path


def markdown(report: dict[str, Any]) -> str:
    """Scores, then the spend side by side: the agent's, the memory's LLM and embedding calls."""
    head = (
        f"# tau-bench {report['domain']}: {report['agent']} agent, {report['tasks']} tasks, "
        f"{report['trials']} trial(s)\n\n"
        "| strategy | pass^1 | DB acc | agent tokens (prompt + completion) | agent calls "
        "| memory LLM tokens | memory LLM calls | embedding tokens | embedding calls "
        f"| cost (USD) | {named_cost_header()} |\n"
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n"
    )
    rows = []
    for name, s in report["strategies"].items():
        sp = s["spend"]
        a, m, e = sp["agent"], sp["memory_llm"], sp["memory_embedding"]
        cost = "-" if sp["total_cost_usd"] is None else f"{sp['total_cost_usd']:.4f}"
        rows.append(
            f"| {name} | {_pct(s['pass_hat_k']['1'])} | {_pct(s['db_accuracy'])} "
            f"| {a['tokens']:,} ({a['prompt_tokens']:,} + {a['completion_tokens']:,}) "
            f"| {a['calls']} | {m['tokens']:,} | {m['calls']} "
            f"| {e['tokens']:,} | {e['calls']} | {cost} | {named_cost_cells(sp)} |"
        )
    note = (
        "\nCost: litellm's price map; '-' where a model has no price (scripted, local); "
        "`--price-model` prices offline counts. The last column prices the agent's and the "
        "memory's LLM calls (prompt and completion, no cache) at two named models.\n"
    )
    parts = [
        (report["domain"], name, s.get("prompt_parts", {}), s["llm_calls"])
        for name, s in report["strategies"].items()
    ]
    tail = [
        *pass_hat_table(report),
        *reader_report.markdown(report["reader_vs_oracle"], READER_METRICS),
        *parts_lines(parts),
    ]
    return head + "\n".join(rows) + "\n" + note + "\n" + "\n".join(tail)


def pass_hat_table(report: dict[str, Any]) -> list[str]:
    """The published tables' form: pass^1..k per strategy (k = the trials run)."""
    ks = range(1, report["trials"] + 1)
    out = [
        f"## pass^k ({report['domain']}, {report['trials']} trial(s) per task)",
        "",
        "| strategy | " + " | ".join(f"pass^{k}" for k in ks) + " |",
        "|---|" + "---:|" * len(ks),
    ]
    for name, s in report["strategies"].items():
        out.append(f"| {name} | " + " | ".join(_pct(s["pass_hat_k"][str(k)]) for k in ks) + " |")
    return [*out, ""]


def results_table(report: dict[str, Any]) -> Table:
    trials = report["trials"]
    title = f"tau-bench {report['domain']}: {report['agent']} agent, {report['tasks']} tasks"
    table = Table(title=title)
    table.add_column("strategy", no_wrap=True)
    for k in range(1, trials + 1):
        table.add_column(f"pass^{k}", justify="right", no_wrap=True)
    for name in ("DB acc", "act acc", "DB ok", "tok/task", "calls", "mem tok", "mem calls"):
        table.add_column(name, justify="right", no_wrap=True)
    for strategy, s in report["strategies"].items():
        table.add_row(
            strategy,
            *(_pct(s["pass_hat_k"][str(k)]) for k in range(1, trials + 1)),
            _pct(s["db_accuracy"]),
            _pct(s["action_accuracy"]),
            f"{s['db_matched']}/{s['db_scored']}",
            f"{s['tokens']['per_task']:,.0f}",
            str(s["llm_calls"]),
            f"{s['spend']['memory_llm']['tokens'] + s['spend']['memory_embedding']['tokens']:,}",
            f"{s['spend']['memory_llm']['calls']}+{s['spend']['memory_embedding']['calls']}e",
        )
    return table


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"
